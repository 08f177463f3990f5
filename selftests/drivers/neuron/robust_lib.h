/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by robust_test.c and lifecycle_test.c: sysfs and PCI
 * lookups, waiting for /dev/nnq0, the kernel log, SIGBUS probes, and
 * "the device works" (a fresh file, a queue, a program, its records).
 * Include after neuron_lib.h and kselftest_harness.h.
 */
#ifndef NEURON_ROBUST_LIB_H
#define NEURON_ROBUST_LIB_H

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <grp.h>
#include <sys/stat.h>

#define BIT(n)		(1u << (n))
#define PAGE		4096u
#define ROBUST_GUARD_MS	60000	/* hang guard of a wait, not an assertion */

/* ---- small helpers ------------------------------------------------------- */

static inline struct neuron_emu_insn notify_insn(uint16_t seq)
{
	struct neuron_emu_insn in = neuron_insn(NEURON_OP_NOTIFY, 0);

	in.operand.arg.debug_hint_extended = htole16(seq);
	return in;
}

static inline void notify_prog(struct neuron_emu_insn *prog, unsigned int n,
			uint16_t first)
{
	for (unsigned int i = 0; i < n; i++)
		prog[i] = notify_insn((uint16_t)(first + i));
}

/* The documented cookie encoding (kernel/neuron_mmap.c), in bytes. */
static inline uint64_t cookie(unsigned int type, unsigned int core, unsigned int queue)
{
	return (((uint64_t)type << 24) | (core << 16) | (queue << 8)) * PAGE;
}

static inline int write_str(const char *path, const char *s)
{
	ssize_t n, len = (ssize_t)strlen(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n != len) {
		int err = n < 0 ? -errno : -EIO;

		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

static inline int read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return (int)n;
}

static inline void sleep_ms(unsigned int ms)
{
	usleep(ms * 1000);
}

/* 0 if the path exists */
static inline bool exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* xorshift64*: reproducible from the printed seed */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* ---- the PCI function ---------------------------------------------------- */

/* BDF of the neuron-tpb function into @bdf ("0000:01:00.0"), or -ENOENT. */
static inline int find_pci(char *bdf, size_t len)
{
	char path[PATH_MAX], buf[32];
	struct dirent *d;
	int ret = -ENOENT;
	DIR *dir = opendir("/sys/bus/pci/devices");

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", d->d_name);
		if (read_str(path, buf, sizeof(buf)) < 0 || strtoul(buf, NULL, 0) != 0x1d0f)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", d->d_name);
		if (read_str(path, buf, sizeof(buf)) < 0 ||
		    strtoul(buf, NULL, 0) != NEURON_PCI_DEVICE_ID)
			continue;
		snprintf(bdf, len, "%.31s", d->d_name);
		ret = 0;
		break;
	}
	closedir(dir);
	return ret;
}

/* Lines of /proc/interrupts naming a vector of nnq0 ("nnq0-core<c>", ...). */
static inline int count_vectors(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "nnq0-"))
			n++;
	fclose(f);
	return n;
}

/* Entries of a directory (not . and ..), -errno if it cannot be opened. */
static inline int count_dir(const char *path)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir(path);

	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/*
 * Waits until /dev/nnq0 opens and answers DEVICE_INFO; returns the fd or
 * -errno when @ms passed (a hang guard). If @rescan_after_ms, a PCI rescan
 * is requested once that much time went by without the device.
 */
static inline int wait_device(unsigned int ms, unsigned int rescan_after_ms)
{
	uint64_t t0 = neuron_now_ms();
	struct neuron_device_info info;
	bool rescanned = false;
	int fd, err = -ENOENT;

	for (;;) {
		fd = neuron_open();
		if (fd >= 0) {
			if (!neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info))
				return fd;
			err = -errno;
			close(fd);
		} else {
			err = -errno;
		}
		if (neuron_now_ms() - t0 > ms)
			return err;
		if (rescan_after_ms && !rescanned &&
		    neuron_now_ms() - t0 > rescan_after_ms) {
			ksft_print_msg("no device after %u ms: PCI rescan\n",
				       rescan_after_ms);
			write_str("/sys/bus/pci/rescan", "1");
			rescanned = true;
		}
		sleep_ms(50);
	}
}

/* ---- the kernel log ------------------------------------------------------ */

static const char *const kmsg_bad[] = {
	"WARNING:", "BUG:", "BUG ", "Oops", "Call Trace", "general protection",
	"KASAN", "UBSAN", "KFENCE", "refcount_t", "corruption",
	"possible circular locking", "possible recursive locking",
	"inconsistent lock state", "invalid context", "INFO: task",
	"detected stall", "soft lockup", "hard LOCKUP", "kmemleak",
	"unreferenced object", "Bad page", "scheduling while atomic",
	"nobody cared", "Disabling IRQ", "list_add", "list_del",
};

/* /dev/kmsg positioned at the end: the records a test causes follow. */
static inline int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Reads the records logged since kmsg_open(); prints and counts those that
 * report a kernel problem (oops, WARN, lockdep, sanitizers, hung task).
 */
static inline int kmsg_bad_lines(int fd)
{
	char rec[2048];
	int bad = 0;
	ssize_t n;

	if (fd < 0)
		return 1;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = 0;
		for (size_t i = 0; i < ARRAY_SIZE(kmsg_bad); i++) {
			if (strstr(rec, kmsg_bad[i])) {
				char *nl = strchr(rec, '\n');

				if (nl)
					*nl = 0;
				ksft_print_msg("kernel log: %s\n", rec);
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* ---- SIGBUS/SIGSEGV probes ----------------------------------------------- */

static __thread sigjmp_buf probe_env;
static __thread volatile sig_atomic_t probe_armed;

static inline void probe_handler(int sig)
{
	if (probe_armed)
		siglongjmp(probe_env, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void probe_install(void)
{
	struct sigaction sa = { .sa_handler = probe_handler };

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

/* Reads a word: 0 and *@val, or the signal the access raised. */
static inline int probe_read(const volatile void *p, uint32_t *val)
{
	int sig;

	probe_install();
	sig = sigsetjmp(probe_env, 1);
	if (sig) {
		probe_armed = 0;
		return sig;
	}
	probe_armed = 1;
	*val = *(const volatile uint32_t *)p;
	probe_armed = 0;
	return 0;
}

/* Writes a word: 0, or the signal the access raised. */
static inline int probe_write(volatile void *p, uint32_t val)
{
	int sig;

	probe_install();
	sig = sigsetjmp(probe_env, 1);
	if (sig) {
		probe_armed = 0;
		return sig;
	}
	probe_armed = 1;
	*(volatile uint32_t *)p = val;
	probe_armed = 0;
	return 0;
}

/* ---- rings ---------------------------------------------------------------- */

/* Reads @n EXPLICIT records into @hints (debug_hint_extended); -ETIMEDOUT. */
static inline int read_hints(struct neuron_ring *ring, uint16_t *hints, unsigned int n)
{
	union neuron_isa_notification rec;
	uint64_t deadline = neuron_now_ms() + NEURON_WAIT_MS;
	unsigned int got = 0;

	while (got < n) {
		if (neuron_ring_pop(ring, &rec)) {
			hints[got++] = rec.explicit_notif.debug_hint_extended;
			continue;
		}
		if (neuron_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

/*
 * One program of @n NOTIFYs on (core, engine) whose records must arrive in
 * the ring in order: the device works. Returns 0 or a negative step.
 */
static inline int run_notify(int fd, struct neuron_ring *ring, unsigned int core,
		      unsigned int engine, unsigned int n, uint16_t first)
{
	struct neuron_emu_insn prog[64];
	uint16_t hints[64];

	if (n > 64)
		return -E2BIG;
	notify_prog(prog, n, first);
	if (neuron_submit(fd, core, engine, prog, n, 0))
		return -1;
	if (read_hints(ring, hints, n))
		return -2;
	for (unsigned int i = 0; i < n; i++)
		if (hints[i] != (uint16_t)(first + i))
			return -3;
	return neuron_engine_wait(fd, core, engine, NEURON_WAIT_MS) ==
	       NEURON_ENGINE_IDLE ? 0 : -4;
}

/*
 * A fresh file, queue 1 of @core (where EXPLICIT records go by default,
 * docs/device-model.md ROUTE), a program, its records: the device works.
 * Used after every disturbance. Returns 0 or a negative step.
 */
static inline int device_works(unsigned int core, uint32_t flags)
{
	const unsigned int queue = 1;

	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	int fd = neuron_open(), ret;

	if (fd < 0)
		return -100;
	for (unsigned int e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		struct neuron_engine_id id = { .core = core, .engine = e };

		neuron_ioctl(fd, NEURON_IOC_ENGINE_RESET, &id);
	}
	ret = neuron_nq_create(fd, core, queue, 4096, flags, &init);
	if (ret) {
		close(fd);
		return -101;
	}
	ret = neuron_ring_map(fd, &init, &ring);
	if (ret) {
		close(fd);
		return -102;
	}
	ret = run_notify(fd, &ring, core, NEURON_ENGINE_PE, 32, 0x4000);
	neuron_ring_unmap(&ring);
	if (!ret && neuron_nq_destroy(fd, core, queue))
		ret = -103;
	close(fd);
	return ret;
}

/*
 * A core changes hands clean (docs/decisions/0005-tenancy.md): the codes of
 * clean_core_setuid() and next_owner_clean(), shared by lifecycle_test
 * (unbind, reset, hibernation) and kexec_walk (kexec).
 */
#define CLEAN_CORE_GID	1000
enum { CLEAN_CORE_OK, CLEAN_CORE_SETUID = 10, CLEAN_CORE_OPEN,
       CLEAN_CORE_SEM, CLEAN_CORE_EVENT, CLEAN_CORE_FLAGS,
       CLEAN_CORE_READ_SEM = 20, CLEAN_CORE_READ_EVENT, CLEAN_CORE_ACQUIRE,
       CLEAN_CORE_READ_FLAGS,
       CLEAN_CORE_DIRTY_SEM = 30, CLEAN_CORE_DIRTY_EVENT, CLEAN_CORE_DIRTY_FLAGS };

/* this process becomes @uid in group CLEAN_CORE_GID; 0 or -1 */
static inline int clean_core_setuid(uid_t uid)
{
	gid_t g = CLEAN_CORE_GID;

	return setgroups(1, &g) || setgid(CLEAN_CORE_GID) || setuid(uid) ? -1 : 0;
}

/*
 * What the first owner leaves on core 0 through @fd: semaphore 7 = 0x5eed,
 * event 9 set, feature flags 0x2. Returns CLEAN_CORE_OK or the failed step.
 */
static inline int first_owner_dirties(int fd)
{
	struct neuron_evt_sem sem = { .core = 0, .index = 7, .op = NEURON_SEM_SET,
				      .value = 0x5eed };
	struct neuron_evt_sem ev = { .core = 0, .index = 9, .op = NEURON_EVENT_SET };
	struct neuron_feature_flags ff = { .core = 0, .op = NEURON_FEATURE_OP_SET,
					   .flags = 0x2 };

	if (neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &sem))
		return CLEAN_CORE_SEM;
	if (neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &ev))
		return CLEAN_CORE_EVENT;
	if (neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff))
		return CLEAN_CORE_FLAGS;
	return CLEAN_CORE_OK;
}

/*
 * As @uid, core 0 as the next tenant sees it: semaphore 7 and event 9
 * while the core is free, then, once owned, its feature flags; every one
 * must be 0, its reset value (docs/hardware.md). Prints what it read.
 * Returns CLEAN_CORE_OK or the code of the step that failed or found state
 * left over. Call it in a child: it drops privileges for good.
 */
static inline int next_owner_clean(uid_t uid)
{
	struct neuron_evt_sem sem = { .core = 0, .index = 7, .op = NEURON_SEM_READ };
	struct neuron_evt_sem ev = { .core = 0, .index = 9, .op = NEURON_EVENT_READ };
	struct neuron_feature_flags ff = { .core = 0, .op = NEURON_FEATURE_OP_GET };
	struct neuron_cores cores = { .cores = 1 };
	int fd;

	if (clean_core_setuid(uid))
		return CLEAN_CORE_SETUID;
	fd = open(NEURON_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return CLEAN_CORE_OPEN;
	if (neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &sem))
		return CLEAN_CORE_READ_SEM;
	if (neuron_ioctl(fd, NEURON_IOC_EVT_SEM, &ev))
		return CLEAN_CORE_READ_EVENT;
	if (neuron_ioctl(fd, NEURON_IOC_CORE_ACQUIRE, &cores))
		return CLEAN_CORE_ACQUIRE;
	if (neuron_ioctl(fd, NEURON_IOC_FEATURE_FLAGS, &ff))
		return CLEAN_CORE_READ_FLAGS;
	printf("# next owner reads sem7=%#x event9=%u flags=%#x\n",
	       sem.value, ev.value, ff.flags);
	fflush(stdout);		/* callers _exit() */
	close(fd);
	return sem.value ? CLEAN_CORE_DIRTY_SEM : ev.value ? CLEAN_CORE_DIRTY_EVENT :
	       ff.flags ? CLEAN_CORE_DIRTY_FLAGS : CLEAN_CORE_OK;
}

/*
 * Drops the tests of every fixture (group) not named in @sel: the stock
 * harness of linux-source-6.1 has no filter of its own.
 */
static inline void keep_groups(const char *const *sel, size_t nsel)
{
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next) {
		bool keep = false;

		for (size_t i = 0; i < nsel; i++)
			keep |= !strcmp(f->name, sel[i]);
		if (!keep)
			f->tests = NULL;
	}
}

#endif /* NEURON_ROBUST_LIB_H */
