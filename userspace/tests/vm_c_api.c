/* SPDX-License-Identifier: MIT */
/*
 * The C API (libneuron/neuron.h) on the real driver, from C, as an
 * unprivileged user: what a C runtime needs past the data path.
 *
 *   vm_c_api [--uid UID] [DEVICE]     (default /dev/nnq0)
 *
 * With --uid the program drops to UID (group UID too) before it opens
 * anything, so the node must be readable and writable by that group; the
 * guest script (selftests/vm/api-guest.sh) arranges it. Core 1 is used (the main lane's device has 2).
 *
 * Expected values are worked out by hand and written as literals:
 *  - a 4096-byte ring holds 4096 / 16 = 256 records;
 *  - a program of 300 NOTIFYs (no trace) writes 256 of them and then waits
 *    on the full ring: engine state WAITING (2,
 *    include/uapi/linux/neuron_record.h enum neuron_engine_state);
 *  - libneuron_engine_reset() stops it: state IDLE (0) and one event of
 *    edge ENGINE_STOPPED (5) with cause ENGINE_RESET (1) for core 1
 *    (include/uapi/linux/neuron.h enum neuron_edge, enum neuron_stop_cause),
 *    read by this unprivileged owner from its own file;
 *  - the ring then holds exactly 256 records whose debug_hint_extended run
 *    0x4c00..0x4cff, HEAD and TAIL agree and nothing was lost;
 *  - a wait of 20 ms on the empty queue returns 0 records (a timed wait);
 *  - route 0x01643250 (trace 0, EXPLICIT 5, EVT_SEM 2, errors 3, throttle 4,
 *    DGE 6, DMA 1) sends a NOTIFY hint=1 to queue 5, the default route's
 *    DGE queue: libneuron_queue_decode() says EXPLICIT (kind 1) with
 *    debug_hint 1, while libneuron_record_decode(rec, 5), which assumes the
 *    default route, says DGE_METADATA (kind 2); NQ_INFO reports the route;
 *    a route change with the queue alive is -EBUSY, a queue number 10 is
 *    -EINVAL; after the release the core has 0x01543210 again.
 * Prints TAP; exits non-zero on a failure.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libneuron/neuron.h"

#define CORE 1
#define NQ 1		/* EXPLICIT records of the default route */
#define RING 4096
#define RECORDS 256	/* RING / 16 */
#define PROG 300
#define EXT 0x4c00

static int n, fails;

static void check(int ok, const char *name)
{
	n++;
	printf("%sok %d c_api_vm.%s\n", ok ? "" : "not ", n, name);
	if (!ok) {
		fails++;
		printf("# last error: %s\n", libneuron_last_error());
	}
}

static int drop_to(unsigned int uid)
{
	gid_t g = uid;

	return setgroups(1, &g) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid);
}

static void read_only_checks(const char *path)
{
	libneuron_device *ro = NULL;
	struct libneuron_device_info info;
	struct libneuron_engine_status es;
	uint64_t owned = 0;

	check(libneuron_device_open_read_only(path, &ro) == 0, "read_only_open");
	if (!ro)
		return;
	check(libneuron_device_get_info(ro, &info) == 0 && info.num_cores > CORE, "read_only_device_info");
	check(libneuron_engine_get_status(ro, CORE, 0, &es) == 0 && es.core == CORE,
	      "read_only_engine_status");
	check(libneuron_core_acquire(ro, 1u << CORE, &owned) == -EBADF, "read_only_acquire_ebadf");
	libneuron_device_close(ro);
}

/* The ENGINE_STOPPED event of the reset, among whatever else came. */
static void stopped_event_checks(libneuron_device *dev)
{
	struct libneuron_event ev[16];
	long got, i;
	int stopped = 0;

	got = libneuron_device_read_events(dev, ev, 16, 2000000000LL);
	for (i = 0; i < got; i++) {
		printf("# event edge %u core %u cause %u\n", ev[i].edge, ev[i].core, ev[i].cause);
		if (ev[i].edge == 5 && ev[i].core == CORE && ev[i].cause == 1)
			stopped++;
	}
	check(got > 0 && stopped == 1, "own_engine_stopped_event");
	check(libneuron_device_read_events(dev, ev, 16, 10000000LL) == 0, "no_further_event_in_10ms");
}

static void drain_checks(libneuron_queue *q)
{
	static struct libneuron_record out[RECORDS + 8];
	struct libneuron_queue_info qi;
	struct libneuron_decoded d;
	uint64_t lost = 1;
	long got, i;
	int in_order = 1;

	got = libneuron_queue_drain(q, out, RECORDS + 8, &lost);
	for (i = 0; i < got; i++)
		if (libneuron_record_decode(&out[i], NQ, &d) || d.kind != LIBNEURON_KIND_EXPLICIT ||
		    d.debug_hint_extended != (uint32_t)(EXT + i))
			in_order = 0;
	printf("# drained %ld records, lost %llu\n", got, (unsigned long long)lost);
	check(got == RECORDS && lost == 0, "ring_holds_256_records");
	check(in_order, "records_0x4c00_to_0x4cff_in_order");
	check(libneuron_queue_get_info(q, &qi) == 0 && qi.core == CORE && qi.queue == NQ &&
	      qi.size == RING && qi.head == qi.tail && qi.overflow_count == 0 && qi.drop_count == 0,
	      "queue_info_head_is_tail_nothing_lost");
}

#define ROUTE 0x01643250u	/* EXPLICIT -> 5, DGE -> 6, DMA -> 1 */
#define ROUTE_DEFAULT 0x01543210u

/* A NOTIFY hint=1 on a core whose route sends EXPLICIT records to queue 5. */
static void route_checks(libneuron_device *dev)
{
	struct neuron_emu_insn prog[2];
	struct libneuron_queue_info qi;
	struct libneuron_decoded d, guess;
	struct libneuron_record rec;
	libneuron_queue *q = NULL;
	uint32_t got = 0;
	long n = 0;

	check(libneuron_core_set_route(dev, CORE, ROUTE, &got) == 0 && got == ROUTE, "route_set");
	got = 0;
	check(libneuron_core_get_route(dev, CORE, &got) == 0 && got == ROUTE, "route_get");
	check(libneuron_queue_create(dev, CORE, 5, RING, 0, &q) == 0, "routed_queue_create");
	if (!q)
		return;
	check(libneuron_queue_get_info(q, &qi) == 0 && qi.route == ROUTE, "queue_info_route");
	check(libneuron_core_set_route(dev, CORE, ROUTE_DEFAULT, NULL) == -EBUSY, "route_busy_with_a_queue");
	memset(prog, 0, sizeof(prog));
	prog[0].opcode = NEURON_OP_NOTIFY;
	prog[0].debug_hint = htole16(1);
	prog[0].operand.arg.debug_hint_extended = htole16(0x77);
	prog[1].opcode = NEURON_OP_HALT;
	check(libneuron_device_submit(dev, CORE, 0, prog, 2, 0) == 0, "routed_submit");
	n = libneuron_queue_wait(q, &rec, 1, 5000000000LL, NULL);
	check(n == 1, "routed_record_on_queue_5");
	if (n == 1) {
		check(libneuron_queue_decode(q, &rec, &d) == 0 && d.kind == LIBNEURON_KIND_EXPLICIT &&
		      d.debug_hint == 1 && d.debug_hint_extended == 0x77, "queue_decode_explicit");
		printf("# queue_decode: %s\n", d.text);
		check(libneuron_record_decode(&rec, 5, &guess) == 0 &&
		      guess.kind == LIBNEURON_KIND_DGE_METADATA, "default_route_guess_differs");
	}
	libneuron_queue_destroy(q);
	check(libneuron_core_set_route(dev, CORE, 0x0154321au, NULL) == -EINVAL, "route_queue_10_einval");
}

int main(int argc, char **argv)
{
	static struct neuron_emu_insn prog[PROG + 1];
	const char *path = "/dev/nnq0";
	struct libneuron_record out[4];
	struct libneuron_device_info info;
	struct libneuron_engine_status es;
	libneuron_device *dev = NULL;
	libneuron_queue *q = NULL;
	uint64_t owned = 0;
	int i;

	printf("TAP version 13\n");
	if (argc > 2 && strcmp(argv[1], "--uid") == 0) {
		if (drop_to((unsigned int)strtoul(argv[2], NULL, 10))) {
			printf("Bail out! cannot become uid %s: %s\n", argv[2], strerror(errno));
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc > 1)
		path = argv[1];
	printf("# uid %u, %s\n", (unsigned int)getuid(), path);

	read_only_checks(path);
	if (libneuron_device_open(path, &dev)) {
		printf("Bail out! %s\n", libneuron_last_error());
		return 2;
	}
	check(libneuron_device_state(dev) == 1, "state_live");
	check(libneuron_device_get_info(dev, &info) == 0 && info.num_cores > CORE &&
	      info.nq_size_min <= RING && info.nq_size_max >= RING, "device_info");
	/* an x86-64 guest: 4 KiB pages, 4 KiB doorbells */
	check(info.page_size == 4096 && info.doorbell_size == 4096, "device_info_page_and_doorbell_size");
	check(libneuron_device_event_fd(dev) >= 0, "event_fd");
	check(libneuron_core_acquire(dev, 1u << CORE, &owned) == 0 && owned == 1u << CORE, "core_acquire");
	check(libneuron_queue_create(dev, CORE, NQ, RING, 0, &q) == 0, "queue_create");
	if (!q) {
		libneuron_device_close(dev);
		return 1;
	}
	check(libneuron_queue_wait(q, out, 4, 20000000LL, NULL) == 0, "timed_wait_on_empty_queue_returns_0");

	for (i = 0; i < PROG; i++) {
		prog[i].opcode = NEURON_OP_NOTIFY;
		prog[i].debug_hint = htole16(5);
		prog[i].operand.arg.debug_hint_extended = htole16((uint16_t)(EXT + i));
	}
	prog[PROG].opcode = NEURON_OP_HALT;
	check(libneuron_device_submit(dev, CORE, 0, prog, PROG + 1, 0) == 0, "submit_300_notifies");
	/* it fills the ring and waits on it: poll its state (a hang guard, not a timing) */
	for (i = 0; i < 2000; i++) {
		if (libneuron_engine_get_status(dev, CORE, 0, &es) || es.state == 2)
			break;
		usleep(1000);
	}
	check(es.state == 2, "engine_waits_on_the_full_ring");
	check(libneuron_engine_reset(dev, CORE, 0) == 0, "engine_reset");
	check(libneuron_engine_get_status(dev, CORE, 0, &es) == 0 && es.state == 0, "engine_idle_after_reset");
	stopped_event_checks(dev);
	drain_checks(q);

	libneuron_queue_destroy(q);
	route_checks(dev);
	check(libneuron_core_release(dev, 1u << CORE, &owned) == 0 && owned == 0, "core_release");
	{
		uint32_t r = 0;

		check(libneuron_core_get_route(dev, CORE, &r) == 0 && r == ROUTE_DEFAULT,
		      "route_default_after_release");
	}
	libneuron_device_close(dev);
	printf("# c_api_vm: %d of %d checks failed\n", fails, n);
	return fails != 0;
}
