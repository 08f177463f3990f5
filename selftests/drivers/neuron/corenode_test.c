// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of the per-core device nodes (issue 26,
 * docs/decisions/0017-core-nodes.md): beside /dev/nnq0 the driver makes
 * /dev/nnq0-core0 and /dev/nnq0-core1 (the VM's device has 2 cores), and a file
 * opened through a core node may name its own core only.
 *
 *   nodes.exist_with_sysfs	the nodes, their numbers (minor 64 + 15 * N + C),
 *				sysfs "core" and "device", DEVICE_INFO file_cores
 *   nodes.bind_unbind		the core nodes go with an unbind and come back
 *				with the bind; an open core file gets -ENODEV
 *   core_file.runs_own_core	acquire core 1 through /dev/nnq0-core1, make a
 *				queue, run a program: its record lands there
 *   core_file.other_core_eperm	every ioctl naming core 0 (or a mask with it),
 *				THROTTLE (device-wide), MEM_ALLOC while another
 *				file owns core 1, and mmap of core 0's queue:
 *				-EPERM; the ownership rules are /dev/nnq0's
 *   confine.private_dev_uid1000 uid 1000 in a mount namespace whose /dev (a
 *				tmpfs) holds only /dev/nnq0-core1: no other node,
 *				no mknod, core 0 -EPERM, a program on core 1 runs
 *   counters_root_only_uid1000	uid 1000 holding core 1 through
 *				/dev/nnq0-core1: every per-core counter file of
 *				/sys/class/nnq/nnq0 (12) is -EACCES, its own core's
 *				figures are in its fdinfo; root reads them all
 *				(docs/decisions/0005-tenancy.md#per-core-counters)
 *
 * Expected values are the UAPI's (include/uapi/linux/neuron.h "Core
 * nodes"), written here as literals.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sys/prctl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE0_NODE	"/dev/nnq0-core0"
#define CORE1_NODE	"/dev/nnq0-core1"
#define CORE2_NODE	"/dev/nnq0-core2"	/* the device has 2 cores: none */
#define CORE1_SYSFS	"/sys/class/nnq/nnq0-core1"
#define TENANT_UID	1000
#define TENANT_GID	1000
#define EXPLICIT_PE	0x06	/* notific_type of PE's EXPLICIT: 0x04 + 4 * 0 + 2 */

static int open_node(const char *path)
{
	struct neuron_event_size es = { .size = sizeof(struct neuron_event) };
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, NEURON_IOC_EVENT_SIZE, &es)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int cores_ioctl(int fd, unsigned long cmd, __u64 cores, __u64 *owned)
{
	struct neuron_cores c = { .cores = cores, .owned = 0xdead };
	int ret = neuron_ioctl(fd, cmd, &c);

	if (owned)
		*owned = c.owned;
	return ret;
}

/* NOP, NOTIFY(hint 3, ext 0x1234), NOP, HALT: one EXPLICIT record, pc 1. */
static void hello_program(struct neuron_emu_insn prog[4])
{
	prog[0] = neuron_insn(NEURON_OP_NOP, 0);
	prog[1] = neuron_insn(NEURON_OP_NOTIFY, 3);
	prog[1].operand.arg.debug_hint_extended = htole16(0x1234);
	prog[2] = neuron_insn(NEURON_OP_NOP, 0);
	prog[3] = neuron_insn(NEURON_OP_HALT, 0);
}

/* What running hello_program on @core through @fd gave. */
struct run_result {
	int nq_init, map, submit, wait, read;
	int type, pc, hint, ext;
};

/*
 * Queue 1 (EXPLICIT records by default) of @core, the program on its PE,
 * the one record read back; the queue destroyed again.
 */
static void run_hello(int fd, __u32 core, struct run_result *r)
{
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	struct neuron_emu_insn prog[4];
	union neuron_isa_notification rec;

	memset(r, 0, sizeof(*r));
	r->map = r->submit = r->wait = r->read = 1;	/* not reached */
	r->nq_init = neuron_nq_create(fd, core, 1, 4096, 0, &init);
	if (r->nq_init)
		return;
	r->map = neuron_ring_map(fd, &init, &ring);
	if (r->map)
		goto out;
	hello_program(prog);
	r->submit = neuron_submit(fd, core, NEURON_ENGINE_PE, prog, 4, 0);
	if (r->submit)
		goto out_unmap;
	r->wait = neuron_engine_wait(fd, core, NEURON_ENGINE_PE, NEURON_WAIT_MS);
	r->read = neuron_ring_read(&ring, &rec, 1, NEURON_WAIT_MS);
	if (!r->read) {
		r->type = neuron_rec_type(&rec);
		r->pc = (int)rec.explicit_notif.program_counter;
		r->hint = (int)rec.explicit_notif.debug_hint;
		r->ext = (int)rec.explicit_notif.debug_hint_extended;
	}
out_unmap:
	neuron_ring_unmap(&ring);
out:
	neuron_nq_destroy(fd, core, 1);
}

#define ASSERT_HELLO_RAN(r) do {					\
	EXPECT_EQ(0, (r).nq_init);					\
	EXPECT_EQ(0, (r).map);						\
	EXPECT_EQ(0, (r).submit);					\
	EXPECT_EQ(NEURON_ENGINE_IDLE, (r).wait);			\
	EXPECT_EQ(0, (r).read);						\
	EXPECT_EQ(EXPLICIT_PE, (r).type);				\
	EXPECT_EQ(1, (r).pc);						\
	EXPECT_EQ(3, (r).hint);						\
	EXPECT_EQ(0x1234, (r).ext);					\
} while (0)

/* ---- nodes ---------------------------------------------------------------- */

TEST(nodes_exist_with_sysfs)
{
	struct neuron_device_info info;
	struct stat whole, c0, c1, c2;
	char buf[256], want[32];
	ssize_t n;
	int fd;

	ASSERT_EQ(0, stat(NEURON_DEV, &whole));
	ASSERT_EQ(0, stat(CORE0_NODE, &c0));
	ASSERT_EQ(0, stat(CORE1_NODE, &c1));
	EXPECT_EQ(-1, stat(CORE2_NODE, &c2));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_TRUE(S_ISCHR(c0.st_mode));
	EXPECT_TRUE(S_ISCHR(c1.st_mode));
	/* one major; minors 0 (nnq0), 64 + 15 * 0 + core */
	EXPECT_EQ(major(whole.st_rdev), major(c1.st_rdev));
	EXPECT_EQ(0u, minor(whole.st_rdev));
	EXPECT_EQ(64u, minor(c0.st_rdev));
	EXPECT_EQ(65u, minor(c1.st_rdev));

	/* sysfs: the core, and the whole device it belongs to */
	ASSERT_LT(0, neuron_read_text(CORE1_SYSFS "/core", buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	ASSERT_LT(0, neuron_read_text("/sys/class/nnq/nnq0-core0/core", buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	n = readlink(CORE1_SYSFS "/device", buf, sizeof(buf) - 1);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	EXPECT_STREQ("nnq0", strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf);
	ASSERT_LT(0, neuron_read_text(CORE1_SYSFS "/dev", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%u:65\n", major(c1.st_rdev));
	EXPECT_STREQ(want, buf);

	/* DEVICE_INFO: the cores each file may name */
	fd = open_node(CORE1_NODE);
	ASSERT_LE(0, fd);
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(1ull << 10, info.capabilities & NEURON_CAP_CORE_NODES);
	EXPECT_EQ(0x2ull, info.file_cores);
	EXPECT_EQ(2u, info.num_cores);
	close(fd);
	fd = open_node(NEURON_DEV);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(0x3ull, info.file_cores);
	close(fd);
}

static int write_sysfs(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

TEST(nodes_bind_unbind)
{
	struct neuron_device_info info;
	char link[256], *bdf;
	ssize_t n;
	int fd, again = -1;

	n = readlink("/sys/class/nnq/nnq0/device", link, sizeof(link) - 1);
	ASSERT_LT(0, n);
	link[n] = '\0';
	bdf = strrchr(link, '/');
	bdf = bdf ? bdf + 1 : link;

	fd = open_node(CORE1_NODE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL));
	ASSERT_EQ(0, write_sysfs("/sys/bus/pci/drivers/nnq/unbind", bdf))
		TH_LOG("unbind %s", bdf);
	/* every node and class device of the device is gone */
	EXPECT_FALSE(exists(NEURON_DEV));
	EXPECT_FALSE(exists(CORE0_NODE));
	EXPECT_FALSE(exists(CORE1_NODE));
	EXPECT_FALSE(exists(CORE1_SYSFS));
	/* the open core file is a removed device's, as on /dev/nnq0 */
	EXPECT_EQ(-ENODEV, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(-ENODEV, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL));
	close(fd);

	ASSERT_EQ(0, write_sysfs("/sys/bus/pci/drivers/nnq/bind", bdf));
	for (int i = 0; i < 100 && again < 0; i++) {
		again = open_node(CORE1_NODE);
		if (again < 0)
			usleep(50 * 1000);
	}
	ASSERT_LE(0, again) TH_LOG("%s did not come back: %d", CORE1_NODE, again);
	EXPECT_TRUE(exists(NEURON_DEV));
	EXPECT_TRUE(exists(CORE0_NODE));
	ASSERT_EQ(0, neuron_ioctl(again, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(0x2ull, info.file_cores);
	close(again);
}

/* ---- a file of a core node -------------------------------------------------- */

TEST(core_file_runs_own_core)
{
	struct neuron_engine_status st;
	struct neuron_timestamp ts = { .core = 1 };
	struct neuron_mem_alloc ma = { .size = 4096 };
	struct neuron_mem_free mf;
	struct run_result r;
	__u64 owned = 0;
	int fd = open_node(CORE1_NODE);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(0ull, owned);
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, &owned));
	EXPECT_EQ(0x2ull, owned);
	run_hello(fd, 1, &r);
	ASSERT_HELLO_RAN(r);
	EXPECT_EQ(0, neuron_engine_status(fd, 1, NEURON_ENGINE_PE, &st));
	EXPECT_EQ(NEURON_ENGINE_IDLE, st.state);
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_TIMESTAMP, &ts));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &ma));
	mf = (struct neuron_mem_free){ .offset = ma.offset };
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_MEM_FREE, &mf));
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 0x2, &owned));
	EXPECT_EQ(0ull, owned);
	close(fd);
}

TEST(core_file_other_core_eperm)
{
	struct neuron_nq_init init = { .core = 0, .queue = 2, .size = 4096 };
	struct neuron_nq_init whole_q;
	struct neuron_nq_info nqi = { .core = 0, .queue = 2 };
	struct neuron_engine_status st;
	struct neuron_engine_id eid = { .core = 0, .engine = NEURON_ENGINE_PE };
	struct neuron_feature_flags ff = { .core = 0, .op = NEURON_FEATURE_OP_GET };
	struct neuron_evt_sem sem = { .core = 0, .index = 0, .op = NEURON_SEM_READ };
	struct neuron_timestamp ts = { .core = 0 };
	struct neuron_throttle thr = { .enable = 0 };
	struct neuron_core_grant grant = { .cores = 0x1, .op = NEURON_GRANT_OP_GRANT,
					   .uid = TENANT_UID };
	struct neuron_notify_trigger nt = { .core = 0 };
	struct neuron_nq_head head = { .core = 0, .queue = 2 };
	struct neuron_mem_alloc ma = { .size = 4096 };
	struct neuron_emu_insn prog[4];
	struct run_result r;
	void *p;
	__u64 owned;
	int fd = open_node(CORE1_NODE);
	int whole = open_node(NEURON_DEV);

	ASSERT_LE(0, fd);
	ASSERT_LE(0, whole);
	hello_program(prog);

	/* naming core 0, or a mask holding it */
	EXPECT_EQ(-EPERM, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x1, NULL));
	EXPECT_EQ(-EPERM, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x3, NULL));
	EXPECT_EQ(-EPERM, cores_ioctl(fd, NEURON_IOC_CORE_RELEASE, 0x1, NULL));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_NQ_INFO, &nqi));
	EXPECT_EQ(-EPERM, neuron_nq_destroy(fd, 0, 2));
	EXPECT_EQ(-EPERM, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 4, 0));
	EXPECT_EQ(-EPERM, neuron_engine_status(fd, 0, NEURON_ENGINE_PE, &st));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_ENGINE_RESET, &eid));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &sem));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_TIMESTAMP, &ts));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_CORE_GRANT, &grant));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_NOTIFY_TRIGGER, &nt));
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_NQ_HEAD, &head));
	EXPECT_EQ(-EPERM, neuron_nq_bind_eventfd(fd, 0, 2, -1));
	/* a core the device does not have is another core too */
	EXPECT_EQ(-EPERM, neuron_submit(fd, 7, NEURON_ENGINE_PE, prog, 4, 0));
	/* device-wide, even for root (CAP_SYS_ADMIN): /dev/nnq0 may */
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_THROTTLE, &thr));
	EXPECT_EQ(0, neuron_ioctl(whole, NEURON_IOC_THROTTLE, &thr));
	/* and the refusals took nothing */
	EXPECT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0, &owned));
	EXPECT_EQ(0ull, owned);

	/* core 0's queue, made by /dev/nnq0: the core file may not map it */
	ASSERT_EQ(0, neuron_nq_create(whole, 0, 2, 4096, 0, &whole_q));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)whole_q.ring_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)whole_q.doorbell_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, neuron_nq_destroy(whole, 0, 2));

	/* the owner rules are /dev/nnq0's: core 1 held by another file */
	ASSERT_EQ(0, cores_ioctl(whole, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL));
	EXPECT_EQ(-EBUSY, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL));
	EXPECT_EQ(-EPERM, neuron_submit(fd, 1, NEURON_ENGINE_PE, prog, 4, 0));
	/* memory is for the core's owner: none while another file owns it */
	EXPECT_EQ(-EPERM, neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &ma));
	ASSERT_EQ(0, cores_ioctl(whole, NEURON_IOC_CORE_RELEASE, 0x2, NULL));

	/* the core file's ownership ends with its release, as any file's */
	ASSERT_EQ(0, cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL));
	EXPECT_EQ(-EBUSY, cores_ioctl(whole, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL));
	close(fd);
	EXPECT_EQ(0, cores_ioctl(whole, NEURON_IOC_CORE_ACQUIRE, 0x2, &owned));
	/* core 0 too: its NQ_INIT above took it (implicit acquisition) */
	EXPECT_EQ(0x3ull, owned);
	/* the whole device's file still runs on both cores */
	run_hello(whole, 0, &r);
	ASSERT_HELLO_RAN(r);
	run_hello(whole, 1, &r);
	ASSERT_HELLO_RAN(r);
	close(whole);
}

/* ---- confinement: a private /dev with one core node ----------------------- */

/* What the confined process saw; -errno or the value, per step. */
struct confined {
	int setup;		/* unshare, mounts, mknod, setresuid: 0 */
	int open_whole;		/* open /dev/nnq0: -ENOENT */
	int open_core0;		/* open /dev/nnq0-core0: -ENOENT */
	int mknod_whole;	/* mknod /dev/nnq0 as uid 1000: -EPERM */
	int open_core1;		/* open /dev/nnq0-core1: 0 */
	int acquire0;		/* CORE_ACQUIRE core 0: -EPERM */
	int nq_init0;		/* NQ_INIT core 0: -EPERM */
	int submit0;		/* SUBMIT core 0: -EPERM */
	int acquire1;		/* CORE_ACQUIRE core 1: 0 */
	__u64 owned;		/* owned afterwards: 0x2 */
	__u64 file_cores;	/* DEVICE_INFO: 0x2 */
	uid_t uid;		/* 1000 */
	struct run_result run;	/* the program on core 1 */
};

static int confine_setup(dev_t core1)
{
	gid_t grp = TENANT_GID;

	if (unshare(CLONE_NEWNS))
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	/*
	 * world-writable (sticky), so the uid's mknod below is refused for
	 * want of CAP_MKNOD, not of write access to the directory
	 */
	if (mount("none", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=1777"))
		return -errno;
	/* the node as udev makes it: group neuron (here TENANT_GID), 0660 */
	if (mknod(CORE1_NODE, S_IFCHR | 0600, core1))
		return -errno;
	if (chown(CORE1_NODE, 0, TENANT_GID) || chmod(CORE1_NODE, 0660))
		return -errno;
	if (setgroups(1, &grp) || setresgid(TENANT_GID, TENANT_GID, TENANT_GID) ||
	    setresuid(TENANT_UID, TENANT_UID, TENANT_UID))
		return -errno;
	return 0;
}

static void confined_run(struct confined *c, dev_t core1, dev_t whole)
{
	struct neuron_nq_init init = { .core = 0, .queue = 1, .size = 4096 };
	struct neuron_device_info info;
	struct neuron_emu_insn prog[4];
	int fd;

	c->setup = confine_setup(core1);
	if (c->setup)
		return;
	c->uid = getuid();
	fd = open("/dev/nnq0", O_RDWR | O_CLOEXEC);
	c->open_whole = fd < 0 ? -errno : 0;
	fd = open(CORE0_NODE, O_RDWR | O_CLOEXEC);
	c->open_core0 = fd < 0 ? -errno : 0;
	c->mknod_whole = mknod("/dev/nnq0", S_IFCHR | 0600, whole) ? -errno : 0;

	fd = open_node(CORE1_NODE);
	c->open_core1 = fd < 0 ? fd : 0;
	if (fd < 0)
		return;
	c->acquire0 = cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x1, NULL);
	c->nq_init0 = neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init);
	hello_program(prog);
	c->submit0 = neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 4, 0);
	c->acquire1 = cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, &c->owned);
	if (!neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info))
		c->file_cores = info.file_cores;
	run_hello(fd, 1, &c->run);
	close(fd);
}

TEST(confine_private_dev_uid1000)
{
	struct confined *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct stat whole, core1;
	int status, holder;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, c);
	ASSERT_EQ(0, stat(NEURON_DEV, &whole));
	ASSERT_EQ(0, stat(CORE1_NODE, &core1));
	/* core 0 is free: the refusal is the node's, not another owner's */
	holder = open_node(NEURON_DEV);
	ASSERT_LE(0, holder);
	memset(c, 0x7f, sizeof(*c));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		confined_run(c, core1.st_rdev, whole.st_rdev);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	ASSERT_EQ(0, c->setup);
	EXPECT_EQ(1000u, c->uid);
	EXPECT_EQ(-ENOENT, c->open_whole);
	EXPECT_EQ(-ENOENT, c->open_core0);
	EXPECT_EQ(-EPERM, c->mknod_whole);
	ASSERT_EQ(0, c->open_core1);
	EXPECT_EQ(-EPERM, c->acquire0);
	EXPECT_EQ(-EPERM, c->nq_init0);
	EXPECT_EQ(-EPERM, c->submit0);
	EXPECT_EQ(0, c->acquire1);
	EXPECT_EQ(0x2ull, c->owned);
	EXPECT_EQ(0x2ull, c->file_cores);
	ASSERT_HELLO_RAN(c->run);
	TH_LOG("uid %u, /dev holding only %s: open /dev/nnq0 %d, mknod %d, "
	       "CORE_ACQUIRE core 0 %d, NQ_INIT core 0 %d, SUBMIT core 0 %d; "
	       "core 1: acquire %d, record type 0x%02x pc %d",
	       c->uid, CORE1_NODE, c->open_whole, c->mknod_whole, c->acquire0,
	       c->nq_init0, c->submit0, c->acquire1, c->run.type, c->run.pc);

	/* and core 0 was free all along: /dev/nnq0 takes it */
	EXPECT_EQ(0, cores_ioctl(holder, NEURON_IOC_CORE_ACQUIRE, 0x1, NULL));
	close(holder);
	munmap(c, sizeof(*c));
}

/* ---- per-core counters ------------------------------------------------- */

/* The attributes of nnq0 that carry a figure of each core: 0400 root. */
static const char * const per_core_counters[] = {
	"queue_enable", "axi_dropped", "intr_counts", "threshold_counts",
	"wrbuf_counts", "edge_counts", "intr_storms", "storm_masks",
	"events_suppressed", "programs_stopped", "hangs", "irq_holds",
};
#define N_COUNTERS	ARRAY_SIZE(per_core_counters)

/* open() of /sys/class/nnq/nnq0/@attr for reading: 0 or -errno. */
static int sysfs_open_err(const char *attr)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/sys/class/nnq/nnq0/%s", attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

struct counters_seen {
	int setup;			/* open, acquire, setresuid: 0 */
	int open_err[N_COUNTERS];	/* uid 1000: -EACCES each */
	int core_owners;		/* uid 1000: 0 (stays 0444) */
	int fdinfo_own;			/* "nnq-axi-dropped-c1:" there: 1 */
	int fdinfo_other;		/* "nnq-axi-dropped-c0:" there: 0 */
};

static void counters_as_tenant(struct counters_seen *c)
{
	gid_t grp = TENANT_GID;
	char path[64], buf[4096];
	int fd = open_node(CORE1_NODE);	/* handed over as root, like a runtime */
	unsigned int i;

	c->setup = fd < 0 ? fd : cores_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, 0x2, NULL);
	if (c->setup)
		return;
	if (setgroups(1, &grp) || setresgid(TENANT_GID, TENANT_GID, TENANT_GID) ||
	    setresuid(TENANT_UID, TENANT_UID, TENANT_UID) ||
	    prctl(PR_SET_DUMPABLE, 1)) {	/* /proc/self back to the uid */
		c->setup = -errno;
		return;
	}
	for (i = 0; i < N_COUNTERS; i++)
		c->open_err[i] = sysfs_open_err(per_core_counters[i]);
	c->core_owners = sysfs_open_err("core_owners");
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (neuron_read_text(path, buf, sizeof(buf)) > 0) {
		c->fdinfo_own = !!strstr(buf, "nnq-axi-dropped-c1:");
		c->fdinfo_other = !!strstr(buf, "nnq-axi-dropped-c0:");
	}
	close(fd);
}

TEST(counters_root_only_uid1000)
{
	struct counters_seen *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char buf[4096];
	unsigned int i;
	int status;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0x7f, sizeof(*c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		counters_as_tenant(c);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, c->setup);

	for (i = 0; i < N_COUNTERS; i++) {
		EXPECT_EQ(-EACCES, c->open_err[i])
			TH_LOG("uid 1000 opened %s", per_core_counters[i]);
		/* root (the monitors) still reads each */
		EXPECT_LT(0, neuron_sysfs_read(per_core_counters[i], buf, sizeof(buf)))
			TH_LOG("root could not read %s", per_core_counters[i]);
	}
	EXPECT_EQ(0, c->core_owners);
	EXPECT_EQ(1, c->fdinfo_own);
	EXPECT_EQ(0, c->fdinfo_other);
	munmap(c, sizeof(*c));
}

TEST_HARNESS_MAIN
