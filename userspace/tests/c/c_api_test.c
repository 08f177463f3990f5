/* SPDX-License-Identifier: MIT */
/*
 * The C API (include/libneuron/neuron.h) from a C program, without a
 * device: decode a record worked out by hand, and the errors of bad
 * arguments. Prints TAP; exits non-zero on a failure. The device path
 * (open, cores, queue, submit, timed wait, events, engine status and
 * reset, queue info) runs in the VM as an unprivileged user:
 * userspace/tests/vm_c_api.c (selftests/vm/api-guest.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libneuron/neuron.h"

static int n, fails;

static void check(int ok, const char *name)
{
	n++;
	printf("%sok %d c_api.%s\n", ok ? "" : "not ", n, name);
	if (!ok) {
		fails++;
		printf("# last error: %s\n", libneuron_last_error());
	}
}

/*
 * DGE metadata cannot be told from an EXPLICIT record by its bytes
 * (docs/decisions/0019-dge-metadata-route.md): the queue and the route decide.
 * POOL EXPLICIT (0x04 + 4*2 + 2 = 0x0e), header 0x8e (phase 1), word 0
 * pc 0x12345 | debug_hint 1 << 20 = 0x00112345 -> 45 23 11 8e; dma_map
 * 0x8001 -> 01 80; num_packets 0 (4096), infer_program_counter (bit 14),
 * dma_group_id (bit 15) = 0xc000 -> 00 c0; timestamp 1000 ps -> e8 03.
 * A route with the DGE class (5) on queue 7: 0x01543210 with nibble 5 = 7
 * -> 0x01743210.
 */
static void decode_route_checks(void)
{
	const struct libneuron_record dge = { { 0x45, 0x23, 0x11, 0x8e, 0x01, 0x80, 0x00, 0xc0,
						0xe8, 0x03, 0, 0, 0, 0, 0, 0 } };
	struct libneuron_decoded d;

	check(libneuron_record_decode(&dge, -1, &d) == 0 && d.kind == LIBNEURON_KIND_EXPLICIT &&
	      strstr(d.text, "(or DGE_METADATA: the queue decides)") != NULL,
	      "decode_no_queue_explicit_says_the_queue_decides");
	printf("# %s\n", d.text);
	check(libneuron_record_decode(&dge, 5, &d) == 0 && d.kind == LIBNEURON_KIND_DGE_METADATA &&
	      d.engine == 2 && d.program_counter == 0x12345 && d.debug_hint == 1 &&
	      strstr(d.text, "(or DGE_METADATA") == NULL,
	      "decode_default_dge_queue_dge_metadata");
	check(libneuron_record_decode_route(&dge, 5, 0x01543210u, &d) == 0 &&
	      d.kind == LIBNEURON_KIND_DGE_METADATA && d.timestamp_ps == 1000,
	      "decode_route_default_route_queue_5");
	check(libneuron_record_decode_route(&dge, 7, 0x01743210u, &d) == 0 &&
	      d.kind == LIBNEURON_KIND_DGE_METADATA && d.program_counter == 0x12345,
	      "decode_route_dge_on_queue_7");
	check(libneuron_record_decode_route(&dge, 5, 0x01743210u, &d) == 0 &&
	      d.kind == LIBNEURON_KIND_EXPLICIT && strstr(d.text, "(or DGE_METADATA") == NULL,
	      "decode_route_queue_5_not_dge_under_that_route");
	/* the same bytes with debug_hint 3: EXPLICIT on the DGE queue too */
	{
		struct libneuron_record e = dge;

		e.bytes[2] = 0x31;
		check(libneuron_record_decode_route(&e, 7, 0x01743210u, &d) == 0 &&
		      d.kind == LIBNEURON_KIND_EXPLICIT && d.debug_hint == 3,
		      "decode_route_hint_3_stays_explicit");
		check(libneuron_record_decode(&e, -1, &d) == 0 && strstr(d.text, "(or DGE_METADATA") == NULL,
		      "decode_no_queue_hint_3_is_sure");
	}
	check(libneuron_record_decode_route(&dge, 10, 0x01543210u, &d) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_record_decode_route: queue 10 is not 0..9") == 0,
	      "decode_route_queue_10_einval_named");
	check(libneuron_record_decode_route(&dge, -1, 0x01543210u, &d) == -EINVAL, "decode_route_queue_minus_1_einval");
	check(libneuron_record_decode_route(NULL, 5, 0x01543210u, &d) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_record_decode_route: rec is NULL") == 0,
	      "decode_route_null_record_einval_named");
}

/* The 0.2 runtime calls (capabilities, cores, events, engines, queue info):
 * every NULL argument is -EINVAL and named, without a device. */
static void runtime_call_checks(void)
{
	libneuron_device *dev = NULL;
	struct libneuron_device_info info;
	struct libneuron_event ev[2];
	struct libneuron_engine_status es;
	struct libneuron_queue_info qi;
	uint64_t owned = 7;

	check(libneuron_device_open_read_only("/dev/nnq-none", &dev) == -ENOENT && dev == NULL &&
	      strstr(libneuron_last_error(), "/dev/nnq-none") != NULL, "open_read_only_missing_node_enoent");
	check(libneuron_device_get_info(NULL, &info) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_device_get_info: dev is NULL") == 0,
	      "device_info_null_device_einval_named");
	check(libneuron_device_state(NULL) == -EINVAL, "device_state_null_einval");
	check(libneuron_core_acquire(NULL, 1, &owned) == -EINVAL && owned == 7, "core_acquire_null_einval");
	check(libneuron_core_release(NULL, 1, &owned) == -EINVAL && owned == 7, "core_release_null_einval");
	check(libneuron_device_read_events(NULL, ev, 2, 0) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_device_read_events: dev is NULL") == 0,
	      "read_events_null_device_einval_named");
	check(libneuron_device_event_fd(NULL) == -EINVAL, "event_fd_null_einval");
	check(libneuron_engine_get_status(NULL, 0, 0, &es) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_engine_get_status: dev is NULL") == 0,
	      "engine_status_null_device_einval_named");
	check(libneuron_engine_reset(NULL, 0, 0) == -EINVAL, "engine_reset_null_einval");
	check(libneuron_queue_get_info(NULL, &qi) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_queue_get_info: q is NULL") == 0,
	      "queue_info_null_queue_einval_named");
	{
		struct libneuron_record rec = { { 0 } };
		struct libneuron_decoded dd;
		uint32_t route = 0;

		check(libneuron_queue_decode(NULL, &rec, &dd) == -EINVAL &&
		      strcmp(libneuron_last_error(), "libneuron_queue_decode: q is NULL") == 0,
		      "queue_decode_null_queue_einval_named");
		check(libneuron_core_get_route(NULL, 0, &route) == -EINVAL &&
		      strcmp(libneuron_last_error(), "libneuron_core_get_route: dev is NULL") == 0,
		      "get_route_null_device_einval_named");
		check(libneuron_core_set_route(NULL, 0, 0x01543210u, NULL) == -EINVAL &&
		      strcmp(libneuron_last_error(), "libneuron_core_set_route: dev is NULL") == 0,
		      "set_route_null_device_einval_named");
	}
	/* the sizes a C caller compiles in: fixed by hand from the fields */
	check(sizeof(struct libneuron_device_info) == 88 && sizeof(struct libneuron_event) == 64 &&
	      sizeof(struct libneuron_engine_status) == 40 && sizeof(struct libneuron_queue_info) == 56,
	      "struct_sizes_are_the_abi");
}

int main(void)
{
	/* SEQUENCER_NONFATAL (error id 0x09), metadata_lo 0x0835, header 0x9f
	 * (phase 1, type 0x1f TPB_ERROR), metadata_hi 0x005c1a42: a DGE
	 * bounds error of POOL at pc 0x1a4 */
	struct libneuron_record r = { { 0x09, 0x35, 0x08, 0x9f, 0x42, 0x1a, 0x5c, 0,
					0x10, 0, 0, 0, 0, 0, 0, 0 } };
	struct libneuron_decoded d;
	libneuron_device *dev = NULL;
	libneuron_queue *q = NULL;
	struct libneuron_record out[4];

	struct libneuron_version_info v = libneuron_version();

	printf("TAP version 13\n");
	/* the loaded library is the one these headers describe (a build tree) */
	check(v.major == LIBNEURON_VERSION_MAJOR && v.minor == LIBNEURON_VERSION_MINOR &&
	      v.patch == LIBNEURON_VERSION_PATCH, "version_matches_the_headers");
	check(libneuron_record_decode(&r, -1, &d) == 0, "decode_returns_0");
	check(d.kind == LIBNEURON_KIND_TPB_ERROR && d.notific_type == 0x1f && d.error_id == 0x09,
	      "decode_tpb_error_kind_type_id");
	check(d.program_counter == 0x1a4 && d.timestamp_ps == 0x10 && d.phase == 1,
	      "decode_tpb_error_pc_time_phase");
	check(strstr(d.text, "DGE OOB on POOL at pc 0x1a4") != NULL, "decode_text");
	printf("# %s\n", d.text);
	check(libneuron_record_decode(NULL, -1, &d) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_record_decode: rec is NULL") == 0,
	      "decode_null_record_einval_named");
	check(libneuron_device_open("/dev/nnq-none", &dev) == -ENOENT && dev == NULL &&
	      strstr(libneuron_last_error(), "/dev/nnq-none") != NULL,
	      "open_missing_node_enoent");
	check(libneuron_device_open("/dev/null", NULL) == -EINVAL, "open_null_out_einval");
	check(libneuron_queue_create(NULL, 0, 1, 4096, 0, &q) == -EINVAL && q == NULL &&
	      strcmp(libneuron_last_error(), "libneuron_queue_create: dev is NULL") == 0,
	      "queue_null_device_einval_named");
	check(libneuron_queue_drain(NULL, out, 4, NULL) == -EINVAL, "drain_null_queue_einval");
	check(libneuron_queue_wait(NULL, out, 4, 1000, NULL) == -EINVAL, "wait_null_queue_einval");
	check(libneuron_queue_set_coalescing(NULL, 8, 500000) == -EINVAL &&
	      strcmp(libneuron_last_error(), "libneuron_queue_set_coalescing: q is NULL") == 0,
	      "set_coalescing_null_queue_einval_named");
	runtime_call_checks();
	decode_route_checks();
	libneuron_device_close(NULL);
	libneuron_queue_destroy(NULL);
	printf("# c_api: %d of %d checks failed\n", fails, n);
	return fails != 0;
}
