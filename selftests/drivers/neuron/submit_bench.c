// SPDX-License-Identifier: GPL-2.0
/*
 * submit_bench: what one tenant's SUBMIT validation costs another tenant's
 * ioctls (docs/performance.md#submit-validation). Figures, never asserted:
 * the one TAP line says only that both tenants ran and produced numbers.
 *
 *   tenant A (uid 1101, CPU 0): 1000 MEM_ALLOCs of 4 KiB, then in a loop
 *     SUBMITs of 2048 instructions to core 0: a HALT, then 2047 DGE_COPYs
 *     whose sources and destinations spread over all 1000 blocks. The
 *     engine stops at the HALT, so executing a program costs next to
 *     nothing; SUBMIT still checks every DGE_COPY against the allocations
 *     (kernel/neuron_mem.c), which is what is measured. Engines 0..4 are
 *     used in turn; an -EBUSY (the engine has not reached its HALT yet) is
 *     retried and counted.
 *   tenant B (uid 1102, CPU 1): MEM_ALLOC then MEM_FREE of 4 KiB, each
 *     call timed, then a sleep of 500 us: a tenant that calls now and then,
 *     so its calls land at random points of A's SUBMITs and the fraction of
 *     them that waits is the fraction of time A holds what they need (an
 *     unpaced loop would run thousands of calls while the lock is free and
 *     one while it is held). MEM_ALLOC and MEM_FREE both take the device's
 *     lock. Each round also times a DEVICE_INFO, which takes no lock of
 *     the driver: the control for what the guest and host add (vCPU
 *     scheduling, QEMU's locks) that no driver change can remove.
 *
 * B runs for --seconds S (default 2) with A idle (its 1000 blocks held),
 * then as long with A spinning in userspace (no call: the guest's and the
 * host's CPUs as busy as in the next phase, the control for what is not
 * the lock), then as long while A floods. Prints B's p50/p99/p99.9/max
 * and mean per call in each phase, and A's SUBMIT rate:
 *
 *   # submit_bench: B latency, A idle: n=N p50=X us p99=X us p99.9=X us max=X us mean=X us
 *   # submit_bench: B DEVICE_INFO, A idle: (the same)
 *   (the same two for "A spinning" and "A flooding")
 *   # submit_bench: A: N SUBMITs in S s = R/s, mean X us each (N -EBUSY retries)
 *
 * Self-contained (only the uapi and ISA headers), so the same source
 * builds against an older tree's headers to measure an older module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/neuron.h>
#include <neuron/emu_isa.h>

#define DEV		"/dev/nnq0"
#define UID_A		1101
#define UID_B		1102
#define TENANT_GID	1000
#define NBLOCKS		1000
#define BLOCK		4096
#define NINSNS		NEURON_MAX_PROGRAM_INSNS
#define MAX_SAMPLES	(1u << 20)
#define SETUP_MS	120000	/* generous: the guest runs under TCG */
#define PHASES		3	/* B's: A idle, A spinning, A flooding */

/* What the processes share (MAP_SHARED before fork). */
struct shared {
	int a_ready, b_ready;	/* set by each tenant once set up */
	int go[PHASES];		/* B: measure this phase */
	int done[PHASES];	/* B: phase measured */
	int a_spin, a_spinning;	/* A: spin in userspace until a_go */
	int a_go, a_started, stop;
	int failed;		/* any tenant's setup or ioctl failed */
	/* B's figures per phase, ns: [0] MEM_ALLOC/FREE, [1] DEVICE_INFO */
	struct stats {
		uint64_t n, p50, p99, p999, max, mean;
	} st[PHASES][2];
	/* A's */
	uint64_t submits, busy, submit_ns;
};

static struct shared *sh;
static double seconds = 2.0;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Waits until *@p is set; 0, or -1 after @ms or once a tenant failed. */
static int wait_set(int *p, unsigned int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000;

	while (!load(p)) {
		if (load(&sh->failed) || now_ns() > end)
			return -1;
		usleep(1000);
	}
	return 0;
}

static int fail(const char *who, const char *what, int err)
{
	printf("# submit_bench: %s: %s: %s\n", who, what, strerror(err));
	fflush(stdout);
	store(&sh->failed, 1);
	return 1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* best effort: 1 vCPU */
}

static int become(uid_t uid)
{
	gid_t grp = TENANT_GID;

	if (setgroups(1, &grp) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	return 0;
}

static int mem_alloc(int fd, uint64_t *off)
{
	struct neuron_mem_alloc m = { .size = BLOCK };

	if (ioctl(fd, NEURON_IOC_MEM_ALLOC, &m))
		return -1;
	*off = m.offset;
	return 0;
}

static int mem_free(int fd, uint64_t off)
{
	struct neuron_mem_free m = { .offset = off };

	return ioctl(fd, NEURON_IOC_MEM_FREE, &m);
}

static int tenant_a(void)
{
	static uint64_t blk[NBLOCKS];
	struct neuron_emu_insn *prog;
	struct neuron_cores cores = { .cores = 1 };
	struct neuron_submit s = { .core = 0, .count = NINSNS };
	uint64_t t0, n = 0, busy = 0;
	unsigned int i, e = 0;
	int fd;

	pin(0);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail("A", "open", errno);
	if (ioctl(fd, NEURON_IOC_CORE_ACQUIRE, &cores))
		return fail("A", "CORE_ACQUIRE core 0", errno);
	for (i = 0; i < NBLOCKS; i++)
		if (mem_alloc(fd, &blk[i]))
			return fail("A", "MEM_ALLOC", errno);
	prog = calloc(NINSNS, sizeof(*prog));
	if (!prog)
		return fail("A", "calloc", ENOMEM);
	prog[0].opcode = NEURON_OP_HALT;
	for (i = 1; i < NINSNS; i++) {
		struct neuron_emu_dge_desc *d = &prog[i].operand.dge;

		/* spread over every block, in no order the kernel keeps */
		prog[i].opcode = NEURON_OP_DGE_COPY;
		d->src = blk[(i * 389u) % NBLOCKS];
		d->dst = blk[(i * 613u + 1) % NBLOCKS] + 2048;
		d->length = 64;
		d->backend = NEURON_DGE_BACKEND_POOL;
	}
	s.insns = (uintptr_t)prog;
	store(&sh->a_ready, 1);
	if (wait_set(&sh->a_spin, SETUP_MS))
		return 0;
	store(&sh->a_spinning, 1);
	while (!load(&sh->a_go))
		;
	t0 = now_ns();
	while (!load(&sh->stop)) {
		s.engine = e;
		if (ioctl(fd, NEURON_IOC_SUBMIT, &s)) {
			if (errno != EBUSY)
				return fail("A", "SUBMIT", errno);
			busy++;
			sched_yield();
			continue;
		}
		n++;
		store(&sh->a_started, 1);
		e = (e + 1) % NEURON_ENGINES_PER_CORE;
	}
	sh->submits = n;
	sh->busy = busy;
	sh->submit_ns = now_ns() - t0;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @lat and sums it up into @s. */
static void stats(uint64_t *lat, unsigned int n, struct stats *s)
{
	uint64_t sum = 0;
	unsigned int i;

	qsort(lat, n, sizeof(*lat), cmp_u64);
	for (i = 0; i < n; i++)
		sum += lat[i];
	s->n = n;
	s->p50 = lat[n / 2];
	s->p99 = lat[(uint64_t)n * 99 / 100];
	s->p999 = lat[(uint64_t)n * 999 / 1000];
	s->max = lat[n - 1];
	s->mean = sum / n;
}

static int tenant_b(void)
{
	struct neuron_device_info info;
	uint64_t *lat, *ctl, end, off, t;
	struct timespec pace = { .tv_nsec = 500000 };
	unsigned int n, k, p;
	int fd;

	pin(1);
	lat = malloc(MAX_SAMPLES * sizeof(*lat));
	ctl = malloc(MAX_SAMPLES * sizeof(*ctl));
	if (!lat || !ctl)
		return fail("B", "malloc", ENOMEM);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail("B", "open", errno);
	store(&sh->b_ready, 1);
	for (p = 0; p < PHASES; p++) {
		if (wait_set(&sh->go[p], SETUP_MS))
			return 0;
		n = 0;
		k = 0;
		end = now_ns() + (uint64_t)(seconds * 1e9);
		while (now_ns() < end && n + 2 <= MAX_SAMPLES) {
			t = now_ns();
			if (ioctl(fd, NEURON_IOC_DEVICE_INFO, &info))
				return fail("B", "DEVICE_INFO", errno);
			ctl[k++] = now_ns() - t;
			t = now_ns();
			if (mem_alloc(fd, &off))
				return fail("B", "MEM_ALLOC", errno);
			lat[n++] = now_ns() - t;
			t = now_ns();
			if (mem_free(fd, off))
				return fail("B", "MEM_FREE", errno);
			lat[n++] = now_ns() - t;
			nanosleep(&pace, NULL);
		}
		stats(lat, n, &sh->st[p][0]);
		stats(ctl, k, &sh->st[p][1]);
		store(&sh->done[p], 1);
	}
	return 0;
}

static pid_t spawn(uid_t uid, int (*fn)(void))
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (become(uid))
		_exit(fail(uid == UID_A ? "A" : "B", "setresuid", errno));
	_exit(fn());
}

static int reap(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	static const char *const phase[PHASES] = {
		"A idle", "A spinning", "A flooding",
	};
	struct stat node;
	pid_t a, b;
	int ok, p, k, ra, rb;

	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = atof(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..1\n");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || stat(DEV, &node) ||
	    chown(DEV, 0, TENANT_GID) || chmod(DEV, 0660)) {
		printf("# submit_bench: setup: %s\nnot ok 1 submit_bench.figures\n",
		       strerror(errno));
		return 1;
	}
	printf("# submit_bench: A (uid %d, CPU 0): %d allocations of %d B, SUBMITs of %d instructions (HALT, then %d DGE_COPYs over all blocks); B (uid %d, CPU 1): DEVICE_INFO, MEM_ALLOC and MEM_FREE of %d B every 500 us, each call timed; %.1f s per phase\n",
	       UID_A, NBLOCKS, BLOCK, NINSNS, NINSNS - 1, UID_B, BLOCK, seconds);
	a = spawn(UID_A, tenant_a);
	b = spawn(UID_B, tenant_b);
	if (!wait_set(&sh->a_ready, SETUP_MS) && !wait_set(&sh->b_ready, SETUP_MS)) {
		store(&sh->go[0], 1);
		if (!wait_set(&sh->done[0], SETUP_MS)) {
			store(&sh->a_spin, 1);
			if (!wait_set(&sh->a_spinning, SETUP_MS)) {
				store(&sh->go[1], 1);
				wait_set(&sh->done[1], SETUP_MS);
			}
		}
		if (load(&sh->done[1])) {
			store(&sh->a_go, 1);
			if (!wait_set(&sh->a_started, SETUP_MS)) {
				store(&sh->go[2], 1);
				wait_set(&sh->done[2], SETUP_MS);
			}
		}
	}
	store(&sh->stop, 1);
	store(&sh->a_spin, 1);
	store(&sh->a_go, 1);
	for (p = 0; p < PHASES; p++)
		store(&sh->go[p], 1);
	ra = reap(a);
	rb = reap(b);
	chown(DEV, node.st_uid, node.st_gid);
	chmod(DEV, node.st_mode & 07777);

	ok = !ra && !rb && !sh->failed && sh->done[PHASES - 1] && sh->submits;
	for (p = 0; p < PHASES; p++)
		for (k = 0; k < 2 && sh->done[p]; k++)
			printf("# submit_bench: B %s, %s: n=%llu p50=%.1f us p99=%.1f us p99.9=%.1f us max=%.1f us mean=%.1f us\n",
			       k ? "DEVICE_INFO" : "latency", phase[p],
			       (unsigned long long)sh->st[p][k].n,
			       sh->st[p][k].p50 / 1e3, sh->st[p][k].p99 / 1e3,
			       sh->st[p][k].p999 / 1e3, sh->st[p][k].max / 1e3,
			       sh->st[p][k].mean / 1e3);
	if (sh->submits)
		printf("# submit_bench: A: %llu SUBMITs in %.2f s = %.1f/s, %.1f us per SUBMIT (%llu -EBUSY retries)\n",
		       (unsigned long long)sh->submits, sh->submit_ns / 1e9,
		       sh->submits / (sh->submit_ns / 1e9),
		       sh->submit_ns / 1e3 / sh->submits,
		       (unsigned long long)sh->busy);
	if (!ok)
		printf("# submit_bench: A exited %d, B exited %d\n", ra, rb);
	printf("%sok 1 submit_bench.figures\n", ok ? "" : "not ");
	return !ok;
}
