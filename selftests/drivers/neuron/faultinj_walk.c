// SPDX-License-Identifier: GPL-2.0
/*
 * faultinj_walk: every failure path of nnq.ko walked with the kernel's own
 * fault injection (Documentation/fault-injection/fault-injection.rst), in
 * the debug-kernel lane only (selftests/vm/lane-debug.sh; the kernel needs
 * CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_USERCOPY
 * and CONFIG_FAULT_INJECTION_DEBUG_FS, scripts/debug-kernel/debug.config).
 *
 * For each operation (probe through sysfs bind, open, every ioctl of
 * <linux/neuron.h> with valid arguments, mmap of every mappable object,
 * enable through the sysfs function reset) and N = 1, 2, 3, ...: the
 * operation runs with /proc/thread-self/fail-nth set to N, so the N-th
 * slab allocation, page allocation or copy_{from,to}_user of this task
 * fails, until an N is reached that the operation does not get to (fail-nth
 * reads back nonzero): its count of injectable calls. At each N the
 * operation must fail with an errno, or succeed where the failed call is
 * optional by design (counted as "tolerated", and the result checked: the
 * device or the mapping works); then the same operation without injection
 * must succeed. GFP_KERNEL allocations are failed too (ignore-gfp-wait 0),
 * order-0 pages too (min-order 0), and nothing is printed for an injected
 * failure (verbose 0). What the kernel's checkers say (kmemleak, KASAN,
 * lockdep, the kernel log) is judged by the lane afterwards.
 *
 * Prints TAP: one line per operation, "ok N faultinj.<op> (C calls
 * failed, T tolerated)", a "# faultinj: <op> ..." comment with the errno
 * counts, and the totals. Must run as root with the driver loaded.
 * Options: -c CAP (walk N = 1..CAP, default 1000), -s STRIDE (after CAP,
 * every STRIDE-th N to the end, starting at CAP + 1 + OFFSET % STRIDE with
 * -r OFFSET), -o OP (the operations whose name starts with OP;
 * repeatable), -n N (that N only, with the kernel's own report of the
 * failure, stack and all: for finding the failed call; the lane's log
 * check then fails), -v (print every N).
 * docs/robustness.md#fault-injection.
 */
#define _GNU_SOURCE
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>

#include "neuron_lib.h"

#define ksft_print_msg(...) printf("# " __VA_ARGS__)

#define DBGFS	"/sys/kernel/debug"
#define DRV	"/sys/bus/pci/drivers/" NEURON_DEV_NAME

static int nth_fd = -1;
static unsigned int trace_n;	/* -n: this N only, with the kernel's report of it */
static char bdf[64];
static int verbose;

/* ---- fail-nth ------------------------------------------------------------ */

/* the N-th injectable call of this task from now on fails */
static int arm(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	return pwrite(nth_fd, b, len, 0) == len ? 0 : -errno;
}

/*
 * Whether the armed failure was injected, and fail-nth back to 0. A read
 * of 0 means it was; a nonzero one that it was not. The read's own
 * copy_to_user() counts as a call: with 1 left it is the one that fails
 * (-EFAULT), which also means the operation did not take it. Writing "0"
 * leaves 0 whatever was left (its copy_from_user() may take the last one
 * and fail, which resets it too).
 */
static bool disarm(void)
{
	char b[16];
	ssize_t r = pread(nth_fd, b, sizeof(b) - 1, 0);
	bool injected = false;

	if (r > 0) {
		b[r] = 0;
		injected = strtoul(b, NULL, 10) == 0;
	}
	if (pwrite(nth_fd, "0", 1, 0) != 1 && errno != EFAULT)
		ksft_print_msg("fail-nth reset: %s\n", strerror(errno));
	return injected;
}

static int write_file(const char *path, const char *s)
{
	ssize_t len = (ssize_t)strlen(s), n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	n = n == len ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	return (int)n;
}

static int fault_knobs(bool on)
{
	static const char *const dirs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };
	char path[PATH_MAX];
	int ret = 0;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		/* probability 0: nothing fails but what fail-nth names */
		snprintf(path, sizeof(path), DBGFS "/%s/probability", dirs[i]);
		ret |= write_file(path, "0");
		snprintf(path, sizeof(path), DBGFS "/%s/verbose", dirs[i]);
		ret |= write_file(path, on && !trace_n ? "0" : "2");
		snprintf(path, sizeof(path), DBGFS "/%s/times", dirs[i]);
		ret |= write_file(path, on ? "-1" : "1");
	}
	ret |= write_file(DBGFS "/failslab/ignore-gfp-wait", on ? "N" : "Y");
	ret |= write_file(DBGFS "/fail_page_alloc/ignore-gfp-wait", on ? "N" : "Y");
	ret |= write_file(DBGFS "/fail_page_alloc/min-order", on ? "0" : "1");
	return ret;
}

/* ---- the device ---------------------------------------------------------- */

static int find_bdf(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/sys/class/" NEURON_DEV_NAME "/" NEURON_DEV_NAME "0/device",
			     path, sizeof(path) - 1);
	const char *b;

	if (n < 0)
		return -errno;
	path[n] = 0;
	b = strrchr(path, '/');
	snprintf(bdf, sizeof(bdf), "%.63s", b ? b + 1 : path);
	return 0;
}

static bool bound(void)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), DRV "/%s", bdf);
	return !lstat(path, &st);
}

/* opens and answers DEVICE_INFO within a few seconds: 0 or -errno */
static int device_answers(void)
{
	struct neuron_device_info info;
	int err = -ENODEV;

	for (int i = 0; i < 100; i++) {
		int fd = open(NEURON_DEV, O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			err = neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info);
			close(fd);
			if (!err)
				return 0;
		} else {
			err = -errno;
		}
		usleep(20000);
	}
	return err;
}

/* a fresh file, a host ring, a program and its 4 records: 0 or a step < 0 */
static int device_works(void)
{
	struct neuron_emu_insn prog[4];
	union neuron_isa_notification recs[4];
	struct neuron_ring ring = { 0 };
	struct neuron_nq_init init;
	int fd = neuron_open(), ret = -1;

	if (fd < 0)
		return -100;
	for (unsigned int i = 0; i < 4; i++)
		prog[i] = neuron_insn(NEURON_OP_NOTIFY, (uint16_t)(0x700 + i));
	if (neuron_nq_create(fd, 0, 1, 4096, 0, &init))
		ret = -101;
	else if (neuron_ring_map(fd, &init, &ring))
		ret = -102;
	else if (neuron_submit(fd, 0, NEURON_ENGINE_PE, prog, 4, 0))
		ret = -103;
	else if (neuron_ring_read(&ring, recs, 4, NEURON_WAIT_MS))
		ret = -104;
	else if (neuron_engine_wait(fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS) !=
		 NEURON_ENGINE_IDLE)
		ret = -105;
	else
		ret = 0;
	if (ring.slots)
		neuron_ring_unmap(&ring);
	close(fd);
	return ret;
}

/* ---- the operations ------------------------------------------------------ */

struct ctx {
	int fd;
	int efd;
	int sysfs_fd;
	struct neuron_nq_init init;
	__u64 mem_offset;
	void *map;
	size_t map_len;
	off_t map_off;
	int map_prot;
	__u32 nq_flags;
};

/*
 * One operation: @setup makes its preconditions without injection (0 or
 * -errno), @call is the operation (0 or -errno), @effect (optional, run
 * after the injection is off) checks that a call that returned 0 did its
 * work, @undo takes a successful call back so it can be made again, and
 * @teardown frees what @setup made. A call that took effect and then failed
 * to copy its result out (-EFAULT) may make the same call again fail for a
 * documented reason: @settled (optional) returns 0 if the state shows the
 * first call took effect, which @undo then takes back.
 */
struct op {
	const char *name;
	int (*setup)(struct ctx *c);
	int (*call)(struct ctx *c);
	int (*effect)(struct ctx *c);
	int (*undo)(struct ctx *c);
	void (*teardown)(struct ctx *c);
	int (*settled)(struct ctx *c);
	unsigned long arg;	/* the ioctl command of the generic ones */
	void *argp;		/* its argument, copied fresh for each call */
	size_t argsz;
};

static const struct op *cur;
static unsigned char argbuf[256];

static int setup_fd(struct ctx *c)
{
	c->fd = neuron_open();
	return c->fd < 0 ? -errno : 0;
}

static void teardown_fd(struct ctx *c)
{
	if (c->map)
		munmap(c->map, c->map_len);
	if (c->fd >= 0)
		close(c->fd);
	if (c->efd >= 0)
		close(c->efd);
	if (c->sysfs_fd >= 0)
		close(c->sysfs_fd);
	c->fd = c->efd = c->sysfs_fd = -1;
	c->map = NULL;
}

static int setup_queue(struct ctx *c)
{
	int ret = setup_fd(c);

	return ret ? ret : neuron_nq_create(c->fd, 0, 1, 4096, c->nq_flags, &c->init);
}

static int setup_owner(struct ctx *c)
{
	struct neuron_cores cores = { .cores = 1 };
	int ret = setup_fd(c);

	return ret ? ret : neuron_ioctl(c->fd, NEURON_IOC_CORE_ACQUIRE, &cores);
}

static int setup_memory(struct ctx *c)
{
	struct neuron_mem_alloc ma = { .size = 65536 };
	int ret = setup_fd(c);

	if (ret)
		return ret;
	ret = neuron_ioctl(c->fd, NEURON_IOC_MEM_ALLOC, &ma);
	c->mem_offset = ma.offset;
	return ret;
}

static int setup_eventfd(struct ctx *c)
{
	int ret = setup_queue(c);

	if (ret)
		return ret;
	c->efd = eventfd(0, EFD_CLOEXEC);
	return c->efd < 0 ? -errno : 0;
}

/* the generic ioctl: the op's argument, copied so no output feeds the next call */
static int call_ioctl(struct ctx *c)
{
	memcpy(argbuf, cur->argp, cur->argsz);
	if (cur->arg == NEURON_IOC_NQ_EVENTFD)
		((struct neuron_nq_eventfd *)argbuf)->fd = c->efd;
	return neuron_ioctl(c->fd, cur->arg, argbuf);
}

static int undo_none(struct ctx *c)
{
	return 0;
}

static int undo_nq_init(struct ctx *c)
{
	return neuron_nq_destroy(c->fd, 0, 1);
}

static int undo_nq_destroy(struct ctx *c)
{
	return neuron_nq_create(c->fd, 0, 1, 4096, c->nq_flags, &c->init);
}

static int undo_submit(struct ctx *c)
{
	return neuron_engine_wait(c->fd, 0, NEURON_ENGINE_PE, NEURON_WAIT_MS) ==
	       NEURON_ENGINE_IDLE ? 0 : -ETIMEDOUT;
}

static int undo_throttle(struct ctx *c)
{
	struct neuron_throttle t = { .enable = 0 };

	return neuron_ioctl(c->fd, NEURON_IOC_THROTTLE, &t);
}

static int undo_acquire(struct ctx *c)
{
	struct neuron_cores cores = { .cores = 1 };

	return neuron_ioctl(c->fd, NEURON_IOC_CORE_RELEASE, &cores);
}

static int undo_release(struct ctx *c)
{
	struct neuron_cores cores = { .cores = 1 };

	return neuron_ioctl(c->fd, NEURON_IOC_CORE_ACQUIRE, &cores);
}

/* the release happened: the file owns no core (cores 0 is a query) */
static int settled_release(struct ctx *c)
{
	struct neuron_cores cores = { .cores = 0 };
	int ret = neuron_ioctl(c->fd, NEURON_IOC_CORE_ACQUIRE, &cores);

	return ret ? ret : cores.owned ? -EPERM : 0;
}

static int undo_mem_alloc(struct ctx *c)
{
	struct neuron_mem_free mf = {
		.offset = ((struct neuron_mem_alloc *)argbuf)->offset,
	};

	return neuron_ioctl(c->fd, NEURON_IOC_MEM_FREE, &mf);
}

static int call_mem_free(struct ctx *c)
{
	struct neuron_mem_free mf = { .offset = c->mem_offset };

	return neuron_ioctl(c->fd, NEURON_IOC_MEM_FREE, &mf);
}

static int undo_mem_free(struct ctx *c)
{
	struct neuron_mem_alloc ma = { .size = 65536 };
	int ret = neuron_ioctl(c->fd, NEURON_IOC_MEM_ALLOC, &ma);

	c->mem_offset = ma.offset;
	return ret;
}

static int undo_trigger(struct ctx *c)
{
	struct neuron_notify_trigger t = {
		.core = 0, .source = NEURON_TRIGGER_AXI_EVT_SEM, .enable = 0,
	};

	return neuron_ioctl(c->fd, NEURON_IOC_NOTIFY_TRIGGER, &t);
}

static int undo_grant(struct ctx *c)
{
	struct neuron_core_grant g = { .cores = 1, .op = NEURON_GRANT_OP_REVOKE };

	return neuron_ioctl(c->fd, NEURON_IOC_CORE_GRANT, &g);
}

static int undo_eventfd(struct ctx *c)
{
	struct neuron_nq_eventfd e = { .core = 0, .queue = 1, .fd = -1 };

	return neuron_ioctl(c->fd, NEURON_IOC_NQ_EVENTFD, &e);
}

/* open(): the file; DEVICE_INFO on it afterwards */
static int setup_open(struct ctx *c)
{
	return 0;
}

static int call_open(struct ctx *c)
{
	c->fd = open(cur->argp ? (const char *)cur->argp : NEURON_DEV, O_RDWR | O_CLOEXEC);
	return c->fd < 0 ? -errno : 0;
}

static int effect_open(struct ctx *c)
{
	struct neuron_device_info info;

	return neuron_ioctl(c->fd, NEURON_IOC_DEVICE_INFO, &info);
}

static int undo_close(struct ctx *c)
{
	close(c->fd);
	c->fd = -1;
	return 0;
}

/* mmap() of a ring, a doorbell or the status page; one read through it after */
static int setup_map_ring(struct ctx *c)
{
	int ret = setup_queue(c);

	c->map_len = 4096;
	c->map_off = (off_t)c->init.ring_offset;
	c->map_prot = PROT_READ;
	return ret;
}

static int setup_map_device_ring(struct ctx *c)
{
	c->nq_flags = NEURON_NQ_F_DEVICE_MEM;
	return setup_map_ring(c);
}

static int setup_map_host_ring(struct ctx *c)
{
	return setup_map_ring(c);
}

static int setup_map_doorbell(struct ctx *c)
{
	int ret = setup_queue(c);

	c->map_len = 4096;
	c->map_off = (off_t)c->init.doorbell_offset;
	c->map_prot = PROT_READ | PROT_WRITE;
	return ret;
}

static int setup_map_status(struct ctx *c)
{
	int ret = setup_fd(c);

	c->map_len = (size_t)sysconf(_SC_PAGESIZE);
	c->map_off = (off_t)NEURON_STATUS_PAGE_OFFSET;
	c->map_prot = PROT_READ;
	return ret;
}

static int call_mmap(struct ctx *c)
{
	void *p = mmap(NULL, c->map_len, c->map_prot, MAP_SHARED, c->fd, c->map_off);

	if (p == MAP_FAILED)
		return -errno;
	c->map = p;
	return 0;
}

static int effect_mmap(struct ctx *c)
{
	volatile const uint8_t *p = c->map;

	(void)p[0];
	(void)p[c->map_len - 1];
	return 0;
}

static int undo_munmap(struct ctx *c)
{
	int ret = munmap(c->map, c->map_len) ? -errno : 0;

	c->map = NULL;
	return ret;
}

/* probe: sysfs bind (probe runs in the writer's task); unbind in between */
static int setup_probe(struct ctx *c)
{
	setup_open(c);
	if (bound() && write_file(DRV "/unbind", bdf))
		return -EBUSY;
	c->sysfs_fd = open(DRV "/bind", O_WRONLY | O_CLOEXEC);
	return c->sysfs_fd < 0 ? -errno : 0;
}

static int call_sysfs_write(struct ctx *c)
{
	const char *s = cur->argp ? (const char *)cur->argp : bdf;
	ssize_t len = (ssize_t)strlen(s), n = pwrite(c->sysfs_fd, s, len, 0);

	return n == len ? 0 : n < 0 ? -errno : -EIO;
}

static int effect_probe(struct ctx *c)
{
	return device_answers();
}

static int undo_probe(struct ctx *c)
{
	return write_file(DRV "/unbind", bdf);
}

/* enable: the function reset (FLR) through sysfs runs reset_done() in this task */
static int setup_reset(struct ctx *c)
{
	char path[PATH_MAX];

	setup_open(c);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/reset", bdf);
	c->sysfs_fd = open(path, O_WRONLY | O_CLOEXEC);
	return c->sysfs_fd < 0 ? -errno : 0;
}

/*
 * reset_done() cannot return an error: a failed enable leaves the device
 * offline (new files' calls fail, the kernel log says "did not come back
 * after the function reset"), which is the error this reports
 */
static int effect_reset(struct ctx *c)
{
	int ret = device_works();

	return ret ? -EIO : 0;
}

/* ---- the table ----------------------------------------------------------- */

static struct neuron_device_info a_info;
static struct neuron_nq_init a_nq_init = { .core = 0, .queue = 1, .size = 4096 };
static struct neuron_nq_init a_nq_init_dev = {
	.core = 0, .queue = 1, .size = 4096, .flags = NEURON_NQ_F_DEVICE_MEM,
};
static struct neuron_nq_id a_nq_id = { .core = 0, .queue = 1 };
static struct neuron_nq_info a_nq_info = { .core = 0, .queue = 1 };
static struct neuron_emu_insn a_prog[2];
static struct neuron_submit a_submit = { .core = 0, .engine = NEURON_ENGINE_PE, .count = 2 };
static struct neuron_engine_status a_status = { .core = 0, .engine = NEURON_ENGINE_PE };
static struct neuron_engine_id a_engine = { .core = 0, .engine = NEURON_ENGINE_PE };
static struct neuron_feature_flags a_flags = { .core = 0, .op = NEURON_FEATURE_OP_SET };
static struct neuron_nq_eventfd a_eventfd = { .core = 0, .queue = 1 };
static struct neuron_evt_sem a_sem = { .core = 0, .index = 3, .op = NEURON_SEM_SET, .value = 5 };
static struct neuron_throttle a_throttle = { .enable = 1 };
static struct neuron_cores a_cores = { .cores = 1 };
static struct neuron_mem_alloc a_mem = { .size = 65536 };
static struct neuron_event_size a_evsize = { .size = sizeof(struct neuron_event) };
static struct neuron_notify_trigger a_trigger = {
	.core = 0, .source = NEURON_TRIGGER_AXI_EVT_SEM, .enable = 1,
};
static struct neuron_nq_coalesce a_coalesce = {
	.core = 0, .queue = 1, .threshold = 8, .coalesce_ns = 100000,
};
static struct neuron_timestamp a_timestamp = { .core = 0 };
static struct neuron_core_grant a_grant = { .cores = 1, .op = NEURON_GRANT_OP_GRANT, .uid = 1000 };
static struct neuron_nq_head a_head = { .core = 0, .queue = 1, .head = 0 };
static struct neuron_nq_route a_route = {
	.core = 0, .op = NEURON_ROUTE_OP_SET, .route = NEURON_ROUTE_DEFAULT,
};
static struct neuron_hang_timeout a_hang = { .core = 0, .timeout_ms = 5000 };
static char core_node[] = NEURON_DEV "-core0";

#define IOCTL(nm, setup_fn, cmd, a, undo_fn) \
	{ .name = nm, .setup = setup_fn, .call = call_ioctl, .undo = undo_fn, \
	  .teardown = teardown_fd, .arg = cmd, .argp = &(a), .argsz = sizeof(a) }

static const struct op ops[] = {
	{ .name = "probe", .setup = setup_probe, .call = call_sysfs_write,
	  .effect = effect_probe, .undo = undo_probe, .teardown = teardown_fd },
	{ .name = "enable", .setup = setup_reset, .call = call_sysfs_write,
	  .effect = effect_reset, .undo = undo_none, .teardown = teardown_fd, .argp = "1" },
	{ .name = "open", .setup = setup_open, .call = call_open,
	  .effect = effect_open, .undo = undo_close, .teardown = teardown_fd },
	{ .name = "open_core_node", .setup = setup_open, .call = call_open,
	  .effect = effect_open, .undo = undo_close, .teardown = teardown_fd,
	  .argp = core_node },
	IOCTL("ioctl.DEVICE_INFO", setup_fd, NEURON_IOC_DEVICE_INFO, a_info, undo_none),
	IOCTL("ioctl.NQ_INIT", setup_fd, NEURON_IOC_NQ_INIT, a_nq_init, undo_nq_init),
	IOCTL("ioctl.NQ_INIT_device_ring", setup_fd, NEURON_IOC_NQ_INIT, a_nq_init_dev,
	      undo_nq_init),
	IOCTL("ioctl.NQ_DESTROY", setup_queue, NEURON_IOC_NQ_DESTROY, a_nq_id, undo_nq_destroy),
	IOCTL("ioctl.NQ_INFO", setup_queue, NEURON_IOC_NQ_INFO, a_nq_info, undo_none),
	IOCTL("ioctl.SUBMIT", setup_queue, NEURON_IOC_SUBMIT, a_submit, undo_submit),
	IOCTL("ioctl.ENGINE_STATUS", setup_fd, NEURON_IOC_ENGINE_STATUS, a_status, undo_none),
	IOCTL("ioctl.ENGINE_RESET", setup_fd, NEURON_IOC_ENGINE_RESET, a_engine, undo_none),
	IOCTL("ioctl.FEATURE_FLAGS", setup_fd, NEURON_IOC_FEATURE_FLAGS, a_flags, undo_none),
	IOCTL("ioctl.NQ_EVENTFD", setup_eventfd, NEURON_IOC_NQ_EVENTFD, a_eventfd, undo_eventfd),
	IOCTL("ioctl.EVT_SEM", setup_fd, NEURON_IOC_EVT_SEM, a_sem, undo_none),
	IOCTL("ioctl.THROTTLE", setup_fd, NEURON_IOC_THROTTLE, a_throttle, undo_throttle),
	IOCTL("ioctl.CORE_ACQUIRE", setup_fd, NEURON_IOC_CORE_ACQUIRE, a_cores, undo_acquire),
	{ .name = "ioctl.CORE_RELEASE", .setup = setup_owner, .call = call_ioctl,
	  .undo = undo_release, .settled = settled_release, .teardown = teardown_fd,
	  .arg = NEURON_IOC_CORE_RELEASE, .argp = &a_cores, .argsz = sizeof(a_cores) },
	IOCTL("ioctl.MEM_ALLOC", setup_fd, NEURON_IOC_MEM_ALLOC, a_mem, undo_mem_alloc),
	{ .name = "ioctl.MEM_FREE", .setup = setup_memory, .call = call_mem_free,
	  .undo = undo_mem_free, .teardown = teardown_fd },
	IOCTL("ioctl.EVENT_SIZE", setup_fd, NEURON_IOC_EVENT_SIZE, a_evsize, undo_none),
	IOCTL("ioctl.NOTIFY_TRIGGER", setup_fd, NEURON_IOC_NOTIFY_TRIGGER, a_trigger, undo_trigger),
	IOCTL("ioctl.NQ_COALESCE", setup_queue, NEURON_IOC_NQ_COALESCE, a_coalesce, undo_none),
	IOCTL("ioctl.TIMESTAMP", setup_fd, NEURON_IOC_TIMESTAMP, a_timestamp, undo_none),
	IOCTL("ioctl.CORE_GRANT", setup_owner, NEURON_IOC_CORE_GRANT, a_grant, undo_grant),
	IOCTL("ioctl.NQ_HEAD", setup_queue, NEURON_IOC_NQ_HEAD, a_head, undo_none),
	IOCTL("ioctl.NQ_ROUTE", setup_fd, NEURON_IOC_NQ_ROUTE, a_route, undo_none),
	IOCTL("ioctl.HANG_TIMEOUT", setup_fd, NEURON_IOC_HANG_TIMEOUT, a_hang, undo_none),
	{ .name = "mmap.host_ring", .setup = setup_map_host_ring, .call = call_mmap,
	  .effect = effect_mmap, .undo = undo_munmap, .teardown = teardown_fd },
	{ .name = "mmap.device_ring", .setup = setup_map_device_ring, .call = call_mmap,
	  .effect = effect_mmap, .undo = undo_munmap, .teardown = teardown_fd },
	{ .name = "mmap.doorbell", .setup = setup_map_doorbell, .call = call_mmap,
	  .effect = effect_mmap, .undo = undo_munmap, .teardown = teardown_fd },
	{ .name = "mmap.status_page", .setup = setup_map_status, .call = call_mmap,
	  .effect = effect_mmap, .undo = undo_munmap, .teardown = teardown_fd },
};

/* ---- the walk ------------------------------------------------------------ */

struct tally {
	unsigned int calls;	/* injectable calls of the operation: each failed once */
	unsigned int failed;	/* of them, the operation returned an error */
	unsigned int tolerated;	/* it succeeded (and did its work) anyway */
	unsigned int settled;	/* it took effect, only its result was not copied out */
	unsigned int bad;	/* a broken rule */
	unsigned int errs[135];	/* errno counts */
	unsigned int tol_n[16];	/* the first N that were tolerated */
	unsigned int last;	/* the last N injected */
	unsigned int end;	/* the first N the operation did not reach */
	bool capped;		/* stopped at the cap, end unknown */
	bool sampled;		/* every stride-th N after the cap */
};

static int nops_total, calls_total, bad_total;

static void bad(struct tally *t, unsigned int n, const char *what, int err)
{
	t->bad++;
	ksft_print_msg("%s: N=%u: %s (%d %s)\n", cur->name, n, what, err,
		       err < 0 ? strerror(-err) : "");
}

static unsigned int stride, offset;

/*
 * The N after @n: every N up to @cap, then (-s) every stride-th one from
 * cap + 1 + offset on; 0 when the walk stops there (or after one N with -n).
 */
static unsigned int next_n(unsigned int n, unsigned int cap)
{
	if (trace_n)
		return 0;
	if (n < cap)
		return n + 1;
	if (!stride)
		return 0;
	return n == cap ? cap + 1 + offset % stride : n + stride;
}

static void walk(const struct op *op, unsigned int cap, struct tally *t)
{
	struct ctx c;

	cur = op;
	memset(t, 0, sizeof(*t));
	for (unsigned int n = trace_n ? trace_n : 1;; n = next_n(n, cap)) {
		bool injected;
		int ret;

		if (!n) {
			t->capped = true;
			break;
		}
		memset(&c, 0, sizeof(c));
		c.fd = c.efd = c.sysfs_fd = -1;
		ret = op->setup(&c);
		if (ret) {
			bad(t, n, "setup without injection failed", ret);
			op->teardown(&c);
			break;
		}
		if (arm(n)) {
			bad(t, n, "cannot arm fail-nth", -errno);
			op->teardown(&c);
			break;
		}
		ret = op->call(&c);
		injected = disarm();
		if (ret == 0 && op->effect)
			ret = op->effect(&c);
		if (!injected) {
			/* the operation made fewer than n injectable calls: done */
			t->end = n;
			t->sampled = n > cap + 1;
			if (ret)
				bad(t, n, "fails without injection", ret);
			else if (op->undo(&c))
				bad(t, n, "undo failed", -errno);
			op->teardown(&c);
			break;
		}
		t->calls++;
		t->last = n;
		if (t->calls % 100 == 0)
			ksft_print_msg("%s: at N=%u, %u calls failed\n", op->name, n, t->calls);
		if (ret == 0) {
			if (t->tolerated < sizeof(t->tol_n) / sizeof(t->tol_n[0]))
				t->tol_n[t->tolerated] = n;
			t->tolerated++;
			if (verbose)
				ksft_print_msg("%s: N=%u tolerated\n", op->name, n);
			ret = op->undo(&c);
			if (ret) {
				bad(t, n, "undo after a tolerated failure", ret);
				op->teardown(&c);
				continue;
			}
		} else {
			t->failed++;
			if (-ret > 0 && -ret < (int)(sizeof(t->errs) / sizeof(t->errs[0])))
				t->errs[-ret]++;
			if (verbose)
				ksft_print_msg("%s: N=%u %s\n", op->name, n, strerror(-ret));
		}
		/* the next call works */
		ret = op->call(&c);
		if (ret == 0 && op->effect)
			ret = op->effect(&c);
		if (ret && op->settled && !op->settled(&c) && !op->undo(&c)) {
			t->settled++;
			ret = op->call(&c);
		}
		if (ret)
			bad(t, n, "the next call without injection failed", ret);
		else if ((ret = op->undo(&c)))
			bad(t, n, "undo of the next call failed", ret);
		op->teardown(&c);
	}
}

int main(int argc, char **argv)
{
	const char *only[64];
	unsigned int cap = 1000, nonly = 0, num = 0;
	unsigned int calls_all = 0, tol_all = 0;
	int opt, ret;

	while ((opt = getopt(argc, argv, "c:s:r:n:o:v")) != -1) {
		switch (opt) {
		case 'c':
			cap = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			if (nonly < 64)
				only[nonly++] = optarg;
			break;
		case 's':
			stride = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			offset = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			trace_n = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-c CAP [-s STRIDE [-r OFFSET]]] [-n N] [-o OP]... [-v]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	a_submit.insns = (__u64)(uintptr_t)a_prog;
	a_prog[0] = neuron_insn(NEURON_OP_NOTIFY, 0x11);
	a_prog[1] = neuron_insn(NEURON_OP_NOTIFY, 0x12);

	if (find_bdf() || fault_knobs(true)) {
		printf("not ok 1 faultinj.setup # no %s0 or no fault-injection debugfs (%s)\n",
		       NEURON_DEV_NAME, DBGFS);
		return 1;
	}
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		printf("not ok 1 faultinj.setup # /proc/thread-self/fail-nth: %s\n",
		       strerror(errno));
		return 1;
	}
	/* no page fault of this task's own memory while a failure is armed */
	if (mlockall(MCL_CURRENT))
		ksft_print_msg("mlockall: %s\n", strerror(errno));
	ksft_print_msg("function %s, cap %u injections per operation\n", bdf, cap);

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct op *op = &ops[i];
		struct tally t;
		char errs[512] = "", how[96] = "";
		size_t len = 0;
		uint64_t t0;
		int works;
		bool sel = nonly == 0;

		for (unsigned int k = 0; k < nonly; k++)
			sel |= !strncmp(op->name, only[k], strlen(only[k]));
		if (!sel)
			continue;
		t0 = neuron_now_ms();
		walk(op, cap, &t);
		/* whatever happened, the device is bound and works afterwards */
		if (!bound())
			write_file(DRV "/bind", bdf);
		works = device_answers();
		if (!works)
			works = device_works();
		if (works) {
			ksft_print_msg("%s: the device does not work after the walk (%d)\n",
				       op->name, works);
			t.bad++;
		}
		for (unsigned int e = 1; e < sizeof(t.errs) / sizeof(t.errs[0]); e++)
			if (t.errs[e] && len < sizeof(errs) - 32)
				len += snprintf(errs + len, sizeof(errs) - len, " %s=%u",
						strerrorname_np(e) ? strerrorname_np(e) : "?",
						t.errs[e]);
		if (t.tolerated) {
			len += snprintf(errs + len, sizeof(errs) - len, "; tolerated at N=");
			for (unsigned int k = 0; k < t.tolerated && k < 16 && len < sizeof(errs) - 8; k++)
				len += snprintf(errs + len, sizeof(errs) - len, "%s%u",
						k ? "," : "", t.tol_n[k]);
		}
		if (t.settled)
			len += snprintf(errs + len, sizeof(errs) - len,
					"; took effect before its copy-out failed: %u", t.settled);
		if (t.sampled)
			snprintf(how, sizeof(how),
				 " (N=1..%u, then every %u-th from %u: %u to %u sites)",
				 cap, stride, cap + 1 + offset % stride, t.last, t.end - 1);
		else if (t.capped)
			snprintf(how, sizeof(how), " (capped at N=%u)", cap);
		printf("# faultinj: %s calls=%u failed=%u tolerated=%u%s errors:%s bad=%u (%llu ms)\n",
		       op->name, t.calls, t.failed, t.tolerated, how,
		       len ? errs : " none", t.bad,
		       (unsigned long long)(neuron_now_ms() - t0));
		printf("%sok %u faultinj.%s (%u calls failed, %u tolerated)\n",
		       t.bad || t.calls == 0 ? "not " : "", ++num, op->name, t.calls,
		       t.tolerated);
		nops_total++;
		calls_all += t.calls;
		tol_all += t.tolerated;
		bad_total += t.bad;
		calls_total = calls_all;
	}
	ret = fault_knobs(false);
	printf("# faultinj: total: %d operations, %u calls failed (%u tolerated), %d broken rules\n",
	       nops_total, calls_all, tol_all, bad_total);
	printf("%sok %u faultinj.knobs_restored\n", ret ? "not " : "", ++num);
	return bad_total || ret ? 1 : 0;
}
