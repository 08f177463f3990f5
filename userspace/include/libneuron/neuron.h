/* SPDX-License-Identifier: MIT */
/*
 * libneuron's C API: the core calls for a C runtime (or any language with a
 * C FFI): open a device, make a queue, submit instructions, drain, wait,
 * decode, close. It is a thin layer over the C++ classes (Device,
 * NotificationQueue, decode(), to_text()) in the same libneuron.so; link
 * with `pkg-config --libs neuron` (the C++ runtime comes in through
 * libneuron.so's own dependencies). C99 or later; also valid C++.
 *
 * Errors: every call that can fail returns 0 (or a count >= 0) on success
 * and a negative errno on failure: the driver's errno for an ioctl or mmap
 * (docs/decisions/0003-choices.md#errnos), -EINVAL for a bad argument (a NULL
 * pointer, a size that is not a power of two, max == 0), -EOPNOTSUPP for a
 * missing feature, -ENOMEM when memory runs out. libneuron_last_error() then
 * says what was asked and which argument was bad ("libneuron_queue_create: size
 * 1000 bytes is not a power of two"); it is per thread.
 *
 * Thread safety: a libneuron_device may be used by several threads at once
 * (each call is one ioctl, read() or load of the status page; the kernel
 * serialises what must be), except that its events are one queue: two
 * threads reading them get each event once, in either thread. A
 * libneuron_queue is used by one thread at a time (drain, wait and info are
 * not synchronised with each other); distinct queues may be drained from
 * distinct threads. Each call's comment says "Thread safety:" where it
 * differs. Nothing here installs a signal handler or keeps a thread.
 * Lifetimes: a queue keeps its own descriptor of the device's open file,
 * so it may outlive the libneuron_device it was made from; records are
 * copied out into the caller's array, which the library never keeps.
 * userspace/README.md#api-contract has the whole contract.
 */
#ifndef LIBNEURON_NEURON_H
#define LIBNEURON_NEURON_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/neuron_isa.h" /* struct neuron_emu_insn (installed under libneuron/abi) */

#if defined(__GNUC__)
#define LIBNEURON_API __attribute__((visibility("default")))
#else
#define LIBNEURON_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** An open /dev/nnqN (opaque). */
typedef struct libneuron_device libneuron_device;
/** One notification queue: NQ_INIT, its mapped ring and doorbell, an eventfd (opaque). */
typedef struct libneuron_queue libneuron_queue;

/** One 16-byte notification record, as the device wrote it (byte 3 is the header). */
struct libneuron_record {
	uint8_t bytes[16];
};

/** What a decoded record is (the C++ Decoded alternatives, in order). */
enum libneuron_kind {
	LIBNEURON_KIND_TRACE = 0,	 /* INST_START / INST_END */
	LIBNEURON_KIND_EXPLICIT = 1,	 /* an engine's notify */
	LIBNEURON_KIND_DGE_METADATA = 2, /* EXPLICIT with debug_hint 1 on the DGE queue */
	LIBNEURON_KIND_EVT_SEM = 3,	 /* EVT_SEM / AXI_EVT_SEM */
	LIBNEURON_KIND_DMA = 4,
	LIBNEURON_KIND_INTERRUPT = 5,	 /* ERROR (0x03) */
	LIBNEURON_KIND_TPB_ERROR = 6,
	LIBNEURON_KIND_UNKNOWN = 7	 /* a notific_type outside the known values */
};

/** A decoded record: the fields most callers need, plus one line of text. */
struct libneuron_decoded {
	uint32_t kind;		   /* enum libneuron_kind */
	uint8_t notific_type;	   /* header bits 4:0 */
	uint8_t sw_overflow;	   /* 1: written over an unread slot (lossy queue) */
	uint8_t hw_overflow;
	uint8_t phase;
	int32_t engine;		   /* enum neuron_engine; -1 if the record names none */
	uint32_t program_counter;  /* TRACE, EXPLICIT, DGE_METADATA, sequencer TPB_ERROR; else 0 */
	uint32_t debug_hint;	   /* TRACE, EXPLICIT, DGE_METADATA; else 0 */
	uint32_t debug_hint_extended; /* EXPLICIT; else 0 */
	uint32_t error_id;	   /* TPB_ERROR: enum neuron_isa_tpb_error_type; else 0 */
	uint32_t value;		   /* EVT_SEM: the value after the update; else 0 */
	uint64_t timestamp_ps;	   /* device time, picoseconds (docs/hardware.md#timestamp) */
	char text[192];		   /* the C++ to_text(): one line, NUL-terminated, truncated to fit */
};

/**
 * struct libneuron_version_info - the version of the libneuron.so a program runs
 * with (userspace/README.md#versions), which may be newer than the one it
 * was built against (LIBNEURON_VERSION_MAJOR/_MINOR/_PATCH below).
 * @major: bumps with the SONAME (libneuron.so.MAJOR): an incompatible ABI
 * @minor: bumps when symbols are added (a new LIBNEURON_MAJOR.MINOR version node)
 * @patch: fixes that change no interface
 */
struct libneuron_version_info {
	uint32_t major;
	uint32_t minor;
	uint32_t patch;
};

/* The version of the headers a program is built with. */
#define LIBNEURON_VERSION_MAJOR 1
#define LIBNEURON_VERSION_MINOR 1
#define LIBNEURON_VERSION_PATCH 0

/**
 * libneuron_version() - the version of the loaded libneuron.so (not of the
 * headers). Never fails; thread-safe; no system call.
 *
 * Return: { major, minor, patch }, e.g. { 0, 1, 0 }. A program built against
 * MAJOR.MINOR may call everything of that version when the loaded major is
 * the same and the loaded minor is at least MINOR.
 */
LIBNEURON_API struct libneuron_version_info libneuron_version(void);

/**
 * libneuron_device_open() - open a device node read-write.
 * @path: "/dev/nnq0" style path; NULL means /dev/nnq0.
 * @out: receives the device; set to NULL on failure.
 *
 * Return: 0, or -EINVAL (@out NULL), or open()'s errno (-ENOENT no such
 * node, -EACCES not in group neuron: README.md#device-permissions), or
 * -ENOTTY when @path is not a node of the driver (a regular file, /dev/null:
 * not a character device, or no answer to NEURON_IOC_DEVICE_INFO).
 */
LIBNEURON_API int libneuron_device_open(const char *path, libneuron_device **out);

/**
 * libneuron_device_close() - close a device (NULL is fine). Queues made from
 * it stay usable until they are destroyed.
 */
LIBNEURON_API void libneuron_device_close(libneuron_device *dev);

/**
 * libneuron_device_submit() - NEURON_IOC_SUBMIT: start @count instructions on
 * one engine (include/uapi/linux/neuron_isa.h).
 * @flags: NEURON_SUBMIT_F_* (NEURON_SUBMIT_F_TRACE: INST_START/INST_END records;
 *	NEURON_SUBMIT_F_DETACH: the program belongs to the core's owner, which
 *	may be another process that granted this user the core,
 *	docs/decisions/0024-submit-detach.md)
 *
 * Return: 0, -EINVAL (NULL @dev or @insns, @count 0, or the driver's check of
 * core, engine, count and flags), -EBUSY (the engine runs, or another open
 * file owns the core), -EPERM (a read-only file) or another driver errno.
 */
LIBNEURON_API int libneuron_device_submit(libneuron_device *dev, unsigned core, unsigned engine,
					  const struct neuron_emu_insn *insns, size_t count, uint32_t flags);

/**
 * libneuron_queue_create() - NEURON_IOC_NQ_INIT with threshold 1 and an
 * eventfd bound to it (so libneuron_queue_wait() can sleep), the ring and
 * doorbell mapped.
 * @size_bytes: ring size, a power of two of 16-byte records within the
 *              device's limits (e.g. 4096)
 * @flags: NEURON_NQ_F_* (NEURON_NQ_F_IGNORE_FULL: lossy, see
 *         userspace/README.md#lossy-queues)
 * @out: receives the queue; NULL on failure.
 *
 * Return: 0, -EINVAL (NULL @dev or @out, @size_bytes not a power of two, or
 * the driver's check), -EBUSY (the queue exists or another file owns the
 * core), -ENOMEM, or another driver errno.
 */
LIBNEURON_API int libneuron_queue_create(libneuron_device *dev, unsigned core, unsigned queue,
					 uint32_t size_bytes, uint32_t flags, libneuron_queue **out);

/**
 * libneuron_queue_destroy() - unmap the ring and doorbell, NQ_DESTROY, close
 * the eventfd (NULL is fine).
 */
LIBNEURON_API void libneuron_queue_destroy(libneuron_queue *q);

/**
 * libneuron_queue_drain() - copy up to @max fresh records into @out, oldest
 * first, without a syscall, and hand their slots back to the device.
 * @lost: if not NULL, receives the records lost to overwrites in this call
 *        (lossy queues; 0 otherwise).
 *
 * Return: the number of records (0: none waiting), -EINVAL (NULL @q or
 * @out, @max 0), or -ENODEV once the device was removed or reset (the ring
 * is not touched; userspace/README.md#device-loss). Records first: a drain
 * that copied records and then saw the device go returns them, and the
 * next call returns -ENODEV.
 */
LIBNEURON_API long libneuron_queue_drain(libneuron_queue *q, struct libneuron_record *out, size_t max,
					 uint64_t *lost);

/**
 * libneuron_queue_wait() - drain; if nothing was waiting, sleep on the
 * queue's threshold eventfd until records arrive or @timeout_ns passes, and
 * drain again (the drain-then-sleep rule, docs/hardware.md#completion).
 * @timeout_ns: nanoseconds; 0 drains once without sleeping; negative: no limit.
 * @lost: as for libneuron_queue_drain().
 *
 * Return: the number of records (> 0), 0 if the time ran out with the queue
 * empty, -EINVAL (NULL @q or @out, @max 0), -ENODEV (the device was
 * removed or reset) or ppoll()'s errno.
 */
LIBNEURON_API long libneuron_queue_wait(libneuron_queue *q, struct libneuron_record *out, size_t max,
					long long timeout_ns, uint64_t *lost);

/**
 * libneuron_queue_set_coalescing() - NEURON_IOC_NQ_COALESCE: the queue's
 * threshold interrupt (and so libneuron_queue_wait()'s wake-up) comes when
 * @threshold records are unread or @coalesce_ns nanoseconds after the first
 * of them, whichever is first (docs/device-model.md#coalescing). The queue
 * keeps running; records already unread count at once.
 * @threshold: records, 0 for no count limit, at most the ring's entries
 *             (size_bytes / 16); the queue starts with 1
 * @coalesce_ns: nanoseconds, 0 for no time limit, at most
 *               NEURON_NQ_COALESCE_NS_MAX (10 ms); the queue starts with 0
 *
 * Return: 0, -EINVAL (NULL @q, a value out of range, or both 0: nothing
 * would wake the queue's eventfd), -EOPNOTSUPP (a driver without
 * NEURON_CAP_COALESCE: the queue keeps threshold 1), -ENODEV (the device was
 * removed or reset) or another driver errno (-ENOENT).
 */
LIBNEURON_API int libneuron_queue_set_coalescing(libneuron_queue *q, uint32_t threshold, uint32_t coalesce_ns);

/**
 * libneuron_queue_fd() - the queue's eventfd, readable after a threshold
 * interrupt, for the caller's own poll loop (then call
 * libneuron_queue_wait() with timeout 0). -EINVAL for NULL.
 */
LIBNEURON_API int libneuron_queue_fd(const libneuron_queue *q);

/**
 * libneuron_record_decode() - decode one record, as if its core had the
 * default route (NEURON_ROUTE_DEFAULT: DGE packet notifications on queue 5).
 * @queue: the queue it came from (a DGE queue turns EXPLICIT with
 *         debug_hint 1 into DGE_METADATA, docs/hardware.md#rec-dge-metadata);
 *         -1 if unknown.
 *
 * No field of a record tells DGE_METADATA from an EXPLICIT record with
 * debug_hint 1 (docs/decisions/0019-dge-metadata-route.md): with @queue -1 such
 * a record decodes as LIBNEURON_KIND_EXPLICIT and its @text ends with
 * "(or DGE_METADATA: the queue decides)". Callers that know the queue and
 * the route should use libneuron_record_decode_route().
 *
 * Return: 0, or -EINVAL (NULL @rec or @out).
 */
LIBNEURON_API int libneuron_record_decode(const struct libneuron_record *rec, int queue,
					  struct libneuron_decoded *out);

/**
 * libneuron_record_decode_route() - decode one record with the queue it came
 * from and the route its core had, so that every kind is decoded right
 * (docs/decisions/0019-dge-metadata-route.md): an EXPLICIT record with
 * debug_hint 1 is LIBNEURON_KIND_DGE_METADATA exactly when @route sends the
 * DGE class (NEURON_CLASS_DGE) to @queue and no lower class shares that
 * queue.
 * @queue: the software queue it was drained from, 0..NEURON_NUM_SW_QUEUES - 1
 * @route: the core's NOTIFIC ROUTE word, one 4-bit queue number per
 *         enum neuron_notific_class (NEURON_ROUTE_DEFAULT unless the core's
 *         owner programmed another, docs/hardware.md#nq-routing)
 *
 * Return: 0, or -EINVAL (NULL @rec or @out, or @queue outside
 * 0..NEURON_NUM_SW_QUEUES - 1).
 */
LIBNEURON_API int libneuron_record_decode_route(const struct libneuron_record *rec, int queue, uint32_t route,
						struct libneuron_decoded *out);

/* ---- Since 0.2 (LIBNEURON_0.2): what a runtime needs past the data path ---- */

/**
 * struct libneuron_device_info - NEURON_IOC_DEVICE_INFO, the fields a runtime
 * sizes itself by (include/uapi/linux/neuron.h struct neuron_device_info).
 * @num_cores: NeuronCores of the device
 * @engines_per_core: engines of each core (enum neuron_engine)
 * @queues_per_core: software NQs of each core
 * @generation: enum neuron_gen
 * @capabilities: NEURON_CAP_* bits of the driver
 * @mem_size: device memory, bytes
 * @mem_alloc_limit: bytes one allocation may have
 * @nq_size_min: smallest ring, bytes
 * @nq_size_max: largest ring, bytes
 * @max_program_insns: instructions one submit may carry
 * @timestamp_inc_ps: picoseconds per timestamp tick
 * @page_size: the kernel's page size, bytes: mappings are multiples of it
 *	(docs/decisions/0011-reset-and-recovery.md#page-size); 0 from a driver
 *	without NEURON_CAP_PAGE_SIZE
 * @doorbell_size: bytes of a doorbell mapping; 0: doorbells cannot be
 *	mapped on this kernel (pages above 4 KiB), HEAD goes by ioctl
 * @reserved: zero; room to grow without a new struct
 */
struct libneuron_device_info {
	uint32_t num_cores;
	uint32_t engines_per_core;
	uint32_t queues_per_core;
	uint32_t generation;
	uint64_t capabilities;
	uint64_t mem_size;
	uint64_t mem_alloc_limit;
	uint32_t nq_size_min;
	uint32_t nq_size_max;
	uint32_t max_program_insns;
	uint32_t timestamp_inc_ps;
	uint32_t page_size;
	uint32_t doorbell_size;
	uint64_t reserved[3];
};

/**
 * struct libneuron_event - one interrupt edge of the open file
 * (include/uapi/linux/neuron.h struct neuron_event;
 * docs/decisions/0005-tenancy.md "Events cost only their readers").
 * @timestamp_ns: CLOCK_MONOTONIC ns of the interrupt
 * @device: N of /dev/nnqN
 * @core: the core the edge belongs to
 * @edge: enum neuron_edge (NOTIFIC, THROTTLE, FAULT, ENGINE_STOPPED, ...)
 * @cause: for NOTIFIC the tpb_notific_intr_* bits; for ENGINE_STOPPED the
 *	enum neuron_stop_cause
 * @queues: bit q: software queue q had the edge
 * @lost: events of this file dropped before this one (its event buffer was full)
 * @count: the edge's running count on the device
 * @wrbuf_full: NOTIFIC input-buffer-full edges (docs/device-model.md#wrbuf)
 * @wrbuf_drop: records dropped by the input buffer
 * @suppressed: THROTTLE or FAULT edges of this core and kind the driver's
 *	rate limit kept from this file since the last one reported
 *	(docs/decisions/0008-event-ratelimit.md); 0 for other edges
 * @pc: HANG: the hung engine's pc, the instruction it is stuck on
 *	(docs/decisions/0012-hang-detection.md); 0 for other edges. Was a
 *	reserved zero word: the struct keeps its 64 bytes
 * @reserved: zero
 */
struct libneuron_event {
	uint64_t timestamp_ns;
	uint32_t device;
	uint32_t core;
	uint32_t edge;
	uint32_t cause;
	uint32_t queues;
	uint32_t lost;
	uint64_t count;
	uint32_t wrbuf_full;
	uint32_t wrbuf_drop;
	uint32_t suppressed;
	uint32_t pc;
	uint64_t reserved[1];
};

/**
 * struct libneuron_engine_status - NEURON_IOC_ENGINE_STATUS of one engine.
 * @core: core index
 * @engine: enum neuron_engine
 * @state: enum neuron_engine_state (IDLE, RUNNING, WAITING, HALTED)
 * @pc: index of the next instruction
 * @soft_reset_counter: programs started on this engine
 * @last_error: error_id of the last fatal error, 0xff if none
 * @exec_count: instructions retired
 * @programs_stopped: programs the driver stopped on this engine
 */
struct libneuron_engine_status {
	uint32_t core;
	uint32_t engine;
	uint32_t state;
	uint32_t pc;
	uint32_t soft_reset_counter;
	uint32_t last_error;
	uint64_t exec_count;
	uint64_t programs_stopped;
};

/**
 * struct libneuron_queue_info - NEURON_IOC_NQ_INFO of a queue: the driver's
 * view of the ring (docs/device-model.md, "NOTIFIC block").
 * @core: core index
 * @queue: software NQ index
 * @head: HEAD register, records (the next the host reads)
 * @tail: TAIL register, records (the next the device writes)
 * @phase: the phase the device writes now (0 or 1)
 * @size: ring bytes
 * @flags: NEURON_NQ_F_*
 * @threshold: unread records that raise the threshold interrupt
 * @coalesce_ns: coalescing time limit, ns (0 none)
 * @overflow_count: records written over unread ones (lossy queues)
 * @drop_count: records the device dropped for this queue
 * @route: the core's NOTIFIC ROUTE word the queue's records were routed
 *	with (docs/hardware.md#nq-routing); was reserved (zero) before 0.2
 *	met a driver with NEURON_CAP_ROUTE, and is NEURON_ROUTE_DEFAULT from
 *	a driver without it
 */
struct libneuron_queue_info {
	uint32_t core;
	uint32_t queue;
	uint32_t head;
	uint32_t tail;
	uint32_t phase;
	uint32_t size;
	uint32_t flags;
	uint32_t threshold;
	uint32_t coalesce_ns;
	uint32_t route;
	uint64_t overflow_count;
	uint64_t drop_count;
};

/**
 * libneuron_device_open_read_only() - open a device node read-only, for a
 * caller that only looks (an operator in group neuron without write
 * access): libneuron_device_get_info(), libneuron_engine_get_status(),
 * libneuron_device_state() work; every other call fails with -EBADF.
 * @path: as for libneuron_device_open()
 * @out: receives the device; NULL on failure
 *
 * Return: 0, -EINVAL (@out NULL), open()'s errno, or -ENOTTY (not a node
 * of the driver, as for libneuron_device_open()).
 */
LIBNEURON_API int libneuron_device_open_read_only(const char *path, libneuron_device **out);

/**
 * libneuron_device_get_info() - NEURON_IOC_DEVICE_INFO now.
 * @out: filled on success
 *
 * Return: 0, -EINVAL (NULL @dev or @out), -EIO / -ENODEV (the device was
 * reset / removed: open it again).
 */
LIBNEURON_API int libneuron_device_get_info(libneuron_device *dev, struct libneuron_device_info *out);

/**
 * libneuron_device_state() - what the file's status page says now
 * (docs/decisions/0027-device-loss.md): NEURON_STATUS_LIVE (1), _STALE (2, a
 * reset began: open again) or _GONE (3, the device is being removed). One
 * load, no system call; safe from any thread and from a signal handler.
 *
 * Return: the state, -EINVAL (NULL @dev), -EOPNOTSUPP (a driver without
 * NEURON_CAP_STATUS_PAGE).
 */
LIBNEURON_API int libneuron_device_state(const libneuron_device *dev);

/**
 * libneuron_core_acquire() - NEURON_IOC_CORE_ACQUIRE: take every core of
 * @cores (bit c = core c) for this open file, or none.
 * @owned: if not NULL, receives the cores the file owns afterwards
 *
 * Ownership ends with libneuron_core_release() or the file's close (the
 * driver then resets the engines and scrubs the core,
 * docs/decisions/0005-tenancy.md).
 * Return: 0, -EINVAL (NULL @dev, a core out of range), -EBUSY (another open
 * file owns one; sysfs core_owners says which), -EBADF (read-only), -EIO/-ENODEV.
 */
LIBNEURON_API int libneuron_core_acquire(libneuron_device *dev, uint64_t cores, uint64_t *owned);

/**
 * libneuron_core_release() - NEURON_IOC_CORE_RELEASE: give @cores up.
 * @owned: if not NULL, receives the cores still owned
 *
 * Return: 0, -EINVAL (NULL @dev), -EPERM (a core is not this file's),
 * -EBUSY (a queue of this file is still on one), -EIO/-ENODEV.
 */
LIBNEURON_API int libneuron_core_release(libneuron_device *dev, uint64_t cores, uint64_t *owned);

/**
 * libneuron_device_read_events() - read the file's events: the edges of the
 * cores it owns (NOTIFIC overflow/error/threshold causes, ENGINE_STOPPED)
 * and the device-wide ones the driver sends it
 * (docs/decisions/0005-tenancy.md). Waits up to @timeout_ns for the first, then
 * takes what is queued, up to @max.
 * @timeout_ns: nanoseconds, rounded up to milliseconds; 0 does not wait;
 *	negative: no limit; values past INT_MAX ms wait INT_MAX ms and return 0
 *	if nothing came (never at once)
 *
 * Thread safety: the file has one event queue; each event goes to one reader.
 * Return: the number of events (0: none came in time), -EINVAL (NULL @dev or
 * @out, @max 0), -EBADF (read-only file), -ENODEV (the device was removed and
 * every event was read) or read()'s errno.
 */
LIBNEURON_API long libneuron_device_read_events(libneuron_device *dev, struct libneuron_event *out, size_t max,
						long long timeout_ns);

/**
 * libneuron_device_event_fd() - the descriptor that polls readable
 * (POLLIN) when an event is queued, for the caller's own poll loop (then
 * call libneuron_device_read_events() with timeout 0). Owned by @dev.
 *
 * Return: the descriptor, or -EINVAL (NULL @dev).
 */
LIBNEURON_API int libneuron_device_event_fd(const libneuron_device *dev);

/**
 * libneuron_engine_get_status() - NEURON_IOC_ENGINE_STATUS of one engine of any
 * core, also from a read-only file: an engine's state and program counter
 * are the device's progress, not a tenant's data
 * (docs/decisions/0005-tenancy.md). @out: filled on success
 *
 * Return: 0, -EINVAL (NULL @dev or @out, core or engine out of range),
 * -EIO/-ENODEV (the device was reset / removed).
 */
LIBNEURON_API int libneuron_engine_get_status(libneuron_device *dev, unsigned core, unsigned engine,
					  struct libneuron_engine_status *out);

/**
 * libneuron_engine_reset() - NEURON_IOC_ENGINE_RESET: stop the engine and
 * clear a fatal halt; a program it stops is reported as an ENGINE_STOPPED
 * event (cause NEURON_STOP_ENGINE_RESET) to the core's owner. Takes a free
 * core for this file.
 *
 * Return: 0, -EINVAL (NULL @dev, core or engine out of range), -EPERM
 * (another file owns the core), -EBADF (read-only file), -EIO/-ENODEV.
 */
LIBNEURON_API int libneuron_engine_reset(libneuron_device *dev, unsigned core, unsigned engine);

/**
 * libneuron_queue_get_info() - NEURON_IOC_NQ_INFO of the queue: HEAD, TAIL,
 * phase and loss counters as the driver sees them.
 * @out: filled on success
 *
 * Thread safety: as the other calls of a queue (one thread at a time).
 * Return: 0, -EINVAL (NULL @q or @out), -ENODEV (the device was removed or
 * reset) or another driver errno.
 */
LIBNEURON_API int libneuron_queue_get_info(const libneuron_queue *q, struct libneuron_queue_info *out);

/**
 * libneuron_queue_decode() - decode one record drained from @q with the
 * queue's number and the route its core had when the queue was made
 * (docs/decisions/0019-dge-metadata-route.md,
 * docs/decisions/0022-route-programmable.md): every kind right, DGE metadata
 * included, with no queue or route from the caller. @q: the queue @rec was
 * drained from @rec: the record
 * @out: filled on success
 *
 * No system call: the route is read once, when the queue is made (the
 * driver refuses a route change while the queue lives).
 * Return: 0, or -EINVAL (NULL @q, @rec or @out).
 */
LIBNEURON_API int libneuron_queue_decode(const libneuron_queue *q, const struct libneuron_record *rec,
					 struct libneuron_decoded *out);

/**
 * libneuron_core_get_route() - NEURON_IOC_NQ_ROUTE GET: the core's NOTIFIC
 * ROUTE word, one 4-bit software queue per enum neuron_notific_class
 * (NEURON_ROUTE_QUEUE(), docs/hardware.md#nq-routing); needs no ownership.
 * @dev: the device
 * @core: core index, < num_cores
 * @route: receives the word (NEURON_ROUTE_DEFAULT from a driver without
 *	NEURON_CAP_ROUTE)
 *
 * Return: 0, -EINVAL (NULL @dev or @route, @core out of range), -EBADF
 * (read-only), -EIO/-ENODEV.
 */
LIBNEURON_API int libneuron_core_get_route(libneuron_device *dev, unsigned core, uint32_t *route);

/**
 * libneuron_core_set_route() - NEURON_IOC_NQ_ROUTE SET: program which
 * software queue each class of the core's records goes to
 * (docs/decisions/0022-route-programmable.md). The core must be this file's (a
 * free one becomes it) and carry no queue of it: set the route first, then
 * make the queues. It is NEURON_ROUTE_DEFAULT again once the core is given up.
 * @dev: the device
 * @core: core index, < num_cores
 * @route: 4 bits per class, each a queue below queues_per_core (10); bits
 *	31..28 zero
 * @out: if not NULL, receives the word read back from the device
 *
 * Return: 0, -EINVAL (NULL @dev, @core or @route out of range;
 * libneuron_last_error() names it), -EPERM (another file owns the core),
 * -EBUSY (this file has a queue on the core), -EOPNOTSUPP (a driver without
 * NEURON_CAP_ROUTE and @route not the default), -EBADF (read-only),
 * -EIO/-ENODEV.
 */
LIBNEURON_API int libneuron_core_set_route(libneuron_device *dev, unsigned core, uint32_t route, uint32_t *out);

/* ---- Since 1.1 (LIBNEURON_1.1): the whole job from C ---- */

/*
 * Sized structs. A struct that may grow in a later 1.x starts with
 * `size_t size`, which the caller sets to sizeof the struct it was built
 * with (LIBNEURON_SIZED_INIT). The library reads only the bytes @size
 * covers (fields past it take their defaults), and writes only the bytes
 * @size covers; a caller built against a newer header that sets a field
 * this library does not know gets -E2BIG (those bytes must be zero).
 * A @size below sizeof(size_t) is -EINVAL.
 *
 * Fork (docs/decisions/0041-fork-in-libneuron.md): every handle belongs to
 * the process that made it. In a forked child every call on an inherited
 * handle fails with -ECHILD (libneuron_last_error() says so), and the
 * child's copies of the library's descriptors of the device no longer
 * hold the device: its cores, memory and queues stay the parent's and are
 * freed when the parent closes or exits. Closing or destroying an
 * inherited handle in the child frees only the child's memory.
 */
#define LIBNEURON_SIZED_INIT(type) { .size = sizeof(type) }

/** A program: the instructions of one or more engines (opaque; libneuron::Program). */
typedef struct libneuron_program libneuron_program;
/** What libneuron_execute() did: status, records, events (opaque). */
typedef struct libneuron_result libneuron_result;

/* libneuron_mem_alloc() flags */
#define LIBNEURON_MEM_FIXED 0x1u /* exactly at @fixed_offset or not at all (NEURON_MEM_F_FIXED) */

/**
 * libneuron_mem_alloc() - NEURON_IOC_MEM_ALLOC: @size bytes of device
 * memory for this open file (rounded up to NEURON_MEM_ALIGN), which the
 * file's programs' DGE_COPY instructions may read and write. Freed by
 * libneuron_mem_free() or the file's close. Man page libneuron_mem(3).
 */
LIBNEURON_API int libneuron_mem_alloc(libneuron_device *dev, uint64_t size, uint64_t fixed_offset, uint32_t flags,
				      uint64_t *offset);
/** libneuron_mem_free() - NEURON_IOC_MEM_FREE of an allocation at @offset. libneuron_mem(3). */
LIBNEURON_API int libneuron_mem_free(libneuron_device *dev, uint64_t offset);

/**
 * libneuron_program_assemble() - assemble @len bytes of `.nq` text
 * (docs/program-syntax.md); @name names it in errors. libneuron_program(3).
 */
LIBNEURON_API int libneuron_program_assemble(const char *text, size_t len, const char *name,
					     libneuron_program **out);
/** libneuron_program_assemble_file() - read and assemble a `.nq` file. libneuron_program(3). */
LIBNEURON_API int libneuron_program_assemble_file(const char *path, libneuron_program **out);
/** libneuron_program_create() - an empty program, for libneuron_program_add(). libneuron_program(3). */
LIBNEURON_API int libneuron_program_create(libneuron_program **out);
/**
 * libneuron_program_add() - add @count encoded instructions
 * (include/uapi/linux/neuron_isa.h) as the program of @engine of @core.
 * libneuron_program(3).
 */
LIBNEURON_API int libneuron_program_add(libneuron_program *prog, unsigned core, unsigned engine,
					const struct neuron_emu_insn *insns, size_t count);
/** libneuron_program_free() - free a program (NULL is fine). libneuron_program(3). */
LIBNEURON_API void libneuron_program_free(libneuron_program *prog);

/** One record a run drained, and where it came from. */
struct libneuron_exec_record {
	uint32_t core;
	uint32_t queue;
	struct libneuron_record raw;
};

/* struct libneuron_exec_options @flags */
#define LIBNEURON_EXEC_NO_TRACE 0x1u	     /* no INST_START/INST_END records */
#define LIBNEURON_EXEC_HALT_ENDS_WAIT 0x2u   /* a fatal record ends its engine's wait */
#define LIBNEURON_EXEC_DROP_RECORDS 0x4u     /* keep no records in the result (on_record only) */

/**
 * struct libneuron_exec_options - how libneuron_execute() runs a program
 * (sized: set @size = sizeof). A zeroed struct with @size set gives the
 * defaults. libneuron_execute(3).
 * @size: sizeof(struct libneuron_exec_options)
 * @timeout_ms: completion budget, ms; 0: NEURON_RT_EXEC_TIMEOUT, else 5000;
 *	negative: no limit
 * @flags: LIBNEURON_EXEC_*
 * @queue_size: ring bytes per queue; 0: 4096
 * @queue_flags: NEURON_NQ_F_*
 * @cores: visible cores in NEURON_VISIBLE_CORES syntax ("0-1,3"); NULL: the variable, else all
 * @on_record: called for each record as it is drained, on the library's
 *	reap thread; a nonzero return stops the calls (the run goes on)
 * @arg: passed to @on_record
 */
struct libneuron_exec_options {
	size_t size;
	int64_t timeout_ms;
	uint32_t flags;
	uint32_t queue_size;
	uint32_t queue_flags;
	uint32_t reserved;
	const char *cores;
	int (*on_record)(void *arg, const struct libneuron_exec_record *rec);
	void *arg;
};

/**
 * struct libneuron_exec_summary - libneuron_result_summary() (sized).
 * @size: sizeof(struct libneuron_exec_summary)
 * @status: NRT status: 0 OK, 1 FAILURE, 5 TIMEOUT, 1004 COMPLETED_WITH_ERR,
 *	1204 SW_NQ_OVERFLOW, 2001 COMPLETED_THROTTLED (libneuron_exec_status_name())
 * @completed: 1: every engine's completion record arrived
 * @error: FAILURE / TIMEOUT: the errno of why (ETIMEDOUT for TIMEOUT); else 0
 * @callback_error: @on_record's first nonzero return, or -ECANCELED if it
 *	threw a C++ exception (the library caught it); 0 otherwise
 * @has_first_error: 1: @first_error holds the first error record
 * @records: records kept (libneuron_result_records())
 * @events: interrupt edges seen meanwhile (libneuron_result_events())
 * @lost: records lost to overflow; @device_lost: lost per NQ_INFO
 * @throttle_records: throttle records drained
 * @cores_acquired: cores the run acquired (and released)
 * @elapsed_ns: wall time of the run
 * @first_error: the first error record, if @has_first_error
 */
struct libneuron_exec_summary {
	size_t size;
	int32_t status;
	uint32_t completed;
	int32_t error;
	int32_t callback_error;
	uint32_t has_first_error;
	uint32_t reserved;
	uint64_t records;
	uint64_t events;
	uint64_t lost;
	uint64_t device_lost;
	uint64_t throttle_records;
	uint64_t cores_acquired;
	uint64_t elapsed_ns;
	struct libneuron_exec_record first_error;
};

/**
 * libneuron_execute() - run @prog on @dev and wait for it (the C++
 * neuron::execute(): queues, cores, memory, submit, completion, cleanup).
 * libneuron_execute(3).
 */
LIBNEURON_API int libneuron_execute(libneuron_device *dev, const libneuron_program *prog,
				    const struct libneuron_exec_options *opt, libneuron_result **out);
/** libneuron_result_summary() - the run's status and counts. libneuron_execute(3). */
LIBNEURON_API int libneuron_result_summary(const libneuron_result *res, struct libneuron_exec_summary *out);
/** libneuron_result_records() - copy records @first.. of the run (drain order). libneuron_execute(3). */
LIBNEURON_API long libneuron_result_records(const libneuron_result *res, size_t first,
					    struct libneuron_exec_record *out, size_t max);
/** libneuron_result_decode() - record @index of the run, decoded with its queue and route. libneuron_execute(3). */
LIBNEURON_API int libneuron_result_decode(const libneuron_result *res, size_t index, struct libneuron_decoded *out);
/** libneuron_result_events() - copy events @first.. seen during the run. libneuron_execute(3). */
LIBNEURON_API long libneuron_result_events(const libneuron_result *res, size_t first, struct libneuron_event *out,
					   size_t max);
/** libneuron_result_error() - why a FAILURE or TIMEOUT ("" otherwise); valid while @res lives. */
LIBNEURON_API const char *libneuron_result_error(const libneuron_result *res);
/** libneuron_result_free() - free a result (NULL is fine). */
LIBNEURON_API void libneuron_result_free(libneuron_result *res);
/** libneuron_exec_status_name() - "OK", "TIMEOUT", ...; "UNKNOWN" for another value. Never fails. */
LIBNEURON_API const char *libneuron_exec_status_name(int status);

/**
 * libneuron_queue_for_each() - hand up to @max fresh records to @fn in
 * place (zero copy: @rec points into the ring, valid during the call
 * only), then give their slots back. A nonzero return from @fn stops after
 * that record. Backpressured queues only. libneuron_queue(3).
 */
LIBNEURON_API long libneuron_queue_for_each(libneuron_queue *q,
					    int (*fn)(void *arg, const struct libneuron_record *rec), void *arg,
					    size_t max);
/**
 * libneuron_queue_wait_any() - sleep on @n queues at once and return the
 * records of one (*@index), starting the search at @start % @n.
 * libneuron_queue(3).
 */
LIBNEURON_API long libneuron_queue_wait_any(libneuron_queue *const *queues, size_t n, size_t start,
					    struct libneuron_record *out, size_t max, long long timeout_ns,
					    size_t *index, uint64_t *lost);

/**
 * libneuron_last_error() - what the last failing call of this thread asked
 * for and why it failed ("" if none failed yet). Valid until the thread's
 * next failing call.
 */
LIBNEURON_API const char *libneuron_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBNEURON_NEURON_H */
