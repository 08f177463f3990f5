// SPDX-License-Identifier: GPL-2.0
/*
 * Race kselftests of the neuron driver: a client's close, munmap, ioctl,
 * read() and poll() made inside each window of the disable and enable
 * paths (docs/decisions.md#pause-points). The driver's test-only pause
 * point (module parameter pause_step) holds a reset or an unbind after one
 * step while this test acts, so every window is hit on every run, not by
 * luck; the debug-kernel lane runs it under KASAN, lockdep, kmemleak and
 * DMA-API debugging behind the IOMMU, and the module's unload afterwards
 * finds every ring and block of device memory returned.
 *
 *   race_test [flr] [unbind] [uevent] [close] [munmap] [ioctl] [poll]
 *
 * Without arguments: the groups and actions of the kernel command line
 * ("neuron_race=flr,unbind,close,..."), else both groups and every action.
 *
 * The client of every window holds what a release must undo: a core, a
 * host ring and a device ring (both mapped), an eventfd bound to a queue,
 * device memory, a program running (600 NOTIFYs into a 256-record ring:
 * it stalls), its event subscription and its status page.
 *
 * The step numbers are the table of docs/decisions.md#pause-points,
 * written here as literals. The uevent group listens on a
 * NETLINK_KOBJECT_UEVENT socket across an FLR: a change uevent with
 * NNQ_STATE=offline and NNQ_CAUSE=flr, then one with NNQ_STATE=online
 * (docs/decisions.md#uevents).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "neuron_lib.h"
#include "kselftest_harness.h"
#include "robust_lib.h"

#define RACE_GUARD_MS	20000	/* hang guard of a wait, not an assertion */
#define RACE_RING_BYTES	4096	/* 256 records */
#define RACE_PROG_LEN	600	/* more NOTIFYs than the ring holds: it stalls */
#define PARAM_DIR	"/sys/module/nnq/parameters/"
#define RACE_MEM	0x100000u	/* the client's device memory (FIXED) */

/* docs/decisions.md#pause-points */
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
	int fd;
	int efd;
	struct neuron_ring host;	/* core 0 queue 1, host memory */
	struct neuron_ring dev;		/* core 0 queue 2, device memory */
	const struct neuron_status_page *sp;
	bool mapped;
};

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

/* Waits until a device waits at @step; 0 or -ETIMEDOUT. */
static int wait_paused(unsigned int step)
{
	uint64_t deadline = neuron_now_ms() + RACE_GUARD_MS;

	while (neuron_now_ms() < deadline) {
		if (paused_at() == step)
			return 0;
		sleep_ms(2);
	}
	return -ETIMEDOUT;
}

static int client_start(struct client *c)
{
	static struct neuron_emu_insn prog[RACE_PROG_LEN];
	struct neuron_nq_init init;
	struct neuron_nq_eventfd bind = { .core = 0, .queue = 1 };
	struct neuron_mem_alloc ma = {
		.size = PAGE, .offset = RACE_MEM, .flags = NEURON_MEM_F_FIXED,
	};

	memset(c, 0, sizeof(*c));
	c->fd = neuron_open();
	if (c->fd < 0)
		return -1;
	c->sp = neuron_status_map(c->fd);
	if (c->sp == MAP_FAILED)
		return -2;
	if (neuron_nq_create(c->fd, 0, 1, RACE_RING_BYTES, 0, &init) ||
	    neuron_ring_map(c->fd, &init, &c->host))
		return -3;
	if (neuron_nq_create(c->fd, 0, 2, RACE_RING_BYTES,
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
	if (neuron_submit(c->fd, 0, NEURON_ENGINE_PE, prog, RACE_PROG_LEN, 0))
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
	struct neuron_nq_info info = { .core = 0, .queue = 1 };
	struct neuron_mem_alloc ma = { .size = PAGE };
	struct neuron_cores cores = { .cores = 1 };
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
		EXPECT_EQ(err, neuron_nq_destroy(c->fd, 0, 2))
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
	int st = -1, fd, go[2];
	pid_t pid;

	snprintf(where, sizeof(where), "%s after step %u (%s), %s",
		 unbind ? "unbind" : "flr", step, step_name, action_names[a]);
	if (unbind)
		snprintf(path, sizeof(path), "/sys/bus/pci/drivers/nnq/unbind");
	else
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", bdf);
	/*
	 * The trigger is forked before the client exists: a child forked
	 * later would hold the client's file and mappings, and the client's
	 * close would not be the last one (no release() in the window).
	 */
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		_exit(write_str(path, unbind ? bdf : "1") ? 1 : 0);
	}
	close(go[0]);
	ASSERT_EQ(0, client_start(&c)) TH_LOG("%s: client", where);
	ASSERT_EQ(0, set_pause(step));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	EXPECT_EQ(0, wait_paused(step)) TH_LOG("%s: never paused", where);
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
	walk(_metadata, false);
}

FIXTURE(unbind) {};
FIXTURE_SETUP(unbind) {}
FIXTURE_TEARDOWN(unbind) { set_pause(0); }

TEST_F_TIMEOUT(unbind, every_step_every_action, 1200)
{
	walk(_metadata, true);
}

/* ---- uevents: what a listener sees of a reset (docs/decisions.md#uevents) */

/*
 * The next uevent of /dev/nnq0's class device within @ms whose keys hold
 * @want (e.g. "NNQ_STATE=offline"), with every key into @keys ("\n"
 * separated); 0 or -ETIMEDOUT.
 */
static int wait_uevent(int sock, const char *want, unsigned int ms,
		       char *keys, size_t len)
{
	uint64_t deadline = neuron_now_ms() + ms;
	char buf[4096];

	while (neuron_now_ms() < deadline) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		ssize_t n;
		bool ours = false, match = false;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(sock, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = 0;
		keys[0] = 0;
		/* "ACTION@DEVPATH\0KEY=VALUE\0..." */
		for (char *k = buf; k < buf + n; k += strlen(k) + 1) {
			if (!strcmp(k, "DEVNAME=nnq0"))
				ours = true;
			if (!strcmp(k, want))
				match = true;
			strncat(keys, k, len - strlen(keys) - 2);
			strcat(keys, "\n");
		}
		if (ours && match)
			return 0;
	}
	return -ETIMEDOUT;
}

FIXTURE(uevent) {};
FIXTURE_SETUP(uevent) {}
FIXTURE_TEARDOWN(uevent) {}

TEST_F_TIMEOUT(uevent, flr_offline_then_online, 120)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	char bdf[32], path[128], keys[1024];
	int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			  NETLINK_KOBJECT_UEVENT);

	ASSERT_LE(0, sock);
	ASSERT_EQ(0, bind(sock, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, find_pci(bdf, sizeof(bdf)));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", bdf);
	ASSERT_EQ(0, write_str(path, "1"));
	ASSERT_EQ(0, wait_uevent(sock, "NNQ_STATE=offline", RACE_GUARD_MS,
				 keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_NE(NULL, strstr(keys, "ACTION=change\n"));
	EXPECT_NE(NULL, strstr(keys, "NNQ_CAUSE=flr\n"));
	ASSERT_EQ(0, wait_uevent(sock, "NNQ_STATE=online", RACE_GUARD_MS,
				 keys, sizeof(keys)));
	ksft_print_msg("uevent: %s", keys);
	EXPECT_EQ(NULL, strstr(keys, "NNQ_CAUSE="));
	close(sock);
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
		    strcmp(sel[i], "uevent")) {
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
