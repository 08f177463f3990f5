// SPDX-License-Identifier: GPL-2.0
/*
 * The NOTIFIC input buffer (docs/device-model.md#wrbuf): a flood that
 * outruns the ring writer.
 *
 * One engine of core 1 runs FLOOD_RECORDS NOTIFY instructions (no trace
 * brackets), each one EXPLICIT record with pc = its index, so the
 * program produces exactly FLOOD_RECORDS records, numbered 0..999, all
 * routed to queue 1 (the EXPLICIT class). The engine retires 64
 * instructions per step at one instant of virtual time; with the module
 * parameter wrbuf_drain_ns = 20000 the ring writer takes 20 us of virtual
 * time per record, so the 16-record buffer is full after the first step.
 * The ring holds 1024 records, more than the program makes, so the ring
 * itself never fills: every loss or stall is the input buffer's.
 *
 *   backpressure (default): the producer stalls, wr_buffer_full_1 edges
 *     are counted (> 0) and all 1000 records arrive, in order, none marked;
 *   drop policy (NEURON_NQ_F_WRBUF_DROP): records are lost, NQ_INFO's
 *     drop_count is exactly 1000 - received, every record after a gap (and
 *     only those) carries hardware_queue_overflow.
 */
#include <stdlib.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"

#define FLOOD_CORE	1
#define FLOOD_QUEUE	1		/* NEURON_ROUTE_DEFAULT: EXPLICIT -> 1 */
#define FLOOD_RECORDS	1000
#define FLOOD_RING	16384		/* 1024 records */
#define FLOOD_DRAIN_NS	"20000"
#define DRAIN_PARAM	"/sys/module/nnq/parameters/wrbuf_drain_ns"

static int write_param(const char *val)
{
	int fd = open(DRAIN_PARAM, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

/* sysfs wrbuf_counts: "core<c> full|drop" then ten per-queue counts. */
static int wrbuf_count(uint32_t core, const char *kind, uint32_t queue,
		       uint64_t *out)
{
	char buf[4096], key[32];
	char *line;

	if (neuron_sysfs_read("wrbuf_counts", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), "core%u %s ", core, kind);
	line = strstr(buf, key);
	if (!line)
		return -1;
	line += strlen(key);
	for (uint32_t q = 0; q <= queue; q++)
		*out = strtoull(line, &line, 10);
	return 0;
}

/* sysfs intr_counts: tpb_notific_intr_@bit edges of @core. */
static int intr_count(uint32_t core, unsigned int bit, uint64_t *out)
{
	char buf[4096], key[16];
	char *line;

	if (neuron_sysfs_read("intr_counts", buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), "core%u ", core);
	line = strstr(buf, key);
	if (!line)
		return -1;
	line += strlen(key);
	for (unsigned int i = 0; i <= bit; i++)
		*out = strtoull(line, &line, 10);
	return 0;
}

/*
 * Reads the file's queued events (O_NONBLOCK, 56-byte layout) and ORs
 * the wrbuf_full / wrbuf_drop bits of core @core's NOTIFIC events.
 */
static void event_bits(int fd, uint32_t core, uint32_t *full, uint32_t *drop,
		       uint32_t *causes)
{
	struct neuron_event ev[16];
	ssize_t n;

	*full = *drop = *causes = 0;
	while ((n = read(fd, ev, sizeof(ev))) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof(ev[0]); i++) {
			if (ev[i].edge != NEURON_EDGE_NOTIFIC || ev[i].core != core)
				continue;
			*full |= ev[i].wrbuf_full;
			*drop |= ev[i].wrbuf_drop;
			*causes |= ev[i].cause;
		}
	}
}

FIXTURE(wrbuf) {
	int fd;
	struct neuron_ring ring;
	struct neuron_emu_insn prog[FLOOD_RECORDS + 1];
	union neuron_isa_notification recs[FLOOD_RECORDS];
};

FIXTURE_SETUP(wrbuf)
{
	struct neuron_event_size es = { .size = sizeof(struct neuron_event) };

	self->fd = neuron_open_flags(O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_EVENT_SIZE, &es));
	ASSERT_EQ(64, es.kernel_size);
	for (int i = 0; i < FLOOD_RECORDS; i++)
		self->prog[i] = neuron_insn(NEURON_OP_NOTIFY, (uint16_t)(i & 0xff));
	self->prog[FLOOD_RECORDS] = neuron_insn(NEURON_OP_HALT, 0);
	ASSERT_EQ(0, write_param(FLOOD_DRAIN_NS));
}

FIXTURE_TEARDOWN(wrbuf)
{
	/* the next queue made on the core programs the writer back to 0 */
	write_param("0");
	if (neuron_nq_create(self->fd, FLOOD_CORE, 9, 4096, 0, NULL) == 0)
		neuron_nq_destroy(self->fd, FLOOD_CORE, 9);
	close(self->fd);
}

/*
 * Runs the flood with NQ_INIT @flags; drains until the engine is idle and
 * the ring stays quiet. Returns the records received in self->recs.
 */
static int flood(struct __test_metadata *_metadata, FIXTURE_DATA(wrbuf) *self,
		 uint32_t flags, struct neuron_nq_info *info)
{
	struct neuron_nq_init init;
	uint64_t quiet_until;
	int got = 0;

	EXPECT_EQ(0, neuron_nq_create(self->fd, FLOOD_CORE, FLOOD_QUEUE,
				      FLOOD_RING, flags, &init));
	EXPECT_EQ(0, neuron_ring_map(self->fd, &init, &self->ring));
	EXPECT_EQ(0, neuron_submit(self->fd, FLOOD_CORE, NEURON_ENGINE_ACT,
				   self->prog, FLOOD_RECORDS + 1, 0));
	EXPECT_EQ(NEURON_ENGINE_IDLE,
		  neuron_engine_wait(self->fd, FLOOD_CORE, NEURON_ENGINE_ACT,
				     NEURON_WAIT_MS));
	/* the buffer drains 20 us (virtual) per record after the engine stops */
	quiet_until = neuron_now_ms() + 500;
	while (got < FLOOD_RECORDS && neuron_now_ms() < quiet_until) {
		if (neuron_ring_pop(&self->ring, &self->recs[got])) {
			got++;
			quiet_until = neuron_now_ms() + 500;
		} else {
			usleep(200);
		}
	}
	memset(info, 0, sizeof(*info));
	info->core = FLOOD_CORE;
	info->queue = FLOOD_QUEUE;
	EXPECT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, info));
	neuron_ring_unmap(&self->ring);
	EXPECT_EQ(0, neuron_nq_destroy(self->fd, FLOOD_CORE, FLOOD_QUEUE));
	return got;
}

TEST_F(wrbuf, flood_backpressure_stalls_and_loses_nothing)
{
	uint64_t full0 = 0, full1 = 0, intr8_0 = 0, intr8_1 = 0;
	uint32_t evfull, evdrop, causes;
	struct neuron_nq_info info;
	int got;

	ASSERT_EQ(0, wrbuf_count(FLOOD_CORE, "full", FLOOD_QUEUE, &full0));
	ASSERT_EQ(0, intr_count(FLOOD_CORE, NEURON_NOTIFIC_INTR_WRBUF_FULL, &intr8_0));
	got = flood(_metadata, self, 0, &info);

	EXPECT_EQ(1000, got);
	EXPECT_EQ(1000, info.tail);
	EXPECT_EQ(0, info.drop_count);
	EXPECT_EQ(0, info.overflow_count);
	for (int i = 0; i < got; i++) {
		EXPECT_EQ(NEURON_ISA_NOTIFICATION_TYPE_ACT_EXPLICIT, neuron_rec_type(&self->recs[i]));
		EXPECT_EQ(i, (int)NEURON_REC_PC(self->recs[i].bytes));
		EXPECT_EQ(0, NEURON_REC_HW_OVF(self->recs[i].bytes));
		EXPECT_EQ(0, NEURON_REC_SW_OVF(self->recs[i].bytes));
		if ((int)NEURON_REC_PC(self->recs[i].bytes) != i)
			break;
	}
	ASSERT_EQ(0, wrbuf_count(FLOOD_CORE, "full", FLOOD_QUEUE, &full1));
	ASSERT_EQ(0, intr_count(FLOOD_CORE, NEURON_NOTIFIC_INTR_WRBUF_FULL, &intr8_1));
	TH_LOG("wr_buffer_full_1 edges %llu, intr_8 edges %llu",
	       (unsigned long long)(full1 - full0),
	       (unsigned long long)(intr8_1 - intr8_0));
	EXPECT_LT(0, full1 - full0);
	EXPECT_LT(0, intr8_1 - intr8_0);
	event_bits(self->fd, FLOOD_CORE, &evfull, &evdrop, &causes);
	EXPECT_EQ(1u << FLOOD_QUEUE, evfull);
	EXPECT_EQ(0, evdrop);
	EXPECT_NE(0, causes & (1u << NEURON_NOTIFIC_INTR_WRBUF_FULL));
	EXPECT_EQ(0, causes & (1u << NEURON_NOTIFIC_INTR_HW_OVERFLOW));
}

TEST_F(wrbuf, flood_drop_policy_counts_drops_and_marks_the_next_record)
{
	uint64_t drop0 = 0, drop1 = 0;
	uint32_t evfull, evdrop, causes;
	struct neuron_nq_info info;
	int got, gaps = 0, prev = -1;

	ASSERT_EQ(0, wrbuf_count(FLOOD_CORE, "drop", FLOOD_QUEUE, &drop0));
	got = flood(_metadata, self, NEURON_NQ_F_WRBUF_DROP, &info);

	TH_LOG("received %d of 1000, drop_count %llu", got,
	       (unsigned long long)info.drop_count);
	EXPECT_LT(0, got);
	EXPECT_GT(1000, got);
	EXPECT_EQ((uint32_t)got, info.tail);
	EXPECT_EQ(1000 - got, info.drop_count);
	EXPECT_EQ(0, info.overflow_count);
	for (int i = 0; i < got; i++) {
		int hint = (int)NEURON_REC_PC(self->recs[i].bytes);
		int after_gap = hint != prev + 1;

		EXPECT_LT(prev, hint);	/* in order, never duplicated */
		EXPECT_EQ(after_gap, NEURON_REC_HW_OVF(self->recs[i].bytes)) {
			TH_LOG("record %d (hint %d, previous %d)", i, hint, prev);
		}
		EXPECT_EQ(0, NEURON_REC_SW_OVF(self->recs[i].bytes));
		gaps += after_gap;
		prev = hint;
	}
	EXPECT_LT(0, gaps);
	ASSERT_EQ(0, wrbuf_count(FLOOD_CORE, "drop", FLOOD_QUEUE, &drop1));
	TH_LOG("gaps %d, wr_buffer_drop_1 edges %llu", gaps,
	       (unsigned long long)(drop1 - drop0));
	EXPECT_LT(0, drop1 - drop0);
	event_bits(self->fd, FLOOD_CORE, &evfull, &evdrop, &causes);
	EXPECT_EQ(1u << FLOOD_QUEUE, evdrop);
	EXPECT_EQ(0, evfull);
	EXPECT_NE(0, causes & (1u << NEURON_NOTIFIC_INTR_HW_OVERFLOW));
}

TEST_HARNESS_MAIN
