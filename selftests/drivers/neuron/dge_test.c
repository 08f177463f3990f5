// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of the DGE error-notification path (docs/hardware.md#dge, issue 4)
 * against the emulated device, through the driver's ioctls and mapped rings:
 *
 *  - the conformance table (dge_table, dge_table_sunda): one literal row
 *    per combination of direct/gather/scatter, each direction, suppress bit,
 *    idx_bound_is_err, NEURON_FEATURE_FLAGS bit 1, narrow/wide offsets,
 *    bc_reg 0/62/63, index in/out of bounds, length 1/8, addr == limit, POOL
 *    and the other engines, cayman and sunda, with the record (or none), the
 *    engine's end state and what the destination holds written out by hand
 *    (docs/decisions/0018-dge-index-path.md); FP_ERROR with a fatal error id;
 *  - the structural leg (docs/hardware.md#dge-structural, #dge-indirect,
 *    #dge-validity): SEQUENCER_FATAL, engine HALTED, no completion (timeout),
 *    SUBMIT -EIO, reset, a new program works;
 *  - "no backend", the wide-offset limit register; a copy leaving device memory or the file's allocations is
 *    refused by SUBMIT (-EACCES, docs/decisions/0005-tenancy.md);
 *  - NEURON_IOC_FEATURE_FLAGS: round trip and bad inputs;
 *  - generation sunda (docs/hardware.md#generations): no feature-flag register
 *    (-EOPNOTSUPP) and DGE_COPY is an illegal instruction.
 *
 * The binary reads the generation from NEURON_IOC_DEVICE_INFO and runs the
 * matching set of fixtures (main() below): the "sunda" fixture on a sunda
 * device, every other fixture on cayman. Tests that do not apply are not
 * registered at all, so the run has no SKIP lines.
 *
 * Expected values are written by hand from the hardware reference (record
 * offsets, error ids, DGE metadata and gates: docs/hardware.md#rec-tpb-error,
 * #rec-error-ids, #rec-dge-metadata, #dge-gating) and the device contract
 * (docs/device-model.md, "DGE copy"), never taken from the device code.
 *
 * How "no bytes moved" is proven. Device memory is not mapped to user
 * space, so the test reads it through the device's own data_crc: a traced
 * DGE_COPY's INST_START carries the CRC-16/CCITT-FALSE of its source bytes
 * and its INST_END that of the destination after the copy (0 if not
 * emitted). Each case program
 *   1. copies a 64-byte pattern X into the destination region D and a
 *      different pattern Y into the source region S. The patterns live in
 *      the program itself, after its HALT (never executed), i.e. in the
 *      engine's program area in device memory; the INST_START/INST_END
 *      CRCs of these two seed copies must equal CRC(X) and CRC(Y) computed
 *      here, which also proves the program area is where we copied from;
 *   2. runs the descriptor under test, S -> D;
 *   3. copies D to a scratch region T: this probe's INST_START CRC is the
 *      CRC of D's bytes after step 2: CRC(X) if nothing moved, CRC(Y) if
 *      the copy happened. CRC(X) != CRC(Y) (asserted), and the in-bounds
 *      cases of the same matrix see CRC(Y) through the same probe, so the
 *      probe demonstrably detects a copy. After a structural error the
 *      engine is halted; the probe then runs as the first program after
 *      the reset.
 */
#define _GNU_SOURCE
#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE		0
#define ENGINE		NEURON_ENGINE_POOL	/* the DGE's natural engine */

/*
 * Data regions: BAR4 offsets below mem_alloc_limit, each a page the test's
 * file allocates there (NEURON_MEM_F_FIXED): SUBMIT refuses a DGE_COPY
 * naming memory the file did not allocate (docs/decisions/0005-tenancy.md).
 */
#define REG_S		0x100000u	/* source */
#define REG_D		0x200000u	/* destination */
#define REG_T		0x300000u	/* probe scratch */
#define REG_BYTES	4096u
#define LEN		64u

/* $S registers holding the bound limits (the high half in reg + 1). */
#define SRC_REG		10
#define DST_REG		20

/* Feature values: bit 1 off with the other two bits on, and bit 1 alone. */
#define FEAT_OFF	(NEURON_FEATURE_DVE_PERF_MODE | NEURON_FEATURE_EVT_ACCEL_ADDR)
#define FEAT_ON		NEURON_FEATURE_DGE_PACKET_NOTIF

/*
 * BOUND_CHECK_REG byte (docs/hardware.md#dge-bounds-reg): bc_reg bits 0-5,
 * suppress bit 6, enabled bit 7
 */
#define BC(reg, sup)	((uint8_t)(0x80 | ((sup) ? 0x40 : 0) | (reg)))
#define BC_OFF		0x00
/*
 * DMA_INDIRECT_FLAGS byte (docs/hardware.md#dge-indirect): indirect_mode
 * bits 0-1, idx_bound_is_err bit 2
 */
#define IND(mode, ibe)	((uint8_t)((mode) | ((ibe) ? 0x04 : 0)))
#define MODE_GATHER	1	/* source indexed (contract: indirect_mode bit 0) */
#define MODE_SCATTER	2	/* destination indexed (bit 1) */

#define DIR_SRC		1
#define DIR_DST		2

/* metadata_lo info_kind values of the contract (notification.h, ours) */
#define KIND_OTHER	0
#define KIND_BAD_OPCODE	1
#define KIND_DGE_BOUNDS	5
#define KIND_DGE_INVALID 6

#define ERR_MEMORY	0x04
#define ERR_NONFATAL	0x09
#define ERR_FATAL	0x0a
#define TYPE_TPB_ERROR	0x1f

/* How long a completion that must not come is waited for (TCG guest). */
#define NO_COMPLETION_MS 500

/* ---- helpers ------------------------------------------------------------ */

/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xffff, no reflection, no xorout. */
static uint16_t crc16(const uint8_t *p, size_t n)
{
	uint16_t crc = 0xffff;

	while (n--) {
		crc ^= (uint16_t)*p++ << 8;
		for (int b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (uint16_t)(crc << 1) ^ 0x1021 : (uint16_t)(crc << 1);
	}
	return crc;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The test patterns X (goes to D first) and Y (goes to S). */
static void pattern(uint8_t *buf, unsigned int which)
{
	for (unsigned int i = 0; i < LEN; i++)
		buf[i] = which ? (uint8_t)(0x5a ^ (i * 29 + 7)) : (uint8_t)(0xc3 + i * 13);
}

static uint16_t crc_x(void)
{
	uint8_t b[LEN];

	pattern(b, 0);
	return crc16(b, LEN);
}

static uint16_t crc_y(void)
{
	uint8_t b[LEN];

	pattern(b, 1);
	return crc16(b, LEN);
}

static struct neuron_emu_insn reg_write(uint32_t idx, uint32_t value)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_REG_WRITE, 0);

	in.operand.arg.idx = htole32(idx);
	in.operand.arg.value = htole32(value);
	return in;
}

static struct neuron_emu_insn notify(uint16_t hint, uint16_t ext)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_NOTIFY, hint);

	in.operand.arg.debug_hint_extended = htole16(ext);
	return in;
}

/*
 * A DGE_COPY built from raw bytes (<linux/neuron_isa.h>: src @0, dst @4, length @8,
 * bc_src @12, bc_dst @13, indirect flags @14, backend @15), so the bit
 * positions of the hardware's one-byte structs are the ones written above.
 */
static struct neuron_emu_insn dge(uint32_t src, uint32_t dst, uint32_t len,
				  uint8_t bc_src, uint8_t bc_dst, uint8_t ind,
				  uint8_t backend)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_DGE_COPY, 0);

	put_le32(&in.operand.raw[0], src);
	put_le32(&in.operand.raw[4], dst);
	put_le32(&in.operand.raw[8], len);
	in.operand.raw[12] = bc_src;
	in.operand.raw[13] = bc_dst;
	in.operand.raw[14] = ind;
	in.operand.raw[15] = backend;
	return in;
}

/* A plain in-bounds copy, bounds checks off. */
static struct neuron_emu_insn copy(uint32_t src, uint32_t dst, uint32_t len)
{
	return dge(src, dst, len, BC_OFF, BC_OFF, 0, NEURON_DGE_BACKEND_POOL);
}

/* @in with the mode byte insn.flags = @flags (NEURON_DGE_F_*, emu_isa.h) */
static struct neuron_emu_insn with_flags(struct neuron_emu_insn in, uint8_t flags)
{
	in.flags = flags;
	return in;
}

/* ---- the environment: device, its info, the four rings ------------------ */

enum { Q_TRACE, Q_EXPL, Q_ERR, Q_DGE, NQ };
static const __u32 hw_queue[NQ] = { 0, 1, 3, 5 };	/* the default ROUTE */
static const __u32 ring_bytes[NQ] = { 16384, 4096, 4096, 4096 };

struct dge_env {
	int fd;
	struct neuron_device_info info;
	struct neuron_ring ring[NQ];
};

#define MAXREC 128
struct rec {
	union neuron_isa_notification r;
	uint32_t pos;		/* free-running ring position it was read at */
	uint32_t entries;
};

struct collected {
	struct rec q[NQ][MAXREC];
	int n[NQ];
};

static void env_setup(struct __test_metadata *_metadata, struct dge_env *env)
{
	struct neuron_engine_id id = { .core = CORE };
	struct neuron_nq_init init;
	uint8_t digits[] = "123456789";

	/* the CRC the whole "no bytes moved" argument rests on (check value) */
	ASSERT_EQ(0x29b1, crc16(digits, 9));
	ASSERT_NE(crc_x(), crc_y());

	env->fd = neuron_open();
	ASSERT_LE(0, env->fd) TH_LOG("open %s: %s", NEURON_DEV, strerror(errno));
	ASSERT_EQ(0, neuron_ioctl(env->fd, NEURON_IOC_DEVICE_INFO, &env->info));
	ASSERT_LE(REG_T + REG_BYTES, env->info.mem_alloc_limit);
	for (uint32_t r = REG_S; r <= REG_T; r += REG_D - REG_S) {
		struct neuron_mem_alloc m = {
			.size = REG_BYTES, .offset = r, .flags = NEURON_MEM_F_FIXED,
		};

		ASSERT_EQ(0, neuron_ioctl(env->fd, NEURON_IOC_MEM_ALLOC, &m))
			TH_LOG("device memory at %#x", r);
	}
	/* a previous test's failure must not leave an engine halted */
	for (id.engine = 0; id.engine < NEURON_ENGINES_PER_CORE; id.engine++) {
		ASSERT_EQ(0, neuron_ioctl(env->fd, NEURON_IOC_ENGINE_RESET, &id));
	}
	for (int q = 0; q < NQ; q++) {
		ASSERT_EQ(0, neuron_nq_create(env->fd, CORE, hw_queue[q], ring_bytes[q],
					      0, &init)) TH_LOG("queue %u", hw_queue[q]);
		ASSERT_EQ(0, neuron_ring_map(env->fd, &init, &env->ring[q]));
	}
}

static void env_teardown(struct dge_env *env)
{
	for (int q = 0; q < NQ; q++)
		if (env->ring[q].slots)
			neuron_ring_unmap(&env->ring[q]);
	close(env->fd);
}

static int set_features(int fd, __u32 core, __u32 flags)
{
	struct neuron_feature_flags ff = {
		.core = core, .op = NEURON_FEATURE_OP_SET, .flags = flags,
	};

	return neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff);
}

/* GET into *flags; returns 0 or -errno */
static int get_features(int fd, __u32 core, __u32 *flags)
{
	struct neuron_feature_flags ff = { .core = core, .op = NEURON_FEATURE_OP_GET };
	int ret = neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff);

	*flags = ff.flags;
	return ret;
}

/*
 * BAR4 offset of an engine's program area. This is the driver's layout
 * (kernel/neuron.h: prog_base = mem_size - cores * 5 * 64 KiB, core c engine
 * e at prog_base + (c * 5 + e) * 64 KiB), not UAPI: every use is checked by
 * the seed copies' CRCs, so a change of layout fails loudly here. The
 * seeds read only the submitted program's own instructions, which SUBMIT
 * allows (a DGE_COPY source inside the program itself).
 */
static uint32_t prog_area(const struct dge_env *env, unsigned int core,
			  unsigned int engine)
{
	uint64_t base = env->info.mem_size -
			(uint64_t)env->info.num_cores * NEURON_ENGINES_PER_CORE * 0x10000;

	return (uint32_t)(base + (uint64_t)(core * NEURON_ENGINES_PER_CORE + engine) * 0x10000);
}

/* Reads every record there is; the engine must be idle or halted. */
static void collect(struct dge_env *env, struct collected *c)
{
	memset(c->n, 0, sizeof(c->n));
	for (int q = 0; q < NQ; q++) {
		struct neuron_ring *r = &env->ring[q];
		struct rec *x;

		while (c->n[q] < MAXREC) {
			x = &c->q[q][c->n[q]];
			x->pos = r->head;
			x->entries = r->entries;
			if (!neuron_ring_pop(r, &x->r))
				break;
			c->n[q]++;
		}
	}
}

/* Submits with tracing, waits for IDLE or HALTED, collects the records. */
static int run(struct __test_metadata *_metadata, struct dge_env *env,
	       unsigned int engine, const struct neuron_emu_insn *prog, __u32 n,
	       struct collected *c, struct neuron_engine_status *st)
{
	int state, ret;

	ret = neuron_submit(env->fd, CORE, engine, prog, n, NEURON_SUBMIT_F_TRACE);
	EXPECT_EQ(0, ret) TH_LOG("SUBMIT: %s", strerror(-ret));
	if (ret)
		return ret;
	state = neuron_engine_wait(env->fd, CORE, engine, NEURON_WAIT_MS);
	EXPECT_LE(0, state) TH_LOG("engine %u did not stop", engine);
	collect(env, c);
	EXPECT_EQ(0, neuron_engine_status(env->fd, CORE, engine, st));
	return state;
}

static uint8_t header_byte(uint8_t type, const struct rec *x)
{
	return (uint8_t)(type | (neuron_expected_phase(x->pos, x->entries) << 7));
}

/*
 * A TPB_ERROR record, byte by byte (docs/hardware.md#rec-tpb-error,
 * #rec-seq-metadata): error_id @0, metadata_lo @1..2 {info_kind:4, bc_reg:6,
 * direction:2}, header @3 (notific_type TPB_ERROR 0x1f), metadata_hi @4..7
 * sequencer arm {block_id:4, program_counter:12, info:8}, timestamp @8.
 */
static void check_tpb_error(struct __test_metadata *_metadata, const struct rec *x,
			    uint8_t error_id, unsigned int kind, unsigned int bc_reg,
			    unsigned int dir, unsigned int engine, unsigned int pc,
			    unsigned int info, const char *what)
{
	const struct neuron_isa_tpb_error_notification *e = &x->r.tpb_error;
	uint16_t lo = (uint16_t)(kind | bc_reg << 4 | dir << 10);
	uint32_t hi = engine | pc << 4 | info << 16;
	uint8_t want[8] = {
		error_id, (uint8_t)lo, (uint8_t)(lo >> 8), header_byte(TYPE_TPB_ERROR, x),
		(uint8_t)hi, (uint8_t)(hi >> 8), (uint8_t)(hi >> 16), (uint8_t)(hi >> 24),
	};

	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(want[i], x->r.bytes[i])
			TH_LOG("%s: TPB_ERROR byte %d is 0x%02x, want 0x%02x",
			       what, i, x->r.bytes[i], want[i]);
	}
	/* the same through the shared header's bitfields */
	EXPECT_EQ(error_id, e->error_id) TH_LOG("%s", what);
	EXPECT_EQ(TYPE_TPB_ERROR, (unsigned int)e->header.notific_type) TH_LOG("%s", what);
	EXPECT_EQ(0, (unsigned int)e->header.software_queue_overflow);
	EXPECT_EQ(0, (unsigned int)e->header.hardware_queue_overflow);
	EXPECT_EQ(kind, (unsigned int)e->metadata_lo.sequencer.info_kind) TH_LOG("%s", what);
	EXPECT_EQ(bc_reg, (unsigned int)e->metadata_lo.sequencer.bc_reg) TH_LOG("%s", what);
	EXPECT_EQ(dir, (unsigned int)e->metadata_lo.sequencer.direction) TH_LOG("%s", what);
	EXPECT_EQ(engine, (unsigned int)e->metadata_hi.sequencer.block_id) TH_LOG("%s", what);
	EXPECT_EQ(pc, (unsigned int)e->metadata_hi.sequencer.program_counter) TH_LOG("%s", what);
	EXPECT_EQ(info, (unsigned int)e->metadata_hi.sequencer.info) TH_LOG("%s", what);
	EXPECT_NE(0, get_le64(&x->r.bytes[8])) TH_LOG("%s: timestamp @8", what);
	EXPECT_EQ(get_le64(&x->r.bytes[8]), e->timestamp);
}

/*
 * A DGE_METADATA record (docs/hardware.md#rec-dge-metadata) for a successful
 * copy at @pc: bits 0-19 program_counter, 20-23 debug_hint = METADATA_TYPE_DGE
 * 0x1, header @3 with the engine's EXPLICIT type, dma_map @4 = 0x0001,
 * num_packets:12 @6 = 1 (contract: a copy of at most 64 bytes is one packet
 * on DMA engine 0, docs/device-model.md#dma-engines), timestamp @8.
 */
static void check_dge_metadata(struct __test_metadata *_metadata, const struct rec *x,
			       unsigned int engine, unsigned int pc, const char *what)
{
	uint8_t type = (uint8_t)(0x04 + 4 * engine + 2);	/* EXPLICIT */
	uint8_t want[8] = {
		(uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(((pc >> 16) & 0xf) | 0x1 << 4),
		header_byte(type, x), 0x01, 0x00, 0x01, 0x00,
	};

	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(want[i], x->r.bytes[i])
			TH_LOG("%s: DGE_METADATA byte %d is 0x%02x, want 0x%02x",
			       what, i, x->r.bytes[i], want[i]);
	}
	EXPECT_EQ(pc, (unsigned int)x->r.dge_metadata.program_counter) TH_LOG("%s", what);
	EXPECT_EQ(NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE, (unsigned int)x->r.dge_metadata.debug_hint);
	EXPECT_EQ(1, (unsigned int)x->r.dge_metadata.num_packets);
	EXPECT_EQ(0, (unsigned int)x->r.dge_metadata.infer_program_counter);
	EXPECT_EQ(0, (unsigned int)x->r.dge_metadata.dma_group_id);
	EXPECT_NE(0, get_le64(&x->r.bytes[8])) TH_LOG("%s: timestamp @8", what);
}

/*
 * The trace queue holds INST_START/INST_END for pcs 0..npc-1 in order, with
 * data_crc start[pc]/end[pc] (ANY: not checked). Failures name the record.
 */
#define ANY (-1)
static void check_trace(struct __test_metadata *_metadata, const struct collected *c,
			unsigned int engine, int npc, const int *start,
			const int *end, const struct neuron_engine_status *st,
			const char *what)
{
	uint8_t t_start = (uint8_t)(0x04 + 4 * engine);

	ASSERT_EQ(2 * npc, c->n[Q_TRACE]) TH_LOG("%s: trace records", what);
	for (int i = 0; i < 2 * npc; i++) {
		const struct rec *x = &c->q[Q_TRACE][i];
		int pc = i / 2, want;

		EXPECT_EQ(t_start + (i & 1), neuron_rec_type(&x->r))
			TH_LOG("%s: trace record %d", what, i);
		EXPECT_EQ(pc, (int)x->r.trace.program_counter) TH_LOG("%s: record %d", what, i);
		want = (i & 1) ? end[pc] : start[pc];
		if (want != ANY) {
			EXPECT_EQ(want, x->r.trace.data_crc)
				TH_LOG("%s: data_crc of %s pc %d", what,
				       (i & 1) ? "INST_END" : "INST_START", pc);
		}
		EXPECT_EQ((uint16_t)st->soft_reset_counter, x->r.trace.soft_reset_counter);
	}
}

/* INST_START.ts <= rec.ts <= INST_END.ts of the instruction at pc */
static void check_within(struct __test_metadata *_metadata, const struct collected *c,
			 int pc, const struct rec *x, const char *what)
{
	uint64_t ts = get_le64(&x->r.bytes[8]);

	if (c->n[Q_TRACE] < 2 * pc + 2)
		return;
	EXPECT_LE(c->q[Q_TRACE][2 * pc].r.trace.timestamp, ts) TH_LOG("%s", what);
	EXPECT_LE(ts, c->q[Q_TRACE][2 * pc + 1].r.trace.timestamp) TH_LOG("%s", what);
}

/* Resets a halted engine: IDLE at pc 0, LAST_ERROR kept. */
static void reset_engine(struct __test_metadata *_metadata, struct dge_env *env,
			 unsigned int engine)
{
	struct neuron_engine_id id = { .core = CORE, .engine = engine };
	struct neuron_engine_status st;

	ASSERT_EQ(0, neuron_ioctl(env->fd, NEURON_IOC_ENGINE_RESET, &id));
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, engine, &st));
	EXPECT_EQ(NEURON_ENGINE_IDLE, st.state);
	EXPECT_EQ(0, st.pc);
	EXPECT_EQ(ERR_FATAL, st.last_error);	/* survives the reset (contract) */
}

/*
 * After a reset: the first program probes D (D -> T, traced) and notifies.
 * Its INST_START CRC must be @d_crc. Proves the engine works again and what
 * D holds.
 */
static void probe_after_reset(struct __test_metadata *_metadata, struct dge_env *env,
			      unsigned int engine, uint16_t d_crc, const char *what)
{
	struct neuron_emu_insn prog[3] = {
		copy(REG_D, REG_T, LEN), notify(7, 0xbeef), neuron_insn(NEURON_OP_HALT, 0),
	};
	const int start[3] = { d_crc, 0, 0 }, end[3] = { d_crc, 0, 0 };
	struct neuron_engine_status before, st;
	static struct collected c;

	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, engine, &before));
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, engine, prog, 3, &c, &st))
		TH_LOG("%s: the program after the reset", what);
	EXPECT_EQ(3, st.pc);
	EXPECT_EQ(before.soft_reset_counter + 1, st.soft_reset_counter);
	check_trace(_metadata, &c, engine, 3, start, end, &st, what);
	ASSERT_EQ(1, c.n[Q_EXPL]) TH_LOG("%s: completion after the reset", what);
	EXPECT_EQ(1, (int)c.q[Q_EXPL][0].r.explicit_notif.program_counter);
	EXPECT_EQ(0xbeef, c.q[Q_EXPL][0].r.explicit_notif.debug_hint_extended);
	EXPECT_EQ(0, c.n[Q_ERR]);
}

/* ---- the case program ---------------------------------------------------- */

enum {
	PC_SRC_LO, PC_SRC_HI, PC_DST_LO, PC_DST_HI,
	PC_SEED_X,	/* X -> D */
	PC_SEED_Y,	/* Y -> S */
	PC_TEST,	/* the descriptor under test, S -> D */
	PC_PROBE,	/* D -> T: INST_START CRC = CRC(D) */
	PC_NOTIFY,	/* the completion */
	PC_HALT,
	PC_DATA_X,	/* 2 slots: pattern X */
	PC_DATA_Y = PC_DATA_X + 2,
	PROG_LEN = PC_DATA_Y + 2,
};

static void build_case(const struct dge_env *env, unsigned int engine,
		       struct neuron_emu_insn *p, uint32_t src_limit,
		       uint32_t dst_limit, struct neuron_emu_insn test)
{
	uint32_t area = prog_area(env, CORE, engine);

	p[PC_SRC_LO] = reg_write(SRC_REG, src_limit);
	p[PC_SRC_HI] = reg_write(SRC_REG + 1, 0);
	p[PC_DST_LO] = reg_write(DST_REG, dst_limit);
	p[PC_DST_HI] = reg_write(DST_REG + 1, 0);
	p[PC_SEED_X] = copy(area + PC_DATA_X * NEURON_EMU_INSN_BYTES, REG_D, LEN);
	p[PC_SEED_Y] = copy(area + PC_DATA_Y * NEURON_EMU_INSN_BYTES, REG_S, LEN);
	p[PC_TEST] = test;
	p[PC_PROBE] = copy(REG_D, REG_T, LEN);
	p[PC_NOTIFY] = notify(5, 0x0d9e);
	p[PC_HALT] = neuron_insn(NEURON_OP_HALT, 0);
	pattern((uint8_t *)&p[PC_DATA_X], 0);
	pattern((uint8_t *)&p[PC_DATA_Y], 1);
}

/*
 * A case program whose descriptor at PC_TEST is structurally invalid
 * (HandleIllegalInstr, docs/hardware.md#dge-structural): rejected at decode,
 * before its INST_START; one SEQUENCER_FATAL record; HALTED with PC on it and
 * LAST_ERROR 0x0a; no completion; SUBMIT -EIO; then reset, and the first new
 * program finds D still holding X (nothing moved) and completes.
 */
static void check_fatal(struct __test_metadata *_metadata, struct dge_env *env,
			unsigned int engine, const struct collected *c, int state,
			const struct neuron_engine_status *st, unsigned int features,
			unsigned int info, unsigned int bc_reg, unsigned int dir,
			const struct neuron_emu_insn *prog, const char *what)
{
	int start[PC_HALT + 1] = { 0 }, end[PC_HALT + 1] = { 0 };
	int nmeta, i;

	start[PC_SEED_X] = end[PC_SEED_X] = crc_x();
	start[PC_SEED_Y] = end[PC_SEED_Y] = crc_y();
	ASSERT_EQ(NEURON_ENGINE_HALTED, state) TH_LOG("%s", what);
	EXPECT_EQ(PC_TEST, st->pc) TH_LOG("%s: PC left on the bad instruction", what);
	EXPECT_EQ(ERR_FATAL, st->last_error) TH_LOG("%s", what);
	check_trace(_metadata, c, engine, PC_TEST, start, end, st, what);
	ASSERT_EQ(1, c->n[Q_ERR]) TH_LOG("%s: errors queue", what);
	check_tpb_error(_metadata, &c->q[Q_ERR][0], ERR_FATAL, KIND_DGE_INVALID,
			bc_reg, dir, engine, PC_TEST, info, what);
	if (c->n[Q_TRACE] == 2 * PC_TEST)	/* after the last traced instruction */
		EXPECT_LE(c->q[Q_TRACE][2 * PC_TEST - 1].r.trace.timestamp,
			  c->q[Q_ERR][0].r.tpb_error.timestamp) TH_LOG("%s", what);
	/* no completion; on queue 5 only the two seed copies' metadata */
	EXPECT_EQ(0, c->n[Q_EXPL]) TH_LOG("%s: a completion arrived", what);
	nmeta = features & NEURON_FEATURE_DGE_PACKET_NOTIF ? 2 : 0;
	ASSERT_EQ(nmeta, c->n[Q_DGE]) TH_LOG("%s: DGE queue", what);
	for (i = 0; i < nmeta; i++)
		check_dge_metadata(_metadata, &c->q[Q_DGE][i], engine, PC_SEED_X + i, what);
	EXPECT_EQ(-EIO, neuron_submit(env->fd, CORE, engine, prog, PROG_LEN, 0));
	reset_engine(_metadata, env, engine);
	probe_after_reset(_metadata, env, engine, crc_x(), what);
}

/* ---- the DGE conformance table -------------------------------------------- */

/*
 * One row per case: the descriptor, the registers and flags it runs under,
 * and what must happen. The expected columns are written out by hand from
 * docs/hardware.md#dge (detection, the two gates, the validity rules,
 * idx_bound_is_err), docs/decisions/0018-dge-index-path.md (the index policy,
 * the last-byte compare, wide-offset mode, POOL only) and docs/device-model.md
 * "DGE copy" (record fields); nothing in a row is derived by code. The
 * runner only builds the programs from the input columns and compares what
 * arrives with the expected ones.
 *
 * Each cayman row runs three programs on core 0:
 *  1. seed, on POOL: X -> D, Y -> S (the patterns in the seed program);
 *  2. the test program on the row's engine, traced: pc 0..3 REG_WRITE the
 *     limits $S[src reg], $S[src reg + 1], $S[dst reg], $S[dst reg + 1] (a
 *     NOP for a direction whose check is off, and for $S[64]), pc 4 the
 *     descriptor S -> D, pc 5 NOTIFY (the completion), pc 6 HALT, pc 7 the
 *     index table (two u32 indices), which an indirect descriptor names;
 *  3. probe, on POOL (after ENGINE_RESET of a halted test engine): D -> T;
 *     its INST_START data_crc is the CRC of D[0..64), compared with the CRC
 *     of the row's expected contents of D.
 * A sunda row runs only the test program: DGE_COPY is illegal there on
 * every engine, so nothing could seed or probe.
 *
 * Record columns (docs/hardware.md#rec-tpb-error, #rec-seq-metadata): id =
 * error_id, kind = metadata_lo.info_kind, bc = metadata_lo.bc_reg, dir =
 * metadata_lo.direction (every failing direction), info =
 * metadata_hi.info (for DGE bounds: bits 1..0 the failing directions the
 * record reports, bits 3..2 those that failed on an index; for a structural
 * error the failing bits; for an illegal instruction the opcode 0x0b);
 * block_id is the row's engine and program_counter 4.
 */
enum { G_CAYMAN, G_SUNDA };
enum { GRP_DIRECT, GRP_OFFSETS, GRP_GATHER, GRP_SCATTER, GRP_ENGINE };
enum { D_NA, D_X, D_Y1, D_Y8, D_SWAP };	/* D afterwards, see row_d_crc() */

struct dge_row {
	const char *name;
	uint8_t gen, group, engine;
	uint8_t feat;		/* FEATURE_FLAGS (cayman) */
	uint8_t flags;		/* insn.flags: bit 0 wide offsets, bits 3..1 log2(element) */
	uint8_t ind;		/* DMA_INDIRECT_FLAGS: mode bits 1..0, idx_bound_is_err bit 2 */
	uint8_t bc_src, bc_dst;	/* BOUND_CHECK_REG bytes */
	uint32_t lim[4];	/* $S[src reg], $S[src reg + 1], $S[dst reg], $S[dst reg + 1] */
	uint32_t len;
	uint32_t idx[2];	/* the index table */
	/* expected */
	uint8_t state;		/* the test engine at the end */
	uint8_t ntrace;		/* trace records of the test program */
	uint8_t err;		/* records on the errors queue (3): 0 or 1 */
	uint8_t id, kind, bc, dir, info;
	uint8_t meta;		/* DGE_METADATA records of the test program (queue 5) */
	uint8_t d;		/* what D holds afterwards */
};

/*
 * The outcome classes, each a list of literal expected columns:
 * copied (ran to HALT, 7 instructions traced, no error), skipped silently
 * (a direct direction's OOB under a closed gate), a NONFATAL bounds record
 * (report and continue), an index bound error (SEQUENCER_FATAL during the
 * operation: INST_START of pc 4 traced, then halted), a structural error and
 * an illegal instruction (both at decode: pcs 0..3 traced, then halted), a
 * MEMORY_ERROR (an element leaves its window; continue).
 */
#define COPIED(m, dd)	.state = NEURON_ENGINE_IDLE, .ntrace = 14, .err = 0, .meta = m, .d = dd
#define SKIPPED		.state = NEURON_ENGINE_IDLE, .ntrace = 14, .err = 0, .meta = 0, .d = D_X
#define NONFATAL(b, dr, in)	.state = NEURON_ENGINE_IDLE, .ntrace = 14, .err = 1,	\
	.id = 0x09, .kind = 5, .bc = b, .dir = dr, .info = in, .meta = 0, .d = D_X
#define INDEX_FATAL(b, dr, in)	.state = NEURON_ENGINE_HALTED, .ntrace = 9, .err = 1,	\
	.id = 0x0a, .kind = 5, .bc = b, .dir = dr, .info = in, .meta = 0, .d = D_X
#define INVALID(b, dr, in)	.state = NEURON_ENGINE_HALTED, .ntrace = 8, .err = 1,	\
	.id = 0x0a, .kind = 6, .bc = b, .dir = dr, .info = in, .meta = 0, .d = D_X
#define ILLEGAL(dd)	.state = NEURON_ENGINE_HALTED, .ntrace = 8, .err = 1,		\
	.id = 0x0a, .kind = 1, .bc = 0, .dir = 0, .info = 0x0b, .meta = 0, .d = dd
#define MEMERR		.state = NEURON_ENGINE_IDLE, .ntrace = 14, .err = 1,		\
	.id = 0x04, .kind = 0, .bc = 0, .dir = 0, .info = 0, .meta = 0, .d = D_X

/* S is REG_S 0x100000, D is REG_D 0x200000; a len-8 copy's last bytes are +7 */
#define POOL	NEURON_ENGINE_POOL
#define DIRECT(g)	.gen = G_CAYMAN, .group = g, .engine = POOL
#define GATHER4		.flags = 0x04, .ind = 0x01, .len = 8, .idx = { 1, 0 }	/* 2 x 4 B */
#define SCATTER4	.flags = 0x04, .ind = 0x02, .len = 8, .idx = { 1, 0 }

static const struct dge_row dge_table[] = {
	/* ---- direct descriptors: the two gates, both directions, lengths */
	{ "direct in bounds, bit 1", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 8,
	  COPIED(1, D_Y8) },
	{ "direct in bounds, bit 1 clear", DIRECT(GRP_DIRECT), .feat = FEAT_OFF,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 8,
	  COPIED(0, D_Y8) },
	{ "direct src OOB, bit 1", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200007, 0 }, .len = 8,
	  NONFATAL(10, 1, 1) },
	{ "direct src OOB, bit 1 clear", DIRECT(GRP_DIRECT), .feat = FEAT_OFF,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200007, 0 }, .len = 8,
	  SKIPPED },
	{ "direct src OOB suppressed, bit 1", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200007, 0 }, .len = 8,
	  SKIPPED },
	{ "direct dst OOB, bit 1", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200006, 0 }, .len = 8,
	  NONFATAL(20, 2, 2) },
	{ "direct dst OOB suppressed, bit 1 clear", DIRECT(GRP_DIRECT), .feat = FEAT_OFF,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 1), .lim = { 0x100007, 0, 0x200006, 0 }, .len = 8,
	  SKIPPED },
	{ "direct both OOB: the record names both", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200006, 0 }, .len = 8,
	  NONFATAL(10, 3, 3) },
	{ "direct both OOB, src suppressed", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200006, 0 }, .len = 8,
	  NONFATAL(10, 3, 2) },
	{ "direct both OOB, dst suppressed", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 1), .lim = { 0x100006, 0, 0x200006, 0 }, .len = 8,
	  NONFATAL(10, 3, 1) },
	{ "direct both OOB, both suppressed", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 1), .lim = { 0x100006, 0, 0x200006, 0 }, .len = 8,
	  SKIPPED },
	{ "direct both OOB, bit 1 clear", DIRECT(GRP_DIRECT), .feat = FEAT_OFF,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200006, 0 }, .len = 8,
	  SKIPPED },
	{ "direct, idx_bound_is_err, src OOB suppressed: no index, no error", DIRECT(GRP_DIRECT),
	  .feat = FEAT_ON, .ind = 0x04,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200007, 0 }, .len = 8,
	  SKIPPED },
	{ "direct, idx_bound_is_err, src OOB", DIRECT(GRP_DIRECT), .feat = FEAT_ON, .ind = 0x04,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200007, 0 }, .len = 8,
	  NONFATAL(10, 1, 1) },
	{ "addr == limit, length 1: passes", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100000, 0, 0x200000, 0 }, .len = 1,
	  COPIED(1, D_Y1) },
	{ "addr == limit, length 8: the last byte is above", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200000, 0 }, .len = 8,
	  NONFATAL(20, 2, 2) },
	{ "length 1, addr = limit + 1", DIRECT(GRP_DIRECT), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100000, 0, 0x1fffff, 0 }, .len = 1,
	  NONFATAL(20, 2, 2) },

	/* ---- narrow and wide offsets; bc_reg 0, 62, 63 */
	{ "narrow: a stale $S[r + 1] is not read", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200006, 1 }, .len = 8,
	  NONFATAL(20, 2, 2) },
	{ "wide: $S[r + 1] is the high half", DIRECT(GRP_OFFSETS), .feat = FEAT_ON, .flags = 0x01,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200006, 1 }, .len = 8,
	  COPIED(1, D_Y8) },
	{ "wide, high half 0", DIRECT(GRP_OFFSETS), .feat = FEAT_ON, .flags = 0x01,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200006, 0 }, .len = 8,
	  NONFATAL(20, 2, 2) },
	{ "narrow, bc_reg 63 is valid", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .bc_src = BC_OFF, .bc_dst = BC(63, 0), .lim = { 0, 0, 0x200007, 0 }, .len = 8,
	  COPIED(1, D_Y8) },
	{ "narrow, bc_reg 63, OOB", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .bc_src = BC_OFF, .bc_dst = BC(63, 0), .lim = { 0, 0, 0x200006, 0 }, .len = 8,
	  NONFATAL(63, 2, 2) },
	{ "wide, bc_reg 63: no $S[64] (structural)", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .flags = 0x01,
	  .bc_src = BC_OFF, .bc_dst = BC(63, 0), .lim = { 0, 0, 0x200007, 0 }, .len = 8,
	  INVALID(63, 2, 2) },
	{ "wide, bc_reg 62: $S[62] | $S[63] << 32", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .flags = 0x01,
	  .bc_src = BC_OFF, .bc_dst = BC(62, 0), .lim = { 0, 0, 0x200006, 1 }, .len = 8,
	  COPIED(1, D_Y8) },
	{ "narrow, bc_reg 62, stale $S[63]", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .bc_src = BC_OFF, .bc_dst = BC(62, 0), .lim = { 0, 0, 0x200006, 1 }, .len = 8,
	  NONFATAL(62, 2, 2) },
	{ "bc_reg 0, in bounds", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .bc_src = BC(0, 0), .bc_dst = BC_OFF, .lim = { 0x100007, 0, 0, 0 }, .len = 8,
	  COPIED(1, D_Y8) },
	{ "bc_reg 0, OOB", DIRECT(GRP_OFFSETS), .feat = FEAT_ON,
	  .bc_src = BC(0, 0), .bc_dst = BC_OFF, .lim = { 0x100006, 0, 0, 0 }, .len = 8,
	  NONFATAL(0, 1, 1) },

	/* ---- gather: 4-byte elements, indices {1, 0}, the src bound bounds the indices */
	{ "gather, indices in bounds (index == limit)", DIRECT(GRP_GATHER), .feat = FEAT_ON, GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 1, 0, 0x200007, 0 },
	  COPIED(1, D_SWAP) },
	{ "gather in bounds, bit 1 clear", DIRECT(GRP_GATHER), .feat = FEAT_OFF, GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 1, 0, 0x200007, 0 },
	  COPIED(0, D_SWAP) },
	{ "gather index OOB, bit 1: reported", DIRECT(GRP_GATHER), .feat = FEAT_ON, GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  NONFATAL(10, 1, 5) },
	{ "gather index OOB, bit 1 clear: never silent", DIRECT(GRP_GATHER), .feat = FEAT_OFF,
	  GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  INDEX_FATAL(10, 1, 5) },
	{ "gather index OOB, idx_bound_is_err, bit 1", DIRECT(GRP_GATHER), .feat = FEAT_ON,
	  GATHER4, .ind = 0x05,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  INDEX_FATAL(10, 1, 5) },
	{ "gather index OOB, idx_bound_is_err, suppressed, bit 1", DIRECT(GRP_GATHER),
	  .feat = FEAT_ON, GATHER4, .ind = 0x05,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  INDEX_FATAL(10, 1, 5) },
	{ "gather index OOB, idx_bound_is_err, suppressed, bit 1 clear", DIRECT(GRP_GATHER),
	  .feat = FEAT_OFF, GATHER4, .ind = 0x05,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  INDEX_FATAL(10, 1, 5) },
	{ "gather suppressed without idx_bound_is_err: structural", DIRECT(GRP_GATHER),
	  .feat = FEAT_ON, GATHER4,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 1, 0, 0x200007, 0 },
	  INVALID(10, 1, 1) },
	{ "gather in bounds, idx_bound_is_err, suppressed", DIRECT(GRP_GATHER), .feat = FEAT_ON,
	  GATHER4, .ind = 0x05,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 1, 0, 0x200007, 0 },
	  COPIED(1, D_SWAP) },
	{ "gather length 1 (1-byte element), index 0 <= 0", DIRECT(GRP_GATHER), .feat = FEAT_ON,
	  .flags = 0x00, .ind = 0x01, .len = 1, .idx = { 0, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200000, 0 },
	  COPIED(1, D_Y1) },
	{ "gather length 1, index 1 > 0", DIRECT(GRP_GATHER), .feat = FEAT_ON,
	  .flags = 0x00, .ind = 0x01, .len = 1, .idx = { 1, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200000, 0 },
	  NONFATAL(10, 1, 5) },
	{ "gather index in bounds, element outside its window", DIRECT(GRP_GATHER),
	  .feat = FEAT_ON, .flags = 0x04, .ind = 0x01, .len = 8, .idx = { 2, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 5, 0, 0x200007, 0 },
	  MEMERR },
	{ "element outside its window, bit 1 clear: MEMORY_ERROR is not gated",
	  DIRECT(GRP_GATHER),
	  .feat = FEAT_OFF, .flags = 0x04, .ind = 0x01, .len = 8, .idx = { 2, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 5, 0, 0x200007, 0 },
	  MEMERR },
	{ "gather, index check off", DIRECT(GRP_GATHER), .feat = FEAT_ON, GATHER4,
	  .bc_src = BC_OFF, .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  COPIED(1, D_SWAP) },
	{ "gather, wide index bound", DIRECT(GRP_GATHER), .feat = FEAT_ON, GATHER4, .flags = 0x05,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 1, 0x200007, 0 },
	  COPIED(1, D_SWAP) },
	{ "gather, narrow: a stale high half is not read", DIRECT(GRP_GATHER), .feat = FEAT_ON,
	  GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 1, 0x200007, 0 },
	  NONFATAL(10, 1, 5) },
	{ "gather index OOB and dst address OOB", DIRECT(GRP_GATHER), .feat = FEAT_ON, GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200006, 0 },
	  NONFATAL(10, 3, 7) },
	{ "gather index OOB and dst address OOB suppressed", DIRECT(GRP_GATHER), .feat = FEAT_ON,
	  GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 1), .lim = { 0, 0, 0x200006, 0 },
	  NONFATAL(10, 3, 5) },
	{ "gather index OOB and dst address OOB, bit 1 clear", DIRECT(GRP_GATHER),
	  .feat = FEAT_OFF, GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200006, 0 },
	  INDEX_FATAL(10, 3, 7) },

	/* ---- scatter (the dst bound bounds the indices) and both indexed */
	{ "scatter in bounds", DIRECT(GRP_SCATTER), .feat = FEAT_ON, SCATTER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 1, 0 },
	  COPIED(1, D_SWAP) },
	{ "scatter index OOB, bit 1", DIRECT(GRP_SCATTER), .feat = FEAT_ON, SCATTER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0, 0 },
	  NONFATAL(20, 2, 10) },
	{ "scatter index OOB, bit 1 clear", DIRECT(GRP_SCATTER), .feat = FEAT_OFF, SCATTER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0, 0 },
	  INDEX_FATAL(20, 2, 10) },
	{ "scatter index OOB, idx_bound_is_err, suppressed", DIRECT(GRP_SCATTER),
	  .feat = FEAT_ON, SCATTER4, .ind = 0x06,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 1), .lim = { 0x100007, 0, 0, 0 },
	  INDEX_FATAL(20, 2, 10) },
	{ "scatter suppressed without idx_bound_is_err: structural", DIRECT(GRP_SCATTER),
	  .feat = FEAT_OFF, SCATTER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 1), .lim = { 0x100007, 0, 1, 0 },
	  INVALID(20, 2, 2) },
	{ "scatter, src address OOB", DIRECT(GRP_SCATTER), .feat = FEAT_ON, SCATTER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 1, 0 },
	  NONFATAL(10, 1, 1) },
	{ "gather + scatter in bounds", DIRECT(GRP_SCATTER), .feat = FEAT_ON,
	  .flags = 0x04, .ind = 0x03, .len = 8, .idx = { 1, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 1, 0, 1, 0 },
	  COPIED(1, D_Y8) },
	{ "gather + scatter, both index OOB, bit 1", DIRECT(GRP_SCATTER), .feat = FEAT_ON,
	  .flags = 0x04, .ind = 0x03, .len = 8, .idx = { 1, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0, 0 },
	  NONFATAL(10, 3, 15) },
	{ "gather + scatter, both index OOB, idx_bound_is_err", DIRECT(GRP_SCATTER),
	  .feat = FEAT_ON, .flags = 0x04, .ind = 0x07, .len = 8, .idx = { 1, 0 },
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0, 0, 0, 0 },
	  INDEX_FATAL(10, 3, 15) },

	/* ---- engines: DGE_COPY only on POOL */
	{ "ACT: DGE_COPY is illegal", .gen = G_CAYMAN, .group = GRP_ENGINE,
	  .engine = NEURON_ENGINE_ACT, .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 8,
	  ILLEGAL(D_X) },
	{ "PE: a gather is illegal", .gen = G_CAYMAN, .group = GRP_ENGINE,
	  .engine = NEURON_ENGINE_PE, .feat = FEAT_ON, GATHER4,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 1, 0, 0x200007, 0 },
	  ILLEGAL(D_X) },
	{ "SP: an OOB descriptor is illegal", .gen = G_CAYMAN, .group = GRP_ENGINE,
	  .engine = NEURON_ENGINE_SP, .feat = FEAT_ON,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100006, 0, 0x200007, 0 }, .len = 8,
	  ILLEGAL(D_X) },
	{ "DVE, bit 1 clear: illegal", .gen = G_CAYMAN, .group = GRP_ENGINE,
	  .engine = NEURON_ENGINE_DVE, .feat = FEAT_OFF,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 8,
	  ILLEGAL(D_X) },
	{ "POOL: the same descriptor copies", .gen = G_CAYMAN, .group = GRP_ENGINE,
	  .engine = POOL, .feat = FEAT_OFF,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 8,
	  COPIED(0, D_Y8) },

	/* ---- sunda: no DGE at all */
	{ "sunda POOL: direct, in bounds", .gen = G_SUNDA, .group = GRP_ENGINE, .engine = POOL,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 8,
	  ILLEGAL(D_NA) },
	{ "sunda POOL: gather index OOB", .gen = G_SUNDA, .group = GRP_ENGINE, .engine = POOL,
	  GATHER4, .ind = 0x05,
	  .bc_src = BC(10, 1), .bc_dst = BC(20, 0), .lim = { 0, 0, 0x200007, 0 },
	  ILLEGAL(D_NA) },
	{ "sunda POOL: wide, bc_reg 63", .gen = G_SUNDA, .group = GRP_ENGINE, .engine = POOL,
	  .flags = 0x01,
	  .bc_src = BC_OFF, .bc_dst = BC(63, 0), .lim = { 0, 0, 0x200007, 0 }, .len = 8,
	  ILLEGAL(D_NA) },
	{ "sunda ACT: direct", .gen = G_SUNDA, .group = GRP_ENGINE,
	  .engine = NEURON_ENGINE_ACT,
	  .bc_src = BC(10, 0), .bc_dst = BC(20, 0), .lim = { 0x100007, 0, 0x200007, 0 }, .len = 1,
	  ILLEGAL(D_NA) },
};

/*
 * The CRC of D[0..64) for the expected contents: D_X untouched (pattern X),
 * D_Y1 / D_Y8 the first 1 / 8 bytes of S (pattern Y) over X, D_SWAP S's two
 * 4-byte elements swapped (Y[4..8], Y[0..4]) over X.
 */
static uint16_t row_d_crc(unsigned int d)
{
	uint8_t x[LEN], y[LEN];

	pattern(x, 0);
	pattern(y, 1);
	switch (d) {
	case D_Y1:
		x[0] = y[0];
		break;
	case D_Y8:
		memcpy(x, y, 8);
		break;
	case D_SWAP:
		memcpy(x, y + 4, 4);
		memcpy(x + 4, y, 4);
		break;
	}
	return crc16(x, LEN);
}

/* A REG_WRITE of $S[@reg], or a NOP when the direction is off or @reg is 64. */
static struct neuron_emu_insn row_limit(uint8_t bc, unsigned int reg, uint32_t v)
{
	if (!(bc & 0x80) || reg >= 64)
		return neuron_insn(NEURON_OP_NOP, 0);
	return reg_write(reg, v);
}

static void run_row(struct __test_metadata *_metadata, struct dge_env *env,
		    const struct dge_row *r, unsigned int n)
{
	enum { T_PC = 4, T_IDX = 7, T_N = 8 };
	uint32_t pool = prog_area(env, CORE, POOL);
	struct neuron_emu_insn seed[7] = {
		copy(pool + 3 * 32, REG_D, LEN), copy(pool + 5 * 32, REG_S, LEN),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_emu_insn probe[2] = { copy(REG_D, REG_T, LEN), neuron_insn(NEURON_OP_HALT, 0) };
	struct neuron_emu_insn t[T_N];
	unsigned int rs = r->bc_src & 0x3f, rd = r->bc_dst & 0x3f, e = r->engine;
	bool sunda = r->gen == G_SUNDA;
	struct neuron_engine_status st;
	static struct collected c;
	char what[160];
	int state;

	snprintf(what, sizeof(what), "row %u (%s)", n, r->name);
	if (!sunda) {
		pattern((uint8_t *)&seed[3], 0);
		pattern((uint8_t *)&seed[5], 1);
		ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, POOL, seed, 7, &c, &st))
			TH_LOG("%s: seed", what);
		ASSERT_EQ(0, c.n[Q_ERR]) TH_LOG("%s: seed", what);
		ASSERT_EQ(0, set_features(env->fd, CORE, r->feat)) TH_LOG("%s", what);
	}

	t[0] = row_limit(r->bc_src, rs, r->lim[0]);
	t[1] = row_limit(r->bc_src, rs + 1, r->lim[1]);
	t[2] = row_limit(r->bc_dst, rd, r->lim[2]);
	t[3] = row_limit(r->bc_dst, rd + 1, r->lim[3]);
	t[T_PC] = dge(REG_S, REG_D, r->len, r->bc_src, r->bc_dst, r->ind,
		      NEURON_DGE_BACKEND_POOL);
	t[T_PC].flags = r->flags;
	if (r->ind & 0x3)
		t[T_PC].reserved0 = htole32(prog_area(env, CORE, e) + T_IDX * 32);
	t[5] = notify(5, 0x0d9e);
	t[6] = neuron_insn(NEURON_OP_HALT, 0);
	memset(&t[T_IDX], 0, sizeof(t[T_IDX]));
	put_le32((uint8_t *)&t[T_IDX], r->idx[0]);
	put_le32((uint8_t *)&t[T_IDX] + 4, r->idx[1]);

	state = run(_metadata, env, e, t, T_N, &c, &st);
	EXPECT_EQ(r->state, state) TH_LOG("%s: engine state", what);

	/* the trace: INST_START/INST_END pairs from pc 0, as many as expected */
	EXPECT_EQ(r->ntrace, c.n[Q_TRACE]) TH_LOG("%s: trace records", what);
	for (int i = 0; i < c.n[Q_TRACE] && i < r->ntrace; i++) {
		EXPECT_EQ(0x04 + 4 * e + (i & 1), neuron_rec_type(&c.q[Q_TRACE][i].r))
			TH_LOG("%s: trace record %d", what, i);
		EXPECT_EQ(i / 2, (int)c.q[Q_TRACE][i].r.trace.program_counter)
			TH_LOG("%s: trace record %d", what, i);
	}

	/* EXPECT, not ASSERT: a failing row must not hide the rows after it */
	EXPECT_EQ(r->err, c.n[Q_ERR]) TH_LOG("%s: errors queue", what);
	if (r->err && c.n[Q_ERR]) {
		check_tpb_error(_metadata, &c.q[Q_ERR][0], r->id, r->kind, r->bc, r->dir, e,
				T_PC, r->info, what);
		if (r->state == NEURON_ENGINE_IDLE)	/* made during pc 4 */
			check_within(_metadata, &c, T_PC, &c.q[Q_ERR][0], what);
	}
	EXPECT_EQ(r->meta, c.n[Q_DGE]) TH_LOG("%s: DGE queue", what);
	if (r->meta && c.n[Q_DGE])
		check_dge_metadata(_metadata, &c.q[Q_DGE][0], e, T_PC, what);

	if (r->state == NEURON_ENGINE_IDLE) {
		EXPECT_EQ(1, c.n[Q_EXPL]) TH_LOG("%s: the completion", what);
		if (c.n[Q_EXPL])
			EXPECT_EQ(5, (int)c.q[Q_EXPL][0].r.explicit_notif.program_counter);
		EXPECT_EQ(7, st.pc) TH_LOG("%s", what);
	} else {
		EXPECT_EQ(0, c.n[Q_EXPL]) TH_LOG("%s: a completion after a halt", what);
		EXPECT_EQ(T_PC, st.pc) TH_LOG("%s: PC left on the descriptor", what);
		EXPECT_EQ(ERR_FATAL, st.last_error) TH_LOG("%s", what);
	}
	if (state == NEURON_ENGINE_HALTED)	/* whatever was expected: the next row needs it */
		reset_engine(_metadata, env, e);

	if (r->d == D_NA)
		return;
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, POOL, probe, 2, &c, &st))
		TH_LOG("%s: probe", what);
	ASSERT_LE(1, c.n[Q_TRACE]) TH_LOG("%s: probe trace", what);
	EXPECT_EQ(row_d_crc(r->d), c.q[Q_TRACE][0].r.trace.data_crc)
		TH_LOG("%s: D afterwards (want contents %u)", what, r->d);
}

static void run_rows(struct __test_metadata *_metadata, struct dge_env *env,
		     unsigned int gen, unsigned int group)
{
	unsigned int rows = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(dge_table); i++) {
		if (dge_table[i].gen != gen || dge_table[i].group != group)
			continue;
		run_row(_metadata, env, &dge_table[i], i);
		rows++;
	}
	ksft_print_msg("dge_table: group %u: %u rows\n", group, rows);
	EXPECT_LT(0, rows);
}

FIXTURE(dge_table)
{
	struct dge_env env;
};

FIXTURE_SETUP(dge_table)
{
	env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(dge_table)
{
	env_teardown(&self->env);
}

TEST_F(dge_table, direct) { run_rows(_metadata, &self->env, G_CAYMAN, GRP_DIRECT); }
TEST_F(dge_table, offsets) { run_rows(_metadata, &self->env, G_CAYMAN, GRP_OFFSETS); }
TEST_F(dge_table, gather) { run_rows(_metadata, &self->env, G_CAYMAN, GRP_GATHER); }
TEST_F(dge_table, scatter) { run_rows(_metadata, &self->env, G_CAYMAN, GRP_SCATTER); }
TEST_F(dge_table, engines) { run_rows(_metadata, &self->env, G_CAYMAN, GRP_ENGINE); }

/* the same table's sunda rows, on a sunda device (main() below) */
FIXTURE(dge_table_sunda)
{
	struct dge_env env;
};

FIXTURE_SETUP(dge_table_sunda)
{
	env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(dge_table_sunda)
{
	env_teardown(&self->env);
}

TEST_F(dge_table_sunda, rows) { run_rows(_metadata, &self->env, G_SUNDA, GRP_ENGINE); }

/*
 * FP_ERROR with a fatal error id (SEQUENCER_FATAL 0x0a,
 * docs/hardware.md#rec-error-ids) halts the engine like any fatal error
 * (docs/device-model.md "Engines"): the record {error_id 0x0a, info_kind FP
 * 3, info = the flags}, HALTED with PC on it, LAST_ERROR 0x0a, no
 * completion; a non-fatal id before it (FP_NAN 0x01) is reported and the
 * engine goes on. On PE: FP_ERROR is no DGE instruction.
 */
TEST_F(dge_table, fp_error_fatal_id_halts)
{
	struct dge_env *env = &self->env;
	struct neuron_emu_insn prog[4] = {
		neuron_insn(NEURON_OP_FP_ERROR, 0), neuron_insn(NEURON_OP_FP_ERROR, 0),
		notify(1, 0x1111), neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_engine_status st;
	static struct collected c;

	prog[0].operand.arg.idx = htole32(0x10);
	prog[0].operand.arg.value = htole32(0x01);
	prog[1].operand.arg.idx = htole32(0x20);
	prog[1].operand.arg.value = htole32(0x0a);
	ASSERT_EQ(NEURON_ENGINE_HALTED, run(_metadata, env, NEURON_ENGINE_PE, prog, 4, &c, &st));
	EXPECT_EQ(1, st.pc);
	EXPECT_EQ(ERR_FATAL, st.last_error);
	ASSERT_EQ(2, c.n[Q_ERR]);
	check_tpb_error(_metadata, &c.q[Q_ERR][0], 0x01, 3, 0, 0, NEURON_ENGINE_PE, 0, 0x10,
			"FP_NAN");
	check_tpb_error(_metadata, &c.q[Q_ERR][1], 0x0a, 3, 0, 0, NEURON_ENGINE_PE, 1, 0x20,
			"FP_ERROR SEQUENCER_FATAL");
	EXPECT_EQ(0, c.n[Q_EXPL]) TH_LOG("a completion after the fatal FP_ERROR");
	EXPECT_EQ(3, c.n[Q_TRACE]);	/* pc 0 start+end, pc 1 start */
	EXPECT_EQ(-EIO, neuron_submit(env->fd, CORE, NEURON_ENGINE_PE, prog, 1, 0));
	reset_engine(_metadata, env, NEURON_ENGINE_PE);
}

/* ---- structural errors: fatal halt until reset ---------------------------- */

FIXTURE(dge_structural)
{
	struct dge_env env;
};

FIXTURE_VARIANT(dge_structural)
{
	uint8_t bc_src, bc_dst, ind, backend;
	uint8_t flags;		/* insn.flags: NEURON_DGE_F_* (emu_isa.h) */
	uint32_t table;		/* index table offset from REG_T (indirect) */
	unsigned int features;
	/* expected FATAL metadata (contract): info bits, bc_reg, direction */
	unsigned int info, bc_reg, dir;
};

/* docs/hardware.md#dge-validity: disabled but not all zero */
FIXTURE_VARIANT_ADD(dge_structural, src_disabled_with_reg) {
	.bc_src = 0x05, .bc_dst = BC(DST_REG, 0), .backend = NEURON_DGE_BACKEND_POOL,
	.features = FEAT_ON, .info = 1, .bc_reg = 5, .dir = DIR_SRC,
};
FIXTURE_VARIANT_ADD(dge_structural, dst_disabled_with_suppress) {
	.bc_src = BC(SRC_REG, 0), .bc_dst = 0x40, .backend = NEURON_DGE_BACKEND_POOL,
	.features = FEAT_OFF, .info = 2, .bc_reg = 0, .dir = DIR_DST,
};
/*
 * docs/hardware.md#dge-validity: enabled, but in wide-offset mode $S[63 + 1]
 * does not exist (docs/decisions/0018-dge-index-path.md; narrow mode reads
 * $S[63] alone and is valid, see the table)
 */
FIXTURE_VARIANT_ADD(dge_structural, wide_src_reg_63) {
	.bc_src = BC(63, 0), .bc_dst = BC(DST_REG, 0), .backend = NEURON_DGE_BACKEND_POOL,
	.flags = 0x01, .features = FEAT_ON, .info = 1, .bc_reg = 63, .dir = DIR_SRC,
};
FIXTURE_VARIANT_ADD(dge_structural, wide_dst_reg_63_suppressed) {
	.bc_src = BC(SRC_REG, 1), .bc_dst = BC(63, 1), .backend = NEURON_DGE_BACKEND_RTL,
	.flags = 0x01, .features = FEAT_OFF, .info = 2, .bc_reg = 63, .dir = DIR_DST,
};
FIXTURE_VARIANT_ADD(dge_structural, both_invalid) {
	.bc_src = 0x41, .bc_dst = BC(63, 0), .backend = NEURON_DGE_BACKEND_POOL,
	.flags = 0x01, .features = FEAT_ON, .info = 3, .bc_reg = 1, .dir = DIR_SRC | DIR_DST,
};
/*
 * The index encoding (emu_isa.h; info bit 8): an element size on a direct
 * descriptor, undefined mode bits, a misaligned index table
 */
FIXTURE_VARIANT_ADD(dge_structural, direct_with_element_size) {
	.bc_src = BC(SRC_REG, 0), .bc_dst = BC(DST_REG, 0), .backend = NEURON_DGE_BACKEND_POOL,
	.flags = 0x04, .features = FEAT_ON, .info = 8, .bc_reg = 0, .dir = 0,
};
FIXTURE_VARIANT_ADD(dge_structural, undefined_mode_bits) {
	.bc_src = BC(SRC_REG, 0), .bc_dst = BC(DST_REG, 0), .backend = NEURON_DGE_BACKEND_POOL,
	.flags = 0x10, .features = FEAT_OFF, .info = 8, .bc_reg = 0, .dir = 0,
};
FIXTURE_VARIANT_ADD(dge_structural, gather_table_misaligned) {
	.bc_src = BC(SRC_REG, 0), .bc_dst = BC(DST_REG, 0), .ind = IND(MODE_GATHER, 0),
	.backend = NEURON_DGE_BACKEND_POOL, .table = 2,
	.features = FEAT_ON, .info = 8, .bc_reg = 0, .dir = 0,
};
/* docs/hardware.md#dge-indirect: an indexed OOB is an error or reported */
FIXTURE_VARIANT_ADD(dge_structural, gather_suppressed_not_err) {
	.bc_src = BC(SRC_REG, 1), .bc_dst = BC(DST_REG, 0), .ind = IND(MODE_GATHER, 0),
	.backend = NEURON_DGE_BACKEND_POOL,
	.features = FEAT_ON, .info = 1, .bc_reg = SRC_REG, .dir = DIR_SRC,
};
FIXTURE_VARIANT_ADD(dge_structural, scatter_suppressed_not_err) {
	.bc_src = BC(SRC_REG, 1), .bc_dst = BC(DST_REG, 1), .ind = IND(MODE_SCATTER, 0),
	.backend = NEURON_DGE_BACKEND_POOL,
	.features = FEAT_OFF, .info = 2, .bc_reg = DST_REG, .dir = DIR_DST,
};
FIXTURE_VARIANT_ADD(dge_structural, gather_scatter_suppressed_not_err) {
	.bc_src = BC(SRC_REG, 1), .bc_dst = BC(DST_REG, 1),
	.ind = IND(MODE_GATHER | MODE_SCATTER, 0), .backend = NEURON_DGE_BACKEND_POOL,
	.features = FEAT_ON, .info = 3, .bc_reg = SRC_REG, .dir = DIR_SRC | DIR_DST,
};
/* a backend the DGE does not know (contract: NONE, POOL, RTL) */
FIXTURE_VARIANT_ADD(dge_structural, bad_backend) {
	.bc_src = BC(SRC_REG, 0), .bc_dst = BC(DST_REG, 0), .backend = 3,
	.features = FEAT_ON, .info = 4, .bc_reg = 0, .dir = 0,
};
FIXTURE_VARIANT_ADD(dge_structural, bad_backend_and_dst) {
	.bc_src = BC_OFF, .bc_dst = 0x3f, .backend = 0xff,
	.features = FEAT_ON, .info = 6, .bc_reg = 63, .dir = DIR_DST,
};

FIXTURE_SETUP(dge_structural)
{
	env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(dge_structural)
{
	env_teardown(&self->env);
}

/*
 * The case program with generous limits (the copy would be in bounds) and
 * the bad descriptor at PC_TEST: records up to the seeds, the FATAL record,
 * then nothing: the completion (NOTIFY at PC_NOTIFY) never comes, the
 * engine stays HALTED and refuses programs until ENGINE_RESET.
 */
TEST_F(dge_structural, fatal_halt_until_reset)
{
	struct dge_env *env = &self->env;
	struct neuron_emu_insn prog[PROG_LEN];
	union neuron_isa_notification late;
	struct neuron_engine_status st, st2;
	static struct collected c, later;
	int state;

	ASSERT_EQ(0, set_features(env->fd, CORE, variant->features));
	build_case(env, ENGINE, prog, 0xffffffff, 0xffffffff,
		   dge(REG_S, REG_D, LEN, variant->bc_src, variant->bc_dst, variant->ind,
		       variant->backend));
	prog[PC_TEST].flags = variant->flags;
	if (variant->ind & 3)	/* an index table the file owns: SUBMIT checks it */
		prog[PC_TEST].reserved0 = htole32(REG_T + variant->table);
	state = run(_metadata, env, ENGINE, prog, PROG_LEN, &c, &st);
	ASSERT_EQ(NEURON_ENGINE_HALTED, state);

	/* the host sees the missing completion as a timeout */
	EXPECT_EQ(-ETIMEDOUT, neuron_ring_read(&env->ring[Q_EXPL], &late, 1, NO_COMPLETION_MS));
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &st2));
	EXPECT_EQ(NEURON_ENGINE_HALTED, st2.state);
	EXPECT_EQ(PC_TEST, st2.pc);
	EXPECT_EQ(st.exec_count, st2.exec_count);
	collect(env, &later);
	for (int q = 0; q < NQ; q++) {
		EXPECT_EQ(0, later.n[q]) TH_LOG("queue %u after the halt", hw_queue[q]);
	}
	EXPECT_EQ(-EIO, neuron_submit(env->fd, CORE, ENGINE, &prog[PC_HALT], 1, 0));
	check_fatal(_metadata, env, ENGINE, &c, state, &st, variant->features, variant->info,
		    variant->bc_reg, variant->dir, prog, "structural");
}

/* ---- other DGE behaviour ---------------------------------------------------- */

FIXTURE(dge)
{
	struct dge_env env;
};

FIXTURE_SETUP(dge)
{
	env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(dge)
{
	env_teardown(&self->env);
}

/*
 * docs/hardware.md#dge-detect, #dge-recovery "NO BACKEND FOUND, doing nothing":
 * no bounds check, no record, no copy, the engine goes on. Tried with limits
 * that would fail both directions (suppress bits clear, bit 1 set: a checked
 * descriptor would report) and with limits that would pass.
 */
TEST_F(dge, no_backend_does_nothing)
{
	struct dge_env *env = &self->env;
	struct neuron_emu_insn prog[PROG_LEN];
	struct neuron_engine_status st;
	uint16_t cx = crc_x(), cy = crc_y();
	int start[PC_HALT + 1] = { 0 }, end[PC_HALT + 1] = { 0 };
	static struct collected c;
	const int pcs[3] = { PC_SEED_X, PC_SEED_Y, PC_PROBE };

	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_ON));
	for (int oob = 0; oob < 2; oob++) {
		uint32_t slack = oob ? 1 : 0;

		build_case(env, ENGINE, prog, REG_S + LEN - 1 - slack, REG_D + LEN - 1 - slack,
			   dge(REG_S, REG_D, LEN, BC(SRC_REG, 0), BC(DST_REG, 0), 0,
			       NEURON_DGE_BACKEND_NONE));
		ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, PROG_LEN, &c, &st));
		EXPECT_EQ(PC_HALT + 1, st.pc);
		start[PC_SEED_X] = end[PC_SEED_X] = cx;
		start[PC_SEED_Y] = end[PC_SEED_Y] = cy;
		/*
		 * INST_START of a descriptor no backend executes: the contract
		 * does not say whether its source is read; not checked.
		 */
		start[PC_TEST] = ANY;
		end[PC_TEST] = 0;			/* not emitted */
		start[PC_PROBE] = end[PC_PROBE] = cx;	/* D untouched */
		check_trace(_metadata, &c, ENGINE, PC_HALT + 1, start, end, &st, "no backend");
		EXPECT_EQ(0, c.n[Q_ERR]) TH_LOG("oob %d", oob);
		ASSERT_EQ(1, c.n[Q_EXPL]);
		EXPECT_EQ(PC_NOTIFY, (int)c.q[Q_EXPL][0].r.explicit_notif.program_counter);
		ASSERT_EQ(3, c.n[Q_DGE]) TH_LOG("no DGE_METADATA for the no-backend descriptor");
		for (int i = 0; i < 3; i++)
			check_dge_metadata(_metadata, &c.q[Q_DGE][i], ENGINE, pcs[i], "no backend");
	}
}

/*
 * Wide offsets (insn.flags NEURON_DGE_F_WIDE_OFFSET): the limit is
 * $S[bc_reg] | $S[bc_reg + 1] << 32 (docs/hardware.md#dge-bounds-reg "bc_reg+1 =
 * high 32 b in wide-offset mode"), with bc_reg 62, the highest valid one. Limit 0x100 fails the destination; then $S[63] = 1 makes
 * the limit 0x1_0000_0100 and the same descriptor copies.
 */
TEST_F(dge, limit_high_half_from_next_register)
{
	enum { P_DATA = 13, N = 17 };
	struct dge_env *env = &self->env;
	uint32_t area = prog_area(env, CORE, ENGINE);
	struct neuron_emu_insn d = with_flags(dge(REG_S, REG_D, LEN, BC(SRC_REG, 0), BC(62, 0), 0,
						  NEURON_DGE_BACKEND_RTL), NEURON_DGE_F_WIDE_OFFSET);
	struct neuron_emu_insn prog[N] = {
		reg_write(SRC_REG, 0xffffffff), reg_write(SRC_REG + 1, 0),
		reg_write(62, 0x100), reg_write(63, 0),
		copy(area + P_DATA * 32, REG_D, LEN),		/* 4: X -> D */
		copy(area + (P_DATA + 2) * 32, REG_S, LEN),	/* 5: Y -> S */
		d,						/* 6: OOB dst */
		copy(REG_D, REG_T, LEN),			/* 7: probe: X */
		reg_write(63, 1),				/* 8 */
		d,						/* 9: in bounds */
		copy(REG_D, REG_T, LEN),			/* 10: probe: Y */
		notify(0, 0),					/* 11 */
		neuron_insn(NEURON_OP_HALT, 0),			/* 12 */
	};
	uint16_t cx = crc_x(), cy = crc_y();
	int start[13] = { [4] = cx, [5] = cy, [6] = cy, [7] = cx, [9] = cy, [10] = cy };
	int end[13] = { [4] = cx, [5] = cy, [6] = 0, [7] = cx, [9] = cy, [10] = cy };
	const int pcs[5] = { 4, 5, 7, 9, 10 };
	struct neuron_engine_status st;
	static struct collected c;

	pattern((uint8_t *)&prog[P_DATA], 0);
	pattern((uint8_t *)&prog[P_DATA + 2], 1);
	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_ON));
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, N, &c, &st));
	check_trace(_metadata, &c, ENGINE, 13, start, end, &st, "wide limit");
	ASSERT_EQ(1, c.n[Q_ERR]);
	check_tpb_error(_metadata, &c.q[Q_ERR][0], ERR_NONFATAL, KIND_DGE_BOUNDS, 62,
			DIR_DST, ENGINE, 6, DIR_DST, "wide limit");
	ASSERT_EQ(5, c.n[Q_DGE]);
	for (int i = 0; i < 5; i++)
		check_dge_metadata(_metadata, &c.q[Q_DGE][i], ENGINE, pcs[i], "wide limit");
	EXPECT_EQ(1, c.n[Q_EXPL]);
}

/*
 * Report-and-continue over several descriptors in one program
 * (docs/hardware.md#dge-recovery): three OOB descriptors (reported, suppressed,
 * reported), the completion after them, then a good copy. Exactly two NONFATAL
 * records with their own program counters; the engine ends IDLE.
 */
TEST_F(dge, several_oob_report_and_continue)
{
	struct dge_env *env = &self->env;
	struct neuron_emu_insn prog[10] = {
		reg_write(SRC_REG, 0xffffffff), reg_write(SRC_REG + 1, 0),
		reg_write(DST_REG, 0), reg_write(DST_REG + 1, 0),	/* every dst OOB */
		dge(REG_S, REG_D, LEN, BC(SRC_REG, 0), BC(DST_REG, 0), 0, NEURON_DGE_BACKEND_POOL),
		dge(REG_S, REG_D, LEN, BC(SRC_REG, 0), BC(DST_REG, 1), 0, NEURON_DGE_BACKEND_POOL),
		dge(REG_S, REG_D, 1, BC_OFF, BC(DST_REG, 0), 0, NEURON_DGE_BACKEND_RTL),
		notify(9, 0x0909),
		copy(REG_S, REG_T, LEN),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	int start[10] = { [4] = ANY, [5] = ANY, [6] = ANY, [8] = ANY };
	int end[10] = { [8] = ANY };	/* 4, 5, 6: not emitted, 0 */
	struct neuron_engine_status before, st;
	static struct collected c;

	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_ON));
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &before));
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, 10, &c, &st));
	EXPECT_EQ(10, st.pc);
	EXPECT_EQ(before.exec_count + 10, st.exec_count);
	EXPECT_EQ(before.last_error, st.last_error);
	check_trace(_metadata, &c, ENGINE, 10, start, end, &st, "several");
	ASSERT_EQ(2, c.n[Q_ERR]);
	check_tpb_error(_metadata, &c.q[Q_ERR][0], ERR_NONFATAL, KIND_DGE_BOUNDS, DST_REG,
			DIR_DST, ENGINE, 4, DIR_DST, "first OOB");
	check_tpb_error(_metadata, &c.q[Q_ERR][1], ERR_NONFATAL, KIND_DGE_BOUNDS, DST_REG,
			DIR_DST, ENGINE, 6, DIR_DST, "third OOB");
	/* src + 0 <= limit 0 fails too: a 1-byte copy checks its only byte */
	ASSERT_EQ(1, c.n[Q_EXPL]);
	EXPECT_EQ(7, (int)c.q[Q_EXPL][0].r.explicit_notif.program_counter);
	ASSERT_EQ(1, c.n[Q_DGE]);
	check_dge_metadata(_metadata, &c.q[Q_DGE][0], ENGINE, 8, "good copy");
}

/*
 * A copy that leaves device memory (or the file's memory): the device would
 * report MEMORY_ERROR (docs/device-model.md, DGE step 4), but since tenancy
 * (docs/decisions/0005-tenancy.md) SUBMIT refuses such a program with -EACCES
 * before anything runs, so the device's check is no longer reachable from
 * userspace. Each copy is refused as the second instruction of a program
 * whose first is a good copy: no instruction retires, no program starts,
 * no record arrives, on either feature setting.
 */
TEST_F(dge, copy_outside_device_memory)
{
	struct dge_env *env = &self->env;
	uint32_t top = (uint32_t)env->info.mem_size;
	const uint32_t bad[][2] = {
		{ top - 16, REG_T },			/* source leaves BAR4 */
		{ REG_S, 0xfffffff0u },			/* destination far beyond */
		{ REG_S + REG_BYTES - 16, REG_T },	/* source leaves its page */
		{ REG_S, REG_D + REG_BYTES - 16 },	/* destination leaves its page */
	};
	struct neuron_emu_insn prog[4] = {
		copy(REG_S, REG_T, LEN), copy(0, 0, 0), notify(0, 0),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_engine_status before, st;
	static struct collected c;
	const __u32 feats[2] = { FEAT_OFF, FEAT_ON };

	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &before));
	for (int f = 0; f < 2; f++) {
		ASSERT_EQ(0, set_features(env->fd, CORE, feats[f]));
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			prog[1] = copy(bad[i][0], bad[i][1], LEN);
			EXPECT_EQ(-EACCES, neuron_submit(env->fd, CORE, ENGINE, prog, 4,
							 NEURON_SUBMIT_F_TRACE))
				TH_LOG("copy %#x -> %#x", bad[i][0], bad[i][1]);
		}
	}
	usleep(100 * 1000);
	collect(env, &c);
	for (int q = 0; q < NQ; q++) {
		EXPECT_EQ(0, c.n[q]) TH_LOG("queue %u", hw_queue[q]);
	}
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &st));
	EXPECT_EQ(before.soft_reset_counter, st.soft_reset_counter);
	EXPECT_EQ(before.exec_count, st.exec_count);
	EXPECT_EQ(NEURON_ENGINE_IDLE, st.state);
	/* the same program inside the file's memory runs */
	prog[1] = copy(REG_S, REG_D, LEN);
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, 4, &c, &st));
	EXPECT_EQ(1, c.n[Q_EXPL]);
	EXPECT_EQ(0, c.n[Q_ERR]);
}

/*
 * An indirect descriptor's index table is memory the program reads too:
 * SUBMIT refuses a table, [table, table + 4 * count), outside the file's
 * allocations and the program (kernel/neuron_mem.c,
 * docs/decisions/0005-tenancy.md, #dge-index-path) with -EACCES before anything
 * runs; the same gather with its table in the file's memory runs. Gather of 16
 * one-byte elements: a 64-byte table.
 */
TEST_F(dge, index_table_outside_file_memory)
{
	struct dge_env *env = &self->env;
	uint32_t area = prog_area(env, CORE, ENGINE);
	const uint32_t bad[] = {
		REG_T + REG_BYTES - 32,		/* leaves its page by 32 bytes */
		0x400000,			/* a page nobody allocated */
		(uint32_t)env->info.mem_size - 16,	/* past the file's memory */
	};
	/* 1: zeros (slots 4, 5) -> T, the table: every index 0; 2: the gather */
	struct neuron_emu_insn prog[6] = {
		reg_write(SRC_REG, 0), copy(area + 4 * 32, REG_T, 64),
		dge(REG_S, REG_D, 16, BC(SRC_REG, 0), BC_OFF, IND(MODE_GATHER, 0),
		    NEURON_DGE_BACKEND_POOL),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_engine_status before, st;
	static struct collected c;

	memset(&prog[4], 0, 2 * sizeof(prog[4]));
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &before));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		prog[2].reserved0 = htole32(bad[i]);
		EXPECT_EQ(-EACCES, neuron_submit(env->fd, CORE, ENGINE, prog, 6, 0))
			TH_LOG("index table at %#x", bad[i]);
	}
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &st));
	EXPECT_EQ(before.soft_reset_counter, st.soft_reset_counter);
	prog[2].reserved0 = htole32(REG_T);
	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_ON));
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, 6, &c, &st));
	EXPECT_EQ(0, c.n[Q_ERR]);
	EXPECT_EQ(2, c.n[Q_DGE]);	/* the table copy and the gather */
}

/*
 * A copy may not write its own index table (kernel/neuron_mem.c,
 * docs/decisions/0005-tenancy.md "index tables"): SUBMIT refuses, with -EINVAL
 * and before anything runs, a scatter of 16 one-byte elements into
 * [REG_D, REG_D + 16) whose 64-byte table overlaps that window: at its
 * start (REG_D), and with only its first 4 bytes in the window's last 4
 * (REG_D + 12). The same scatter with its table at REG_D + 16, just past
 * the window, runs: instruction 1 fills that table with zeros from the
 * program (slots 4 and 5), every index 0, within the bound 0.
 */
TEST_F(dge, index_table_in_destination_refused)
{
	struct dge_env *env = &self->env;
	uint32_t area = prog_area(env, CORE, ENGINE);
	const uint32_t bad[] = { REG_D, REG_D + 12 };
	struct neuron_emu_insn prog[6] = {
		reg_write(DST_REG, 0), copy(area + 4 * 32, REG_D + 16, 64),
		dge(REG_S, REG_D, 16, BC_OFF, BC(DST_REG, 0), IND(MODE_SCATTER, 0),
		    NEURON_DGE_BACKEND_POOL),
		neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_engine_status before, st;
	static struct collected c;

	memset(&prog[4], 0, 2 * sizeof(prog[4]));
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &before));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		prog[2].reserved0 = htole32(bad[i]);
		EXPECT_EQ(-EINVAL, neuron_submit(env->fd, CORE, ENGINE, prog, 6, 0))
			TH_LOG("index table at %#x, destination [%#x, +16)", bad[i], REG_D);
	}
	ASSERT_EQ(0, neuron_engine_status(env->fd, CORE, ENGINE, &st));
	EXPECT_EQ(before.soft_reset_counter, st.soft_reset_counter);
	prog[2].reserved0 = htole32(REG_D + 16);
	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_ON));
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, 6, &c, &st));
	EXPECT_EQ(0, c.n[Q_ERR]);
	EXPECT_EQ(2, c.n[Q_DGE]);	/* the table fill and the scatter */
}

/*
 * NEURON_FEATURE_FLAGS is the engine's local register 38, not $S[38]
 * (contract): writing $S[38] from a program changes no gate.
 */
TEST_F(dge, sreg38_is_not_feature_flags)
{
	struct dge_env *env = &self->env;
	struct neuron_emu_insn prog[3] = {
		reg_write(38, 0), copy(REG_S, REG_T, LEN), neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_engine_status st;
	static struct collected c;
	__u32 flags;

	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_ON));
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, 3, &c, &st));
	ASSERT_EQ(1, c.n[Q_DGE]);
	check_dge_metadata(_metadata, &c.q[Q_DGE][0], ENGINE, 1, "$S[38] = 0");
	ASSERT_EQ(0, get_features(env->fd, CORE, &flags));
	EXPECT_EQ(FEAT_ON, flags);

	ASSERT_EQ(0, set_features(env->fd, CORE, FEAT_OFF));
	prog[0] = reg_write(38, NEURON_FEATURE_MASK);
	ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, ENGINE, prog, 3, &c, &st));
	EXPECT_EQ(0, c.n[Q_DGE]);
	ASSERT_EQ(0, get_features(env->fd, CORE, &flags));
	EXPECT_EQ(FEAT_OFF, flags);
}

/* ---- NEURON_IOC_FEATURE_FLAGS ---------------------------------------------- */

FIXTURE(feature_flags)
{
	int fd;
	struct neuron_device_info info;
};

FIXTURE_SETUP(feature_flags)
{
	self->fd = neuron_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NEURON_DEV, strerror(errno));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_DEVICE_INFO, &self->info));
}

FIXTURE_TEARDOWN(feature_flags)
{
	close(self->fd);
}

TEST_F(feature_flags, set_get_round_trip)
{
	__u32 flags;

	for (__u32 core = 0; core < self->info.num_cores; core++) {
		for (__u32 v = 0; v <= NEURON_FEATURE_MASK; v++) {
			ASSERT_EQ(0, set_features(self->fd, core, v)) TH_LOG("core %u 0x%x", core, v);
			flags = 0xdead;
			ASSERT_EQ(0, get_features(self->fd, core, &flags));
			EXPECT_EQ(v, flags) TH_LOG("core %u", core);
		}
	}
	/* per core */
	ASSERT_EQ(0, set_features(self->fd, 0, NEURON_FEATURE_DGE_PACKET_NOTIF));
	ASSERT_EQ(0, set_features(self->fd, 1, NEURON_FEATURE_DVE_PERF_MODE |
				  NEURON_FEATURE_EVT_ACCEL_ADDR));
	ASSERT_EQ(0, get_features(self->fd, 0, &flags));
	EXPECT_EQ(NEURON_FEATURE_DGE_PACKET_NOTIF, flags);
	ASSERT_EQ(0, get_features(self->fd, 1, &flags));
	EXPECT_EQ(NEURON_FEATURE_DVE_PERF_MODE | NEURON_FEATURE_EVT_ACCEL_ADDR, flags);
}

TEST_F(feature_flags, unknown_bits_einval)
{
	const __u32 bad[] = { 0x8, 0x10, 0xf, 0x80000000u, 0xffffffffu };
	__u32 flags;

	ASSERT_EQ(0, set_features(self->fd, 0, 0x3));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, set_features(self->fd, 0, bad[i])) TH_LOG("0x%x", bad[i]);
	}
	ASSERT_EQ(0, get_features(self->fd, 0, &flags));
	EXPECT_EQ(0x3, flags);	/* unchanged */
}

TEST_F(feature_flags, bad_core_einval)
{
	const __u32 bad[] = { self->info.num_cores, NEURON_MAX_CORES, 0xffffffffu };
	__u32 flags;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, set_features(self->fd, bad[i], 0)) TH_LOG("core %u", bad[i]);
		EXPECT_EQ(-EINVAL, get_features(self->fd, bad[i], &flags)) TH_LOG("core %u", bad[i]);
	}
}

TEST_F(feature_flags, bad_op_and_reserved_einval)
{
	struct neuron_feature_flags ff = { .core = 0, .op = 2 };

	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	ff.op = 0xffffffffu;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	for (__u32 op = NEURON_FEATURE_OP_GET; op <= NEURON_FEATURE_OP_SET; op++) {
		memset(&ff, 0, sizeof(ff));
		ff.op = op;
		ff.reserved0 = 1;
		EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_FEATURE_FLAGS, &ff));
		ff.reserved0 = 0;
		ff.reserved = 1ull << 63;
		EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	}
}

/* The host owns the register: an engine reset keeps it (contract). */
TEST_F(feature_flags, kept_across_engine_reset)
{
	struct neuron_engine_id id = { .core = 0 };
	__u32 flags;

	ASSERT_EQ(0, set_features(self->fd, 0, NEURON_FEATURE_DGE_PACKET_NOTIF));
	for (id.engine = 0; id.engine < NEURON_ENGINES_PER_CORE; id.engine++) {
		ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_ENGINE_RESET, &id));
	}
	ASSERT_EQ(0, get_features(self->fd, 0, &flags));
	EXPECT_EQ(NEURON_FEATURE_DGE_PACKET_NOTIF, flags);
}

/* ---- generation sunda (docs/hardware.md#generations) --------------------- */

FIXTURE(sunda)
{
	struct dge_env env;
};

FIXTURE_SETUP(sunda)
{
	env_setup(_metadata, &self->env);
}

FIXTURE_TEARDOWN(sunda)
{
	env_teardown(&self->env);
}

TEST_F(sunda, device_info_gen)
{
	EXPECT_EQ(NEURON_GEN_SUNDA, self->env.info.gen);
	EXPECT_EQ(NEURON_ABI_VERSION, self->env.info.abi_version);
	EXPECT_EQ(NEURON_ENGINES_PER_CORE, self->env.info.engines_per_core);
}

/* no NEURON_FEATURE_FLAGS register on sunda (docs/hardware.md#generations) */
TEST_F(sunda, feature_flags_eopnotsupp)
{
	__u32 flags;

	EXPECT_EQ(-EOPNOTSUPP, get_features(self->env.fd, 0, &flags));
	for (__u32 v = 0; v <= NEURON_FEATURE_MASK; v++) {
		EXPECT_EQ(-EOPNOTSUPP, set_features(self->env.fd, 0, v)) TH_LOG("0x%x", v);
	}
	EXPECT_EQ(-EOPNOTSUPP, set_features(self->env.fd, self->env.info.num_cores - 1,
					    NEURON_FEATURE_DGE_PACKET_NOTIF));
}

/*
 * docs/hardware.md#generations: no DGE emitter on sunda: DGE_COPY is an illegal
 * instruction (contract: SEQUENCER_FATAL, info_kind BAD_OPCODE, info = opcode
 * 0x0b), whatever its descriptor, on any engine: HALTED, no completion, SUBMIT
 * -EIO until reset, then a program without DGE runs.
 */
TEST_F(sunda, dge_copy_is_illegal)
{
	struct dge_env *env = &self->env;
	const uint8_t backends[2] = { NEURON_DGE_BACKEND_POOL, NEURON_DGE_BACKEND_NONE };
	const unsigned int engines[2] = { NEURON_ENGINE_POOL, NEURON_ENGINE_PE };
	struct neuron_emu_insn prog[4], ok[2] = { notify(3, 0x3333), neuron_insn(NEURON_OP_HALT, 0) };
	const int zero[4] = { 0 };
	union neuron_isa_notification late;
	struct neuron_engine_status st;
	static struct collected c;

	for (int i = 0; i < 2; i++) {
		unsigned int e = engines[i];

		prog[0] = notify(1, 0x1111);
		prog[1] = dge(REG_S, REG_D, LEN, BC_OFF, BC_OFF, 0, backends[i]);
		prog[2] = notify(2, 0x2222);
		prog[3] = neuron_insn(NEURON_OP_HALT, 0);
		ASSERT_EQ(NEURON_ENGINE_HALTED, run(_metadata, env, e, prog, 4, &c, &st));
		EXPECT_EQ(1, st.pc);
		EXPECT_EQ(ERR_FATAL, st.last_error);
		check_trace(_metadata, &c, e, 1, zero, zero, &st, "sunda");
		ASSERT_EQ(1, c.n[Q_ERR]);
		check_tpb_error(_metadata, &c.q[Q_ERR][0], ERR_FATAL, KIND_BAD_OPCODE, 0, 0, e,
				1, NEURON_OP_DGE_COPY, "sunda DGE_COPY");
		ASSERT_EQ(1, c.n[Q_EXPL]);
		EXPECT_EQ(0, (int)c.q[Q_EXPL][0].r.explicit_notif.program_counter);
		EXPECT_EQ(0, c.n[Q_DGE]);
		/* the completion never comes */
		EXPECT_EQ(-ETIMEDOUT, neuron_ring_read(&env->ring[Q_EXPL], &late, 1,
						       NO_COMPLETION_MS));
		EXPECT_EQ(-EIO, neuron_submit(env->fd, CORE, e, ok, 2, 0));
		reset_engine(_metadata, env, e);
		ASSERT_EQ(NEURON_ENGINE_IDLE, run(_metadata, env, e, ok, 2, &c, &st));
		ASSERT_EQ(1, c.n[Q_EXPL]);
		EXPECT_EQ(0x3333, c.q[Q_EXPL][0].r.explicit_notif.debug_hint_extended);
		EXPECT_EQ(0, c.n[Q_ERR]);
	}
}

/*
 * One binary for both generations: the fixture "sunda" runs on a sunda
 * device, every other fixture on cayman. The 6.1 harness has no filter
 * option, so main() unlinks the fixtures that do not apply from the
 * harness's list before running it: they are neither run nor counted.
 */
static bool fixture_applies(const struct __fixture_metadata *f, bool sunda)
{
	if (!f->tests)
		return true;	/* the "global" fixture: no TEST() here */
	return (strcmp(f->name, "sunda") == 0 ||
		strcmp(f->name, "dge_table_sunda") == 0) == sunda;
}

int main(int argc, char **argv)
{
	struct __fixture_metadata *f, *next, *head = NULL, *tail = NULL;
	struct neuron_device_info info;
	bool sunda = false;
	int fd = neuron_open();

	if (fd >= 0 && neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info) == 0) {
		sunda = info.gen == NEURON_GEN_SUNDA;
		printf("# dge_test: %s: generation %s\n", NEURON_DEV, sunda ? "sunda" : "cayman");
	} else {
		/* the cayman set then fails in its setup, naming the cause */
		printf("# dge_test: %s: no device info (%s)\n", NEURON_DEV, strerror(errno));
	}
	if (fd >= 0)
		close(fd);

	for (f = __fixture_list; f; f = next) {
		next = f->next;
		if (!fixture_applies(f, sunda))
			continue;
		f->next = NULL;
		if (!head) {
			head = f;
		} else {
			tail->next = f;
			f->prev = tail;
		}
		tail = f;
		head->prev = tail;
	}
	__fixture_list = head;
	return test_harness_run(argc, argv);
}
