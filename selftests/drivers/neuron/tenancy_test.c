// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of tenancy (issue 10, docs/decisions/0005-tenancy.md): a core
 * belongs to one open file, device memory to the file that allocated it,
 * and every cross-tenant action is refused with its documented errno.
 *
 * The binary runs as root and forks tenants that drop to two unprivileged
 * uids (TENANT_A, TENANT_B), reaching /dev/nnq0 through the group
 * TENANT_GID (the node is made root:TENANT_GID 0660 for the run and put
 * back afterwards). Children write every check they make into a shared
 * page as (what, want, got); the parent asserts them one by one, so a
 * failure names the call. Groups:
 *
 *   cross_tenant	B attacks A's core, queues, mappings, engines,
 *			semaphores, events, feature flags and device memory
 *			(DGE_COPY), dumps queues and joins "events" over
 *			netlink, while A runs a record stream whose every
 *			record is checked: 0 lost, 0 altered
 *   kill9		an owner with live queues, running and waiting
 *			engines and mappings is killed: time until the other
 *			uid's CORE_ACQUIRE succeeds (< 1 s), then it runs
 *			programs on the freed cores
 *   read_only		an O_RDONLY file reads DEVICE_INFO, ENGINE_STATUS and
 *			TIMESTAMP and maps its own status page (read-only),
 *			nothing else (-EBADF, mmap -EACCES)
 *   records		records stay with their tenant: B's programs on its
 *			core never reach A's rings; events by owner
 *   memcg		a process in a memory cgroup of 64 MiB cannot make
 *			the driver allocate past it: NQ_INIT -ENOMEM, the
 *			cgroup's counter carries the rings
 *   core_ioctls	CORE_ACQUIRE/RELEASE and MEM_ALLOC/FREE inputs; the
 *			device-memory quota per user (another file of the
 *			user, a device ring, another uid, mem_users)
 *   fork_mappings	a forked child inherits no mapping of the file: once
 *			the parent unmaps and both close it, the core is free
 *			while the child lives
 *   fanout		a NOTIFIC edge is queued for its core's owner alone,
 *			however many files of others read events
 *   detach		an owner (TENANT_O) grants uid A its cores: A's
 *			detached programs run on the owner's behalf (records
 *			in the owner's queue, the owner's memory) and outlive
 *			A's file; uid B and the ungranted are refused; revoke;
 *			the owner's ENGINE_RESET, CORE_RELEASE and release stop
 *			them, each counted and reported (ENGINE_STOPPED)
 *   grant_ioctls	CORE_GRANT inputs; ENGINE_RESET of a running engine:
 *			one ENGINE_STOPPED event, one more in programs_stopped
 *   mem_busy		free-while-running: MEM_FREE -EBUSY while a program
 *			of the file waits (a DGE_COPY, then WAIT_GE) or runs
 *			(DELAYs), and while a detached one it holds waits;
 *			the other uid's FIXED MEM_ALLOC of the block -EBUSY
 *			until ENGINE_RESET (or the end); another file's
 *			program holds nothing
 *   submit_check	a SUBMIT held (pause point) between its program's
 *			check and the device's lock: another uid's MEM_ALLOC
 *			and MEM_FREE complete meanwhile; the same file's
 *			MEM_FREE of a block the program names waits for the
 *			SUBMIT and is then refused (-EBUSY, the program waits)
 *   mem_zero		reuse after free: B allocates the blocks A wrote and
 *			freed (MEM_FREE, release); a traced DGE_COPY's
 *			INST_START CRC of them is that of zero bytes
 *   throttle_flood	B floods THROTTLE on its core while A runs programs
 *			with a threshold edge each: A gets exactly its own
 *			events and records; B's THROTTLE events carry core
 *			1 and are rate limited (event_ratelimit "4 600000":
 *			4 of 10 reported, 6 suppressed, the count on the next
 *			one); B cannot change the limit; the 2 edges core 1's
 *			previous owner O left suppressed are not counted on
 *			B's events
 *
 * Every group runs by default; name some to run only those: as arguments,
 * or (with none) "neuron_tenancy=GROUP,..." on the kernel command line
 * (run-vm.sh --append).
 *
 * Expected values are the UAPI's (include/uapi/linux/neuron.h: the
 * "Tenancy" paragraph and each Errors: line), written here as literals.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"
#include "robust_lib.h"
#include "genl_lib.h"

#define TENANT_A	1001
#define TENANT_B	1002
#define TENANT_O	1003	/* the owner of the detach group */
#define TENANT_GID	1000

/* Device memory each tenant allocates (BAR4 offsets, below mem_alloc_limit). */
#define MEM_A		0x100000u
#define MEM_B		0x200000u
#define MEM_O		0x300000u
#define MEM_LEN		0x10000u

#define EXPL_QUEUE	1	/* EXPLICIT records' queue (default ROUTE) */
#define STREAM_BATCH	256	/* NOTIFYs per program of the stream */
#define STREAM_RING	(1u << 16)

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_DIR	CGROUP_ROOT "/neuron_tenancy"
#define MIB		(1024ull * 1024)

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* ---- checks made by children, asserted by the parent ------------------ */

#define MAX_CHECKS	160

struct check {
	char what[80];
	long long want, got;
	int kind;		/* 0: want == got, 1: got <= want, 2: got >= want, 3: got != want */
};

struct shared {
	/* handshakes */
	volatile int a_ready, b_ready, attack_done, parent_done, killed;
	volatile int in_cgroup;
	/* A's queue cookies and pid, for the attacker */
	uint64_t a_ring, a_db;
	/* stream figures */
	uint64_t stream_records, stream_lost, stream_altered, stream_batches;
	uint64_t attacks;
	/* kill9 */
	uint64_t t_kill_us, t_free_us;
	/* memcg */
	int rings, ring_err;
	long long mc_base, mc_before, mc_after[24], mc_closed, mc_max, mc_peak;
	/* detach: the steps of its three tenants, in order */
	volatile int step[16];
	/* the checks */
	int n;
	struct check c[MAX_CHECKS];
};

static struct shared *sh;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void chk_kind(int kind, long long want, long long got, const char *fmt, ...)
{
	struct check *c;
	va_list ap;
	int i = __atomic_fetch_add(&sh->n, 1, __ATOMIC_RELAXED);

	if (i >= MAX_CHECKS)
		return;
	c = &sh->c[i];
	va_start(ap, fmt);
	vsnprintf(c->what, sizeof(c->what), fmt, ap);
	va_end(ap);
	c->want = want;
	c->got = got;
	c->kind = kind;
}

#define chk(want, got, ...)	chk_kind(0, (want), (got), __VA_ARGS__)
#define chk_le(max, got, ...)	chk_kind(1, (max), (got), __VA_ARGS__)
#define chk_ge(min, got, ...)	chk_kind(2, (min), (got), __VA_ARGS__)
#define chk_ne(other, got, ...)	chk_kind(3, (other), (got), __VA_ARGS__)

/* Asserts every check the children recorded, then forgets them. */
static void assert_checks(struct __test_metadata *_metadata, int min_checks)
{
	int n = sh->n < MAX_CHECKS ? sh->n : MAX_CHECKS;

	EXPECT_GE(MAX_CHECKS, sh->n) TH_LOG("more checks than MAX_CHECKS");
	EXPECT_LE(min_checks, n) TH_LOG("a child stopped early: %d checks", n);
	for (int i = 0; i < n; i++) {
		const struct check *c = &sh->c[i];

		if (c->kind == 0) {
			EXPECT_EQ(c->want, c->got) TH_LOG("%s", c->what);
		} else if (c->kind == 1) {
			EXPECT_GE(c->want, c->got) TH_LOG("%s (at most)", c->what);
		} else if (c->kind == 2) {
			EXPECT_LE(c->want, c->got) TH_LOG("%s (at least)", c->what);
		} else {
			EXPECT_NE(c->want, c->got) TH_LOG("%s (must differ)", c->what);
		}
	}
	sh->n = 0;
}

static void wait_flag(volatile int *flag, unsigned int ms)
{
	uint64_t deadline = neuron_now_ms() + ms;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE) && neuron_now_ms() < deadline)
		usleep(1000);
}

static void set_flag(volatile int *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

/* ---- tenants ------------------------------------------------------------ */

/*
 * Drops to @uid (0: stays root) with the device group as a supplementary
 * group. The saved uid stays 0 (no capability is effective) so that
 * operator_sysfs_read() can read the root-only per-core counters as the
 * operator would.
 */
static int become(uid_t uid)
{
	gid_t grp = TENANT_GID;

	if (!uid)
		return 0;
	if (setgroups(1, &grp) || setresgid(uid, uid, uid) || setresuid(uid, uid, 0))
		return -errno;
	return 0;
}

/*
 * neuron_sysfs_read() as root: the per-core counters are 0400
 * (docs/decisions/0005-tenancy.md#per-core-counters); a tenant of become()
 * takes its saved uid 0 back for the read only.
 */
static int operator_sysfs_read(const char *attr, char *buf, size_t len)
{
	uid_t euid = geteuid();
	int ret;

	if (euid && seteuid(0))
		return -errno;
	ret = neuron_sysfs_read(attr, buf, len);
	if (euid && seteuid(euid))
		return -errno;
	return ret;
}

/* Forks a tenant running @fn as @uid; its exit status is fn's return. */
static pid_t spawn(uid_t uid, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (become(uid)) {
		chk(0, -errno, "setresuid(%u)", uid);
		_exit(100);
	}
	_exit(fn(arg));
}

/* Exit status of @pid, 128 + signal if killed, -1 if waitpid failed. */
static int reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int cores_ioctl(int fd, unsigned long cmd, __u64 cores, __u64 *owned)
{
	struct neuron_cores c = { .cores = cores, .owned = 0xdead };
	int ret = neuron_ioctl(fd, cmd, &c);

	if (owned)
		*owned = c.owned;
	return ret;
}

static int mem_alloc(int fd, __u64 offset, __u64 size, __u32 flags, __u64 *out)
{
	struct neuron_mem_alloc m = { .size = size, .offset = offset, .flags = flags };
	int ret = neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &m);

	if (out)
		*out = m.offset;
	return ret;
}

static int mem_free(int fd, __u64 offset)
{
	struct neuron_mem_free m = { .offset = offset };

	return neuron_ioctl(fd, NEURON_IOC_MEM_FREE, &m);
}

/*
 * Tenant bodies for core_ioctls' quota checks: each opens the device as
 * its uid, makes one MEM_ALLOC and returns 0 when it got the result
 * named, 1 otherwise.
 */
static int alloc_as_tenant(__u64 offset, __u64 size, __u32 flags, int want)
{
	int fd = neuron_open(), ret;

	chk_ge(0, fd, "open as a tenant");
	if (fd < 0)
		return 1;
	ret = mem_alloc(fd, offset, size, flags, NULL);
	close(fd);
	chk(want, ret, "MEM_ALLOC(%#llx, %#llx) as a tenant",
	    (unsigned long long)offset, (unsigned long long)size);
	return ret != want;
}

static int alloc_one_page(void *unused)
{
	return alloc_as_tenant(0, PAGE, 0, 0);
}

static int alloc_whole_busy(void *unused)
{
	return alloc_as_tenant(0, 32u << 20, NEURON_MEM_F_FIXED, -EBUSY);
}

static int alloc_none_left(void *unused)
{
	return alloc_as_tenant(0, PAGE, 0, -ENOMEM);
}

static int evt_sem(int fd, __u32 core, __u32 index, __u32 op, __u32 *value)
{
	struct neuron_evt_sem s = { .core = core, .index = index, .op = op,
				    .value = value ? *value : 0 };
	int ret = neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &s);

	if (value)
		*value = s.value;
	return ret;
}

static int features(int fd, __u32 core, __u32 op, __u32 *flags)
{
	struct neuron_feature_flags f = { .core = core, .op = op, .flags = *flags };
	int ret = neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &f);

	*flags = f.flags;
	return ret;
}

static int engine_reset(int fd, __u32 core, __u32 engine)
{
	struct neuron_engine_id id = { .core = core, .engine = engine };

	return neuron_ioctl(fd, NEURON_IOC_ENGINE_RESET, &id);
}

static struct neuron_emu_insn dge_copy(uint32_t src, uint32_t dst, uint32_t len)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_DGE_COPY, 0);

	in.operand.dge.src = htole32(src);
	in.operand.dge.dst = htole32(dst);
	in.operand.dge.length = htole32(len);
	in.operand.dge.backend = NEURON_DGE_BACKEND_POOL;
	return in;
}

static int try_mmap(int fd, uint64_t off, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

/* sysfs core_owners line of @core, newline stripped, into @line. */
static int core_owner_line(unsigned int core, char *line, size_t len)
{
	char buf[512], want[16], *p, *nl;

	if (neuron_sysfs_read("core_owners", buf, sizeof(buf)) < 0)
		return -errno;
	snprintf(want, sizeof(want), "%u ", core);
	for (p = buf; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (!strncmp(p, want, strlen(want))) {
			snprintf(line, len, "%.100s", p);
			return 0;
		}
	}
	return -ENOENT;
}

static void expect_owner(struct __test_metadata *_metadata, unsigned int core, pid_t pid)
{
	char line[128], want[128];

	if (pid)
		snprintf(want, sizeof(want), "%u %d tenancy_test", core, pid);
	else
		snprintf(want, sizeof(want), "%u - -", core);
	ASSERT_EQ(0, core_owner_line(core, line, sizeof(line)));
	EXPECT_STREQ(want, line);
}

/* ---- fixture: the device node for the tenants, a kernel-log cursor ------ */

FIXTURE(ten)
{
	int kmsg;
	struct stat node;
};

FIXTURE_SETUP(ten)
{
	ASSERT_EQ(0, stat(NEURON_DEV, &self->node));
	ASSERT_EQ(0, chown(NEURON_DEV, 0, TENANT_GID));
	ASSERT_EQ(0, chmod(NEURON_DEV, 0660));
	memset(sh, 0, sizeof(*sh));
	self->kmsg = kmsg_open();
	ASSERT_LE(0, self->kmsg);
}

FIXTURE_TEARDOWN(ten)
{
	write_str("/sys/module/nnq/parameters/pause_step", "0");	/* submit_check's */
	EXPECT_EQ(0, chown(NEURON_DEV, self->node.st_uid, self->node.st_gid));
	EXPECT_EQ(0, chmod(NEURON_DEV, self->node.st_mode & 07777));
	EXPECT_EQ(0, kmsg_bad_lines(self->kmsg)) TH_LOG("the kernel logged a problem");
	close(self->kmsg);
	/* whatever happened, every core is free again */
	for (unsigned int c = 0; c < 2; c++)
		expect_owner(_metadata, c, 0);
}

/* ==== cross_tenant ========================================================= */

/* The 4-bit debug_hint of stream record @seq: a check on its ext hint. */
static uint16_t stream_hint(uint32_t seq)
{
	return (uint16_t)((seq * 7 + (seq >> 4) + 3) & 0xf);
}

/*
 * Tenant A: owns core 0 and MEM_A, streams STREAM_BATCH NOTIFYs per
 * program on PE into its queue 1 and checks every record (type, pc,
 * debug_hint, debug_hint_extended, soft_reset_counter) until B is done.
 */
static int victim(void *arg)
{
	uint8_t expl = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_PE, NEURON_ENGINE_RECORD_EXPLICIT);
	static struct neuron_emu_insn prog[STREAM_BATCH + 1];
	struct neuron_nq_info info = { .core = 0, .queue = EXPL_QUEUE };
	struct neuron_engine_status st0, st;
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	uint32_t seq = 0, v;
	__u32 ff = NEURON_FEATURE_DGE_PACKET_NOTIF;
	__u64 owned, off;
	int fd = neuron_open(), final = 0;

	if (fd < 0)
		return 10;
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned), "A: CORE_ACQUIRE core 0");
	chk(1, owned, "A: owned after CORE_ACQUIRE");
	chk(0, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, &off), "A: MEM_ALLOC fixed");
	chk(MEM_A, off, "A: MEM_ALLOC offset");
	if (neuron_nq_create(fd, 0, EXPL_QUEUE, STREAM_RING, 0, &init) ||
	    neuron_ring_map(fd, &init, &ring))
		return 11;
	/* state B will try to change */
	v = 0x1234;
	chk(0, evt_sem(fd, 0, 5, NEURON_SEM_SET, &v), "A: SEM_SET");
	chk(0, evt_sem(fd, 0, 7, NEURON_EVENT_SET, NULL), "A: EVENT_SET");
	chk(0, features(fd, 0, NEURON_FEATURE_OP_SET, &ff), "A: FEATURE_FLAGS set");
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st0), "A: ENGINE_STATUS");
	sh->a_ring = init.ring_offset;
	sh->a_db = init.doorbell_offset;

	for (;;) {
		uint32_t first = seq;

		for (unsigned int i = 0; i < STREAM_BATCH; i++, seq++) {
			prog[i] = neuron_insn(NEURON_OP_NOTIFY, stream_hint(seq));
			prog[i].operand.arg.debug_hint_extended = htole16((uint16_t)seq);
		}
		prog[STREAM_BATCH] = neuron_insn(NEURON_OP_HALT, 0);
		if (neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, STREAM_BATCH + 1, 0))
			return 12;
		set_flag(&sh->a_ready);
		for (unsigned int i = 0; i < STREAM_BATCH; i++) {
			union neuron_isa_notification r;
			uint32_t s = first + i;

			if (neuron_ring_read(&ring, &r, 1, NEURON_WAIT_MS)) {
				sh->stream_lost += STREAM_BATCH - i;
				break;
			}
			sh->stream_records++;
			if (neuron_rec_type(&r) != expl ||
			    r.explicit_notif.program_counter != i ||
			    r.explicit_notif.debug_hint != stream_hint(s) ||
			    r.explicit_notif.debug_hint_extended != (uint16_t)s)
				sh->stream_altered++;
		}
		if (neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS) !=
		    NEURON_ENGINE_IDLE)
			return 13;
		sh->stream_batches++;
		if (final)
			break;
		if (__atomic_load_n(&sh->attack_done, __ATOMIC_ACQUIRE))
			final = 1;	/* one more program after the attacks */
		if (sh->stream_batches > 400)
			return 14;
	}
	/* the engine ran every program of A and nothing else: one start each */
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st), "A: ENGINE_STATUS");
	chk(st0.last_error, st.last_error, "A: PE last_error untouched");
	chk(st0.soft_reset_counter + sh->stream_batches, st.soft_reset_counter,
	    "A: PE started A's programs only");
	chk(0, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &info), "A: NQ_INFO");
	chk(seq, info.tail, "A: queue tail = records streamed");
	chk(0, info.overflow_count, "A: overflow_count");
	chk(0, info.drop_count, "A: drop_count");
	chk(0, evt_sem(fd, 0, 5, NEURON_SEM_READ, &v), "A: SEM_READ");
	chk(0x1234, v, "A: semaphore 5 untouched");
	chk(0, evt_sem(fd, 0, 7, NEURON_EVENT_READ, &v), "A: EVENT_READ");
	chk(1, v, "A: event 7 untouched");
	ff = 0;
	chk(0, features(fd, 0, NEURON_FEATURE_OP_GET, &ff), "A: FEATURE_FLAGS get");
	chk(NEURON_FEATURE_DGE_PACKET_NOTIF, ff, "A: feature flags untouched");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned), "A: ownership query");
	chk(1, owned, "A: still owns core 0 only");
	wait_flag(&sh->parent_done, NEURON_WAIT_MS);
	neuron_ring_unmap(&ring);
	close(fd);
	return 0;
}

/* B's netlink attempts: dump of every queue and the events group. */
static void attack_netlink(void)
{
	struct nlc nl;
	int grp, ret;

	ret = nlc_open(&nl);
	chk(0, ret, "B: resolve the genl family");
	if (ret)
		return;
	ret = nlc_send(&nl, nl.family, NLM_F_DUMP, NEURON_CMD_GET_NQ, NULL, 0);
	if (!ret)
		ret = nlc_answer(&nl, NULL, NULL);
	chk(-EPERM, ret, "B: genl GET_NQ dump without CAP_NET_ADMIN");
	grp = (int)nl.events_grp;
	chk_ge(1, grp, "B: events group id");
	ret = setsockopt(nl.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp));
	chk(-EPERM, ret ? -errno : 0, "B: join genl group events without CAP_NET_ADMIN");
	ret = nlc_send(&nl, nl.family, NLM_F_DUMP, NEURON_CMD_GET_DEVICE, NULL, 0);
	if (!ret)
		ret = nlc_answer(&nl, NULL, NULL);
	chk(0, ret, "B: genl GET_DEVICE dump stays open");
	close(nl.fd);
	sh->attacks += 2;
}

/* B's DGE_COPY attempts from its own core 1: A's memory, the driver's. */
static void attack_dge(int fd, const struct neuron_device_info *info)
{
	const uint32_t lim = (uint32_t)info->mem_alloc_limit;
	const struct {
		const char *what;
		uint32_t src, dst, len;
	} bad[] = {
		{ "source in A's memory", MEM_A, MEM_B, 64 },
		{ "destination in A's memory", MEM_B, MEM_A + 0x100, 64 },
		{ "destination in A's memory, length 0", MEM_B, MEM_A, 0 },
		{ "source from free memory into A's", MEM_A - 32, MEM_B, 64 },
		{ "source past the end of B's allocation", MEM_B + MEM_LEN - 32, MEM_B, 64 },
		{ "destination at mem_alloc_limit (rings)", MEM_B, lim, 64 },
		{ "source at the top of memory (programs)", (uint32_t)info->mem_size - 64,
		  MEM_B, 64 },
		{ "source in memory nobody allocated", MEM_B + 2 * MEM_LEN, MEM_B, 64 },
	};
	struct neuron_engine_status before, after;
	struct neuron_emu_insn prog[6];

	/* the control: a copy inside B's own allocation runs */
	prog[0] = dge_copy(MEM_B, MEM_B + 0x1000, 64);
	prog[1] = neuron_insn(NEURON_OP_HALT, 0);
	chk(0, neuron_submit(fd, 1, NEURON_ENGINE_POOL, prog, 2, 0),
	    "B: DGE_COPY inside its own memory");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 1, NEURON_ENGINE_POOL, NEURON_WAIT_MS),
	    "B: own copy ran");
	chk(0, neuron_engine_status(fd, 1, NEURON_ENGINE_POOL, &before), "B: ENGINE_STATUS");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		/* the bad copy after good instructions: refused as a whole */
		prog[0] = neuron_insn(NEURON_OP_NOP, 0);
		prog[1] = dge_copy(MEM_B, MEM_B + 0x2000, 128);
		prog[2] = neuron_insn(NEURON_OP_NOP, 0);
		prog[3] = dge_copy(bad[i].src, bad[i].dst, bad[i].len);
		prog[4] = neuron_insn(NEURON_OP_HALT, 0);
		chk(-EACCES, neuron_submit(fd, 1, NEURON_ENGINE_POOL, prog, 5, 0),
		    "B: DGE_COPY %s", bad[i].what);
		sh->attacks++;
	}
	/* nothing ran: no start, no instruction retired */
	chk(0, neuron_engine_status(fd, 1, NEURON_ENGINE_POOL, &after), "B: ENGINE_STATUS");
	chk(before.soft_reset_counter, after.soft_reset_counter,
	    "B: refused programs started nothing");
	chk(before.exec_count, after.exec_count, "B: refused programs retired nothing");
}

/* Tenant B: owns core 1 and MEM_B; every attempt on A's things is refused. */
static int attacker(void *arg)
{
	struct neuron_emu_insn prog[2] = { notify_insn(0xbad), neuron_insn(NEURON_OP_HALT, 0) };
	struct neuron_nq_info ni = { .core = 0, .queue = EXPL_QUEUE };
	struct neuron_nq_eventfd ne = { .core = 0, .queue = EXPL_QUEUE, .fd = -1 };
	struct neuron_throttle th = { .enable = 1 };
	struct neuron_device_info info;
	struct neuron_engine_status st;
	static const __u32 sem_writes[] = {
		NEURON_SEM_SET, NEURON_SEM_INC, NEURON_SEM_DEC, NEURON_EVENT_SET,
		NEURON_EVENT_CLEAR,
	};
	__u64 owned, off;
	__u32 v, ff;
	int fd = neuron_open();

	if (fd < 0)
		return 20;
	chk(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info), "B: DEVICE_INFO");
	chk_ge(MEM_B + 3 * MEM_LEN, info.mem_alloc_limit, "B: mem_alloc_limit");
	chk_le(info.mem_size, info.mem_alloc_limit, "B: mem_alloc_limit within memory");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 2, &owned), "B: CORE_ACQUIRE core 1");
	chk(2, owned, "B: owned");
	chk(0, mem_alloc(fd, MEM_B, MEM_LEN, NEURON_MEM_F_FIXED, &off), "B: MEM_ALLOC fixed");
	wait_flag(&sh->a_ready, NEURON_WAIT_MS);
	chk(1, sh->a_ready, "B: A started its stream");

	/* ownership */
	chk(-EBUSY, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned), "B: CORE_ACQUIRE A's core");
	chk(-EBUSY, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 3, &owned),
	    "B: CORE_ACQUIRE both cores");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned), "B: ownership query");
	chk(2, owned, "B: all-or-nothing: still core 1 only");
	chk(-EPERM, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, NULL), "B: CORE_RELEASE A's core");
	/* mappings */
	chk(-EINVAL, try_mmap(fd, sh->a_ring, STREAM_RING, PROT_READ), "B: mmap A's ring cookie");
	chk(-EINVAL, try_mmap(fd, sh->a_db, PAGE, PROT_READ | PROT_WRITE),
	    "B: mmap A's doorbell cookie");
	/* queues */
	chk(-EPERM, neuron_nq_create(fd, 0, 2, 4096, 0, NULL), "B: NQ_INIT on A's core");
	chk(-EPERM, neuron_nq_create(fd, 0, 9, 4096, NEURON_NQ_F_DEVICE_MEM, NULL),
	    "B: NQ_INIT device ring on A's core");
	chk(-ENOENT, neuron_nq_destroy(fd, 0, EXPL_QUEUE), "B: NQ_DESTROY A's queue");
	chk(-ENOENT, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &ni), "B: NQ_INFO A's queue");
	chk(-ENOENT, neuron_ioctl(fd, NEURON_IOC_NQ_EVENTFD, &ne), "B: NQ_EVENTFD A's queue");
	/* engines */
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 2, 0), "B: SUBMIT to A's busy PE");
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, 2, 0), "B: SUBMIT to A's idle ACT");
	for (__u32 e = 0; e < NEURON_ENGINES_PER_CORE; e++)
		chk(-EPERM, engine_reset(fd, 0, e), "B: ENGINE_RESET A's engine %u", e);
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st), "B: ENGINE_STATUS of A's PE");
	/* semaphores, events */
	for (size_t i = 0; i < ARRAY_SIZE(sem_writes); i++) {
		v = 1;
		chk(-EPERM, evt_sem(fd, 0, i < 3 ? 5 : 7, sem_writes[i], &v),
		    "B: EVT_SEM op %u on A's core", sem_writes[i]);
	}
	/* reads too: semaphores and events are A's program state */
	chk(-EPERM, evt_sem(fd, 0, 5, NEURON_SEM_READ, &v), "B: SEM_READ of A's core");
	chk(-EPERM, evt_sem(fd, 0, 7, NEURON_EVENT_READ, &v), "B: EVENT_READ of A's core");
	/* feature flags, throttle */
	ff = 0;
	chk(-EPERM, features(fd, 0, NEURON_FEATURE_OP_SET, &ff), "B: FEATURE_FLAGS set on A's core");
	chk(0, features(fd, 0, NEURON_FEATURE_OP_GET, &ff), "B: FEATURE_FLAGS get on A's core");
	chk(-EPERM, neuron_ioctl(fd, NEURON_IOC_THROTTLE, &th), "B: THROTTLE without CAP_SYS_ADMIN");
	/* device memory */
	chk(-EBUSY, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, NULL),
	    "B: MEM_ALLOC fixed on A's memory");
	chk(-EBUSY, mem_alloc(fd, MEM_A + MEM_LEN - PAGE, 2 * PAGE, NEURON_MEM_F_FIXED, NULL),
	    "B: MEM_ALLOC fixed overlapping A's end");
	chk(-ENOENT, mem_free(fd, MEM_A), "B: MEM_FREE A's memory");
	sh->attacks += 26;
	attack_dge(fd, &info);
	attack_netlink();
	/* B's own core still works for B */
	chk(0, engine_reset(fd, 1, NEURON_ENGINE_PE), "B: ENGINE_RESET its own engine");
	set_flag(&sh->attack_done);
	wait_flag(&sh->parent_done, 2 * NEURON_WAIT_MS);
	close(fd);
	return 0;
}

/*
 * Every cross-tenant attempt of the issue, each with its documented errno,
 * while the victim's stream goes on: 0 records lost, 0 altered.
 */
TEST_F_TIMEOUT(ten, cross_tenant, 300)
{
	pid_t a, b;

	a = spawn(TENANT_A, victim, NULL);
	ASSERT_LT(0, a);
	b = spawn(TENANT_B, attacker, NULL);
	ASSERT_LT(0, b);
	wait_flag(&sh->attack_done, 4 * NEURON_WAIT_MS);
	EXPECT_EQ(1, sh->attack_done) TH_LOG("the attacker did not finish");
	/* both still open: the owners are named in sysfs */
	expect_owner(_metadata, 0, a);
	expect_owner(_metadata, 1, b);
	set_flag(&sh->parent_done);
	EXPECT_EQ(0, reap(b)) TH_LOG("attacker");
	EXPECT_EQ(0, reap(a)) TH_LOG("victim");
	assert_checks(_metadata, 70);
	EXPECT_LE(2, sh->stream_batches);
	EXPECT_EQ(sh->stream_batches * STREAM_BATCH, sh->stream_records);
	EXPECT_EQ(0, sh->stream_lost);
	EXPECT_EQ(0, sh->stream_altered);
	ksft_print_msg("tenancy: cross_tenant attempts=%" PRIu64 " stream_programs=%" PRIu64
		       " records=%" PRIu64 " lost=%" PRIu64 " altered=%" PRIu64 "\n",
		       sh->attacks, sh->stream_batches, sh->stream_records, sh->stream_lost,
		       sh->stream_altered);
}

/* The engine's state, or -errno. */
static int engine_state(int fd, __u32 core, __u32 engine)
{
	struct neuron_engine_status st;
	int ret = neuron_engine_status(fd, core, engine, &st);

	return ret ? ret : (int)st.state;
}

/* Polls the engine until it is in @state or NEURON_WAIT_MS passed; its last state. */
static int engine_until(int fd, __u32 core, __u32 engine, int state)
{
	uint64_t deadline = neuron_now_ms() + NEURON_WAIT_MS;
	int st;

	while ((st = engine_state(fd, core, engine)) != state && neuron_now_ms() < deadline)
		usleep(1000);
	return st;
}

/* ==== kill9 ================================================================ */

/*
 * The owner: both cores, device memory, a host ring on core 0 and a device
 * ring on core 1, both mapped; PE of core 0 busy in a long DELAY, ACT of
 * core 1 waiting on a semaphore nobody raises. Then it waits to be killed.
 */
static int doomed_owner(void *arg)
{
	struct neuron_emu_insn delay[2], wait[2];
	struct neuron_nq_init h, d;
	struct neuron_ring hr, dr;
	int fd = neuron_open();

	if (fd < 0)
		return 30;
	if (cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 3, NULL) ||
	    mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, NULL))
		return 31;
	if (neuron_nq_create(fd, 0, EXPL_QUEUE, 4096, 0, &h) ||
	    neuron_nq_create(fd, 1, EXPL_QUEUE, 4096, NEURON_NQ_F_DEVICE_MEM, &d) ||
	    neuron_ring_map(fd, &h, &hr) || neuron_ring_map(fd, &d, &dr))
		return 32;
	if (run_notify(fd, &hr, 0, NEURON_ENGINE_SP, 8, 0x100) ||
	    run_notify(fd, &dr, 1, NEURON_ENGINE_SP, 8, 0x100))
		return 33;
	delay[0] = neuron_insn(NEURON_OP_DELAY, 0);
	delay[0].operand.arg.value = htole32(4000000000u);	/* 4 s of device time */
	delay[1] = neuron_insn(NEURON_OP_HALT, 0);
	wait[0] = neuron_insn(NEURON_OP_WAIT_GE, 0);
	wait[0].operand.arg.idx = htole32(9);
	wait[0].operand.arg.value = htole32(1000);
	wait[1] = neuron_insn(NEURON_OP_HALT, 0);
	if (neuron_submit(fd, 0, NEURON_ENGINE_PE, delay, 2, 0) ||
	    neuron_submit(fd, 1, NEURON_ENGINE_ACT, wait, 2, 0))
		return 34;
	/*
	 * SUBMIT starts the engine RUNNING; it is WAITING only once the device
	 * has executed the WAIT_GE. Ready means both states are there to see.
	 */
	if (engine_until(fd, 1, NEURON_ENGINE_ACT, NEURON_ENGINE_WAITING) != NEURON_ENGINE_WAITING)
		return 35;
	set_flag(&sh->a_ready);
	for (;;)
		pause();
}

/* The heir: polls CORE_ACQUIRE every 2 ms once the owner is killed. */
static int heir(void *arg)
{
	struct neuron_nq_init h, d;
	struct neuron_ring hr, dr;
	struct neuron_engine_status st;
	uint64_t deadline;
	__u64 owned = 0;
	int fd = neuron_open(), ret;

	if (fd < 0)
		return 40;
	wait_flag(&sh->a_ready, 2 * NEURON_WAIT_MS);
	chk(-EBUSY, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, NULL),
	    "heir: CORE_ACQUIRE while the owner lives");
	chk(-EPERM, neuron_nq_create(fd, 0, 2, 4096, 0, NULL), "heir: NQ_INIT while the owner lives");
	set_flag(&sh->b_ready);
	wait_flag(&sh->killed, 2 * NEURON_WAIT_MS);
	deadline = now_us() + 10 * 1000000ull;
	for (;;) {
		ret = cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 3, &owned);
		if (!ret || ret != -EBUSY || now_us() > deadline)
			break;
		usleep(2000);
	}
	sh->t_free_us = now_us();
	chk(0, ret, "heir: CORE_ACQUIRE after the kill");
	chk(3, owned, "heir: owns both cores");
	/* the engines were stopped, the memory freed, the queues destroyed */
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st), "heir: ENGINE_STATUS");
	chk(NEURON_ENGINE_IDLE, st.state, "heir: the killed owner's DELAY was stopped");
	chk(0, neuron_engine_status(fd, 1, NEURON_ENGINE_ACT, &st), "heir: ENGINE_STATUS");
	chk(NEURON_ENGINE_IDLE, st.state, "heir: the killed owner's WAIT_GE was stopped");
	chk(0, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, NULL),
	    "heir: MEM_ALLOC of the killed owner's memory");
	chk(0, neuron_nq_create(fd, 0, EXPL_QUEUE, 4096, 0, &h), "heir: NQ_INIT its queue (host)");
	chk(0, neuron_nq_create(fd, 1, EXPL_QUEUE, 4096, NEURON_NQ_F_DEVICE_MEM, &d),
	    "heir: NQ_INIT its queue (device)");
	if (neuron_ring_map(fd, &h, &hr) || neuron_ring_map(fd, &d, &dr))
		return 41;
	chk(0, run_notify(fd, &hr, 0, NEURON_ENGINE_PE, 32, 0x2000), "heir: program on core 0");
	chk(0, run_notify(fd, &dr, 1, NEURON_ENGINE_ACT, 32, 0x3000), "heir: program on core 1");
	neuron_ring_unmap(&hr);
	neuron_ring_unmap(&dr);
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(ten, kill9, 200)
{
	struct neuron_engine_status st;
	pid_t owner, next;
	double ms;
	int fd = neuron_open();

	ASSERT_LE(0, fd);
	owner = spawn(TENANT_A, doomed_owner, NULL);
	ASSERT_LT(0, owner);
	next = spawn(TENANT_B, heir, NULL);
	ASSERT_LT(0, next);
	wait_flag(&sh->b_ready, 4 * NEURON_WAIT_MS);
	ASSERT_EQ(1, sh->b_ready);
	/* the owner's engines are busy, its name is on both cores */
	ASSERT_EQ(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st));
	EXPECT_EQ(NEURON_ENGINE_RUNNING, st.state);
	ASSERT_EQ(0, neuron_engine_status(fd, 1, NEURON_ENGINE_ACT, &st));
	EXPECT_EQ(NEURON_ENGINE_WAITING, st.state);
	expect_owner(_metadata, 0, owner);
	expect_owner(_metadata, 1, owner);

	sh->t_kill_us = now_us();
	ASSERT_EQ(0, kill(owner, SIGKILL));
	set_flag(&sh->killed);
	EXPECT_EQ(128 + SIGKILL, reap(owner));
	EXPECT_EQ(0, reap(next)) TH_LOG("heir");
	close(fd);
	assert_checks(_metadata, 13);
	ms = (double)(sh->t_free_us - sh->t_kill_us) / 1000.0;
	EXPECT_GT(1000.0, ms) TH_LOG("cores free %.1f ms after kill -9", ms);
	ksft_print_msg("tenancy: kill9 cores_free_after_ms=%.1f\n", ms);
}

/* ==== fork_mappings ========================================================= */

/*
 * The parent maps a ring and the status page, then forks: the child has
 * neither address mapped (mincore() -ENOMEM), closes its copy of the
 * descriptor and waits. Once the parent unmaps and closes too, the file
 * is released and core 0 is free while the child still lives: nothing the
 * child inherited holds it (docs/decisions/0007-fork.md). Without VM_DONTCOPY
 * the child's copies of the mappings keep the file, and core 0 stays the
 * parent's.
 */
TEST_F(ten, fork_mappings)
{
	struct neuron_nq_init init;
	int fd = neuron_open(), ready[2], go[2];
	unsigned char vec;
	void *ring, *status;
	char c = 0;
	pid_t child;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_nq_create(fd, 0, 3, 4096, 0, &init));
	ring = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, init.ring_offset);
	ASSERT_NE(MAP_FAILED, ring);
	status = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, NEURON_STATUS_PAGE_OFFSET);
	ASSERT_NE(MAP_FAILED, status);
	expect_owner(_metadata, 0, getpid());
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		close(fd);
		chk(-ENOMEM, mincore(ring, 4096, &vec) ? -errno : 0, "the ring in the child");
		chk(-ENOMEM, mincore(status, PAGE, &vec) ? -errno : 0,
		    "the status page in the child");
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	EXPECT_EQ(0, mincore(ring, 4096, &vec)) TH_LOG("the parent keeps its mapping");
	EXPECT_EQ(0, munmap(ring, 4096));
	EXPECT_EQ(0, munmap(status, PAGE));
	close(fd);
	expect_owner(_metadata, 0, 0);
	EXPECT_EQ(1, write(go[1], &c, 1));
	EXPECT_EQ(0, reap(child));
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	assert_checks(_metadata, 2);
}

/* ==== read_only ============================================================= */

static int read_only_file(void *arg)
{
	struct neuron_emu_insn prog[1] = { neuron_insn(NEURON_OP_HALT, 0) };
	struct neuron_nq_id id = { .core = 0, .queue = 1 };
	struct neuron_nq_info ni = { .core = 0, .queue = 1 };
	struct neuron_nq_eventfd ne = { .core = 0, .queue = 1, .fd = -1 };
	struct neuron_throttle th = { .enable = 0 };
	struct neuron_nq_coalesce nc = { .core = 0, .queue = 1 };
	struct neuron_timestamp ts = { .core = 0 };
	struct neuron_device_info info;
	struct neuron_engine_status st;
	struct neuron_event ev;
	struct pollfd p;
	const char *who = getuid() ? "uid" : "root";
	__u32 v = 0;
	int fd = neuron_open_flags(O_RDONLY | O_CLOEXEC | O_NONBLOCK), rw;

	if (fd < 0)
		return 50;
	chk(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info), "%s O_RDONLY: DEVICE_INFO", who);
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st), "%s O_RDONLY: ENGINE_STATUS", who);
	chk(0, neuron_ioctl(fd, NEURON_IOC_TIMESTAMP, &ts), "%s O_RDONLY: TIMESTAMP", who);
	chk(-EBADF, neuron_ioctl(fd, NEURON_IOC_NQ_COALESCE, &nc), "%s O_RDONLY: NQ_COALESCE", who);
	chk(-EBADF, neuron_nq_create(fd, 0, 1, 4096, 0, NULL), "%s O_RDONLY: NQ_INIT", who);
	chk(-EBADF, neuron_ioctl(fd, NEURON_IOC_NQ_DESTROY, &id), "%s O_RDONLY: NQ_DESTROY", who);
	chk(-EBADF, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &ni), "%s O_RDONLY: NQ_INFO", who);
	chk(-EBADF, neuron_submit(fd, 0, 0, prog, 1, 0), "%s O_RDONLY: SUBMIT", who);
	chk(-EBADF, engine_reset(fd, 0, 0), "%s O_RDONLY: ENGINE_RESET", who);
	chk(-EBADF, features(fd, 0, NEURON_FEATURE_OP_GET, &v), "%s O_RDONLY: FEATURE_FLAGS get", who);
	chk(-EBADF, features(fd, 0, NEURON_FEATURE_OP_SET, &v), "%s O_RDONLY: FEATURE_FLAGS set", who);
	chk(-EBADF, neuron_ioctl(fd, NEURON_IOC_NQ_EVENTFD, &ne), "%s O_RDONLY: NQ_EVENTFD", who);
	chk(-EBADF, evt_sem(fd, 0, 1, NEURON_SEM_READ, &v), "%s O_RDONLY: SEM_READ", who);
	chk(-EBADF, evt_sem(fd, 0, 1, NEURON_SEM_INC, &v), "%s O_RDONLY: SEM_INC", who);
	chk(-EBADF, neuron_ioctl(fd, NEURON_IOC_THROTTLE, &th), "%s O_RDONLY: THROTTLE", who);
	chk(-EBADF, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, NULL), "%s O_RDONLY: CORE_ACQUIRE", who);
	chk(-EBADF, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, NULL), "%s O_RDONLY: CORE_RELEASE", who);
	chk(-EBADF, mem_alloc(fd, 0, PAGE, 0, NULL), "%s O_RDONLY: MEM_ALLOC", who);
	chk(-EBADF, mem_free(fd, 0), "%s O_RDONLY: MEM_FREE", who);
	chk(-EBADF, read(fd, &ev, sizeof(ev)) < 0 ? -errno : 0, "%s O_RDONLY: read()", who);
	chk(-EACCES, try_mmap(fd, cookie(1, 0, 1), PAGE, PROT_READ), "%s O_RDONLY: mmap", who);
	/* its own status page is the one thing it maps (docs/decisions/0005-tenancy.md) */
	{
		const struct neuron_status_page *sp = neuron_status_map(fd);

		chk(0, sp == MAP_FAILED ? -errno : 0, "%s O_RDONLY: mmap status page", who);
		if (sp != MAP_FAILED) {
			chk(NEURON_STATUS_LIVE, neuron_status_state(sp),
			    "%s O_RDONLY: status page LIVE", who);
			neuron_status_unmap(sp);
		}
		chk(-EACCES, try_mmap(fd, cookie(3, 0, 0), PAGE, PROT_READ | PROT_WRITE),
		    "%s O_RDONLY: status page writable", who);
	}
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	chk(1, poll(&p, 1, 0), "%s O_RDONLY: poll() returns at once", who);
	chk(POLLERR, p.revents & (POLLERR | POLLIN), "%s O_RDONLY: poll() revents", who);
	/* it took no core: a writable file of the same process gets both */
	rw = neuron_open();
	chk(0, cores_ioctl(rw, NEURON_IOC_CORE_ACQUIRE, 3, NULL),
	    "%s: CORE_ACQUIRE beside the read-only file", who);
	close(rw);
	close(fd);
	return 0;
}

TEST_F(ten, read_only)
{
	pid_t pid = spawn(TENANT_A, read_only_file, NULL);

	ASSERT_LT(0, pid);
	EXPECT_EQ(0, reap(pid));
	pid = spawn(0, read_only_file, NULL);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, reap(pid));
	assert_checks(_metadata, 2 * 27);
}

/* ==== records ============================================================== */

#define HINT_A	0xa
#define HINT_B	0xb

struct tenant_rings {
	int fd;
	unsigned int core;
	struct neuron_ring ring[NEURON_NUM_SW_QUEUES];
};

static int rings_open(struct tenant_rings *t, unsigned int core)
{
	struct neuron_nq_init init;

	t->fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);
	t->core = core;
	if (t->fd < 0)
		return -1;
	for (unsigned int q = 0; q < NEURON_NUM_SW_QUEUES; q++)
		if (neuron_nq_create(t->fd, core, q, 4096, 0, &init) ||
		    neuron_ring_map(t->fd, &init, &t->ring[q]))
			return -2;
	return 0;
}

/*
 * Drains every ring; counts records whose debug_hint is @hint and those
 * with another one (every record the programs here make carries it).
 */
static void rings_drain(struct tenant_rings *t, unsigned int hint, unsigned int *mine,
			unsigned int *foreign)
{
	union neuron_isa_notification r;

	*mine = *foreign = 0;
	for (unsigned int q = 0; q < NEURON_NUM_SW_QUEUES; q++)
		while (neuron_ring_pop(&t->ring[q], &r)) {
			if (r.explicit_notif.debug_hint == hint)
				(*mine)++;
			else
				(*foreign)++;
		}
}

/* A traced program on every engine: per engine n NOTIFYs and a HALT. */
static int rings_run(struct tenant_rings *t, unsigned int hint, uint16_t ext, unsigned int n)
{
	struct neuron_emu_insn prog[16];

	for (unsigned int i = 0; i < n; i++) {
		prog[i] = neuron_insn(NEURON_OP_NOTIFY, (uint16_t)hint);
		prog[i].operand.arg.debug_hint_extended = htole16((uint16_t)(ext + i));
	}
	prog[n] = neuron_insn(NEURON_OP_HALT, (uint16_t)hint);
	for (unsigned int e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		if (neuron_submit(t->fd, t->core, e, prog, n + 1, NEURON_SUBMIT_F_TRACE))
			return -1;
		if (neuron_engine_wait(t->fd, t->core, e, NEURON_WAIT_MS) != NEURON_ENGINE_IDLE)
			return -2;
	}
	return 0;
}

/* Reads every queued event; counts the NOTIFIC ones per core (0, 1). */
static void notific_count(int fd, int n[2])
{
	struct neuron_event ev[32];
	ssize_t got;

	n[0] = n[1] = 0;
	while ((got = read(fd, ev, sizeof(ev))) > 0)
		for (size_t i = 0; i < (size_t)got / sizeof(ev[0]); i++)
			if (ev[i].edge == NEURON_EDGE_NOTIFIC && ev[i].core < 2)
				n[ev[i].core]++;
}

static int notific_events(int fd, unsigned int core)
{
	int n[2];

	notific_count(fd, n);
	return n[core];
}

static int tenant_a_rings(void *arg)
{
	struct tenant_rings t;
	unsigned int mine, foreign;

	if (rings_open(&t, 0))
		return 60;
	set_flag(&sh->a_ready);
	wait_flag(&sh->b_ready, 4 * NEURON_WAIT_MS);
	chk(1, sh->b_ready, "A: B ran its programs");
	usleep(100 * 1000);
	rings_drain(&t, HINT_A, &mine, &foreign);
	chk(0, mine + foreign, "A: records in A's rings before A ran anything");
	chk(0, notific_events(t.fd, 1), "A: NOTIFIC events of B's core seen by A");
	chk(0, rings_run(&t, HINT_A, 0xa000, 1), "A: its own programs");
	usleep(100 * 1000);
	rings_drain(&t, HINT_A, &mine, &foreign);
	/* per engine: 2 instructions traced (4) and one EXPLICIT */
	chk(5 * NEURON_ENGINES_PER_CORE, mine, "A: its own records");
	chk(0, foreign, "A: records of B in A's rings");
	/* an edge of its own core is A's: a HEAD write past TAIL (intr_7) */
	*t.ring[EXPL_QUEUE].doorbell = t.ring[EXPL_QUEUE].head + 100000;
	usleep(300 * 1000);
	chk_ge(1, notific_events(t.fd, 0), "A: NOTIFIC events of its own core");
	set_flag(&sh->attack_done);
	wait_flag(&sh->parent_done, 2 * NEURON_WAIT_MS);
	close(t.fd);
	return 0;
}

static int tenant_b_rings(void *arg)
{
	struct tenant_rings t;
	unsigned int mine, foreign;

	wait_flag(&sh->a_ready, 2 * NEURON_WAIT_MS);
	if (rings_open(&t, 1))
		return 70;
	chk(-EPERM, neuron_nq_create(t.fd, 0, 0, 4096, 0, NULL), "B: NQ_INIT on A's core");
	chk(0, rings_run(&t, HINT_B, 0xb000, 8), "B: its programs");
	usleep(100 * 1000);
	rings_drain(&t, HINT_B, &mine, &foreign);
	/* per engine: 9 instructions traced (18) and 8 EXPLICIT */
	chk(26 * NEURON_ENGINES_PER_CORE, mine, "B: its own records");
	chk(0, foreign, "B: records of A in B's rings");
	/* an edge on B's core that A must not see */
	*t.ring[EXPL_QUEUE].doorbell = t.ring[EXPL_QUEUE].head + 100000;
	usleep(300 * 1000);
	chk_ge(1, notific_events(t.fd, 1), "B: NOTIFIC events of its own core");
	set_flag(&sh->b_ready);
	wait_flag(&sh->parent_done, 4 * NEURON_WAIT_MS);
	close(t.fd);
	return 0;
}

/*
 * Records stay with their tenant: A has all ten queues of core 0, B all
 * ten of core 1 and runs traced programs on every engine; none of B's
 * records reaches A's rings, A's own do. Events: A sees NOTIFIC edges of
 * its core only, root's file sees B's too.
 */
TEST_F_TIMEOUT(ten, records, 200)
{
	struct pollfd p;
	pid_t a, b;
	int n[2], root = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);

	ASSERT_LE(0, root);
	p = (struct pollfd){ .fd = root, .events = POLLIN };
	poll(&p, 1, 0);		/* allocates root's event queue */
	a = spawn(TENANT_A, tenant_a_rings, NULL);
	ASSERT_LT(0, a);
	b = spawn(TENANT_B, tenant_b_rings, NULL);
	ASSERT_LT(0, b);
	wait_flag(&sh->attack_done, 6 * NEURON_WAIT_MS);
	notific_count(root, n);
	EXPECT_LE(1, n[1]) TH_LOG("root (CAP_SYS_ADMIN) sees B's edges");
	EXPECT_LE(1, n[0]) TH_LOG("root (CAP_SYS_ADMIN) sees A's edges");
	set_flag(&sh->parent_done);
	EXPECT_EQ(0, reap(a));
	EXPECT_EQ(0, reap(b));
	close(root);
	assert_checks(_metadata, 11);
}

/* ==== core_ioctls =========================================================== */

TEST_F(ten, core_ioctls)
{
	struct neuron_device_info info;
	struct neuron_cores c;
	struct neuron_emu_insn halt = neuron_insn(NEURON_OP_HALT, 0);
	struct neuron_mem_free mf = { .offset = MEM_A, .reserved = 1 };
	struct neuron_mem_alloc m;
	__u64 owned, off, off2;
	__u32 v = 0;
	char quota[32], comm[16], want[96], owners[256];
	int fd = neuron_open(), other = neuron_open(), third, hostile;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(32ull << 20, info.mem_alloc_limit);	/* mem_size / 2 of the VM's 64 MiB */
	EXPECT_EQ(0, info.mem_alloc_limit % NEURON_MEM_ALIGN);

	/* CORE_ACQUIRE / RELEASE inputs */
	EXPECT_EQ(-EINVAL, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 4, NULL));
	EXPECT_EQ(-EINVAL, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1ull << 63, NULL));
	EXPECT_EQ(-EINVAL, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 4, NULL));
	c = (struct neuron_cores){ .cores = 1, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, &c));
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_CORE_RELEASE, &c));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(0, owned);
	EXPECT_EQ(-EPERM, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, NULL));

	/* acquire twice is fine; the other file is refused; release frees */
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned));
	EXPECT_EQ(1, owned);
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned));
	EXPECT_EQ(-EBUSY, cores_ioctl(other, NEURON_IOC_CORE_ACQUIRE, 3, NULL));
	EXPECT_EQ(0, cores_ioctl(other, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(0, owned) TH_LOG("a refused CORE_ACQUIRE took core 1");
	expect_owner(_metadata, 0, getpid());
	expect_owner(_metadata, 1, 0);
	/*
	 * a command name is the owner's to choose: with a newline, blanks and
	 * a byte that is not ASCII it is still one word of its own line
	 * (\xHH, kernel/neuron_sysfs.c), not a second owner line "0 1 9"
	 */
	hostile = neuron_open();
	ASSERT_LE(0, hostile);
	ASSERT_EQ(0, prctl(PR_GET_NAME, comm));
	ASSERT_EQ(0, prctl(PR_SET_NAME, "\xff\n0 1 9"));
	EXPECT_EQ(0, cores_ioctl(hostile, NEURON_IOC_CORE_ACQUIRE, 2, &owned));
	ASSERT_EQ(0, prctl(PR_SET_NAME, comm));
	snprintf(want, sizeof(want), "0 %d tenancy_test\n1 %d \\xff\\x0a0\\x201\\x209\n",
		 getpid(), getpid());
	EXPECT_LT(0, neuron_sysfs_read("core_owners", owners, sizeof(owners)));
	EXPECT_STREQ(want, owners);
	close(hostile);
	expect_owner(_metadata, 1, 0);
	/* implicit: a queue on core 1 acquires it; release refused while it lives */
	EXPECT_EQ(0, neuron_nq_create(fd, 1, 0, 4096, 0, NULL));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(3, owned);
	EXPECT_EQ(-EBUSY, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 3, &owned));
	EXPECT_EQ(-EPERM, neuron_nq_create(other, 0, 0, 4096, 0, NULL));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(3, owned) TH_LOG("a refused CORE_RELEASE released something");
	EXPECT_EQ(0, neuron_nq_destroy(fd, 1, 0));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 2, &owned));
	EXPECT_EQ(1, owned);
	EXPECT_EQ(0, cores_ioctl(other, NEURON_IOC_CORE_ACQUIRE, 2, &owned));
	EXPECT_EQ(2, owned);
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, &owned));
	EXPECT_EQ(0, owned);
	/* implicit acquire by SUBMIT, ENGINE_RESET, EVT_SEM write, FEATURE_FLAGS set */
	EXPECT_EQ(0, neuron_submit(fd, 0, 0, &halt, 1, 0));
	EXPECT_EQ(-EPERM, engine_reset(other, 0, 0));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, 0, NEURON_WAIT_MS));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, NULL));
	EXPECT_EQ(0, engine_reset(other, 0, 0));
	EXPECT_EQ(-EPERM, evt_sem(fd, 0, 1, NEURON_SEM_INC, &v));
	EXPECT_EQ(0, cores_ioctl(other, NEURON_IOC_CORE_RELEASE, 3, &owned));
	EXPECT_EQ(0, owned);
	EXPECT_EQ(0, evt_sem(fd, 0, 1, NEURON_SEM_SET, &v));
	EXPECT_EQ(-EPERM, features(other, 0, NEURON_FEATURE_OP_SET, &v));
	v = 0;
	EXPECT_EQ(0, features(other, 1, NEURON_FEATURE_OP_SET, &v));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(1, owned);
	EXPECT_EQ(0, cores_ioctl(other, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(2, owned);
	/* reads take nothing */
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, NULL));
	EXPECT_EQ(0, evt_sem(fd, 0, 1, NEURON_SEM_READ, &v));
	EXPECT_EQ(0, features(fd, 0, NEURON_FEATURE_OP_GET, &v));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(0, owned);

	/* MEM_ALLOC / MEM_FREE inputs */
	EXPECT_EQ(-EINVAL, mem_alloc(fd, 0, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, mem_alloc(fd, 0, info.mem_alloc_limit + 1, 0, NULL));
	EXPECT_EQ(-EINVAL, mem_alloc(fd, 0x100, PAGE, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-EINVAL, mem_alloc(fd, info.mem_alloc_limit, PAGE, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-EINVAL, mem_alloc(fd, PAGE, PAGE, 0, NULL)) TH_LOG("offset without FIXED");
	EXPECT_EQ(-EINVAL, mem_alloc(fd, 0, PAGE, 2, NULL));
	m = (struct neuron_mem_alloc){ .size = PAGE, .reserved0 = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &m));
	m = (struct neuron_mem_alloc){ .size = PAGE, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &m));
	/* anywhere: aligned, inside the limit; sizes round up */
	ASSERT_EQ(0, mem_alloc(fd, 0, 100, 0, &off));
	EXPECT_EQ(0, off % NEURON_MEM_ALIGN);
	EXPECT_GE(info.mem_alloc_limit - PAGE, off);
	ASSERT_EQ(0, mem_alloc(fd, 0, PAGE, 0, &off2));
	EXPECT_TRUE(off2 >= off + PAGE || off2 + PAGE <= off) TH_LOG("overlap %llx %llx",
		    (unsigned long long)off, (unsigned long long)off2);
	/* fixed: exact, -EBUSY on any overlap, whoever holds it */
	EXPECT_EQ(-EBUSY, mem_alloc(fd, off, PAGE, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-EBUSY, mem_alloc(other, off, PAGE, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-ENOENT, mem_free(other, off));
	EXPECT_EQ(0, mem_free(fd, off));
	EXPECT_EQ(-ENOENT, mem_free(fd, off));
	EXPECT_EQ(0, mem_free(fd, off2));
	ASSERT_EQ(0, mem_alloc(fd, MEM_A, 2 * PAGE, NEURON_MEM_F_FIXED, &off));
	EXPECT_EQ(MEM_A, off);
	EXPECT_EQ(-EBUSY, mem_alloc(other, MEM_A + PAGE, PAGE, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-EBUSY, mem_alloc(other, MEM_A - PAGE, 2 * PAGE, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-ENOENT, mem_free(fd, MEM_A + PAGE)) TH_LOG("not the start");
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_MEM_FREE, &mf));
	EXPECT_EQ(0, mem_alloc(other, MEM_A + 2 * PAGE, PAGE, NEURON_MEM_F_FIXED, NULL));
	/*
	 * The quota is per user: half of mem_alloc_limit by default (16 MiB of
	 * the VM's 32), allocations and device rings of all the user's files
	 * together, -ENOSPC past it, whatever is free; another uid has its
	 * own; root may raise it to the limit
	 * (docs/decisions/0005-tenancy.md#device-memory-per-user). Root holds 3
	 * pages now: 2 through fd (MEM_A), 1 through other.
	 */
	ASSERT_LT(0, neuron_sysfs_read("mem_quota", quota, sizeof(quota)));
	EXPECT_STREQ("16777216\n", quota);
	EXPECT_EQ(-ENOSPC, mem_alloc(fd, 0, info.mem_alloc_limit, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(-ENOSPC, mem_alloc(fd, 0, (16u << 20) - 2 * PAGE, 0, NULL))
		TH_LOG("3 pages held by the user through two files: 16 MiB - 2 pages more passes the quota");
	ASSERT_EQ(0, mem_alloc(fd, 0, (16u << 20) - 3 * PAGE, 0, &off2))
		TH_LOG("3 pages held: exactly the quota");
	EXPECT_EQ(-ENOSPC, mem_alloc(fd, 0, 1, 0, NULL)) TH_LOG("at the quota");
	EXPECT_EQ(-ENOSPC, mem_alloc(other, 0, PAGE, 0, NULL))
		TH_LOG("the quota is per user: the user's other file takes nothing more");
	third = neuron_open();
	ASSERT_LE(0, third);
	EXPECT_EQ(-ENOSPC, mem_alloc(third, 0, PAGE, 0, NULL))
		TH_LOG("nor does a file the user opens now");
	close(third);
	EXPECT_EQ(-ENOSPC, neuron_nq_create(other, 1, 5, 4096, NEURON_NQ_F_DEVICE_MEM, NULL))
		TH_LOG("a device ring counts against the quota");
	EXPECT_EQ(0, neuron_nq_create(other, 1, 5, 4096, 0, NULL)) TH_LOG("a host ring does not");
	EXPECT_EQ(0, neuron_nq_destroy(other, 1, 5));
	EXPECT_EQ(0, reap(spawn(TENANT_A, alloc_one_page, NULL)))
		TH_LOG("another user has a quota of its own");
	EXPECT_EQ(0, mem_free(fd, off2));
	EXPECT_EQ(0, neuron_nq_create(other, 1, 5, 4096, NEURON_NQ_F_DEVICE_MEM, NULL));
	ASSERT_LT(0, read_str("/sys/class/nnq/nnq0/mem_users", owners, sizeof(owners)));
	EXPECT_NE(NULL, strstr(owners, "uid 0 bytes 16384\n"))
		TH_LOG("mem_users: 3 pages and a 4 KiB device ring, got \"%s\"", owners);
	EXPECT_EQ(NULL, strstr(owners, "uid 1001 ")) TH_LOG("the tenant's record went with its file");
	EXPECT_EQ(0, neuron_nq_destroy(other, 1, 5));
	EXPECT_EQ(-EINVAL, write_str("/sys/class/nnq/nnq0/mem_quota", "100"));
	ASSERT_EQ(0, write_str("/sys/class/nnq/nnq0/mem_quota", "33554432"));
	/*
	 * the whole range: past the quota while the user holds anything;
	 * refused as busy to another user while anything lives; release
	 * frees all
	 */
	EXPECT_EQ(-ENOSPC, mem_alloc(fd, 0, info.mem_alloc_limit, NEURON_MEM_F_FIXED, NULL));
	EXPECT_EQ(0, reap(spawn(TENANT_A, alloc_whole_busy, NULL)))
		TH_LOG("another user: -EBUSY for the whole range while root holds 3 pages");
	close(other);
	EXPECT_EQ(0, mem_free(fd, MEM_A));
	ASSERT_EQ(0, mem_alloc(fd, 0, info.mem_alloc_limit, NEURON_MEM_F_FIXED, &off));
	EXPECT_EQ(-ENOSPC, mem_alloc(fd, 0, PAGE, 0, NULL)) TH_LOG("at the quota");
	EXPECT_EQ(0, reap(spawn(TENANT_A, alloc_none_left, NULL)))
		TH_LOG("another user: -ENOMEM, everything is allocated");
	close(fd);
	fd = neuron_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, mem_alloc(fd, 0, info.mem_alloc_limit, NEURON_MEM_F_FIXED, &off))
		TH_LOG("release freed the memory");
	close(fd);
	assert_checks(_metadata, 6);	/* the tenants' opens and allocations */
	EXPECT_EQ(0, write_str("/sys/class/nnq/nnq0/mem_quota", "16777216"));
}

/* ==== memcg ================================================================= */

static long long cg_read(const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), CGROUP_DIR "/%s", file);
	if (read_str(path, buf, sizeof(buf)) < 0)
		return -1;
	if (!strncmp(buf, "max", 3))
		return LLONG_MAX;
	return strtoll(buf, NULL, 10);
}

/*
 * In the cgroup: 56 MiB of touched anonymous memory, then rings of 1 MiB
 * until NQ_INIT fails; memory.current after each; then release.
 */
static int cg_child(void *arg)
{
	const size_t fill = 56 * MIB;
	char *mem;
	int fd, ret = 0;

	wait_flag(&sh->in_cgroup, NEURON_WAIT_MS);
	if (!sh->in_cgroup)
		return 80;
	sh->mc_base = cg_read("memory.current");
	mem = mmap(NULL, fill, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 81;
	for (size_t i = 0; i < fill; i += PAGE)
		mem[i] = (char)i | 1;
	fd = neuron_open();
	if (fd < 0)
		return 82;
	sh->mc_before = cg_read("memory.current");
	sh->mc_max = sh->mc_before;
	for (unsigned int i = 0; i < 2 * NEURON_NUM_SW_QUEUES; i++) {
		ret = neuron_nq_create(fd, i / NEURON_NUM_SW_QUEUES, i % NEURON_NUM_SW_QUEUES,
				       1u << 20, 0, NULL);
		if (ret)
			break;
		sh->mc_after[sh->rings++] = cg_read("memory.current");
		if (sh->mc_after[sh->rings - 1] > sh->mc_max)
			sh->mc_max = sh->mc_after[sh->rings - 1];
	}
	sh->ring_err = ret;
	sh->mc_peak = cg_read("memory.peak");
	close(fd);
	sh->mc_closed = cg_read("memory.current");
	munmap(mem, fill);
	return 0;
}

static int cg_setup(struct __test_metadata *_metadata, bool *mounted)
{
	struct statfs fs;
	char ctl[256];

	*mounted = false;
	if (statfs(CGROUP_ROOT, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		if (mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL)) {
			TH_LOG("mount cgroup2 on %s: %s", CGROUP_ROOT, strerror(errno));
			return -1;
		}
		*mounted = true;
	}
	if (read_str(CGROUP_ROOT "/cgroup.controllers", ctl, sizeof(ctl)) < 0 ||
	    !strstr(ctl, "memory")) {
		TH_LOG("the guest kernel has no memory controller (cgroup.controllers: %s)", ctl);
		return -1;
	}
	if (write_str(CGROUP_ROOT "/cgroup.subtree_control", "+memory")) {
		TH_LOG("cannot enable +memory in %s/cgroup.subtree_control", CGROUP_ROOT);
		return -1;
	}
	rmdir(CGROUP_DIR);
	if (mkdir(CGROUP_DIR, 0755)) {
		TH_LOG("mkdir %s: %s", CGROUP_DIR, strerror(errno));
		return -1;
	}
	if (write_str(CGROUP_DIR "/memory.max", "67108864")) {
		TH_LOG("cannot set memory.max");
		return -1;
	}
	write_str(CGROUP_DIR "/memory.swap.max", "0");	/* absent without swap accounting */
	return 0;
}

/*
 * A process in a memory cgroup limited to 64 MiB cannot make the driver
 * allocate past it: with 56 MiB of its own in use, its 1 MiB rings fail
 * with -ENOMEM after a few, memory.current never passes memory.max, each
 * ring raised it by about 1 MiB, and the release gave it back.
 */
TEST_F_TIMEOUT(ten, memcg, 200)
{
	long long per_ring, room;
	char pid[32];
	bool mounted;
	pid_t child;
	int setup;

	setup = cg_setup(_metadata, &mounted);
	ASSERT_EQ(0, setup) TH_LOG("no usable cgroup v2 memory controller");
	child = spawn(TENANT_A, cg_child, NULL);
	ASSERT_LT(0, child);
	snprintf(pid, sizeof(pid), "%d", child);
	EXPECT_EQ(0, write_str(CGROUP_DIR "/cgroup.procs", pid));
	set_flag(&sh->in_cgroup);
	EXPECT_EQ(0, reap(child)) TH_LOG("the cgroup child (137: killed by the OOM killer)");
	EXPECT_EQ(0, rmdir(CGROUP_DIR));
	if (mounted)
		umount(CGROUP_ROOT);

	ksft_print_msg("tenancy: memcg max=64MiB base=%lld before_rings=%lld rings=%d err=%d "
		       "peak=%lld max_seen=%lld after_close=%lld\n", sh->mc_base,
		       sh->mc_before, sh->rings, sh->ring_err, sh->mc_peak, sh->mc_max,
		       sh->mc_closed);
	for (int i = 0; i < sh->rings; i++)
		ksft_print_msg("tenancy: memcg ring %d memory.current=%lld (+%lld)\n", i,
			       sh->mc_after[i],
			       sh->mc_after[i] - (i ? sh->mc_after[i - 1] : sh->mc_before));
	EXPECT_EQ(-ENOMEM, sh->ring_err) TH_LOG("%d rings of 1 MiB made", sh->rings);
	ASSERT_LT(0, sh->rings) TH_LOG("not even one ring fit");
	room = 64 * (long long)MIB - sh->mc_before;
	EXPECT_GE(room, sh->rings * (long long)MIB) TH_LOG("more rings than the room left");
	EXPECT_GE(64 * (long long)MIB, sh->mc_max);
	if (sh->mc_peak >= 0)
		EXPECT_GE(64 * (long long)MIB, sh->mc_peak);
	per_ring = (sh->mc_after[sh->rings - 1] - sh->mc_before) / sh->rings;
	EXPECT_LE((long long)(MIB * 9 / 10), per_ring) TH_LOG("the rings are not charged");
	EXPECT_GE((long long)(MIB * 3 / 2), per_ring);
	EXPECT_LE(sh->rings * (long long)MIB * 9 / 10, sh->mc_after[sh->rings - 1] - sh->mc_closed)
		TH_LOG("the release did not uncharge the rings");
}

/* ==== fanout ============================================================= */

#define FANOUT_FILES	64	/* B's subscribed files that own no core */
#define FANOUT_PROGS	16	/* A's programs, one threshold edge each */

/* sysfs event_fanout: edges handed to files and events queued by them. */
static int read_fanout(unsigned long long *edges, unsigned long long *copies)
{
	char buf[128];

	if (neuron_sysfs_read("event_fanout", buf, sizeof(buf)) < 0)
		return -errno;
	return sscanf(buf, "edges %llu copies %llu", edges, copies) == 2 ? 0 : -EINVAL;
}

/* B: FANOUT_FILES files, each subscribed by a poll(), none owning a core. */
static int fanout_b(void *arg)
{
	int fds[FANOUT_FILES], n = 0;

	(void)arg;
	for (; n < FANOUT_FILES; n++) {
		struct pollfd p;

		fds[n] = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);
		if (fds[n] < 0)
			break;
		p = (struct pollfd){ .fd = fds[n], .events = POLLIN };
		poll(&p, 1, 0);
	}
	chk(FANOUT_FILES, n, "B: files opened and subscribed");
	set_flag(&sh->b_ready);
	wait_flag(&sh->parent_done, 4 * NEURON_WAIT_MS);
	while (n--)
		close(fds[n]);
	return 0;
}

/* A: owns core 0 and makes one threshold (NOTIFIC) edge per program. */
static int fanout_a(void *arg)
{
	struct neuron_nq_init init = { .core = 0, .queue = EXPL_QUEUE, .size = 4096,
				       .threshold = 1 };
	struct neuron_emu_insn prog[2] = { neuron_insn(NEURON_OP_NOTIFY, 1),
					   neuron_insn(NEURON_OP_HALT, 0) };
	union neuron_isa_notification rec;
	struct neuron_ring ring = { 0 };
	int fd = neuron_open(), i;

	(void)arg;
	chk(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init), "A: NQ_INIT with threshold 1");
	chk(0, neuron_ring_map(fd, &init, &ring), "A: map the ring");
	set_flag(&sh->a_ready);
	wait_flag(&sh->attack_done, 2 * NEURON_WAIT_MS);	/* the parent's go */
	for (i = 0; i < FANOUT_PROGS; i++) {
		if (neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 2, 0) ||
		    neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS) !=
		    NEURON_ENGINE_IDLE ||
		    neuron_ring_read(&ring, &rec, 1, NEURON_WAIT_MS))
			break;
		usleep(20 * 1000);	/* the edge's handler, before the next */
	}
	chk(FANOUT_PROGS, i, "A: programs run");
	usleep(200 * 1000);	/* the last edge's handler */
	set_flag(&sh->killed);	/* done */
	wait_flag(&sh->parent_done, 4 * NEURON_WAIT_MS);
	neuron_ring_unmap(&ring);
	close(fd);
	return 0;
}

/*
 * The per-edge cost of the hot path is bounded: while B holds 64
 * subscribed files that own no core, each NOTIFIC edge of A's core is
 * queued for A's file alone (no file here was opened with CAP_SYS_ADMIN),
 * so copies per edge is 1, not 65 (docs/decisions/0005-tenancy.md).
 */
TEST_F_TIMEOUT(ten, fanout, 200)
{
	unsigned long long e0, c0, e1, c1;
	pid_t a, b;

	b = spawn(TENANT_B, fanout_b, NULL);
	a = spawn(TENANT_A, fanout_a, NULL);
	wait_flag(&sh->b_ready, 2 * NEURON_WAIT_MS);
	wait_flag(&sh->a_ready, 2 * NEURON_WAIT_MS);
	ASSERT_EQ(0, read_fanout(&e0, &c0));
	set_flag(&sh->attack_done);
	wait_flag(&sh->killed, 4 * NEURON_WAIT_MS);
	ASSERT_EQ(0, read_fanout(&e1, &c1));
	set_flag(&sh->parent_done);
	EXPECT_EQ(0, reap(a));
	EXPECT_EQ(0, reap(b));
	assert_checks(_metadata, 4);

	ksft_print_msg("tenancy: fanout subscribers=%d edges=%llu copies=%llu copies_per_edge=%.2f\n",
		       FANOUT_FILES + 1, e1 - e0, c1 - c0,
		       e1 > e0 ? (double)(c1 - c0) / (double)(e1 - e0) : 0.0);
	EXPECT_LE(1, e1 - e0) TH_LOG("no NOTIFIC edge");
	EXPECT_EQ(e1 - e0, c1 - c0) TH_LOG("an edge was queued for a file that owns no core");
}

/* ==== detach =============================================================== */

/* The steps of the detach group, each set once by the tenant that did it. */
enum {
	S_O_READY,		/* O owns cores 0 and 1, queue 1 of core 0, MEM_O */
	S_A_REFUSED,		/* A tried without a grant */
	S_GRANTED,		/* O granted both cores to uid A */
	S_B_REFUSED,		/* B tried with the grant to A */
	S_A_CLOSED,		/* A started its stream detached and closed */
	S_REVOKED,		/* O revoked the grants */
	S_A_RETRIED,		/* A tried after the revoke */
	S_REGRANTED,		/* O granted both cores again */
	S_A_LONG,		/* A started long programs on core 0 ACT, core 1 PE */
	S_O_STOPPED,		/* O reset core 0 ACT and released core 1 */
	S_A_LONG2,		/* A started a long program on core 0 PE */
	S_STEPS
};

#define DETACH_HINT	0xd	/* A's detached records */
#define DETACH_N	32	/* NOTIFYs of A's detached stream */
#define OWN_HINT	0x0	/* O's own records */
#define OWN_N		16

static void step_set(int i)
{
	set_flag(&sh->step[i]);
}

static int step_wait(int i)
{
	wait_flag(&sh->step[i], 4 * NEURON_WAIT_MS);
	return sh->step[i];
}

static struct neuron_emu_insn delay_insn(uint32_t ns)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_DELAY, 0);

	in.operand.arg.value = htole32(ns);
	return in;
}

/*
 * A's stream: 1 s of DELAY (it outlives A's close by far), then DETACH_N
 * times a NOTIFY (hint DETACH_HINT, ext i) and 10 ms of DELAY, then HALT:
 * 2 * DETACH_N + 2 instructions.
 */
static unsigned int detach_stream(struct neuron_emu_insn *prog)
{
	unsigned int n = 0;

	prog[n++] = delay_insn(1000000000u);
	for (unsigned int i = 0; i < DETACH_N; i++) {
		prog[n] = neuron_insn(NEURON_OP_NOTIFY, DETACH_HINT);
		prog[n++].operand.arg.debug_hint_extended = htole16((uint16_t)i);
		prog[n++] = delay_insn(10000000u);
	}
	prog[n++] = neuron_insn(NEURON_OP_HALT, 0);
	return n;
}

/* 5 x 4 s of DELAY, then HALT: still running whenever it is stopped here. */
static unsigned int long_prog(struct neuron_emu_insn *prog)
{
	for (unsigned int i = 0; i < 5; i++)
		prog[i] = delay_insn(4000000000u);
	prog[5] = neuron_insn(NEURON_OP_HALT, 0);
	return 6;
}

static int core_grant(int fd, __u64 cores, __u32 op, __u32 uid, __u64 *granted)
{
	struct neuron_core_grant g = { .cores = cores, .op = op, .uid = uid,
				       .granted = 0xdead };
	int ret = neuron_ioctl(fd, NEURON_IOC_CORE_GRANT, &g);

	if (granted)
		*granted = g.granted;
	return ret;
}

/* sysfs programs_stopped of @core: the counts of its five engines. */
static int programs_stopped(unsigned int core, unsigned long long n[NEURON_ENGINES_PER_CORE])
{
	char buf[512], want[16], *p;

	if (operator_sysfs_read("programs_stopped", buf, sizeof(buf)) < 0)
		return -errno;
	snprintf(want, sizeof(want), "core%u ", core);
	p = strstr(buf, want);
	if (!p || sscanf(p + strlen(want), "%llu %llu %llu %llu %llu", &n[0], &n[1], &n[2],
			 &n[3], &n[4]) != NEURON_ENGINES_PER_CORE)
		return -EINVAL;
	return 0;
}

static unsigned long long stopped_sum(const unsigned long long n[NEURON_ENGINES_PER_CORE])
{
	unsigned long long sum = 0;

	for (int e = 0; e < NEURON_ENGINES_PER_CORE; e++)
		sum += n[e];
	return sum;
}

/*
 * Reads every event queued on @fd (O_NONBLOCK, events of this header's
 * size) and keeps the ENGINE_STOPPED ones, at most @max; returns how many
 * there were.
 */
static int stopped_events(int fd, struct neuron_event *out, int max)
{
	struct neuron_event ev[32];
	ssize_t got;
	int n = 0;

	while ((got = read(fd, ev, sizeof(ev))) > 0)
		for (size_t i = 0; i < (size_t)got / sizeof(ev[0]); i++) {
			if (ev[i].edge != NEURON_EDGE_ENGINE_STOPPED)
				continue;
			if (n < max)
				out[n] = ev[i];
			n++;
		}
	return n;
}

/* The owner, uid TENANT_O: cores 0 and 1, queue 1 of core 0, MEM_O. */
static int detach_owner(void *arg)
{
	uint8_t act_expl = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_ACT,
						      NEURON_ENGINE_RECORD_EXPLICIT);
	struct neuron_emu_insn prog[OWN_N + 1];
	union neuron_isa_notification r;
	unsigned long long before0[5], before1[5], after[5];
	struct neuron_engine_status st, act0;
	struct neuron_event ev[4];
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	unsigned int mine = 0, theirs = 0, altered = 0;
	__u64 owned, granted;
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK), n;

	(void)arg;
	if (fd < 0)
		return 90;
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 3, &owned), "O: CORE_ACQUIRE 0-1");
	chk(0, mem_alloc(fd, MEM_O, MEM_LEN, NEURON_MEM_F_FIXED, NULL), "O: MEM_ALLOC fixed");
	if (neuron_nq_create(fd, 0, EXPL_QUEUE, 4096, 0, &init) ||
	    neuron_ring_map(fd, &init, &ring))
		return 91;
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_ACT, &act0), "O: ENGINE_STATUS");
	step_set(S_O_READY);

	/* A was refused: nothing of A's started, nothing reached the ring */
	if (!step_wait(S_A_REFUSED))
		return 92;
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_ACT, &st), "O: ENGINE_STATUS");
	chk(act0.soft_reset_counter, st.soft_reset_counter, "O: A's refused programs started nothing");
	/* DETACH from the owner itself changes nothing: its own stream */
	for (unsigned int i = 0; i < OWN_N; i++) {
		prog[i] = neuron_insn(NEURON_OP_NOTIFY, OWN_HINT);
		prog[i].operand.arg.debug_hint_extended = htole16((uint16_t)(0x100 + i));
	}
	prog[OWN_N] = neuron_insn(NEURON_OP_HALT, 0);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, OWN_N + 1, NEURON_SUBMIT_F_DETACH),
	    "O: detached SUBMIT to its own core");
	for (unsigned int i = 0; i < OWN_N; i++) {
		if (neuron_ring_read(&ring, &r, 1, NEURON_WAIT_MS))
			break;
		if (r.explicit_notif.debug_hint == OWN_HINT &&
		    r.explicit_notif.debug_hint_extended == 0x100 + i)
			mine++;
		else
			theirs++;
	}
	chk(OWN_N, mine, "O: its own stream, in order");
	chk(0, theirs, "O: records of others before the grant");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS),
	    "O: its own program ended");
	chk(0, core_grant(fd, 3, NEURON_GRANT_OP_GRANT, TENANT_A, &granted), "O: CORE_GRANT 0-1 to A");
	chk(3, granted, "O: granted after CORE_GRANT");
	step_set(S_GRANTED);

	/* A's stream: started detached, A's file closed, it still runs */
	if (!step_wait(S_A_CLOSED))
		return 93;
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_ACT, &st), "O: ENGINE_STATUS");
	chk(NEURON_ENGINE_RUNNING, st.state, "O: A's detached program runs after A's close");
	chk(act0.programs_stopped, st.programs_stopped, "O: A's close stopped nothing");
	mine = theirs = 0;
	for (unsigned int i = 0; i < DETACH_N; i++) {
		if (neuron_ring_read(&ring, &r, 1, NEURON_WAIT_MS))
			break;
		if (neuron_rec_type(&r) != act_expl || r.explicit_notif.debug_hint != DETACH_HINT ||
		    r.explicit_notif.debug_hint_extended != i)
			altered++;
		mine++;
	}
	chk(DETACH_N, mine, "O: A's detached records in O's queue after A's close");
	chk(0, altered, "O: A's detached records altered or out of order");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_ACT, NEURON_WAIT_MS),
	    "O: A's detached stream ended by itself");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_POOL, NEURON_WAIT_MS),
	    "O: A's detached copy in O's memory ran");
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_ACT, &st), "O: ENGINE_STATUS");
	chk(act0.soft_reset_counter + 1, st.soft_reset_counter, "O: ACT started A's stream once");
	chk(act0.programs_stopped, st.programs_stopped, "O: nothing of A's was stopped");
	chk(0, neuron_ring_pop(&ring, &r), "O: no record beyond A's stream");
	chk(0, stopped_events(fd, ev, 4), "O: ENGINE_STOPPED events so far");
	chk(0, core_grant(fd, 3, NEURON_GRANT_OP_REVOKE, 0, &granted), "O: CORE_GRANT revoke");
	chk(0, granted, "O: granted after the revoke");
	step_set(S_REVOKED);
	if (!step_wait(S_A_RETRIED))
		return 94;
	chk(0, core_grant(fd, 3, NEURON_GRANT_OP_GRANT, TENANT_A, &granted), "O: CORE_GRANT again");
	chk(3, granted, "O: granted again");
	step_set(S_REGRANTED);

	/* the owner's ENGINE_RESET and CORE_RELEASE stop A's programs: reported */
	if (!step_wait(S_A_LONG))
		return 95;
	chk(0, programs_stopped(0, before0), "O: sysfs programs_stopped core 0");
	chk(0, programs_stopped(1, before1), "O: sysfs programs_stopped core 1");
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_ACT, &st), "O: ENGINE_STATUS");
	chk(NEURON_ENGINE_RUNNING, st.state, "O: A's long program runs on core 0 ACT");
	chk(0, engine_reset(fd, 0, NEURON_ENGINE_ACT), "O: ENGINE_RESET core 0 ACT");
	n = stopped_events(fd, ev, 4);
	chk(1, n, "O: ENGINE_STOPPED events after ENGINE_RESET");
	if (n >= 1) {
		chk(0, ev[0].core, "O: ENGINE_STOPPED core");
		chk(NEURON_STOP_ENGINE_RESET, ev[0].cause, "O: ENGINE_STOPPED cause");
		chk(1u << NEURON_ENGINE_ACT, ev[0].queues, "O: ENGINE_STOPPED engines");
		chk(stopped_sum(before0) + 1, ev[0].count, "O: ENGINE_STOPPED count");
	}
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_ACT, &st), "O: ENGINE_STATUS");
	chk(before0[NEURON_ENGINE_ACT] + 1, st.programs_stopped, "O: ACT programs_stopped");
	chk(0, engine_reset(fd, 0, NEURON_ENGINE_ACT), "O: ENGINE_RESET of the idle engine");
	chk(0, stopped_events(fd, ev, 4), "O: ENGINE_STOPPED events after an idle reset");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 2, &owned), "O: CORE_RELEASE core 1");
	chk(1, owned, "O: owns core 0 after CORE_RELEASE");
	n = stopped_events(fd, ev, 4);
	chk(1, n, "O: ENGINE_STOPPED events after CORE_RELEASE");
	if (n >= 1) {
		chk(1, ev[0].core, "O: ENGINE_STOPPED core");
		chk(NEURON_STOP_CORE_RELEASE, ev[0].cause, "O: ENGINE_STOPPED cause");
		chk(1u << NEURON_ENGINE_PE, ev[0].queues, "O: ENGINE_STOPPED engines");
		chk(stopped_sum(before1) + 1, ev[0].count, "O: ENGINE_STOPPED count");
	}
	chk(0, programs_stopped(1, after), "O: sysfs programs_stopped core 1");
	chk(before1[NEURON_ENGINE_PE] + 1, after[NEURON_ENGINE_PE], "O: core 1 PE programs_stopped");
	chk(stopped_sum(before1) + 1, stopped_sum(after), "O: core 1 programs_stopped in all");
	chk(0, core_grant(fd, 0, NEURON_GRANT_OP_GRANT, 0, &granted), "O: CORE_GRANT query");
	chk(1, granted, "O: core 1's grant ended with it");
	step_set(S_O_STOPPED);

	/* the owner's release stops A's last program (the parent's file sees it) */
	if (!step_wait(S_A_LONG2))
		return 96;
	chk(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st), "O: ENGINE_STATUS");
	chk(NEURON_ENGINE_RUNNING, st.state, "O: A's program runs on core 0 PE");
	neuron_ring_unmap(&ring);
	close(fd);
	return 0;
}

/* A, uid TENANT_A: the grantee. */
static int detach_a(void *arg)
{
	struct neuron_emu_insn prog[2 * DETACH_N + 2], dge[2];
	unsigned int n;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0 || !step_wait(S_O_READY))
		return 100;
	n = detach_stream(prog);
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached SUBMIT without a grant");
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, 0), "A: SUBMIT to O's core");
	chk(-EPERM, core_grant(fd, 1, NEURON_GRANT_OP_GRANT, TENANT_A, NULL),
	    "A: CORE_GRANT of O's core");
	chk(0, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, NULL), "A: MEM_ALLOC fixed");
	step_set(S_A_REFUSED);

	if (!step_wait(S_B_REFUSED))
		return 101;
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, 0),
	    "A: SUBMIT without DETACH to a granted core");
	/* a detached program runs on O's behalf: O's memory, not A's */
	dge[0] = dge_copy(MEM_A, MEM_A + 0x1000, 64);
	dge[1] = neuron_insn(NEURON_OP_HALT, 0);
	chk(-EACCES, neuron_submit(fd, 0, NEURON_ENGINE_POOL, dge, 2, NEURON_SUBMIT_F_DETACH),
	    "A: detached DGE_COPY in A's own memory");
	dge[0] = dge_copy(MEM_O, MEM_O + 0x1000, 64);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_POOL, dge, 2, NEURON_SUBMIT_F_DETACH),
	    "A: detached DGE_COPY in O's memory");
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached SUBMIT of its stream");
	close(fd);
	step_set(S_A_CLOSED);

	if (!step_wait(S_REVOKED))
		return 102;
	fd = neuron_open();
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached SUBMIT after the revoke");
	step_set(S_A_RETRIED);
	if (!step_wait(S_REGRANTED))
		return 103;
	n = long_prog(prog);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached long program on core 0 ACT");
	chk(0, neuron_submit(fd, 1, NEURON_ENGINE_PE, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached long program on core 1 PE");
	close(fd);
	step_set(S_A_LONG);

	if (!step_wait(S_O_STOPPED))
		return 104;
	fd = neuron_open();
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached long program on core 0 PE");
	close(fd);
	step_set(S_A_LONG2);
	return 0;
}

/* B, uid TENANT_B: another uid, refused with the grant to A. */
static int detach_b(void *arg)
{
	struct neuron_emu_insn prog[2 * DETACH_N + 2];
	unsigned int n = detach_stream(prog);
	int fd = neuron_open();

	(void)arg;
	if (fd < 0 || !step_wait(S_GRANTED))
		return 110;
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_ACT, prog, n, NEURON_SUBMIT_F_DETACH),
	    "B: detached SUBMIT, the grant is A's");
	chk(-EPERM, core_grant(fd, 1, NEURON_GRANT_OP_REVOKE, 0, NULL), "B: CORE_GRANT revoke of O's core");
	chk(-EPERM, engine_reset(fd, 0, NEURON_ENGINE_ACT), "B: ENGINE_RESET of O's core");
	close(fd);
	step_set(S_B_REFUSED);
	return 0;
}

/* A again, once the granting owner is gone and root owns core 0. */
static int detach_after_owner(void *arg)
{
	struct neuron_emu_insn prog[6];
	unsigned int n = long_prog(prog);
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 120;
	chk(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached SUBMIT once the granting owner left");
	close(fd);
	return 0;
}

/*
 * The issue's detached submit under tenancy (docs/decisions/0024-submit-detach.md):
 * only a uid the owner granted may start a program on the owner's core,
 * the program is the owner's (records, memory, lifetime), and every program
 * the driver stops while it runs is counted and reported. The parent's
 * file (CAP_SYS_ADMIN: a watcher) sees the three ENGINE_STOPPED events:
 * the owner's ENGINE_RESET, CORE_RELEASE and release, in that order.
 */
TEST_F_TIMEOUT(ten, detach, 200)
{
	static const struct { __u32 core, cause, engines; } want[] = {
		{ 0, NEURON_STOP_ENGINE_RESET, 1u << NEURON_ENGINE_ACT },
		{ 1, NEURON_STOP_CORE_RELEASE, 1u << NEURON_ENGINE_PE },
		{ 0, NEURON_STOP_RELEASE, 1u << NEURON_ENGINE_PE },
	};
	unsigned long long b0[5], b1[5], a0[5], a1[5];
	struct neuron_event ev[8];
	struct pollfd p;
	pid_t o, a, b, heir;
	int n, root = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK);

	ASSERT_LE(0, root);
	p = (struct pollfd){ .fd = root, .events = POLLIN };
	poll(&p, 1, 0);		/* subscribes root's file */
	stopped_events(root, ev, 8);	/* whatever earlier tests left */
	ASSERT_EQ(0, programs_stopped(0, b0));
	ASSERT_EQ(0, programs_stopped(1, b1));
	o = spawn(TENANT_O, detach_owner, NULL);
	ASSERT_LT(0, o);
	a = spawn(TENANT_A, detach_a, NULL);
	ASSERT_LT(0, a);
	b = spawn(TENANT_B, detach_b, NULL);
	ASSERT_LT(0, b);
	EXPECT_EQ(0, reap(b)) TH_LOG("B");
	EXPECT_EQ(0, reap(a)) TH_LOG("A");
	EXPECT_EQ(0, reap(o)) TH_LOG("O");
	assert_checks(_metadata, 60);

	n = stopped_events(root, ev, 8);
	EXPECT_EQ(3, n) TH_LOG("ENGINE_STOPPED events the watcher saw");
	for (int i = 0; i < 3 && i < n; i++) {
		EXPECT_EQ(want[i].core, ev[i].core) TH_LOG("event %d", i);
		EXPECT_EQ(want[i].cause, ev[i].cause) TH_LOG("event %d", i);
		EXPECT_EQ(want[i].engines, ev[i].queues) TH_LOG("event %d", i);
	}
	ASSERT_EQ(0, programs_stopped(0, a0));
	ASSERT_EQ(0, programs_stopped(1, a1));
	EXPECT_EQ(b0[NEURON_ENGINE_ACT] + 1, a0[NEURON_ENGINE_ACT]);
	EXPECT_EQ(b0[NEURON_ENGINE_PE] + 1, a0[NEURON_ENGINE_PE]);
	EXPECT_EQ(stopped_sum(b0) + 2, stopped_sum(a0));
	EXPECT_EQ(b1[NEURON_ENGINE_PE] + 1, a1[NEURON_ENGINE_PE]);
	EXPECT_EQ(stopped_sum(b1) + 1, stopped_sum(a1));
	if (n >= 3)
		EXPECT_EQ(stopped_sum(a0), ev[2].count);

	/* the grant ended with its owner: a new owner's core refuses A */
	EXPECT_EQ(0, cores_ioctl(root, NEURON_IOC_CORE_ACQUIRE, 1, NULL));
	heir = spawn(TENANT_A, detach_after_owner, NULL);
	ASSERT_LT(0, heir);
	EXPECT_EQ(0, reap(heir));
	assert_checks(_metadata, 1);
	close(root);
}

/* ==== grant_ioctls ========================================================= */

/*
 * CORE_GRANT's inputs (UAPI struct neuron_core_grant, Errors:), and the
 * count and event of one program stopped by its owner's ENGINE_RESET.
 */
TEST_F(ten, grant_ioctls)
{
	struct neuron_core_grant g;
	struct neuron_engine_status st;
	struct neuron_emu_insn prog[6], halt = neuron_insn(NEURON_OP_HALT, 0);
	struct neuron_event ev[4];
	unsigned long long before[5], after[5];
	__u64 granted;
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK), other = neuron_open(), n;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	/* bad fields: -EINVAL, whoever asks */
	EXPECT_EQ(-EINVAL, core_grant(fd, 4, NEURON_GRANT_OP_GRANT, TENANT_A, NULL));
	EXPECT_EQ(-EINVAL, core_grant(fd, 1ull << 63, NEURON_GRANT_OP_GRANT, TENANT_A, NULL));
	EXPECT_EQ(-EINVAL, core_grant(fd, 1, 2, TENANT_A, NULL)) TH_LOG("op");
	EXPECT_EQ(-EINVAL, core_grant(fd, 1, NEURON_GRANT_OP_GRANT, 0xffffffffu, NULL))
		TH_LOG("uid (uid_t)-1 is no uid");
	EXPECT_EQ(-EINVAL, core_grant(fd, 1, NEURON_GRANT_OP_REVOKE, TENANT_A, NULL))
		TH_LOG("REVOKE names no uid");
	g = (struct neuron_core_grant){ .cores = 1, .uid = TENANT_A, .reserved = 1 };
	EXPECT_EQ(-EINVAL, neuron_ioctl(fd, NEURON_IOC_CORE_GRANT, &g));
	/* only the owner grants; a free core is not taken */
	EXPECT_EQ(-EPERM, core_grant(fd, 1, NEURON_GRANT_OP_GRANT, TENANT_A, NULL));
	EXPECT_EQ(0, core_grant(fd, 0, NEURON_GRANT_OP_GRANT, TENANT_A, &granted));
	EXPECT_EQ(0, granted);
	expect_owner(_metadata, 0, 0);
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, NULL));
	EXPECT_EQ(-EPERM, core_grant(other, 1, NEURON_GRANT_OP_GRANT, TENANT_B, NULL));
	EXPECT_EQ(-EPERM, core_grant(other, 1, NEURON_GRANT_OP_REVOKE, 0, NULL));
	EXPECT_EQ(0, core_grant(fd, 1, NEURON_GRANT_OP_GRANT, TENANT_A, &granted));
	EXPECT_EQ(1, granted);
	EXPECT_EQ(0, core_grant(other, 0, NEURON_GRANT_OP_GRANT, 0, &granted));
	EXPECT_EQ(0, granted) TH_LOG("another file's query sees its own cores only");
	/* all or nothing: core 1 is not fd's */
	EXPECT_EQ(-EPERM, core_grant(fd, 3, NEURON_GRANT_OP_REVOKE, 0, &granted));
	EXPECT_EQ(0, core_grant(fd, 0, NEURON_GRANT_OP_GRANT, 0, &granted));
	EXPECT_EQ(1, granted) TH_LOG("a refused REVOKE revoked something");
	EXPECT_EQ(0, core_grant(fd, 1, NEURON_GRANT_OP_REVOKE, 0, &granted));
	EXPECT_EQ(0, granted);
	/* the other file, root but not the owner: DETACH without a grant */
	EXPECT_EQ(-EPERM, neuron_submit(other, 0, NEURON_ENGINE_PE, &halt, 1,
					NEURON_SUBMIT_F_DETACH));
	EXPECT_EQ(-EINVAL, neuron_submit(fd, 0, NEURON_ENGINE_PE, &halt, 1, 1u << 2))
		TH_LOG("an unknown SUBMIT flag");

	/* ENGINE_RESET of a running engine: one event, one more stopped */
	ASSERT_EQ(0, programs_stopped(0, before));
	stopped_events(fd, ev, 4);
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, long_prog(prog), 0));
	ASSERT_EQ(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st));
	EXPECT_EQ(NEURON_ENGINE_RUNNING, st.state);
	EXPECT_EQ(before[NEURON_ENGINE_PE], st.programs_stopped);
	EXPECT_EQ(0, engine_reset(fd, 0, NEURON_ENGINE_PE));
	n = stopped_events(fd, ev, 4);
	EXPECT_EQ(1, n);
	if (n >= 1) {
		EXPECT_EQ(0, ev[0].device);
		EXPECT_EQ(0, ev[0].core);
		EXPECT_EQ(NEURON_STOP_ENGINE_RESET, ev[0].cause);
		EXPECT_EQ(1u << NEURON_ENGINE_PE, ev[0].queues);
		EXPECT_EQ(stopped_sum(before) + 1, ev[0].count);
		EXPECT_EQ(64, ev[0].size);
	}
	ASSERT_EQ(0, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st));
	EXPECT_EQ(NEURON_ENGINE_IDLE, st.state);
	EXPECT_EQ(before[NEURON_ENGINE_PE] + 1, st.programs_stopped);
	ASSERT_EQ(0, programs_stopped(0, after));
	for (int e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		EXPECT_EQ(before[e] + (e == NEURON_ENGINE_PE), after[e]) TH_LOG("engine %d", e);
	}
	/* an idle engine, a program that ended: nothing stopped, nothing said */
	EXPECT_EQ(0, engine_reset(fd, 0, NEURON_ENGINE_PE));
	EXPECT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, &halt, 1, 0));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS));
	EXPECT_EQ(0, engine_reset(fd, 0, NEURON_ENGINE_PE));
	EXPECT_EQ(0, stopped_events(fd, ev, 4));
	ASSERT_EQ(0, programs_stopped(0, after));
	EXPECT_EQ(before[NEURON_ENGINE_PE] + 1, after[NEURON_ENGINE_PE]);
	close(other);
	close(fd);
}

/* ==== mem_busy ============================================================= */

/*
 * docs/decisions/0005-tenancy.md#memory-and-programs: SUBMIT checks a program's
 * DGE ranges once, so MEM_FREE is refused (-EBUSY) while any program of the
 * file (its own, or a detached one it holds) runs or waits; the block
 * stays the file's, and another uid's NEURON_MEM_F_FIXED allocation of it
 * stays refused (-EBUSY), until the engine is reset or the program ends.
 */
#define MEM_A2		(MEM_A + MEM_LEN)	/* A's block of the DELAY round */
#define MEM_SEM		13	/* the semaphore the waiting programs wait on */
#define DELAY_N		10	/* DELAY_N x DELAY_NS: RUNNING for 4 s */
#define DELAY_NS	400000000u

/* The steps of mem_busy, each set once by the tenant that did it. */
enum {
	M_A_WAITING,		/* A's copy + WAIT_GE program waits; its MEM_FREE refused */
	M_B_TRIED,		/* B's FIXED MEM_ALLOC of MEM_A refused; B's own program waits */
	M_A_FREED,		/* A reset its POOL and freed MEM_A */
	M_B_TOOK,		/* B allocated MEM_A, then reset its POOL and freed */
	M_A_RUNNING,		/* A's DELAY chain runs; its MEM_FREE of MEM_A2 refused */
	M_B_TRIED2,		/* B's FIXED MEM_ALLOC of MEM_A2 refused */
	M_A_DONE,		/* A's chain ended, MEM_A2 freed, core 0 released */
	M_O_READY,		/* O owns core 0 and MEM_O, granted to uid A */
	M_A_DETACHED,		/* A's detached copy + WAIT_GE waits on O's core */
	M_O_HOLDS,		/* O's MEM_FREE of MEM_O refused */
	M_B_TRIED3,		/* B's FIXED MEM_ALLOC of MEM_O refused */
	M_O_FREED,		/* O reset its POOL and freed MEM_O */
	M_STEPS
};

/*
 * BAR4 offset of an engine's program area: the driver's layout
 * (kernel/neuron.h: prog_base = mem_size - cores * 5 * 64 KiB, core c
 * engine e at prog_base + (c * 5 + e) * 64 KiB), as dge_test.c's
 * prog_area(). Not UAPI: mem_zero checks its use through the seed copy's
 * INST_START and INST_END CRCs, and SUBMIT refuses (-EACCES) a source
 * outside the program, so a wrong layout fails loudly.
 */
static uint32_t prog_area(const struct neuron_device_info *info, unsigned int core,
			  unsigned int engine)
{
	uint64_t base = info->mem_size -
			(uint64_t)info->num_cores * NEURON_ENGINES_PER_CORE * 0x10000;

	return (uint32_t)(base + (uint64_t)(core * NEURON_ENGINES_PER_CORE + engine) * 0x10000);
}

/*
 * A program for POOL of @core (6 instructions): copies the 64 bytes of its
 * own slots 4..5 into @dst, waits until semaphore MEM_SEM >= 1 (nobody
 * raises it), then copies them to @dst + 0x100 -- the copy that would land
 * in another tenant's block if the free were let through.
 */
static unsigned int copy_wait_prog(const struct neuron_device_info *info, unsigned int core,
				   uint32_t dst, struct neuron_emu_insn *p)
{
	uint32_t data = prog_area(info, core, NEURON_ENGINE_POOL) + 4 * NEURON_EMU_INSN_BYTES;

	p[0] = dge_copy(data, dst, 64);
	p[1] = neuron_insn(NEURON_OP_WAIT_GE, 0);
	p[1].operand.arg.idx = htole32(MEM_SEM);
	p[1].operand.arg.value = htole32(1);
	p[2] = dge_copy(data, dst + 0x100, 64);
	p[3] = neuron_insn(NEURON_OP_HALT, 0);
	for (unsigned int i = 0; i < 64; i++)
		((uint8_t *)&p[4])[i] = (uint8_t)(0x40 + i);
	return 6;
}

/* Tenant A: its own programs hold its frees; its detached one holds O's, not A's. */
static int busy_a(void *arg)
{
	struct neuron_emu_insn prog[DELAY_N + 1];
	struct neuron_device_info info;
	__u64 off, owned;
	__u32 v = 0;
	unsigned int n;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 110;
	chk(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info), "A: DEVICE_INFO");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned), "A: CORE_ACQUIRE core 0");
	chk(0, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, &off), "A: MEM_ALLOC fixed MEM_A");
	chk(0, evt_sem(fd, 0, MEM_SEM, NEURON_SEM_SET, &v), "A: SEM_SET 0");

	/* 1. a DGE_COPY into MEM_A, then WAIT_GE on a semaphore nobody raises */
	n = copy_wait_prog(&info, 0, MEM_A, prog);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_POOL, prog, n, 0), "A: SUBMIT copy + WAIT_GE");
	chk(NEURON_ENGINE_WAITING, engine_until(fd, 0, NEURON_ENGINE_POOL, NEURON_ENGINE_WAITING),
	    "A: its POOL WAITING");
	chk(-EBUSY, mem_free(fd, MEM_A), "A: MEM_FREE of MEM_A while its program WAITs");
	chk(NEURON_ENGINE_WAITING, engine_state(fd, 0, NEURON_ENGINE_POOL),
	    "A: its POOL still WAITING after the refusal");
	step_set(M_A_WAITING);
	if (!step_wait(M_B_TRIED))
		return 111;
	/* B's program waits on core 1: another file's, it holds nothing of A's */
	chk(0, engine_reset(fd, 0, NEURON_ENGINE_POOL), "A: ENGINE_RESET its POOL");
	chk(NEURON_ENGINE_IDLE, engine_state(fd, 0, NEURON_ENGINE_POOL), "A: its POOL IDLE");
	chk(0, mem_free(fd, MEM_A), "A: MEM_FREE of MEM_A after the reset, B's program waiting");
	chk(-ENOENT, mem_free(fd, MEM_A), "A: MEM_FREE of MEM_A twice");
	step_set(M_A_FREED);

	/* 2. a chain of DELAYs on PE: RUNNING, and naming no memory at all */
	if (!step_wait(M_B_TOOK))
		return 112;
	chk(0, mem_alloc(fd, MEM_A2, MEM_LEN, NEURON_MEM_F_FIXED, &off), "A: MEM_ALLOC fixed MEM_A2");
	for (n = 0; n < DELAY_N; n++)
		prog[n] = delay_insn(DELAY_NS);
	prog[n++] = neuron_insn(NEURON_OP_HALT, 0);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, n, 0), "A: SUBMIT a chain of DELAYs");
	chk(NEURON_ENGINE_RUNNING, engine_state(fd, 0, NEURON_ENGINE_PE), "A: its PE RUNNING");
	chk(-EBUSY, mem_free(fd, MEM_A2), "A: MEM_FREE of MEM_A2 while its DELAYs RUN");
	step_set(M_A_RUNNING);
	if (!step_wait(M_B_TRIED2))
		return 113;
	/* B's refusal above counts only if the chain still ran after it */
	chk(NEURON_ENGINE_RUNNING, engine_state(fd, 0, NEURON_ENGINE_PE),
	    "A: its PE still RUNNING after B's attempt");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS),
	    "A: the DELAY chain ended");
	chk(0, mem_free(fd, MEM_A2), "A: MEM_FREE of MEM_A2 once its PE is IDLE");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 1, &owned), "A: CORE_RELEASE core 0");
	chk(0, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, &off), "A: MEM_ALLOC fixed MEM_A");
	step_set(M_A_DONE);

	/* 3. a detached program on O's core: O's, checked against MEM_O */
	if (!step_wait(M_O_READY))
		return 114;
	n = copy_wait_prog(&info, 0, MEM_O, prog);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_POOL, prog, n, NEURON_SUBMIT_F_DETACH),
	    "A: detached SUBMIT copy + WAIT_GE to O's core");
	chk(NEURON_ENGINE_WAITING, engine_until(fd, 0, NEURON_ENGINE_POOL, NEURON_ENGINE_WAITING),
	    "A: the detached program WAITING");
	chk(0, mem_free(fd, MEM_A), "A: MEM_FREE of its own block, its detached program waiting");
	close(fd);		/* the detached program outlives A's file */
	step_set(M_A_DETACHED);
	return 0;
}

/* Tenant B: tries the blocks A and O cannot free; its own program holds its own. */
static int busy_b(void *arg)
{
	struct neuron_emu_insn prog[6];
	struct neuron_device_info info;
	__u64 off, owned;
	__u32 v = 0;
	unsigned int n;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 120;
	chk(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info), "B: DEVICE_INFO");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 2, &owned), "B: CORE_ACQUIRE core 1");
	chk(0, mem_alloc(fd, MEM_B, MEM_LEN, NEURON_MEM_F_FIXED, &off), "B: MEM_ALLOC fixed MEM_B");
	chk(0, evt_sem(fd, 1, MEM_SEM, NEURON_SEM_SET, &v), "B: SEM_SET 0");
	if (!step_wait(M_A_WAITING))
		return 121;
	chk(-EBUSY, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_A, A's program waiting");
	chk(-EBUSY, mem_alloc(fd, MEM_A, PAGE, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_A's first page, A's program waiting");
	chk(-ENOENT, mem_free(fd, MEM_A), "B: MEM_FREE of A's MEM_A");
	n = copy_wait_prog(&info, 1, MEM_B, prog);
	chk(0, neuron_submit(fd, 1, NEURON_ENGINE_POOL, prog, n, 0), "B: SUBMIT copy + WAIT_GE");
	chk(NEURON_ENGINE_WAITING, engine_until(fd, 1, NEURON_ENGINE_POOL, NEURON_ENGINE_WAITING),
	    "B: its POOL WAITING");
	chk(-EBUSY, mem_free(fd, MEM_B), "B: MEM_FREE of MEM_B while its program WAITs");
	step_set(M_B_TRIED);
	if (!step_wait(M_A_FREED))
		return 122;
	chk(0, mem_alloc(fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_A once A freed it");
	chk(MEM_A, off, "B: MEM_ALLOC offset");
	chk(-EBUSY, mem_free(fd, MEM_A), "B: MEM_FREE of MEM_A while its own program WAITs");
	chk(0, engine_reset(fd, 1, NEURON_ENGINE_POOL), "B: ENGINE_RESET its POOL");
	chk(0, mem_free(fd, MEM_A), "B: MEM_FREE of MEM_A after the reset");
	chk(0, mem_free(fd, MEM_B), "B: MEM_FREE of MEM_B after the reset");
	step_set(M_B_TOOK);
	if (!step_wait(M_A_RUNNING))
		return 123;
	chk(-EBUSY, mem_alloc(fd, MEM_A2, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_A2, A's DELAYs running");
	step_set(M_B_TRIED2);
	if (!step_wait(M_O_HOLDS))
		return 124;
	chk(-EBUSY, mem_alloc(fd, MEM_O, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_O, O's detached program waiting");
	step_set(M_B_TRIED3);
	if (!step_wait(M_O_FREED))
		return 125;
	chk(0, mem_alloc(fd, MEM_O, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_O once O freed it");
	close(fd);
	return 0;
}

/* The owner O: core 0 after A, MEM_O, a grant to uid A. */
static int busy_o(void *arg)
{
	__u64 off, owned, granted;
	__u32 v = 0;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 130;
	if (!step_wait(M_A_DONE))
		return 131;
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned), "O: CORE_ACQUIRE core 0");
	chk(0, mem_alloc(fd, MEM_O, MEM_LEN, NEURON_MEM_F_FIXED, &off), "O: MEM_ALLOC fixed MEM_O");
	chk(0, evt_sem(fd, 0, MEM_SEM, NEURON_SEM_SET, &v), "O: SEM_SET 0");
	chk(0, core_grant(fd, 1, NEURON_GRANT_OP_GRANT, TENANT_A, &granted),
	    "O: CORE_GRANT core 0 to uid A");
	step_set(M_O_READY);
	if (!step_wait(M_A_DETACHED))
		return 132;
	chk(NEURON_ENGINE_WAITING, engine_state(fd, 0, NEURON_ENGINE_POOL),
	    "O: A's detached program WAITING after A closed");
	chk(-EBUSY, mem_free(fd, MEM_O), "O: MEM_FREE of MEM_O while a detached program it holds WAITs");
	step_set(M_O_HOLDS);
	if (!step_wait(M_B_TRIED3))
		return 133;
	chk(0, engine_reset(fd, 0, NEURON_ENGINE_POOL), "O: ENGINE_RESET its POOL");
	chk(0, mem_free(fd, MEM_O), "O: MEM_FREE of MEM_O after the reset");
	step_set(M_O_FREED);
	close(fd);
	return 0;
}

/*
 * Free-while-running, as two (three) unprivileged uids: A's program that
 * copies into its block and then waits holds A's MEM_FREE (-EBUSY) and
 * B's NEURON_MEM_F_FIXED allocation of the block (-EBUSY) until A resets
 * the engine; so does a chain of DELAYs naming no memory (RUNNING); B's
 * waiting program holds B's frees, not A's; a detached program A submitted
 * to O's core holds O's MEM_FREE, not A's (docs/decisions/0005-tenancy.md#memory-and-programs).
 */
TEST_F_TIMEOUT(ten, mem_busy, 200)
{
	pid_t a, b, o;

	o = spawn(TENANT_O, busy_o, NULL);
	ASSERT_LT(0, o);
	a = spawn(TENANT_A, busy_a, NULL);
	ASSERT_LT(0, a);
	b = spawn(TENANT_B, busy_b, NULL);
	ASSERT_LT(0, b);
	EXPECT_EQ(0, reap(a)) TH_LOG("A");
	EXPECT_EQ(0, reap(b)) TH_LOG("B");
	EXPECT_EQ(0, reap(o)) TH_LOG("O");
	for (int i = 0; i < M_STEPS; i++) {
		EXPECT_EQ(1, sh->step[i]) TH_LOG("step %d not reached", i);
	}
	assert_checks(_metadata, 51);
}

/* ==== submit_check ========================================================= */

/*
 * docs/decisions/0005-tenancy.md#memory-and-programs: SUBMIT checks its program
 * under its file's mem_lock, not the device's lock, and keeps the file's lock
 * until the engine is started. The driver's pause point
 * NEURON_PAUSE_SUBMIT_CHECKED (kernel/neuron_pause.c) holds A's SUBMIT
 * right after the check: B's calls that take the device's lock complete
 * meanwhile, and A's own MEM_FREE of the block the program names waits
 * for the SUBMIT, then finds the program waiting and is refused.
 */
#define PAUSE_PARAM		"/sys/module/nnq/parameters/pause_step"
#define PAUSED_PARAM		"/sys/module/nnq/parameters/paused_at"
#define PAUSE_SUBMIT_CHECKED	"32"	/* enum neuron_pause_step */

enum {
	C_A_READY,		/* A holds core 0 and MEM_A; its SUBMIT is next */
	C_PAUSED,		/* the parent saw the SUBMIT wait at the point */
	C_B_DONE,		/* B's MEM_ALLOC and MEM_FREE returned */
	C_A_FREEING,		/* A's second thread calls MEM_FREE of MEM_A */
	C_A_FREED,		/* that MEM_FREE returned */
	C_RESUMED,		/* the parent let the SUBMIT go on */
	C_A_DONE,		/* A's SUBMIT and MEM_FREE returned */
};

static int check_fd;
static volatile int check_free_ret = 1;

static void *check_free(void *arg)
{
	(void)arg;
	if (!step_wait(C_B_DONE))
		return NULL;
	step_set(C_A_FREEING);
	check_free_ret = mem_free(check_fd, MEM_A);
	step_set(C_A_FREED);
	return NULL;
}

/* Threads of @pid blocked in the kernel (state D), or -1. */
static int threads_blocked(pid_t pid)
{
	char path[320], buf[512], *st;
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, d->d_name);
		if (read_str(path, buf, sizeof(buf)) <= 0)
			continue;
		st = strrchr(buf, ')');	/* "pid (comm) S ..." */
		if (st && st[1] == ' ' && st[2] == 'D')
			n++;
	}
	closedir(dir);
	return n;
}

/* Waits until 2 threads of @pid are blocked, or A's MEM_FREE returned. */
static int threads_blocked_wait(pid_t pid)
{
	uint64_t deadline = neuron_now_ms() + NEURON_WAIT_MS;

	while (threads_blocked(pid) < 2 && !sh->step[C_A_FREED] &&
	       neuron_now_ms() < deadline)
		usleep(1000);
	return threads_blocked(pid);
}

/* Polls paused_at into @v until it reads 32 or NEURON_WAIT_MS passed. */
static void paused_wait(char *v, size_t len)
{
	uint64_t deadline = neuron_now_ms() + NEURON_WAIT_MS;

	while (neuron_now_ms() < deadline) {
		if (read_str(PAUSED_PARAM, v, len) > 0 && atoi(v) == 32)
			return;
		usleep(1000);
	}
}

/* Tenant A: a SUBMIT that waits at the pause point, a MEM_FREE behind it. */
static int check_a(void *arg)
{
	struct neuron_emu_insn prog[6];
	struct neuron_device_info info;
	pthread_t t;
	__u64 off, owned;
	__u32 v = 0;
	unsigned int n;

	(void)arg;
	check_fd = neuron_open();
	if (check_fd < 0)
		return 140;
	chk(0, neuron_ioctl(check_fd, NEURON_IOC_DEVICE_INFO, &info), "A: DEVICE_INFO");
	chk(0, cores_ioctl(check_fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned), "A: CORE_ACQUIRE core 0");
	chk(0, mem_alloc(check_fd, MEM_A, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "A: MEM_ALLOC fixed MEM_A");
	chk(0, evt_sem(check_fd, 0, MEM_SEM, NEURON_SEM_SET, &v), "A: SEM_SET 0");
	n = copy_wait_prog(&info, 0, MEM_A, prog);
	if (pthread_create(&t, NULL, check_free, NULL))
		return 141;
	step_set(C_A_READY);
	/* waits at the pause point until the parent resumes it */
	chk(0, neuron_submit(check_fd, 0, NEURON_ENGINE_POOL, prog, n, 0),
	    "A: SUBMIT copy + WAIT_GE, held after its check");
	pthread_join(t, NULL);
	chk(1, sh->step[C_RESUMED], "A: the SUBMIT returned only once resumed");
	chk(-EBUSY, check_free_ret,
	    "A: MEM_FREE of MEM_A issued during the SUBMIT's pause: refused, the program waits");
	chk(NEURON_ENGINE_WAITING, engine_until(check_fd, 0, NEURON_ENGINE_POOL,
						NEURON_ENGINE_WAITING),
	    "A: its POOL WAITING");
	chk(0, engine_reset(check_fd, 0, NEURON_ENGINE_POOL), "A: ENGINE_RESET its POOL");
	chk(0, mem_free(check_fd, MEM_A), "A: MEM_FREE of MEM_A after the reset");
	step_set(C_A_DONE);
	close(check_fd);
	return 0;
}

/* Tenant B: calls that take the device's lock, during A's paused SUBMIT. */
static int check_b(void *arg)
{
	__u64 off;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 150;
	if (!step_wait(C_PAUSED))
		return 151;
	chk(0, mem_alloc(fd, MEM_B, MEM_LEN, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_B during A's paused SUBMIT");
	chk(0, mem_free(fd, MEM_B), "B: MEM_FREE of MEM_B during A's paused SUBMIT");
	step_set(C_B_DONE);
	close(fd);
	return 0;
}

/*
 * A's SUBMIT waits between its check and the device's lock; B's calls,
 * which take the device's lock, return meanwhile (they would wait the
 * pause out, 30 s, if the check held it); A's MEM_FREE, issued then, has
 * not returned while the SUBMIT waits, and is refused once it went on.
 */
TEST_F_TIMEOUT(ten, submit_check, 200)
{
	char v[16] = "";
	pid_t a, b;

	/* a test build of nnq.ko only (kernel/Kbuild): the DKMS module has none */
	if (access(PAUSE_PARAM, F_OK))
		SKIP(return, "nnq.ko is not a test build: no pause point");
	ASSERT_EQ(0, write_str(PAUSE_PARAM, PAUSE_SUBMIT_CHECKED));
	a = spawn(TENANT_A, check_a, NULL);
	ASSERT_LT(0, a);
	b = spawn(TENANT_B, check_b, NULL);
	ASSERT_LT(0, b);
	if (step_wait(C_A_READY))
		paused_wait(v, sizeof(v));
	EXPECT_EQ(32, atoi(v)) TH_LOG("A's SUBMIT never waited at the pause point");
	step_set(C_PAUSED);
	/* B's two calls must return while A's SUBMIT still waits */
	EXPECT_EQ(1, step_wait(C_B_DONE)) TH_LOG("B's calls did not return");
	EXPECT_EQ(0, read_str(PAUSED_PARAM, v, sizeof(v)) > 0 ? 32 - atoi(v) : -1)
		TH_LOG("A's SUBMIT left the pause point before B's calls returned");
	/*
	 * A's MEM_FREE, issued now: both of A's threads end up blocked in
	 * the kernel (the SUBMIT at the pause point, the MEM_FREE behind its
	 * file's lock), and the MEM_FREE does not return while paused
	 */
	EXPECT_EQ(1, step_wait(C_A_FREEING));
	EXPECT_EQ(2, threads_blocked_wait(a)) TH_LOG("A's SUBMIT and MEM_FREE not both waiting");
	EXPECT_EQ(0, sh->step[C_A_FREED]) TH_LOG("A's MEM_FREE returned during the SUBMIT's pause");
	step_set(C_RESUMED);
	EXPECT_EQ(0, write_str(PAUSE_PARAM, "0"));
	EXPECT_EQ(0, reap(a)) TH_LOG("A");
	EXPECT_EQ(0, reap(b)) TH_LOG("B");
	EXPECT_EQ(1, sh->step[C_A_DONE]);
	assert_checks(_metadata, 10);
}

/* ==== mem_zero ============================================================= */

/*
 * Device memory reads as zeros when it is handed out (MEM_ALLOC), so a
 * block's next owner learns nothing of the previous one, not even through
 * the CRC a traced DGE_COPY's INST_START record carries of its source.
 * The CRCs are CRC-16/CCITT-FALSE (poly 0x1021, init 0xffff, no reflection,
 * no xorout; docs/device-model.md), worked out once outside this test (a
 * bitwise loop and CPython's binascii.crc_hqx(data, 0xffff) agree; the
 * check value of "123456789" is 0x29b1):
 */
#define CRC_A64		0x80c2	/* A's 64 bytes 0x80, 0x81, ..., 0xbf */
#define CRC_A_PAGE	0x4756	/* those 64 bytes, then 4032 zero bytes */
#define CRC_ZERO64	0xd6da	/* 64 zero bytes */
#define CRC_ZERO_PAGE	0xefdf	/* 4096 zero bytes */

#define MEM_Z		0x400000u	/* A frees it with MEM_FREE */
#define MEM_Z2		0x500000u	/* A's release frees it */
#define TRACE_QUEUE	0	/* INST_START/INST_END records' queue (default ROUTE) */

enum { Z_A_GONE };

/* Reads @n trace records of POOL on @ring: INST_START, INST_END of pcs 0.. in order. */
static int read_trace(struct neuron_ring *ring, union neuron_isa_notification *r, int n,
		      const char *who)
{
	uint8_t start = NEURON_ENGINE_NOTIFIC_TYPE(NEURON_ENGINE_POOL,
						   NEURON_ENGINE_RECORD_INST_START);
	int ret = neuron_ring_read(ring, r, (size_t)n, NEURON_WAIT_MS);

	chk(0, ret, "%s: %d trace records", who, n);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++) {
		chk(start + (i & 1), neuron_rec_type(&r[i]), "%s: trace record %d type", who, i);
		chk(i / 2, r[i].trace.program_counter, "%s: trace record %d pc", who, i);
	}
	return 0;
}

/*
 * Tenant A: writes 64 known bytes (0x80..0xbf, from its program) at the
 * start of MEM_Z and of MEM_Z2, sees them land (INST_END CRCs), then frees
 * MEM_Z and closes (which frees MEM_Z2).
 */
static int zero_a(void *arg)
{
	struct neuron_emu_insn prog[5];
	union neuron_isa_notification r[6];
	struct neuron_device_info info;
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	uint32_t data;
	__u64 owned, off;
	int fd = neuron_open();

	(void)arg;
	if (fd < 0)
		return 140;
	chk(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info), "A: DEVICE_INFO");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1, &owned), "A: CORE_ACQUIRE core 0");
	chk(0, mem_alloc(fd, MEM_Z, PAGE, NEURON_MEM_F_FIXED, &off), "A: MEM_ALLOC fixed MEM_Z");
	chk(0, mem_alloc(fd, MEM_Z2, PAGE, NEURON_MEM_F_FIXED, &off), "A: MEM_ALLOC fixed MEM_Z2");
	chk(0, engine_reset(fd, 0, NEURON_ENGINE_POOL), "A: ENGINE_RESET POOL");
	if (neuron_nq_create(fd, 0, TRACE_QUEUE, 4096, 0, &init) ||
	    neuron_ring_map(fd, &init, &ring))
		return 141;
	data = prog_area(&info, 0, NEURON_ENGINE_POOL) + 3 * NEURON_EMU_INSN_BYTES;
	prog[0] = dge_copy(data, MEM_Z, 64);
	prog[1] = dge_copy(data, MEM_Z2, 64);
	prog[2] = neuron_insn(NEURON_OP_HALT, 0);
	for (unsigned int i = 0; i < 64; i++)	/* slots 3..4 */
		((uint8_t *)&prog[3])[i] = (uint8_t)(0x80 + i);
	chk(0, neuron_submit(fd, 0, NEURON_ENGINE_POOL, prog, 5, NEURON_SUBMIT_F_TRACE),
	    "A: SUBMIT the seed copies, traced");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 0, NEURON_ENGINE_POOL, NEURON_WAIT_MS),
	    "A: seed program ran");
	if (!read_trace(&ring, r, 6, "A")) {
		chk(CRC_A64, r[0].trace.data_crc, "A: INST_START CRC of its bytes (pc 0)");
		chk(CRC_A64, r[1].trace.data_crc, "A: INST_END CRC of MEM_Z (pc 0)");
		chk(CRC_A64, r[2].trace.data_crc, "A: INST_START CRC of its bytes (pc 1)");
		chk(CRC_A64, r[3].trace.data_crc, "A: INST_END CRC of MEM_Z2 (pc 1)");
	}
	chk(0, mem_free(fd, MEM_Z), "A: MEM_FREE of MEM_Z, its engines idle");
	neuron_ring_unmap(&ring);
	close(fd);
	step_set(Z_A_GONE);
	return 0;
}

/* Tenant B: takes both blocks over and reads them through the INST_START CRC. */
static int zero_b(void *arg)
{
	struct neuron_emu_insn prog[5];
	union neuron_isa_notification r[10];
	struct neuron_device_info info;
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	__u64 owned, off;
	int fd;

	(void)arg;
	if (!step_wait(Z_A_GONE))
		return 150;
	fd = neuron_open();
	if (fd < 0)
		return 151;
	chk(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info), "B: DEVICE_INFO");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 2, &owned), "B: CORE_ACQUIRE core 1");
	chk(0, mem_alloc(fd, MEM_Z, 2 * PAGE, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_Z (A's MEM_FREE'd block)");
	chk(0, mem_alloc(fd, MEM_Z2, 2 * PAGE, NEURON_MEM_F_FIXED, &off),
	    "B: MEM_ALLOC fixed MEM_Z2 (A's released block)");
	chk(0, engine_reset(fd, 1, NEURON_ENGINE_POOL), "B: ENGINE_RESET POOL");
	if (neuron_nq_create(fd, 1, TRACE_QUEUE, 4096, 0, &init) ||
	    neuron_ring_map(fd, &init, &ring))
		return 152;
	prog[0] = dge_copy(MEM_Z, MEM_Z + PAGE, 64);
	prog[1] = dge_copy(MEM_Z, MEM_Z + PAGE, PAGE);
	prog[2] = dge_copy(MEM_Z2, MEM_Z2 + PAGE, 64);
	prog[3] = dge_copy(MEM_Z2, MEM_Z2 + PAGE, PAGE);
	prog[4] = neuron_insn(NEURON_OP_HALT, 0);
	chk(0, neuron_submit(fd, 1, NEURON_ENGINE_POOL, prog, 5, NEURON_SUBMIT_F_TRACE),
	    "B: SUBMIT the probes, traced");
	chk(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, 1, NEURON_ENGINE_POOL, NEURON_WAIT_MS),
	    "B: probe program ran");
	if (!read_trace(&ring, r, 10, "B")) {
		chk(CRC_ZERO64, r[0].trace.data_crc, "B: MEM_Z's first 64 bytes read as zeros");
		chk_ne(CRC_A64, r[0].trace.data_crc, "B: MEM_Z's first 64 bytes are not A's");
		chk(CRC_ZERO_PAGE, r[2].trace.data_crc, "B: MEM_Z's first page reads as zeros");
		chk_ne(CRC_A_PAGE, r[2].trace.data_crc, "B: MEM_Z's first page is not A's");
		chk(CRC_ZERO64, r[4].trace.data_crc, "B: MEM_Z2's first 64 bytes read as zeros");
		chk_ne(CRC_A64, r[4].trace.data_crc, "B: MEM_Z2's first 64 bytes are not A's");
		chk(CRC_ZERO_PAGE, r[6].trace.data_crc, "B: MEM_Z2's first page reads as zeros");
		chk_ne(CRC_A_PAGE, r[6].trace.data_crc, "B: MEM_Z2's first page is not A's");
	}
	neuron_ring_unmap(&ring);
	close(fd);
	return 0;
}

/*
 * Reuse after free: A writes known bytes into two blocks, frees one with
 * MEM_FREE and the other by closing; B allocates both at the same offsets
 * (NEURON_MEM_F_FIXED) and copies from them, traced: each INST_START CRC
 * is the CRC of that many zero bytes, not of A's bytes.
 */
TEST_F_TIMEOUT(ten, mem_zero, 200)
{
	pid_t a, b;

	/* the literals tell the two contents apart */
	ASSERT_NE(CRC_ZERO64, CRC_A64);
	ASSERT_NE(CRC_ZERO_PAGE, CRC_A_PAGE);
	a = spawn(TENANT_A, zero_a, NULL);
	ASSERT_LT(0, a);
	b = spawn(TENANT_B, zero_b, NULL);
	ASSERT_LT(0, b);
	EXPECT_EQ(0, reap(a)) TH_LOG("A");
	EXPECT_EQ(0, reap(b)) TH_LOG("B");
	assert_checks(_metadata, 25 + 36);
}

/* the last "neuron_tenancy=GROUP,..." of /proc/cmdline, or NULL */
/* ==== throttle_flood ======================================================= */

#define FLOOD_LIMIT	"4 600000"	/* 4 events per 10 minutes: no refill here */
#define FLOOD_BURST	4
#define FLOOD_SINGLE	10	/* B's THROTTLE programs, one edge each */
#define FLOOD_INSNS	1024	/* THROTTLEs per flood program */
#define FLOOD_PROGS	64	/* flood programs at most */
#define VICTIM_RUNS	4
#define VICTIM_N	8	/* NOTIFYs per run = the queue's THRESHOLD */
#define RATELIMIT_PATH	"/sys/class/nnq/nnq0/event_ratelimit"

/* The number after @prefix on the line of sysfs @attr that starts with it. */
static int sysfs_line_u64(const char *attr, const char *prefix, unsigned long long *v)
{
	char buf[1024], *p;

	if (operator_sysfs_read(attr, buf, sizeof(buf)) < 0)
		return -errno;
	for (p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			return sscanf(p + strlen(prefix), "%llu", v) == 1 ? 0 : -EINVAL;
	return -ENOENT;
}

/* Waits until sysfs edge_counts says @n throttle edges were handled. */
static int throttle_edges_reach(unsigned long long n)
{
	uint64_t deadline = neuron_now_ms() + NEURON_WAIT_MS;
	unsigned long long v = 0;

	while (!sysfs_line_u64("edge_counts", "throttle ", &v) && v < n &&
	       neuron_now_ms() < deadline)
		usleep(1000);
	return v >= n ? 0 : -ETIMEDOUT;
}

static int ratelimit_write(const char *val)
{
	int fd = open(RATELIMIT_PATH, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

struct ev_tally {
	int notific, throttle, other, lost;
	int bad;		/* NOTIFIC of A or THROTTLE of B not as expected */
	struct neuron_event thr[FLOOD_SINGLE];
};

/*
 * Reads every queued event of @fd (non-blocking) into @t. A's NOTIFIC
 * events must be (core 0, THRESHOLD, queue EXPL_QUEUE), B's THROTTLE
 * events (core 1, cause 1 << 1); the first THROTTLE events are kept.
 */
static void ev_take(int fd, struct ev_tally *t)
{
	struct neuron_event ev[32];
	ssize_t got;

	while ((got = read(fd, ev, sizeof(ev))) > 0)
		for (size_t i = 0; i < (size_t)got / sizeof(ev[0]); i++) {
			t->lost += ev[i].lost;
			if (ev[i].edge == NEURON_EDGE_NOTIFIC) {
				t->notific++;
				t->bad += ev[i].core != 0 || ev[i].cause != 0x1 ||
					  ev[i].queues != 1u << EXPL_QUEUE;
			} else if (ev[i].edge == NEURON_EDGE_THROTTLE) {
				if (t->throttle < FLOOD_SINGLE)
					t->thr[t->throttle] = ev[i];
				t->throttle++;
				t->bad += ev[i].core != 1 || ev[i].cause != 0x2;
			} else {
				t->other++;
			}
		}
}

/* A, the victim: core 0, VICTIM_RUNS programs of one threshold edge each. */
static int flood_a(void *arg)
{
	struct neuron_nq_init init = { .core = 0, .queue = EXPL_QUEUE, .size = 4096,
				       .threshold = VICTIM_N };
	union neuron_isa_notification rec[VICTIM_N];
	struct neuron_emu_insn prog[VICTIM_N + 1];
	struct neuron_ring ring = { 0 };
	struct ev_tally t = { 0 };
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK), i, records = 0;

	(void)arg;
	for (i = 0; i < VICTIM_N; i++)
		prog[i] = neuron_insn(NEURON_OP_NOTIFY, HINT_A);
	prog[VICTIM_N] = neuron_insn(NEURON_OP_HALT, 0);
	chk(0, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init), "A: NQ_INIT with threshold 8");
	chk(0, neuron_ring_map(fd, &init, &ring), "A: map the ring");
	set_flag(&sh->a_ready);
	wait_flag(&sh->b_ready, 6 * NEURON_WAIT_MS);	/* B's flood began */
	chk(1, sh->b_ready, "A: B's flood began");
	for (i = 0; i < VICTIM_RUNS; i++) {
		uint64_t deadline = neuron_now_ms() + NEURON_WAIT_MS;

		/* all 8 written (the edge raised), then read: HEAD re-arms */
		if (neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, VICTIM_N + 1, 0) ||
		    neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS) !=
		    NEURON_ENGINE_IDLE ||
		    neuron_ring_read(&ring, rec, VICTIM_N, NEURON_WAIT_MS))
			break;
		records += VICTIM_N;
		/* this run's threshold event, before the next run */
		while (t.notific <= i && neuron_now_ms() < deadline) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			poll(&p, 1, 100);
			ev_take(fd, &t);
		}
	}
	chk(VICTIM_RUNS, i, "A: programs run");
	set_flag(&sh->killed);			/* A is done: B stops */
	wait_flag(&sh->attack_done, 6 * NEURON_WAIT_MS);
	usleep(200 * 1000);
	ev_take(fd, &t);
	chk(0, neuron_ring_pop(&ring, rec), "A: records beyond its own");
	chk(VICTIM_RUNS * VICTIM_N, records, "A: records read (exact)");
	chk(VICTIM_RUNS, t.notific, "A: NOTIFIC events (one threshold edge per run)");
	chk(0, t.throttle, "A: THROTTLE events of B's core seen by A");
	chk(0, t.other, "A: other events");
	chk(0, t.lost, "A: events lost");
	chk(0, t.bad, "A: NOTIFIC events not (core 0, THRESHOLD, queue 1)");
	wait_flag(&sh->parent_done, 4 * NEURON_WAIT_MS);
	neuron_ring_unmap(&ring);
	close(fd);
	return 0;
}

/* One THROTTLE program on @core, run to its end, its edge handled. */
static int throttle_once(int fd, __u32 core, unsigned long long edges)
{
	struct neuron_emu_insn one[2] = { neuron_insn(NEURON_OP_THROTTLE, 0),
					  neuron_insn(NEURON_OP_HALT, 0) };

	one[0].operand.arg.value = 3;			/* the level */
	if (neuron_submit(fd, core, NEURON_ENGINE_PE, one, 2, 0) ||
	    neuron_engine_wait(fd, core, NEURON_ENGINE_PE, NEURON_WAIT_MS) != NEURON_ENGINE_IDLE)
		return -EIO;
	return throttle_edges_reach(edges);
}

#define PREV_SINGLE	6	/* O's THROTTLE programs: 4 reported, 2 suppressed */

/*
 * O, core 1's previous owner: 6 THROTTLEs under the limit of 4 leave 2
 * suppressed edges whose count no event has carried yet; then O closes.
 * That count is O's: B, the next owner, must not hear of it.
 */
static int flood_prev(void *arg)
{
	unsigned long long e0 = 0, s0 = 0, s1 = 0;
	struct ev_tally t = { 0 };
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK), i;

	(void)arg;
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1u << 1, NULL), "O: CORE_ACQUIRE core 1");
	chk(0, sysfs_line_u64("edge_counts", "throttle ", &e0), "O: sysfs edge_counts throttle");
	chk(0, sysfs_line_u64("events_suppressed", "core1 throttle ", &s0),
	    "O: sysfs events_suppressed core1");
	for (i = 0; i < PREV_SINGLE; i++)
		if (throttle_once(fd, 1, e0 + i + 1))
			break;
	chk(PREV_SINGLE, i, "O: THROTTLE programs, each edge handled");
	usleep(100 * 1000);
	ev_take(fd, &t);
	sysfs_line_u64("events_suppressed", "core1 throttle ", &s1);
	chk(FLOOD_BURST, t.throttle, "O: THROTTLE events reported of 6 (burst 4)");
	chk(2, s1 - s0, "O: sysfs events_suppressed core1 throttle (6 - 4)");
	close(fd);
	return 0;
}

/* B, the attacker: core 1, THROTTLE one at a time, then floods of them. */
static int flood_b(void *arg)
{
	static struct neuron_emu_insn flood[FLOOD_INSNS + 1];
	struct neuron_emu_insn one[2];
	unsigned long long e0 = 0, s0 = 0, s1 = 0, f0 = 0, f1 = 0;
	struct ev_tally t = { 0 }, t2 = { 0 }, t3 = { 0 };
	int fd = neuron_open_flags(O_RDWR | O_CLOEXEC | O_NONBLOCK), i, progs;

	(void)arg;
	one[0] = neuron_insn(NEURON_OP_THROTTLE, 0);
	one[0].operand.arg.value = 3;			/* the level */
	one[1] = neuron_insn(NEURON_OP_HALT, 0);
	for (i = 0; i < FLOOD_INSNS; i++)
		flood[i] = one[0];
	flood[FLOOD_INSNS] = one[1];
	chk(-EACCES, ratelimit_write("256 1"), "B: write event_ratelimit");
	chk(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 1u << 1, NULL), "B: CORE_ACQUIRE core 1");
	chk(0, sysfs_line_u64("edge_counts", "throttle ", &e0), "B: sysfs edge_counts throttle");
	chk(0, sysfs_line_u64("events_suppressed", "core1 throttle ", &s0),
	    "B: sysfs events_suppressed core1");

	/* 10 THROTTLEs, each edge handled before the next: 4 reported, 6 not */
	for (i = 0; i < FLOOD_SINGLE; i++)
		if (throttle_once(fd, 1, e0 + i + 1))
			break;
	chk(FLOOD_SINGLE, i, "B: THROTTLE programs, each edge handled");
	usleep(100 * 1000);
	ev_take(fd, &t);
	sysfs_line_u64("events_suppressed", "core1 throttle ", &s1);
	chk(FLOOD_BURST, t.throttle, "B: THROTTLE events reported of 10 (burst 4)");
	chk(0, t.bad, "B: THROTTLE events not (core 1, cause 0x2)");
	chk(0, t.thr[0].suppressed + t.thr[1].suppressed + t.thr[2].suppressed +
	    t.thr[3].suppressed, "B: suppressed on the first 4 events (none of O's 2)");
	chk(3, t.thr[3].count - t.thr[0].count, "B: the 4 events' counts are consecutive");
	chk(6, s1 - s0, "B: sysfs events_suppressed core1 throttle (10 - 4)");
	chk(0, t.notific + t.other, "B: other events");

	/* root starts a new interval: the next event carries the 6 */
	step_set(0);
	chk(1, step_wait(1), "B: root rewrote event_ratelimit");
	if (throttle_once(fd, 1, e0 + FLOOD_SINGLE + 1))
		chk(0, -1, "B: the 11th THROTTLE");
	usleep(100 * 1000);
	ev_take(fd, &t2);
	chk(1, t2.throttle, "B: THROTTLE events after the new interval");
	chk(6, t2.thr[0].suppressed, "B: suppressed count on the next event reported");
	chk(1, t2.thr[0].core, "B: its core");
	chk(10, t2.thr[0].count - t.thr[0].count, "B: the 11th edge's count");

	/* the flood, until A has run all its programs */
	chk(0, sysfs_line_u64("edge_counts", "throttle ", &f0), "B: edge_counts before the flood");
	set_flag(&sh->b_ready);
	for (progs = 0; progs < FLOOD_PROGS && !__atomic_load_n(&sh->killed, __ATOMIC_ACQUIRE);
	     progs++)
		if (neuron_submit(fd, 1, NEURON_ENGINE_PE, flood, FLOOD_INSNS + 1, 0) ||
		    neuron_engine_wait(fd, 1, NEURON_ENGINE_PE, NEURON_WAIT_MS) !=
		    NEURON_ENGINE_IDLE)
			break;
	chk_ge(1, progs, "B: flood programs of 1024 THROTTLEs");
	usleep(200 * 1000);
	sysfs_line_u64("edge_counts", "throttle ", &f1);
	chk_ge(1, f1 - f0, "B: throttle edges of the flood");
	ev_take(fd, &t3);
	chk_le(FLOOD_BURST - 1, t3.throttle, "B: THROTTLE events reported in the flood");
	sh->stream_batches = progs;		/* figures for the parent */
	sh->attacks = f1 - f0;
	sh->stream_records = t3.throttle;
	chk(0, t3.bad, "B: flood events not (core 1, cause 0x2)");
	set_flag(&sh->attack_done);
	wait_flag(&sh->parent_done, 4 * NEURON_WAIT_MS);
	close(fd);
	return 0;
}

/*
 * Issue 24: a tenant flooding THROTTLE harms no one. B's THROTTLE events
 * go to B (the core's owner) and the watchers only, rate limited per core
 * (docs/decisions/0008-event-ratelimit.md); A, running programs with one
 * threshold edge each on core 0 meanwhile, gets exactly its own events
 * and records.
 */
TEST_F_TIMEOUT(ten, throttle_flood, 300)
{
	char saved[64];
	pid_t a, b;

	ASSERT_LT(0, neuron_sysfs_read("event_ratelimit", saved, sizeof(saved)));
	EXPECT_STREQ("16 1000\n", saved) TH_LOG("the default limit");
	EXPECT_EQ(-EINVAL, ratelimit_write("0 1000"));
	EXPECT_EQ(-EINVAL, ratelimit_write("257 1000"));
	EXPECT_EQ(-EINVAL, ratelimit_write("4 0"));
	EXPECT_EQ(-EINVAL, ratelimit_write("4 3600001"));
	EXPECT_EQ(-EINVAL, ratelimit_write("4"));
	ASSERT_EQ(0, ratelimit_write(FLOOD_LIMIT));
	/* core 1's previous owner leaves 2 suppressed edges behind */
	a = spawn(TENANT_O, flood_prev, NULL);
	ASSERT_LT(0, a);
	EXPECT_EQ(0, reap(a));
	ASSERT_EQ(0, ratelimit_write(FLOOD_LIMIT));	/* B's budget is whole */
	a = spawn(TENANT_A, flood_a, NULL);
	ASSERT_LT(0, a);
	wait_flag(&sh->a_ready, 2 * NEURON_WAIT_MS);
	b = spawn(TENANT_B, flood_b, NULL);
	ASSERT_LT(0, b);
	EXPECT_EQ(1, step_wait(0));
	EXPECT_EQ(0, ratelimit_write(FLOOD_LIMIT));	/* a new interval */
	step_set(1);
	wait_flag(&sh->attack_done, 12 * NEURON_WAIT_MS);
	set_flag(&sh->parent_done);
	EXPECT_EQ(0, reap(a));
	EXPECT_EQ(0, reap(b));
	EXPECT_EQ(0, ratelimit_write(saved));
	ksft_print_msg("tenancy: throttle_flood flood_programs=%llu throttle_edges=%llu events_to_B=%llu\n",
		       (unsigned long long)sh->stream_batches, (unsigned long long)sh->attacks,
		       (unsigned long long)sh->stream_records);
	assert_checks(_metadata, 37);
}

static char *cmdline_groups(void)
{
	static char buf[4096];
	char *p = NULL, *end;

	if (read_str("/proc/cmdline", buf, sizeof(buf)) < 0)
		return NULL;
	for (char *q = buf; (q = strstr(q, "neuron_tenancy=")); q++)
		p = q;
	if (!p)
		return NULL;
	p += strlen("neuron_tenancy=");
	end = strpbrk(p, " \n");
	if (end)
		*end = 0;
	return p;
}

/*
 * Keeps the tests (groups) of fixture "ten" named in @sel, in their order;
 * a name no test has is an error. The stock harness of linux-source-6.1
 * has no filter of its own; its run walks each fixture's tests by next.
 */
static int keep_tests(const char *const *sel, size_t nsel)
{
	struct __test_metadata *t, **link;

	for (size_t i = 0; i < nsel; i++) {
		bool known = false;

		for (struct __fixture_metadata *f = __fixture_list; f; f = f->next)
			for (t = f->tests; t; t = t->next)
				known |= !strcmp(t->name, sel[i]);
		if (!known) {
			fprintf(stderr, "tenancy_test: unknown group %s\n", sel[i]);
			return -1;
		}
	}
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next) {
		link = &f->tests;
		for (t = f->tests; t; t = t->next) {
			bool keep = false;

			for (size_t i = 0; i < nsel; i++)
				keep |= !strcmp(t->name, sel[i]);
			if (keep) {
				*link = t;
				link = &t->next;
			}
		}
		*link = NULL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *sel[16];
	size_t nsel = 0;
	char *words;

	for (int i = 1; i < argc && nsel < ARRAY_SIZE(sel); i++)
		sel[nsel++] = argv[i];
	if (argc == 1 && (words = cmdline_groups()))
		for (char *w = strtok(words, ","); w && nsel < ARRAY_SIZE(sel);
		     w = strtok(NULL, ","))
			sel[nsel++] = w;
	if (nsel && keep_tests(sel, nsel))
		return 2;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	return test_harness_run(argc, argv);
}
