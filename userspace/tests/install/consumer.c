/* SPDX-License-Identifier: MIT */
/*
 * A C consumer of an installed libneuron (the C API, libneuron/neuron.h),
 * built only against the installed package: cc -std=c99 consumer.c
 * $(pkg-config --cflags --libs neuron).
 *   c-consumer            decode one record and check it (no device)
 *   c-consumer /dev/nnq0  also: make queue 1 (EXPLICIT records) of core 0,
 *                         submit COUNT notify instructions to PE, and take
 *                         every record with libneuron_queue_wait()
 * Exit status 0 if every check passed; "# " lines say what happened.
 * Instruction fields are little-endian (<linux/neuron_isa.h>): htole16()
 * of <endian.h>, which C99 has with _DEFAULT_SOURCE.
 */
#define _DEFAULT_SOURCE
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include <libneuron/neuron.h>

#define COUNT 8
#define EXT 0x4c00 /* debug_hint_extended of the first record; +i after */

static int drain_device(const char *path)
{
	struct neuron_emu_insn prog[COUNT + 1];
	struct libneuron_record out[64];
	struct libneuron_decoded d;
	libneuron_device *dev = NULL;
	libneuron_queue *q = NULL;
	unsigned got = 0, bad = 0, i;
	long n;
	int rc;

	rc = libneuron_device_open(path, &dev);
	if (rc < 0) {
		printf("# %s\n", libneuron_last_error());
		return 1;
	}
	rc = libneuron_queue_create(dev, 0, 1, 4096, 0, &q);
	if (rc < 0) {
		printf("# %s\n", libneuron_last_error());
		libneuron_device_close(dev);
		return 1;
	}
	memset(prog, 0, sizeof(prog));
	for (i = 0; i < COUNT; i++) {
		prog[i].opcode = NEURON_OP_NOTIFY;
		prog[i].debug_hint = htole16(5);
		prog[i].operand.arg.debug_hint_extended = htole16((uint16_t)(EXT + i));
	}
	prog[COUNT].opcode = NEURON_OP_HALT;
	rc = libneuron_device_submit(dev, 0, NEURON_ENGINE_PE, prog, COUNT + 1, 0);
	/* the queue keeps its own descriptor: the device may go first */
	libneuron_device_close(dev);
	if (rc < 0) {
		printf("# %s\n", libneuron_last_error());
		libneuron_queue_destroy(q);
		return 1;
	}
	while (got < COUNT) {
		n = libneuron_queue_wait(q, out, 64, 10000000000LL, NULL);
		if (n < 0) {
			printf("# %s\n", libneuron_last_error());
			break;
		}
		if (n == 0)
			break; /* timed out */
		for (i = 0; i < (unsigned)n; i++, got++) {
			int ok = libneuron_record_decode(&out[i], 1, &d) == 0 &&
				 d.kind == LIBNEURON_KIND_EXPLICIT && d.engine == NEURON_ENGINE_PE &&
				 d.debug_hint == 5 && d.debug_hint_extended == EXT + got;
			bad += ok ? 0 : 1;
			printf("# record %u: %s%s\n", got, d.text, ok ? "" : "  <- unexpected");
		}
	}
	libneuron_queue_destroy(q);
	printf("# C consumer: %u of %u records by libneuron_queue_wait(), %u unexpected\n", got, COUNT, bad);
	return got == COUNT && bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	/* SEQUENCER_NONFATAL, metadata_lo 0x0835, header 0x9f, metadata_hi 0x005c1a42 */
	struct libneuron_record r = { { 0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0, 0, 0, 0, 0, 0, 0, 0, 0 } };
	struct libneuron_decoded d;

	if (libneuron_record_decode(&r, -1, &d) != 0 || d.kind != LIBNEURON_KIND_TPB_ERROR ||
	    strstr(d.text, "DGE OOB on POOL at pc 0x1a4") == NULL) {
		printf("# decode: %s\n", d.text);
		return 1;
	}
	puts(d.text);
	return argc > 1 ? drain_device(argv[1]) : 0;
}
