// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * devtest: checks the neuron-tpb QEMU device model from inside the guest,
 * without the kernel driver. It finds the function in sysfs, enables it,
 * maps BAR0 (registers), BAR2 (MSI-X) and BAR4 (device memory) and drives the
 * device directly: rings live in device memory (CTRL.DEVICE_MEM) and
 * programs in BAR4, so no DMA mapping is needed. One test uses a host-memory
 * ring (physical address from /proc/self/pagemap) and one points MSI-X
 * vectors at ordinary memory to count edges.
 *
 * Output is TAP ("ok N name", "not ok N name", "# N passed, M failed");
 * the exit status is 0 iff every test passed.
 *
 * Fault-injection tests run only when the guest command line says how the
 * device was configured: neuron.fault_dma_queue=N, neuron.stuck_engine=N,
 * neuron.insn_delay_ns=N, neuron.stuck_busy=N. neuron.reset_latency_us=N
 * tells the device's reset-latency-us (default 100).
 *
 * Build: gcc -static -O2 -Wall -I include -o devtest devtest.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "neuron/regs.h"
#include "neuron/notification.h"
#include "neuron/emu_isa.h"

typedef union neuron_isa_notification rec_t;
typedef struct neuron_emu_insn insn_t;

/* Device-memory layout used by the tests (BAR4 offsets). */
#define RING_OFF(c, q)	(0x100000ull + ((c) * NEURON_NUM_SW_QUEUES + (q)) * 0x10000ull)
#define PROG_OFF(c, e)	(0x800000ull + ((c) * NEURON_ENGINES_PER_CORE + (e)) * 0x10000ull)
#define DGE_SRC		0x2000000u
#define DGE_DST		0x2100000u
#define DGE_IDX		0x2200000u	/* index table of the gather cases */

#define TIMEOUT_MS	3000

static volatile uint8_t *bar0, *bar2, *mem;
static uint64_t mem_size;
static char devdir[PATH_MAX];
static int cfg_fd = -1;
static unsigned int ncores, gen;
static int fault_dma_queue = -1, stuck_engine = -1, stuck_busy = -1;
static long insn_delay_ns = -1, reset_latency_us = 100;

static int testno, npassed, nfailed;
static int cur_fail;

/* ---- small helpers ------------------------------------------------------ */

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		cur_fail++;						\
		printf("#   %s:%d: check failed: %s: ", __func__,	\
		       __LINE__, #cond);				\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static uint32_t rd(uint64_t off)
{
	return *(volatile uint32_t *)(bar0 + off);
}

static void wr(uint64_t off, uint32_t v)
{
	*(volatile uint32_t *)(bar0 + off) = v;
}

static uint32_t crd(unsigned int c, uint64_t off)
{
	return rd(NEURON_CORE_BASE(c) + off);
}

static void cwr(unsigned int c, uint64_t off, uint32_t v)
{
	wr(NEURON_CORE_BASE(c) + off, v);
}

static uint32_t qrd(unsigned int c, unsigned int q, uint64_t reg)
{
	return crd(c, NEURON_NOTIFIC_BASE + NEURON_NQ_DESC(q) + reg);
}

static void qwr(unsigned int c, unsigned int q, uint64_t reg, uint32_t v)
{
	cwr(c, NEURON_NOTIFIC_BASE + NEURON_NQ_DESC(q) + reg, v);
}

static uint32_t erd(unsigned int c, unsigned int e, uint64_t reg)
{
	return crd(c, NEURON_ENGINE_BASE(e) + reg);
}

static void ewr(unsigned int c, unsigned int e, uint64_t reg, uint32_t v)
{
	cwr(c, NEURON_ENGINE_BASE(e) + reg, v);
}

static uint32_t sem_rd(unsigned int c, unsigned int i)
{
	return crd(c, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_READ(i));
}

static void vread(void *dst, const volatile uint8_t *src, size_t n)
{
	uint8_t *d = dst;

	while (n--)
		*d++ = *src++;
}

static void vwrite(volatile uint8_t *dst, const void *src, size_t n)
{
	const uint8_t *s = src;

	while (n--)
		*dst++ = *s++;
}

static void vfill(volatile uint8_t *dst, uint8_t v, size_t n)
{
	while (n--)
		*dst++ = v;
}

static uint8_t rec_type(const rec_t *r)
{
	return r->bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_TYPE_MASK;
}

static int rec_phase(const rec_t *r)
{
	return !!(r->bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_PHASE);
}

static int rec_swovf(const rec_t *r)
{
	return !!(r->bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_SW_OVF);
}

/* CRC-16/CCITT-FALSE, as the device documents for data_crc. */
static uint16_t crc16(const uint8_t *p, size_t n)
{
	uint16_t crc = 0xffff;
	int b;

	while (n--) {
		crc ^= (uint16_t)*p++ << 8;
		for (b = 0; b < 8; b++)
			crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
	}
	return crc;
}

/* ---- queues ------------------------------------------------------------- */

struct nq {
	unsigned int c, q;
	uint32_t entries;
	uint32_t head;		/* our consumer count */
	volatile uint8_t *ring;
};

static void nq_open(struct nq *n, unsigned int c, unsigned int q,
		    uint32_t size, uint32_t threshold)
{
	uint32_t en = crd(c, NEURON_NOTIFIC_QUEUE_ENABLE);

	cwr(c, NEURON_NOTIFIC_QUEUE_ENABLE, en & ~(1u << q));
	vfill(mem + RING_OFF(c, q), 0, size);
	qwr(c, q, NEURON_NQ_BASE_LO, (uint32_t)RING_OFF(c, q));
	qwr(c, q, NEURON_NQ_BASE_HI, 0);
	qwr(c, q, NEURON_NQ_SIZE, size);
	qwr(c, q, NEURON_NQ_CTRL, NEURON_NQ_CTRL_DEVICE_MEM);
	qwr(c, q, NEURON_NQ_THRESHOLD, threshold);
	cwr(c, NEURON_NOTIFIC_QUEUE_ENABLE, en | (1u << q));
	n->c = c;
	n->q = q;
	n->entries = size / 16;
	n->head = 0;
	n->ring = mem + RING_OFF(c, q);
}

/* Copies what is there (up to @max records); acks through the doorbell. */
static unsigned int nq_drain(struct nq *n, rec_t *out, unsigned int max)
{
	uint32_t tail = qrd(n->c, n->q, NEURON_NQ_TAIL);
	unsigned int k = 0;

	while (n->head != tail && k < max) {
		vread(&out[k], n->ring + (n->head & (n->entries - 1)) * 16, 16);
		n->head++;
		k++;
	}
	if (k)
		cwr(n->c, NEURON_DOORBELL(n->q), n->head);
	return k;
}

/* Collects @want records, draining as they come; returns how many came. */
static unsigned int nq_collect(struct nq *n, rec_t *out, unsigned int want,
			       unsigned int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	unsigned int got = 0;

	while (got < want && now_ms() < end) {
		unsigned int k = nq_drain(n, out + got, want - got);

		got += k;
		if (!k)
			sleep_ms(1);
	}
	return got;
}

/* ---- programs ----------------------------------------------------------- */

static insn_t I(uint8_t op, uint16_t hint, uint32_t idx, uint32_t value)
{
	insn_t in;

	memset(&in, 0, sizeof(in));
	in.opcode = op;
	in.debug_hint = htole16(hint);
	in.operand.arg.idx = htole32(idx);
	in.operand.arg.value = htole32(value);
	return in;
}

static insn_t NOTIFY(uint16_t hint, uint16_t ext)
{
	insn_t in = I(NEURON_OP_NOTIFY, hint, 0, 0);

	in.operand.arg.debug_hint_extended = htole16(ext);
	return in;
}

static void prog_load(unsigned int c, unsigned int e, const insn_t *p,
		      unsigned int n)
{
	vwrite(mem + PROG_OFF(c, e), p, n * sizeof(*p));
	ewr(c, e, NEURON_ENG_PROG_BASE_LO, (uint32_t)PROG_OFF(c, e));
	ewr(c, e, NEURON_ENG_PROG_BASE_HI, 0);
	ewr(c, e, NEURON_ENG_PROG_COUNT, n);
}

static void prog_start(unsigned int c, unsigned int e, const insn_t *p,
		       unsigned int n)
{
	prog_load(c, e, p, n);
	ewr(c, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_START);
}

static bool eng_wait(unsigned int c, unsigned int e, uint32_t state,
		     unsigned int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		if (erd(c, e, NEURON_ENG_STATUS) == state)
			return true;
		sleep_ms(1);
	}
	return erd(c, e, NEURON_ENG_STATUS) == state;
}

/* Waits until DEV_STATUS.READY: a reset completes asynchronously. */
static bool wait_ready(unsigned int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		if (rd(NEURON_REG_DEV_STATUS) & NEURON_DEV_STATUS_READY)
			return true;
		sleep_ms(1);
	}
	return rd(NEURON_REG_DEV_STATUS) & NEURON_DEV_STATUS_READY;
}

/* Quiesces the device and puts every register the tests touch to default. */
static void dev_reset(void)
{
	unsigned int c, e, i;

	wr(NEURON_REG_RESET, 1);
	if (!wait_ready(TIMEOUT_MS))
		printf("# DEV_STATUS.READY did not come back after RESET\n");
	wr(NEURON_REG_FAULT_MASK, 0);
	wr(NEURON_REG_FAULT_STATUS, ~0u);
	wr(NEURON_REG_THROTTLE_CTRL, 0);
	wr(NEURON_REG_THROTTLE_STATUS, ~0u);
	for (c = 0; c < ncores; c++) {
		cwr(c, NEURON_NOTIFIC_INTR_MASK, 0);
		cwr(c, NEURON_NOTIFIC_INTR_STATUS, NEURON_NOTIFIC_INTR_MASK_ALL);
		cwr(c, NEURON_NOTIFIC_SW_BACKPRESSURE, NEURON_SW_QUEUE_MASK);
		cwr(c, NEURON_NOTIFIC_IGNORE_FULL, 0);
		cwr(c, NEURON_NOTIFIC_ROUTE, NEURON_ROUTE_DEFAULT);
		cwr(c, NEURON_NOTIFIC_TRACE_ENABLE, 0);
		cwr(c, NEURON_NOTIFIC_THRESHOLD_STATUS, NEURON_SW_QUEUE_MASK);
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
			if (gen == NEURON_GEN_CAYMAN)
				ewr(c, e, NEURON_ENG_FEATURE_FLAGS, 0);
		}
		for (i = 0; i < NEURON_EVT_SEM_COUNT; i++) {
			cwr(c, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_SET(i), 0);
			cwr(c, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_EVENT(i), 0);
		}
	}
}

static uint32_t intr_status(unsigned int c)
{
	return crd(c, NEURON_NOTIFIC_INTR_STATUS);
}

/* ---- tests: identity ---------------------------------------------------- */

static unsigned long sysfs_hex(const char *name)
{
	char path[PATH_MAX + 32], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", devdir, name);
	f = fopen(path, "r");
	if (!f)
		return ~0ul;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtoul(buf, NULL, 0);
}

static void t_pci_identity(void)
{
	char path[PATH_MAX + 32];
	unsigned long long start, end, flags;
	FILE *f;
	int bar;

	CHECK(sysfs_hex("vendor") == NEURON_PCI_VENDOR_ID, "vendor");
	CHECK(sysfs_hex("device") == NEURON_PCI_DEVICE_ID, "device");
	CHECK(sysfs_hex("class") >> 8 == NEURON_PCI_CLASS, "class 0x%lx",
	      sysfs_hex("class"));
	CHECK(sysfs_hex("revision") == 1, "revision %lu", sysfs_hex("revision"));

	snprintf(path, sizeof(path), "%s/resource", devdir);
	f = fopen(path, "r");
	CHECK(f, "open %s", path);
	if (!f)
		return;
	for (bar = 0; bar < 6; bar++) {
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			break;
		if (bar == 0) {
			CHECK(end - start + 1 == NEURON_BAR0_SIZE, "BAR0 size");
			CHECK(flags & 0x00100000, "BAR0 not 64-bit (flags 0x%llx)", flags);
		}
		if (bar == 2)
			CHECK(end > start, "BAR2 (MSI-X) missing");
		if (bar == 4) {
			CHECK(end - start + 1 == mem_size, "BAR4 size");
			CHECK(flags & 0x2000, "BAR4 not prefetchable (0x%llx)", flags);
			CHECK(flags & 0x00100000, "BAR4 not 64-bit (0x%llx)", flags);
		}
	}
	fclose(f);
}

static void t_global_regs(void)
{
	uint32_t lo1, hi1, lo2, hi2;
	uint64_t t1, t2;

	CHECK(rd(NEURON_REG_ID) == NEURON_ID_MAGIC, "ID 0x%x", rd(NEURON_REG_ID));
	CHECK(rd(NEURON_REG_VERSION) == NEURON_REGS_VERSION, "VERSION %u",
	      rd(NEURON_REG_VERSION));
	CHECK(rd(NEURON_REG_NUM_CORES) == 2, "NUM_CORES %u", rd(NEURON_REG_NUM_CORES));
	CHECK(rd(NEURON_REG_GEN) <= NEURON_GEN_CAYMAN, "GEN %u", rd(NEURON_REG_GEN));
	CHECK(rd(NEURON_REG_MEM_SIZE_LO) == (uint32_t)mem_size &&
	      rd(NEURON_REG_MEM_SIZE_HI) == (uint32_t)(mem_size >> 32), "MEM_SIZE");
	CHECK(crd(0, NEURON_NOTIFIC_TIMESTAMP_INC) == 1000, "TIMESTAMP_INC %u",
	      crd(0, NEURON_NOTIFIC_TIMESTAMP_INC));
	CHECK(crd(0, NEURON_NOTIFIC_SW_BACKPRESSURE) == NEURON_SW_QUEUE_MASK,
	      "SW_BACKPRESSURE reset value");
	CHECK(crd(0, NEURON_NOTIFIC_ROUTE) == NEURON_ROUTE_DEFAULT, "ROUTE reset");
	lo1 = crd(0, NEURON_NOTIFIC_TIMESTAMP_LO);
	hi1 = crd(0, NEURON_NOTIFIC_TIMESTAMP_HI);
	sleep_ms(5);
	lo2 = crd(0, NEURON_NOTIFIC_TIMESTAMP_LO);
	hi2 = crd(0, NEURON_NOTIFIC_TIMESTAMP_HI);
	t1 = (uint64_t)hi1 << 32 | lo1;
	t2 = (uint64_t)hi2 << 32 | lo2;
	CHECK(t2 > t1 && t2 - t1 >= 1000000000ull, "timestamp advanced %llu ps in 5 ms",
	      (unsigned long long)(t2 - t1));
	/* 64-bit read: LO then HI, coherent through the latch */
	t1 = *(volatile uint64_t *)(bar0 + NEURON_CORE_BASE(0) + NEURON_NOTIFIC_TIMESTAMP_LO);
	CHECK(t1 >= t2, "64-bit timestamp read went backwards");
}

/* ---- tests: records ----------------------------------------------------- */

static void t_trace_order(void)
{
	const unsigned int e = NEURON_ENGINE_POOL;
	static const struct { unsigned int kind, pc, hint; } want[7] = {
		{ NEURON_ENGINE_RECORD_INST_START, 0, 3 },
		{ NEURON_ENGINE_RECORD_INST_END, 0, 3 },
		{ NEURON_ENGINE_RECORD_INST_START, 1, 5 },
		{ NEURON_ENGINE_RECORD_EXPLICIT, 1, 5 },
		{ NEURON_ENGINE_RECORD_INST_END, 1, 5 },
		{ NEURON_ENGINE_RECORD_INST_START, 2, 7 },
		{ NEURON_ENGINE_RECORD_INST_END, 2, 7 },
	};
	insn_t p[3] = { I(NEURON_OP_NOP, 0x13, 0, 0), NOTIFY(5, 0xbeef),
			I(NEURON_OP_HALT, 7, 0, 0) };
	uint32_t src0, exec0;
	uint64_t ts = 0;
	struct nq n;
	rec_t r[8];
	unsigned int i, got;

	dev_reset();
	/* explicit records to queue 0 too, so the order is one stream */
	cwr(0, NEURON_NOTIFIC_ROUTE, NEURON_ROUTE_DEFAULT & ~0xf0u);
	nq_open(&n, 0, 0, 4096, 0);
	cwr(0, NEURON_NOTIFIC_TRACE_ENABLE, 1u << e);
	src0 = erd(0, e, NEURON_ENG_SOFT_RESET_COUNTER);
	exec0 = erd(0, e, NEURON_ENG_EXEC_COUNT);
	prog_start(0, e, p, 3);
	got = nq_collect(&n, r, 7, TIMEOUT_MS);
	CHECK(got == 7, "got %u records", got);
	for (i = 0; i < got; i++) {
		CHECK(rec_type(&r[i]) == NEURON_ENGINE_NOTIFIC_TYPE(e, want[i].kind),
		      "rec %u type 0x%x", i, rec_type(&r[i]));
		CHECK(r[i].trace.program_counter == want[i].pc, "rec %u pc %u", i,
		      r[i].trace.program_counter);
		CHECK(r[i].trace.debug_hint == want[i].hint, "rec %u hint %u", i,
		      r[i].trace.debug_hint);
		CHECK(rec_phase(&r[i]) == 1, "rec %u phase", i);
		CHECK(!rec_swovf(&r[i]), "rec %u overflow bit", i);
		CHECK(r[i].trace.soft_reset_counter == (uint16_t)(src0 + 1),
		      "rec %u soft_reset_counter %u", i, r[i].trace.soft_reset_counter);
		CHECK(r[i].generic.timestamp >= ts, "rec %u timestamp went back", i);
		ts = r[i].generic.timestamp;
		if (want[i].kind != NEURON_ENGINE_RECORD_EXPLICIT)
			CHECK(r[i].trace.data_crc == 0, "rec %u crc", i);
	}
	if (got >= 4)
		CHECK(r[3].explicit_notif.debug_hint_extended == 0xbeef, "ext 0x%x",
		      r[3].explicit_notif.debug_hint_extended);
	CHECK(eng_wait(0, e, NEURON_ENGINE_IDLE, TIMEOUT_MS), "engine not idle");
	CHECK(erd(0, e, NEURON_ENG_PC) == 3, "PC %u", erd(0, e, NEURON_ENG_PC));
	CHECK(erd(0, e, NEURON_ENG_EXEC_COUNT) == exec0 + 3, "EXEC_COUNT");
	CHECK(erd(0, e, NEURON_ENG_SOFT_RESET_COUNTER) == src0 + 1, "SOFT_RESET_COUNTER");
	sleep_ms(10);
	CHECK(qrd(0, 0, NEURON_NQ_TAIL) == 7, "TAIL %u", qrd(0, 0, NEURON_NQ_TAIL));
	CHECK(intr_status(0) == 0, "INTR_STATUS 0x%x", intr_status(0));
}

static void t_program_end_without_halt(void)
{
	insn_t p[3] = { I(NEURON_OP_NOP, 0, 0, 0), I(NEURON_OP_NOP, 0, 0, 0),
			I(NEURON_OP_REG_WRITE, 0, 17, 0xcafe) };

	dev_reset();
	ewr(0, NEURON_ENGINE_DVE, NEURON_ENG_SREG(17), 0);
	prog_start(0, NEURON_ENGINE_DVE, p, 3);
	CHECK(eng_wait(0, NEURON_ENGINE_DVE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(erd(0, NEURON_ENGINE_DVE, NEURON_ENG_PC) == 3, "PC");
	CHECK(erd(0, NEURON_ENGINE_DVE, NEURON_ENG_SREG(17)) == 0xcafe, "$S[17] 0x%x",
	      erd(0, NEURON_ENGINE_DVE, NEURON_ENG_SREG(17)));
	/* traced nothing, wrote nothing: no queue enabled, no intr */
	CHECK(intr_status(0) == 0, "INTR_STATUS 0x%x", intr_status(0));
}

static void t_phase_wrap(void)
{
	insn_t p[11];
	struct nq n;
	rec_t r[10];
	unsigned int i, got;

	dev_reset();
	nq_open(&n, 0, 1, 64, 0);	/* 4 entries */
	for (i = 0; i < 10; i++)
		p[i] = NOTIFY(1, 100 + i);
	p[10] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_ACT, p, 11);
	got = nq_collect(&n, r, 10, TIMEOUT_MS);
	CHECK(got == 10, "got %u", got);
	for (i = 0; i < got; i++) {
		CHECK(rec_phase(&r[i]) == (int)(((i / 4) & 1) ^ 1), "rec %u phase %d", i,
		      rec_phase(&r[i]));
		CHECK(r[i].explicit_notif.debug_hint_extended == 100 + i, "rec %u ext %u",
		      i, r[i].explicit_notif.debug_hint_extended);
		CHECK(rec_type(&r[i]) == 0x0a, "rec %u type", i);
	}
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	/* STATUS.PHASE: the phase the next record gets (count 10: pass 2) */
	CHECK(qrd(0, 1, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_PHASE, "STATUS.PHASE");
}

static void t_backpressure_lossless(void)
{
	enum { N = 300 };
	static insn_t p[N + 1];
	static rec_t r[N];
	uint32_t drop0, ovf0, exec0;
	struct nq n;
	unsigned int i, got, bad = 0;

	dev_reset();
	nq_open(&n, 0, 1, 64, 0);	/* 4 entries */
	drop0 = qrd(0, 1, NEURON_NQ_DROP_COUNT);
	ovf0 = qrd(0, 1, NEURON_NQ_OVERFLOW_COUNT);
	exec0 = erd(0, NEURON_ENGINE_PE, NEURON_ENG_EXEC_COUNT);
	for (i = 0; i < N; i++)
		p[i] = NOTIFY(2, i);
	p[N] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_PE, p, N + 1);
	sleep_ms(30);
	CHECK(erd(0, NEURON_ENGINE_PE, NEURON_ENG_STATUS) == NEURON_ENGINE_WAITING,
	      "engine state %u, want WAITING", erd(0, NEURON_ENGINE_PE, NEURON_ENG_STATUS));
	CHECK(qrd(0, 1, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_STALLED, "STALLED");
	CHECK(qrd(0, 1, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_FULL, "FULL");
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == 4, "TAIL %u", qrd(0, 1, NEURON_NQ_TAIL));
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_BACKPRESSURE), "intr_5");

	got = nq_collect(&n, r, N, 20000);
	CHECK(got == N, "got %u of %u", got, N);
	for (i = 0; i < got; i++) {
		if (r[i].explicit_notif.debug_hint_extended != i ||
		    rec_phase(&r[i]) != (int)(((i / 4) & 1) ^ 1) || rec_swovf(&r[i]))
			bad++;
	}
	CHECK(bad == 0, "%u records out of order, duplicated or with a bad header", bad);
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	sleep_ms(10);
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == N, "TAIL %u", qrd(0, 1, NEURON_NQ_TAIL));
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == N, "HEAD %u", qrd(0, 1, NEURON_NQ_HEAD));
	CHECK(qrd(0, 1, NEURON_NQ_DROP_COUNT) == drop0, "DROP_COUNT moved");
	CHECK(qrd(0, 1, NEURON_NQ_OVERFLOW_COUNT) == ovf0, "OVERFLOW_COUNT moved");
	CHECK(!(qrd(0, 1, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_STALLED), "still STALLED");
	CHECK(erd(0, NEURON_ENGINE_PE, NEURON_ENG_EXEC_COUNT) == exec0 + N + 1,
	      "EXEC_COUNT %u", erd(0, NEURON_ENGINE_PE, NEURON_ENG_EXEC_COUNT) - exec0);
}

/*
 * A record that stalls mid-instruction must not repeat the step's side
 * effect: every instruction here bumps two semaphores (operation + EVENTS
 * update) and writes four records into one 4-entry queue drained slowly.
 */
static void t_stall_no_duplicate(void)
{
	enum { N = 6, RECS = N * 4 + 2 };
	insn_t p[N + 1];
	rec_t r[RECS];
	unsigned int i, got, k = 0;
	struct nq n;

	dev_reset();
	/* trace (class 0) and EVT_SEM (class 2) both to queue 0 */
	cwr(0, NEURON_NOTIFIC_ROUTE, NEURON_ROUTE_DEFAULT & ~0xf00u);
	nq_open(&n, 0, 0, 64, 0);
	cwr(0, NEURON_NOTIFIC_TRACE_ENABLE, 1u << NEURON_ENGINE_ACT);
	for (i = 0; i < N; i++) {
		p[i] = I(NEURON_OP_SEM_INC, i, 1, 1);
		p[i].events.update_mode = NEURON_EVT_SEM_UPDATE_SEM_INC;
		p[i].events.update_idx = 2;
		p[i].events.semaphore_value = htole32(10);
	}
	p[N] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_ACT, p, N + 1);
	for (got = 0; got < RECS; ) {
		uint64_t end = now_ms() + TIMEOUT_MS;
		unsigned int m = 0;

		sleep_ms(5);	/* let the engine stall on the full ring */
		while (!m && now_ms() < end)
			m = nq_drain(&n, r + got, 1 + got % 3);
		if (!m)
			break;
		got += m;
	}
	CHECK(got == RECS, "got %u of %u", got, RECS);
	for (i = 0; i < N && k + 4 <= got; i++, k += 4) {
		CHECK(rec_type(&r[k]) == 0x08 && r[k].trace.program_counter == i,
		      "insn %u START", i);
		CHECK(rec_type(&r[k + 1]) == 0x0b && r[k + 1].evt_sem.event_semaphore_id == 1 &&
		      r[k + 1].evt_sem.event_semaphore_value == i + 1, "insn %u op record", i);
		CHECK(rec_type(&r[k + 2]) == 0x0b && r[k + 2].evt_sem.event_semaphore_id == 2 &&
		      r[k + 2].evt_sem.event_semaphore_value == 10 * (i + 1),
		      "insn %u update record", i);
		CHECK(rec_type(&r[k + 3]) == 0x09 && r[k + 3].trace.program_counter == i,
		      "insn %u END", i);
	}
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(sem_rd(0, 1) == N && sem_rd(0, 2) == 10 * N, "sems %u %u",
	      sem_rd(0, 1), sem_rd(0, 2));
	CHECK(qrd(0, 0, NEURON_NQ_TAIL) == RECS, "TAIL %u", qrd(0, 0, NEURON_NQ_TAIL));
}

static void t_disabled_queue_drop(void)
{
	insn_t p[2] = { NOTIFY(0, 1), I(NEURON_OP_HALT, 0, 0, 0) };
	uint32_t drop0;

	dev_reset();
	cwr(0, NEURON_NOTIFIC_ROUTE, (NEURON_ROUTE_DEFAULT & ~0xf0u) | 0x70u);
	drop0 = qrd(0, 7, NEURON_NQ_DROP_COUNT);
	CHECK(!(crd(0, NEURON_NOTIFIC_QUEUE_ENABLE) & (1u << 7)), "queue 7 enabled");
	prog_start(0, NEURON_ENGINE_SP, p, 2);
	CHECK(eng_wait(0, NEURON_ENGINE_SP, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(qrd(0, 7, NEURON_NQ_DROP_COUNT) == drop0 + 1, "DROP_COUNT %u -> %u",
	      drop0, qrd(0, 7, NEURON_NQ_DROP_COUNT));
	CHECK(qrd(0, 7, NEURON_NQ_TAIL) == 0, "TAIL moved");
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_DISABLED_QUEUE),
	      "intr_1 not set: 0x%x", intr_status(0));
	cwr(0, NEURON_NOTIFIC_INTR_STATUS, 1u << NEURON_NOTIFIC_INTR_DISABLED_QUEUE);
	CHECK(!(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_DISABLED_QUEUE)),
	      "intr_1 not W1C");
}

static void t_ignore_full_overflow(void)
{
	insn_t p[7];
	rec_t r[4];
	uint32_t ovf0;
	unsigned int i;
	struct nq n;

	dev_reset();
	nq_open(&n, 0, 1, 64, 0);
	cwr(0, NEURON_NOTIFIC_IGNORE_FULL, 1u << 1);
	ovf0 = qrd(0, 1, NEURON_NQ_OVERFLOW_COUNT);
	for (i = 0; i < 6; i++)
		p[i] = NOTIFY(0, i);
	p[6] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_PE, p, 7);
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == 6, "TAIL %u", qrd(0, 1, NEURON_NQ_TAIL));
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == 0, "HEAD %u moved (software owns it)",
	      qrd(0, 1, NEURON_NQ_HEAD));
	CHECK(qrd(0, 1, NEURON_NQ_OVERFLOW_COUNT) == ovf0 + 2, "OVERFLOW_COUNT");
	CHECK(qrd(0, 1, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_FULL, "FULL");
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW), "intr_2");
	for (i = 0; i < 4; i++)
		vread(&r[i], n.ring + i * 16, 16);
	/* slots 0,1: records 4,5 (second pass, overflowed); slots 2,3: 2,3 */
	CHECK(r[0].explicit_notif.debug_hint_extended == 4 && rec_swovf(&r[0]) &&
	      rec_phase(&r[0]) == 0, "slot 0");
	CHECK(r[1].explicit_notif.debug_hint_extended == 5 && rec_swovf(&r[1]) &&
	      rec_phase(&r[1]) == 0, "slot 1");
	CHECK(r[2].explicit_notif.debug_hint_extended == 2 && !rec_swovf(&r[2]) &&
	      rec_phase(&r[2]) == 1, "slot 2");
	CHECK(r[3].explicit_notif.debug_hint_extended == 3 && !rec_swovf(&r[3]) &&
	      rec_phase(&r[3]) == 1, "slot 3");
	/* after the lap: HEAD 0 -> 2 (past the two lost) is accepted, no intr_7 */
	cwr(0, NEURON_NOTIFIC_INTR_STATUS, 1u << NEURON_NOTIFIC_INTR_BAD_HEAD);
	cwr(0, NEURON_DOORBELL(1), 2);
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == 2, "HEAD %u after the write of 2",
	      qrd(0, 1, NEURON_NQ_HEAD));
	CHECK(!(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_BAD_HEAD)),
	      "intr_7 on the HEAD write after a lap");
	/* and one past TAIL still is not */
	cwr(0, NEURON_DOORBELL(1), 7);
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == 2, "HEAD 7 > TAIL 6 accepted");
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_BAD_HEAD), "no intr_7 past TAIL");
}

/*
 * A full queue with neither SW_BACKPRESSURE nor IGNORE_FULL drops the
 * record as a software queue overflow (intr_2, not the input buffer's
 * intr_3: docs/decisions/0026-wrbuf.md), and the next record written to the
 * queue carries software_queue_overflow.
 */
static void t_full_without_policy(void)
{
	insn_t p[6];
	unsigned int i;
	uint32_t drop0;
	rec_t r[4];
	struct nq n;

	dev_reset();
	nq_open(&n, 0, 1, 64, 0);
	cwr(0, NEURON_NOTIFIC_SW_BACKPRESSURE, NEURON_SW_QUEUE_MASK & ~(1u << 1));
	drop0 = qrd(0, 1, NEURON_NQ_DROP_COUNT);
	for (i = 0; i < 5; i++)
		p[i] = NOTIFY(0, i);
	p[5] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_PE, p, 6);
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == 4, "TAIL");
	CHECK(qrd(0, 1, NEURON_NQ_DROP_COUNT) == drop0 + 1, "DROP_COUNT");
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_SW_OVERFLOW), "intr_2");
	CHECK(!(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_HW_OVERFLOW)),
	      "intr_3 for a full software queue");
	CHECK(nq_drain(&n, r, 4) == 4, "drain the four");
	for (i = 0; i < 4; i++)
		CHECK(!rec_swovf(&r[i]), "record %u before the loss marked", i);
	p[0] = NOTIFY(0, 9);
	p[1] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_PE, p, 2);
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(nq_collect(&n, r, 1, 2000) == 1, "the record after the loss");
	CHECK(rec_swovf(&r[0]), "no software_queue_overflow on the record after the loss");
}

static void t_bad_head_and_threshold(void)
{
	insn_t p[6];
	unsigned int i;
	struct nq n;

	dev_reset();
	nq_open(&n, 0, 1, 256, 3);	/* 16 entries, threshold 3 */
	cwr(0, NEURON_DOORBELL(1), 5);	/* beyond TAIL = 0 */
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == 0, "bad HEAD accepted");
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_BAD_HEAD), "intr_7");
	CHECK(crd(0, NEURON_DOORBELL(1) + 4) == 0, "doorbell +4 not RAZ");

	for (i = 0; i < 5; i++)
		p[i] = NOTIFY(0, i);
	p[5] = I(NEURON_OP_HALT, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_ACT, p, 6);
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(crd(0, NEURON_NOTIFIC_THRESHOLD_STATUS) == 1u << 1, "THRESHOLD_STATUS 0x%x",
	      crd(0, NEURON_NOTIFIC_THRESHOLD_STATUS));
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_THRESHOLD), "intr_0");
	/* set once: clearing it and writing more records does not re-raise */
	cwr(0, NEURON_NOTIFIC_INTR_STATUS, NEURON_NOTIFIC_INTR_MASK_ALL);
	cwr(0, NEURON_NOTIFIC_THRESHOLD_STATUS, 1u << 1);
	prog_start(0, NEURON_ENGINE_ACT, p, 6);
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(!(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_THRESHOLD)),
	      "intr_0 re-raised without a HEAD write");
	/* HEAD write (to 10 of 10: accepted) re-arms */
	cwr(0, NEURON_DOORBELL(1), 10);
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == 10, "HEAD %u", qrd(0, 1, NEURON_NQ_HEAD));
	/* moving back is rejected */
	cwr(0, NEURON_DOORBELL(1), 9);
	CHECK(qrd(0, 1, NEURON_NQ_HEAD) == 10, "HEAD moved back");
	prog_start(0, NEURON_ENGINE_ACT, p, 6);
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_THRESHOLD), "intr_0 after re-arm");
}

/* ---- tests: semaphores and events -------------------------------------- */

static void t_semaphore_two_engines(void)
{
	insn_t pe[3] = { I(NEURON_OP_WAIT_GE_AND_DEC, 0, 5, 2), NOTIFY(0, 0xaa),
			 I(NEURON_OP_HALT, 0, 0, 0) };
	insn_t act[4] = { I(NEURON_OP_DELAY, 0, 0, 20000000),
			  I(NEURON_OP_SEM_INC, 0, 5, 1), I(NEURON_OP_SEM_INC, 0, 5, 1),
			  I(NEURON_OP_HALT, 0, 0, 0) };
	struct nq ex, es;
	rec_t r[2];
	unsigned int got;

	dev_reset();
	nq_open(&ex, 0, 1, 256, 0);
	nq_open(&es, 0, 2, 256, 0);
	prog_start(0, NEURON_ENGINE_PE, pe, 3);
	sleep_ms(20);
	CHECK(erd(0, NEURON_ENGINE_PE, NEURON_ENG_STATUS) == NEURON_ENGINE_WAITING,
	      "PE state %u", erd(0, NEURON_ENGINE_PE, NEURON_ENG_STATUS));
	CHECK(erd(0, NEURON_ENGINE_PE, NEURON_ENG_PC) == 0, "PE PC");
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == 0, "PE notified early");
	prog_start(0, NEURON_ENGINE_ACT, act, 4);
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "ACT idle");
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "PE idle");
	CHECK(sem_rd(0, 5) == 0, "sem 5 = %u", sem_rd(0, 5));
	got = nq_collect(&ex, r, 1, TIMEOUT_MS);
	CHECK(got == 1 && r[0].explicit_notif.debug_hint_extended == 0xaa &&
	      rec_type(&r[0]) == 0x06, "PE explicit record");
	got = nq_collect(&es, r, 2, TIMEOUT_MS);
	CHECK(got == 2, "EVT_SEM records %u", got);
	if (got == 2) {
		CHECK(rec_type(&r[0]) == 0x0b && rec_type(&r[1]) == 0x0b, "types");
		CHECK(r[0].evt_sem.event_semaphore_id == 5 &&
		      r[0].evt_sem.update_mode == NEURON_EVT_SEM_UPDATE_SEM_INC &&
		      !r[0].evt_sem.is_event && r[0].evt_sem.block_id == 1 &&
		      r[0].evt_sem.event_semaphore_value == 1, "first EVT_SEM");
		CHECK(r[1].evt_sem.event_semaphore_value == 2, "second value %u",
		      r[1].evt_sem.event_semaphore_value);
	}
}

static void t_events_block(void)
{
	insn_t p[2] = { NOTIFY(0, 0x77), I(NEURON_OP_HALT, 0, 0, 0) };
	struct nq ex, es;
	rec_t r[1];

	dev_reset();
	nq_open(&ex, 0, 1, 256, 0);
	nq_open(&es, 0, 2, 256, 0);
	p[0].events.wait_mode = NEURON_WAIT_EVENT_SET;
	p[0].events.wait_idx = 9;
	p[0].events.update_mode = NEURON_EVT_SEM_UPDATE_SEM_SET;
	p[0].events.update_idx = 7;
	p[0].events.semaphore_value = htole32(42);
	prog_start(0, NEURON_ENGINE_SP, p, 2);
	sleep_ms(20);
	CHECK(erd(0, NEURON_ENGINE_SP, NEURON_ENG_STATUS) == NEURON_ENGINE_WAITING,
	      "not waiting on the event");
	cwr(0, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_EVENT(9), 1);
	CHECK(crd(0, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_EVENT(9)) == 1, "EVENT read");
	CHECK(eng_wait(0, NEURON_ENGINE_SP, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(sem_rd(0, 7) == 42, "sem 7 = %u", sem_rd(0, 7));
	CHECK(nq_collect(&ex, r, 1, TIMEOUT_MS) == 1 &&
	      r[0].explicit_notif.debug_hint_extended == 0x77, "explicit");
	CHECK(nq_collect(&es, r, 1, TIMEOUT_MS) == 1, "EVT_SEM record");
	CHECK(rec_type(&r[0]) == 0x17 && r[0].evt_sem.event_semaphore_id == 7 &&
	      r[0].evt_sem.update_mode == NEURON_EVT_SEM_UPDATE_SEM_SET &&
	      r[0].evt_sem.event_semaphore_value == 42 && r[0].evt_sem.block_id == 4,
	      "EVT_SEM fields");
	CHECK(intr_status(0) == 0, "INTR_STATUS 0x%x", intr_status(0));

	/* host windows */
	cwr(0, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_SET(3), 10);
	cwr(0, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_INC(3), 5);
	cwr(0, NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_DEC(3), 3);
	CHECK(sem_rd(0, 3) == 12, "sem 3 = %u", sem_rd(0, 3));
	CHECK(sem_rd(1, 3) == 0, "core 1 shares core 0's semaphores");
}

/* ---- tests: errors ------------------------------------------------------ */

static void t_bad_opcode_fatal(void)
{
	const unsigned int e = NEURON_ENGINE_DVE;
	insn_t p[3] = { I(NEURON_OP_NOP, 0, 0, 0), I(0x7f, 0, 0, 0), NOTIFY(0, 1) };
	insn_t ok[2] = { I(NEURON_OP_NOP, 0, 0, 0), I(NEURON_OP_HALT, 0, 0, 0) };
	insn_t rsv[1] = { I(NEURON_OP_NOP, 0, 0, 0) };
	struct nq er, ex;
	uint32_t src;
	rec_t r[4];

	dev_reset();
	nq_open(&er, 0, 3, 256, 0);
	nq_open(&ex, 0, 1, 256, 0);
	prog_start(0, e, p, 3);
	CHECK(eng_wait(0, e, NEURON_ENGINE_HALTED, TIMEOUT_MS), "not HALTED");
	CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1, "no error record");
	CHECK(rec_type(&r[0]) == NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR, "type 0x%x",
	      rec_type(&r[0]));
	CHECK(rec_phase(&r[0]) == 1, "phase");
	CHECK(r[0].tpb_error.error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL,
	      "error_id 0x%x", r[0].tpb_error.error_id);
	CHECK(r[0].tpb_error.metadata_hi.sequencer.block_id == e, "block_id");
	CHECK(r[0].tpb_error.metadata_hi.sequencer.program_counter == 1, "pc");
	CHECK(r[0].tpb_error.metadata_hi.sequencer.info == 0x7f, "info");
	CHECK(r[0].tpb_error.metadata_lo.sequencer.info_kind ==
	      NEURON_ISA_SEQ_INFO_BAD_OPCODE, "info_kind");
	CHECK(erd(0, e, NEURON_ENG_LAST_ERROR) == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL,
	      "LAST_ERROR 0x%x", erd(0, e, NEURON_ENG_LAST_ERROR));
	CHECK(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_ENGINE_FATAL), "intr_6");
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == 0, "instruction after the bad one ran");

	/* START is ignored while HALTED; only RESET leaves it */
	src = erd(0, e, NEURON_ENG_SOFT_RESET_COUNTER);
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_START);
	sleep_ms(10);
	CHECK(erd(0, e, NEURON_ENG_STATUS) == NEURON_ENGINE_HALTED, "left HALTED");
	CHECK(erd(0, e, NEURON_ENG_SOFT_RESET_COUNTER) == src, "START counted");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	CHECK(erd(0, e, NEURON_ENG_STATUS) == NEURON_ENGINE_IDLE, "RESET not IDLE");
	CHECK(erd(0, e, NEURON_ENG_PC) == 0, "RESET PC");
	prog_start(0, e, ok, 2);
	CHECK(eng_wait(0, e, NEURON_ENGINE_IDLE, TIMEOUT_MS), "rerun");
	CHECK(erd(0, e, NEURON_ENG_PC) == 2, "rerun PC");

	/* nonzero reserved field */
	rsv[0].flags = 1;
	prog_start(0, e, rsv, 1);
	CHECK(eng_wait(0, e, NEURON_ENGINE_HALTED, TIMEOUT_MS), "flags=1 not fatal");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	rsv[0].flags = 0;
	rsv[0].events.wait_mode = 9;
	prog_start(0, e, rsv, 1);
	CHECK(eng_wait(0, e, NEURON_ENGINE_HALTED, TIMEOUT_MS), "wait_mode=9 not fatal");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	rsv[0] = I(NEURON_OP_SEM_INC, 0, 256, 1);
	prog_start(0, e, rsv, 1);
	CHECK(eng_wait(0, e, NEURON_ENGINE_HALTED, TIMEOUT_MS), "sem 256 not fatal");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	CHECK(nq_collect(&er, r, 3, TIMEOUT_MS) == 3, "three more error records");
}

static void t_fp_error_nonfatal(void)
{
	insn_t p[3] = { I(NEURON_OP_FP_ERROR, 0, 0x10, NEURON_ISA_TPB_ERROR_FP_NAN),
			NOTIFY(0, 9), I(NEURON_OP_HALT, 0, 0, 0) };
	struct nq er, ex;
	uint32_t last0;
	rec_t r[1];

	dev_reset();
	nq_open(&er, 0, 3, 256, 0);
	nq_open(&ex, 0, 1, 256, 0);
	last0 = erd(0, NEURON_ENGINE_ACT, NEURON_ENG_LAST_ERROR);
	prog_start(0, NEURON_ENGINE_ACT, p, 3);
	CHECK(eng_wait(0, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1, "error record");
	CHECK(rec_type(&r[0]) == 0x1f && r[0].tpb_error.error_id == 1 &&
	      r[0].tpb_error.metadata_hi.sequencer.info == 0x10 &&
	      r[0].tpb_error.metadata_hi.sequencer.block_id == 1 &&
	      r[0].tpb_error.metadata_lo.sequencer.info_kind == NEURON_ISA_SEQ_INFO_FP,
	      "fields");
	CHECK(nq_collect(&ex, r, 1, TIMEOUT_MS) == 1, "engine did not continue");
	CHECK(erd(0, NEURON_ENGINE_ACT, NEURON_ENG_LAST_ERROR) == last0, "LAST_ERROR");
	CHECK(!(intr_status(0) & (1u << NEURON_NOTIFIC_INTR_ENGINE_FATAL)), "intr_6");
}

static void t_throttle(void)
{
	insn_t p[2] = { I(NEURON_OP_THROTTLE, 0, 0, 7), I(NEURON_OP_HALT, 0, 0, 0) };
	struct nq th;
	rec_t r[1];

	dev_reset();
	nq_open(&th, 0, 4, 256, 0);
	wr(NEURON_REG_THROTTLE_CTRL, 1);
	prog_start(0, NEURON_ENGINE_PE, p, 2);
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(rd(NEURON_REG_THROTTLE_STATUS) & 1, "THROTTLE_STATUS");
	CHECK(nq_collect(&th, r, 1, TIMEOUT_MS) == 1, "throttle record");
	CHECK(rec_type(&r[0]) == NEURON_ISA_NOTIFICATION_TYPE_ERROR &&
	      r[0].interrupt.group == NEURON_ISA_INTERRUPT_GROUP_THROTTLE &&
	      r[0].interrupt.block_id == 0 && r[0].interrupt.cause_bits == 7,
	      "record fields");
	wr(NEURON_REG_THROTTLE_STATUS, 1);
	CHECK(!(rd(NEURON_REG_THROTTLE_STATUS) & 1), "W1C");
	wr(NEURON_REG_THROTTLE_CTRL, 0);
	prog_start(0, NEURON_ENGINE_PE, p, 2);
	CHECK(eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(rd(NEURON_REG_THROTTLE_STATUS) & 1, "edge while disarmed");
	CHECK(qrd(0, 4, NEURON_NQ_TAIL) == 1, "record while disarmed");
}

static void t_feature_flags(void)
{
	const unsigned int e = NEURON_ENGINE_POOL;

	dev_reset();
	ewr(0, e, NEURON_ENG_FEATURE_FLAGS, NEURON_FEATURE_DGE_PACKET_NOTIF);
	if (gen == NEURON_GEN_SUNDA) {
		CHECK(erd(0, e, NEURON_ENG_FEATURE_FLAGS) == 0, "sunda reads %u",
		      erd(0, e, NEURON_ENG_FEATURE_FLAGS));
		return;
	}
	CHECK(erd(0, e, NEURON_ENG_FEATURE_FLAGS) == NEURON_FEATURE_DGE_PACKET_NOTIF,
	      "read back");
	ewr(0, e, NEURON_ENG_FEATURE_FLAGS, 0xff);
	CHECK(erd(0, e, NEURON_ENG_FEATURE_FLAGS) == NEURON_FEATURE_MASK, "mask");
	/* engine RESET keeps it, $S too */
	ewr(0, e, NEURON_ENG_SREG(63), 0x1234);
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	CHECK(erd(0, e, NEURON_ENG_FEATURE_FLAGS) == NEURON_FEATURE_MASK, "lost on RESET");
	CHECK(erd(0, e, NEURON_ENG_SREG(63)) == 0x1234, "$S lost on RESET");
}

static void t_global_reset(void)
{
	insn_t p[2] = { I(NEURON_OP_DELAY, 0, 0, 2000000000u), I(NEURON_OP_HALT, 0, 0, 0) };
	struct nq n;

	dev_reset();
	nq_open(&n, 1, 0, 64, 0);
	prog_start(1, NEURON_ENGINE_SP, p, 2);
	sleep_ms(5);
	CHECK(erd(1, NEURON_ENGINE_SP, NEURON_ENG_STATUS) == NEURON_ENGINE_RUNNING,
	      "DELAY not RUNNING");
	wr(NEURON_REG_RESET, 1);
	CHECK(erd(1, NEURON_ENGINE_SP, NEURON_ENG_STATUS) == NEURON_ENGINE_IDLE, "not idle");
	CHECK(crd(1, NEURON_NOTIFIC_QUEUE_ENABLE) == 0, "queues still enabled");
	CHECK(wait_ready(TIMEOUT_MS), "READY after RESET");
	/* a queue with a bad SIZE refuses to enable */
	qwr(1, 2, NEURON_NQ_SIZE, 100);
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 1u << 2);
	CHECK(crd(1, NEURON_NOTIFIC_QUEUE_ENABLE) == 0, "SIZE 100 enabled");
	/* BASE cannot change while enabled */
	nq_open(&n, 1, 0, 64, 0);
	qwr(1, 0, NEURON_NQ_BASE_LO, 0x1230);
	CHECK(qrd(1, 0, NEURON_NQ_BASE_LO) == (uint32_t)RING_OFF(1, 0), "BASE changed");
}

/* ---- tests: DGE (docs/hardware.md#dge) ----------------------------------- */

static insn_t DGE(uint32_t src, uint32_t dst, uint32_t len, uint8_t bc_src,
		  uint8_t bc_dst, uint8_t indirect, uint8_t backend)
{
	insn_t in = I(NEURON_OP_DGE_COPY, 0, 0, 0);

	in.operand.dge.src = htole32(src);
	in.operand.dge.dst = htole32(dst);
	in.operand.dge.length = htole32(len);
	in.operand.dge.bc_src = bc_src;
	in.operand.dge.bc_dst = bc_dst;
	in.operand.dge.indirect = indirect;
	in.operand.dge.backend = backend;
	return in;
}

/*
 * BOUND_CHECK_REG byte (docs/hardware.md#dge-bounds-reg): bc_reg bits 5..0,
 * bc_disable_oob_error_notif bit 6, bc_enabled bit 7
 */
#define BC(reg, nonotif, en)	((uint8_t)((reg) | (nonotif) << 6 | (en) << 7))
/*
 * DMA_INDIRECT_FLAGS byte (docs/hardware.md#dge-indirect): indirect_mode
 * bits 1..0, idx_bound_is_err bit 2, ...
 */
#define IND(mode, is_err)	((uint8_t)((mode) | (is_err) << 2))

static uint8_t pattern[256], zero[256];

static void dge_prepare(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 7 + 3);
	vwrite(mem + DGE_SRC, pattern, sizeof(pattern));
	vfill(mem + DGE_DST, 0, sizeof(pattern));
}

static bool dge_copied(void)
{
	uint8_t buf[256];

	vread(buf, mem + DGE_DST, sizeof(buf));
	return !memcmp(buf, pattern, sizeof(buf));
}

static bool dge_untouched(void)
{
	uint8_t buf[256];

	vread(buf, mem + DGE_DST, sizeof(buf));
	return !memcmp(buf, zero, sizeof(buf));
}

/* Runs @in then NOTIFY on POOL; returns the final engine state. */
static uint32_t dge_run(insn_t in, uint32_t flags)
{
	const unsigned int e = NEURON_ENGINE_POOL;
	insn_t p[3] = { in, NOTIFY(0, 0xd0), I(NEURON_OP_HALT, 0, 0, 0) };

	ewr(0, e, NEURON_ENG_FEATURE_FLAGS, flags);
	dge_prepare();
	prog_start(0, e, p, 3);
	eng_wait(0, e, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	return erd(0, e, NEURON_ENG_STATUS);
}

static void t_dge(void)
{
	const unsigned int e = NEURON_ENGINE_POOL;
	const uint32_t bit1 = NEURON_FEATURE_DGE_PACKET_NOTIF;
	struct nq er, dg, ex;
	rec_t r[2];
	uint32_t t3, t5;

	dev_reset();
	nq_open(&er, 0, 3, 256, 0);
	nq_open(&dg, 0, 5, 256, 0);
	nq_open(&ex, 0, 1, 1024, 0);
	/* limits: $S[10..11] src, $S[12..13] dst */
	ewr(0, e, NEURON_ENG_SREG(10), DGE_SRC + 255);
	ewr(0, e, NEURON_ENG_SREG(11), 0);
	ewr(0, e, NEURON_ENG_SREG(12), DGE_DST + 255);
	ewr(0, e, NEURON_ENG_SREG(13), 0);

	if (gen == NEURON_GEN_SUNDA) {
		CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
				  NEURON_DGE_BACKEND_POOL), bit1) == NEURON_ENGINE_HALTED,
		      "sunda: DGE_COPY not fatal");
		CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1 &&
		      r[0].tpb_error.error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL &&
		      r[0].tpb_error.metadata_lo.sequencer.info_kind ==
		      NEURON_ISA_SEQ_INFO_BAD_OPCODE &&
		      r[0].tpb_error.metadata_hi.sequencer.info == NEURON_OP_DGE_COPY,
		      "sunda: error record");
		CHECK(dge_untouched(), "sunda copied");
		return;
	}

	/* a) in bounds, bit 1: copy + DGE_METADATA */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_POOL), bit1) == NEURON_ENGINE_IDLE, "a idle");
	CHECK(dge_copied(), "a: not copied");
	CHECK(nq_collect(&dg, r, 1, TIMEOUT_MS) == 1, "a: no DGE record");
	CHECK(rec_type(&r[0]) == NEURON_ENGINE_NOTIFIC_TYPE(e, NEURON_ENGINE_RECORD_EXPLICIT) &&
	      r[0].dge_metadata.debug_hint == NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE &&
	      r[0].dge_metadata.program_counter == 0 && rec_phase(&r[0]) == 1,
	      "a: DGE record fields");
	t3 = qrd(0, 3, NEURON_NQ_TAIL);
	CHECK(t3 == 0, "a: error record");

	/* b) in bounds, bit 1 clear: copy, no record */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_RTL), 0) == NEURON_ENGINE_IDLE, "b idle");
	CHECK(dge_copied(), "b: not copied");
	CHECK(qrd(0, 5, NEURON_NQ_TAIL) == 1, "b: DGE record without bit 1");

	/* c) src OOB, bit 1, suppress 0: not emitted, NONFATAL record, continue */
	ewr(0, e, NEURON_ENG_SREG(10), DGE_SRC + 100);
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_POOL), bit1) == NEURON_ENGINE_IDLE,
	      "c: engine halted");
	CHECK(dge_untouched(), "c: copied");
	CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1, "c: no error record");
	CHECK(rec_type(&r[0]) == NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR &&
	      r[0].tpb_error.error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL &&
	      r[0].tpb_error.metadata_lo.sequencer.info_kind == NEURON_ISA_SEQ_INFO_DGE_BOUNDS &&
	      r[0].tpb_error.metadata_lo.sequencer.direction == NEURON_DGE_DIR_SRC &&
	      r[0].tpb_error.metadata_lo.sequencer.bc_reg == 10 &&
	      r[0].tpb_error.metadata_hi.sequencer.block_id == e &&
	      r[0].tpb_error.metadata_hi.sequencer.program_counter == 0,
	      "c: record fields");
	t5 = qrd(0, 5, NEURON_NQ_TAIL);
	CHECK(t5 == 1, "c: DGE success record");

	/* d) src OOB, suppress 1: nothing */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 1, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_POOL), bit1) == NEURON_ENGINE_IDLE, "d");
	CHECK(dge_untouched(), "d: copied");
	/* e) src OOB, bit 1 clear: nothing */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_POOL), 0) == NEURON_ENGINE_IDLE, "e");
	CHECK(dge_untouched(), "e: copied");
	CHECK(qrd(0, 3, NEURON_NQ_TAIL) == 1, "d/e: error record written");

	/* f) dst OOB only, and src suppressed: dst reported */
	ewr(0, e, NEURON_ENG_SREG(10), DGE_SRC + 255);
	ewr(0, e, NEURON_ENG_SREG(12), DGE_DST);
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 1, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_POOL), bit1) == NEURON_ENGINE_IDLE, "f");
	CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1 &&
	      r[0].tpb_error.metadata_lo.sequencer.direction == NEURON_DGE_DIR_DST &&
	      r[0].tpb_error.metadata_lo.sequencer.bc_reg == 12, "f: dst record");
	ewr(0, e, NEURON_ENG_SREG(12), DGE_DST + 255);

	/* g) backend NONE: nothing, continue */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_NONE), bit1) == NEURON_ENGINE_IDLE, "g");
	CHECK(dge_untouched(), "g: copied");
	CHECK(qrd(0, 3, NEURON_NQ_TAIL) == 2 && qrd(0, 5, NEURON_NQ_TAIL) == 1,
	      "g: records");

	/* h) bounds check off on both: valid only as all-zero; copy happens */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, 0, 0, 0, NEURON_DGE_BACKEND_POOL),
		      bit1) == NEURON_ENGINE_IDLE, "h");
	CHECK(dge_copied(), "h: not copied");

	/* i) structural: disabled but bc_reg != 0 -> SEQUENCER_FATAL, halt */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(5, 0, 0), BC(12, 0, 1), 0,
			  NEURON_DGE_BACKEND_POOL), bit1) == NEURON_ENGINE_HALTED,
	      "i: not HALTED");
	CHECK(dge_untouched(), "i: copied");
	CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1 &&
	      r[0].tpb_error.error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL &&
	      r[0].tpb_error.metadata_lo.sequencer.info_kind == NEURON_ISA_SEQ_INFO_DGE_INVALID &&
	      r[0].tpb_error.metadata_hi.sequencer.info == NEURON_DGE_DIR_SRC,
	      "i: fatal record");
	CHECK(erd(0, e, NEURON_ENG_LAST_ERROR) == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL,
	      "i: LAST_ERROR");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);

	/* j) structural: wide offsets, bc_reg 63 has no $S[64] for the high half */
	{
		insn_t w = DGE(DGE_SRC, DGE_DST, 256, BC(63, 0, 1), 0, 0,
			       NEURON_DGE_BACKEND_POOL);

		w.flags = NEURON_DGE_F_WIDE_OFFSET;
		CHECK(dge_run(w, bit1) == NEURON_ENGINE_HALTED, "j");
	}
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	/* k) structural: unknown backend */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, 0, 0, 0, 3), bit1) ==
	      NEURON_ENGINE_HALTED, "k");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	/* l) gather: silent (suppress 1) and not an error (is_err 0) -> invalid */
	CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 1, 1), BC(12, 0, 1),
			  IND(1, 0), NEURON_DGE_BACKEND_POOL), bit1) ==
	      NEURON_ENGINE_HALTED, "l");
	ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	CHECK(nq_collect(&er, r, 2, TIMEOUT_MS) == 2, "j/k/l records");
	CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1, "j/k/l records");
	/*
	 * m) gather, 1-byte elements, identity index table (emu_isa.h) except
	 * index 7 = 200 > the index bound 100, idx_bound_is_err: an error that
	 * the suppress bit cannot silence
	 * (docs/decisions/0018-dge-index-path.md): SEQUENCER_FATAL {DGE_BOUNDS,
	 * direction src, info src | src index}, halted, nothing copied
	 */
	{
		uint32_t idx[256];
		insn_t g = DGE(DGE_SRC, DGE_DST, 256, BC(10, 1, 1), BC(12, 0, 1),
			       IND(1, 1), NEURON_DGE_BACKEND_POOL);
		unsigned int i;

		for (i = 0; i < 256; i++)
			idx[i] = i;
		idx[7] = 200;
		vwrite(mem + DGE_IDX, idx, sizeof(idx));
		g.reserved0 = htole32(DGE_IDX);
		ewr(0, e, NEURON_ENG_SREG(10), 100);
		CHECK(dge_run(g, bit1) == NEURON_ENGINE_HALTED, "m: not halted");
		CHECK(nq_collect(&er, r, 1, TIMEOUT_MS) == 1 &&
		      r[0].tpb_error.error_id == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL &&
		      r[0].tpb_error.metadata_lo.sequencer.info_kind ==
		      NEURON_ISA_SEQ_INFO_DGE_BOUNDS &&
		      r[0].tpb_error.metadata_lo.sequencer.direction == NEURON_DGE_DIR_SRC &&
		      r[0].tpb_error.metadata_hi.sequencer.info == 0x5,
		      "m: record");
		CHECK(dge_untouched(), "m: copied");
		ewr(0, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
		/* m2) every index <= the bound 255: copied element by element */
		idx[7] = 7;
		vwrite(mem + DGE_IDX, idx, sizeof(idx));
		ewr(0, e, NEURON_ENG_SREG(10), 255);
		CHECK(dge_run(g, bit1) == NEURON_ENGINE_IDLE, "m2: halted");
		CHECK(dge_copied(), "m2: not copied");
		CHECK(nq_collect(&dg, r, 1, TIMEOUT_MS) == 1, "m2: no DGE record");
	}
	ewr(0, e, NEURON_ENG_SREG(10), DGE_SRC + 255);

	/* n) wide offsets: $S[11] high half makes a low $S[10] a big limit */
	ewr(0, e, NEURON_ENG_SREG(10), 0);
	ewr(0, e, NEURON_ENG_SREG(11), 1);
	{
		insn_t w = DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
			       NEURON_DGE_BACKEND_POOL);

		w.flags = NEURON_DGE_F_WIDE_OFFSET;
		CHECK(dge_run(w, 0) == NEURON_ENGINE_IDLE, "n");
		CHECK(dge_copied(), "n: not copied");
		/* n2) narrow: $S[11] is not read, limit 0 fails the source */
		CHECK(dge_run(DGE(DGE_SRC, DGE_DST, 256, BC(10, 0, 1), BC(12, 0, 1), 0,
				  NEURON_DGE_BACKEND_POOL), 0) == NEURON_ENGINE_IDLE, "n2");
		CHECK(dge_untouched(), "n2: copied with a stale high half");
	}

	/* o) trace data_crc: INST_START has the source CRC, INST_END the dest */
	cwr(0, NEURON_NOTIFIC_TRACE_ENABLE, 1u << e);
	cwr(0, NEURON_NOTIFIC_ROUTE, NEURON_ROUTE_DEFAULT & ~0xfu);
	{
		struct nq tr;
		rec_t t[2];

		nq_open(&tr, 0, 0, 256, 0);
		dge_run(DGE(DGE_SRC, DGE_DST, 256, 0, 0, 0, NEURON_DGE_BACKEND_POOL), 0);
		CHECK(nq_collect(&tr, t, 2, TIMEOUT_MS) == 2, "o: trace records");
		CHECK(t[0].trace.data_crc == crc16(pattern, 256) &&
		      t[1].trace.data_crc == crc16(pattern, 256), "o: crc 0x%x 0x%x want 0x%x",
		      t[0].trace.data_crc, t[1].trace.data_crc, crc16(pattern, 256));
	}
	/* every non-halting run reached its NOTIFY */
	CHECK(qrd(0, 1, NEURON_NQ_TAIL) == 12, "NOTIFY after DGE ran %u times",
	      qrd(0, 1, NEURON_NQ_TAIL));
}

/* ---- tests: host DMA ring and MSI-X ------------------------------------- */

static uint64_t virt_to_phys(void *p)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, 8, ((uintptr_t)p / 4096) * 8) != 8)
		ent = 0;
	close(fd);
	if (!(ent >> 63))
		return 0;
	return (ent & ((1ull << 55) - 1)) * 4096 + ((uintptr_t)p & 4095);
}

static uint16_t cfg_rd16(unsigned int off)
{
	uint16_t v = 0;

	if (pread(cfg_fd, &v, 2, off) != 2)
		return 0xffff;
	return v;
}

static uint32_t cfg_rd32(unsigned int off)
{
	uint32_t v = 0;

	if (pread(cfg_fd, &v, 4, off) != 4)
		return ~0u;
	return v;
}

static void cfg_wr16(unsigned int off, uint16_t v)
{
	if (pwrite(cfg_fd, &v, 2, off) != 2)
		printf("# config write at 0x%x failed: %s\n", off, strerror(errno));
}

static void bus_master(bool on)
{
	uint16_t cmd = cfg_rd16(4);

	cfg_wr16(4, on ? cmd | 0x4 : cmd & ~0x4);
}

static volatile uint32_t *dma_page;
static uint64_t dma_phys;

static bool dma_page_get(void)
{
	void *p;

	if (dma_page)
		return true;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_LOCKED | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	memset(p, 0, 4096);
	dma_phys = virt_to_phys(p);
	if (!dma_phys)
		return false;
	dma_page = p;
	return true;
}

static void t_host_dma_ring(void)
{
	insn_t p[4] = { NOTIFY(0, 1), NOTIFY(0, 2), NOTIFY(0, 3), I(NEURON_OP_HALT, 0, 0, 0) };
	volatile uint8_t *ring;
	uint32_t drop0;
	rec_t r;
	int i;

	if (!dma_page_get()) {
		CHECK(0, "no physical address for a DMA page (/proc/self/pagemap)");
		return;
	}
	ring = (volatile uint8_t *)dma_page + 2048;	/* 1 KiB ring, 64 entries */
	vfill(ring, 0, 1024);
	dev_reset();
	bus_master(true);
	qwr(1, 1, NEURON_NQ_BASE_LO, (uint32_t)(dma_phys + 2048));
	qwr(1, 1, NEURON_NQ_BASE_HI, (uint32_t)((dma_phys + 2048) >> 32));
	qwr(1, 1, NEURON_NQ_SIZE, 1024);
	qwr(1, 1, NEURON_NQ_CTRL, 0);
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 1u << 1);
	prog_start(1, NEURON_ENGINE_POOL, p, 4);
	CHECK(eng_wait(1, NEURON_ENGINE_POOL, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(qrd(1, 1, NEURON_NQ_TAIL) == 3, "TAIL %u", qrd(1, 1, NEURON_NQ_TAIL));
	for (i = 0; i < 3; i++) {
		vread(&r, ring + i * 16, 16);
		CHECK(rec_type(&r) == 0x0e && rec_phase(&r) == 1 &&
		      r.explicit_notif.debug_hint_extended == i + 1,
		      "host record %d: type 0x%x ext %u", i, rec_type(&r),
		      r.explicit_notif.debug_hint_extended);
	}
	CHECK(!(intr_status(1) & (1u << NEURON_NOTIFIC_INTR_AXI_WRITE_ERROR)), "intr_4");

	/* a ring at an address nothing decodes: the write fails, the record drops */
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 0);
	qwr(1, 1, NEURON_NQ_BASE_LO, 0);
	qwr(1, 1, NEURON_NQ_BASE_HI, 0x10000);	/* 2^48 */
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 1u << 1);
	drop0 = qrd(1, 1, NEURON_NQ_DROP_COUNT);
	prog_start(1, NEURON_ENGINE_POOL, p, 4);
	CHECK(eng_wait(1, NEURON_ENGINE_POOL, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(qrd(1, 1, NEURON_NQ_DROP_COUNT) == drop0 + 3, "DROP_COUNT +%u",
	      qrd(1, 1, NEURON_NQ_DROP_COUNT) - drop0);
	CHECK(qrd(1, 1, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_DMA_ERROR, "DMA_ERROR");
	CHECK(qrd(1, 1, NEURON_NQ_TAIL) == 0, "TAIL moved");
	CHECK(intr_status(1) & (1u << NEURON_NOTIFIC_INTR_AXI_WRITE_ERROR), "intr_4");
	CHECK(rd(NEURON_REG_FAULT_STATUS) & NEURON_FAULT_DMA_ERROR, "FAULT_STATUS");
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 0);
	bus_master(false);
}

/* MSI-X vectors aimed at plain memory: each edge is a 32-bit write we can see. */
static void t_msix_edges(void)
{
	insn_t drop[2] = { NOTIFY(0, 1), I(NEURON_OP_HALT, 0, 0, 0) };
	insn_t thr[2] = { I(NEURON_OP_THROTTLE, 0, 0, 1), I(NEURON_OP_HALT, 0, 0, 0) };
	unsigned int cap = cfg_rd16(0x34) & 0xff, guard = 0, v;
	uint32_t tbl;
	uint16_t ctl;
	volatile uint32_t *slot;

	while (cap && guard++ < 48) {
		if ((cfg_rd16(cap) & 0xff) == 0x11)
			break;
		cap = cfg_rd16(cap) >> 8;
	}
	if (!cap || (cfg_rd16(cap) & 0xff) != 0x11) {
		CHECK(0, "no MSI-X capability");
		return;
	}
	ctl = cfg_rd16(cap + 2);
	CHECK((ctl & 0x7ffu) + 1 == ncores + 2, "MSI-X table size %u", (ctl & 0x7ff) + 1);
	tbl = cfg_rd32(cap + 4);
	CHECK((tbl & 7) == NEURON_BAR_MSIX, "table BIR %u", tbl & 7);
	if (!bar2 || !dma_page_get()) {
		CHECK(0, "no BAR2 mapping or DMA page");
		return;
	}
	dev_reset();
	slot = dma_page;
	for (v = 0; v < 16; v++)
		slot[v] = 0;
	for (v = 0; v < ncores + 2; v++) {
		volatile uint32_t *ent = (volatile uint32_t *)(bar2 + (tbl & ~7u) + v * 16);

		ent[0] = (uint32_t)(dma_phys + v * 4);
		ent[1] = (uint32_t)((dma_phys + v * 4) >> 32);
		ent[2] = 0xc0de0000 | v;
		ent[3] = 0;		/* unmasked */
	}
	bus_master(true);
	cfg_wr16(cap + 2, (ctl & ~0x4000) | 0x8000);	/* enable, no function mask */

	/* core 0 vector: fires on 0 -> nonzero of STATUS & MASK */
	cwr(0, NEURON_NOTIFIC_INTR_MASK, 1u << NEURON_NOTIFIC_INTR_DISABLED_QUEUE);
	cwr(0, NEURON_NOTIFIC_ROUTE, (NEURON_ROUTE_DEFAULT & ~0xf0u) | 0x70u);
	prog_start(0, NEURON_ENGINE_PE, drop, 2);
	eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	CHECK(slot[0] == 0xc0de0000, "core 0 vector not sent: 0x%x", slot[0]);
	slot[0] = 0;
	prog_start(0, NEURON_ENGINE_PE, drop, 2);	/* status still set: no edge */
	eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	CHECK(slot[0] == 0, "vector sent without an edge");
	cwr(0, NEURON_NOTIFIC_INTR_STATUS, NEURON_NOTIFIC_INTR_MASK_ALL);
	prog_start(0, NEURON_ENGINE_PE, drop, 2);	/* cleared: new edge */
	eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	CHECK(slot[0] == 0xc0de0000, "no edge after W1C");
	slot[0] = 0;
	/* a cause set while masked fires when it is unmasked */
	cwr(0, NEURON_NOTIFIC_INTR_STATUS, NEURON_NOTIFIC_INTR_MASK_ALL);
	cwr(0, NEURON_NOTIFIC_INTR_MASK, 0);
	prog_start(0, NEURON_ENGINE_PE, drop, 2);
	eng_wait(0, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	CHECK(slot[0] == 0, "masked cause sent");
	cwr(0, NEURON_NOTIFIC_INTR_MASK, 1u << NEURON_NOTIFIC_INTR_DISABLED_QUEUE);
	CHECK(slot[0] == 0xc0de0000, "unmasking a pending cause did not fire");
	CHECK(slot[1] == 0, "core 1 vector fired");

	/* throttle vector */
	prog_start(1, NEURON_ENGINE_ACT, thr, 2);
	eng_wait(1, NEURON_ENGINE_ACT, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	CHECK(slot[ncores] == (0xc0de0000 | ncores), "throttle vector: 0x%x", slot[ncores]);

	/* fault vector: a ring write that fails (nothing decodes 2^48) */
	wr(NEURON_REG_FAULT_MASK, NEURON_FAULT_DMA_ERROR);
	CHECK(slot[ncores + 1] == 0, "fault vector early");
	qwr(1, 1, NEURON_NQ_BASE_LO, 0);
	qwr(1, 1, NEURON_NQ_BASE_HI, 0x10000);
	qwr(1, 1, NEURON_NQ_SIZE, 1024);
	qwr(1, 1, NEURON_NQ_CTRL, 0);
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 1u << 1);
	prog_start(1, NEURON_ENGINE_PE, drop, 2);
	eng_wait(1, NEURON_ENGINE_PE, NEURON_ENGINE_IDLE, TIMEOUT_MS);
	CHECK(slot[ncores + 1] == (0xc0de0000 | (ncores + 1)), "fault vector: 0x%x",
	      slot[ncores + 1]);

	cfg_wr16(cap + 2, ctl & ~0x8000);
	bus_master(false);
	dev_reset();
}

/* ---- tests: reset, quiesce, FLR, power management ---------------------- */

/* Config-space offset of capability @id, 0 if absent. */
static unsigned int cfg_find_cap(unsigned int id)
{
	unsigned int cap = cfg_rd16(0x34) & 0xfc, guard = 0;

	while (cap && guard++ < 48) {
		if ((cfg_rd16(cap) & 0xff) == id)
			return cap;
		cap = (cfg_rd16(cap) >> 8) & 0xfc;
	}
	return 0;
}

/*
 * RESET completes after reset-latency-us: until then DEV_STATUS reads 0 and
 * a write to a core's registers is ignored; afterwards it reads
 * READY | QUIESCED (0x3).
 */
static void t_dev_status_reset(void)
{
	uint32_t st0 = ~0u, st1 = ~0u, st, idle = stuck_busy < 0 ? 0x3 : 0x1;
	uint64_t t0 = 0, waited = 0;
	int tries;

	dev_reset();
	CHECK(rd(NEURON_REG_DEV_STATUS) == idle, "DEV_STATUS 0x%x before RESET",
	      rd(NEURON_REG_DEV_STATUS));
	/*
	 * With the default 100 us a vCPU thread descheduled for that long
	 * misses the window; a device that is not asynchronous never shows it.
	 */
	for (tries = 0; tries < 5; tries++) {
		t0 = now_ms();
		wr(NEURON_REG_RESET, 1);
		st0 = rd(NEURON_REG_DEV_STATUS);
		cwr(0, NEURON_NOTIFIC_INTR_MASK, 0x1ff);
		st1 = rd(NEURON_REG_DEV_STATUS);
		if (st0 == 0 && st1 == 0)
			break;
		wait_ready(TIMEOUT_MS);
		cwr(0, NEURON_NOTIFIC_INTR_MASK, 0);
	}
	CHECK(st0 == 0, "DEV_STATUS 0x%x right after RESET", st0);
	CHECK(st1 == 0, "DEV_STATUS 0x%x after a core write", st1);
	while ((st = rd(NEURON_REG_DEV_STATUS)) == 0 && now_ms() < t0 + TIMEOUT_MS)
		;
	waited = now_ms() - t0;
	CHECK(st != 0, "READY never came back");
	sleep_ms(reset_latency_us / 1000 + 2);
	CHECK(rd(NEURON_REG_DEV_STATUS) == idle, "DEV_STATUS 0x%x after %llu ms",
	      rd(NEURON_REG_DEV_STATUS), (unsigned long long)waited);
	CHECK(crd(0, NEURON_NOTIFIC_INTR_MASK) == 0,
	      "INTR_MASK 0x%x: a write during the reset took effect",
	      crd(0, NEURON_NOTIFIC_INTR_MASK));
	/* a latency long enough to see: READY is not early */
	if (reset_latency_us >= 10000)
		CHECK(waited >= (uint64_t)reset_latency_us / 2000,
		      "READY after %llu ms, latency %ld us",
		      (unsigned long long)waited, reset_latency_us);
	/* the global page stays writable during a reset */
	wr(NEURON_REG_RESET, 1);
	wr(NEURON_REG_FAULT_MASK, NEURON_FAULT_DMA_ERROR);
	CHECK(rd(NEURON_REG_FAULT_MASK) == NEURON_FAULT_DMA_ERROR, "FAULT_MASK");
	wr(NEURON_REG_FAULT_MASK, 0);
	CHECK(wait_ready(TIMEOUT_MS), "READY");
}

/* BUSY_CORES: a core with an enabled queue or a running/waiting engine. */
static void t_busy_cores(void)
{
	insn_t delay[2] = { I(NEURON_OP_DELAY, 0, 0, 2000000000u), I(NEURON_OP_HALT, 0, 0, 0) };
	insn_t wait[2] = { I(NEURON_OP_WAIT_GE, 0, 7, 1), I(NEURON_OP_HALT, 0, 0, 0) };
	struct nq n;

	dev_reset();
	CHECK(rd(NEURON_REG_BUSY_CORES) == 0x0, "BUSY_CORES 0x%x idle",
	      rd(NEURON_REG_BUSY_CORES));
	CHECK(rd(NEURON_REG_DEV_STATUS) == 0x3, "DEV_STATUS 0x%x idle",
	      rd(NEURON_REG_DEV_STATUS));
	nq_open(&n, 1, 4, 64, 0);
	CHECK(rd(NEURON_REG_BUSY_CORES) == 0x2, "BUSY_CORES 0x%x, queue on core 1",
	      rd(NEURON_REG_BUSY_CORES));
	CHECK(rd(NEURON_REG_DEV_STATUS) == 0x1, "DEV_STATUS 0x%x, queue on core 1",
	      rd(NEURON_REG_DEV_STATUS));
	prog_start(0, NEURON_ENGINE_ACT, delay, 2);
	CHECK(rd(NEURON_REG_BUSY_CORES) == 0x3, "BUSY_CORES 0x%x, + engine on core 0",
	      rd(NEURON_REG_BUSY_CORES));
	cwr(1, NEURON_NOTIFIC_QUEUE_ENABLE, 0);
	CHECK(rd(NEURON_REG_BUSY_CORES) == 0x1, "BUSY_CORES 0x%x, engine on core 0",
	      rd(NEURON_REG_BUSY_CORES));
	CHECK(rd(NEURON_REG_DEV_STATUS) == 0x1, "DEV_STATUS 0x%x, engine running",
	      rd(NEURON_REG_DEV_STATUS));
	/* WAITING counts too */
	prog_start(1, NEURON_ENGINE_POOL, wait, 2);
	CHECK(eng_wait(1, NEURON_ENGINE_POOL, NEURON_ENGINE_WAITING, TIMEOUT_MS),
	      "not WAITING");
	CHECK(rd(NEURON_REG_BUSY_CORES) == 0x3, "BUSY_CORES 0x%x, + waiting engine",
	      rd(NEURON_REG_BUSY_CORES));
	wr(NEURON_REG_RESET, 1);
	CHECK(wait_ready(TIMEOUT_MS), "READY after RESET");
	CHECK(rd(NEURON_REG_BUSY_CORES) == 0x0, "BUSY_CORES 0x%x after RESET",
	      rd(NEURON_REG_BUSY_CORES));
	CHECK(rd(NEURON_REG_DEV_STATUS) == 0x3, "DEV_STATUS 0x%x after RESET",
	      rd(NEURON_REG_DEV_STATUS));
}

/* Function Level Reset through sysfs: registers back to power-on values. */
static void t_flr(void)
{
	insn_t delay[2] = { I(NEURON_OP_DELAY, 0, 0, 2000000000u), I(NEURON_OP_HALT, 0, 0, 0) };
	char path[PATH_MAX + 32];
	unsigned int exp = cfg_find_cap(0x10);
	struct nq n;
	FILE *f;
	int ok;

	CHECK(exp && (cfg_rd32(exp + 4) & (1u << 28)), "DEVCAP does not offer FLR");
	/* the PCI core resets the function with FLR first */
	snprintf(path, sizeof(path), "%s/reset_method", devdir);
	f = fopen(path, "r");
	if (f) {
		char m[64] = "";

		if (!fgets(m, sizeof(m), f))
			m[0] = 0;
		fclose(f);
		CHECK(!strncmp(m, "flr", 3), "reset_method \"%.*s\"", (int)strcspn(m, "\n"), m);
	}
	dev_reset();
	nq_open(&n, 1, 3, 256, 5);
	cwr(1, NEURON_NOTIFIC_INTR_MASK, 0x1ff);
	prog_start(0, NEURON_ENGINE_DVE, delay, 2);
	CHECK(qrd(1, 3, NEURON_NQ_SIZE) == 256, "SIZE not programmed");

	snprintf(path, sizeof(path), "%s/reset", devdir);
	f = fopen(path, "w");
	CHECK(f, "open %s: %s", path, strerror(errno));
	if (!f)
		return;
	ok = fputs("1", f) >= 0;
	ok &= fclose(f) == 0;
	CHECK(ok, "write %s: %s", path, strerror(errno));
	CHECK(wait_ready(TIMEOUT_MS), "READY after FLR: DEV_STATUS 0x%x",
	      rd(NEURON_REG_DEV_STATUS));
	CHECK(rd(NEURON_REG_ID) == NEURON_ID_MAGIC, "ID 0x%x after FLR", rd(NEURON_REG_ID));
	CHECK(crd(1, NEURON_NOTIFIC_QUEUE_ENABLE) == 0, "QUEUE_ENABLE 0x%x",
	      crd(1, NEURON_NOTIFIC_QUEUE_ENABLE));
	CHECK(qrd(1, 3, NEURON_NQ_BASE_LO) == 0, "BASE_LO 0x%x", qrd(1, 3, NEURON_NQ_BASE_LO));
	CHECK(qrd(1, 3, NEURON_NQ_SIZE) == 0, "SIZE %u", qrd(1, 3, NEURON_NQ_SIZE));
	CHECK(qrd(1, 3, NEURON_NQ_CTRL) == 0, "CTRL 0x%x", qrd(1, 3, NEURON_NQ_CTRL));
	CHECK(qrd(1, 3, NEURON_NQ_THRESHOLD) == 0, "THRESHOLD %u",
	      qrd(1, 3, NEURON_NQ_THRESHOLD));
	CHECK(crd(1, NEURON_NOTIFIC_INTR_MASK) == 0, "INTR_MASK 0x%x",
	      crd(1, NEURON_NOTIFIC_INTR_MASK));
	CHECK(crd(1, NEURON_NOTIFIC_SW_BACKPRESSURE) == 0x3ff, "SW_BACKPRESSURE 0x%x",
	      crd(1, NEURON_NOTIFIC_SW_BACKPRESSURE));
	CHECK(erd(0, NEURON_ENGINE_DVE, NEURON_ENG_STATUS) == NEURON_ENGINE_IDLE,
	      "engine state %u", erd(0, NEURON_ENGINE_DVE, NEURON_ENG_STATUS));
	CHECK(erd(0, NEURON_ENGINE_DVE, NEURON_ENG_PROG_COUNT) == 0, "PROG_COUNT %u",
	      erd(0, NEURON_ENGINE_DVE, NEURON_ENG_PROG_COUNT));
	CHECK(erd(0, NEURON_ENGINE_DVE, NEURON_ENG_SOFT_RESET_COUNTER) == 0,
	      "SOFT_RESET_COUNTER %u", erd(0, NEURON_ENGINE_DVE, NEURON_ENG_SOFT_RESET_COUNTER));
	if (stuck_busy < 0)
		CHECK(rd(NEURON_REG_DEV_STATUS) == 0x3, "DEV_STATUS 0x%x after FLR",
		      rd(NEURON_REG_DEV_STATUS));
}

/* Records with the phase bit in the first @n slots of a host ring. */
static unsigned int ring_count(volatile uint8_t *ring, unsigned int n)
{
	unsigned int i, k = 0;
	rec_t r;

	for (i = 0; i < n; i++) {
		vread(&r, ring + i * 16, 16);
		k += rec_phase(&r);
	}
	return k;
}

/*
 * PM: in D3hot every BAR reads all-ones and the engines stop (no DMA);
 * back in D0 the function was reset (registers at power-on values).
 */
static void t_pm_d3hot(void)
{
	insn_t p[40];
	unsigned int pm = cfg_find_cap(0x01), i, before, after;
	volatile uint8_t *ring;
	uint16_t pmcsr;

	CHECK(pm, "no PM capability");
	if (!pm || !dma_page_get()) {
		CHECK(0, "no PM capability or DMA page");
		return;
	}
	pmcsr = cfg_rd16(pm + 4);
	CHECK((pmcsr & 3) == 0, "not in D0: PMCSR 0x%x", pmcsr);
	CHECK(!(pmcsr & 0x8), "No_Soft_Reset set: PMCSR 0x%x", pmcsr);

	/* a producer writing a host-memory ring every 2 ms */
	for (i = 0; i < 40; i += 2) {
		p[i] = NOTIFY(0, i / 2 + 1);
		p[i + 1] = I(NEURON_OP_DELAY, 0, 0, 2000000);
	}
	ring = (volatile uint8_t *)dma_page + 2048;	/* 1 KiB ring, 64 entries */
	vfill(ring, 0, 1024);
	dev_reset();
	bus_master(true);
	qwr(0, 1, NEURON_NQ_BASE_LO, (uint32_t)(dma_phys + 2048));
	qwr(0, 1, NEURON_NQ_BASE_HI, (uint32_t)((dma_phys + 2048) >> 32));
	qwr(0, 1, NEURON_NQ_SIZE, 1024);
	qwr(0, 1, NEURON_NQ_CTRL, 0);
	cwr(0, NEURON_NOTIFIC_QUEUE_ENABLE, 1u << 1);
	cwr(0, NEURON_NOTIFIC_INTR_MASK, 0x1ff);
	prog_start(0, NEURON_ENGINE_PE, p, 40);
	sleep_ms(10);

	cfg_wr16(pm + 4, (pmcsr & ~3) | 3);	/* D3hot */
	CHECK((cfg_rd16(pm + 4) & 3) == 3, "PMCSR 0x%x, not D3hot", cfg_rd16(pm + 4));
	before = ring_count(ring, 64);
	CHECK(rd(NEURON_REG_ID) == 0xffffffff, "BAR0 ID reads 0x%x in D3hot", rd(NEURON_REG_ID));
	CHECK(crd(0, NEURON_NOTIFIC_QUEUE_ENABLE) == 0xffffffff, "BAR0 core reads 0x%x",
	      crd(0, NEURON_NOTIFIC_QUEUE_ENABLE));
	CHECK(*(volatile uint32_t *)mem == 0xffffffff, "BAR4 reads 0x%x in D3hot",
	      *(volatile uint32_t *)mem);
	if (bar2)
		CHECK(*(volatile uint32_t *)bar2 == 0xffffffff, "BAR2 reads 0x%x in D3hot",
		      *(volatile uint32_t *)bar2);
	wr(NEURON_REG_FAULT_MASK, NEURON_FAULT_DMA_ERROR);	/* dropped */
	sleep_ms(30);
	after = ring_count(ring, 64);
	CHECK(before >= 1, "no record before D3hot");
	CHECK(after == before, "%u records written in D3hot (had %u)", after - before, before);

	cfg_wr16(pm + 4, pmcsr & ~3);		/* D0 */
	CHECK((cfg_rd16(pm + 4) & 3) == 0, "PMCSR 0x%x, not D0", cfg_rd16(pm + 4));
	CHECK(wait_ready(TIMEOUT_MS), "READY after D3hot -> D0");
	CHECK(rd(NEURON_REG_ID) == NEURON_ID_MAGIC, "ID 0x%x in D0", rd(NEURON_REG_ID));
	CHECK(rd(NEURON_REG_FAULT_MASK) == 0, "FAULT_MASK 0x%x: write in D3hot landed",
	      rd(NEURON_REG_FAULT_MASK));
	/* state lost, like a function reset */
	CHECK(crd(0, NEURON_NOTIFIC_QUEUE_ENABLE) == 0, "QUEUE_ENABLE 0x%x",
	      crd(0, NEURON_NOTIFIC_QUEUE_ENABLE));
	CHECK(qrd(0, 1, NEURON_NQ_SIZE) == 0, "SIZE %u", qrd(0, 1, NEURON_NQ_SIZE));
	CHECK(crd(0, NEURON_NOTIFIC_INTR_MASK) == 0, "INTR_MASK 0x%x",
	      crd(0, NEURON_NOTIFIC_INTR_MASK));
	CHECK(erd(0, NEURON_ENGINE_PE, NEURON_ENG_STATUS) == NEURON_ENGINE_IDLE,
	      "engine state %u", erd(0, NEURON_ENGINE_PE, NEURON_ENG_STATUS));
	CHECK(erd(0, NEURON_ENGINE_PE, NEURON_ENG_PROG_COUNT) == 0, "PROG_COUNT %u",
	      erd(0, NEURON_ENGINE_PE, NEURON_ENG_PROG_COUNT));
	sleep_ms(10);
	CHECK(ring_count(ring, 64) == after, "the engine went on after D0");
	/* D1 is not supported: the write leaves D0 */
	cfg_wr16(pm + 4, (pmcsr & ~3) | 1);
	CHECK((cfg_rd16(pm + 4) & 3) == 0, "PMCSR 0x%x after a D1 write", cfg_rd16(pm + 4));
	bus_master(false);
}

/* ---- tests: fault injection (only with the matching device properties) -- */

static void t_fault_dma_error(void)
{
	insn_t p[2] = { NOTIFY(0, 1), I(NEURON_OP_HALT, 0, 0, 0) };
	unsigned int c, q;
	uint32_t drop0;
	struct nq n, other;
	rec_t r;

	if (fault_dma_queue < 0) {
		return;
	}
	c = fault_dma_queue / NEURON_NUM_SW_QUEUES;
	q = fault_dma_queue % NEURON_NUM_SW_QUEUES;
	dev_reset();
	cwr(c, NEURON_NOTIFIC_ROUTE, (NEURON_ROUTE_DEFAULT & ~0xf0u) | q << 4);
	nq_open(&n, c, q, 256, 0);
	drop0 = qrd(c, q, NEURON_NQ_DROP_COUNT);
	prog_start(c, NEURON_ENGINE_DVE, p, 2);
	CHECK(eng_wait(c, NEURON_ENGINE_DVE, NEURON_ENGINE_IDLE, TIMEOUT_MS), "idle");
	CHECK(qrd(c, q, NEURON_NQ_DROP_COUNT) == drop0 + 1, "DROP_COUNT");
	CHECK(qrd(c, q, NEURON_NQ_TAIL) == 0, "TAIL moved");
	CHECK(qrd(c, q, NEURON_NQ_STATUS) & NEURON_NQ_STATUS_DMA_ERROR, "STATUS.DMA_ERROR");
	CHECK(intr_status(c) & (1u << NEURON_NOTIFIC_INTR_AXI_WRITE_ERROR), "intr_4");
	CHECK(rd(NEURON_REG_FAULT_STATUS) & NEURON_FAULT_DMA_ERROR, "FAULT_STATUS");
	/* other queues keep working */
	q = (q + 1) % NEURON_NUM_SW_QUEUES;
	cwr(c, NEURON_NOTIFIC_ROUTE, (NEURON_ROUTE_DEFAULT & ~0xf0u) | q << 4);
	nq_open(&other, c, q, 256, 0);
	prog_start(c, NEURON_ENGINE_DVE, p, 2);
	CHECK(nq_collect(&other, &r, 1, TIMEOUT_MS) == 1, "other queue got nothing");
}

static void t_fault_stuck_engine(void)
{
	insn_t p[2] = { I(NEURON_OP_NOP, 0, 0, 0), I(NEURON_OP_HALT, 0, 0, 0) };
	unsigned int c, e;
	uint32_t exec0;

	if (stuck_engine < 0) {
		return;
	}
	c = stuck_engine / NEURON_ENGINES_PER_CORE;
	e = stuck_engine % NEURON_ENGINES_PER_CORE;
	dev_reset();
	exec0 = erd(c, e, NEURON_ENG_EXEC_COUNT);
	prog_start(c, e, p, 2);
	sleep_ms(50);
	CHECK(erd(c, e, NEURON_ENG_STATUS) == NEURON_ENGINE_RUNNING, "state %u",
	      erd(c, e, NEURON_ENG_STATUS));
	CHECK(erd(c, e, NEURON_ENG_EXEC_COUNT) == exec0, "retired");
	ewr(c, e, NEURON_ENG_CTRL, NEURON_ENG_CTRL_RESET);
	CHECK(erd(c, e, NEURON_ENG_STATUS) == NEURON_ENGINE_IDLE, "RESET");
}

static void t_insn_delay(void)
{
	insn_t p[5];
	rec_t r[10];
	struct nq n;
	unsigned int i, got;

	if (insn_delay_ns <= 0) {
		return;
	}
	dev_reset();
	nq_open(&n, 0, 0, 256, 0);
	cwr(0, NEURON_NOTIFIC_TRACE_ENABLE, 1u << NEURON_ENGINE_PE);
	for (i = 0; i < 5; i++)
		p[i] = I(NEURON_OP_NOP, 0, 0, 0);
	prog_start(0, NEURON_ENGINE_PE, p, 5);
	got = nq_collect(&n, r, 10, TIMEOUT_MS);
	CHECK(got == 10, "got %u", got);
	for (i = 2; i + 1 < got; i += 2)
		CHECK(r[i].generic.timestamp - r[i - 1].generic.timestamp >=
		      (uint64_t)insn_delay_ns * 1000, "gap before insn %u: %llu ps", i / 2,
		      (unsigned long long)(r[i].generic.timestamp - r[i - 1].generic.timestamp));
}

/* fault-stuck-busy: that core's BUSY_CORES bit never clears, nor QUIESCED. */
static void t_fault_stuck_busy(void)
{
	uint32_t bit;

	if (stuck_busy < 0) {
		return;
	}
	bit = 1u << stuck_busy;
	dev_reset();
	CHECK(rd(NEURON_REG_BUSY_CORES) == bit, "BUSY_CORES 0x%x idle, stuck core %d",
	      rd(NEURON_REG_BUSY_CORES), stuck_busy);
	CHECK(rd(NEURON_REG_DEV_STATUS) == 0x1, "DEV_STATUS 0x%x: QUIESCED with a stuck core",
	      rd(NEURON_REG_DEV_STATUS));
	wr(NEURON_REG_RESET, 1);
	CHECK(wait_ready(TIMEOUT_MS), "READY after RESET");
	sleep_ms(5);
	CHECK(rd(NEURON_REG_BUSY_CORES) == bit, "BUSY_CORES 0x%x after RESET",
	      rd(NEURON_REG_BUSY_CORES));
	CHECK(rd(NEURON_REG_DEV_STATUS) == 0x1, "DEV_STATUS 0x%x after RESET",
	      rd(NEURON_REG_DEV_STATUS));
}

/* ---- setup and runner --------------------------------------------------- */

static bool find_device(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *de;

	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(devdir, sizeof(devdir), "/sys/bus/pci/devices/%s", de->d_name);
		if (sysfs_hex("vendor") == NEURON_PCI_VENDOR_ID &&
		    sysfs_hex("device") == NEURON_PCI_DEVICE_ID) {
			closedir(d);
			return true;
		}
	}
	closedir(d);
	return false;
}

static volatile uint8_t *map_bar(int bar, uint64_t *size)
{
	char path[PATH_MAX + 32];
	struct stat st;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/resource%d", devdir, bar);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0 || fstat(fd, &st)) {
		printf("# open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("# mmap %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (size)
		*size = st.st_size;
	return p;
}

/* write "0"/"1" to the function's sysfs enable file */
static bool set_enable(const char *val)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/enable", devdir);
	f = fopen(path, "w");
	if (!f)
		return false;
	if (fputs(val, f) < 0) {
		fclose(f);
		return false;
	}
	return fclose(f) == 0;
}

static bool setup(void)
{
	char path[PATH_MAX + 32], cmdline[1024] = "";
	const char *s;
	FILE *f;

	if (!find_device()) {
		printf("# no %04x:%04x device in /sys/bus/pci/devices\n",
		       NEURON_PCI_VENDOR_ID, NEURON_PCI_DEVICE_ID);
		return false;
	}
	printf("# device %s\n", devdir);
	if (!set_enable("1")) {
		printf("# cannot enable %s\n", devdir);
		return false;
	}
	snprintf(path, sizeof(path), "%s/config", devdir);
	cfg_fd = open(path, O_RDWR);
	bar0 = map_bar(0, NULL);
	bar2 = map_bar(2, NULL);
	mem = map_bar(4, &mem_size);
	if (!bar0 || !mem || cfg_fd < 0)
		return false;
	ncores = rd(NEURON_REG_NUM_CORES);
	gen = rd(NEURON_REG_GEN);

	f = fopen("/proc/cmdline", "r");
	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = 0;
		fclose(f);
	}
	s = strstr(cmdline, "neuron.fault_dma_queue=");
	if (s)
		fault_dma_queue = atoi(s + strlen("neuron.fault_dma_queue="));
	s = strstr(cmdline, "neuron.stuck_engine=");
	if (s)
		stuck_engine = atoi(s + strlen("neuron.stuck_engine="));
	s = strstr(cmdline, "neuron.insn_delay_ns=");
	if (s)
		insn_delay_ns = atol(s + strlen("neuron.insn_delay_ns="));
	s = strstr(cmdline, "neuron.stuck_busy=");
	if (s)
		stuck_busy = atoi(s + strlen("neuron.stuck_busy="));
	s = strstr(cmdline, "neuron.reset_latency_us=");
	if (s)
		reset_latency_us = atol(s + strlen("neuron.reset_latency_us="));
	printf("# cores %u gen %s mem %llu MiB fault_dma_queue %d stuck_engine %d "
	       "insn_delay_ns %ld stuck_busy %d reset_latency_us %ld\n", ncores,
	       gen == NEURON_GEN_SUNDA ? "sunda" : "cayman",
	       (unsigned long long)(mem_size >> 20), fault_dma_queue, stuck_engine,
	       insn_delay_ns, stuck_busy, reset_latency_us);
	return true;
}

/* Tests of fault-injection properties run only where the device has them. */
static bool has_fault_dma(void) { return fault_dma_queue >= 0; }
static bool has_stuck_engine(void) { return stuck_engine >= 0; }
static bool has_insn_delay(void) { return insn_delay_ns > 0; }
static bool has_stuck_busy(void) { return stuck_busy >= 0; }
static bool no_stuck_busy(void) { return stuck_busy < 0; }

static const struct {
	const char *name;
	void (*fn)(void);
	bool (*applies)(void);	/* NULL: always */
} tests[] = {
	{ "pci_identity", t_pci_identity },
	{ "global_regs", t_global_regs },
	{ "trace_order", t_trace_order },
	{ "program_end_without_halt", t_program_end_without_halt },
	{ "phase_wrap", t_phase_wrap },
	{ "backpressure_lossless", t_backpressure_lossless },
	{ "stall_no_duplicate", t_stall_no_duplicate },
	{ "disabled_queue_drop", t_disabled_queue_drop },
	{ "ignore_full_overflow", t_ignore_full_overflow },
	{ "full_without_policy", t_full_without_policy },
	{ "bad_head_and_threshold", t_bad_head_and_threshold },
	{ "semaphore_two_engines", t_semaphore_two_engines },
	{ "events_block", t_events_block },
	{ "bad_opcode_fatal", t_bad_opcode_fatal },
	{ "fp_error_nonfatal", t_fp_error_nonfatal },
	{ "throttle", t_throttle },
	{ "feature_flags", t_feature_flags },
	{ "global_reset", t_global_reset },
	{ "dge", t_dge },
	{ "host_dma_ring", t_host_dma_ring },
	{ "msix_edges", t_msix_edges },
	{ "dev_status_reset", t_dev_status_reset },
	{ "busy_cores", t_busy_cores, no_stuck_busy },
	{ "flr", t_flr },
	{ "pm_d3hot", t_pm_d3hot },
	{ "fault_dma_error", t_fault_dma_error, has_fault_dma },
	{ "fault_stuck_engine", t_fault_stuck_engine, has_stuck_engine },
	{ "insn_delay", t_insn_delay, has_insn_delay },
	{ "fault_stuck_busy", t_fault_stuck_busy, has_stuck_busy },
};

int main(void)
{
	unsigned int i, n = 0, count = sizeof(tests) / sizeof(tests[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (!setup()) {
		printf("1..0 # SKIP device not usable\n");
		printf("# 0 passed, 1 failed\n");
		return 1;
	}
	for (i = 0; i < count; i++)
		n += !tests[i].applies || tests[i].applies();
	printf("1..%u\n", n);
	for (i = 0; i < count; i++) {
		if (tests[i].applies && !tests[i].applies()) {
			printf("# %s: not applicable to this device configuration\n",
			       tests[i].name);
			continue;
		}
		cur_fail = 0;
		testno++;
		tests[i].fn();
		if (cur_fail) {
			nfailed++;
			printf("not ok %d %s\n", testno, tests[i].name);
		} else {
			npassed++;
			printf("ok %d %s\n", testno, tests[i].name);
		}
	}
	dev_reset();
	/*
	 * Undo our enable so the driver that binds next starts from a disabled
	 * function (a nested enable would skip its power-up to D0 on 6.12).
	 */
	if (!set_enable("0"))
		printf("# cannot disable %s\n", devdir);
	printf("# %d passed, %d failed\n", npassed, nfailed);
	return nfailed ? 1 : 0;
}
