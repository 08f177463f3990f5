/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the neuron kselftests: opening the device, making
 * and mapping queues, running programs and reading records by phase bit.
 * They return -errno on failure so tests can assert on the exact error.
 */
#ifndef NEURON_SELFTEST_LIB_H
#define NEURON_SELFTEST_LIB_H

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/neuron.h>
#include <neuron/emu_isa.h>
#include <neuron/notification.h>
#include <neuron/regs.h>

#define NEURON_DEV "/dev/nnq0"
#define NEURON_WAIT_MS 20000	/* generous: the guest runs under TCG */

/*
 * open() of the device that reads events as this header's struct
 * neuron_event: a writable file asks for sizeof(struct neuron_event) per
 * event (NEURON_IOC_EVENT_SIZE); without it read() returns the first
 * release's NEURON_EVENT_SIZE_VER0 bytes (UAPI "Event size").
 */
static inline int neuron_open_flags(int flags)
{
	struct neuron_event_size es = { .size = sizeof(struct neuron_event) };
	int fd = open(NEURON_DEV, flags);

	if (fd < 0 || (flags & O_ACCMODE) == O_RDONLY)
		return fd;
	if (ioctl(fd, NEURON_IOC_EVENT_SIZE, &es)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static inline int neuron_open(void)
{
	return neuron_open_flags(O_RDWR | O_CLOEXEC);
}

/* ioctl returning 0 or -errno */
static inline int neuron_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int neuron_nq_create(int fd, __u32 core, __u32 queue, __u32 size,
				   __u32 flags, struct neuron_nq_init *out)
{
	struct neuron_nq_init init = {
		.core = core, .queue = queue, .size = size, .flags = flags,
	};
	int ret = neuron_ioctl(fd, NEURON_IOC_NQ_INIT, &init);

	if (out)
		*out = init;
	return ret;
}

static inline int neuron_nq_destroy(int fd, __u32 core, __u32 queue)
{
	struct neuron_nq_id id = { .core = core, .queue = queue };

	return neuron_ioctl(fd, NEURON_IOC_NQ_DESTROY, &id);
}

static inline uint64_t neuron_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A mapped queue and its consumer state (free-running head, as the device). */
struct neuron_ring {
	const union neuron_isa_notification *slots;
	volatile uint32_t *doorbell;
	size_t map_bytes;
	uint32_t entries;
	uint32_t head;
};

static inline int neuron_ring_map(int fd, const struct neuron_nq_init *init,
				  struct neuron_ring *ring)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *slots, *db;

	ring->map_bytes = (init->size + page - 1) & ~(page - 1);
	slots = mmap(NULL, ring->map_bytes, PROT_READ, MAP_SHARED, fd,
		     (off_t)init->ring_offset);
	if (slots == MAP_FAILED)
		return -errno;
	/* a doorbell mapping is one page (DEVICE_INFO @doorbell_size) */
	db = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, (off_t)init->doorbell_offset);
	if (db == MAP_FAILED) {
		int err = -errno;

		munmap(slots, ring->map_bytes);
		return err;
	}
	ring->slots = slots;
	ring->doorbell = db;
	ring->entries = init->size / NEURON_ISA_NOTIFICATION_NBYTES;
	ring->head = 0;
	return 0;
}

static inline void neuron_ring_unmap(struct neuron_ring *ring)
{
	munmap((void *)ring->slots, ring->map_bytes);
	munmap((void *)ring->doorbell, (size_t)sysconf(_SC_PAGESIZE));
}

/*
 * The file's status page (NEURON_CAP_STATUS_PAGE), mapped read-only;
 * MAP_FAILED (errno set) on error.
 */
static inline const struct neuron_status_page *neuron_status_map(int fd)
{
	/* one page: DEVICE_INFO @page_size, the kernel's PAGE_SIZE */
	return mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd,
		    (off_t)NEURON_STATUS_PAGE_OFFSET);
}

static inline void neuron_status_unmap(const struct neuron_status_page *sp)
{
	munmap((void *)sp, (size_t)sysconf(_SC_PAGESIZE));
}

/* The page's state word as a reader of it loads it (acquire). */
static inline uint32_t neuron_status_state(const struct neuron_status_page *sp)
{
	return __atomic_load_n(&sp->state, __ATOMIC_ACQUIRE);
}

/* phase the record at free-running position `count` carries */
static inline unsigned int neuron_expected_phase(uint32_t count, uint32_t entries)
{
	return ((count / entries) & 1) ^ 1;
}

/*
 * Takes the record at HEAD if it is fresh (phase bit of this pass) without
 * telling the device: the caller writes HEAD (*ring->doorbell = ring->head)
 * once per batch. Returns 1 if a record was taken, 0 if none is there yet.
 */
static inline int neuron_ring_peek(struct neuron_ring *ring,
				   union neuron_isa_notification *rec)
{
	const union neuron_isa_notification *slot =
		&ring->slots[ring->head & (ring->entries - 1)];
	uint8_t hdr = __atomic_load_n(&slot->bytes[NEURON_ISA_HEADER_OFFSET],
				      __ATOMIC_ACQUIRE);

	if (!!(hdr & NEURON_ISA_HEADER_PHASE) !=
	    neuron_expected_phase(ring->head, ring->entries))
		return 0;
	memcpy(rec, slot, sizeof(*rec));
	ring->head++;
	return 1;
}

/*
 * Copies the next record if it is fresh (its phase bit is the one expected
 * for this pass), advances head and acknowledges it through the doorbell.
 * Returns 1 if a record was read, 0 if none is there yet.
 */
static inline int neuron_ring_pop(struct neuron_ring *ring,
				  union neuron_isa_notification *rec)
{
	if (!neuron_ring_peek(ring, rec))
		return 0;
	*ring->doorbell = ring->head;
	return 1;
}

/* Reads exactly n records or fails with -ETIMEDOUT. */
static inline int neuron_ring_read(struct neuron_ring *ring,
				   union neuron_isa_notification *recs, size_t n,
				   unsigned int timeout_ms)
{
	uint64_t deadline = neuron_now_ms() + timeout_ms;
	size_t got = 0;

	while (got < n) {
		if (neuron_ring_pop(ring, &recs[got])) {
			got++;
			continue;
		}
		if (neuron_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

static inline int neuron_submit(int fd, __u32 core, __u32 engine,
				const struct neuron_emu_insn *insns, __u32 count,
				__u32 flags)
{
	struct neuron_submit s = {
		.core = core, .engine = engine, .count = count, .flags = flags,
		.insns = (__u64)(uintptr_t)insns,
	};

	return neuron_ioctl(fd, NEURON_IOC_SUBMIT, &s);
}

static inline int neuron_engine_status(int fd, __u32 core, __u32 engine,
				       struct neuron_engine_status *st)
{
	memset(st, 0, sizeof(*st));
	st->core = core;
	st->engine = engine;
	return neuron_ioctl(fd, NEURON_IOC_ENGINE_STATUS, st);
}

/* Waits until the engine is idle (or halted); returns its state or -errno. */
static inline int neuron_engine_wait(int fd, __u32 core, __u32 engine,
				     unsigned int timeout_ms)
{
	uint64_t deadline = neuron_now_ms() + timeout_ms;
	struct neuron_engine_status st;
	int ret;

	for (;;) {
		ret = neuron_engine_status(fd, core, engine, &st);
		if (ret)
			return ret;
		if (st.state == NEURON_ENGINE_IDLE || st.state == NEURON_ENGINE_HALTED)
			return (int)st.state;
		if (neuron_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

static inline struct neuron_emu_insn neuron_insn(uint8_t opcode, uint16_t hint)
{
	struct neuron_emu_insn in;

	memset(&in, 0, sizeof(in));
	in.opcode = opcode;
	in.debug_hint = htole16(hint);
	return in;
}

static inline uint8_t neuron_rec_type(const union neuron_isa_notification *r)
{
	return r->bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_TYPE_MASK;
}

static inline unsigned int neuron_rec_phase(const union neuron_isa_notification *r)
{
	return !!(r->bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_PHASE);
}

/* Reads the text file @path into buf (NUL-terminated); bytes or -errno. */
static inline int neuron_read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

/* Reads a sysfs attribute of /dev/nnq0 into buf; returns bytes or -errno. */
static inline int neuron_sysfs_read(const char *attr, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/nnq/nnq0/%s", attr);
	return neuron_read_text(path, buf, len);
}

/*
 * The next event of @edge on the event stream @fd within @ms (others are
 * skipped), into @out; 0, -ETIMEDOUT, or -errno of a short read.
 */
static inline int neuron_wait_edge(int fd, uint32_t edge, unsigned int ms,
				   struct neuron_event *out)
{
	uint64_t deadline = neuron_now_ms() + ms;

	while (neuron_now_ms() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct neuron_event ev;

		if (poll(&p, 1, 50) <= 0)
			continue;
		if (read(fd, &ev, sizeof(ev)) != sizeof(ev))
			return -errno;
		if (ev.edge == edge) {
			*out = ev;
			return 0;
		}
	}
	return -ETIMEDOUT;
}

/* The counter "NAME N" of /sys/class/nnq/nnq0/reset_counts, or -1. */
static inline long long neuron_reset_count(const char *name)
{
	char buf[512], *p;
	size_t n = strlen(name);

	if (neuron_sysfs_read("reset_counts", buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ' ')
			return atoll(p + n + 1);
	return -1;
}

/*
 * Asks the host to send @cmd to the QEMU monitor: the lanes of
 * selftests/vm/lane-monitor.sh and lane-debug.sh relay each
 * "NEURON-HOTPLUG: <cmd> :END" console line (lane_relay, lane-lib.sh).
 */
static inline void neuron_host_monitor(const char *cmd)
{
	printf("NEURON-HOTPLUG: %s :END\n", cmd);
	fflush(stdout);
}

/*
 * A NETLINK_KOBJECT_UEVENT socket bound to the kernel's uevent group
 * (docs/decisions/0011-reset-and-recovery.md#uevents), or -errno.
 */
static inline int neuron_uevent_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			  NETLINK_KOBJECT_UEVENT);

	if (sock < 0)
		return -errno;
	if (bind(sock, (struct sockaddr *)&sa, sizeof(sa))) {
		close(sock);
		return -errno;
	}
	return sock;
}

/*
 * The next uevent of /dev/nnq0's class device (DEVNAME=nnq0) within @ms
 * whose keys hold @want (e.g. "NNQ_STATE=offline", "ACTION=remove"), with
 * every key of it into @keys ("\n" after each); uevents before it are
 * skipped, so a caller sees a sequence in order by waiting for each in
 * turn. 0 or -ETIMEDOUT.
 */
static inline int neuron_wait_uevent(int sock, const char *want,
				     unsigned int ms, char *keys, size_t len)
{
	uint64_t deadline = neuron_now_ms() + ms;
	char buf[4096];

	while (neuron_now_ms() < deadline) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		ssize_t n;
		int ours = 0, match = 0;

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
				ours = 1;
			if (!strcmp(k, want))
				match = 1;
			strncat(keys, k, len - strlen(keys) - 2);
			strcat(keys, "\n");
		}
		if (ours && match)
			return 0;
	}
	return -ETIMEDOUT;
}

/* Binds eventfd @efd to the queue's threshold interrupt (-1 unbinds). */
static inline int neuron_nq_bind_eventfd(int fd, __u32 core, __u32 queue, int efd)
{
	struct neuron_nq_eventfd b = { .core = core, .queue = queue, .fd = efd };

	return neuron_ioctl(fd, NEURON_IOC_NQ_EVENTFD, &b);
}

/* The eventfd's counter (reading resets it); 0 if nothing came in time. */
static inline uint64_t neuron_eventfd_wait(int efd, int timeout_ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t v = 0;

	if (poll(&p, 1, timeout_ms) == 1 && read(efd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	return v;
}

#endif /* NEURON_SELFTEST_LIB_H */
