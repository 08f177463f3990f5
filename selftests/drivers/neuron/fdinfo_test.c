// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo kselftest of the neuron driver: two processes on two cores run
 * programs of known length, and /proc/<pid>/fdinfo/<fd> of each shows what
 * it ran (docs/metrics.md#fdinfo). Expected values are worked out by hand
 * from each process's setup and written as literals: process A runs 32
 * NOTIFYs on core 0's PE into a 4 KiB host ring (32 instructions retired,
 * 32 records), holds no device memory; process B runs 20 NOTIFYs on core
 * 1's ACT into a 4 KiB host ring and holds 8 KiB of device memory.
 *
 *   two_processes_two_cores	the counters above, per process
 *   engine_busy_time		nnq-engine-c0-pe (docs/metrics.md#fdinfo):
 *				a program WAITING on a semaphore for 300 ms
 *				shows at least 300 ms and at most the time
 *				since before its SUBMIT; the other engines
 *				0 ns; once the semaphore is set and the engine
 *				is IDLE, the value stops (two reads 100 ms
 *				apart are equal) and is no more than the time
 *				from SUBMIT to the IDLE status
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"
#include "robust_lib.h"

struct tenant_plan {
	unsigned int core, engine, records;
	uint64_t mem;
};

/*
 * The child: makes its queue, allocates, runs its program, then tells the
 * parent its fd and waits until the parent has read its fdinfo.
 */
static int tenant(const struct tenant_plan *p, int report, int done)
{
	struct neuron_mem_alloc ma = { .size = p->mem };
	struct neuron_nq_init init;
	struct neuron_ring ring;
	int fd = neuron_open();
	char c;

	if (fd < 0)
		return 1;
	if (neuron_nq_create(fd, p->core, 1, 4096, 0, &init) ||
	    neuron_ring_map(fd, &init, &ring))
		return 2;
	if (p->mem && neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &ma))
		return 3;
	if (run_notify(fd, &ring, p->core, p->engine, p->records, 0x100))
		return 4;
	if (write(report, &fd, sizeof(fd)) != sizeof(fd))
		return 5;
	if (read(done, &c, 1) != 1)
		return 6;
	return 0;
}

/* The value of @key in @text ("key:\tvalue"), or NULL. */
static const char *value_of(const char *text, const char *key, char *out, size_t len)
{
	char pat[96];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\n%s:\t", key);
	p = strstr(text, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = 0;
	return out;
}

static void read_fdinfo(pid_t pid, int fd, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	buf[0] = '\n';	/* so the first key matches "\n<key>:" too */
	if (read_str(path, buf + 1, len - 1) < 0)
		buf[1] = 0;
}

#define EXPECT_KEY(text, key, want) do {					\
	char v_[64];								\
	const char *g_ = value_of(text, key, v_, sizeof(v_));			\
	EXPECT_NE(NULL, g_) TH_LOG("no %s in fdinfo", key);			\
	if (g_)									\
		EXPECT_STREQ(want, g_) TH_LOG("%s", key);			\
} while (0)

TEST(two_processes_two_cores)
{
	static const struct tenant_plan plans[2] = {
		{ .core = 0, .engine = NEURON_ENGINE_PE, .records = 32, .mem = 0 },
		{ .core = 1, .engine = NEURON_ENGINE_ACT, .records = 20, .mem = 8192 },
	};
	char text[2][4096], ida[64], idb[64];
	int report[2][2], done[2][2], fds[2], st;
	pid_t pids[2];

	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, pipe(report[i]));
		ASSERT_EQ(0, pipe(done[i]));
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(tenant(&plans[i], report[i][1], done[i][0]));
		ASSERT_EQ(sizeof(int), read(report[i][0], &fds[i], sizeof(int)));
	}
	for (int i = 0; i < 2; i++)
		read_fdinfo(pids[i], fds[i], text[i], sizeof(text[i]));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(1, write(done[i][1], "x", 1));
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("tenant %d: %d", i, st);
	}
	ksft_print_msg("fdinfo of A:%s", text[0]);
	ksft_print_msg("fdinfo of B:%s", text[1]);

	EXPECT_KEY(text[0], "nnq-driver", "nnq");
	EXPECT_KEY(text[0], "nnq-cores", "0x1");
	EXPECT_KEY(text[0], "nnq-memory-device", "0 KiB");
	EXPECT_KEY(text[0], "nnq-memory-rings", "4 KiB");
	EXPECT_KEY(text[0], "nnq-insns-c0-pe", "32");
	EXPECT_KEY(text[0], "nnq-insns-c0-act", "0");
	EXPECT_KEY(text[0], "nnq-queue-c0-q1-records", "32");
	EXPECT_KEY(text[0], "nnq-queue-c0-q1-overflow", "0");
	EXPECT_KEY(text[0], "nnq-queue-c0-q1-drops", "0");
	EXPECT_EQ(NULL, strstr(text[0], "-c1-")) TH_LOG("A shows core 1");

	EXPECT_KEY(text[1], "nnq-cores", "0x2");
	EXPECT_KEY(text[1], "nnq-memory-device", "8 KiB");
	EXPECT_KEY(text[1], "nnq-memory-rings", "4 KiB");
	EXPECT_KEY(text[1], "nnq-insns-c1-act", "20");
	EXPECT_KEY(text[1], "nnq-insns-c1-pe", "0");
	EXPECT_KEY(text[1], "nnq-queue-c1-q1-records", "20");
	EXPECT_EQ(NULL, strstr(text[1], "-c0-")) TH_LOG("B shows core 0");

	/* two files, two ids */
	ASSERT_NE(NULL, value_of(text[0], "nnq-client-id", ida, sizeof(ida)));
	ASSERT_NE(NULL, value_of(text[1], "nnq-client-id", idb, sizeof(idb)));
	EXPECT_STRNE(ida, idb);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* The ns of "key:\t<N> ns", or -1 if the line is missing or malformed. */
static long long busy_of(const char *text, const char *key)
{
	char v[64], unit[8];
	long long ns;

	if (!value_of(text, key, v, sizeof(v)) ||
	    sscanf(v, "%lld %7s", &ns, unit) != 2 || strcmp(unit, "ns"))
		return -1;
	return ns;
}

TEST(engine_busy_time)
{
	/* SEM_SET sem=0, WAIT_GE sem>=1 (waits until the host sets it), HALT */
	struct neuron_emu_insn prog[3];
	struct neuron_evt_sem sem = {
		.core = 0, .index = 202, .op = NEURON_SEM_SET, .value = 1,
	};
	char text[4096], again[4096];
	long long waiting, done, stopped;
	uint64_t t0, t1, t2;
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_nq_create(fd, 0, 1, 4096, 0, NULL));
	prog[0] = neuron_insn(NEURON_OP_SEM_SET, 0);
	prog[0].operand.arg.idx = 202;
	prog[0].operand.arg.value = 0;
	prog[1] = neuron_insn(NEURON_OP_WAIT_GE, 0);
	prog[1].operand.arg.idx = 202;
	prog[1].operand.arg.value = 1;
	prog[2] = neuron_insn(NEURON_OP_HALT, 0);

	t0 = now_ns();
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 3, 0));
	usleep(300 * 1000);
	read_fdinfo(getpid(), fd, text, sizeof(text));
	t1 = now_ns();
	ksft_print_msg("fdinfo while waiting:%s", text);
	waiting = busy_of(text, "nnq-engine-c0-pe");
	EXPECT_LE(300000000LL, waiting);
	EXPECT_GE((long long)(t1 - t0), waiting);
	EXPECT_KEY(text, "nnq-engine-c0-act", "0 ns");
	EXPECT_KEY(text, "nnq-engine-c0-sp", "0 ns");

	/* the host sets the semaphore: the program ends */
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &sem));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));
	t2 = now_ns();
	read_fdinfo(getpid(), fd, text, sizeof(text));
	usleep(100 * 1000);
	read_fdinfo(getpid(), fd, again, sizeof(again));
	done = busy_of(text, "nnq-engine-c0-pe");
	stopped = busy_of(again, "nnq-engine-c0-pe");
	ksft_print_msg("busy: %lld ns waiting, %lld ns done, %lld ns 100 ms later; %llu ns SUBMIT to IDLE\n",
		       waiting, done, stopped, (unsigned long long)(t2 - t0));
	EXPECT_LE(waiting, done);
	EXPECT_GE((long long)(t2 - t0), done);
	EXPECT_EQ(done, stopped);
	close(fd);
}

TEST_HARNESS_MAIN
