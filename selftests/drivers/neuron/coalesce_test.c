// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of interrupt coalescing and the device clock sample (issue 14;
 * docs/device-model.md#coalescing, docs/decisions/0028-coalescing.md,
 * include/uapi/linux/neuron.h: struct neuron_nq_init.coalesce_ns,
 * NEURON_IOC_NQ_COALESCE, NEURON_IOC_TIMESTAMP).
 *
 * A queue's threshold interrupt, which the driver turns into a signal on
 * the eventfd bound with NEURON_IOC_NQ_EVENTFD, comes after THRESHOLD
 * unread records or coalesce_ns after the first of them, whichever is
 * first, once until the next accepted HEAD write:
 *
 *   time_limit_delivers	THRESHOLD 64 never reached, coalesce_ns 1 ms:
 *				the eventfd is signalled and every record is
 *				there; a HEAD write that leaves records unread
 *				starts the time limit again
 *   no_time_limit_silent	the same with coalesce_ns 0: silence (the
 *				records wait for a consumer that polls)
 *   live_change_reevaluates	NQ_COALESCE on a queue holding unread records:
 *				a THRESHOLD they already reach signals at once,
 *				a time limit starts at once
 *   bad_settings		-EINVAL at NQ_INIT and NQ_COALESCE (coalesce_ns
 *				above 10 ms, THRESHOLD above the ring, reserved
 *				fields, range), -ENOENT for a queue this file did
 *				not make, -EBADF on a read-only file; the queue
 *				keeps its settings and works
 *   second_user		an unprivileged uid on another uid's queue:
 *				refused, the owner's queue unharmed
 *   info_reports		NQ_INFO shows what NQ_INIT and NQ_COALESCE set
 *   live_changes_lose_nothing	two engines stream 2 x 1000 NOTIFY records in
 *				bursts of 100 that overfill a 64-entry lossless
 *				ring (the engines stall) and pauses, while the
 *				settings change every half millisecond; a
 *				consumer that sleeps on the eventfd and drains
 *				until empty gets every record once, in order
 *   timestamp			one device clock sample between two
 *				CLOCK_MONOTONIC reads; records are stamped by
 *				the same clock; read-only files may ask
 *
 * Expected values are the UAPI's and the device contract's, written here
 * as literals: 10 ms = NEURON_NQ_COALESCE_NS_MAX, 4096-byte rings hold 256
 * records, a program's records carry debug_hint_extended = its index.
 * Deadlines (2 s, 5 s) are functional: they only catch a wake-up that
 * never comes; speeds are printed, not asserted.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE		0
#define QUEUE		1		/* EXPLICIT records' queue (default ROUTE) */
#define RING		4096		/* 256 records */
#define T_1MS		1000000u
#define T_MAX		10000000u	/* NEURON_NQ_COALESCE_NS_MAX, 10 ms */
#define DEADLINE_MS	2000		/* a signal that must come */
#define SILENCE_MS	300		/* a signal that must not */

#define TENANT_A	1001
#define TENANT_B	1002
#define TENANT_GID	1000

/* ---- helpers ------------------------------------------------------------ */

static int nq_coalesce(int fd, __u32 core, __u32 queue, __u32 threshold,
		       __u32 coalesce_ns)
{
	struct neuron_nq_coalesce c = {
		.core = core, .queue = queue, .threshold = threshold,
		.coalesce_ns = coalesce_ns,
	};

	return neuron_ioctl(fd, NEURON_IOC_NQ_COALESCE, &c);
}

static int nq_init(int fd, __u32 core, __u32 queue, __u32 size, __u32 threshold,
		   __u32 coalesce_ns, struct neuron_nq_init *out)
{
	struct neuron_nq_init init = {
		.core = core, .queue = queue, .size = size, .threshold = threshold,
		.coalesce_ns = coalesce_ns,
	};
	int ret = neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init);

	if (out)
		*out = init;
	return ret;
}

static int nq_info(int fd, __u32 core, __u32 queue, struct neuron_nq_info *info)
{
	memset(info, 0, sizeof(*info));
	info->core = core;
	info->queue = queue;
	return neuron_ioctl(fd, NEURON_IOC_NQ_INFO, info);
}

/* @n NOTIFYs with debug_hint_extended first..first+n-1, then HALT, on @engine. */
static int run_notifies(int fd, __u32 core, __u32 engine, uint16_t first,
			unsigned int n)
{
	static struct neuron_emu_insn prog[NEURON_MAX_PROGRAM_INSNS];

	for (unsigned int i = 0; i < n; i++) {
		prog[i] = neuron_insn(NEURON_OP_NOTIFY, 0);
		prog[i].operand.arg.debug_hint_extended = htole16((uint16_t)(first + i));
	}
	prog[n] = neuron_insn(NEURON_OP_HALT, 0);
	return neuron_submit(fd, core, engine, prog, n + 1, 0);
}

/* Takes @n records in order (first..first+n-1 expected); returns how many matched. */
static unsigned int take(struct neuron_ring *ring, uint16_t first, unsigned int n)
{
	union neuron_isa_notification r;
	unsigned int ok = 0;

	for (unsigned int i = 0; i < n && neuron_ring_peek(ring, &r); i++)
		ok += r.explicit_notif.debug_hint_extended == (uint16_t)(first + i);
	return ok;
}

static void ack(struct neuron_ring *ring)
{
	*ring->doorbell = ring->head;
}

/* ---- a queue with an eventfd ------------------------------------------- */

FIXTURE(cq)
{
	int fd, efd;
	struct neuron_nq_init init;
	struct neuron_ring ring;
};

FIXTURE_SETUP(cq)
{
	memset(&self->ring, 0, sizeof(self->ring));
	self->fd = neuron_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NEURON_DEV, strerror(errno));
	self->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ASSERT_LE(0, self->efd);
}

FIXTURE_TEARDOWN(cq)
{
	if (self->ring.slots)
		neuron_ring_unmap(&self->ring);
	close(self->efd);
	close(self->fd);
}

/* Makes core 0's queue 1 (RING bytes) with the limits, maps it, binds the eventfd. */
static void cq_make(struct __test_metadata *_metadata, FIXTURE_DATA(cq) *self,
		    __u32 threshold, __u32 coalesce_ns)
{
	ASSERT_EQ(0, nq_init(self->fd, CORE, QUEUE, RING, threshold, coalesce_ns,
			     &self->init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &self->init, &self->ring));
	ASSERT_EQ(0, neuron_nq_bind_eventfd(self->fd, CORE, QUEUE, self->efd));
}

/* Runs @n NOTIFYs on PE to completion. */
static void cq_records(struct __test_metadata *_metadata, FIXTURE_DATA(cq) *self,
		       uint16_t first, unsigned int n)
{
	ASSERT_EQ(0, run_notifies(self->fd, CORE, NEURON_ENGINE_PE, first, n));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, CORE, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));
}

TEST_F(cq, time_limit_delivers)
{
	cq_make(_metadata, self, 64, T_1MS);
	cq_records(_metadata, self, 0, 5);
	/* 5 records never reach THRESHOLD 64: the time limit delivers them */
	EXPECT_EQ(1, neuron_eventfd_wait(self->efd, DEADLINE_MS));
	EXPECT_EQ(2, take(&self->ring, 0, 2));
	/* HEAD 2 leaves 3 unread: they are delivered again within the limit */
	ack(&self->ring);
	EXPECT_EQ(1, neuron_eventfd_wait(self->efd, DEADLINE_MS));
	EXPECT_EQ(3, take(&self->ring, 2, 3));
	/* HEAD 5 leaves none: nothing more */
	ack(&self->ring);
	EXPECT_EQ(0, neuron_eventfd_wait(self->efd, SILENCE_MS));
}

TEST_F(cq, no_time_limit_silent)
{
	union neuron_isa_notification r;

	cq_make(_metadata, self, 64, 0);
	cq_records(_metadata, self, 0, 5);
	EXPECT_EQ(0, neuron_eventfd_wait(self->efd, SILENCE_MS));
	/* the records are there for a consumer that looks */
	EXPECT_EQ(5, take(&self->ring, 0, 5));
	EXPECT_EQ(0, neuron_ring_peek(&self->ring, &r));
	ack(&self->ring);
	EXPECT_EQ(0, neuron_eventfd_wait(self->efd, SILENCE_MS));
}

TEST_F(cq, live_change_reevaluates)
{
	struct neuron_nq_info info;

	cq_make(_metadata, self, 64, 0);
	cq_records(_metadata, self, 0, 5);
	EXPECT_EQ(0, neuron_eventfd_wait(self->efd, SILENCE_MS));
	/* 5 unread already reach a THRESHOLD of 4: signalled at once */
	ASSERT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 4, 0));
	EXPECT_EQ(1, neuron_eventfd_wait(self->efd, DEADLINE_MS));
	EXPECT_EQ(5, take(&self->ring, 0, 5));
	ack(&self->ring);

	/* 5 more below THRESHOLD 64 and no time limit: silence ... */
	ASSERT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 64, 0));
	cq_records(_metadata, self, 5, 5);
	EXPECT_EQ(0, neuron_eventfd_wait(self->efd, SILENCE_MS));
	/* ... until a time limit is set: it starts for the records waiting */
	ASSERT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 64, T_1MS));
	EXPECT_EQ(1, neuron_eventfd_wait(self->efd, DEADLINE_MS));
	EXPECT_EQ(5, take(&self->ring, 5, 5));
	ack(&self->ring);
	ASSERT_EQ(0, nq_info(self->fd, CORE, QUEUE, &info));
	EXPECT_EQ(10, info.tail);
	EXPECT_EQ(10, info.head);
}

TEST_F(cq, bad_settings)
{
	struct neuron_nq_coalesce c = { .core = CORE, .queue = QUEUE };
	struct neuron_nq_init init;
	struct neuron_nq_info info;
	int other = neuron_open(), ro = neuron_open_flags(O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, other);
	ASSERT_LE(0, ro);
	/* NQ_INIT: a time limit above 10 ms, reserved fields, THRESHOLD above 256 */
	EXPECT_EQ(-EINVAL, nq_init(self->fd, CORE, QUEUE, RING, 0, T_MAX + 1, NULL));
	EXPECT_EQ(-EINVAL, nq_init(self->fd, CORE, QUEUE, RING, 0, 0xffffffff, NULL));
	EXPECT_EQ(-EINVAL, nq_init(self->fd, CORE, QUEUE, RING, 257, T_1MS, NULL));
	init = (struct neuron_nq_init){ .core = CORE, .queue = QUEUE, .size = RING,
					.reserved1 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	init = (struct neuron_nq_init){ .core = CORE, .queue = QUEUE, .size = RING,
					.reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	EXPECT_EQ(-ENOENT, nq_info(self->fd, CORE, QUEUE, &info));	/* none made */
	EXPECT_EQ(-ENOENT, nq_coalesce(self->fd, CORE, QUEUE, 1, 0));	/* none made */

	/* the maximum itself is fine */
	cq_make(_metadata, self, 64, T_MAX);
	ASSERT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 64, T_1MS));

	/* NQ_COALESCE on the live queue */
	EXPECT_EQ(-EINVAL, nq_coalesce(self->fd, CORE, QUEUE, 1, T_MAX + 1));
	EXPECT_EQ(-EINVAL, nq_coalesce(self->fd, CORE, QUEUE, 257, T_1MS));
	EXPECT_EQ(-EINVAL, nq_coalesce(self->fd, CORE, QUEUE, 0xffffffff, 0));
	EXPECT_EQ(-EINVAL, nq_coalesce(self->fd, 2, QUEUE, 1, 0));
	EXPECT_EQ(-EINVAL, nq_coalesce(self->fd, CORE, 10, 1, 0));
	c.threshold = 1;
	c.reserved = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_COALESCE, &c));
	/* another queue of the core, never made; another file; a read-only file */
	EXPECT_EQ(-ENOENT, nq_coalesce(self->fd, CORE, 2, 1, 0));
	EXPECT_EQ(-ENOENT, nq_coalesce(other, CORE, QUEUE, 1, 0));
	EXPECT_EQ(-EBADF, nq_coalesce(ro, CORE, QUEUE, 1, 0));

	/* nothing above changed the queue: its settings, and it works */
	ASSERT_EQ(0, nq_info(self->fd, CORE, QUEUE, &info));
	EXPECT_EQ(64, info.threshold);
	EXPECT_EQ(T_1MS, info.coalesce_ns);
	cq_records(_metadata, self, 0, 3);
	EXPECT_EQ(1, neuron_eventfd_wait(self->efd, DEADLINE_MS));
	EXPECT_EQ(3, take(&self->ring, 0, 3));
	ack(&self->ring);
	/* THRESHOLD = the ring's 256 records is the largest accepted */
	EXPECT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 256, 0));
	close(ro);
	close(other);
}

TEST_F(cq, info_reports)
{
	struct neuron_nq_info info;

	cq_make(_metadata, self, 7, 123456);
	ASSERT_EQ(0, nq_info(self->fd, CORE, QUEUE, &info));
	EXPECT_EQ(7, info.threshold);
	EXPECT_EQ(123456, info.coalesce_ns);
	EXPECT_EQ(0x01543210, info.route);	/* NEURON_ROUTE_DEFAULT */
	EXPECT_EQ(0, info.reserved);
	ASSERT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 0, 0));
	ASSERT_EQ(0, nq_info(self->fd, CORE, QUEUE, &info));
	EXPECT_EQ(0, info.threshold);
	EXPECT_EQ(0, info.coalesce_ns);
	ASSERT_EQ(0, nq_coalesce(self->fd, CORE, QUEUE, 256, T_MAX));
	ASSERT_EQ(0, nq_info(self->fd, CORE, QUEUE, &info));
	EXPECT_EQ(256, info.threshold);
	EXPECT_EQ(10000000, info.coalesce_ns);
	EXPECT_EQ(4096, info.size);
	EXPECT_EQ(0, info.head);
	EXPECT_EQ(0, info.tail);
	/* a queue made without a time limit reports none */
	ASSERT_EQ(0, nq_init(self->fd, 1, 3, 64, 2, 0, NULL));
	ASSERT_EQ(0, nq_info(self->fd, 1, 3, &info));
	EXPECT_EQ(2, info.threshold);
	EXPECT_EQ(0, info.coalesce_ns);
}

/* ---- a second, unprivileged user ----------------------------------------- */

static int child_fails;

#define CK(cond, what)								\
	do {									\
		if (!(cond)) {							\
			printf("# %s: %s\n", who, what);			\
			fflush(stdout);						\
			child_fails++;						\
		}								\
	} while (0)

struct handshake {
	int ready[2];	/* owner -> parent: the queue is up */
	int go[2];	/* parent -> owner: the other user is done */
};

/* TENANT_A: makes the queue, waits, then checks it is as it left it. */
static int owner(void *arg)
{
	const char *who = "owner";
	struct handshake *h = arg;
	struct neuron_nq_init init;
	struct neuron_nq_info info;
	struct neuron_ring ring = { 0 };
	int fd = neuron_open(), efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	char c = 'r';

	if (fd < 0 || efd < 0)
		return 100;
	CK(!nq_init(fd, CORE, QUEUE, RING, 64, T_1MS, &init), "NQ_INIT");
	CK(!neuron_ring_map(fd, &init, &ring), "mmap");
	CK(!neuron_nq_bind_eventfd(fd, CORE, QUEUE, efd), "NQ_EVENTFD");
	if (child_fails || write(h->ready[1], &c, 1) != 1 || read(h->go[0], &c, 1) != 1)
		return 101;
	CK(!nq_info(fd, CORE, QUEUE, &info), "NQ_INFO");
	CK(info.threshold == 64, "threshold changed by the other user");
	CK(info.coalesce_ns == T_1MS, "coalesce_ns changed by the other user");
	CK(!run_notifies(fd, CORE, NEURON_ENGINE_PE, 0, 3), "SUBMIT");
	CK(neuron_engine_wait(fd, CORE, NEURON_ENGINE_PE, NEURON_WAIT_MS) ==
	   NEURON_ENGINE_IDLE, "program ran");
	CK(neuron_eventfd_wait(efd, DEADLINE_MS) == 1, "time limit still delivers");
	CK(take(&ring, 0, 3) == 3, "3 records in order");
	neuron_ring_unmap(&ring);
	close(efd);
	close(fd);
	return child_fails;
}

/* TENANT_B: every call on A's queue refused; the clock sample is anyone's. */
static int other_user(void *arg)
{
	const char *who = "other user";
	struct neuron_timestamp ts = { .core = CORE };
	struct neuron_nq_info info;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 100;
	CK(nq_coalesce(fd, CORE, QUEUE, 1, 0) == -ENOENT, "NQ_COALESCE -ENOENT");
	CK(nq_coalesce(fd, CORE, QUEUE, 0, 0) == -ENOENT, "NQ_COALESCE 0/0 -ENOENT");
	CK(nq_coalesce(fd, CORE, QUEUE, 1, T_MAX + 1) == -EINVAL,
	   "NQ_COALESCE bad coalesce_ns -EINVAL first");
	CK(nq_info(fd, CORE, QUEUE, &info) == -ENOENT, "NQ_INFO -ENOENT");
	CK(nq_init(fd, CORE, QUEUE, RING, 1, 0, NULL) == -EPERM, "NQ_INIT on A's core -EPERM");
	CK(!neuron_ioctl(fd, NEURON_IOC_TIMESTAMP, &ts), "TIMESTAMP");
	close(fd);
	return child_fails;
}

static pid_t fork_as(uid_t uid, int (*fn)(void *), void *arg)
{
	gid_t grp = TENANT_GID;
	pid_t pid;

	fflush(stdout);		/* the child inherits nothing to print twice */
	pid = fork();

	if (pid)
		return pid;
	if (setgroups(1, &grp) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		_exit(102);
	_exit(fn(arg));
}

static int reap(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(second_user)
{
	struct handshake h;
	struct stat st;
	pid_t a;
	char c = 'g';

	ASSERT_EQ(0, stat(NEURON_DEV, &st));
	ASSERT_EQ(0, chown(NEURON_DEV, 0, TENANT_GID));
	ASSERT_EQ(0, chmod(NEURON_DEV, 0660));
	ASSERT_EQ(0, pipe(h.ready));
	ASSERT_EQ(0, pipe(h.go));

	a = fork_as(TENANT_A, owner, &h);
	ASSERT_LT(0, a);
	close(h.ready[1]);	/* an owner that gives up: EOF, not a hang */
	close(h.go[0]);
	ASSERT_EQ(1, read(h.ready[0], &c, 1)) TH_LOG("the owner did not make its queue");
	EXPECT_EQ(0, reap(fork_as(TENANT_B, other_user, NULL)));
	ASSERT_EQ(1, write(h.go[1], &c, 1));
	EXPECT_EQ(0, reap(a));
	close(h.ready[0]);
	close(h.go[1]);

	EXPECT_EQ(0, chown(NEURON_DEV, st.st_uid, st.st_gid));
	EXPECT_EQ(0, chmod(NEURON_DEV, st.st_mode & 07777));
}

/* ---- live changes under a backpressured stream ----------------------------- */

#define STREAM_RING	1024		/* 64 records */
#define STREAM_N	1000		/* records per engine */
#define BURST		100		/* records per engine between pauses */
#define PAUSE_NS	10000000	/* device time between bursts: 10 ms */
#define WAKE_WAIT_MS	5000

/*
 * STREAM_N NOTIFYs with debug_hint_extended 0..STREAM_N-1 on @engine of
 * core 1, in bursts of BURST with a DELAY of PAUSE_NS after each. An engine
 * retires up to 64 instructions at a time (docs/device-model.md
 * "Engines"), so a burst fills the 64-entry ring before any consumer can
 * move HEAD and the engine stalls; the quiet times leave records below the
 * count limit, for the time limit or a settings change to deliver.
 */
static int run_stream(int fd, __u32 engine)
{
	static struct neuron_emu_insn prog[NEURON_MAX_PROGRAM_INSNS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < STREAM_N; i++) {
		prog[n] = neuron_insn(NEURON_OP_NOTIFY, 0);
		prog[n++].operand.arg.debug_hint_extended = htole16((uint16_t)i);
		if (i % BURST == BURST - 1) {
			prog[n] = neuron_insn(NEURON_OP_DELAY, 0);
			prog[n++].operand.arg.value = htole32(PAUSE_NS);
		}
	}
	prog[n++] = neuron_insn(NEURON_OP_HALT, 0);
	return neuron_submit(fd, 1, engine, prog, n, 0);
}

/* sysfs intr_counts of core 1: edges with tpb_notific_intr_5 (BACKPRESSURE) */
static uint64_t backpressure_edges(void)
{
	char buf[4096], *line;
	uint64_t v = 0;

	if (neuron_sysfs_read("intr_counts", buf, sizeof(buf)) < 0)
		return 0;
	line = strstr(buf, "core1 ");
	if (!line)
		return 0;
	line += strlen("core1 ");
	for (int i = 0; i <= 5; i++)
		v = strtoull(line, &line, 10);
	return v;
}

/* (THRESHOLD, coalesce_ns) the changer cycles through */
static const struct { __u32 threshold, ns; } settings[] = {
	{ 1, 0 }, { 64, 100000 }, { 8, 0 }, { 0, 50000 }, { 16, T_1MS },
	{ 0, 0 }, { 3, 20000 }, { 64, 0 }, { 32, 200000 }, { 0, T_MAX },
};

struct consumer {
	struct neuron_ring ring;
	int efd;
	volatile int done;
	unsigned int got[2];		/* records per engine: PE, ACT */
	unsigned int bad_type, out_of_order, wakes, empty_wakes, stuck;
	uint32_t first_bad;
};

/* Sleeps on the eventfd, drains until empty, one HEAD write per batch. */
static void *consume(void *arg)
{
	const uint8_t pe = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_PE,
						      NEURON_ENGINE_RECORD_EXPLICIT);
	const uint8_t act = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_ACT,
						       NEURON_ENGINE_RECORD_EXPLICIT);
	struct consumer *c = arg;
	union neuron_isa_notification r;

	while (c->got[0] + c->got[1] < 2 * STREAM_N) {
		unsigned int batch = 0;

		if (!neuron_eventfd_wait(c->efd, WAKE_WAIT_MS)) {
			c->stuck++;	/* records left without a wake-up */
			break;
		}
		c->wakes++;
		while (neuron_ring_peek(&c->ring, &r)) {
			uint8_t t = neuron_rec_type(&r);
			int e = t == pe ? 0 : t == act ? 1 : -1;

			batch++;
			if (e < 0) {
				c->bad_type++;
				continue;
			}
			if (r.explicit_notif.debug_hint_extended != c->got[e] &&
			    !c->out_of_order++)
				c->first_bad = c->ring.head - 1;
			c->got[e]++;
		}
		if (batch)
			ack(&c->ring);
		else
			c->empty_wakes++;
	}
	c->done = 1;
	return NULL;
}

TEST_F_TIMEOUT(cq, live_changes_lose_nothing, 120)
{
	struct consumer c = { 0 };
	struct neuron_nq_info info;
	unsigned int changes = 0;
	uint64_t t0, t1, stalls = backpressure_edges();
	pthread_t tid;

	ASSERT_EQ(0, nq_init(self->fd, 1, QUEUE, STREAM_RING, 1, 0, &self->init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &self->init, &c.ring));
	self->ring = c.ring;	/* unmapped by the teardown */
	ASSERT_EQ(64, c.ring.entries);
	c.efd = self->efd;
	ASSERT_EQ(0, neuron_nq_bind_eventfd(self->fd, 1, QUEUE, self->efd));
	ASSERT_EQ(0, pthread_create(&tid, NULL, consume, &c));

	t0 = neuron_now_ms();
	ASSERT_EQ(0, run_stream(self->fd, NEURON_ENGINE_PE));
	ASSERT_EQ(0, run_stream(self->fd, NEURON_ENGINE_ACT));
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		ASSERT_EQ(0, nq_coalesce(self->fd, 1, QUEUE,
					 settings[changes % ARRAY_SIZE(settings)].threshold,
					 settings[changes % ARRAY_SIZE(settings)].ns));
		changes++;
		usleep(500);
	}
	t1 = neuron_now_ms();
	pthread_join(tid, NULL);

	EXPECT_EQ(0, c.stuck) TH_LOG("no wake-up for %d ms with %u + %u of %u records in",
				     WAKE_WAIT_MS, c.got[0], c.got[1], 2 * STREAM_N);
	EXPECT_EQ(STREAM_N, c.got[0]);
	EXPECT_EQ(STREAM_N, c.got[1]);
	EXPECT_EQ(0, c.bad_type);
	EXPECT_EQ(0, c.out_of_order) TH_LOG("first at record %u", c.first_bad);
	EXPECT_LE(20, changes) TH_LOG("the settings changed only %u times", changes);
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_PE,
							 NEURON_WAIT_MS));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, 1, NEURON_ENGINE_ACT,
							 NEURON_WAIT_MS));
	ASSERT_EQ(0, nq_info(self->fd, 1, QUEUE, &info));
	EXPECT_EQ(2 * STREAM_N, info.tail);
	EXPECT_EQ(2 * STREAM_N, info.head);
	EXPECT_EQ(0, info.overflow_count);
	EXPECT_EQ(0, info.drop_count);
	stalls = backpressure_edges() - stalls;
	EXPECT_LT(0, stalls) TH_LOG("the ring never filled: not a backpressure test");
	ksft_print_msg("coalesce: %u records through a %u-entry ring in %.2f s, "
		       "%u settings changes, %u wake-ups (%.1f records each, %u empty), "
		       "%llu backpressure edges\n",
		       c.got[0] + c.got[1], c.ring.entries, (t1 - t0) / 1000.0, changes,
		       c.wakes, c.wakes ? (double)(c.got[0] + c.got[1]) / c.wakes : 0.0,
		       c.empty_wakes, (unsigned long long)stalls);
}

/* ---- NEURON_IOC_TIMESTAMP ------------------------------------------------- */

static int timestamp(int fd, __u32 core, struct neuron_timestamp *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->core = core;
	return neuron_ioctl(fd, NEURON_IOC_TIMESTAMP, ts);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

TEST_F(cq, timestamp)
{
	struct neuron_timestamp a, b, c1, bad;
	union neuron_isa_notification r;
	uint64_t before = mono_ns();
	int ro = neuron_open_flags(O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, ro);
	ASSERT_EQ(0, timestamp(self->fd, CORE, &a));
	EXPECT_LE(before, a.sys_before_ns);	/* CLOCK_MONOTONIC */
	EXPECT_LE(a.sys_before_ns, a.sys_after_ns);
	EXPECT_LT(0, a.device_ps);
	EXPECT_EQ(CORE, a.core);
	EXPECT_EQ(0, a.reserved0);
	EXPECT_EQ(0, a.reserved);

	/* a record written after the first sample and before the second */
	cq_make(_metadata, self, 1, 0);
	cq_records(_metadata, self, 0, 1);
	ASSERT_EQ(1, neuron_eventfd_wait(self->efd, DEADLINE_MS));
	ASSERT_EQ(1, neuron_ring_peek(&self->ring, &r));
	ASSERT_EQ(0, timestamp(self->fd, CORE, &b));
	EXPECT_LT(a.device_ps, b.device_ps);
	EXPECT_LE(a.sys_after_ns, b.sys_before_ns);
	EXPECT_LE(a.device_ps, r.explicit_notif.timestamp);
	EXPECT_GE(b.device_ps, r.explicit_notif.timestamp);

	/* any core; a read-only file too */
	ASSERT_EQ(0, timestamp(self->fd, 1, &c1));
	EXPECT_LT(0, c1.device_ps);
	ASSERT_EQ(0, timestamp(ro, CORE, &c1));
	EXPECT_LT(b.device_ps, c1.device_ps);
	EXPECT_LE(b.sys_after_ns, c1.sys_before_ns);

	/* bad input */
	EXPECT_EQ(-EINVAL, timestamp(self->fd, 2, &bad));
	EXPECT_EQ(-EINVAL, timestamp(ro, 0xffffffff, &bad));
	bad = (struct neuron_timestamp){ .core = CORE, .reserved0 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_TIMESTAMP, &bad));
	bad = (struct neuron_timestamp){ .core = CORE, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_TIMESTAMP, &bad));
	ksft_print_msg("timestamp: window %llu ns (%llu ns read-only file), device %llu ps\n",
		       (unsigned long long)(b.sys_after_ns - b.sys_before_ns),
		       (unsigned long long)(c1.sys_after_ns - c1.sys_before_ns),
		       (unsigned long long)b.device_ps);
	close(ro);
}

TEST_HARNESS_MAIN
