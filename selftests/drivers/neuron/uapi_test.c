// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of the UAPI's growth rules (docs/decisions/0010-uapi-growth.md,
 * include/uapi/linux/neuron.h "Growing the ABI", "Event size"):
 *
 *   v0		a program built against the first release's header (with
 *		1.0's type byte, 0xBB): its structs and command numbers
 *		are copied here, frozen, and it
 *		makes a queue, runs a program, reads the records, reads an
 *		event as 40 bytes and tears everything down
 *   sized	every command with a struct larger than the kernel's: zero
 *		tail accepted, nonzero tail -E2BIG; smaller than the first
 *		release: -EINVAL; a wrong direction: -ENOTTY
 *   event_size	NEURON_IOC_EVENT_SIZE: the record size read() returns, the
 *		@size each event carries, the bounds
 *		(and today's NQ_INFO reports no coalescing time limit for
 *		its queue)
 *   caps	the capability bits DEVICE_INFO reports
 *   v0_detach	the first release's SUBMIT and ENGINE_STATUS structs with
 *		NEURON_SUBMIT_F_DETACH and @programs_stopped (once reserved),
 *		and an ENGINE_STOPPED event read as 40 bytes
 *   pre_1_0	every command of the type before 1.0 (0xBA): -ENOTTY
 *
 * The frozen structs below are the layouts of the first release, written
 * out by hand: never derive them from the current header.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stddef.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE		0
#define QUEUE		1	/* EXPLICIT records' queue (default ROUTE) */
#define NOTIFIES	4

/* ---- the first release's ABI, frozen ------------------------------------ */

struct v0_device_info {
	__u32 abi_version;
	__u16 vendor;
	__u16 device;
	__u32 num_cores;
	__u32 engines_per_core;
	__u32 queues_per_core;
	__u32 gen;
	__u64 mem_size;
	__u32 nq_size_min;
	__u32 nq_size_max;
	__u32 max_program_insns;
	__u32 timestamp_inc_ps;
	__u64 reserved[4];
};

struct v0_nq_init {
	__u32 core, queue, size, flags, threshold, reserved0;
	__u64 ring_offset, doorbell_offset;
	__u64 reserved[2];
};

struct v0_nq_id {
	__u32 core, queue;
	__u64 reserved;
};

struct v0_nq_info {
	__u32 core, queue, head, tail, phase, size, flags, threshold;
	__u64 overflow_count, drop_count;
	__u64 reserved[2];
};

struct v0_submit {
	__u32 core, engine, count, flags;
	__u64 insns, reserved;
};

struct v0_engine_status {
	__u32 core, engine, state, pc, soft_reset_counter, last_error;
	__u64 exec_count;
	__u64 reserved[2];
};

struct v0_event {
	__u64 timestamp_ns;
	__u32 device, core, edge, cause, queues, lost;
	__u64 count;
};

#define V0_DEVICE_INFO	_IOR(0xBB, 0x00, struct v0_device_info)
#define V0_NQ_INIT	_IOWR(0xBB, 0x01, struct v0_nq_init)
#define V0_NQ_DESTROY	_IOW(0xBB, 0x02, struct v0_nq_id)
#define V0_NQ_INFO	_IOWR(0xBB, 0x03, struct v0_nq_info)
#define V0_SUBMIT	_IOW(0xBB, 0x04, struct v0_submit)
#define V0_ENGINE_STATUS _IOWR(0xBB, 0x05, struct v0_engine_status)

/* The sizes, worked out by hand from the layouts above. */
_Static_assert(sizeof(struct v0_device_info) == 80, "v0 DEVICE_INFO");
_Static_assert(sizeof(struct v0_nq_init) == 56, "v0 NQ_INIT");
_Static_assert(sizeof(struct v0_nq_info) == 64, "v0 NQ_INFO");
_Static_assert(sizeof(struct v0_submit) == 32, "v0 SUBMIT");
_Static_assert(sizeof(struct v0_engine_status) == 48, "v0 ENGINE_STATUS");
_Static_assert(sizeof(struct v0_event) == 40, "v0 event");

/* Waits for one readable event; 0 or -errno. */
static int wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, NEURON_WAIT_MS);

	return n == 1 ? 0 : n == 0 ? -ETIMEDOUT : -errno;
}

/* A program of NOTIFIES explicit records with hints 1..NOTIFIES, then HALT. */
static void notify_prog(struct neuron_emu_insn *p)
{
	for (int i = 0; i < NOTIFIES; i++)
		p[i] = neuron_insn(NEURON_OP_NOTIFY, (uint16_t)(i + 1));
	p[NOTIFIES] = neuron_insn(NEURON_OP_HALT, 0);
}

/*
 * The whole life of a queue through the first release's structs, on a file
 * that never heard of NEURON_IOC_EVENT_SIZE.
 */
TEST(v0_program_runs)
{
	struct v0_device_info info;
	struct v0_nq_init init = { .core = CORE, .queue = QUEUE, .size = 4096,
				   .threshold = 1 };
	struct v0_nq_info nqi = { .core = CORE, .queue = QUEUE };
	struct v0_nq_id id = { .core = CORE, .queue = QUEUE };
	struct v0_engine_status st = { .core = CORE, .engine = NEURON_ENGINE_PE };
	struct neuron_emu_insn prog[NOTIFIES + 1];
	struct v0_submit sub = { .core = CORE, .engine = NEURON_ENGINE_PE,
				 .count = NOTIFIES + 1,
				 .insns = (uintptr_t)prog };
	union neuron_isa_notification recs[NOTIFIES];
	struct neuron_nq_init cur = { 0 };
	struct neuron_nq_info cur_info = { 0 };
	struct neuron_ring ring = { 0 };
	struct v0_event ev[2];
	int fd = open(NEURON_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, V0_DEVICE_INFO, &info));
	EXPECT_EQ(1, info.abi_version);
	EXPECT_EQ(0x1d0f, info.vendor);
	EXPECT_EQ(64ull << 20, info.mem_size);

	ASSERT_EQ(0, neuron_ioctl(fd, V0_NQ_INIT, &init));
	cur.size = init.size;
	cur.ring_offset = init.ring_offset;
	cur.doorbell_offset = init.doorbell_offset;
	ASSERT_EQ(0, neuron_ring_map(fd, &cur, &ring));

	notify_prog(prog);
	ASSERT_EQ(0, neuron_ioctl(fd, V0_SUBMIT, &sub));
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, NOTIFIES, NEURON_WAIT_MS));
	for (int i = 0; i < NOTIFIES; i++) {
		EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_PE_EXPLICIT, neuron_rec_type(&recs[i]));
	}
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, CORE, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_ioctl(fd, V0_ENGINE_STATUS, &st));
	EXPECT_EQ(NEURON_ENGINE_IDLE, st.state);

	ASSERT_EQ(0, neuron_ioctl(fd, V0_NQ_INFO, &nqi));
	EXPECT_EQ(NOTIFIES, nqi.tail);
	EXPECT_EQ(NOTIFIES, nqi.head);
	EXPECT_EQ(4096, nqi.size);
	/*
	 * what became coalesce_ns (bytes 48..51) reads zero to the old caller;
	 * what became route (bytes 52..55, little-endian: the upper half of the
	 * first reserved word) is the core's default route, 0x01543210
	 */
	EXPECT_EQ(0x0154321000000000ull, nqi.reserved[0]);
	EXPECT_EQ(0, nqi.reserved[1]);
	/*
	 * the first release's NQ_INIT knew no time limit: today's NQ_INFO
	 * reports none (coalesce_ns 0) and the threshold it asked for
	 */
	cur_info.core = CORE;
	cur_info.queue = QUEUE;
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &cur_info));
	EXPECT_EQ(0, cur_info.coalesce_ns);
	EXPECT_EQ(1, cur_info.threshold);

	/* the threshold edge, as 40-byte events: one per read() slot */
	ASSERT_EQ(0, wait_readable(fd));
	n = read(fd, ev, sizeof(ev));
	ASSERT_LT(0, n);
	EXPECT_EQ(0, n % 40);
	EXPECT_EQ(NEURON_EDGE_NOTIFIC, ev[0].edge);
	EXPECT_EQ(CORE, ev[0].core);
	EXPECT_EQ(0, ev[0].device);

	neuron_ring_unmap(&ring);
	EXPECT_EQ(0, neuron_ioctl(fd, V0_NQ_DESTROY, &id));
	close(fd);
}

/* A command's struct with room for 8 more bytes than the kernel knows. */
struct grown {
	union {
		struct neuron_device_info info;
		struct neuron_engine_status st;
		struct neuron_nq_id id;
		struct neuron_cores cores;
		struct neuron_evt_sem sem;
		__u8 bytes[256];
	};
};

#define GROWN(cmd, bytes) \
	_IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), (bytes))

TEST(sized_args)
{
	/* commands that copy their argument in (an out-only one: below) */
	static const struct {
		unsigned long cmd;
		unsigned int ksize;	/* the kernel's struct size, by hand */
	} cmds[] = {
		{ NEURON_IOC_ENGINE_STATUS, 48 },
		{ NEURON_IOC_EVT_SEM, 24 },
		{ NEURON_IOC_CORE_ACQUIRE, 24 },
		{ NEURON_IOC_TIMESTAMP, 40 },
	};
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		unsigned int k = cmds[i].ksize;
		unsigned long cmd = cmds[i].cmd;
		struct grown g;

		EXPECT_EQ(k, _IOC_SIZE(cmd)) TH_LOG("command %zu", i);
		/* 8 more bytes, all zero: accepted, the tail left as it was */
		memset(&g, 0, sizeof(g));
		g.st.core = CORE;	/* also names core 0 for the others */
		g.bytes[k + 8] = 0x5a;	/* beyond the caller's struct */
		EXPECT_EQ(0, neuron_ioctl(fd, GROWN(cmd, k + 8), &g)) TH_LOG("command %zu", i);
		EXPECT_EQ(0x5a, g.bytes[k + 8]);
		/* a nonzero byte the kernel does not know: -E2BIG */
		memset(&g, 0, sizeof(g));
		g.bytes[k + 7] = 1;
		EXPECT_EQ(-E2BIG, neuron_ioctl(fd, GROWN(cmd, k + 8), &g)) TH_LOG("command %zu", i);
		/* smaller than the first release: -EINVAL */
		memset(&g, 0, sizeof(g));
		EXPECT_EQ(-EINVAL, neuron_ioctl(fd, GROWN(cmd, k - 8), &g)) TH_LOG("command %zu", i);
	}
	close(fd);
}

TEST(sized_args_out_and_direction)
{
	struct grown g;
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	/* a known number with the wrong direction is no command */
	memset(&g, 0, sizeof(g));
	EXPECT_EQ(-ENOTTY, neuron_ioctl(fd, _IOW(0xBB, 0x00, struct neuron_device_info), &g));
	/*
	 * an out-only command reads nothing in: a larger struct is filled up
	 * to the kernel's size (80 bytes) and the rest left alone; a smaller
	 * one than the first release's is still -EINVAL
	 */
	memset(&g, 0xff, sizeof(g));
	ASSERT_EQ(0, neuron_ioctl(fd, GROWN(NEURON_IOC_DEVICE_INFO, 96), &g));
	EXPECT_EQ(1, g.info.abi_version);
	EXPECT_EQ(0x3ull, g.info.file_cores);	/* /dev/nnq0: both cores */
	EXPECT_EQ(0xff, g.bytes[80]);	/* not the kernel's to write */
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, GROWN(NEURON_IOC_DEVICE_INFO, 72), &g));
	close(fd);
}

/*
 * Event sizes (docs/decisions/0010-uapi-growth.md): this kernel fills 64 bytes
 * (struct neuron_event up to @reserved, @pc appended by NEURON_CAP_HANG).
 * A reader asking for 72 gets 72-byte records, size 64 and zeros after; a
 * reader of the 56-byte layout of NEURON_CAP_PAGE_SIZE's release still gets
 * 56-byte records saying size 56, nothing of @pc.
 */
TEST(event_size)
{
	struct neuron_event_size es = { .size = 72 };
	struct neuron_emu_insn prog[NOTIFIES + 1];
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	union neuron_isa_notification recs[NOTIFIES];
	__u8 buf[72 * 2];
	struct neuron_event ev;
	int fd = open(NEURON_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	ASSERT_LE(0, fd);
	EXPECT_EQ(64, sizeof(struct neuron_event));
	es.size = 39;
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVENT_SIZE, &es));
	es.size = 4097;
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVENT_SIZE, &es));
	es.size = 72;
	es.reserved = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_EVENT_SIZE, &es));
	es.reserved = 0;
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_EVENT_SIZE, &es));
	EXPECT_EQ(64, es.kernel_size);

	init = (struct neuron_nq_init){ .core = CORE, .queue = QUEUE, .size = 4096,
					.threshold = 1 };
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));
	notify_prog(prog);
	ASSERT_EQ(0, neuron_submit(fd, CORE, NEURON_ENGINE_PE, prog, NOTIFIES + 1, 0));
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, NOTIFIES, NEURON_WAIT_MS));

	/* a buffer smaller than one 72-byte event: -EINVAL */
	ASSERT_EQ(0, wait_readable(fd));
	EXPECT_EQ(-1, read(fd, buf, 71));
	EXPECT_EQ(EINVAL, errno);
	memset(buf, 0xee, sizeof(buf));
	n = read(fd, buf, sizeof(buf));
	ASSERT_LT(0, n);
	EXPECT_EQ(0, n % 72);
	memcpy(&ev, buf, sizeof(ev));
	EXPECT_EQ(NEURON_EDGE_NOTIFIC, ev.edge);
	EXPECT_EQ(64, ev.size);
	EXPECT_EQ(0, ev.suppressed);
	EXPECT_EQ(0, ev.wrbuf_full);
	EXPECT_EQ(0, ev.wrbuf_drop);
	EXPECT_EQ(0, ev.pc);	/* HANG only */
	EXPECT_EQ(0, ev.reserved);
	for (int i = 64; i < 72; i++) {
		EXPECT_EQ(0, buf[i]) TH_LOG("byte %d of the event", i);
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;

	/* a reader built against the 56-byte header */
	es.size = 56;
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_EVENT_SIZE, &es));
	EXPECT_EQ(64, es.kernel_size);
	ASSERT_EQ(0, neuron_submit(fd, CORE, NEURON_ENGINE_PE, prog, NOTIFIES + 1, 0));
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, NOTIFIES, NEURON_WAIT_MS));
	ASSERT_EQ(0, wait_readable(fd));
	memset(buf, 0xee, sizeof(buf));
	n = read(fd, buf, 56);
	ASSERT_EQ(56, n);
	memcpy(&ev, buf, 56);
	EXPECT_EQ(NEURON_EDGE_NOTIFIC, ev.edge);
	EXPECT_EQ(56, ev.size);
	for (int i = 56; i < 64; i++) {
		EXPECT_EQ(0xee, buf[i]) TH_LOG("byte %d past a 56-byte event", i);
	}

	neuron_ring_unmap(&ring);
	EXPECT_EQ(0, neuron_nq_destroy(fd, CORE, QUEUE));
	close(fd);
}

/*
 * Command numbers never move (docs/decisions/0010-uapi-growth.md,
 * 0044-ioctl-type-1-0.md): type 0xBB, numbers 0x00.. in release order, each used
 * once: NQ_HEAD 0x14, NQ_ROUTE 0x15, HANG_TIMEOUT 0x16.
 */
TEST(ioctl_numbers)
{
	static const struct { unsigned long cmd; unsigned int nr; } cmds[] = {
		{ NEURON_IOC_DEVICE_INFO, 0x00 },	{ NEURON_IOC_NQ_INIT, 0x01 },
		{ NEURON_IOC_NQ_DESTROY, 0x02 },	{ NEURON_IOC_NQ_INFO, 0x03 },
		{ NEURON_IOC_SUBMIT, 0x04 },		{ NEURON_IOC_ENGINE_STATUS, 0x05 },
		{ NEURON_IOC_ENGINE_RESET, 0x06 },	{ NEURON_IOC_FEATURE_FLAGS, 0x07 },
		{ NEURON_IOC_NQ_EVENTFD, 0x08 },	{ NEURON_IOC_EVT_SEM, 0x09 },
		{ NEURON_IOC_THROTTLE, 0x0a },		{ NEURON_IOC_CORE_ACQUIRE, 0x0b },
		{ NEURON_IOC_CORE_RELEASE, 0x0c },	{ NEURON_IOC_MEM_ALLOC, 0x0d },
		{ NEURON_IOC_MEM_FREE, 0x0e },		{ NEURON_IOC_EVENT_SIZE, 0x0f },
		{ NEURON_IOC_NOTIFY_TRIGGER, 0x10 },	{ NEURON_IOC_NQ_COALESCE, 0x11 },
		{ NEURON_IOC_TIMESTAMP, 0x12 },		{ NEURON_IOC_CORE_GRANT, 0x13 },
		{ NEURON_IOC_NQ_HEAD, 0x14 },		{ NEURON_IOC_NQ_ROUTE, 0x15 },
		{ NEURON_IOC_HANG_TIMEOUT, 0x16 },
	};

	for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(0xBB, _IOC_TYPE(cmds[i].cmd)) TH_LOG("command %u", i);
		EXPECT_EQ(cmds[i].nr, _IOC_NR(cmds[i].cmd)) TH_LOG("command %u", i);
		EXPECT_EQ(i, _IOC_NR(cmds[i].cmd)) TH_LOG("command %u", i);
	}
	EXPECT_EQ(16, sizeof(struct neuron_hang_timeout));
	EXPECT_EQ(16, NEURON_HANG_TIMEOUT_SIZE_VER0);
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(NEURON_IOC_HANG_TIMEOUT));
}

/*
 * Releases before 1.0 used type 0xBA, which mainline has since given to
 * Live Update (docs/decisions/0044-ioctl-type-1-0.md): every command of
 * that type, whatever its number, direction or size, is no command here,
 * so a program built against a 0.x header fails at its first call instead
 * of reaching a command by accident.
 */
TEST(pre_1_0_type_refused)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	struct neuron_device_info info;
	__u64 arg[16];
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	for (unsigned int nr = 0; nr <= 0x3f; nr++) {
		for (unsigned int d = 0; d < 4; d++) {
			for (unsigned int size = 0; size <= sizeof(arg); size += 8) {
				unsigned long cmd = _IOC(dirs[d], 0xBA, nr, size);

				memset(arg, 0, sizeof(arg));
				EXPECT_EQ(-ENOTTY, neuron_ioctl(fd, cmd, arg))
					TH_LOG("nr 0x%02x dir %u size %u", nr, dirs[d], size);
			}
		}
	}
	/* the file is unharmed: DEVICE_INFO works */
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	close(fd);
}

/* Whether the running kernel has the DIM library: net_dim in /proc/kallsyms. */
static bool kernel_has_dim(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " net_dim\n") || strstr(line, " net_dim\t");
	fclose(f);
	return found;
}

TEST(capabilities)
{
	struct neuron_device_info info;
	int fd = neuron_open();
	/* ADAPTIVE: bit 13, only where the kernel has CONFIG_DIMLIB (not the debug kernel) */
	unsigned long long adaptive = kernel_has_dim() ? 1ull << 13 : 0;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	/*
	 * SIZED_ARGS, TENANCY, EVENT_SIZE, RESET_EVENTS: bits 0-3;
	 * COALESCE: bit 4; TIMESTAMP: bit 5; SUBMIT_GRANT: bit 6;
	 * STATUS_PAGE: bit 7; PAGE_SIZE: bit 8; ROUTE: bit 9; CORE_NODES: bit 10;
	 * HANG: bit 11; AXI_DROPPED: bit 12; ADAPTIVE: bit 13 (with DIMLIB)
	 */
	EXPECT_EQ(0x1fffull | adaptive, info.capabilities);
	EXPECT_EQ(adaptive, info.capabilities & NEURON_CAP_ADAPTIVE);
	EXPECT_EQ(1ull << 12, info.capabilities & NEURON_CAP_AXI_DROPPED);
	/* NOTIFY_TRIGGER grew from 32 bytes: @axi_dropped, @reserved1 */
	EXPECT_EQ(32, NEURON_NOTIFY_TRIGGER_SIZE_VER0);
	EXPECT_EQ(40, sizeof(struct neuron_notify_trigger));
	EXPECT_EQ(1ull << 9, info.capabilities & NEURON_CAP_ROUTE);
	EXPECT_EQ(1ull << 10, info.capabilities & NEURON_CAP_CORE_NODES);
	EXPECT_EQ(1ull << 11, info.capabilities & NEURON_CAP_HANG);
	EXPECT_EQ(1ull << 6, info.capabilities & NEURON_CAP_SUBMIT_GRANT);
	EXPECT_EQ(1ull << 7, info.capabilities & NEURON_CAP_STATUS_PAGE);
	EXPECT_EQ(1ull << 8, info.capabilities & NEURON_CAP_PAGE_SIZE);
	/* what was reserved[0] of the second release: x86-64, 4 KiB pages */
	EXPECT_EQ(4096, info.page_size);
	EXPECT_EQ(4096, info.doorbell_size);
	/* what was reserved of the third release: both cores on /dev/nnq0 */
	EXPECT_EQ(0x3ull, info.file_cores);
	close(fd);
}

/*
 * NEURON_IOC_NQ_HEAD (docs/decisions/0011-reset-and-recovery.md#page-size):
 * what a doorbell store
 * does, by ioctl. 5 records are made unread, HEAD is written to 3 and
 * NQ_INFO reads head 3, tail 5; bad fields get -EINVAL, another file's
 * queue -ENOENT, a struct below the first release's 24 bytes -EINVAL.
 */
TEST(nq_head_ioctl)
{
	struct neuron_emu_insn prog[NOTIFIES + 1];
	struct neuron_nq_head h = { .core = CORE, .queue = QUEUE, .head = 3 };
	struct neuron_nq_info nqi = { .core = CORE, .queue = QUEUE };
	struct neuron_nq_init init;
	int fd = neuron_open(), other = neuron_open();
	uint64_t deadline;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	EXPECT_EQ(24, sizeof(struct neuron_nq_head));
	EXPECT_EQ(24, NEURON_NQ_HEAD_SIZE_VER0);
	ASSERT_EQ(0, neuron_nq_create(fd, CORE, QUEUE, 4096, 0, &init));
	notify_prog(prog);
	ASSERT_EQ(0, neuron_submit(fd, CORE, NEURON_ENGINE_PE, prog, NOTIFIES + 1, 0));
	deadline = neuron_now_ms() + 10000;
	do {
		ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &nqi));
	} while (nqi.tail != NOTIFIES && neuron_now_ms() < deadline);
	ASSERT_EQ(NOTIFIES, nqi.tail);
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &h));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &nqi));
	EXPECT_EQ(3u, nqi.head);
	EXPECT_EQ(NOTIFIES, nqi.tail);
	h.reserved0 = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &h));
	h.reserved0 = 0;
	h.reserved = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &h));
	h.reserved = 0;
	h.queue = 10;
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &h));
	h.queue = QUEUE;
	EXPECT_EQ(-ENOENT, neuron_ioctl(other, NEURON_IOC_NQ_HEAD, &h));
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, _IOW(0xBB, 0x14, __u64[2]), &h));
	EXPECT_EQ(0, neuron_nq_destroy(fd, CORE, QUEUE));
	EXPECT_EQ(-ENOENT, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &h));
	close(other);
	close(fd);
}

/*
 * A program built against the first release: its SUBMIT struct carries the
 * later flag NEURON_SUBMIT_F_DETACH (on its own core: it changes nothing),
 * its ENGINE_STATUS struct gets @programs_stopped in what was reserved[0]
 * and passes it back in unchanged on the next call, and its 40-byte events
 * hold the whole ENGINE_STOPPED edge.
 */
TEST(v0_detach)
{
	struct neuron_emu_insn prog[2];
	struct v0_submit sub = { .core = CORE, .engine = NEURON_ENGINE_PE, .count = 2,
				 .flags = 1u << 1,	/* NEURON_SUBMIT_F_DETACH, by hand */
				 .insns = (uintptr_t)prog };
	struct v0_engine_status st = { .core = CORE, .engine = NEURON_ENGINE_PE };
	struct neuron_engine_id id = { .core = CORE, .engine = NEURON_ENGINE_PE };
	struct v0_event ev[16];
	__u64 stopped;
	int fd = open(NEURON_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK), n = 0;
	ssize_t got;

	ASSERT_LE(0, fd);
	prog[0] = neuron_insn(NEURON_OP_DELAY, 0);
	prog[0].operand.arg.value = htole32(4000000000u);	/* 4 s */
	prog[1] = neuron_insn(NEURON_OP_HALT, 0);
	ASSERT_EQ(0, neuron_ioctl(fd, V0_SUBMIT, &sub));
	ASSERT_EQ(0, neuron_ioctl(fd, V0_ENGINE_STATUS, &st));
	EXPECT_EQ(NEURON_ENGINE_RUNNING, st.state);
	stopped = st.reserved[0];
	while (read(fd, ev, sizeof(ev)) > 0)
		;	/* the events of earlier tests */
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_ENGINE_RESET, &id));
	while ((got = read(fd, ev, sizeof(ev))) > 0) {
		EXPECT_EQ(0, got % 40);
		for (int i = 0; i < got / 40; i++) {
			if (ev[i].edge != 5)	/* NEURON_EDGE_ENGINE_STOPPED */
				continue;
			n++;
			EXPECT_EQ(CORE, ev[i].core);
			EXPECT_EQ(1, ev[i].cause);	/* NEURON_STOP_ENGINE_RESET */
			EXPECT_EQ(1u << NEURON_ENGINE_PE, ev[i].queues);
			EXPECT_LE(stopped + 1, ev[i].count);
		}
	}
	EXPECT_EQ(1, n);
	/* the struct as the last call left it: reserved[0] nonzero, accepted */
	ASSERT_EQ(0, neuron_ioctl(fd, V0_ENGINE_STATUS, &st));
	EXPECT_EQ(NEURON_ENGINE_IDLE, st.state);
	EXPECT_EQ(stopped + 1, st.reserved[0]);
	ASSERT_EQ(0, neuron_ioctl(fd, V0_ENGINE_STATUS, &st));
	EXPECT_EQ(stopped + 1, st.reserved[0]);
	EXPECT_EQ(0, st.reserved[1]);
	close(fd);
}

TEST_HARNESS_MAIN
