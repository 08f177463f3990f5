/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/nnqN userspace ABI: ioctls and mmap cookies of the neuron driver.
 *
 * Names (docs/decisions/0015-names.md): the module, its sysfs class and the
 * device nodes /dev/nnqN are NEURON_DEV_NAME, which shares no prefix with
 * AWS's driver (module "neuron", nodes /dev/neuronN), so both can be loaded
 * on one host.
 *
 * Conventions (docs/decisions/0001-original-architecture.md#arch-driver): ioctl
 * type NEURON_IOCTL_MAGIC (docs/decisions/0044-ioctl-type-1-0.md); structs with
 * explicit padding, little-endian like the host and the device; every reserved
 * field and unknown flag must be zero or the call fails with -EINVAL.
 *
 * Growing the ABI (docs/decisions/0010-uapi-growth.md): the size in a command
 * number (_IOC_SIZE) is the caller's struct size, and the kernel accepts any
 * size from the command's first release (NEURON_<NAME>_SIZE_VER0) up, the
 * copy_struct_from_user() convention of openat2() and clone3(): a smaller
 * struct is extended with zeros, a larger one is accepted if every byte the
 * kernel does not know is zero and refused with -E2BIG otherwise; out
 * fields are copied back up to the smaller of the two sizes. So a new field
 * is appended to its struct, never given a new command number, and a
 * program built against an older header keeps working. Optional features
 * are announced by NEURON_CAP_* bits in struct neuron_device_info, not by
 * NEURON_ABI_VERSION, which changes only if compatibility is ever broken
 * under one type byte (1.0's move from 0xBA to 0xBB broke it by the type
 * itself: an older caller's commands are -ENOTTY).
 *
 * Sizes are in bytes, counts in records (16 bytes) or instructions (32
 * bytes), times in picoseconds unless a name says otherwise.
 *
 * mmap: offsets are the opaque cookies NEURON_IOC_NQ_INIT returns, valid
 * only on the file that made the queue, MAP_SHARED, the exact length (ring:
 * size rounded up to struct neuron_device_info @page_size; doorbell:
 * @doorbell_size). No size or offset assumes 4 KiB pages: take them from
 * DEVICE_INFO (NEURON_CAP_PAGE_SIZE). A ring maps read-only:
 * PROT_WRITE, PROT_EXEC, or a later mprotect() adding them, fail with
 * -EACCES. A doorbell on a kernel whose pages are larger than the 4 KiB
 * doorbell stride (@doorbell_size 0) fails with -EOPNOTSUPP: write HEAD
 * with NEURON_IOC_NQ_HEAD. Anything else wrong fails with -EINVAL; after
 * the device is removed, -ENODEV. No access to an old mapping raises a
 * signal after a reset, NQ_DESTROY or a removal
 * (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset): a host ring
 * stays readable, with the records written before, until it is unmapped; a
 * device ring then reads zeros and a doorbell is a page of the file's own that
 * reaches no device. One offset needs no ioctl: NEURON_STATUS_PAGE_OFFSET maps the
 * calling file's own status page (struct neuron_status_page,
 * NEURON_CAP_STATUS_PAGE), with the same rules as a ring (MAP_SHARED,
 * exactly one page, @page_size bytes, read-only: -EACCES for PROT_WRITE
 * or PROT_EXEC), from any open file: one opened read-only, one left stale
 * by a reset and one of a removed device too. Neither a reset nor a removal
 * revokes it: it stays readable until it is unmapped.
 *
 * Errors common to every ioctl:
 *   -EFAULT  the argument pointer is bad
 *   -ENOTTY  unknown command (type, number or direction)
 *   -E2BIG   the caller's struct is larger than the kernel's and a byte
 *            beyond the kernel's is nonzero
 *   -EINVAL  the caller's struct is smaller than NEURON_<NAME>_SIZE_VER0
 *   -ENODEV  the device was removed while the file was open
 *   -EINVAL  a reserved field or unknown flag is nonzero, or a field is out
 *            of range (the kernel log names the field at debug level:
 *            enable with dyndbg="module neuron +p")
 *   -EBADF   the file was opened read-only: such a file may only call
 *            NEURON_IOC_DEVICE_INFO, NEURON_IOC_ENGINE_STATUS and
 *            NEURON_IOC_TIMESTAMP (mmap of anything but its status page
 *            gets -EACCES, read() and poll() -EBADF)
 *   -EPERM   the call names a core another open file owns (and, for a
 *            NEURON_SUBMIT_F_DETACH submit, did not grant to the uid the
 *            file was opened with), or (THROTTLE) the caller lacks
 *            CAP_SYS_ADMIN, or the file was opened through a core node
 *            /dev/nnqN-coreC and the call names another core or is
 *            device-wide (docs/decisions/0017-core-nodes.md has the table)
 *
 * Tenancy (docs/decisions/0005-tenancy.md): every core (TPB) belongs to at most
 * one open file at a time. A file acquires cores with
 * NEURON_IOC_CORE_ACQUIRE, or implicitly by the first call that needs
 * ownership of a core nobody owns: NQ_INIT, SUBMIT, ENGINE_RESET, a
 * FEATURE_FLAGS set, an EVT_SEM write. The owner alone makes queues,
 * submits, resets engines, writes semaphores, events and feature flags on
 * its cores; any other file gets -EPERM. One exception, granted by the
 * owner: NEURON_IOC_CORE_GRANT names one uid that may submit *detached*
 * programs (NEURON_SUBMIT_F_DETACH) to the owner's cores. A detached
 * program belongs to the core's owner, not to the file that submitted it:
 * its records go to the owner's queues, its DGE_COPY instructions may name
 * only the owner's device memory, and the submitter's close does not stop
 * it. Ownership ends with NEURON_IOC_CORE_RELEASE or the release of the
 * owning file (also after kill -9): its engines are stopped (detached
 * programs too), its grants, queues and device memory go, and the cores
 * are free at once. Every program the driver stops while it runs or waits
 * is counted (ENGINE_STATUS @programs_stopped, sysfs programs_stopped) and
 * reported as a NEURON_EDGE_ENGINE_STOPPED event; a device reset is
 * reported by NEURON_EDGE_RESET instead. DEVICE_INFO, ENGINE_STATUS and
 * semaphore or event reads stay open to every writable file; sysfs
 * core_owners shows each core's owner (PID and command). Device memory is
 * allocated per file (NEURON_IOC_MEM_ALLOC) and a program may only name
 * memory its file allocated, or, detached, its core owner's (SUBMIT:
 * -EACCES). docs/decisions/0005-tenancy.md,
 * docs/decisions/0024-submit-detach.md.
 *
 * Core nodes (NEURON_CAP_CORE_NODES, docs/decisions/0017-core-nodes.md): beside
 * /dev/nnqN the driver makes /dev/nnqN-coreC for each core C, created and
 * removed with the device. A file opened through one may name core C only:
 * every ioctl naming another core, and every device-wide one (THROTTLE),
 * fails with -EPERM, as does mmap of another core's ring or doorbell;
 * DEVICE_INFO reports the core in @file_cores. Otherwise such a file is an
 * ordinary one: the same ownership, release, reset and removal rules.
 * sysfs: /sys/class/nnq/nnqN-coreC/core holds C, its "device" link the
 * /dev/nnqN class device.
 */
#ifndef _UAPI_LINUX_NEURON_H
#define _UAPI_LINUX_NEURON_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "neuron_record.h"	/* records and device values: engines, gen, causes */

/* module, sysfs class and device node name: /dev/nnqN */
#define NEURON_DEV_NAME		"nnq"

#define NEURON_ABI_VERSION	1
/*
 * The ioctl type byte: 0xBB has no entry in the kernel's
 * Documentation/userspace-api/ioctl/ioctl-number.rst. 'N', the first
 * choice, is the USB scanner's and NVMe's; 0xBA, the second, became Live
 * Update's (docs/decisions/0044-ioctl-type-1-0.md). Commands of type 0xBA
 * (releases before 1.0) are -ENOTTY.
 */
#define NEURON_IOCTL_MAGIC	0xBB

/*
 * struct neuron_device_info.capabilities: optional features this driver
 * has. A caller checks the bit before it relies on the feature.
 */
#define NEURON_CAP_SIZED_ARGS	(1ull << 0) /* every ioctl takes older and newer struct sizes */
#define NEURON_CAP_TENANCY	(1ull << 1) /* CORE_ACQUIRE/RELEASE, MEM_ALLOC/FREE */
#define NEURON_CAP_EVENT_SIZE	(1ull << 2) /* NEURON_IOC_EVENT_SIZE; struct neuron_event.size */
#define NEURON_CAP_RESET_EVENTS	(1ull << 3) /* NEURON_EDGE_RESET and NEURON_EDGE_PCI_ERROR events */
#define NEURON_CAP_COALESCE	(1ull << 4) /* NQ_INIT/INFO coalesce_ns, NEURON_IOC_NQ_COALESCE */
#define NEURON_CAP_TIMESTAMP	(1ull << 5) /* NEURON_IOC_TIMESTAMP */
/*
 * NEURON_IOC_CORE_GRANT, NEURON_SUBMIT_F_DETACH, NEURON_EDGE_ENGINE_STOPPED
 * events and struct neuron_engine_status @programs_stopped
 */
#define NEURON_CAP_SUBMIT_GRANT	(1ull << 6)
/* every file's status page at NEURON_STATUS_PAGE_OFFSET (struct neuron_status_page) */
#define NEURON_CAP_STATUS_PAGE	(1ull << 7)
/*
 * struct neuron_device_info @page_size and @doorbell_size, NEURON_IOC_NQ_HEAD;
 * no mapping raises a signal after a reset or removal
 * (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset, #page-size)
 */
#define NEURON_CAP_PAGE_SIZE	(1ull << 8)
/*
 * NEURON_IOC_NQ_ROUTE; struct neuron_nq_info @route
 * (docs/decisions/0022-route-programmable.md)
 */
#define NEURON_CAP_ROUTE	(1ull << 9)
/*
 * per-core device nodes /dev/nnqN-coreC, struct neuron_device_info
 * @file_cores (docs/decisions/0017-core-nodes.md)
 */
#define NEURON_CAP_CORE_NODES	(1ull << 10)
/*
 * hang detection: NEURON_IOC_HANG_TIMEOUT, NEURON_EDGE_HANG events,
 * NEURON_STOP_HANG, struct neuron_event @pc (the event grew from 56 to 64
 * bytes), devcoredumps in the struct neuron_coredump_header format
 * (docs/decisions/0012-hang-detection.md)
 */
#define NEURON_CAP_HANG		(1ull << 11)
/*
 * struct neuron_notify_trigger @axi_dropped (the struct grew from 32 to 40
 * bytes) and sysfs axi_dropped: AXI_EVT_SEM records the device lost
 * (docs/decisions/0025-axi-dropped.md)
 */
#define NEURON_CAP_AXI_DROPPED	(1ull << 12)
/* NEURON_NQ_F_ADAPTIVE: the kernel has the DIM library (CONFIG_DIMLIB) */
#define NEURON_CAP_ADAPTIVE	(1ull << 13)

/*
 * The struct sizes of each command's first release: the smallest a caller
 * may pass (docs/decisions/0010-uapi-growth.md).
 */
#define NEURON_DEVICE_INFO_SIZE_VER0	80
#define NEURON_NQ_INIT_SIZE_VER0	56
#define NEURON_NQ_ID_SIZE_VER0		16
#define NEURON_NQ_INFO_SIZE_VER0	64
#define NEURON_SUBMIT_SIZE_VER0		32
#define NEURON_ENGINE_STATUS_SIZE_VER0	48
#define NEURON_ENGINE_ID_SIZE_VER0	16
#define NEURON_FEATURE_FLAGS_SIZE_VER0	24
#define NEURON_NQ_EVENTFD_SIZE_VER0	24
#define NEURON_EVT_SEM_SIZE_VER0	24
#define NEURON_THROTTLE_SIZE_VER0	16
#define NEURON_CORES_SIZE_VER0		24
#define NEURON_MEM_ALLOC_SIZE_VER0	32
#define NEURON_MEM_FREE_SIZE_VER0	16
#define NEURON_EVENT_SIZE_SIZE_VER0	16
#define NEURON_NOTIFY_TRIGGER_SIZE_VER0	32
#define NEURON_NQ_COALESCE_SIZE_VER0	24
#define NEURON_TIMESTAMP_SIZE_VER0	40
#define NEURON_CORE_GRANT_SIZE_VER0	32
#define NEURON_NQ_HEAD_SIZE_VER0	24
#define NEURON_NQ_ROUTE_SIZE_VER0	24
#define NEURON_HANG_TIMEOUT_SIZE_VER0	16

/* Limits of NEURON_IOC_NQ_INIT.size: a power of two in [MIN, MAX] bytes. */
#define NEURON_NQ_SIZE_MIN	64		/* 4 records */
#define NEURON_NQ_SIZE_MAX	(1u << 20)	/* 65536 records */
#define NEURON_MAX_PROGRAM_INSNS 2048		/* per NEURON_IOC_SUBMIT */
/*
 * Each engine's program area in device memory, bytes (room for
 * NEURON_MAX_PROGRAM_INSNS instructions): NEURON_IOC_SUBMIT loads the
 * program of engine e of core c at BAR4 offset mem_size - num_cores *
 * engines_per_core * NEURON_PROG_AREA_BYTES + (c * engines_per_core + e) *
 * NEURON_PROG_AREA_BYTES (struct neuron_device_info), so a program can
 * name its own bytes (docs/program-syntax.md#data).
 */
#define NEURON_PROG_AREA_BYTES	0x10000
/* Largest interrupt-coalescing time limit of a queue (coalesce_ns): 10 ms. */
#define NEURON_NQ_COALESCE_NS_MAX 10000000u

/**
 * struct neuron_device_info - NEURON_IOC_DEVICE_INFO (out)
 * @abi_version:	NEURON_ABI_VERSION
 * @vendor:		PCI vendor ID of the function (NEURON_PCI_VENDOR_ID,
 *			<linux/neuron_record.h>)
 * @device:		PCI device ID of the function (NEURON_PCI_DEVICE_ID)
 * @num_cores:		TPBs (cores); core indices run 0..num_cores - 1
 * @engines_per_core:	5: PE, ACT, POOL, DVE, SP
 * @queues_per_core:	10 software NQs per NOTIFIC block
 * @gen:		enum neuron_gen (<linux/neuron_record.h>)
 * @mem_size:		device memory (BAR4) bytes
 * @nq_size_min:	smallest ring NEURON_IOC_NQ_INIT accepts, bytes
 *			(NEURON_NQ_SIZE_MIN)
 * @nq_size_max:	largest ring NEURON_IOC_NQ_INIT accepts, bytes
 *			(NEURON_NQ_SIZE_MAX)
 * @max_program_insns:	instructions per NEURON_IOC_SUBMIT
 * @timestamp_inc_ps:	picoseconds per device timestamp tick
 * @mem_alloc_limit:	device memory offsets [0, @mem_alloc_limit) may be
 *			allocated with NEURON_IOC_MEM_ALLOC; above it lie the
 *			driver's rings and the engines' program areas
 * @capabilities:	NEURON_CAP_* bits
 * @page_size:		the kernel's page size in bytes (4096, 16384, 65536):
 *			the length of the status page mapping and the unit
 *			a ring's mapping length is rounded up to. Was
 *			reserved (zero) before NEURON_CAP_PAGE_SIZE: 0 means
 *			4096
 * @doorbell_size:	the length of a doorbell mapping in bytes: @page_size
 *			when a page holds one queue's doorbell alone (4 KiB
 *			pages), 0 when doorbells cannot be mapped (a larger
 *			page would show other queues' doorbells; write HEAD
 *			with NEURON_IOC_NQ_HEAD). Was reserved (zero) before
 *			NEURON_CAP_PAGE_SIZE; without the bit it is 4096
 * @file_cores:		bit c set: this file may name core c. Every core
 *			(bits 0..num_cores - 1) for a file of /dev/nnqN, one
 *			bit for a file of a core node /dev/nnqN-coreC: its
 *			core; any call naming another core, or a device-wide
 *			one, gets -EPERM there
 *			(docs/decisions/0017-core-nodes.md).
 *			Was reserved (zero on return) before
 *			NEURON_CAP_CORE_NODES: 0 means every core
 */
struct neuron_device_info {
	__u32 abi_version;
	__u16 vendor;
	__u16 device;
	__u32 num_cores;
	__u32 engines_per_core;
	__u32 queues_per_core;
	__u32 gen;
	__u64 mem_size;
	__u32 nq_size_min;
	__u32 nq_size_max;
	__u32 max_program_insns;
	__u32 timestamp_inc_ps;
	__u64 mem_alloc_limit;
	__u64 capabilities;
	__u32 page_size;
	__u32 doorbell_size;
	__u64 file_cores;
};

/* NEURON_IOC_NQ_INIT flags */
#define NEURON_NQ_F_DEVICE_MEM	(1u << 0) /* ring in device memory (BAR4), not host DMA memory */
#define NEURON_NQ_F_IGNORE_FULL	(1u << 1) /* lossy: overwrite when full; default backpressure */
/*
 * lossy: when the NOTIFIC input buffer is full, drop this queue's records
 * (wr_buffer_drop edge, the next record carries hardware_queue_overflow)
 * instead of stalling their producer; docs/device-model.md#wrbuf
 */
#define NEURON_NQ_F_WRBUF_DROP	(1u << 2)
/*
 * adaptive interrupt moderation (NEURON_CAP_ADAPTIVE): the driver sets the
 * queue's THRESHOLD and COALESCE_NS from the measured record rate (the
 * kernel's DIM library), within a latency budget: @coalesce_ns of NQ_INIT
 * (0 = NEURON_NQ_BUDGET_DEFAULT_NS); @threshold of NQ_INIT must be 0. An
 * NQ_COALESCE on the queue ends it (the hand setting stays);
 * docs/decisions/0047-adaptive-moderation.md
 */
#define NEURON_NQ_F_ADAPTIVE	(1u << 3)
#define NEURON_NQ_F_ALL		(NEURON_NQ_F_DEVICE_MEM | NEURON_NQ_F_IGNORE_FULL | \
				 NEURON_NQ_F_WRBUF_DROP | NEURON_NQ_F_ADAPTIVE)
/* NEURON_NQ_F_ADAPTIVE's latency budget when NQ_INIT's @coalesce_ns is 0 */
#define NEURON_NQ_BUDGET_DEFAULT_NS 1000000u

/**
 * struct neuron_nq_init - NEURON_IOC_NQ_INIT (in/out)
 * @core:	in: core index, < num_cores
 * @queue:	in: software NQ index, < queues_per_core
 * @size:	in: ring bytes, a power of two in [NEURON_NQ_SIZE_MIN, NEURON_NQ_SIZE_MAX]
 * @flags:	in: NEURON_NQ_F_*
 * @threshold:	in: unread records that raise tpb_notific_intr_0 (the count
 *		limit); 0 = no count limit (with @coalesce_ns 0 too, no
 *		threshold interrupt at all); at most size / 16
 * @ring_offset: out: mmap offset of the ring (read-only mapping, @size bytes)
 * @doorbell_offset: out: mmap offset of the queue's HEAD doorbell page
 *		(DEVICE_INFO @doorbell_size bytes, HEAD register at +0,
 *		read/write; not mappable when @doorbell_size is 0)
 * @reserved0:	in: must be zero (keeps @ring_offset 8-byte aligned)
 * @coalesce_ns: in: interrupt-coalescing time limit: the threshold
 *		interrupt is also raised @coalesce_ns nanoseconds after the
 *		first unread record, if @threshold was not reached by then;
 *		0 = no time limit (docs/device-model.md#coalescing); at most
 *		NEURON_NQ_COALESCE_NS_MAX. Was reserved (zero) in the first
 *		release.
 * @reserved1:	in: must be zero
 * @reserved:	in: must be zero
 *
 * Allocates the ring, programs the queue descriptor and enables the queue.
 * The queue belongs to the calling file until NEURON_IOC_NQ_DESTROY or the
 * file's release. Errors: -EINVAL (a field out of range), -EBUSY (queue
 * already initialised, by this or another file, or its previous ring is
 * quarantined until the next reset because the device never confirmed
 * that queue off), -ENOMEM (no ring memory,
 * or the caller's memory cgroup is at its limit), -EPERM (another file owns
 * the core).
 */
struct neuron_nq_init {
	__u32 core;
	__u32 queue;
	__u32 size;
	__u32 flags;
	__u32 threshold;
	__u32 reserved0;
	__u64 ring_offset;
	__u64 doorbell_offset;
	__u32 coalesce_ns;
	__u32 reserved1;
	__u64 reserved;
};

/**
 * struct neuron_nq_id - names a queue (NEURON_IOC_NQ_DESTROY, in)
 * @core:	core index, < num_cores
 * @queue:	software NQ index, < queues_per_core
 * @reserved:	must be zero
 *
 * Disables the queue and frees its ring; when the device does not confirm
 * the disable, the ring is quarantined (sysfs rings_quarantined) until the
 * next reset instead, and the call still succeeds.
 * Errors: -EINVAL (core/queue out of range), -ENOENT (no such queue made by
 * this file), -EBUSY (the ring is still mapped). A still-mapped doorbell
 * page does not block it; afterwards that page is a page of the file's own
 * (a write reaches no device;
 * docs/decisions/0011-reset-and-recovery.md#mapping-after-reset).
 */
struct neuron_nq_id {
	__u32 core;
	__u32 queue;
	__u64 reserved;
};

/**
 * struct neuron_nq_info - NEURON_IOC_NQ_INFO (in: core, queue; out: the rest)
 * @core:		in: core index, < num_cores
 * @queue:		in: software NQ index, < queues_per_core
 * @head:		HEAD: records the consumer has acknowledged, a
 *			free-running count (slot = count % entries)
 * @tail:		TAIL: records the device has written, a free-running
 *			count; unread records = @tail - @head
 * @phase:		phase bit the next record will carry
 * @size:		ring bytes
 * @flags:		NEURON_NQ_F_* the queue was made with
 * @threshold:		unread records that raise tpb_notific_intr_0; 0 = none
 * @overflow_count:	records overwritten unread (ignore-full), since
 *			NEURON_IOC_NQ_INIT
 * @drop_count:		records dropped (DMA error, full with no policy, the
 *			input buffer's drop policy NEURON_NQ_F_WRBUF_DROP),
 *			since NEURON_IOC_NQ_INIT
 *			(records routed to a disabled queue are nobody's)
 * @coalesce_ns:	the queue's coalescing time limit in nanoseconds; 0 =
 *			none (NEURON_IOC_NQ_INIT, NEURON_IOC_NQ_COALESCE). Was
 *			reserved (zero) in the first release.
 * @route:		out: the core's ROUTE word (one 4-bit queue number
 *			per enum neuron_notific_class, NEURON_ROUTE_QUEUE()),
 *			which decides the class of the records this queue
 *			gets; fixed while the queue lives (NEURON_IOC_NQ_ROUTE
 *			refuses SET on a core with a queue). In: ignored. Was
 *			@reserved1 (in: zero, out: zero) before
 *			NEURON_CAP_ROUTE
 * @reserved:		in: must be zero
 *
 * Errors: -EINVAL, -ENOENT (queue not initialised by this file).
 */
struct neuron_nq_info {
	__u32 core;
	__u32 queue;
	__u32 head;
	__u32 tail;
	__u32 phase;
	__u32 size;
	__u32 flags;
	__u32 threshold;
	__u64 overflow_count;
	__u64 drop_count;
	__u32 coalesce_ns;
	__u32 route;
	__u64 reserved;
};

/**
 * struct neuron_nq_head - NEURON_IOC_NQ_HEAD (in)
 * @core:	core index of a queue made by this file, < num_cores
 * @queue:	software NQ index of that queue, < queues_per_core
 * @head:	the new HEAD: records consumed, a free-running count, as a
 *		doorbell write gives it (the device ignores a HEAD beyond TAIL
 *		or behind TAIL - entries, docs/device-model.md)
 * @reserved0:	must be zero
 * @reserved:	must be zero
 *
 * Writes the queue's HEAD register, what a store to its doorbell mapping
 * does, for a kernel whose pages are larger than the doorbell stride
 * (DEVICE_INFO @doorbell_size 0,
 * docs/decisions/0011-reset-and-recovery.md#page-size); it works with any page
 * size. Errors: -EINVAL (a field out of range or reserved nonzero), -ENOENT (no
 * such queue made by this file), -EIO (stale file, device offline).
 */
struct neuron_nq_head {
	__u32 core;
	__u32 queue;
	__u32 head;
	__u32 reserved0;
	__u64 reserved;
};

/**
 * struct neuron_nq_coalesce - NEURON_IOC_NQ_COALESCE (in)
 * @core:	core index of a queue made by this file, < num_cores
 * @queue:	software NQ index of that queue, < queues_per_core
 * @threshold:	unread records that raise the queue's threshold interrupt
 *		(tpb_notific_intr_0); 0 = no count limit; at most the ring's
 *		entries (size / 16)
 * @coalesce_ns: nanoseconds after the first unread record at which the
 *		interrupt is raised if @threshold was not reached; 0 = no time
 *		limit; at most NEURON_NQ_COALESCE_NS_MAX
 * @reserved:	must be zero
 *
 * Changes a live queue's interrupt coalescing: "an interrupt after
 * @threshold unread records or @coalesce_ns after the first of them,
 * whichever comes first", re-armed by each accepted HEAD write; a HEAD
 * write that leaves records unread starts the time limit again, and the
 * interrupt fires only while records are unread
 * (docs/device-model.md#coalescing). The queue keeps running; no record is
 * lost or left without an interrupt by the change: records already unread
 * count toward the new limits at once. With both 0 the queue raises no
 * threshold interrupt (a busy-polled queue).
 * Errors: -EINVAL (core, queue, @threshold or @coalesce_ns out of range,
 * reserved), -ENOENT (the queue was not made by this file).
 */
struct neuron_nq_coalesce {
	__u32 core;
	__u32 queue;
	__u32 threshold;
	__u32 coalesce_ns;
	__u64 reserved;
};

/**
 * struct neuron_timestamp - NEURON_IOC_TIMESTAMP (in: core; out: the rest)
 * @core:	in: core index, < num_cores, whose NOTIFIC timestamp is read
 * @reserved0:	in: must be zero
 * @sys_before_ns: CLOCK_MONOTONIC nanoseconds just before the device read
 * @device_ps:	the device timestamp (the clock that stamps records,
 *		picoseconds, docs/hardware.md#timestamp)
 * @sys_after_ns: CLOCK_MONOTONIC nanoseconds just after the device read
 * @reserved:	in: must be zero
 *
 * One sample relating the device clock to CLOCK_MONOTONIC, read in the
 * kernel between two clock reads, like PTP_SYS_OFFSET_EXTENDED: the device
 * read happened somewhere in [@sys_before_ns, @sys_after_ns]. A caller that
 * wants the offset takes several samples and keeps the narrowest window.
 * Changes nothing, so any open file may call it (also a read-only one).
 * Errors: -EINVAL (core, reserved).
 */
struct neuron_timestamp {
	__u32 core;
	__u32 reserved0;
	__u64 sys_before_ns;
	__u64 device_ps;
	__u64 sys_after_ns;
	__u64 reserved;
};

/* NEURON_IOC_SUBMIT flags */
#define NEURON_SUBMIT_F_TRACE	(1u << 0) /* INST_START/INST_END around each insn */
/*
 * the program belongs to the core's owner, not to the submitting file
 * (NEURON_CAP_SUBMIT_GRANT; docs/decisions/0024-submit-detach.md)
 */
#define NEURON_SUBMIT_F_DETACH	(1u << 1)
#define NEURON_SUBMIT_F_ALL	(NEURON_SUBMIT_F_TRACE | NEURON_SUBMIT_F_DETACH)

/**
 * struct neuron_submit - NEURON_IOC_SUBMIT (in)
 * @core:		core index, < num_cores
 * @engine:		engine of the core, enum neuron_engine
 *			(<linux/neuron_record.h>), < engines_per_core
 * @count:		instructions, 1..NEURON_MAX_PROGRAM_INSNS
 * @flags:		NEURON_SUBMIT_F_*
 * @insns:		user pointer to @count struct neuron_emu_insn (32 bytes each)
 * @reserved:		must be zero
 *
 * Copies the program to the engine's area of device memory
 * (NEURON_PROG_AREA_BYTES) and starts it;
 * returns once it is started, not finished (records tell that).
 * Every DGE_COPY must read and write only device memory this file
 * allocated (NEURON_IOC_MEM_ALLOC), except that its source and its index
 * table may lie inside the submitted program itself, [area, area + @count *
 * 32) (the caller's own bytes: how a program brings constants into device
 * memory); otherwise nothing runs.
 *
 * NEURON_SUBMIT_F_DETACH: the program belongs to the core's owner. A file
 * that does not own the core may submit it when the owner granted the
 * file's uid the core (NEURON_IOC_CORE_GRANT; the uid is the effective uid
 * of the credentials the file was opened with). Its DGE_COPY ranges are
 * checked against the owner's allocations instead of the caller's; it
 * runs until it ends, the owner resets the engine, the owner gives the
 * core up (NEURON_IOC_CORE_RELEASE, close, exit), or the device is reset:
 * the submitting file's close does not stop it. From the owner itself, or
 * on a core nobody owns (which the call then takes, as without the flag),
 * the flag changes nothing.
 *
 * Errors: -EINVAL, -EFAULT, -EBUSY (engine running or waiting),
 * -EIO (engine halted on a fatal error: reset it first), -EPERM (another
 * file owns the core and, with NEURON_SUBMIT_F_DETACH, has not granted it
 * to this file's uid), -EACCES (a DGE_COPY names memory this file, or for
 * a detached program the core's owner, did not allocate; the kernel log
 * names the instruction index).
 */
struct neuron_submit {
	__u32 core;
	__u32 engine;
	__u32 count;
	__u32 flags;
	__u64 insns;
	__u64 reserved;
};

/**
 * struct neuron_engine_status - NEURON_IOC_ENGINE_STATUS (in: core, engine)
 * @core:		in: core index, < num_cores
 * @engine:		in: enum neuron_engine, < engines_per_core
 * @state:		enum neuron_engine_state
 * @pc:			index of the next instruction
 * @soft_reset_counter:	programs started on this engine
 * @last_error:		error_id of the last fatal error, 0xff if none
 * @exec_count:		instructions retired since probe
 * @programs_stopped:	out: programs the driver stopped on this engine
 *			while it was RUNNING or WAITING, since probe: each
 *			one also made a NEURON_EDGE_ENGINE_STOPPED event (a
 *			device reset is not counted here). Its value on input
 *			is ignored (it was the first word of @reserved, which
 *			came back zero); 0 from a driver without
 *			NEURON_CAP_SUBMIT_GRANT
 * @reserved:		in: must be zero
 *
 * Errors: -EINVAL.
 */
struct neuron_engine_status {
	__u32 core;
	__u32 engine;
	__u32 state;
	__u32 pc;
	__u32 soft_reset_counter;
	__u32 last_error;
	__u64 exec_count;
	__u64 programs_stopped;
	__u64 reserved;
};

/**
 * struct neuron_engine_id - NEURON_IOC_ENGINE_RESET (in)
 * @core:	core index, < num_cores
 * @engine:	enum neuron_engine, < engines_per_core
 * @reserved:	must be zero
 *
 * Stops the engine and clears a fatal halt. A program it stops while it
 * runs or waits, detached or not, is counted and reported
 * (NEURON_EDGE_ENGINE_STOPPED, cause NEURON_STOP_ENGINE_RESET). Errors:
 * -EINVAL, -EPERM (another file owns the core).
 */
struct neuron_engine_id {
	__u32 core;
	__u32 engine;
	__u64 reserved;
};

/**
 * struct neuron_feature_flags - NEURON_IOC_FEATURE_FLAGS (in/out)
 * @core:	in: core index
 * @op:		in: NEURON_FEATURE_OP_GET or NEURON_FEATURE_OP_SET
 * @flags:	SET in: NEURON_FEATURE_* bits (<linux/neuron_record.h>) written to
 *		NEURON_FEATURE_FLAGS (local register 38) of every engine of the
 *		core; GET out: the value of the core's PE engine
 * @reserved0:	in: must be zero
 * @reserved:	in: must be zero
 *
 * The host owns the register (docs/hardware.md#dge-feature-flags: "NRT is
 * responsible for updating this"). Bit 1 gates every DGE packet notification,
 * success and error (docs/hardware.md#rec-dge-metadata, #dge-gating).
 * Errors: -EINVAL (core, op, unknown bits), -EOPNOTSUPP (generation sunda has
 * no feature-flag register, docs/hardware.md#generations), -EPERM (SET:
 * another file owns the core).
 */
struct neuron_feature_flags {
	__u32 core;
	__u32 op;
	__u32 flags;
	__u32 reserved0;
	__u64 reserved;
};

#define NEURON_FEATURE_OP_GET	0
#define NEURON_FEATURE_OP_SET	1

/**
 * struct neuron_nq_eventfd - NEURON_IOC_NQ_EVENTFD (in)
 * @core:	core index of a queue made by this file, < num_cores
 * @queue:	software NQ index of that queue, < queues_per_core
 * @fd:		an eventfd to signal (by 1) on every threshold interrupt of
 *		the queue (tpb_notific_intr_0 with its THRESHOLD_STATUS bit),
 *		or -1 to unbind. Rebinding replaces the previous eventfd.
 * @reserved0:	must be zero
 * @reserved:	must be zero
 *
 * Lets a reaper sleep on the ring instead of spinning
 * (docs/hardware.md#completion: the comp_efd chain;
 * docs/decisions/0001-original-architecture.md#arch-driver). The queue's
 * THRESHOLD and coalesce_ns
 * (NEURON_IOC_NQ_INIT, NEURON_IOC_NQ_COALESCE) say when the interrupt comes
 * (docs/device-model.md#coalescing); a HEAD write re-arms it.
 * Errors: -EINVAL (range, reserved), -ENOENT (queue not made by this file),
 * -EBADF (@fd is not an open file), -EINVAL (@fd is not an eventfd).
 */
struct neuron_nq_eventfd {
	__u32 core;
	__u32 queue;
	__s32 fd;
	__u32 reserved0;
	__u64 reserved;
};

/* NEURON_IOC_EVT_SEM operations (docs/hardware.md#evt-sem-windows) */
enum neuron_evt_sem_op {
	NEURON_SEM_READ = 0,		/* value = semaphore */
	NEURON_SEM_SET = 1,		/* semaphore = value */
	NEURON_SEM_INC = 2,		/* semaphore += value */
	NEURON_SEM_DEC = 3,		/* semaphore -= value */
	NEURON_EVENT_READ = 4,		/* value = event (0 or 1) */
	NEURON_EVENT_SET = 5,		/* event = 1 */
	NEURON_EVENT_CLEAR = 6		/* event = 0 */
};

/**
 * struct neuron_evt_sem - NEURON_IOC_EVT_SEM (in/out)
 * @core:	core index
 * @index:	semaphore or event, 0..255
 * @op:		enum neuron_evt_sem_op
 * @value:	in: operand of SET/INC/DEC; out: value after the operation
 * @reserved:	in: must be zero
 *
 * Host access to the core's EVT_SEM unit. Engines blocked in WAIT_GE or
 * WAIT_GE_AND_DEC on the semaphore are woken by the device. A write makes
 * one AXI_EVT_SEM record while the core's AXI_EVT_SEM notification is armed
 * (NEURON_IOC_NOTIFY_TRIGGER).
 * Errors: -EINVAL (core, index, op, reserved), -EPERM (SET, INC, DEC,
 * EVENT_SET, EVENT_CLEAR: another file owns the core).
 */
struct neuron_evt_sem {
	__u32 core;
	__u32 index;
	__u32 op;
	__u32 value;
	__u64 reserved;
};

/**
 * struct neuron_throttle - NEURON_IOC_THROTTLE (in)
 * @enable:	1: arm throttle notifications (records to the throttle class
 *		queue, NUM4, docs/hardware.md#throttle), 0: disarm. The
 *		throttle MSI-X edge is counted either way.
 * @reserved0:	must be zero
 * @reserved:	must be zero
 *
 * Arming is device-wide (the throttle class queue of every core), so it
 * needs CAP_SYS_ADMIN. Errors: -EINVAL (enable not 0/1, reserved), -EPERM
 * (no CAP_SYS_ADMIN).
 */
struct neuron_throttle {
	__u32 enable;
	__u32 reserved0;
	__u64 reserved;
};

/**
 * struct neuron_cores - NEURON_IOC_CORE_ACQUIRE, NEURON_IOC_CORE_RELEASE
 * @cores:	in: bit c names core c; bits at or above num_cores must be
 *		zero. 0 acquires or releases nothing (a query of @owned).
 * @owned:	out: the cores this file owns after the call
 * @reserved:	in: must be zero
 *
 * ACQUIRE takes every named core or none: cores this file already owns
 * are fine. Errors: -EINVAL (a bit >= num_cores, reserved), -EBUSY (a named
 * core is owned by another open file; nothing was acquired).
 *
 * RELEASE gives the named cores up: the engines of each are reset first,
 * so no program of this file (nor a detached one it holds) keeps running
 * there, each one stopped is reported (NEURON_EDGE_ENGINE_STOPPED, cause
 * NEURON_STOP_CORE_RELEASE), and the cores' grants end. Errors: -EINVAL,
 * -EPERM (a named core is not owned by this file), -EBUSY (this file still
 * has a queue on a named core: NEURON_IOC_NQ_DESTROY it first; nothing was
 * released).
 */
struct neuron_cores {
	__u64 cores;
	__u64 owned;
	__u64 reserved;
};

/* NEURON_IOC_CORE_GRANT operations */
#define NEURON_GRANT_OP_GRANT	0	/* @uid may submit detached programs to @cores */
#define NEURON_GRANT_OP_REVOKE	1	/* end the grants of @cores */

/**
 * struct neuron_core_grant - NEURON_IOC_CORE_GRANT (in/out)
 * @cores:	in: bit c names core c, which this file must own; bits at or
 *		above num_cores must be zero. 0 changes nothing (a query of
 *		@granted)
 * @op:		in: NEURON_GRANT_OP_GRANT or NEURON_GRANT_OP_REVOKE
 * @uid:	in: GRANT: the user ID, as the caller's user namespace names
 *		it, whose files may submit detached programs
 *		(NEURON_SUBMIT_F_DETACH) to the named cores; it replaces the
 *		uid an earlier grant named. REVOKE: must be zero
 * @granted:	out: the cores this file owns that carry a grant after the
 *		call
 * @reserved:	in: must be zero
 *
 * The owner of a core lets one uid (Linux's unit of trust) start programs
 * there that belong to the owner: their records reach the owner's queues,
 * their DGE_COPY ranges are checked against the owner's device memory,
 * and they outlive the submitting file (docs/decisions/0024-submit-detach.md).
 * The uid a SUBMIT is checked against is the effective uid of the
 * credentials its file was opened with, as for any permission that
 * travels with a file. A grant does not let anyone else make queues,
 * reset engines or write semaphores; a running detached program keeps
 * running when its grant is revoked. Grants end when the owner gives the
 * core up (NEURON_IOC_CORE_RELEASE, close, exit) and on a device reset.
 * Errors: -EINVAL (a bit >= num_cores, @op unknown, @uid not mapped in
 * the caller's user namespace or nonzero for REVOKE, reserved nonzero),
 * -EPERM (a named core is not owned by this file; nothing changed), -EIO
 * (stale file), -ENODEV (device removed).
 */
struct neuron_core_grant {
	__u64 cores;
	__u32 op;
	__u32 uid;
	__u64 granted;
	__u64 reserved;
};

/* NEURON_IOC_NOTIFY_TRIGGER sources (docs/device-model.md#dma-engines, #axi-evt-sem) */
enum neuron_trigger_source {
	NEURON_TRIGGER_DMA_QUEUE = 0,	/* a DMA queue's completions: DMA records */
	NEURON_TRIGGER_AXI_EVT_SEM = 1	/* host EVT_SEM writes: AXI_EVT_SEM records */
};

/**
 * struct neuron_notify_trigger - NEURON_IOC_NOTIFY_TRIGGER (in/out)
 * @core:	in: core index, < num_cores
 * @source:	in: enum neuron_trigger_source
 * @index:	in: NEURON_TRIGGER_DMA_QUEUE: the DMA queue, 0..15 (the queue of
 *		DMA engine @index, NEURON_DMA_ENGINES); NEURON_TRIGGER_AXI_EVT_SEM:
 *		must be 0
 * @enable:	in: 1 arms the notification, 0 disarms it
 * @dma_armed:	out: the core's armed DMA queues after the call, bit per queue
 * @axi_armed:	out: 1 if the core's AXI_EVT_SEM notification is on after
 *		the call, else 0
 * @reserved:	in: must be zero
 * @axi_dropped: out: AXI_EVT_SEM records the core lost since it became the
 *		caller's: host EVT_SEM writes that found the unit's one-record
 *		slot taken (its queue full with backpressure), the device's
 *		AXI_DROPPED counted from the claim on. In: ignored. Appended
 *		with NEURON_CAP_AXI_DROPPED (docs/decisions/0025-axi-dropped.md)
 * @reserved1:	in: must be zero
 *
 * Arms or disarms one completion notification of a core; all are off after
 * the device's reset and when the core's owner gives it up. An armed DMA
 * queue writes a DMA record (class NEURON_CLASS_DMA) each time its engine
 * finishes its packets of a DGE copy; the AXI_EVT_SEM notification writes
 * an AXI_EVT_SEM record (class NEURON_CLASS_EVT_SEM) with the new value for
 * every host write through the core's EVT_SEM windows (NEURON_IOC_EVT_SEM
 * SET, INC, DEC, EVENT_SET, EVENT_CLEAR). Behaviour:
 * docs/device-model.md#dma-engines, docs/device-model.md#axi-evt-sem.
 * Only the owner of the core may call it; a free core becomes the
 * caller's (docs/decisions/0005-tenancy.md). A call that changes nothing
 * (arming what is armed) is how an owner reads @axi_dropped.
 * Errors: -EINVAL (core, source, index, enable or a reserved field out of
 * range), -EPERM (another file owns the core).
 */
struct neuron_notify_trigger {
	__u32 core;
	__u32 source;
	__u32 index;
	__u32 enable;
	__u32 dma_armed;
	__u32 axi_armed;
	__u64 reserved;
	__u32 axi_dropped;
	__u32 reserved1;
};

/* NEURON_IOC_NQ_ROUTE operations */
#define NEURON_ROUTE_OP_GET	0	/* read the core's route */
#define NEURON_ROUTE_OP_SET	1	/* program the core's route */
/* the bits of a route word that name a class's queue (classes 0..6) */
#define NEURON_ROUTE_MASK	0x0fffffffu

/**
 * struct neuron_nq_route - NEURON_IOC_NQ_ROUTE (in/out)
 * @core:	in: core index, < num_cores
 * @op:		in: NEURON_ROUTE_OP_GET or NEURON_ROUTE_OP_SET
 * @route:	in (SET): the new route word: 4 bits per enum
 *		neuron_notific_class, class c in bits 4c+3..4c
 *		(NEURON_ROUTE_QUEUE()), each a software queue below
 *		queues_per_core; bits 31..28 (no class) zero. GET: must be
 *		zero. Out: the core's route after the call, read back from
 *		the device
 * @reserved0:	in: must be zero
 * @reserved:	in: must be zero
 *
 * Which software queue of the core each class of record goes to
 * (docs/hardware.md#nq-routing). A route is the core's, not an engine's:
 * all five engines of a core share it
 * (docs/decisions/0022-route-programmable.md). The core's owner sets it; a
 * free core becomes the caller's (docs/decisions/0005-tenancy.md). It is
 * NEURON_ROUTE_DEFAULT after the device's reset and again whenever the core's
 * owner gives the core up (NEURON_IOC_CORE_RELEASE, close, exit), so every
 * owner starts from the default. SET is refused while the calling file has a
 * queue on the core: a queue's records keep the class they were routed with.
 * GET needs no ownership. Several classes may share a queue; the lowest class
 * routed to a queue names it for a decoder (libneuron queue_class()).
 * Errors: -EINVAL (@core, @op, @route: a class's queue at or above
 * queues_per_core or a bit above NEURON_ROUTE_MASK; @route nonzero for
 * GET; reserved nonzero), -EPERM (SET: another file owns the core), -EBUSY
 * (SET: this file has a queue on the core: NEURON_IOC_NQ_DESTROY it
 * first), -EIO (stale file), -ENODEV (device removed).
 */
struct neuron_nq_route {
	__u32 core;
	__u32 op;
	__u32 route;
	__u32 reserved0;
	__u64 reserved;
};

/* NEURON_IOC_MEM_ALLOC flags */
#define NEURON_MEM_F_FIXED	(1u << 0) /* place at @offset exactly, never elsewhere */
#define NEURON_MEM_F_ALL	NEURON_MEM_F_FIXED
#define NEURON_MEM_ALIGN	4096	/* offsets and sizes are multiples of this */

/**
 * struct neuron_mem_alloc - NEURON_IOC_MEM_ALLOC (in/out)
 * @size:	in: bytes of device memory, 1..mem_alloc_limit; rounded up to
 *		NEURON_MEM_ALIGN
 * @offset:	in (NEURON_MEM_F_FIXED): the BAR4 offset wanted, a multiple
 *		of NEURON_MEM_ALIGN, else must be zero; out: the BAR4 offset of
 *		the allocation
 * @flags:	in: NEURON_MEM_F_*
 * @reserved0:	in: must be zero
 * @reserved:	in: must be zero
 *
 * Allocates device memory for the calling file: DGE_COPY instructions it
 * submits may read and write it (docs/decisions/0005-tenancy.md). The memory
 * reads as zeros when it is handed out. It is freed by NEURON_IOC_MEM_FREE
 * or the file's release.
 * Errors: -EINVAL (size 0 or above mem_alloc_limit, offset misaligned or
 * beyond the limit, flags, reserved), -ENOMEM (no free range of that size),
 * -EBUSY (NEURON_MEM_F_FIXED: part of the range is allocated already).
 */
struct neuron_mem_alloc {
	__u64 size;
	__u64 offset;
	__u32 flags;
	__u32 reserved0;
	__u64 reserved;
};

/**
 * struct neuron_mem_free - NEURON_IOC_MEM_FREE (in)
 * @offset:	BAR4 offset NEURON_IOC_MEM_ALLOC returned to this file
 * @reserved:	must be zero
 *
 * Frees the allocation. Refused while a program of the file runs or waits
 * on any engine (it may name the allocation): wait for the engines or
 * reset them first. Errors: -EINVAL (reserved), -ENOENT (no allocation of
 * this file starts at @offset), -EBUSY (a program of the file is RUNNING
 * or WAITING).
 */
struct neuron_mem_free {
	__u64 offset;
	__u64 reserved;
};

/*
 * Events: read() on /dev/nnqN returns whole struct neuron_event records,
 * one per interrupt edge the driver handled, oldest first; it blocks unless
 * O_NONBLOCK (then -EAGAIN); poll() reports EPOLLIN when one is queued. Each
 * open file has its own queue of NEURON_EVENT_QUEUE_LEN events; when it is
 * full the oldest are kept and the count of dropped events is reported in
 * @lost of the next event read. read() with a buffer smaller than one event
 * fails with -EINVAL.
 *
 * Event size: read() returns each event as the first NEURON_EVENT_SIZE_VER0
 * (40) bytes of struct neuron_event, the layout of the first release, until
 * the file asks for more with NEURON_IOC_EVENT_SIZE; then each event is
 * that many bytes, zero beyond what the kernel fills, and @size says how
 * many bytes the kernel filled, so a reader built against a later header
 * knows which fields it got (docs/decisions/0010-uapi-growth.md). Generic
 * netlink events are attributes and carry the family version in their header.
 *
 * Which edges a file sees (docs/decisions/0005-tenancy.md): NOTIFIC,
 * ENGINE_STOPPED, THROTTLE and FAULT edges of the cores it owns
 * (ENGINE_STOPPED: owned when the program was stopped), and every RESET and
 * PCI_ERROR edge. A file opened by a process with CAP_SYS_ADMIN sees every
 * edge. THROTTLE and FAULT events are rate limited per core and kind
 * (docs/decisions/0008-event-ratelimit.md): past the limit an edge is counted
 * but not reported, and the next event of that core and kind that is
 * reported says in @suppressed how many were not. The event queue is
 * allocated, and charged to the caller's memory cgroup, when the file first
 * acquires a core or first calls read() or poll(); a file that does neither
 * costs the interrupt threads nothing.
 */
#define NEURON_EVENT_QUEUE_LEN	256

enum neuron_edge {
	NEURON_EDGE_NOTIFIC = 0,	/* a core's tpb_notific_intr_0..8 summary vector */
	NEURON_EDGE_THROTTLE = 1,	/* the throttle (HAM) vector */
	NEURON_EDGE_FAULT = 2,		/* the device fault vector */
	NEURON_EDGE_RESET = 3,		/* queues were torn down: enum neuron_reset_cause */
	NEURON_EDGE_PCI_ERROR = 4,	/* AER reported an error: enum neuron_pci_error */
	NEURON_EDGE_ENGINE_STOPPED = 5,	/* a running program stopped: enum neuron_stop_cause */
	NEURON_EDGE_HANG = 6		/* an engine retired nothing for its core's hang timeout */
};

/*
 * Why the driver tore every queue down (NEURON_EDGE_RESET @cause). Files
 * open before the reset get -EIO from every call but DEVICE_INFO,
 * ENGINE_STATUS, TIMESTAMP and read(); their ring and doorbell mappings
 * raise no signal
 * (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset). A file
 * opened afterwards works normally (docs/decisions/0011-reset-and-recovery.md).
 */
enum neuron_reset_cause {
	NEURON_RESET_REMOVE = 1,	/* unbind, hot-unplug or surprise removal */
	NEURON_RESET_FLR = 2,		/* function reset (sysfs reset, FLR) */
	NEURON_RESET_PCI_ERROR = 3,	/* AER recovery reset the link */
	NEURON_RESET_SUSPEND = 4,	/* system suspend or hibernation */
	NEURON_RESET_SHUTDOWN = 5	/* system shutdown or kexec */
};

/*
 * Why the driver stopped a program that was running or waiting
 * (NEURON_EDGE_ENGINE_STOPPED @cause); docs/decisions/0024-submit-detach.md.
 */
enum neuron_stop_cause {
	NEURON_STOP_ENGINE_RESET = 1,	/* the core's owner reset the engine (ENGINE_RESET) */
	NEURON_STOP_CORE_RELEASE = 2,	/* the owner gave the core up (CORE_RELEASE) */
	NEURON_STOP_RELEASE = 3,	/* the owner's file was released (close, exit, kill) */
	NEURON_STOP_HANG = 4		/* the hang policy "reset" reset a hung engine */
};

/* AER channel state (NEURON_EDGE_PCI_ERROR @cause) */
enum neuron_pci_error {
	NEURON_PCI_ERROR_NONFATAL = 1,	/* queues keep running, nothing lost */
	NEURON_PCI_ERROR_FATAL = 2,	/* link frozen: a RESET event follows */
	NEURON_PCI_ERROR_PERMANENT = 3	/* the device is lost: removal follows */
};

/*
 * The status page (NEURON_CAP_STATUS_PAGE): every open file of /dev/nnqN
 * has one page of its own that says, without a syscall, whether the file
 * still works. Map it with
 *   mmap(NULL, info.page_size, PROT_READ, MAP_SHARED, fd,
 *        NEURON_STATUS_PAGE_OFFSET)
 * (info from NEURON_IOC_DEVICE_INFO; the same offset on every file and
 * with every page size up to 64 KiB; it maps the caller's own page, and
 * descriptors dup()ed from one open share it).
 * docs/decisions/0027-device-loss.md, #page-size. NEURON_STATUS_PAGE_SIZE is
 * the length with 4 KiB pages only, kept for programs built against the first
 * header: mmap() rounds the length up to the page, so it still maps the whole
 * page on a larger one; new code uses @page_size.
 */
#define NEURON_STATUS_PAGE_OFFSET	0x3000000000ull
#define NEURON_STATUS_PAGE_SIZE		4096	/* 4 KiB pages only: use @page_size */

/*
 * struct neuron_status_page @state. Zero is never shown: a reader that
 * finds anything but NEURON_STATUS_LIVE must stop touching the file's ring
 * and doorbell mappings.
 */
enum neuron_status_state {
	NEURON_STATUS_LIVE = 1,		/* the file works */
	NEURON_STATUS_STALE = 2,	/* a reset began: the file is stale (-EIO) */
	NEURON_STATUS_GONE = 3		/* the device's removal began (-ENODEV) */
};

/**
 * struct neuron_status_page - a file's status page (NEURON_CAP_STATUS_PAGE)
 * @state:	enum neuron_status_state. NEURON_STATUS_LIVE from the open on.
 *		The driver changes it at the first step of a reset or removal
 *		(docs/decisions/0011-reset-and-recovery.md), once every call
 *		inside the driver has left and before it stops an engine,
 *		disables a queue or revokes a ring or doorbell mapping: STALE
 *		for a reset (FLR, AER recovery, suspend, shutdown), GONE for a
 *		removal. It never goes back to LIVE (a file stale after a reset
 *		stays stale; open the device again); STALE may still become
 *		GONE. Written last, with release semantics and a full barrier
 *		after it: a reader that loads @state with acquire semantics and
 *		finds it changed also sees @cause and @generation of that
 *		change, and a load made after a mapping was revoked never
 *		finds LIVE.
 * @cause:	enum neuron_reset_cause of the change that ended LIVE (the
 *		@cause of the NEURON_EDGE_RESET event that follows it); 0
 *		while LIVE
 * @generation: the device's resets so far (FLR, AER recovery, suspend;
 *		not removals or shutdowns) when the driver last wrote the
 *		page: at the file's open, then at each change of @state. A
 *		file opened after a reset shows a larger generation than one
 *		left stale by it
 * @reserved:	zero; later releases may give these words a meaning (zero
 *		then means absent, docs/decisions/0010-uapi-growth.md)
 *
 * The rest of the page is zero.
 */
struct neuron_status_page {
	__u32 state;
	__u32 cause;
	__u32 generation;
	__u32 reserved[13];
};

/**
 * struct neuron_event - one interrupt edge, from read() and generic netlink
 * @timestamp_ns: CLOCK_MONOTONIC nanoseconds when the handler ran
 * @device:	N of /dev/nnqN
 * @core:	NOTIFIC, ENGINE_STOPPED, HANG: the core; THROTTLE: the core
 *		that ran the THROTTLE instruction(s); FAULT: the core whose
 *		ring write failed (DMA_ERROR), or with cause
 *		NEURON_FAULT_INTR_STORM the core whose interrupt causes the
 *		driver masked for a while because they stormed (sysfs
 *		intr_storms); 0xffffffff for a FAULT the device named no
 *		core for (seen by CAP_SYS_ADMIN files and netlink only);
 *		otherwise 0
 * @edge:	enum neuron_edge
 * @cause:	NOTIFIC: tpb_notific_intr bits (enum neuron_notific_intr);
 *		THROTTLE: 1 << @core (its NEURON_REG_THROTTLE_STATUS bit);
 *		FAULT: NEURON_FAULT_* bits;
 *		RESET: enum neuron_reset_cause; PCI_ERROR: enum neuron_pci_error;
 *		ENGINE_STOPPED: enum neuron_stop_cause; HANG: the engine's
 *		state when the hang was seen (NEURON_ENGINE_RUNNING, e.g. a
 *		DELAY, or NEURON_ENGINE_WAITING, e.g. a WAIT_GE nobody
 *		signals)
 * @queues:	NOTIFIC: bit per queue whose THRESHOLD was reached;
 *		RESET: the number of queues torn down; ENGINE_STOPPED: bit per
 *		engine (enum neuron_engine) whose program was stopped; HANG:
 *		the bit of the one hung engine (enum neuron_engine)
 * @lost:	events this file dropped just before this one
 * @count:	edges of this (core, edge) since the device was probed,
 *		the suppressed ones included; FAULT: the device's fault edges
 *		and interrupt storms (sysfs edge_counts "fault");
 *		RESET: records the consumers had not read (TAIL - HEAD summed
 *		over the torn-down queues), lost with their rings;
 *		ENGINE_STOPPED: programs stopped on this core since probe,
 *		these included (the sum of sysfs programs_stopped's line);
 *		HANG: hangs seen on this core since probe, this one included
 *		(the sum of sysfs hangs' line)
 * @size:	bytes of this event the kernel filled: the smaller of
 *		sizeof(struct neuron_event) (64 here) and the file's event
 *		size; absent from the NEURON_EVENT_SIZE_VER0 bytes a file gets
 *		until it sets a larger size with NEURON_IOC_EVENT_SIZE
 * @suppressed: THROTTLE, FAULT: edges of this core and kind that the
 *		rate limit kept from every file and netlink since the last
 *		one reported (docs/decisions/0008-event-ratelimit.md; sysfs
 *		events_suppressed counts them all); otherwise 0. Was
 *		@reserved (zero) before
 * @wrbuf_full:	NOTIFIC: bit N per notify_error_wr_buffer_full_N edge
 *		latched (the input buffer was full and stalled a producer of
 *		queue N; cause bit NEURON_NOTIFIC_INTR_WRBUF_FULL);
 *		docs/device-model.md#wrbuf. Not in the first 48-byte layout
 * @wrbuf_drop:	NOTIFIC: bit N per notify_error_wr_buffer_drop_N edge
 *		latched (the input buffer dropped a record of queue N; cause
 *		bit NEURON_NOTIFIC_INTR_HW_OVERFLOW)
 * @pc:		HANG: the hung engine's PC, the index of the instruction it
 *		is stuck on (a WAIT_GE, a DELAY); zero for every other edge.
 *		Not in the 56-byte layout before NEURON_CAP_HANG: a file gets
 *		it once it sets an event size of at least 64 bytes
 * @reserved:	zero
 */
struct neuron_event {
	__u64 timestamp_ns;
	__u32 device;
	__u32 core;
	__u32 edge;
	__u32 cause;
	__u32 queues;
	__u32 lost;
	__u64 count;
	__u32 size;
	__u32 suppressed;
	__u32 wrbuf_full;
	__u32 wrbuf_drop;
	__u32 pc;
	__u32 reserved;
};

#define NEURON_EVENT_SIZE_VER0	40	/* struct neuron_event up to @count */

/**
 * struct neuron_event_size - NEURON_IOC_EVENT_SIZE (in/out)
 * @size:	in: bytes per event read() should return from now on, at
 *		least NEURON_EVENT_SIZE_VER0 and at most 4096; normally the
 *		caller's sizeof(struct neuron_event)
 * @kernel_size: out: bytes of struct neuron_event this kernel fills
 * @reserved:	in: must be zero
 *
 * It only shapes read(), so it works on a file that is stale after a reset
 * or whose device was removed, like read() itself.
 * Errors: -EINVAL (@size out of range, reserved), -EBADF (read-only file).
 */
struct neuron_event_size {
	__u32 size;
	__u32 kernel_size;
	__u64 reserved;
};

/* NEURON_IOC_HANG_TIMEOUT limits, milliseconds (docs/decisions/0012-hang-detection.md) */
#define NEURON_HANG_TIMEOUT_MIN_MS	100
#define NEURON_HANG_TIMEOUT_MAX_MS	600000

/**
 * struct neuron_hang_timeout - NEURON_IOC_HANG_TIMEOUT (in/out)
 * @core:	in: core index, below num_cores
 * @timeout_ms:	in: the core's new hang timeout in milliseconds,
 *		NEURON_HANG_TIMEOUT_MIN_MS..NEURON_HANG_TIMEOUT_MAX_MS, or 0 to
 *		change nothing (a query). out: the core's timeout now: the one
 *		its owner set, or the module parameter hang_timeout_ms
 * @is_default:	out: 1 when @timeout_ms is the module's default (no owner
 *		override), else 0
 * @reserved:	in: must be zero
 *
 * An engine RUNNING or WAITING that retires no instruction for its core's
 * hang timeout is hung: the driver reports it once per stall
 * (NEURON_EDGE_HANG to the core's owner and the watchers, sysfs hangs, a
 * uevent NNQ_EVENT=hang, a devcoredump) and, under the device's
 * hang_policy "reset", resets the engine (NEURON_EDGE_ENGINE_STOPPED,
 * cause NEURON_STOP_HANG). A WAIT nobody signals and a long DELAY are
 * told apart only by this timeout. Setting needs ownership of the core (a
 * free core becomes the caller's); the override ends when the owner gives
 * the core up. docs/decisions/0012-hang-detection.md. Errors: -EINVAL (@core
 * or @timeout_ms out of range, reserved nonzero), -EPERM (another file
 * owns the core), -EIO (stale file), -ENODEV (device removed).
 */
struct neuron_hang_timeout {
	__u32 core;
	__u32 timeout_ms;
	__u32 is_default;
	__u32 reserved;
};

/* Why a devcoredump was taken (struct neuron_coredump_header @cause) */
enum neuron_coredump_cause {
	NEURON_COREDUMP_HANG = 1,	/* NEURON_EDGE_HANG */
	NEURON_COREDUMP_HALTED = 2	/* the scanner found the engine HALTED */
};

#define NEURON_COREDUMP_MAGIC	"NNQCORE"	/* 8 bytes with its NUL */
#define NEURON_COREDUMP_VERSION	1
#define NEURON_COREDUMP_RECORDS	16	/* last records per queue, at most */
#define NEURON_COREDUMP_INSNS	8	/* instructions each side of @pc */

/**
 * struct neuron_coredump_header - start of a devcoredump of one core
 * @magic:	NEURON_COREDUMP_MAGIC, NUL included
 * @version:	NEURON_COREDUMP_VERSION; a reader refuses a larger one
 * @header_size: bytes of this header; the engines follow it
 * @total_size:	bytes of the whole dump
 * @device:	N of /dev/nnqN
 * @core:	the core dumped
 * @engine:	the engine that hung or halted (enum neuron_engine)
 * @cause:	enum neuron_coredump_cause
 * @pc:		that engine's PC when it was seen hung or halted
 * @timestamp_ns: CLOCK_MONOTONIC ns of the capture
 * @timeout_ms:	the core's hang timeout then
 * @num_engines: struct neuron_coredump_engine that follow the header, one
 *		per engine of the core, in enum neuron_engine order
 * @num_queues:	struct neuron_coredump_queue that follow the engines, each
 *		followed by its @rec_count records
 * @insn_first:	index in the program of the first instruction that follows
 *		the queues
 * @insn_count:	instructions (32 bytes each, struct neuron_emu_insn) that
 *		follow the queues: at most NEURON_COREDUMP_INSNS each side of
 *		@pc, clipped to the program
 * @reserved:	zero
 *
 * Taken with dev_coredumpv() on the PCI device, read from
 * /sys/class/devcoredump/devcd<M>/data and freed by writing to it (or by
 * the kernel after five minutes). Little-endian, no padding between the
 * parts. docs/decisions/0013-coredump.md.
 */
struct neuron_coredump_header {
	char magic[8];
	__u32 version;
	__u32 header_size;
	__u32 total_size;
	__u32 device;
	__u32 core;
	__u32 engine;
	__u32 cause;
	__u32 pc;
	__u64 timestamp_ns;
	__u32 timeout_ms;
	__u32 num_engines;
	__u32 num_queues;
	__u32 insn_first;
	__u32 insn_count;
	__u32 reserved;
};

/**
 * struct neuron_coredump_engine - one engine's registers in a devcoredump
 * @state:	enum neuron_engine_state
 * @pc:		index of the next instruction
 * @exec_count:	instructions retired since probe
 * @soft_reset_counter: programs started
 * @last_error:	error_id of the last fatal error, 0xff if none
 * @prog_count:	PROG_COUNT: instructions of the program loaded
 */
struct neuron_coredump_engine {
	__u32 state;
	__u32 pc;
	__u32 exec_count;
	__u32 soft_reset_counter;
	__u32 last_error;
	__u32 prog_count;
};

/**
 * struct neuron_coredump_queue - one queue of the owner on the dumped core
 * @queue:	queue index within the core
 * @flags:	NEURON_NQ_F_* it was made with (NEURON_NQ_F_DEVICE_MEM: the
 *		records were read from device memory, else from the host ring)
 * @size:	ring bytes
 * @head:	HEAD register (records consumed, free-running)
 * @tail:	TAIL register (records written, free-running)
 * @rec_count:	records that follow, 16 bytes each: the last ones before
 *		@tail, at most NEURON_COREDUMP_RECORDS and the ring's entries,
 *		oldest first, whether or not the consumer read them
 * @reserved:	zero
 */
struct neuron_coredump_queue {
	__u32 queue;
	__u32 flags;
	__u32 size;
	__u32 head;
	__u32 tail;
	__u32 rec_count;
	__u64 reserved;
};

/*
 * Generic netlink family NEURON_GENL_NAME
 * (docs/decisions/0001-original-architecture.md#arch-driver), strict policies:
 *   NEURON_CMD_GET_DEVICE  do (NEURON_A_DEVICE required) and dump: device
 *                          attributes and per-core edge counters
 *   NEURON_CMD_GET_NQ      dump (NEURON_A_DEVICE optional filter): one message
 *                          per live queue: core, queue, head, tail, phase,
 *                          size, flags, overflow/drop/threshold counts.
 *                          Needs CAP_NET_ADMIN (every tenant's queues); a
 *                          tenant reads its own with NEURON_IOC_NQ_INFO
 *   NEURON_CMD_EVENT       multicast on group NEURON_GENL_MCGRP_EVENTS: the
 *                          fields of struct neuron_event as attributes;
 *                          joining the group needs CAP_NET_ADMIN
 * Bad requests get -EINVAL/-ENODEV with an extended ack naming the attribute.
 * No message carries a kernel or physical address.
 */
#define NEURON_GENL_NAME		"neuron"
#define NEURON_GENL_VERSION		1
#define NEURON_GENL_MCGRP_EVENTS	"events"

enum neuron_genl_cmd {
	NEURON_CMD_UNSPEC,
	NEURON_CMD_GET_DEVICE,
	NEURON_CMD_GET_NQ,
	NEURON_CMD_EVENT,
	__NEURON_CMD_MAX
};

#define NEURON_CMD_MAX (__NEURON_CMD_MAX - 1)

enum neuron_genl_attr {
	NEURON_A_UNSPEC,
	NEURON_A_PAD,
	NEURON_A_DEVICE,		/* u32: N of /dev/nnqN */
	NEURON_A_PCI_VENDOR,		/* u16 */
	NEURON_A_PCI_DEVICE,		/* u16 */
	NEURON_A_NUM_CORES,		/* u32 */
	NEURON_A_GEN,			/* u32: enum neuron_gen */
	NEURON_A_MEM_SIZE,		/* u64: bytes */
	NEURON_A_CORE,			/* u32 */
	NEURON_A_QUEUE,			/* u32 */
	NEURON_A_HEAD,			/* u32: records, free-running */
	NEURON_A_TAIL,			/* u32: records, free-running */
	NEURON_A_PHASE,			/* u8 */
	NEURON_A_SIZE,			/* u32: bytes */
	NEURON_A_FLAGS,			/* u32: NEURON_NQ_F_* */
	NEURON_A_OVERFLOW_COUNT,	/* u64: records overwritten unread */
	NEURON_A_DROP_COUNT,		/* u64: records dropped */
	NEURON_A_THRESHOLD_COUNT,	/* u64: threshold interrupts */
	NEURON_A_EDGE,			/* u32: enum neuron_edge */
	NEURON_A_CAUSE,			/* u32 */
	NEURON_A_QUEUES,		/* u32: bit per queue */
	NEURON_A_COUNT,			/* u64 */
	NEURON_A_TIMESTAMP,		/* u64: CLOCK_MONOTONIC ns */
	/* nested, per core: NEURON_A_CORE and one NEURON_A_COUNT per intr bit */
	NEURON_A_INTR_COUNTS,
	NEURON_A_THROTTLE_COUNT,	/* u64 */
	NEURON_A_FAULT_COUNT,		/* u64 */
	NEURON_A_WRBUF_FULL,		/* u32: bit per wr_buffer_full_N edge */
	NEURON_A_WRBUF_DROP,		/* u32: bit per wr_buffer_drop_N edge */
	NEURON_A_SUPPRESSED,		/* u32: struct neuron_event @suppressed */
	NEURON_A_PC,			/* u32: struct neuron_event @pc (HANG) */
	__NEURON_A_MAX
};

#define NEURON_A_MAX (__NEURON_A_MAX - 1)

#define NEURON_IOC_DEVICE_INFO	_IOR(NEURON_IOCTL_MAGIC, 0x00, struct neuron_device_info)
#define NEURON_IOC_NQ_INIT	_IOWR(NEURON_IOCTL_MAGIC, 0x01, struct neuron_nq_init)
#define NEURON_IOC_NQ_DESTROY	_IOW(NEURON_IOCTL_MAGIC, 0x02, struct neuron_nq_id)
#define NEURON_IOC_NQ_INFO	_IOWR(NEURON_IOCTL_MAGIC, 0x03, struct neuron_nq_info)
#define NEURON_IOC_SUBMIT	_IOW(NEURON_IOCTL_MAGIC, 0x04, struct neuron_submit)
#define NEURON_IOC_ENGINE_STATUS _IOWR(NEURON_IOCTL_MAGIC, 0x05, struct neuron_engine_status)
#define NEURON_IOC_ENGINE_RESET	_IOW(NEURON_IOCTL_MAGIC, 0x06, struct neuron_engine_id)
#define NEURON_IOC_FEATURE_FLAGS _IOWR(NEURON_IOCTL_MAGIC, 0x07, struct neuron_feature_flags)
#define NEURON_IOC_NQ_EVENTFD	_IOW(NEURON_IOCTL_MAGIC, 0x08, struct neuron_nq_eventfd)
#define NEURON_IOC_EVT_SEM	_IOWR(NEURON_IOCTL_MAGIC, 0x09, struct neuron_evt_sem)
#define NEURON_IOC_THROTTLE	_IOW(NEURON_IOCTL_MAGIC, 0x0a, struct neuron_throttle)
#define NEURON_IOC_CORE_ACQUIRE	_IOWR(NEURON_IOCTL_MAGIC, 0x0b, struct neuron_cores)
#define NEURON_IOC_CORE_RELEASE	_IOWR(NEURON_IOCTL_MAGIC, 0x0c, struct neuron_cores)
#define NEURON_IOC_MEM_ALLOC	_IOWR(NEURON_IOCTL_MAGIC, 0x0d, struct neuron_mem_alloc)
#define NEURON_IOC_MEM_FREE	_IOW(NEURON_IOCTL_MAGIC, 0x0e, struct neuron_mem_free)
#define NEURON_IOC_EVENT_SIZE	_IOWR(NEURON_IOCTL_MAGIC, 0x0f, struct neuron_event_size)
#define NEURON_IOC_NOTIFY_TRIGGER _IOWR(NEURON_IOCTL_MAGIC, 0x10, struct neuron_notify_trigger)
#define NEURON_IOC_NQ_COALESCE	_IOW(NEURON_IOCTL_MAGIC, 0x11, struct neuron_nq_coalesce)
#define NEURON_IOC_TIMESTAMP	_IOWR(NEURON_IOCTL_MAGIC, 0x12, struct neuron_timestamp)
#define NEURON_IOC_CORE_GRANT	_IOWR(NEURON_IOCTL_MAGIC, 0x13, struct neuron_core_grant)
#define NEURON_IOC_NQ_HEAD	_IOW(NEURON_IOCTL_MAGIC, 0x14, struct neuron_nq_head)
#define NEURON_IOC_NQ_ROUTE	_IOWR(NEURON_IOCTL_MAGIC, 0x15, struct neuron_nq_route)
#define NEURON_IOC_HANG_TIMEOUT	_IOWR(NEURON_IOCTL_MAGIC, 0x16, struct neuron_hang_timeout)

#endif /* _UAPI_LINUX_NEURON_H */
