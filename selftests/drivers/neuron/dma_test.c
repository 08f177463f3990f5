// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of the DMA engines and their records, and of AXI_EVT_SEM
 * records (docs/hardware.md#dma-engines, docs/device-model.md#dma-engines,
 * docs/device-model.md#axi-evt-sem), through NEURON_IOC_NOTIFY_TRIGGER and
 * mapped rings:
 *
 *  - split: DGE copies of several lengths on POOL; each one's DGE_METADATA
 *    record (queue 5) carries the dma_map and num_packets of a literal row
 *    worked out by hand from the split rule (64-byte packets, the fewest
 *    engines of at most 4096 packets each, an even share and the rest on
 *    the last), 4096 packets to one engine encoded as 0; with every DMA
 *    queue armed, one DMA record per engine of the map (queue 1) with that
 *    engine's packet count, lowest engine first; a descriptor of more than
 *    16 * 4096 packets is a structural error (info bit 0x10);
 *  - armed: records on the DMA class's queue only from armed queues, none
 *    when disarmed, none after the owner gave the core up;
 *  - axi_evt_sem: a host semaphore or event write makes exactly one
 *    AXI_EVT_SEM record carrying the new value when the notification is
 *    on, none when it is off;
 *  - axi_dropped: a host write that finds the unit's one-record slot
 *    taken (its backpressured queue full) loses its record; the loss is
 *    counted for the owner (NOTIFY_TRIGGER @axi_dropped, fdinfo) and in
 *    sysfs, and the next owner of the core, an unprivileged uid, starts
 *    from 0 (docs/decisions/0025-axi-dropped.md);
 *  - bad_input, second_user: -EINVAL for every bad field, -EPERM for a
 *    second, unprivileged user; the owner's state is untouched.
 *
 * Every expected value is a literal from the split rule and the record
 * layouts (include/uapi/linux/neuron_record.h), never computed here by the
 * rule itself.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE		0
#define REG		0x400000u	/* the copies' source and destination */
#define REG_BYTES	0x402000u	/* 4 MiB + 8 KiB: the longest row fits */
#define Q_DMA		1		/* NEURON_ROUTE_DEFAULT: DMA -> 1 */
#define Q_EVT_SEM	2
#define Q_ERROR		3
#define Q_DGE		5
#define RING_BYTES	4096
#define TENANT_UID	1001
#define TENANT_GID	1000

static int trigger(int fd, __u32 core, __u32 source, __u32 index, __u32 enable,
		   struct neuron_notify_trigger *out)
{
	struct neuron_notify_trigger t = {
		.core = core, .source = source, .index = index, .enable = enable,
		.dma_armed = 0xdead, .axi_armed = 0xdead,
	};
	int ret = neuron_ioctl(fd, NEURON_IOC_NOTIFY_TRIGGER, &t);

	if (out)
		*out = t;
	return ret;
}

/*
 * TAIL of one of the fixture's queues, read after 20 ms so that a record
 * the device still holds on its way to the ring (an input buffer) has
 * landed: the "no more records" checks must not pass by being early.
 */
static __u32 nq_tail(int fd, __u32 queue)
{
	struct neuron_nq_info info = { .core = CORE, .queue = queue };

	usleep(20000);

	if (neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &info))
		return 0xffffffff;
	return info.tail;
}

static struct neuron_emu_insn dge_copy(__u32 length)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_DGE_COPY, 0);

	in.operand.dge.src = htole32(REG);
	in.operand.dge.dst = htole32(REG);
	in.operand.dge.length = htole32(length);
	in.operand.dge.backend = NEURON_DGE_BACKEND_POOL;
	return in;
}

FIXTURE(dma)
{
	int fd;
	struct neuron_ring ring[NEURON_NUM_SW_QUEUES];
};

FIXTURE_SETUP(dma)
{
	static const __u32 queues[] = { Q_DMA, Q_EVT_SEM, Q_ERROR, Q_DGE };
	struct neuron_mem_alloc m = {
		.size = REG_BYTES, .offset = REG, .flags = NEURON_MEM_F_FIXED,
	};
	struct neuron_feature_flags ff = {
		.core = CORE, .op = NEURON_FEATURE_OP_SET,
		.flags = NEURON_FEATURE_DGE_PACKET_NOTIF,
	};
	struct neuron_nq_init init;

	self->fd = neuron_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_MEM_ALLOC, &m));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	for (size_t i = 0; i < ARRAY_SIZE(queues); i++) {
		ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, queues[i], RING_BYTES, 0,
					      &init));
		ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &self->ring[queues[i]]));
	}
}

FIXTURE_TEARDOWN(dma)
{
	close(self->fd);	/* frees the core: its triggers are disarmed */
}

/* Runs @n instructions on POOL and waits for it; returns the end state. */
static int run(int fd, const struct neuron_emu_insn *p, __u32 n)
{
	int ret = neuron_submit(fd, CORE, NEURON_ENGINE_POOL, p, n, 0);

	return ret ? ret : neuron_engine_wait(fd, CORE, NEURON_ENGINE_POOL,
					      NEURON_WAIT_MS);
}

/*
 * The split, by hand: P = ceil(length / 64) packets (1 for length 1),
 * n = ceil(P / 4096) engines, num_packets = ceil(P / n), the last engine
 * the rest; the record's 12-bit field holds 4096 as 0.
 */
static const struct split_row {
	__u32 length;
	__u16 dma_map;
	__u16 num_packets;		/* the record's field */
	__u32 packets[16];		/* each engine's DMA record count */
} split_rows[] = {
	{ 1, 0x0001, 1, { 1 } },
	{ 64, 0x0001, 1, { 1 } },
	{ 65, 0x0001, 2, { 2 } },
	{ 4096, 0x0001, 64, { 64 } },
	{ 262080, 0x0001, 4095, { 4095 } },		/* 4095 packets */
	{ 262144, 0x0001, 0, { 4096 } },		/* 4096: 0 means 4096 */
	{ 262145, 0x0003, 2049, { 2049, 2048 } },	/* 4097 packets */
	{ 524353, 0x0007, 2732, { 2732, 2732, 2730 } },	/* 8194 packets */
	{ 4194304, 0xffff, 0, { 4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096,
				4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096 } },
};

TEST_F(dma, split)
{
	struct neuron_notify_trigger t;
	union neuron_isa_notification r;

	for (__u32 i = 0; i < 16; i++)
		ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, i, 1, &t));
	ASSERT_EQ(0xffff, t.dma_armed);
	ASSERT_EQ(0, t.axi_armed);

	for (size_t k = 0; k < ARRAY_SIZE(split_rows); k++) {
		const struct split_row *row = &split_rows[k];
		struct neuron_emu_insn p[2] = { dge_copy(row->length),
						neuron_insn(NEURON_OP_HALT, 0) };

		TH_LOG("length %u: dma_map 0x%04x num_packets %u", row->length,
		       row->dma_map, row->num_packets);
		ASSERT_EQ(NEURON_ENGINE_IDLE, run(self->fd, p, 2));
		ASSERT_EQ(0, neuron_ring_read(&self->ring[Q_DGE], &r, 1, NEURON_WAIT_MS));
		EXPECT_EQ(0x0e, NEURON_REC_TYPE(r.bytes));	/* POOL EXPLICIT */
		EXPECT_EQ(1, NEURON_REC_DEBUG_HINT(r.bytes));	/* METADATA_TYPE_DGE */
		EXPECT_EQ(row->dma_map, NEURON_REC_DGE_DMA_MAP(r.bytes));
		EXPECT_EQ(row->num_packets, NEURON_REC_DGE_NUM_PACKETS(r.bytes));
		for (__u32 e = 0; e < 16; e++) {
			if (!(row->dma_map & (1u << e)))
				continue;
			ASSERT_EQ(0, neuron_ring_read(&self->ring[Q_DMA], &r, 1,
						      NEURON_WAIT_MS));
			EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_DMA, NEURON_REC_TYPE(r.bytes));
			EXPECT_EQ(e, NEURON_REC_DMA_ENGINE(r.bytes));
			EXPECT_EQ(0, NEURON_REC_DMA_QUEUE(r.bytes));
			EXPECT_EQ(0, r.bytes[2]);
			EXPECT_EQ(row->packets[e], NEURON_REC_DMA_DESC_COUNT(r.bytes));
		}
		/* nothing more than the map's engines */
		EXPECT_EQ(self->ring[Q_DMA].head, nq_tail(self->fd, Q_DMA));
	}

	/* 65537 packets: more than 16 engines of 4096, a structural error */
	{
		struct neuron_emu_insn p[2] = { dge_copy(4194305),
						neuron_insn(NEURON_OP_HALT, 0) };
		struct neuron_engine_id id = { .core = CORE, .engine = NEURON_ENGINE_POOL };

		ASSERT_EQ(NEURON_ENGINE_HALTED, run(self->fd, p, 2));
		ASSERT_EQ(0, neuron_ring_read(&self->ring[Q_ERROR], &r, 1, NEURON_WAIT_MS));
		EXPECT_EQ(0x1f, NEURON_REC_TYPE(r.bytes));
		EXPECT_EQ(0x0a, NEURON_REC_TPB_ERROR_ID(r.bytes));	/* SEQUENCER_FATAL */
		EXPECT_EQ(6, NEURON_REC_SEQ_INFO_KIND(r.bytes));	/* DGE_INVALID */
		EXPECT_EQ(0x10, NEURON_REC_SEQ_INFO(r.bytes));		/* length */
		EXPECT_EQ(self->ring[Q_DMA].head, nq_tail(self->fd, Q_DMA));
		EXPECT_EQ(self->ring[Q_DGE].head, nq_tail(self->fd, Q_DGE));
		ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_ENGINE_RESET, &id));
	}
}

/*
 * 262145 bytes = 4097 packets on engines 0 and 1 (2049 + 2048). Disarmed:
 * no DMA record; queue 1 armed: one, engine 1, 2048; both: two; disarmed
 * again: none.
 */
TEST_F(dma, armed)
{
	static const struct {
		__u32 arm;		/* DMA queues armed for the run */
		__u32 records;
		__u8 engine[2];
		__u32 count[2];
	} rows[] = {
		{ 0x0, 0, { 0 }, { 0 } },
		{ 0x2, 1, { 1 }, { 2048 } },
		{ 0x3, 2, { 0, 1 }, { 2049, 2048 } },
		{ 0x1, 1, { 0 }, { 2049 } },
		{ 0x0, 0, { 0 }, { 0 } },
	};
	struct neuron_emu_insn p[2] = { dge_copy(262145), neuron_insn(NEURON_OP_HALT, 0) };
	struct neuron_notify_trigger t;
	union neuron_isa_notification r;

	for (size_t k = 0; k < ARRAY_SIZE(rows); k++) {
		for (__u32 q = 0; q < 2; q++)
			ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, q,
					     !!(rows[k].arm & (1u << q)), &t));
		ASSERT_EQ(rows[k].arm, t.dma_armed);
		ASSERT_EQ(NEURON_ENGINE_IDLE, run(self->fd, p, 2));
		ASSERT_EQ(0, neuron_ring_read(&self->ring[Q_DGE], &r, 1, NEURON_WAIT_MS));
		EXPECT_EQ(0x0003, NEURON_REC_DGE_DMA_MAP(r.bytes));
		for (__u32 i = 0; i < rows[k].records; i++) {
			ASSERT_EQ(0, neuron_ring_read(&self->ring[Q_DMA], &r, 1,
						      NEURON_WAIT_MS));
			EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_DMA, NEURON_REC_TYPE(r.bytes));
			EXPECT_EQ(rows[k].engine[i], NEURON_REC_DMA_ENGINE(r.bytes));
			EXPECT_EQ(rows[k].count[i], NEURON_REC_DMA_DESC_COUNT(r.bytes));
		}
		/* and never one from a disarmed queue */
		EXPECT_EQ(self->ring[Q_DMA].head, nq_tail(self->fd, Q_DMA));
	}
}

/*
 * A host write through the EVT_SEM windows: with AXI_EVT_SEM on, exactly
 * one record {id, update_mode (1 SET, 2 INC, 4 EVENT_SET), is_event,
 * block_id 0xff, notific_type 0x1b, the value after the write}; off: none.
 */
TEST_F(dma, axi_evt_sem)
{
	static const struct {
		__u32 op, index, value;		/* NEURON_IOC_EVT_SEM */
		__u8 mode, is_event;
		__u32 now;			/* the record's value */
	} rows[] = {
		{ NEURON_SEM_SET, 7, 41, 1, 0, 41 },
		{ NEURON_SEM_INC, 7, 1, 2, 0, 42 },
		{ NEURON_SEM_DEC, 7, 50, 3, 0, 0xfffffff8 },
		{ NEURON_EVENT_SET, 200, 0, 4, 1, 1 },
		{ NEURON_EVENT_CLEAR, 200, 0, 5, 1, 0 },
	};
	struct neuron_evt_sem es = { .core = CORE, .index = 7, .op = NEURON_SEM_SET,
				     .value = 5 };
	struct neuron_notify_trigger t;
	union neuron_isa_notification r;

	/* off (the default): no record */
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_EVT_SEM, &es));
	EXPECT_EQ(0, nq_tail(self->fd, Q_EVT_SEM));

	ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 1, &t));
	ASSERT_EQ(1, t.axi_armed);
	ASSERT_EQ(0, t.dma_armed);
	for (size_t k = 0; k < ARRAY_SIZE(rows); k++) {
		es = (struct neuron_evt_sem){ .core = CORE, .index = rows[k].index,
					      .op = rows[k].op, .value = rows[k].value };
		ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_EVT_SEM, &es));
		EXPECT_EQ(rows[k].now, es.value);
		ASSERT_EQ(0, neuron_ring_read(&self->ring[Q_EVT_SEM], &r, 1, NEURON_WAIT_MS));
		EXPECT_EQ(0x1b, NEURON_REC_TYPE(r.bytes));
		EXPECT_EQ(rows[k].index, NEURON_REC_EVT_SEM_ID(r.bytes));
		EXPECT_EQ(rows[k].mode, NEURON_REC_EVT_SEM_UPDATE_MODE(r.bytes));
		EXPECT_EQ(rows[k].is_event, NEURON_REC_EVT_SEM_IS_EVENT(r.bytes));
		EXPECT_EQ(0xff, NEURON_REC_EVT_SEM_BLOCK_ID(r.bytes));
		EXPECT_EQ(rows[k].now, NEURON_REC_EVT_SEM_VALUE(r.bytes));
		/* exactly one */
		EXPECT_EQ(self->ring[Q_EVT_SEM].head, nq_tail(self->fd, Q_EVT_SEM));
	}
	/* reads make none */
	es = (struct neuron_evt_sem){ .core = CORE, .index = 7, .op = NEURON_SEM_READ };
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_EVT_SEM, &es));
	EXPECT_EQ(self->ring[Q_EVT_SEM].head, nq_tail(self->fd, Q_EVT_SEM));

	ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 0, &t));
	ASSERT_EQ(0, t.axi_armed);
	es = (struct neuron_evt_sem){ .core = CORE, .index = 7, .op = NEURON_SEM_INC,
				      .value = 1 };
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_EVT_SEM, &es));
	EXPECT_EQ(self->ring[Q_EVT_SEM].head, nq_tail(self->fd, Q_EVT_SEM));
}

TEST_F(dma, bad_input)
{
	struct neuron_device_info info;
	struct neuron_notify_trigger t;

	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_DEVICE_INFO, &info));
	ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 3, 1, &t));
	ASSERT_EQ(0x0008, t.dma_armed);
	ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 15, 1, &t));
	ASSERT_EQ(0x8008, t.dma_armed);

	EXPECT_EQ(-EINVAL, trigger(self->fd, info.num_cores, NEURON_TRIGGER_DMA_QUEUE,
				   0, 1, NULL));
	EXPECT_EQ(-EINVAL, trigger(self->fd, CORE, 2, 0, 1, NULL));	/* source */
	EXPECT_EQ(-EINVAL, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 16, 1, NULL));
	EXPECT_EQ(-EINVAL, trigger(self->fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 1, 1, NULL));
	EXPECT_EQ(-EINVAL, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 0, 2, NULL));
	t = (struct neuron_notify_trigger){ .core = CORE, .enable = 1, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NOTIFY_TRIGGER, &t));
	t = (struct neuron_notify_trigger){ .core = CORE, .enable = 1, .reserved1 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NOTIFY_TRIGGER, &t));

	/* none of them changed anything */
	ASSERT_EQ(0, trigger(self->fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 3, 0, &t));
	EXPECT_EQ(0x8000, t.dma_armed);
	EXPECT_EQ(0, t.axi_armed);
}

/*
 * The device node to group TENANT_GID, mode 0660, as a host gives it to
 * its users; @was keeps the owner and mode node_restore() puts back.
 */
static int node_to_tenants(struct stat *was)
{
	if (stat(NEURON_DEV, was) || chown(NEURON_DEV, 0, TENANT_GID))
		return -errno;
	return chmod(NEURON_DEV, 0660) ? -errno : 0;
}

static int node_restore(const struct stat *was)
{
	if (chown(NEURON_DEV, was->st_uid, was->st_gid))
		return -errno;
	return chmod(NEURON_DEV, was->st_mode & 07777) ? -errno : 0;
}

/* sysfs axi_dropped of core CORE, or -1 */
static long long sysfs_axi_dropped(void)
{
	char buf[512], *p;

	if (neuron_sysfs_read("axi_dropped", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "core0 ");
	return p ? strtoll(p + 6, NULL, 10) : -1;
}

/* The value of fdinfo key @key of our own @fd, or -1 */
static long long fdinfo_value(int fd, const char *key)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (neuron_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static int spawn(int (*fn)(void *));
static int new_owner(void *unused);

/*
 * 262 host SETs into a 256-entry backpressured EVT_SEM queue nobody reads:
 * records 1..256 fill the ring, the 257th waits in the unit's slot, the
 * last 5 find the slot taken and are lost (docs/device-model.md#axi-evt-sem).
 */
TEST(axi_dropped)
{
	struct neuron_nq_init init;
	struct neuron_nq_info info = { .core = CORE, .queue = Q_EVT_SEM };
	struct neuron_nq_head head = { .core = CORE, .queue = Q_EVT_SEM, .head = 256 };
	struct neuron_notify_trigger t;
	struct neuron_ring ring = { 0 };
	union neuron_isa_notification r;
	long long before;
	struct stat st;
	int fd;

	ASSERT_EQ(0, node_to_tenants(&st));
	fd = neuron_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_nq_create(fd, CORE, Q_EVT_SEM, RING_BYTES, 0, &init));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));
	ASSERT_EQ(0, trigger(fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 1, &t));
	EXPECT_EQ(0, t.axi_dropped);
	before = sysfs_axi_dropped();
	ASSERT_LE(0, before);

	for (__u32 k = 0; k < 262; k++) {
		struct neuron_evt_sem es = { .core = CORE, .index = 9,
					     .op = NEURON_SEM_SET, .value = 1000 + k };

		ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &es));
	}
	usleep(20000);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(256, info.tail);
	EXPECT_EQ(0, info.drop_count);	/* not the queue's: the unit's */

	/* arming what is armed changes nothing and reads the count */
	ASSERT_EQ(0, trigger(fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 1, &t));
	EXPECT_EQ(1, t.axi_armed);
	EXPECT_EQ(5, t.axi_dropped);
	EXPECT_EQ(5, fdinfo_value(fd, "nnq-axi-dropped-c0:\t"));
	EXPECT_EQ(before + 5, sysfs_axi_dropped());

	/* room again: the slot's record (the 257th write) lands, no other */
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &head));
	ring.head = 256;
	ASSERT_EQ(0, neuron_ring_read(&ring, &r, 1, NEURON_WAIT_MS));
	EXPECT_EQ(0x1b, NEURON_REC_TYPE(r.bytes));
	EXPECT_EQ(9, NEURON_REC_EVT_SEM_ID(r.bytes));
	EXPECT_EQ(1256, NEURON_REC_EVT_SEM_VALUE(r.bytes));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(257, info.tail);

	neuron_ring_unmap(&ring);
	close(fd);	/* gives the core up */
	EXPECT_EQ(0, spawn(new_owner));	/* uid 1001: none of the 5 */
	EXPECT_EQ(before + 5, sysfs_axi_dropped());	/* the device's count stays */

	EXPECT_EQ(0, node_restore(&st));
}

/* The second user's side: every call on the owner's core is refused. */
static int other_tenant(void *unused)
{
	struct neuron_notify_trigger t;
	int fd = neuron_open(), bad = 0;

	(void)unused;
	if (fd < 0)
		return 10;
	for (__u32 i = 0; i < 16; i++)
		bad += trigger(fd, CORE, NEURON_TRIGGER_DMA_QUEUE, i, i & 1, &t) != -EPERM;
	bad += trigger(fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 1, &t) != -EPERM;
	bad += trigger(fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 0, &t) != -EPERM;
	/* bad input still gets -EINVAL first */
	bad += trigger(fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 16, 1, &t) != -EINVAL;
	close(fd);
	return bad;
}

/*
 * After the owner closed its file, a new owner finds everything disarmed
 * and no AXI_EVT_SEM loss counted: the count starts at its claim.
 */
static int new_owner(void *unused)
{
	struct neuron_notify_trigger t;
	int fd = neuron_open(), bad = 0;

	(void)unused;
	if (fd < 0)
		return 10;
	bad += trigger(fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 0, 0, &t) != 0;
	bad += t.dma_armed != 0;
	bad += t.axi_armed != 0;
	bad += t.axi_dropped != 0;
	bad += fdinfo_value(fd, "nnq-axi-dropped-c0:\t") != 0;
	close(fd);
	return bad;
}

static int spawn(int (*fn)(void *))
{
	gid_t grp = TENANT_GID;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgroups(1, &grp) || setresgid(TENANT_UID, TENANT_UID, TENANT_UID) ||
		    setresuid(TENANT_UID, TENANT_UID, TENANT_UID))
			_exit(100);
		_exit(fn(NULL));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(second_user)
{
	struct neuron_notify_trigger t;
	struct stat st;
	int fd;

	ASSERT_EQ(0, node_to_tenants(&st));
	fd = neuron_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, trigger(fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 4, 1, &t));
	ASSERT_EQ(0, trigger(fd, CORE, NEURON_TRIGGER_AXI_EVT_SEM, 0, 1, &t));

	EXPECT_EQ(0, spawn(other_tenant));
	/* the owner's triggers are as it left them */
	ASSERT_EQ(0, trigger(fd, CORE, NEURON_TRIGGER_DMA_QUEUE, 5, 0, &t));
	EXPECT_EQ(0x0010, t.dma_armed);
	EXPECT_EQ(1, t.axi_armed);

	close(fd);	/* gives the core up: its triggers are disarmed */
	EXPECT_EQ(0, spawn(new_owner));

	EXPECT_EQ(0, node_restore(&st));
}

TEST_HARNESS_MAIN
