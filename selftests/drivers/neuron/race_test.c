// SPDX-License-Identifier: GPL-2.0
/*
 * Race kselftests of the neuron driver: a client's close, munmap, ioctl,
 * read() and poll() made inside each window of the disable and enable
 * paths (docs/decisions/0011-reset-and-recovery.md#pause-points). The driver's
 * test-only pause point (module parameter pause_step) holds a reset or a
 * removal after one step while this test acts, so every window is hit on
 * every run, not by luck; the debug-kernel lane runs it under KASAN, lockdep,
 * kmemleak and DMA-API debugging behind the IOMMU, and the module's unload
 * afterwards finds every ring and block of device memory returned.
 *
 *   race_test [flr] [unbind] [uevent] [aer] [surprise] [uevent_aer]
 *             [uevent_removal] [uevent_aer_failed]
 *             [close] [munmap] [ioctl] [poll]
 *
 * Without arguments: the groups and actions of the kernel command line
 * ("neuron_race=flr,unbind,close,..."), else flr, unbind and uevent with
 * every action. The groups:
 *
 *   flr       a function reset through sysfs: steps 1-12, one reset per
 *             step and action
 *   unbind    the driver unbound through sysfs: steps 1-11, one unbind per
 *             step and action
 *   aer       a fatal uncorrectable error (MALF_TLP) injected from the
 *             QEMU monitor: error_detected() runs steps 1-11, slot_reset()
 *             step 12
 *   surprise  the device vanishes (reads all ones, qom-set) and is then
 *             unplugged (device_del): remove() runs steps 1-11; the device
 *             is plugged back (device_add) and probed after each window
 *   uevent_aer, uevent_removal
 *             what a NETLINK_KOBJECT_UEVENT listener sees, in order, of a
 *             fatal AER recovery and of a surprise removal
 *   uevent_aer_failed
 *             a fatal AER recovery the device does not come back from (it
 *             is set never to be READY after a reset): offline,
 *             then failed, never online; sysfs state "failed"
 *
 * aer, surprise and the uevent_ groups need the host side of
 * selftests/vm/lane-monitor.sh or lane-debug.sh: the test prints "NEURON-HOTPLUG: <monitor command> :END"
 * and the host sends the command to the QEMU monitor. Every trigger costs
 * seconds under TCG, so one window of these groups holds one client
 * process per action, each on its own core: with the emulated device's
 * cores (DEVICE_INFO num_cores, 2 by default) two actions share a window,
 * and every step is walked twice to cover every action.
 *
 * The client of every window holds what a release must undo: a core, a
 * host ring and a device ring (both mapped), an eventfd bound to a queue,
 * device memory, a program running (600 NOTIFYs into a 256-record ring:
 * it stalls), its event subscription and its status page.
 *
 * The step numbers are the table of
 * docs/decisions/0011-reset-and-recovery.md#pause-points, written here as
 * literals. The uevent group listens on a NETLINK_KOBJECT_UEVENT socket across
 * an FLR: a change uevent with NNQ_STATE=offline and NNQ_CAUSE=flr, then one
 * with NNQ_STATE=online (docs/decisions/0011-reset-and-recovery.md#uevents).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <linux/pci_regs.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"
#include "robust_lib.h"

#define RACE_GUARD_MS	20000	/* hang guard of a wait, not an assertion */
/* the same, for a trigger relayed by the host (pciehp alone waits 5 s) */
#define RACE_MONITOR_MS	60000
#define RACE_RING_BYTES	4096	/* 256 records */
#define RACE_PROG_LEN	600	/* more NOTIFYs than the ring holds: it stalls */
#define PARAM_DIR	"/sys/module/nnq/parameters/"
#define RACE_MEM	0x100000u	/* core 0's client's device memory (FIXED) */
#define RACE_MEM_STRIDE	0x10000u	/* core c's: RACE_MEM + c * this */
#define RACE_MAX_CLIENTS 4		/* one per action */

/* docs/decisions/0011-reset-and-recovery.md#pause-points */
static const struct {
	unsigned int step;
	const char *name;
	bool enable;	/* a step of the enable path: resets only */
} steps[] = {
	{ 1, "fenced" },
	{ 2, "engines_stopped" },
	{ 3, "owners_forgotten" },
	{ 4, "queues_stopped" },
	{ 5, "quiesced" },
	{ 6, "zapped" },
	{ 7, "bus_master_off" },
	{ 8, "vectors_freed" },
	{ 9, "rings_freed" },
	{ 10, "memory_forgotten" },
	{ 11, "reported" },
	{ 12, "enable_ready", true },
};

enum action { A_CLOSE, A_MUNMAP, A_IOCTL, A_POLL, A_COUNT };
static const char *const action_names[A_COUNT] = {
	"close", "munmap", "ioctl", "poll",
};
static bool action_on[A_COUNT] = { true, true, true, true };

struct client {
	unsigned int core;
	int fd;
	int efd;
	struct neuron_ring host;	/* queue 1 of @core, host memory */
	struct neuron_ring dev;		/* queue 2 of @core, device memory */
	const struct neuron_status_page *sp;
	bool mapped;
};

/*
 * The pause points exist only in a test build of nnq.ko (kernel/Kbuild
 * NEURON_TEST_HOOKS=1, what the tree's lanes load): under the packaged
 * (DKMS) module the tests that need them are skipped.
 */
#define NEED_PAUSE_POINTS()							\
	do {									\
		if (access(PARAM_DIR "pause_step", F_OK))			\
			SKIP(return, "nnq.ko is not a test build: no pause points"); \
	} while (0)

static int set_pause(unsigned int step)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", step);
	return write_str(PARAM_DIR "pause_step", v);
}

static unsigned int paused_at(void)
{
	char v[16];

	if (read_str(PARAM_DIR "paused_at", v, sizeof(v)) < 0)
		return 0;
	return (unsigned int)strtoul(v, NULL, 10);
}

/* Waits until a device waits at @step, at most @ms; 0 or -ETIMEDOUT. */
static int wait_paused(unsigned int step, unsigned int ms)
{
	uint64_t deadline = neuron_now_ms() + ms;

	while (neuron_now_ms() < deadline) {
		if (paused_at() == step)
			return 0;
		sleep_ms(2);
	}
	return -ETIMEDOUT;
}

/* A client on @core: its queues 1 and 2, RACE_MEM + @core * RACE_MEM_STRIDE. */
static int client_start(struct client *c, unsigned int core)
{
	static struct neuron_emu_insn prog[RACE_PROG_LEN];
	struct neuron_nq_init init;
	struct neuron_nq_eventfd bind = { .core = core, .queue = 1 };
	struct neuron_mem_alloc ma = {
		.size = PAGE, .offset = RACE_MEM + core * RACE_MEM_STRIDE,
		.flags = NEURON_MEM_F_FIXED,
	};

	memset(c, 0, sizeof(*c));
	c->core = core;
	c->fd = neuron_open();
	if (c->fd < 0)
		return -1;
	c->sp = neuron_status_map(c->fd);
	if (c->sp == MAP_FAILED)
		return -2;
	if (neuron_nq_create(c->fd, core, 1, RACE_RING_BYTES, 0, &init) ||
	    neuron_ring_map(c->fd, &init, &c->host))
		return -3;
	if (neuron_nq_create(c->fd, core, 2, RACE_RING_BYTES,
			     NEURON_NQ_F_DEVICE_MEM, &init) ||
	    neuron_ring_map(c->fd, &init, &c->dev))
		return -4;
	c->mapped = true;
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	bind.fd = c->efd;
	if (c->efd < 0 || neuron_ioctl(c->fd, NEURON_IOC_NQ_EVENTFD, &bind))
		return -5;
	if (neuron_ioctl(c->fd, NEURON_IOC_MEM_ALLOC, &ma))
		return -6;
	notify_prog(prog, RACE_PROG_LEN, 1);
	if (neuron_submit(c->fd, core, NEURON_ENGINE_PE, prog, RACE_PROG_LEN, 0))
		return -7;
	return 0;
}

static void client_unmap(struct client *c)
{
	if (!c->mapped)
		return;
	neuron_ring_unmap(&c->host);
	neuron_ring_unmap(&c->dev);
	c->mapped = false;
}

static void client_close(struct client *c)
{
	client_unmap(c);
	if (c->sp && c->sp != MAP_FAILED)
		neuron_status_unmap(c->sp);
	c->sp = NULL;
	if (c->efd >= 0)
		close(c->efd);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = c->efd = -1;
}

/*
 * The client's call inside the window. @err: what a call that needs the
 * device gets now (-EIO for a reset, -ENODEV for a removal).
 */
static void act(struct __test_metadata *_metadata, struct client *c,
		enum action a, int err, const char *where)
{
	struct neuron_nq_info info = { .core = c->core, .queue = 1 };
	struct neuron_mem_alloc ma = { .size = PAGE };
	struct neuron_cores cores = { .cores = 1u << c->core };
	struct neuron_event ev;
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	uint32_t v;

	switch (a) {
	case A_CLOSE:	/* what the status page tells a client to do */
		client_close(c);
		break;
	case A_MUNMAP:
		client_unmap(c);
		EXPECT_EQ(0, probe_read(&c->sp->state, &v)) TH_LOG("%s", where);
		EXPECT_NE(NEURON_STATUS_LIVE, v) TH_LOG("%s", where);
		break;
	case A_IOCTL:
		EXPECT_EQ(err, neuron_ioctl(c->fd, NEURON_IOC_NQ_INFO, &info))
			TH_LOG("%s: NQ_INFO", where);
		EXPECT_EQ(err, neuron_ioctl(c->fd, NEURON_IOC_MEM_ALLOC, &ma))
			TH_LOG("%s: MEM_ALLOC", where);
		EXPECT_EQ(err, neuron_ioctl(c->fd, NEURON_IOC_CORE_RELEASE, &cores))
			TH_LOG("%s: CORE_RELEASE", where);
		EXPECT_EQ(err, neuron_nq_destroy(c->fd, c->core, 2))
			TH_LOG("%s: NQ_DESTROY", where);
		break;
	case A_POLL:	/* what is queued can be read; nothing blocks for ever */
		EXPECT_LE(0, poll(&p, 1, 0)) TH_LOG("%s: poll", where);
		fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
		while (read(c->fd, &ev, sizeof(ev)) == sizeof(ev))
			;
		break;
	default:
		break;
	}
}

/*
 * Forks the process that triggers a reset or an unbind: it writes @val to
 * @path once the caller writes a byte to the returned pipe end. Forked
 * before the client exists: a child forked later would hold the client's
 * file and mappings, and the client's close would not be the last one (no
 * release() in the window). Returns the pid (the write end in *@go), or -1.
 */
static pid_t trigger_fork(const char *path, const char *val, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		char b;

		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(2);
		_exit(write_str(path, val) ? 1 : 0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/*
 * One window: a client set up, the device held after @step of a reset or
 * an unbind (@unbind), the client's @a, the device let go (and bound again
 * after an unbind), the client closed, then a fresh client's program runs.
 */
static void one_window(struct __test_metadata *_metadata, const char *bdf,
		       unsigned int step, const char *step_name, enum action a,
		       bool unbind)
{
	struct neuron_mem_alloc again = {
		.size = PAGE, .offset = RACE_MEM, .flags = NEURON_MEM_F_FIXED,
	};
	struct neuron_cores core0 = { .cores = 1 };
	char where[96], path[128];
	uint64_t t0 = neuron_now_ms();
	struct client c;
	int st = -1, fd, go;
	pid_t pid;

	snprintf(where, sizeof(where), "%s after step %u (%s), %s",
		 unbind ? "unbind" : "flr", step, step_name, action_names[a]);
	if (unbind)
		snprintf(path, sizeof(path), "/sys/bus/pci/drivers/nnq/unbind");
	else
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", bdf);
	pid = trigger_fork(path, unbind ? bdf : "1", &go);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, client_start(&c, 0)) TH_LOG("%s: client", where);
	ASSERT_EQ(0, set_pause(step));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	EXPECT_EQ(0, wait_paused(step, RACE_GUARD_MS))
		TH_LOG("%s: never paused", where);
	if (!unbind) {
		/* every step of an FLR lies between the offline and online uevents */
		char state[32] = "";

		EXPECT_LT(0, neuron_sysfs_read("state", state, sizeof(state)));
		EXPECT_STREQ("offline\n", state) TH_LOG("%s: sysfs state", where);
	}
	act(_metadata, &c, a, unbind ? -ENODEV : -EIO, where);
	ASSERT_EQ(0, set_pause(0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("%s: trigger", where);
	client_close(&c);
	if (unbind)
		ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/nnq/bind", bdf));
	fd = wait_device(RACE_GUARD_MS, 0);
	ASSERT_LE(0, fd) TH_LOG("%s: no device afterwards", where);
	close(fd);
	EXPECT_EQ(0, device_works(0, 0)) TH_LOG("%s: device afterwards", where);
	{
		char state[32] = "";

		EXPECT_LT(0, neuron_sysfs_read("state", state, sizeof(state)));
		EXPECT_STREQ("online\n", state) TH_LOG("%s: sysfs state afterwards", where);
	}
	/* what the client held came back: its memory and its core */
	fd = neuron_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &again))
		TH_LOG("%s: the client's memory was not returned", where);
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, &core0))
		TH_LOG("%s: the client's core was not freed", where);
	close(fd);
	ksft_print_msg("race: %s: %llu ms\n", where,
		       (unsigned long long)(neuron_now_ms() - t0));
}

static void walk(struct __test_metadata *_metadata, bool unbind)
{
	unsigned int windows = 0;
	int kmsg = kmsg_open();
	char bdf[32];

	ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
	ASSERT_EQ(0, set_pause(0));
	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		if (unbind && steps[s].enable)
			continue;	/* an unbind never enables */
		for (int a = 0; a < A_COUNT; a++) {
			if (!action_on[a])
				continue;
			one_window(_metadata, bdf, steps[s].step, steps[s].name,
				   a, unbind);
			windows++;
		}
	}
	set_pause(0);
	ksft_print_msg("race: %s: %u windows walked\n", unbind ? "unbind" : "flr",
		       windows);
	EXPECT_EQ(0, kmsg_bad_lines(kmsg));
	close(kmsg);
}

FIXTURE(flr) {};
FIXTURE_SETUP(flr) {}
FIXTURE_TEARDOWN(flr) { set_pause(0); }

TEST_F_TIMEOUT(flr, every_step_every_action, 1200)
{
	NEED_PAUSE_POINTS();
	walk(_metadata, false);
}

FIXTURE(unbind) {};
FIXTURE_SETUP(unbind) {}
FIXTURE_TEARDOWN(unbind) { set_pause(0); }

TEST_F_TIMEOUT(unbind, every_step_every_action, 1200)
{
	NEED_PAUSE_POINTS();
	walk(_metadata, true);
}

/*
 * remove() destroys the class device before its disable path stops the
 * hang scanner, and the scanner sends its uevents through the class
 * device (kernel/neuron_cdev.c, neuron_hang.c): an unbind held at the
 * pause point NEURON_PAUSE_CDEV_GONE (33: class device gone, disable path
 * not run) while core 0's engine hangs under the shortest timeout (100
 * ms). The scanner runs inside the window and reports the hang (the HANG
 * event reaches the owner) without touching the destroyed device: no
 * KASAN report in the debug lane, no bad kernel line anywhere.
 */
TEST_F_TIMEOUT(unbind, hang_scan_after_class_device_gone, 300)
{
	struct neuron_hang_timeout t = { .core = 0, .timeout_ms = 100 };
	struct neuron_emu_insn prog[3];
	struct neuron_event ev = { 0 };
	int kmsg = kmsg_open(), st = -1, fd, go;
	char bdf[32];
	pid_t pid;

	NEED_PAUSE_POINTS();
	ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
	pid = trigger_fork("/sys/bus/pci/drivers/nnq/unbind", bdf, &go);
	ASSERT_LE(0, pid);
	fd = neuron_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_HANG_TIMEOUT, &t));
	/* SEM_SET 201 = 0, WAIT_GE 201 >= 1 (nobody signals it), HALT */
	prog[0] = neuron_insn(NEURON_OP_SEM_SET, 0);
	prog[0].operand.arg.idx = 201;
	prog[1] = neuron_insn(NEURON_OP_WAIT_GE, 0);
	prog[1].operand.arg.idx = 201;
	prog[1].operand.arg.value = 1;
	prog[2] = neuron_insn(NEURON_OP_HALT, 0);
	ASSERT_EQ(0, set_pause(33));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	EXPECT_EQ(0, wait_paused(33, RACE_GUARD_MS));
	ASSERT_EQ(0, neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 3, 0));
	EXPECT_EQ(0, neuron_wait_edge(fd, NEURON_EDGE_HANG, RACE_GUARD_MS, &ev))
		TH_LOG("no hang reported inside the window");
	EXPECT_EQ(0, ev.core);
	ASSERT_EQ(0, set_pause(0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	close(fd);
	ASSERT_EQ(0, write_str("/sys/bus/pci/drivers/nnq/bind", bdf));
	fd = wait_device(RACE_GUARD_MS, 0);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(0, device_works(0, 0));
	EXPECT_EQ(0, kmsg_bad_lines(kmsg));
	close(kmsg);
}

/* ---- aer, surprise: triggers the host sends to the QEMU monitor ---------- */

/*
 * Sets SERR# Enable in the function's Command register. QEMU 7.2 sends an
 * uncorrectable AER message up only if this bit and the Device Control
 * reporting bit are both set (pcie_aer_msg_alldev(); the PCIe spec asks
 * for either): the firmware sets it at boot, Linux does not for a function
 * hot-added later (lifecycle_test's and this test's "surprise" plug one
 * back), and pci_restore_state() puts back the value saved at probe.
 */
static int enable_serr(const char *bdf)
{
	char path[128];
	uint16_t cmd;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &cmd, 2, PCI_COMMAND) != 2)
		ret = -EIO;
	cmd |= PCI_COMMAND_SERR;
	if (!ret && pwrite(fd, &cmd, 2, PCI_COMMAND) != 2)
		ret = -EIO;
	close(fd);
	return ret;
}

/* A client process: one action in the window, on a core of its own. */
struct racer {
	enum action a;
	unsigned int core;
	pid_t pid;
	int to;		/* parent -> racer: 'g' act now, 'f' close and exit */
	int from;	/* racer -> parent: 'r' ready, 'e' no client, 'd' done */
};

/*
 * The racer's process: sets its client up, acts when told, closes when
 * told. Its EXPECTs fail its own copy of @_metadata; the exit status
 * carries the verdict to the parent (0 passed).
 */
static void __attribute__((noreturn))
racer_main(struct __test_metadata *_metadata, struct racer *r, int err,
	   const char *where)
{
	struct client c;
	char b;
	int ret = client_start(&c, r->core);

	if (ret)
		ksft_print_msg("%s: client on core %u: step %d failed (errno %d)\n",
			       where, r->core, ret, errno);
	b = ret ? 'e' : 'r';
	if (write(r->from, &b, 1) != 1 || ret)
		_exit(3);
	if (read(r->to, &b, 1) != 1 || b != 'g')
		_exit(4);
	act(_metadata, &c, r->a, err, where);
	if (write(r->from, "d", 1) != 1)
		_exit(5);
	if (read(r->to, &b, 1) != 1 || b != 'f')
		_exit(6);
	client_close(&c);
	_exit(_metadata->passed ? 0 : 1);
}

/*
 * One window of a monitor trigger: a racer process per action in @acts
 * (@n of them, racer i on core i), the device held after @step of an AER
 * recovery or a surprise removal (@surprise), every racer's action, the
 * device let go, every racer closed; after a removal the device is plugged
 * back. Then a fresh client's program runs and every racer's memory and
 * core can be had again.
 */
static void monitor_window(struct __test_metadata *_metadata, unsigned int step,
			   const char *step_name, const enum action *acts,
			   unsigned int n, bool surprise)
{
	struct neuron_cores cores = { .cores = (1u << n) - 1 };
	struct racer r[RACE_MAX_CLIENTS];
	char where[128], names[48] = "";
	uint64_t t0 = neuron_now_ms();
	long long pe0 = surprise ? 0 : neuron_reset_count("pci_error");
	int st, fd, failed = 0;
	char b;

	for (unsigned int i = 0; i < n; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s%s", i ? "+" : "", action_names[acts[i]]);
	snprintf(where, sizeof(where), "%s after step %u (%s), %s",
		 surprise ? "surprise" : "aer", step, step_name, names);
	for (unsigned int i = 0; i < n; i++) {
		int to[2], from[2];

		ASSERT_EQ(0, pipe(to));
		ASSERT_EQ(0, pipe(from));
		r[i].a = acts[i];
		r[i].core = i;
		r[i].pid = fork();
		ASSERT_LE(0, r[i].pid);
		if (!r[i].pid) {
			/* no other racer's pipe: a dead parent is seen (EOF) */
			for (unsigned int j = 0; j < i; j++) {
				close(r[j].to);
				close(r[j].from);
			}
			close(to[1]);
			close(from[0]);
			alarm(3 * RACE_MONITOR_MS / 1000);	/* hang guard */
			r[i].to = to[0];
			r[i].from = from[1];
			racer_main(_metadata, &r[i], surprise ? -ENODEV : -EIO,
				   where);
		}
		close(to[0]);
		close(from[1]);
		r[i].to = to[1];
		r[i].from = from[0];
		ASSERT_EQ(1, read(r[i].from, &b, 1));
		ASSERT_EQ('r', b) TH_LOG("%s: client %u", where, i);
	}
	if (!surprise) {
		char bdf[32];

		ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
		ASSERT_EQ(0, enable_serr(bdf));
	}
	ASSERT_EQ(0, set_pause(step));
	if (surprise) {
		neuron_host_monitor("qom-set /machine/peripheral/neuron0 vanished true");
		neuron_host_monitor("device_del neuron0");
	} else {
		neuron_host_monitor("pcie_aer_inject_error neuron0 MALF_TLP");
	}
	EXPECT_EQ(0, wait_paused(step, RACE_MONITOR_MS))
		TH_LOG("%s: never paused", where);
	/* every racer acts inside the window, then the device goes on */
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(1, write(r[i].to, "g", 1));
	for (unsigned int i = 0; i < n; i++) {
		EXPECT_EQ(1, read(r[i].from, &b, 1)) TH_LOG("%s: racer %u", where, i);
		EXPECT_EQ('d', b) TH_LOG("%s: racer %u", where, i);
	}
	ASSERT_EQ(0, set_pause(0));
	for (unsigned int i = 0; i < n; i++) {
		EXPECT_EQ(1, write(r[i].to, "f", 1));
		ASSERT_EQ(r[i].pid, waitpid(r[i].pid, &st, 0));
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			ksft_print_msg("%s: racer %u (%s) status 0x%x\n", where,
				       i, action_names[r[i].a], st);
			failed++;
		}
		close(r[i].to);
		close(r[i].from);
	}
	EXPECT_EQ(0, failed) TH_LOG("%s: racers failed", where);
	if (surprise)
		neuron_host_monitor("device_add neuron-tpb,id=neuron0,bus=rp1");
	/* open() fails (-EIO, -ENODEV) until the enable path let calls in */
	fd = wait_device(RACE_MONITOR_MS, 0);
	ASSERT_LE(0, fd) TH_LOG("%s: no device afterwards", where);
	close(fd);
	if (!surprise)	/* one recovery, and no removal instead */
		EXPECT_EQ(pe0 + 1, neuron_reset_count("pci_error")) TH_LOG("%s", where);
	EXPECT_EQ(0, device_works(0, 0)) TH_LOG("%s: device afterwards", where);
	/* what the racers held came back: their memory and their cores */
	fd = neuron_open();
	ASSERT_LE(0, fd);
	for (unsigned int i = 0; i < n; i++) {
		struct neuron_mem_alloc again = {
			.size = PAGE, .offset = RACE_MEM + i * RACE_MEM_STRIDE,
			.flags = NEURON_MEM_F_FIXED,
		};

		EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_MEM_ALLOC, &again))
			TH_LOG("%s: client %u's memory was not returned", where, i);
	}
	EXPECT_EQ(0, neuron_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, &cores))
		TH_LOG("%s: the clients' cores were not freed", where);
	close(fd);
	ksft_print_msg("race: %s: %llu ms\n", where,
		       (unsigned long long)(neuron_now_ms() - t0));
}

/*
 * Every step of the path (steps 1-12 for AER, 1-11 for a removal) with
 * every chosen action: the actions in windows of up to num_cores racers.
 */
static void monitor_walk(struct __test_metadata *_metadata, bool surprise)
{
	struct neuron_device_info info;
	unsigned int windows = 0, pairs = 0, per, n = 0;
	enum action acts[A_COUNT];
	int kmsg = kmsg_open(), fd;

	for (int a = 0; a < A_COUNT; a++)
		if (action_on[a])
			acts[n++] = a;
	if (!surprise) {	/* the PCI core's AER service handles the error */
		char bdf[32], path[128];

		ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
		snprintf(path, sizeof(path),
			 "/sys/bus/pci/devices/%s/aer_dev_fatal", bdf);
		ASSERT_EQ(0, access(path, R_OK))
			TH_LOG("no %s: a kernel without CONFIG_PCIEAER never calls error_detected()",
			       path);
	}
	fd = neuron_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	close(fd);
	ASSERT_LE(1u, info.num_cores);
	per = info.num_cores < n ? info.num_cores : n;
	ASSERT_EQ(0, set_pause(0));
	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		if (surprise && steps[s].enable)
			continue;	/* a removal never enables */
		for (unsigned int first = 0; first < n; first += per) {
			unsigned int k = n - first < per ? n - first : per;

			monitor_window(_metadata, steps[s].step, steps[s].name,
				       acts + first, k, surprise);
			windows++;
			pairs += k;
		}
	}
	set_pause(0);
	ksft_print_msg("race: %s: %u windows walked, %u step-action pairs, %u racers a window\n",
		       surprise ? "surprise" : "aer", windows, pairs, per);
	EXPECT_EQ(0, kmsg_bad_lines(kmsg));
	close(kmsg);
}

FIXTURE(aer) {};
FIXTURE_SETUP(aer) {}
FIXTURE_TEARDOWN(aer) { set_pause(0); }

TEST_F_TIMEOUT(aer, every_step_every_action, 1800)
{
	NEED_PAUSE_POINTS();
	monitor_walk(_metadata, false);
}

FIXTURE(surprise) {};
FIXTURE_SETUP(surprise) {}
FIXTURE_TEARDOWN(surprise) { set_pause(0); }

TEST_F_TIMEOUT(surprise, every_step_every_action, 1800)
{
	NEED_PAUSE_POINTS();
	monitor_walk(_metadata, true);
}

/*
 * ---- uevents: what a listener sees of a reset
 * (docs/decisions/0011-reset-and-recovery.md#uevents)
 */

FIXTURE(uevent) {};
FIXTURE_SETUP(uevent) {}
FIXTURE_TEARDOWN(uevent) {}

TEST_F_TIMEOUT(uevent, flr_offline_then_online, 120)
{
	char bdf[32], path[128], keys[1024];
	int sock = neuron_uevent_socket();

	ASSERT_LE(0, sock);
	ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", bdf);
	ASSERT_EQ(0, write_str(path, "1"));
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_STATE=offline", RACE_GUARD_MS,
				 keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "ACTION=change\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_EVENT=offline\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_CAUSE=flr\n"));
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_STATE=online", RACE_GUARD_MS,
				 keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "NNQ_EVENT=online\n"));
	EXPECT_EQ(NULL, strstr(keys, "NNQ_CAUSE="));
	close(sock);
	EXPECT_EQ(0, device_works(0, 0));
}

/*
 * The uevents of a fatal AER recovery (group uevent_aer, with the host's
 * monitor relay): a MALF_TLP injected from the QEMU monitor takes the
 * device offline with NNQ_CAUSE=pci_error, slot_reset() brings it back
 * online, in that order.
 */
FIXTURE(uevent_aer) {};
FIXTURE_SETUP(uevent_aer) {}
FIXTURE_TEARDOWN(uevent_aer) {}

TEST_F_TIMEOUT(uevent_aer, offline_then_online, 300)
{
	char bdf[32], keys[1024];
	int sock = neuron_uevent_socket();

	ASSERT_LE(0, sock);
	ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
	ASSERT_EQ(0, enable_serr(bdf));
	neuron_host_monitor("pcie_aer_inject_error neuron0 MALF_TLP");
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_EVENT=offline",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "ACTION=change\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_STATE=offline\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_CAUSE=pci_error\n"));
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_EVENT=online",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "NNQ_STATE=online\n"));
	EXPECT_EQ(NULL, strstr(keys, "NNQ_CAUSE="));
	close(sock);
	EXPECT_EQ(0, device_works(0, 0));
}

/*
 * The uevents of a surprise removal (group uevent_removal, with the host's
 * monitor relay): the device vanishes and is unplugged; a listener sees
 * NNQ_EVENT=removing (NNQ_CAUSE=remove), then the kernel's own remove
 * uevent of nnq0; after device_add, its add uevent.
 */
FIXTURE(uevent_removal) {};
FIXTURE_SETUP(uevent_removal) {}
FIXTURE_TEARDOWN(uevent_removal) {}

TEST_F_TIMEOUT(uevent_removal, removing_remove_add, 300)
{
	char keys[1024];
	int sock = neuron_uevent_socket(), fd;

	ASSERT_LE(0, sock);
	neuron_host_monitor("qom-set /machine/peripheral/neuron0 vanished true");
	neuron_host_monitor("device_del neuron0");
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_EVENT=removing",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "ACTION=change\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_STATE=removing\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_CAUSE=remove\n"));
	ASSERT_EQ(0, neuron_wait_uevent(sock, "ACTION=remove",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	neuron_host_monitor("device_add neuron-tpb,id=neuron0,bus=rp1");
	ASSERT_EQ(0, neuron_wait_uevent(sock, "ACTION=add",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	close(sock);
	fd = wait_device(RACE_MONITOR_MS, 0);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(0, device_works(0, 0));
}

/*
 * A fatal AER recovery that gives up (group uevent_aer_failed, with the
 * host's monitor relay): the device is told never to be READY after a
 * reset (fault-never-ready, docs/device-model.md), then a fatal error is
 * injected; the link reset leaves it not ready, so slot_reset() times out
 * waiting for READY and returns PCI_ERS_RESULT_DISCONNECT. A listener sees offline
 * (pci_error), then failed (pci_error), and no online; sysfs state says
 * "failed" (docs/decisions/0011-reset-and-recovery.md#uevents). The device
 * comes back by removal and a new plug.
 */
FIXTURE(uevent_aer_failed) {};
FIXTURE_SETUP(uevent_aer_failed) {}
FIXTURE_TEARDOWN(uevent_aer_failed) {}

TEST_F_TIMEOUT(uevent_aer_failed, offline_then_failed, 300)
{
	char bdf[32], keys[1024], state[32];
	int sock = neuron_uevent_socket(), fd;

	ASSERT_LE(0, sock);
	ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
	ASSERT_EQ(0, enable_serr(bdf));
	/* the relay sends them in this order: the link reset finds it set */
	neuron_host_monitor("qom-set /machine/peripheral/neuron0 fault-never-ready true");
	neuron_host_monitor("pcie_aer_inject_error neuron0 MALF_TLP");
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_EVENT=offline",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "NNQ_CAUSE=pci_error\n"));
	ASSERT_EQ(0, neuron_wait_uevent(sock, "NNQ_EVENT=failed",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "NNQ_STATE=failed\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_CAUSE=pci_error\n"));
	EXPECT_LT(0, neuron_sysfs_read("state", state, sizeof(state)));
	EXPECT_STREQ("failed\n", state);
	fd = neuron_open();
	EXPECT_GT(0, fd);	/* offline until removal */
	if (fd >= 0)
		close(fd);

	/* back: unplugged and plugged again */
	neuron_host_monitor("device_del neuron0");
	ASSERT_EQ(0, neuron_wait_uevent(sock, "ACTION=remove",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	neuron_host_monitor("device_add neuron-tpb,id=neuron0,bus=rp1");
	ASSERT_EQ(0, neuron_wait_uevent(sock, "ACTION=add",
					RACE_MONITOR_MS, keys, sizeof(keys)));
	close(sock);
	fd = wait_device(RACE_MONITOR_MS, 0);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(0, device_works(0, 0));
}

/* the last "neuron_race=WORD,..." of /proc/cmdline, or NULL */
static char *cmdline_words(void)
{
	static char buf[4096];
	char *p = NULL, *end;

	if (read_str("/proc/cmdline", buf, sizeof(buf)) < 0)
		return NULL;
	for (char *q = buf; (q = strstr(q, "neuron_race=")); q++)
		p = q;
	if (!p)
		return NULL;
	p += strlen("neuron_race=");
	end = strpbrk(p, " \n");
	if (end)
		*end = 0;
	return p;
}

int main(int argc, char **argv)
{
	/* aer and surprise need the host's monitor relay: named only */
	static const char *const groups_all[] = { "flr", "unbind", "uevent" };
	const char *sel[8];
	bool some_action = false;
	size_t nsel = 0;
	char *words;

	for (int i = 1; i < argc && nsel < ARRAY_SIZE(sel); i++)
		sel[nsel++] = argv[i];
	if (argc == 1 && (words = cmdline_words()))
		for (char *w = strtok(words, ","); w && nsel < ARRAY_SIZE(sel);
		     w = strtok(NULL, ","))
			sel[nsel++] = w;
	/* action names among the words pick the actions */
	for (size_t i = 0; i < nsel; i++) {
		for (int a = 0; a < A_COUNT; a++) {
			if (strcmp(sel[i], action_names[a]))
				continue;
			if (!some_action)
				memset(action_on, 0, sizeof(action_on));
			some_action = true;
			action_on[a] = true;
			sel[i--] = sel[--nsel];
			break;
		}
	}
	for (size_t i = 0; i < nsel; i++) {
		if (strcmp(sel[i], "flr") && strcmp(sel[i], "unbind") &&
		    strcmp(sel[i], "uevent") && strcmp(sel[i], "aer") &&
		    strcmp(sel[i], "surprise") && strcmp(sel[i], "uevent_aer") &&
		    strcmp(sel[i], "uevent_removal") &&
		    strcmp(sel[i], "uevent_aer_failed")) {
			fprintf(stderr, "race_test: unknown word %s\n", sel[i]);
			return 2;
		}
	}
	if (!nsel)
		for (size_t g = 0; g < ARRAY_SIZE(groups_all); g++)
			sel[nsel++] = groups_all[g];
	probe_install();
	keep_groups(sel, nsel);
	return test_harness_run(argc, argv);
}
