// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of NEURON_IOC_NQ_ROUTE (docs/hardware.md#nq-routing,
 * docs/decisions/0022-route-programmable.md): a core's owner programs which
 * software queue each class of record goes to.
 *
 *  - routed_program: an unprivileged owner (uid 1000) sets a route other
 *    than the default, runs one POOL program that makes a record of every
 *    class but throttle (trace, EXPLICIT, EVT_SEM, TPB_ERROR, DGE metadata,
 *    DMA), and finds each record on the queue the route names, by the
 *    hand-written table below; the default queues get nothing; NQ_INFO
 *    reports the route; SET with a queue alive is -EBUSY;
 *  - other_file: another file of the same unprivileged uid may read the
 *    route but not set it (-EPERM); every bad field is -EINVAL, checked
 *    before ownership, and changes nothing; when the owner closes its
 *    file the route is NEURON_ROUTE_DEFAULT again and the next file may
 *    set its own.
 *
 * Every expected value is a literal, never computed by NEURON_ROUTE_QUEUE().
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/stat.h>
#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE		0
#define REG		0x400000u	/* the copy's source and destination */
#define RING_BYTES	4096
#define USER		1000		/* uid and gid of the unprivileged tenant */
/*
 * class:  7 (none) 6 DMA  5 DGE  4 throttle  3 error  2 EVT_SEM  1 EXPLICIT  0 trace
 * queue:  0        3      2      4           9        8          6           7
 */
#define ROUTE		0x03249867u
#define ROUTE_DEFAULT	0x01543210u	/* written out, not NEURON_ROUTE_DEFAULT */

static int route_op(int fd, __u32 core, __u32 op, __u32 route, __u32 *out)
{
	struct neuron_nq_route r = { .core = core, .op = op, .route = route };
	int ret = neuron_ioctl(fd, NEURON_IOC_NQ_ROUTE, &r);

	if (out)
		*out = r.route;
	return ret;
}

static __u32 route_get(int fd)
{
	__u32 r = 0xdeadbeef;

	if (route_op(fd, CORE, NEURON_ROUTE_OP_GET, 0, &r))
		return 0xdeadbeef;
	return r;
}

FIXTURE(route)
{
	struct stat node;
	int fd;
	struct neuron_ring ring[NEURON_NUM_SW_QUEUES];
	int made[NEURON_NUM_SW_QUEUES];
};

/*
 * The device node is given to group USER, mode 0660, as a host gives it to
 * group neuron; the test then runs with effective uid and gid USER (the
 * saved uid stays 0 so the teardown can put the node back).
 */
FIXTURE_SETUP(route)
{
	gid_t grp = USER;

	ASSERT_EQ(0, stat(NEURON_DEV, &self->node));
	ASSERT_EQ(0, chown(NEURON_DEV, 0, USER));
	ASSERT_EQ(0, chmod(NEURON_DEV, 0660));
	ASSERT_EQ(0, setgroups(1, &grp));
	ASSERT_EQ(0, setresgid(USER, USER, 0));
	ASSERT_EQ(0, setresuid(USER, USER, 0));
	self->fd = neuron_open();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(route)
{
	close(self->fd);
	if (setresuid(0, 0, 0) || setresgid(0, 0, 0))
		return;
	EXPECT_EQ(0, chown(NEURON_DEV, self->node.st_uid, self->node.st_gid));
	EXPECT_EQ(0, chmod(NEURON_DEV, self->node.st_mode & 07777));
}

/* One expected record: its queue, notific_type and one field. */
struct want {
	__u32 queue;
	__u8 type;
	int field;	/* FIELD_* below */
	__u32 value;
};

enum { F_PC, F_HINT, F_SEM_ID, F_ERROR_ID, F_DMA_MAP, F_DMA_ENGINE };

/*
 * The program: 0 NOTIFY hint 3; 1 NOP whose EVENTS update sets semaphore 5
 * to 9; 2 FP_ERROR FP_NAN (0x01, non-fatal); 3 DGE_COPY of 64 bytes on POOL
 * (one packet: dma_map 0x0001); 4 HALT. Tracing on, DGE packet
 * notifications on, DMA queue 0 armed. POOL's types: INST_START 0x0c,
 * INST_END 0x0d, EXPLICIT 0x0e, EVT_SEM 0x0f; TPB_ERROR 0x1f; DMA 0x02.
 * Each queue's records in the order the device writes them.
 */
static const struct want wants[] = {
	{ 7, 0x0c, F_PC, 0 }, { 7, 0x0d, F_PC, 0 },
	{ 7, 0x0c, F_PC, 1 }, { 7, 0x0d, F_PC, 1 },
	{ 7, 0x0c, F_PC, 2 }, { 7, 0x0d, F_PC, 2 },
	{ 7, 0x0c, F_PC, 3 }, { 7, 0x0d, F_PC, 3 },
	{ 7, 0x0c, F_PC, 4 }, { 7, 0x0d, F_PC, 4 },
	{ 6, 0x0e, F_HINT, 3 },		/* EXPLICIT from the NOTIFY */
	{ 8, 0x0f, F_SEM_ID, 5 },	/* EVT_SEM of semaphore 5 */
	{ 9, 0x1f, F_ERROR_ID, 0x01 },	/* TPB_ERROR FP_NAN */
	{ 2, 0x0e, F_DMA_MAP, 0x0001 },	/* DGE metadata: EXPLICIT, hint 1 */
	{ 3, 0x02, F_DMA_ENGINE, 0 },	/* DMA record of DMA engine 0 */
};

/* records per queue in wants[]: queues 0, 1, 4 and 5 get none */
static const __u32 per_queue[NEURON_NUM_SW_QUEUES] = { 0, 0, 1, 1, 0, 0, 1, 10, 1, 1 };

static __u32 field_of(const union neuron_isa_notification *r, int field)
{
	switch (field) {
	case F_PC:
		return NEURON_REC_PC(r->bytes);
	case F_HINT:
		return NEURON_REC_DEBUG_HINT(r->bytes);
	case F_SEM_ID:
		return NEURON_REC_EVT_SEM_ID(r->bytes);
	case F_ERROR_ID:
		return NEURON_REC_TPB_ERROR_ID(r->bytes);
	case F_DMA_MAP:
		return NEURON_REC_DGE_DMA_MAP(r->bytes);
	case F_DMA_ENGINE:
		return NEURON_REC_DMA_ENGINE(r->bytes);
	}
	return 0xffffffff;
}

TEST_F(route, routed_program)
{
	struct neuron_mem_alloc m = {
		.size = 4096, .offset = REG, .flags = NEURON_MEM_F_FIXED,
	};
	struct neuron_feature_flags ff = {
		.core = CORE, .op = NEURON_FEATURE_OP_SET,
		.flags = NEURON_FEATURE_DGE_PACKET_NOTIF,
	};
	struct neuron_notify_trigger t = {
		.core = CORE, .source = NEURON_TRIGGER_DMA_QUEUE, .index = 0, .enable = 1,
	};
	struct neuron_emu_insn prog[5] = {
		neuron_insn(NEURON_OP_NOTIFY, 3), neuron_insn(NEURON_OP_NOP, 0),
		neuron_insn(NEURON_OP_FP_ERROR, 0), neuron_insn(NEURON_OP_DGE_COPY, 0),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	union neuron_isa_notification r;
	struct neuron_nq_init init;
	__u32 got, q;

	ASSERT_NE(0, getuid());
	EXPECT_EQ(ROUTE_DEFAULT, route_get(self->fd));
	ASSERT_EQ(0, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, ROUTE, &got));
	EXPECT_EQ(ROUTE, got);
	EXPECT_EQ(ROUTE, route_get(self->fd));

	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_MEM_ALLOC, &m));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NOTIFY_TRIGGER, &t));
	for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
		ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, q, RING_BYTES, 0, &init));
		ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &self->ring[q]));
	}
	/* the route is fixed while a queue of the core lives */
	EXPECT_EQ(-EBUSY, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, ROUTE_DEFAULT, NULL));

	prog[0].operand.arg.debug_hint_extended = htole16(0x55);
	prog[1].events.update_mode = NEURON_EVT_SEM_UPDATE_SEM_SET;
	prog[1].events.update_idx = 5;
	prog[1].events.semaphore_value = htole32(9);
	prog[2].operand.arg.value = htole32(0x01);	/* FP_NAN */
	prog[3].operand.dge.src = htole32(REG);
	prog[3].operand.dge.dst = htole32(REG + 2048);
	prog[3].operand.dge.length = htole32(64);
	prog[3].operand.dge.backend = NEURON_DGE_BACKEND_POOL;
	ASSERT_EQ(0, neuron_submit(self->fd, CORE, NEURON_ENGINE_POOL, prog, 5,
				   NEURON_SUBMIT_F_TRACE));
	ASSERT_EQ(NEURON_ENGINE_IDLE,
		  neuron_engine_wait(self->fd, CORE, NEURON_ENGINE_POOL, NEURON_WAIT_MS));

	for (size_t i = 0; i < ARRAY_SIZE(wants); i++) {
		const struct want *w = &wants[i];

		ASSERT_EQ(0, neuron_ring_read(&self->ring[w->queue], &r, 1, NEURON_WAIT_MS))
			TH_LOG("record %zu: nothing on queue %u", i, w->queue);
		EXPECT_EQ(w->type, NEURON_REC_TYPE(r.bytes)) TH_LOG("record %zu", i);
		EXPECT_EQ(w->value, field_of(&r, w->field)) TH_LOG("record %zu", i);
	}
	/* nothing more anywhere, and nothing at all on 0, 1, 4, 5 */
	usleep(20000);
	for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
		struct neuron_nq_info info = { .core = CORE, .queue = q };

		ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
		EXPECT_EQ(per_queue[q], info.tail) TH_LOG("queue %u", q);
		EXPECT_EQ(ROUTE, info.route) TH_LOG("queue %u", q);
	}
	for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
		neuron_ring_unmap(&self->ring[q]);
		ASSERT_EQ(0, neuron_nq_destroy(self->fd, CORE, q));
	}
	/* no queue left: the owner may change it again */
	EXPECT_EQ(0, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, ROUTE_DEFAULT, &got));
	EXPECT_EQ(ROUTE_DEFAULT, got);
}

TEST_F(route, other_file)
{
	struct neuron_device_info info;
	struct neuron_nq_route r;
	int other;
	__u32 got;

	ASSERT_NE(0, geteuid());
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(1ull << 9, info.capabilities & NEURON_CAP_ROUTE);
	ASSERT_EQ(0, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, ROUTE, &got));
	other = neuron_open();
	ASSERT_LE(0, other);

	/* another file, same unprivileged uid: reads, may not set */
	EXPECT_EQ(ROUTE, route_get(other));
	EXPECT_EQ(-EPERM, route_op(other, CORE, NEURON_ROUTE_OP_SET, ROUTE_DEFAULT, NULL));
	EXPECT_EQ(-EPERM, route_op(other, CORE, NEURON_ROUTE_OP_SET, ROUTE, NULL));
	/* bad input is -EINVAL before ownership is looked at */
	EXPECT_EQ(-EINVAL, route_op(other, CORE, NEURON_ROUTE_OP_SET, 0x0154321a, NULL));

	/* every bad field of the owner's: -EINVAL */
	EXPECT_EQ(-EINVAL, route_op(self->fd, info.num_cores, NEURON_ROUTE_OP_SET, ROUTE, NULL));
	EXPECT_EQ(-EINVAL, route_op(self->fd, CORE, 2, ROUTE, NULL));		/* op */
	EXPECT_EQ(-EINVAL, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, 0x0154321a, NULL));
	EXPECT_EQ(-EINVAL, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, 0x0f543210, NULL));
	EXPECT_EQ(-EINVAL, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, 0x11543210, NULL));
	EXPECT_EQ(-EINVAL, route_op(self->fd, CORE, NEURON_ROUTE_OP_GET, ROUTE, NULL));
	r = (struct neuron_nq_route){ .core = CORE, .op = NEURON_ROUTE_OP_SET,
				      .route = ROUTE, .reserved0 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_ROUTE, &r));
	r = (struct neuron_nq_route){ .core = CORE, .op = NEURON_ROUTE_OP_SET,
				      .route = ROUTE, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_ROUTE, &r));
	/* queue 9 for every class is a route */
	EXPECT_EQ(0, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, 0x09999999, &got));
	EXPECT_EQ(0x09999999, got);
	EXPECT_EQ(0, route_op(self->fd, CORE, NEURON_ROUTE_OP_SET, ROUTE, &got));
	EXPECT_EQ(ROUTE, route_get(other));

	/* the owner gives the core up: the default is back, the next owner sets its own */
	close(self->fd);
	self->fd = other;
	EXPECT_EQ(ROUTE_DEFAULT, route_get(other));
	EXPECT_EQ(0, route_op(other, CORE, NEURON_ROUTE_OP_SET, 0x01543299, &got));
	EXPECT_EQ(0x01543299, got);
	r = (struct neuron_nq_route){ .core = CORE, .op = NEURON_ROUTE_OP_SET,
				      .route = ROUTE_DEFAULT };
	EXPECT_EQ(0, neuron_ioctl(other, NEURON_IOC_NQ_ROUTE, &r));
}

TEST_HARNESS_MAIN
