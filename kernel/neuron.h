/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nnq.ko private definitions: the per-device and per-file state shared by
 * the driver's files. Layouts of registers, records and the ioctl ABI are
 * not defined here; they come from include/
 * (docs/decisions/0001-original-architecture.md#arch-parts).
 *
 * Lifetimes (neuron_device.c, neuron_lifecycle.c):
 *
 *   struct neuron_device  kref: one for the bound PCI function (dropped at
 *                         the end of remove()), one per open file, one per
 *                         running generic netlink request. Hardware
 *                         resources are never tied to it: remove() frees
 *                         rings, DMA memory and vectors before it returns.
 *   struct neuron_file    one per open(); freed in release(). The VFS only
 *                         calls release() once every mapping of the file is
 *                         gone (each VMA holds a reference on the file).
 *                         Its status page (neuron_status.c) lives and dies
 *                         with it: no removal or reset frees or zaps it.
 *   struct neuron_nq      owned by the device's queue table alone: freed
 *                         by NQ_DESTROY, by the release of its file, or by
 *                         the disable path (remove, reset, suspend, PCI
 *                         error). Mappings hold no reference on it.
 *   struct neuron_ring    a host ring's pages (neuron_nq.c allocates them,
 *                         neuron_mmap.c holds and frees them): kref, one for
 *                         the queue (the device's side: dropped once the
 *                         device no longer writes them and their DMA
 *                         mapping is gone) and one per VMA mapping them
 *                         (vm_ops open/close). Freed by the last put, so
 *                         they stay readable until the last munmap
 *                         (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset).
 *                         BAR-backed mappings (device rings, doorbells)
 *                         are zapped at teardown and then fault in a
 *                         harmless page (neuron_mmap.c).
 *
 * Locking, outermost first:
 *
 *   mmap_lock (VFS, held around ->mmap and ->fault)
 *   neuron_device.rwsem  read: every entry point that touches the hardware
 *                        (ioctl, mmap, fault, release); write: the disable
 *                        path, to set @dead or @offline once the calls
 *                        inside have left. No user copy is done while it
 *                        is held.
 *   neuron_device.lock   mutex: the queue table, queue registers, engine
 *                        submitters, core owners and their grants,
 *                        device-memory allocations, the list of open
 *                        files, the stopped-program counts. Taken inside
 *                        mmap_lock by the fault handler; user mappings are
 *                        zapped (unmap_mapping_range()) while it is held.
 *                        A program the driver stops is reported while it
 *                        is held (neuron_events_engines_stopped(): ev_lock
 *                        inside it, then a netlink message whose
 *                        allocation may sleep), so no stop goes unreported.
 *   neuron_device.ev_lock spinlock: the event subscribers (open files),
 *                        their event queues, the owner each core's
 *                        NOTIFIC edges go to, and the eventfds bound to
 *                        queues. Taken by the interrupt threads, read(),
 *                        poll() and, nested inside &neuron_device.lock,
 *                        by queue teardown. Never held across a user copy
 *                        or anything that sleeps.
 *   neuron_device.irq_lock spinlock: interrupt counters and the interrupt
 *                        storm state (the causes masked for a storm, and
 *                        INTR_MASK writes while the vectors are in use).
 *                        Taken alone, never nested with ev_lock.
 *   neuron_device.ts_lock spinlock: the TIMESTAMP_LO/HI register pair of
 *                        every core (reading LO latches HI, so two readers
 *                        must not interleave). Taken alone, inside the
 *                        rwsem, by NEURON_IOC_TIMESTAMP only.
 *
 * Interrupts are threaded (neuron_irq.c): the handlers run in process
 * context but take only ev_lock and irq_lock, never rwsem or lock, so
 * remove() may free them (free_irq() waits for a running thread) without
 * deadlock. The storm work item (neuron_irq.c) takes only irq_lock as well
 * and is cancelled by neuron_irq_fini() before the BARs go away. The
 * per-file event queue has its own mutex, nfile->ev_read_lock, that only
 * serialises readers of one file; it is taken before ev_lock.
 */
#ifndef NEURON_DRV_H
#define NEURON_DRV_H

#include <linux/atomic.h>
#include <linux/cdev.h>
#include <linux/dim.h>
#include <linux/genalloc.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/ratelimit.h>
#include <linux/rbtree.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/string_helpers.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <neuron/regs.h>
#include <neuron/notification.h>
#include <neuron/emu_isa.h>
#include <uapi/linux/neuron.h>

#include "neuron_mmap_layout.h"

#define NEURON_MAX_DEVICES	64

/*
 * Minor numbers (docs/decisions/0017-core-nodes.md): /dev/nnqN is minor N, as
 * before the core nodes; /dev/nnqN-coreC is minor NEURON_CORE_MINOR_BASE +
 * N * NEURON_MAX_CORES + C.
 */
#define NEURON_CORE_MINOR_BASE	NEURON_MAX_DEVICES
#define NEURON_MINORS		(NEURON_CORE_MINOR_BASE + \
				 NEURON_MAX_DEVICES * NEURON_MAX_CORES)

/*
 * Device memory (BAR4) layout,
 * docs/decisions/0001-original-architecture.md#arch-driver: the engines'
 * program areas sit at the top, one 64 KiB area per engine
 * (NEURON_MAX_PROGRAM_INSNS instructions of NEURON_EMU_INSN_BYTES), core c
 * engine e at prog_base + (c * 5 + e) * 64 KiB with prog_base = mem_size -
 * cores * 5 * 64 KiB. Device-memory rings come from [mem_size / 2, prog_base).
 */
#define NEURON_PROG_AREA_SIZE	NEURON_PROG_AREA_BYTES	/* UAPI: programs name their own bytes */

#define NEURON_MAX_VECTORS	NEURON_MSIX_VECTORS(NEURON_MAX_CORES)
#define NEURON_FAULT_BITS	32
#define NEURON_RESET_CAUSES	(NEURON_RESET_SHUTDOWN + 1)

/*
 * Event rate limit (docs/decisions/0008-event-ratelimit.md): THROTTLE and FAULT
 * events of one core and kind, at most @evlimit_burst per
 * @evlimit_interval_ms (sysfs event_ratelimit).
 */
enum neuron_evlimit_kind {
	NEURON_EVLIMIT_THROTTLE,
	NEURON_EVLIMIT_FAULT,
	NEURON_EVLIMIT_KINDS
};

#define NEURON_EVLIMIT_BURST_DEFAULT	16
#define NEURON_EVLIMIT_INTERVAL_MS_DEFAULT 1000
#define NEURON_EVLIMIT_INTERVAL_MS_MAX	3600000
/*
 * Devcoredumps of one core: at most one per interval (neuron_hang.c,
 * docs/decisions/0038-coredump-slot.md); twice devcoredump's own 5 min hold
 */
#define NEURON_COREDUMP_INTERVAL_MS_DEFAULT	600000
#define NEURON_COREDUMP_INTERVAL_MS_MAX		86400000

/**
 * struct neuron_evlimit - rate limit state of one (core, kind)
 * @begin:	jiffies when the current interval began (its first event)
 * @used:	events reported in the current interval; 0: none begun
 * @pending:	edges suppressed since the last event reported
 *		(struct neuron_event.suppressed of the next one)
 */
struct neuron_evlimit {
	unsigned long begin;
	u32 used;
	u32 pending;
};

/**
 * enum neuron_irqlimit_kind - the interrupt sources a tenant's program
 *	drives, limited per core at the interrupt (neuron_irq.c,
 *	docs/decisions/0039-interrupt-ratelimit.md)
 * @NEURON_IRQLIMIT_THROTTLE: the throttle vector's edges of a core
 * @NEURON_IRQLIMIT_THRESHOLD: tpb_notific_intr_0 (THRESHOLD) edges of a core
 * @NEURON_IRQLIMIT_KINDS: number of kinds
 */
enum neuron_irqlimit_kind {
	NEURON_IRQLIMIT_THROTTLE,
	NEURON_IRQLIMIT_THRESHOLD,
	NEURON_IRQLIMIT_KINDS
};

#define NEURON_IRQLIMIT_BURST_DEFAULT		32
#define NEURON_IRQLIMIT_BURST_MAX		65536
#define NEURON_IRQLIMIT_INTERVAL_MS_DEFAULT	10
#define NEURON_IRQLIMIT_INTERVAL_MS_MAX		3600000

/**
 * struct neuron_irqlimit - interrupt budget of one (core, kind)
 * @begin:	jiffies when the current interval began (its first edge)
 * @used:	edges handled in it
 * @held:	the source is masked until @until
 * @until:	jiffies when the hold ends
 */
struct neuron_irqlimit {
	unsigned long begin;
	u32 used;
	bool held;
	unsigned long until;
};

/**
 * enum neuron_hw_error_cause - what went wrong, in the hardware error log
 * @NEURON_HWE_INTR_STORM: "intr-storm": a NOTIFIC cause asserted again at
 *	once after every clear (neuron_irq.c), or the device's own
 *	NEURON_FAULT_INTR_STORM
 * @NEURON_HWE_DMA_ERROR: "dma-error": a ring write to host memory failed
 *	(NEURON_FAULT_DMA_ERROR)
 * @NEURON_HWE_DEVICE_FAULT: "device-fault": a FAULT_STATUS bit with no
 *	name in the UAPI
 * @NEURON_HWE_HANG: "hang": an engine retired nothing for its core's hang
 *	timeout (neuron_hang.c)
 * @NEURON_HWE_ENGINE_HALTED: "engine-halted": an engine HALTED by a fatal
 *	error
 * @NEURON_HWE_QUEUE_STUCK: "queue-stuck": a queue did not confirm its
 *	disable; its ring is quarantined until the next reset
 * @NEURON_HWE_QUIESCE_TIMEOUT: "quiesce-timeout": the device did not
 *	report QUIESCED in the disable path
 * @NEURON_HWE_NOT_READY: "not-ready": the device did not report READY
 *	after a reset
 * @NEURON_HWE_PCI_NONFATAL: "pci-nonfatal": AER non-fatal error
 * @NEURON_HWE_PCI_FATAL: "pci-fatal": AER fatal error (frozen link)
 * @NEURON_HWE_PCI_PERMANENT: "pci-permanent": the PCI core gave the
 *	device up (permanent failure)
 * @NEURON_HWE_RECOVERY_FAILED: "recovery-failed": the enable path failed
 *	after a link reset, a function reset or a resume
 * @NEURON_HWE_DEVICE_GONE: "device-gone": the function reads all ones
 *	when the disable path begins (surprise removal)
 * @NEURON_HWE_CAUSES: number of causes
 *
 * docs/decisions/0014-hw-error-log.md has the same table; the names are the
 * log's and never change meaning.
 */
enum neuron_hw_error_cause {
	NEURON_HWE_INTR_STORM,
	NEURON_HWE_DMA_ERROR,
	NEURON_HWE_DEVICE_FAULT,
	NEURON_HWE_HANG,
	NEURON_HWE_ENGINE_HALTED,
	NEURON_HWE_QUEUE_STUCK,
	NEURON_HWE_QUIESCE_TIMEOUT,
	NEURON_HWE_NOT_READY,
	NEURON_HWE_PCI_NONFATAL,
	NEURON_HWE_PCI_FATAL,
	NEURON_HWE_PCI_PERMANENT,
	NEURON_HWE_RECOVERY_FAILED,
	NEURON_HWE_DEVICE_GONE,
	NEURON_HWE_CAUSES
};

/**
 * enum neuron_hw_error_action - what whoever runs the node does next
 * @NEURON_HWA_NONE: "none": the driver coped; the error is counted and,
 *	where a file can hear of it, reported as an event
 * @NEURON_HWA_CHECK_PROGRAM: "check-program": a program stopped making
 *	progress or hit a fatal error; its owner reads the devcoredump and
 *	resets the engine (ENGINE_RESET, or its release)
 * @NEURON_HWA_RESET_DEVICE: "reset-device": the device holds something
 *	back until its next function reset (sysfs reset)
 * @NEURON_HWA_REPLACE_DEVICE: "replace-device": the device is offline or
 *	gone until it is removed
 *
 * The last two are logged at KERN_ERR, the others at KERN_WARNING.
 */
enum neuron_hw_error_action {
	NEURON_HWA_NONE,
	NEURON_HWA_CHECK_PROGRAM,
	NEURON_HWA_RESET_DEVICE,
	NEURON_HWA_REPLACE_DEVICE,
};

/* core= or engine= of a hardware error that concerns no core or engine */
#define NEURON_HW_ERROR_NA	U32_MAX

/*
 * mmap cookie types, see neuron_mmap.c and neuron_mmap_layout.h; the
 * status page is at the byte offset NEURON_STATUS_PAGE_OFFSET instead
 */
enum neuron_cookie_type {
	NEURON_COOKIE_RING = NEURON_LAYOUT_RING,
	NEURON_COOKIE_DOORBELL = NEURON_LAYOUT_DOORBELL,
};

struct neuron_device;
struct neuron_file;

/**
 * struct neuron_ring - the pages of a host-memory ring (neuron_nq.c)
 * @kref:	one for the queue, dropped when its teardown has unmapped the
 *		pages from the device (a quarantined ring's only after bus
 *		mastering is off), and one per VMA that maps them; the last
 *		put frees the pages
 * @pages:	the first of 1 << @order physically contiguous pages, zeroed
 *		at allocation and charged to the allocating task's memory cgroup
 * @order:	allocation order; @pages span PAGE_SIZE << @order bytes
 */
struct neuron_ring {
	struct kref kref;
	struct page *pages;
	unsigned int order;
};

/* the ioctl ABI, include/uapi/linux/, included by the .c files using it */
struct neuron_nq_init;
struct neuron_nq_id;
struct neuron_nq_info;
struct neuron_nq_coalesce;
struct neuron_nq_head;
struct neuron_timestamp;
struct neuron_submit;
struct neuron_engine_status;
struct neuron_engine_id;
struct neuron_feature_flags;
struct neuron_nq_eventfd;
struct neuron_evt_sem;
struct neuron_throttle;
struct neuron_cores;
struct neuron_core_grant;
struct neuron_hang_timeout;
struct neuron_mem_alloc;
struct neuron_mem_free;
struct neuron_event_size;
struct neuron_event;
struct neuron_status_page;
struct eventfd_ctx;
struct poll_table_struct;

/**
 * struct neuron_nq - one software notification queue (docs/hardware.md#notific)
 * @ndev:	device
 * @owner:	file that made the queue
 * @seq:	device-wide serial number of this queue; a mapping remembers
 *		the serial of the queue it was made for (neuron_mmap.c)
 * @core:	core (TPB) index
 * @queue:	software NQ index within the core's NOTIFIC block
 * @size:	ring bytes, a power of two
 * @alloc_size: bytes allocated (and mappable): PAGE_ALIGN(@size)
 * @flags:	NEURON_NQ_F_* from NEURON_IOC_NQ_INIT
 * @threshold:	records, 0 = off (the interrupt's count limit)
 * @coalesce_ns: the interrupt's time limit, ns after the first unread
 *		record, 0 = off (docs/device-model.md#coalescing)
 * @overflow_base: OVERFLOW_COUNT when the queue was enabled (the device
 *		counts since its reset; the ABI reports this queue's share)
 * @drop_base:	DROP_COUNT when the queue was enabled, likewise
 * @ring:	host ring: its pages (struct neuron_ring), or NULL once the
 *		queue dropped its reference (the teardown)
 * @dma_addr:	host ring: bus (IOVA) address of @ring's pages, from
 *		dma_map_page(), programmed into BASE
 * @mem_off:	device ring: BAR4 offset (neuron_mem_ring_alloc())
 * @quota:	device ring: the user record its bytes are charged to, a
 *		reference held until the ring is freed
 * @quarantine:	in &neuron_device.quarantine once the queue is torn down
 *		without the device confirming it off (neuron_nq.c)
 */
struct neuron_nq {
	struct neuron_device *ndev;
	struct neuron_file *owner;
	u64 seq;
	u32 core;
	u32 queue;
	u32 size;
	u32 alloc_size;
	u32 flags;
	u32 threshold;
	u32 coalesce_ns;
	u32 overflow_base;
	u32 drop_base;
	struct neuron_ring *ring;
	dma_addr_t dma_addr;
	u64 mem_off;
	struct neuron_quota *quota;
	struct list_head quarantine;
};

/* Profiles of adaptive moderation, DIM's net_dim index (neuron_dim.c). */
#define NEURON_DIM_LEVELS	5

/**
 * struct neuron_dim - adaptive interrupt moderation of one queue slot
 * @dim:	the DIM library's state; its work item programs a new profile
 * @ndev:	device (for the work item)
 * @core:	core of the slot
 * @queue:	queue of the slot
 * @on:		the slot's queue was made with NEURON_NQ_F_ADAPTIVE and no
 *		NQ_COALESCE has fixed its settings since
 * @seq:	&neuron_nq.seq of the queue the state belongs to
 * @budget_ns:	the latency budget (NQ_INIT's @coalesce_ns)
 * @entries:	the ring's records
 * @events:	threshold interrupts of the queue (DIM's event counter)
 * @tail:	TAIL at the last interrupt
 * @records:	records written, TAIL extended to 64 bits
 * @level:	the profile programmed, < NEURON_DIM_LEVELS
 * @threshold:	THRESHOLD of @level
 * @coalesce_ns: COALESCE_NS of @level
 * @changes:	profile changes programmed since the queue was made
 *
 * Everything but @dim.work is under &neuron_device.dim_lock; the slot is
 * reset (not freed) when its queue goes: the work item may still run and
 * then finds @on false or another @seq.
 */
struct neuron_dim {
	struct dim dim;
	struct neuron_device *ndev;
	u32 core;
	u32 queue;
	bool on;
	u64 seq;
	u32 budget_ns;
	u32 entries;
	u16 events;
	u32 tail;
	u64 records;
	u32 level;
	u32 threshold;
	u32 coalesce_ns;
	u64 changes;
};

/**
 * struct neuron_vector - one MSI-X vector and what it serves
 * @ndev:	device
 * @index:	vector index: a core for index < cores, then throttle, fault
 * @irq:	Linux IRQ number, 0 if not requested
 * @name:	"nnq<N>-core<c>", "nnq<N>-throttle" or "nnq<N>-fault"
 */
struct neuron_vector {
	struct neuron_device *ndev;
	u32 index;
	int irq;
	char name[32];
};

/**
 * struct neuron_device - one bound neuron-tpb PCI function
 * @kref:	see the lifetime notes at the top of this file
 * @pdev:	the PCI function; referenced until the last put
 * @id:		instance number N of /dev/nnqN, also the minor
 * @cdev:	character device (dynamically allocated, own lifetime)
 * @cdevice:	the class device of /dev/nnqN
 * @core_cdev:	character device of the core nodes /dev/nnqN-coreC, one
 *		minor per core (as @cdev)
 * @core_dev:	per core: the class device of /dev/nnqN-coreC, a child of
 *		@cdevice (neuron_cdev.c), or NULL
 * @regs:	BAR0 mapping (registers); valid only while !@dead
 * @mem:	BAR4 mapping (device memory); valid only while !@dead
 * @regs_phys:	BAR0 bus address, for the doorbell mappings
 * @mem_phys:	BAR4 bus address, for device ring mappings
 * @num_cores:	NEURON_REG_NUM_CORES
 * @gen:	enum neuron_gen
 * @mem_size:	device memory bytes (NEURON_REG_MEM_SIZE_*)
 * @prog_base:	BAR4 offset of the first engine program area
 * @timestamp_inc_ps: NEURON_NOTIFIC_TIMESTAMP_INC of core 0
 * @mem_pool:	allocator of device memory below @prog_base: tenants'
 *		allocations and device-memory rings (neuron_mem.c), or NULL
 * @mem_limit:	tenants may allocate BAR4 offsets [0, @mem_limit)
 * @mem_quota:	bytes of device memory one user may hold, allocations
 *		and device rings (sysfs mem_quota; written under
 *		&neuron_device.lock, read with READ_ONCE(); neuron_quota.c)
 * @quota_lock:	guards @quotas and each record's count; taken last
 * @quotas:	a struct neuron_quota per user with a file open or a device
 *		ring (neuron_quota.c)
 * @published:	open() and netlink may find the device (neuron_device.c)
 * @rwsem:	guards @dead and @offline, see the locking notes above
 * @dead:	set once by remove(); afterwards every call returns -ENODEV
 * @offline:	set by the disable path for a reset, suspend or PCI error,
 *		cleared when the device is enabled again; meanwhile calls
 *		return -EIO
 * @failed:	PCI error recovery gave up (neuron_dev_failed()): sysfs
 *		state "failed" until removal; cleared by the enable path
 * @enabled:	vectors requested and bus mastering on (neuron_lifecycle.c)
 * @reset_gen:	resets so far; a file opened before the latest one is stale
 * @nq_seq:	serial number of the last queue made
 * @reset_count: per enum neuron_reset_cause: times the queues were torn down
 * @reset_lost:	records unread in rings torn down by those resets
 * @lock:	queue table, queue/engine registers, @owner, @grant_cores,
 *		@grant_uid, @eng_owner, @eng_pid, @eng_comm, @programs_stopped,
 *		the busy times, @files and their device-memory allocations
 * @files:	open struct neuron_file, for zapping their mappings
 * @nq:		live queues by [core][queue]
 * @quarantine:	torn-down queues whose disable the device never confirmed:
 *		their rings are kept until bus mastering is off
 *		(docs/decisions/0011-reset-and-recovery.md#quarantine)
 * @quarantined_total: queues ever put there, since probe (sysfs)
 * @owner:	per core: the file that owns it, or NULL (neuron_owner.c)
 * @grant_cores: bit per core whose owner granted @grant_uid the right to
 *		submit detached programs (NEURON_IOC_CORE_GRANT)
 * @grant_uid:	per core: the uid of that grant, valid while its bit is set
 * @eng_owner:	the file a program on [core][engine] belongs to (the last
 *		submitter, or for a detached program the core's owner), or
 *		NULL; its engines are reset when it gives the core up
 * @programs_stopped: per [core][engine]: programs the driver stopped while
 *		RUNNING or WAITING (NEURON_EDGE_ENGINE_STOPPED), since probe
 * @eng_pid:	per [core][engine]: the thread group id, in the initial PID
 *		namespace, of the process that submitted the engine's last
 *		program (0: none since probe); for the hang log and uevents
 * @eng_comm:	per [core][engine]: that submitting thread's command name
 * @exec_base:	per [core][engine]: EXEC_COUNT when the core's owner took it
 *		(fdinfo, neuron_fdinfo.c)
 * @busy_total:	per [core][engine]: ns of the engine's closed busy
 *		intervals since probe (neuron_busy.c)
 * @busy_from:	per [core][engine]: ktime_get_ns() when the open interval
 *		began, 0 when none is open
 * @busy_base:	per [core][engine]: neuron_busy_ns() when the core's owner
 *		took it (fdinfo)
 * @nvec:	MSI-X vectors allocated
 * @vec:	per-vector state
 * @irq_lock:	guards the counters below
 * @intr_count:	per core, per tpb_notific_intr_N cause: edges seen
 * @threshold_count: per core, per queue: THRESHOLD_STATUS bits seen
 * @wrbuf_full_count: per core, per queue: WRBUF_FULL_STATUS bits seen
 *		(wr_buffer_full_N edges, N = queue)
 * @wrbuf_drop_count: per core, per queue: WRBUF_DROP_STATUS bits seen
 * @throttle_count: throttle edges seen (a THROTTLE_STATUS core bit each)
 * @throttle_edges: per core: throttle edges seen (struct neuron_event.count)
 * @fault_count: per NEURON_REG_FAULT_STATUS bit: faults seen
 * @spurious_count: interrupts with no status bit set
 * @notific_edges: per core: NOTIFIC summary edges handled (each one an event)
 * @fault_edges: device fault edges handled, and interrupt storms detected
 *		(each one an event)
 * @storm_masked: per core: tpb_notific_intr causes masked because they
 *		stormed, until @storm_work re-enables them
 * @storm_streak: per core: consecutive handler runs that used their whole
 *		re-read budget (a cause asserted again at once after each clear)
 * @storm_causes: per core: causes present in every read of the streak
 * @storm_count: per core: storms detected (each masked its causes once)
 * @storm_masks: per core, per tpb_notific_intr_N cause: storms that masked
 *		it (sysfs storm_masks; never intr_0)
 * @evlimit:	per [core][enum neuron_evlimit_kind]: the event rate limit
 * @evlimit_burst: events of one (core, kind) reported per interval
 * @evlimit_interval_ms: the interval
 * @ev_suppressed: per [core][kind]: events the rate limit kept back, since
 *		probe (sysfs events_suppressed)
 * @storm_stop:	set by neuron_irq_fini(): no cause is masked or re-enabled
 *		any more
 * @storm_work:	re-enables the masked causes after a hold-off
 * @irqlimit:	per [core][enum neuron_irqlimit_kind]: the interrupt budget
 * @irqlimit_burst: edges of one (core, kind) handled per interval; the
 *		last of them masks the source until the interval ends
 * @irqlimit_interval_ms: the interval (sysfs irq_ratelimit)
 * @irq_holds:	per [core][kind]: times the core's edges used up the
 *		budget and its source was masked (sysfs irq_holds)
 * @throttle_held: the throttle vector is disabled for a hold (the device
 *		has no per-core throttle mask)
 * @irq_hold_work: ends the holds whose interval is over
 * @ts_lock:	makes a TIMESTAMP_LO read and the TIMESTAMP_HI read that
 *		follows it one access (NEURON_IOC_TIMESTAMP)
 * @waitq:	woken by every interrupt edge and by remove() (read(), poll())
 * @ev_lock:	guards the lists and counters below, every file's event
 *		queue and @nq_efd
 * @ev_files:	subscribed files that see their own cores' NOTIFIC,
 *		ENGINE_STOPPED, THROTTLE and FAULT edges and every RESET and
 *		PCI_ERROR edge (struct neuron_file.ev_node)
 * @ev_watchers: subscribed files that see every edge (CAP_SYS_ADMIN)
 * @ev_owner:	per core: the owner its per-core edges go to, or NULL
 * @ev_edges:	edges delivered to files (sysfs event_fanout)
 * @ev_copies:	events queued for files by those edges
 * @nq_efd:	per [core][queue]: eventfd signalled on the queue's threshold
 *		interrupt (NEURON_IOC_NQ_EVENTFD), holding a reference, or NULL
 * @hang_work:	the hang scanner (neuron_hang.c): samples every engine
 *		each quarter of the smallest hang timeout while the device
 *		is in service; the fields below are under &neuron_device.lock
 * @hang_policy: enum neuron_hang_policy (sysfs hang_policy)
 * @hang_timeout_ms: per core: the owner's override, 0 = module default
 * @hang_timeout_client: per core: &neuron_file.client_id of the owner
 *		that set the override; it ends when the core changes hands
 * @hang_exec:	per [core][engine]: EXEC_COUNT at the last progress seen
 * @hang_since:	per [core][engine]: jiffies of that progress, 0 = the
 *		engine was not busy at the last sample
 * @hang_seen:	per [core][engine]: this stall (or halt) was reported
 * @hangs:	per [core][engine]: hangs reported since probe (sysfs hangs)
 * @coredumps:	devcoredumps taken since probe (sysfs hangs "coredumps")
 * @coredumps_skipped: dumps the per-core limit held back since probe
 *		(sysfs hangs "coredumps_skipped")
 * @coredump_interval_ms: at most one devcoredump per core per this many
 *		ms, 0 = no limit (sysfs coredump_interval_ms)
 * @coredump_at: per core: jiffies of its last devcoredump
 * @coredump_taken: per core: @coredump_at is set (since probe or the
 *		last write of coredump_interval_ms)
 * @hw_error_rs: per enum neuron_hw_error_cause: the rate limit of its log
 *		line (neuron_hw_error())
 */
struct neuron_device {
	struct kref kref;
	struct pci_dev *pdev;
	int id;
	struct cdev *cdev;
	struct device *cdevice;
	struct cdev *core_cdev;
	struct device *core_dev[NEURON_MAX_CORES];
	void __iomem *regs;
	void __iomem *mem;
	resource_size_t regs_phys;
	resource_size_t mem_phys;
	u32 num_cores;
	u32 gen;
	u64 mem_size;
	u64 prog_base;
	u32 timestamp_inc_ps;
	struct gen_pool *mem_pool;
	u64 mem_limit;
	u64 mem_quota;
	spinlock_t quota_lock;	/* guards quotas, taken last */
	struct list_head quotas;

	bool published;

	struct rw_semaphore rwsem;	/* guards dead, offline */
	u32 dead;
	u32 offline;
	u32 failed;
	bool enabled;
	u32 reset_gen;
	u64 nq_seq;
	u64 reset_count[NEURON_RESET_CAUSES];
	u64 reset_lost;

	struct mutex lock;		/* queue and engine state */
	struct list_head files;
	struct neuron_nq *nq[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];
	struct list_head quarantine;
	u64 quarantined_total;
	struct neuron_file *owner[NEURON_MAX_CORES];
	u64 grant_cores;
	kuid_t grant_uid[NEURON_MAX_CORES];
	struct neuron_file *eng_owner[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	u64 programs_stopped[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	pid_t eng_pid[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	char eng_comm[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE][TASK_COMM_LEN];
	u32 exec_base[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	u64 busy_total[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	u64 busy_from[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	u64 busy_base[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	/* AXI_DROPPED when the core's owner took it (neuron_owner.c) */
	u32 axi_dropped_base[NEURON_MAX_CORES];

	int nvec;
	struct neuron_vector vec[NEURON_MAX_VECTORS];

	spinlock_t irq_lock;		/* interrupt counters */
	/* adaptive moderation per queue slot (neuron_dim.c) */
	spinlock_t dim_lock;
	struct neuron_dim dim[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];
	u64 intr_count[NEURON_MAX_CORES][NEURON_NOTIFIC_INTR_BITS];
	u64 threshold_count[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];
	u64 wrbuf_full_count[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];
	u64 wrbuf_drop_count[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];
	u64 throttle_count;
	u64 throttle_edges[NEURON_MAX_CORES];
	u64 fault_count[NEURON_FAULT_BITS];
	u64 spurious_count;
	u64 notific_edges[NEURON_MAX_CORES];
	u64 fault_edges;
	u32 storm_masked[NEURON_MAX_CORES];
	u32 storm_streak[NEURON_MAX_CORES];
	u32 storm_causes[NEURON_MAX_CORES];
	u64 storm_count[NEURON_MAX_CORES];
	u64 storm_masks[NEURON_MAX_CORES][NEURON_NOTIFIC_INTR_BITS];
	struct neuron_evlimit evlimit[NEURON_MAX_CORES][NEURON_EVLIMIT_KINDS];
	u32 evlimit_burst;
	u32 evlimit_interval_ms;
	u64 ev_suppressed[NEURON_MAX_CORES][NEURON_EVLIMIT_KINDS];
	bool storm_stop;
	struct delayed_work storm_work;
	struct neuron_irqlimit irqlimit[NEURON_MAX_CORES][NEURON_IRQLIMIT_KINDS];
	u32 irqlimit_burst;
	u32 irqlimit_interval_ms;
	u64 irq_holds[NEURON_MAX_CORES][NEURON_IRQLIMIT_KINDS];
	bool throttle_held;
	struct delayed_work irq_hold_work;
	spinlock_t ts_lock;		/* TIMESTAMP_LO/HI pairs */
	wait_queue_head_t waitq;

	spinlock_t ev_lock;		/* event queues, bound eventfds */
	struct list_head ev_files;
	struct list_head ev_watchers;
	struct neuron_file *ev_owner[NEURON_MAX_CORES];
	u64 ev_edges;
	u64 ev_copies;
	struct eventfd_ctx *nq_efd[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];

	struct delayed_work hang_work;
	u32 hang_policy;
	u32 hang_timeout_ms[NEURON_MAX_CORES];
	u64 hang_timeout_client[NEURON_MAX_CORES];
	u32 hang_exec[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	unsigned long hang_since[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	bool hang_seen[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	u64 hangs[NEURON_MAX_CORES][NEURON_ENGINES_PER_CORE];
	u64 coredumps;
	u64 coredumps_skipped;
	u32 coredump_interval_ms;
	unsigned long coredump_at[NEURON_MAX_CORES];
	bool coredump_taken[NEURON_MAX_CORES];

	struct ratelimit_state hw_error_rs[NEURON_HWE_CAUSES];
};

/**
 * enum neuron_hang_policy - what the hang scanner does to a hung engine
 * @NEURON_HANG_REPORT: report it only (event, counter, uevent, dump)
 * @NEURON_HANG_RESET: report it, then reset the engine
 */
enum neuron_hang_policy {
	NEURON_HANG_REPORT = 0,
	NEURON_HANG_RESET = 1,
};

/**
 * struct neuron_file - state of one open() of /dev/nnqN or /dev/nnqN-coreC
 * @ndev:	device; the file holds a reference on it
 * @filp:	the VFS file, for its address_space when zapping mappings
 * @node_cores:	bit per core the file may name: every core of the device for
 *		a file of /dev/nnqN, only its core for one of /dev/nnqN-coreC
 *		(set at open, never changed; neuron_file_may_core())
 * @core_node:	opened through a core node: device-wide calls are refused
 *		(docs/decisions/0017-core-nodes.md)
 * @node:	in &neuron_device.files, under &neuron_device.lock
 * @ev_node:	in &neuron_device.ev_files or ev_watchers once subscribed,
 *		under &neuron_device.ev_lock
 * @ev_watch:	opened with CAP_SYS_ADMIN: sees every edge
 * @ev_buf:	the file's event queue, NEURON_EVENT_QUEUE_LEN events, or
 *		NULL until the file subscribes (neuron_events_subscribe())
 * @ev_head:	free-running index of the oldest queued event (ev_lock)
 * @ev_tail:	free-running index of the next free slot (ev_lock)
 * @ev_lost:	events dropped since the last one queued (ev_lock)
 * @ev_read_lock: serialises read() calls on this file and @ev_size changes
 * @ev_size:	bytes per event read() returns (NEURON_IOC_EVENT_SIZE)
 * @reset_gen:	&neuron_device.reset_gen when the file was opened
 * @ring_maps:	per [core][queue]: VMAs of this file mapping that queue's
 *		ring (NEURON_IOC_NQ_DESTROY refuses while nonzero)
 * @cores:	bit per core this file owns (&neuron_device.lock)
 * @owner_pid:	thread group that first acquired a core, for core_owners
 * @owner_comm:	its command name then
 * @mem_lock:	the file's allocations: taken by MEM_ALLOC, MEM_FREE and
 *		SUBMIT through this file, inside neuron_enter_file(), before
 *		&neuron_device.lock (neuron_mem.c,
 *		docs/decisions/0005-tenancy.md "memory and running programs")
 * @mem_blocks:	the file's device-memory allocations, an rbtree by offset
 *		(neuron_mem.c): changed with @mem_lock and
 *		&neuron_device.lock held, read with either
 * @mem_bytes:	bytes those allocations hold, as @mem_blocks
 * @quota:	the record of the file's user (f_cred's euid) its
 *		allocations and device rings are charged to (neuron_quota.c)
 * @status:	the file's status page (neuron_status.c): written at open
 *		and by the disable path's first step, freed at release
 * @dummy:	a zeroed page of the file's own, allocated by its first
 *		doorbell mmap() and freed at release: what a doorbell mapping
 *		shows once its queue is gone (neuron_mmap.c); NULL until then
 * @client_id:	unique number of the file, for fdinfo (neuron_fdinfo.c)
 */
struct neuron_file {
	struct neuron_device *ndev;
	struct file *filp;
	u64 node_cores;
	bool core_node;
	struct list_head node;
	struct list_head ev_node;
	bool ev_watch;
	struct neuron_event *ev_buf;
	u32 ev_head;
	u32 ev_tail;
	u32 ev_lost;
	struct mutex ev_read_lock;	/* readers of this file */
	u32 ev_size;
	u32 reset_gen;
	atomic_t ring_maps[NEURON_MAX_CORES][NEURON_NUM_SW_QUEUES];
	u64 cores;
	struct pid *owner_pid;
	char owner_comm[TASK_COMM_LEN];
	struct mutex mem_lock;	/* before neuron_device.lock */
	struct rb_root mem_blocks;
	u64 mem_bytes;
	struct neuron_quota *quota;
	struct neuron_status_page *status;
	struct page *dummy;
	u64 client_id;
};

/* ---- register access ---------------------------------------------------- */

#define NEURON_NOTIFIC_REG(c, r) \
	(NEURON_CORE_BASE(c) + NEURON_NOTIFIC_BASE + (r))
#define NEURON_NQ_REG(c, q, r) \
	(NEURON_CORE_BASE(c) + NEURON_NOTIFIC_BASE + NEURON_NQ_DESC(q) + (r))
#define NEURON_ENG_REG(c, e, r) \
	(NEURON_CORE_BASE(c) + NEURON_ENGINE_BASE(e) + (r))

static inline u32 neuron_rd(struct neuron_device *ndev, u32 off)
{
	return readl(ndev->regs + off);
}

static inline void neuron_wr(struct neuron_device *ndev, u32 off, u32 val)
{
	writel(val, ndev->regs + off);
}

/**
 * neuron_enter() - start a call that may touch the device
 * @ndev: device
 *
 * Takes &neuron_device.rwsem for reading; pair with neuron_exit() when it
 * returns 0. Never copy to or from user memory in between.
 *
 * Return: 0; -ENODEV once remove() has run; -EIO while the device is
 * offline for a reset, suspend or PCI error recovery.
 */
static inline int neuron_enter(struct neuron_device *ndev)
{
	down_read(&ndev->rwsem);
	if (ndev->dead || ndev->offline) {
		int ret = ndev->dead ? -ENODEV : -EIO;

		up_read(&ndev->rwsem);
		return ret;
	}
	return 0;
}

/**
 * neuron_enter_file() - neuron_enter() for a call made through a file
 * @nfile: the caller's file
 *
 * Return: as neuron_enter(), and -EIO when the file was opened before the
 * device's latest reset (its queues are gone;
 * docs/decisions/0011-reset-and-recovery.md).
 */
static inline int neuron_enter_file(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	int ret = neuron_enter(ndev);

	if (!ret && nfile->reset_gen != ndev->reset_gen) {
		up_read(&ndev->rwsem);
		ret = -EIO;
	}
	return ret;
}

/**
 * neuron_file_may_core() - whether a file may name a core
 * @nfile: the caller's file
 * @core: a core index, as the caller passed it (any value)
 *
 * A file of /dev/nnqN may name every core (the command itself checks the
 * range), one of /dev/nnqN-coreC only its own
 * (docs/decisions/0017-core-nodes.md).
 *
 * Return: true if @core is among &neuron_file.node_cores.
 */
static inline bool neuron_file_may_core(const struct neuron_file *nfile,
					u64 core)
{
	return core < NEURON_MAX_CORES && (nfile->node_cores & BIT_ULL(core));
}

/**
 * neuron_exit() - end a call started by a successful neuron_enter()
 * @ndev: device
 */
static inline void neuron_exit(struct neuron_device *ndev)
{
	up_read(&ndev->rwsem);
}

/**
 * neuron_nq_read_counts() - a live queue's overflow and drop counts
 * @nq: queue, live; called with &neuron_device.lock held on a live device
 * @overflow: out: records overwritten unread (ignore-full) since the queue
 *	was made
 * @drops: out: records dropped (DMA write error) since the queue was made
 *
 * The device's OVERFLOW_COUNT and DROP_COUNT count since device reset and
 * survive a queue's disable and re-enable (docs/device-model.md), and a
 * disabled queue's DROP_COUNT counts records routed to it while nobody owned
 * it. The counts reported for a queue (NEURON_IOC_NQ_INFO, generic netlink
 * GET_NQ) are therefore differences from the values read when it was
 * enabled, in u32 arithmetic like the registers.
 */
static inline void neuron_nq_read_counts(struct neuron_nq *nq, u32 *overflow,
					 u32 *drops)
{
	struct neuron_device *ndev = nq->ndev;
	u32 c = nq->core, q = nq->queue;

	lockdep_assert_held(&ndev->lock);
	*overflow = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_OVERFLOW_COUNT)) -
		    nq->overflow_base;
	*drops = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_DROP_COUNT)) -
		 nq->drop_base;
}

/**
 * neuron_engine_state_busy() - whether an engine state means a program runs
 * @state: enum neuron_engine_state, as NEURON_ENG_STATUS reads
 *
 * Return: true for RUNNING and WAITING: a reset now stops a program, which
 * the driver then counts and reports (neuron_events_engines_stopped()).
 */
static inline bool neuron_engine_state_busy(u32 state)
{
	return state == NEURON_ENGINE_RUNNING || state == NEURON_ENGINE_WAITING;
}

/*
 * A task's command name as the driver prints it (sysfs core_owners, the
 * hang log line and uevents): the name may hold any byte (PR_SET_NAME),
 * so every byte but printable ASCII (ESCAPE_NAP), and blank and backslash
 * besides (ESCAPE_APPEND with only " \\"), becomes "\xHH" (ESCAPE_HEX); a
 * reader may split on blanks and lines. Each byte takes at most 4, so a
 * name of TASK_COMM_LEN - 1 bytes at most 4 * (TASK_COMM_LEN - 1).
 */
#define NEURON_COMM_ESCAPED_LEN	(4 * (TASK_COMM_LEN - 1) + 1)

static inline void neuron_comm_escape(const char *comm,
				      char out[NEURON_COMM_ESCAPED_LEN])
{
	int n = string_escape_mem(comm, strnlen(comm, TASK_COMM_LEN), out,
				  NEURON_COMM_ESCAPED_LEN - 1,
				  ESCAPE_NAP | ESCAPE_APPEND | ESCAPE_HEX,
				  " \\");

	out[min_t(int, n, NEURON_COMM_ESCAPED_LEN - 1)] = '\0';
}

/*
 * Prototypes, grouped by file from the top of the call graph down: a file
 * calls only files listed below it (docs/architecture.md "Call direction").
 */

/* ---- neuron_pci.c ------------------------------------------------------- */
extern struct pci_driver neuron_pci_driver;

/* ---- neuron_recovery.c -------------------------------------------------- */
extern const struct pci_error_handlers neuron_err_handlers;
extern const struct dev_pm_ops neuron_pm_ops;

/* ---- neuron_lifecycle.c ------------------------------------------------- */
int neuron_dev_enable(struct neuron_device *ndev);
void neuron_dev_removing(struct neuron_device *ndev);
void neuron_dev_failed(struct neuron_device *ndev);
void neuron_dev_disable(struct neuron_device *ndev,
			enum neuron_reset_cause cause, bool hw_ok);

/* ---- neuron_cdev.c ------------------------------------------------------ */
int neuron_cdev_init(void);
void neuron_cdev_exit(void);
int neuron_cdev_register(struct neuron_device *ndev);
void neuron_cdev_unregister(struct neuron_device *ndev);

/* ---- neuron_irq.c ------------------------------------------------------- */
int neuron_irq_init(struct neuron_device *ndev);
void neuron_irq_fini(struct neuron_device *ndev);
void neuron_dim_init(struct neuron_device *ndev);
void neuron_dim_profile(u32 budget_ns, u32 entries, u32 level, u32 *threshold,
			u32 *coalesce_ns);
void neuron_dim_fini(struct neuron_device *ndev);
void neuron_dim_start(struct neuron_nq *nq, u32 budget_ns);
void neuron_dim_stop(struct neuron_nq *nq);
void neuron_dim_irq(struct neuron_device *ndev, u32 core, unsigned long queues);
bool neuron_dim_show(struct neuron_device *ndev, u32 core, u32 queue,
		     u32 *level, u32 *threshold, u32 *coalesce_ns, u64 *changes);
void neuron_irq_ratelimit_forget(struct neuron_device *ndev, u32 core);
void neuron_irq_release_all(struct neuron_device *ndev);
int neuron_irq_ioctl_throttle(struct neuron_file *nfile,
			      const struct neuron_throttle *arg);

/* ---- neuron_nq.c -------------------------------------------------------- */
u32 neuron_nq_stop_all(struct neuron_device *ndev, bool hw_ok, u64 *unread);
int neuron_nq_ioctl_init(struct neuron_file *nfile,
			 struct neuron_nq_init *arg);
int neuron_nq_ioctl_destroy(struct neuron_file *nfile,
			    const struct neuron_nq_id *arg);
int neuron_nq_ioctl_info(struct neuron_file *nfile,
			 struct neuron_nq_info *arg);
int neuron_nq_ioctl_coalesce(struct neuron_file *nfile,
			     const struct neuron_nq_coalesce *arg);
int neuron_nq_ioctl_head(struct neuron_file *nfile,
			 const struct neuron_nq_head *arg);
int neuron_nq_ioctl_route(struct neuron_file *nfile,
			  struct neuron_nq_route *arg);
void neuron_nq_release_file(struct neuron_file *nfile, bool hw);
void neuron_nq_teardown_all(struct neuron_device *ndev);

/* ---- neuron_mmap.c ------------------------------------------------------ */
u64 neuron_mmap_cookie(enum neuron_cookie_type type, u32 core, u32 queue);
int neuron_mmap(struct file *filp, struct vm_area_struct *vma);
void neuron_mmap_zap_queue(struct neuron_file *nfile, u32 core, u32 queue,
			   u32 ring_bytes);
void neuron_mmap_zap_all(struct neuron_device *ndev);
void neuron_mmap_release_file(struct neuron_file *nfile);
void neuron_ring_put(struct neuron_ring *ring);
u32 neuron_mmap_doorbell_size(void);

/* ---- neuron_engine.c ---------------------------------------------------- */
int neuron_engine_ioctl_submit(struct neuron_file *nfile,
			       const struct neuron_submit *arg);
int neuron_engine_ioctl_status(struct neuron_file *nfile,
			       struct neuron_engine_status *arg);
int neuron_engine_ioctl_reset(struct neuron_file *nfile,
			      const struct neuron_engine_id *arg);
int neuron_engine_ioctl_feature_flags(struct neuron_file *nfile,
				      struct neuron_feature_flags *arg);
void neuron_engine_stop_all(struct neuron_device *ndev, bool hw_ok);

/* ---- neuron_hang.c ------------------------------------------------------ */
void neuron_hang_init(struct neuron_device *ndev);
void neuron_hang_start(struct neuron_device *ndev);
void neuron_hang_stop(struct neuron_device *ndev);
u32 neuron_hang_period_ms(struct neuron_device *ndev);
int neuron_hang_ioctl_timeout(struct neuron_file *nfile,
			      struct neuron_hang_timeout *arg);

/* ---- neuron_evtsem.c ---------------------------------------------------- */
int neuron_evtsem_ioctl(struct neuron_file *nfile, struct neuron_evt_sem *arg);

/* ---- neuron_notify.c ---------------------------------------------------- */
int neuron_notify_ioctl_trigger(struct neuron_file *nfile,
				struct neuron_notify_trigger *arg);

/* ---- neuron_owner.c ----------------------------------------------------- */
int neuron_owner_claim(struct neuron_file *nfile, u32 core);
struct neuron_file *neuron_owner_of_program(struct neuron_file *nfile,
					    u32 core, bool detach);
int neuron_owner_ioctl_acquire(struct neuron_file *nfile,
			       struct neuron_cores *arg);
int neuron_owner_ioctl_release(struct neuron_file *nfile,
			       struct neuron_cores *arg);
int neuron_owner_ioctl_grant(struct neuron_file *nfile,
			     struct neuron_core_grant *arg);
void neuron_owner_release_file(struct neuron_file *nfile, bool hw);
void neuron_owner_forget_all(struct neuron_device *ndev);

/* ---- neuron_quota.c ----------------------------------------------------- */
struct neuron_quota;
int neuron_quota_open(struct neuron_file *nfile);
struct neuron_quota *neuron_quota_get(struct neuron_quota *q);
void neuron_quota_put(struct neuron_device *ndev, struct neuron_quota *q);
int neuron_quota_charge(struct neuron_device *ndev, struct neuron_quota *q,
			u64 bytes);
void neuron_quota_uncharge(struct neuron_device *ndev, struct neuron_quota *q,
			   u64 bytes);
ssize_t neuron_quota_show(struct neuron_device *ndev, char *buf);

/* ---- neuron_mem.c ------------------------------------------------------- */
int neuron_mem_init(struct neuron_device *ndev);
void neuron_mem_fini(struct neuron_device *ndev);
int neuron_mem_ring_alloc(struct neuron_device *ndev, u64 size, u64 *off);
void neuron_mem_ring_free(struct neuron_device *ndev, u64 off, u64 size);
int neuron_mem_ioctl_alloc(struct neuron_file *nfile,
			   struct neuron_mem_alloc *arg);
int neuron_mem_ioctl_free(struct neuron_file *nfile,
			  const struct neuron_mem_free *arg);

/**
 * struct neuron_mem_bad - the first range of a program its owner did not
 *	allocate (neuron_mem_check_program())
 * @insn:	instruction index
 * @what:	"source", "destination", "index table" or "index table, inside
 *		its destination,"
 * @at:		the range's BAR4 offset
 * @len:	its length, bytes
 * @err:	what the check returned: -EACCES (not the owner's memory) or
 *		-EINVAL (an index table inside its copy's destination)
 */
struct neuron_mem_bad {
	u32 insn;
	const char *what;
	u64 at;
	u64 len;
	int err;
};

int neuron_mem_check_program(struct neuron_file *nfile,
			     const struct neuron_emu_insn *insns, u32 count,
			     u64 prog_off, struct neuron_mem_bad *bad);
void neuron_mem_report_bad(struct neuron_file *nfile,
			   const struct neuron_mem_bad *bad);
void neuron_mem_release_file(struct neuron_file *nfile);
void neuron_mem_forget_all(struct neuron_device *ndev);

/* ---- neuron_events.c ---------------------------------------------------- */
int neuron_events_open(struct neuron_file *nfile);
int neuron_events_subscribe(struct neuron_file *nfile);
void neuron_events_set_owner(struct neuron_device *ndev, u32 core,
			     struct neuron_file *nfile);
void neuron_events_release(struct neuron_file *nfile);
ssize_t neuron_events_read(struct file *filp, char __user *buf, size_t len,
			   loff_t *ppos);
__poll_t neuron_events_poll(struct file *filp, struct poll_table_struct *wait);
void neuron_events_broadcast(struct neuron_device *ndev,
			     struct neuron_event *ev);
void neuron_events_engines_stopped(struct neuron_device *ndev, u32 core,
				   u32 engines, u32 cause);
int neuron_events_ioctl_eventfd(struct neuron_file *nfile,
				const struct neuron_nq_eventfd *arg);
int neuron_events_ioctl_size(struct neuron_file *nfile,
			     struct neuron_event_size *arg);
void neuron_events_unbind_nq(struct neuron_device *ndev, u32 core, u32 queue);

/* ---- neuron_genl.c ------------------------------------------------------ */
int neuron_genl_register(void);
void neuron_genl_unregister(void);
void neuron_genl_event(const struct neuron_event *ev);

/* ---- neuron_sysfs.c ----------------------------------------------------- */
extern const struct attribute_group *neuron_attr_groups[];
extern const struct attribute_group *neuron_core_attr_groups[];

/* ---- neuron_device.c ---------------------------------------------------- */
int neuron_id_alloc(struct neuron_device *ndev);
void neuron_id_publish(struct neuron_device *ndev);
void neuron_id_unpublish(struct neuron_device *ndev);
void neuron_id_free(struct neuron_device *ndev);
struct neuron_device *neuron_device_get_by_minor(unsigned int minor);
struct neuron_device *neuron_device_get_next(unsigned long *id);
bool neuron_device_table_empty(void);
void neuron_device_put(struct neuron_device *ndev);

/* ---- neuron_status.c ---------------------------------------------------- */
int neuron_status_open(struct neuron_file *nfile, u32 generation);
void neuron_status_release(struct neuron_file *nfile);
unsigned long neuron_status_pfn(const struct neuron_file *nfile);
void neuron_status_end(struct neuron_device *ndev, enum neuron_reset_cause cause);

/* ---- neuron_pause.c ----------------------------------------------------- */

/**
 * enum neuron_pause_step - the steps of the disable and enable paths a test
 *	may pause after (neuron_pause.c; the numbers are the module parameter
 *	pause_step's values, listed in
 *	docs/decisions/0011-reset-and-recovery.md#pause-points)
 * @NEURON_PAUSE_FENCED: every file's status page ended, device offline/dead
 * @NEURON_PAUSE_ENGINES_STOPPED: every engine reset
 * @NEURON_PAUSE_OWNERS_FORGOTTEN: every core free, every grant ended
 * @NEURON_PAUSE_QUEUES_STOPPED: every queue disabled in the device
 * @NEURON_PAUSE_QUIESCED: the device reported QUIESCED (or timed out)
 * @NEURON_PAUSE_ZAPPED: every ring and doorbell mapping zapped
 * @NEURON_PAUSE_BUS_MASTER_OFF: bus mastering cleared
 * @NEURON_PAUSE_VECTORS_FREED: MSI-X vectors freed
 * @NEURON_PAUSE_RINGS_FREED: every queue and its ring freed (or quarantined)
 * @NEURON_PAUSE_MEMORY_FORGOTTEN: every device-memory allocation freed
 * @NEURON_PAUSE_REPORTED: the RESET event sent
 * @NEURON_PAUSE_ENABLE_READY: enable: device ready, vectors requested,
 *	calls not yet let in
 * @NEURON_PAUSE_SUBMIT_CHECKED: not a reset's step: a SUBMIT has checked
 *	its program against its file's allocations and holds that file's
 *	mem_lock, not the device's lock (neuron_engine_ioctl_submit())
 * @NEURON_PAUSE_CDEV_GONE: not a reset's step: remove() has destroyed the
 *	class device and not yet run the disable path, so the hang scanner
 *	still runs (neuron_cdev_unregister())
 */
enum neuron_pause_step {
	NEURON_PAUSE_FENCED = 1,
	NEURON_PAUSE_ENGINES_STOPPED = 2,
	NEURON_PAUSE_OWNERS_FORGOTTEN = 3,
	NEURON_PAUSE_QUEUES_STOPPED = 4,
	NEURON_PAUSE_QUIESCED = 5,
	NEURON_PAUSE_ZAPPED = 6,
	NEURON_PAUSE_BUS_MASTER_OFF = 7,
	NEURON_PAUSE_VECTORS_FREED = 8,
	NEURON_PAUSE_RINGS_FREED = 9,
	NEURON_PAUSE_MEMORY_FORGOTTEN = 10,
	NEURON_PAUSE_REPORTED = 11,
	NEURON_PAUSE_ENABLE_READY = 12,
	NEURON_PAUSE_SUBMIT_CHECKED = 32,
	NEURON_PAUSE_CDEV_GONE = 33,
};

#ifdef NEURON_TEST_HOOKS
void neuron_pause(struct neuron_device *ndev, enum neuron_pause_step step);
#else
/* not a test build (kernel/Kbuild): no pause point, no module parameter */
static inline void neuron_pause(struct neuron_device *ndev,
				enum neuron_pause_step step)
{
}
#endif

/* ---- neuron_hw.c -------------------------------------------------------- */
bool neuron_hw_gone(struct neuron_device *ndev);
int neuron_hw_reset(struct neuron_device *ndev);
int neuron_hw_wait_quiesced(struct neuron_device *ndev);
int neuron_hw_queue_off(struct neuron_device *ndev, u32 core, u32 queue);
u32 neuron_hw_engine_reset(struct neuron_device *ndev, u32 core, u32 engine);
void neuron_hw_notify_off(struct neuron_device *ndev, u32 core);
void neuron_hw_core_scrub(struct neuron_device *ndev, u32 core);
void neuron_hw_scrub_all(struct neuron_device *ndev);
u32 neuron_hw_axi_dropped(struct neuron_device *ndev, u32 core);
void neuron_hw_error_init(struct neuron_device *ndev);
__printf(6, 7)
void neuron_hw_error(struct neuron_device *ndev, u32 core, u32 engine,
		     enum neuron_hw_error_cause cause,
		     enum neuron_hw_error_action action, const char *fmt, ...);
extern const char *const neuron_engine_names[NEURON_ENGINES_PER_CORE];

/* ---- neuron_fdinfo.c ---------------------------------------------------- */
struct seq_file;
void neuron_fdinfo_open(struct neuron_file *nfile);
void neuron_fdinfo_show(struct seq_file *m, struct file *filp);

/* ---- neuron_busy.c ------------------------------------------------------ */
void neuron_busy_start(struct neuron_device *ndev, u32 core, u32 engine);
void neuron_busy_update(struct neuron_device *ndev, u32 core, u32 engine,
			u32 state);
u64 neuron_busy_ns(struct neuron_device *ndev, u32 core, u32 engine);

/* ---- neuron_uapi.c ------------------------------------------------------ */
int neuron_bad_field(struct neuron_device *ndev, const char *cmd,
		     const char *field);
const char *neuron_reset_cause_name(u32 cause);

#endif /* NEURON_DRV_H */
