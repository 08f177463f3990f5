/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Register map of the emulated Neuron PCI function ("neuron-tpb"), shared by
 * the device model (emulator/qemu) and the driver (kernel/). The only
 * definition of these offsets in the project; docs/device-model.md says how
 * the device behaves.
 *
 * Sources:
 *   docs/hardware.md#notific, #nq-descriptor, #nq-mask: the NOTIFIC block,
 *     10 SW queues, the descriptor at 0x100 + i*0x28, the 0x3ff masks
 *   docs/hardware.md#intr-causes: tpb_notific_intr_0..8 (intr_1: a write to
 *     a disabled queue)
 *   docs/hardware.md#timestamp, #evt-sem-windows, #dge-feature-flags: the
 *     1 ps timestamp, the EVT_SEM windows, local register 38
 *   docs/decisions/0004-device-details.md#register-map: where the rest of the
 *   map comes from
 *
 * BAR0 (1 MiB, 64-bit MMIO): a global page, then one 64 KiB window per core.
 * BAR2: MSI-X table and PBA.  BAR4: device memory ("HBM"), 64-bit prefetchable.
 * All registers are 32-bit, little-endian.
 */
#ifndef NEURON_REGS_H
#define NEURON_REGS_H

#include "../uapi/linux/neuron_record.h"	/* the values userspace sees */

/* PCI identity: NEURON_PCI_VENDOR_ID, NEURON_PCI_DEVICE_ID (UAPI) */
#define NEURON_PCI_CLASS	0x1200	/* processing accelerator */

#define NEURON_BAR_REGS		0
#define NEURON_BAR_MSIX		2
#define NEURON_BAR_MEM		4
#define NEURON_BAR0_SIZE	0x100000

/* ---- Global page (BAR0 + 0x0) ------------------------------------------- */
#define NEURON_REG_ID		0x000	/* RO: NEURON_ID_MAGIC */
#define NEURON_ID_MAGIC		0x4e45524eu	/* "NREN" little-endian */
#define NEURON_REG_VERSION	0x004	/* RO: register map version */
#define NEURON_REGS_VERSION	1
#define NEURON_REG_NUM_CORES	0x008	/* RO */
#define NEURON_REG_GEN		0x00c	/* RO: enum neuron_gen */
#define NEURON_REG_MEM_SIZE_LO	0x010	/* RO: BAR4 bytes */
#define NEURON_REG_MEM_SIZE_HI	0x014
#define NEURON_REG_FAULT_STATUS	0x018	/* W1C: NEURON_FAULT_* */
#define NEURON_REG_FAULT_MASK	0x01c	/* RW: 1 = raises the fault vector */
#define NEURON_REG_THROTTLE_STATUS 0x020 /* W1C: bit c = core c ran THROTTLE */
#define NEURON_REG_THROTTLE_CTRL 0x024	/* RW: bit 0 armed (records to NUM4) */
#define NEURON_REG_RESET	0x028	/* WO: 1 = quiesce: stop engines, disable queues */
#define NEURON_REG_DEV_STATUS	0x02c	/* RO: NEURON_DEV_STATUS_* */
#define NEURON_DEV_STATUS_READY		(1u << 0)	/* out of reset, registers usable */
/* QUIESCED: no engine running or waiting, no queue enabled, no DMA in flight */
#define NEURON_DEV_STATUS_QUIESCED	(1u << 1)
#define NEURON_REG_BUSY_CORES	0x030	/* RO: bit per core that keeps QUIESCED clear */
#define NEURON_REG_FAULT_CORES	0x034	/* W1C: bit c = core c raised a FAULT_STATUS bit */

/* enum neuron_gen and the NEURON_FAULT_* bits: <linux/neuron_record.h> */

/*
 * MSI-X vectors: one per core for its NOTIFIC summary, then the throttle
 * edge, then device faults
 * (docs/decisions/0004-device-details.md#msix-vectors).
 */
#define NEURON_MSIX_VEC_CORE(c)		(c)
#define NEURON_MSIX_VEC_THROTTLE(ncores) (ncores)
#define NEURON_MSIX_VEC_FAULT(ncores)	((ncores) + 1)
#define NEURON_MSIX_VECTORS(ncores)	((ncores) + 2)

/* ---- Per-core window ----------------------------------------------------- */
#define NEURON_CORE_STRIDE	0x10000
#define NEURON_CORE_BASE(c)	(NEURON_CORE_STRIDE * ((c) + 1))

/* NOTIFIC block at the start of the core window (docs/hardware.md#notific). */
#define NEURON_NOTIFIC_BASE		0x0000
#define NEURON_NOTIFIC_TIMESTAMP_LO	0x000	/* RO: ps; reading LO latches HI */
#define NEURON_NOTIFIC_TIMESTAMP_HI	0x004
#define NEURON_NOTIFIC_TIMESTAMP_INC	0x008	/* RO: ps per counter tick */
#define NEURON_NOTIFIC_INTR_STATUS	0x010	/* W1C: tpb_notific_intr_0..8 */
#define NEURON_NOTIFIC_INTR_MASK	0x014	/* RW: 1 = cause raises the vector */
#define NEURON_NOTIFIC_QUEUE_ENABLE	0x018	/* RW: bit per queue */
#define NEURON_NOTIFIC_SW_BACKPRESSURE	0x01c	/* RW: bit per queue, reset 0x3ff */
#define NEURON_NOTIFIC_IGNORE_FULL	0x020	/* RW: bit per queue (lossy) */
#define NEURON_NOTIFIC_ROUTE		0x024	/* RW: 4-bit sw_queue_num per class */
#define NEURON_NOTIFIC_TRACE_ENABLE	0x028	/* RW: bit per engine */
#define NEURON_NOTIFIC_THRESHOLD_STATUS	0x02c	/* W1C: bit per queue that hit it */

#define NEURON_SW_QUEUE_MASK		0x3ff	/* docs/hardware.md#nq-mask */

/*
 * NOTIFIC input buffer (docs/hardware.md#wr-buffer, docs/device-model.md#wrbuf):
 * the bounded FIFO between the producers and the ring writer. Edge N of
 * notify_error_wr_buffer_full_0..29 / _drop_0..29 is bit N of the two
 * status registers; our block raises edge N for records of queue N (0..9),
 * 10..29 are never raised. Summaries: tpb_notific_intr_8 (a full edge,
 * NEURON_NOTIFIC_INTR_WRBUF_FULL) and intr_3 (a drop edge, HW_OVERFLOW).
 */
#define NEURON_NOTIFIC_WRBUF_DEPTH	0x030	/* RO: records it holds */
#define NEURON_NOTIFIC_WRBUF_LEVEL	0x034	/* RO: records in it now */
#define NEURON_NOTIFIC_WRBUF_DRAIN_NS	0x038	/* RW: writer ns per record, 0 = keeps up */
#define NEURON_NOTIFIC_WRBUF_DROP	0x03c	/* RW: bit per queue: drop when full; reset 0 */
#define NEURON_NOTIFIC_WRBUF_FULL_STATUS 0x040	/* W1C: bit N = wr_buffer_full_N */
#define NEURON_NOTIFIC_WRBUF_DROP_STATUS 0x044	/* W1C: bit N = wr_buffer_drop_N */
/* RO, per queue q: stall episodes; records the buffer dropped */
#define NEURON_NOTIFIC_WRBUF_FULL_COUNT(q) (0x080 + (q) * 4)
#define NEURON_NOTIFIC_WRBUF_DROP_COUNT(q) (0x0c0 + (q) * 4)
#define NEURON_WRBUF_EDGES		30	/* wr_buffer_full/_drop_0..29 */
#define NEURON_WRBUF_EDGE_MASK		0x3fffffff
#define NEURON_WRBUF_DEPTH_MAX		256	/* largest wrbuf-depth */
#define NEURON_WRBUF_DRAIN_NS_MAX	1000000	/* 1 ms per record */

/*
 * enum neuron_notific_intr (the tpb_notific_intr_N causes, NEURON_NOTIFIC_INTR_BITS)
 * and enum neuron_notific_class with NEURON_ROUTE_DEFAULT and
 * NEURON_ROUTE_QUEUE() (the 4-bit sw_queue_num per class of
 * NEURON_NOTIFIC_ROUTE): <linux/neuron_record.h>
 */

/* Queue descriptor i (docs/hardware.md#nq-descriptor: 0x100 + i*0x28). */
#define NEURON_NQ_DESC(i)	(0x100 + (i) * 0x28)
#define NEURON_NQ_BASE_LO	0x00	/* RW: ring address (host DMA or BAR4 offset) */
#define NEURON_NQ_BASE_HI	0x04
#define NEURON_NQ_SIZE		0x08	/* RW: bytes, power of two, >= 64 */
#define NEURON_NQ_HEAD		0x0c	/* RW: consumer count (free-running records) */
#define NEURON_NQ_TAIL		0x10	/* RO: producer count (free-running records) */
#define NEURON_NQ_THRESHOLD	0x14	/* RW: unread records that raise intr_0; 0 off */
#define NEURON_NQ_STATUS	0x18	/* RO: NEURON_NQ_STATUS_* */
#define NEURON_NQ_CTRL		0x1c	/* RW: NEURON_NQ_CTRL_* (write while disabled) */
#define NEURON_NQ_OVERFLOW_COUNT 0x20	/* RO: records overwritten unread */
#define NEURON_NQ_DROP_COUNT	0x24	/* RO: records dropped (disabled, DMA error) */

#define NEURON_NQ_STATUS_PHASE	(1u << 0)	/* phase the next record gets */
#define NEURON_NQ_STATUS_FULL	(1u << 1)
#define NEURON_NQ_STATUS_STALLED (1u << 2)	/* an engine waits for space */
#define NEURON_NQ_STATUS_DMA_ERROR (1u << 3)	/* last ring write failed */

#define NEURON_NQ_CTRL_DEVICE_MEM (1u << 0)	/* BASE is a BAR4 offset */

/*
 * Interrupt coalescing, one RW register per queue q after the descriptors
 * (docs/device-model.md#coalescing): the queue's threshold interrupt is
 * raised when THRESHOLD unread records are reached or COALESCE_NS
 * nanoseconds after the first unread record, whichever comes first; 0 = no
 * time limit (reset value). Writes above NEURON_NQ_COALESCE_NS_MAX (UAPI)
 * are clamped.
 */
#define NEURON_NQ_COALESCE_NS(q)	(0x300 + (q) * 4)

#define NEURON_NQ_MIN_BYTES	64

/*
 * HEAD and TAIL count records since the queue was enabled (free-running,
 * wrapping at 2^32): slot = count % entries, unread = TAIL - HEAD, and the
 * phase written with a record is 1 on the first pass: ((count / entries) & 1) ^ 1.
 * The hardware's tail_ptr advances modulo the ring size; counting instead
 * lets a ring hold exactly `entries` records without a wasted slot
 * (docs/decisions/0002-departures.md#head-tail-counts).
 */

/* Head doorbell pages: one 4 KiB page per queue, only its HEAD at +0. */
#define NEURON_DOORBELL_BASE	0x1000
#define NEURON_DOORBELL(q)	(NEURON_DOORBELL_BASE + (q) * 0x1000)
#define NEURON_DOORBELL_SIZE	0x1000

/* Engines: 5 per core (PE, ACT, POOL, DVE, SP), 0x200 apart. */
#define NEURON_ENGINE_BASE(e)	(0xb000 + (e) * 0x200)
#define NEURON_ENG_CTRL		0x00	/* WO: NEURON_ENG_CTRL_* */
#define NEURON_ENG_STATUS	0x04	/* RO: enum neuron_engine_state */
#define NEURON_ENG_PROG_BASE_LO	0x08	/* RW: program address, BAR4 offset */
#define NEURON_ENG_PROG_BASE_HI	0x0c
#define NEURON_ENG_PROG_COUNT	0x10	/* RW: instructions */
#define NEURON_ENG_PC		0x14	/* RO: index of the next instruction */
#define NEURON_ENG_SOFT_RESET_COUNTER 0x18 /* RO: programs started */
#define NEURON_ENG_EXEC_COUNT	0x1c	/* RO: instructions retired */
#define NEURON_ENG_FEATURE_FLAGS 0x20	/* RW: local reg 38 (cayman only) */
#define NEURON_ENG_LAST_ERROR	0x24	/* RO: error_id of the last fatal error */
#define NEURON_ENG_SREG(n)	(0x100 + (n) * 4)	/* RW: $S[0..63] */
#define NEURON_ENG_NUM_SREGS	64

#define NEURON_ENG_CTRL_START	(1u << 0)	/* run PROG_COUNT insns from PROG_BASE */
#define NEURON_ENG_CTRL_RESET	(1u << 1)	/* stop, clear a fatal halt, go idle */

/* ENG_STATUS values: enum neuron_engine_state, <linux/neuron_record.h> */

/*
 * AWS_NEURON_ISA_XT_NEURON_FEATURE_FLAGS, local register 38
 * (docs/hardware.md#dge-feature-flags); its bits NEURON_FEATURE_* are in
 * <linux/neuron_record.h>
 */
#define NEURON_LOCAL_REG_FEATURE_FLAGS	38

/* EVT_SEM unit, 256 events + 256 semaphores (docs/hardware.md#evt-sem). */
#define NEURON_EVT_SEM_BASE	0xc000
#define NEURON_EVT_SEM_EVENT(i)	(0x0000 + (i) * 4)	/* RW: event i (0/1) */
#define NEURON_EVT_SEM_READ(i)	(0x1000 + (i) * 4)	/* RO: semaphore i */
#define NEURON_EVT_SEM_SET(i)	(0x1400 + (i) * 4)	/* WO: semaphore i = v */
#define NEURON_EVT_SEM_INC(i)	(0x1800 + (i) * 4)	/* WO: semaphore i += v */
#define NEURON_EVT_SEM_DEC(i)	(0x1c00 + (i) * 4)	/* WO: semaphore i -= v */

/*
 * AXI_EVT_SEM notification (docs/device-model.md#dma-engines): after the
 * windows, two registers of the unit. AXI_NOTIFY bit 0 (RW, reset 0): every
 * host write through the EVENT, SET, INC or DEC window writes one
 * AXI_EVT_SEM record with the new value (class EVT_SEM). AXI_DROPPED (RO):
 * AXI_EVT_SEM records lost because the previous one still waited for room
 * in a backpressured queue.
 */
#define NEURON_EVT_SEM_AXI_NOTIFY	0x2000
#define NEURON_EVT_SEM_AXI_NOTIFY_ON	(1u << 0)
#define NEURON_EVT_SEM_AXI_DROPPED	0x2004
#define NEURON_EVT_SEM_SPAN		0x2008	/* bytes of the unit's registers */

/*
 * DMA engines (docs/hardware.md#dma-engines, docs/device-model.md#dma-engines):
 * 16 per core execute the DGE's packets. M2S_TRIGGER (RW, reset 0): bit i
 * arms the completion notification of DMA engine i's queue (a DMA record,
 * class DMA, when the engine finishes its part of a descriptor).
 * NUM_ENGINES and PACKET_BYTES (RO) describe the split; PACKETS(i) (RO)
 * counts the packets engine i has completed since the function reset.
 */
#define NEURON_DMA_BASE			0xf000
#define NEURON_DMA_M2S_TRIGGER		0x000
#define NEURON_DMA_NUM_ENGINES_REG	0x004
#define NEURON_DMA_PACKET_BYTES_REG	0x008
#define NEURON_DMA_PACKETS(i)		(0x040 + (i) * 4)
#define NEURON_DMA_SPAN			0x080

/* NEURON_DMA_ENGINES (16 per core): <linux/neuron_record.h> */
#define NEURON_DMA_ENGINE_MASK		0xffffu
#define NEURON_DMA_PACKET_BYTES		64	/* bytes per DMA packet (ours) */
#define NEURON_DMA_MAX_PACKETS		4096	/* per engine per descriptor */

/*
 * The map against the hardware description: each value below is a literal
 * copied from it, not derived from the macros above, so an edit that moves a
 * register away from the description fails to compile (in C and C++).
 *   docs/hardware.md#nq-descriptor: queue descriptor i at 0x100 + i*0x28
 *   docs/hardware.md#nq-descriptor, #nq-head-tail: HEAD (head_ptr) at +0x0c,
 *     TAIL (tail_ptr) at +0x10 of the descriptor
 *   docs/hardware.md#nq-mask: 10 SW queues, per-queue masks of 0x3ff
 *   docs/hardware.md#evt-sem-windows: EVENT +0x0000, READ +0x1000,
 *     SET +0x1400, INC +0x1800, DEC +0x1c00; entry i at +4*i
 *   docs/hardware.md#dge-feature-flags: NEURON_FEATURE_FLAGS, local register 38
 *   docs/hardware.md#intr-causes: nine causes, tpb_notific_intr_0..8
 *   docs/hardware.md#rec-dge-metadata: dma_map has one bit for each of 16
 *     DMA engines; num_packets is 12 bits, 0 standing for 4096
 */
#if defined(__cplusplus)
#define NEURON_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define NEURON_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

NEURON_STATIC_ASSERT(NEURON_NQ_DESC(0) == 0x100, "NQ descriptor 0 at 0x100");
NEURON_STATIC_ASSERT(NEURON_NQ_DESC(1) == 0x128, "NQ descriptors 0x28 apart");
NEURON_STATIC_ASSERT(NEURON_NQ_DESC(9) == 0x268, "NQ descriptor 9 at 0x268");
NEURON_STATIC_ASSERT(NEURON_NQ_HEAD == 0x0c, "HEAD at descriptor +0x0c");
NEURON_STATIC_ASSERT(NEURON_NQ_TAIL == 0x10, "TAIL at descriptor +0x10");
NEURON_STATIC_ASSERT(NEURON_NUM_SW_QUEUES == 10, "10 SW queues");
NEURON_STATIC_ASSERT(NEURON_SW_QUEUE_MASK == 0x3ff, "per-queue masks 0x3ff");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_EVENT(0) == 0x0, "EVENT window at +0x0");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_EVENT(1) == 0x4, "EVT_SEM entries 4 bytes apart");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_READ(0) == 0x1000, "READ window at +0x1000");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_SET(0) == 0x1400, "SET window at +0x1400");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_INC(0) == 0x1800, "INC window at +0x1800");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_DEC(0) == 0x1c00, "DEC window at +0x1c00");
NEURON_STATIC_ASSERT(NEURON_LOCAL_REG_FEATURE_FLAGS == 38, "feature flags: local reg 38");
NEURON_STATIC_ASSERT(NEURON_NOTIFIC_INTR_BITS == 9, "tpb_notific_intr_0..8");
NEURON_STATIC_ASSERT(NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_SPAN <= NEURON_DMA_BASE &&
		     NEURON_DMA_BASE + NEURON_DMA_SPAN <= NEURON_CORE_STRIDE,
		     "EVT_SEM and DMA blocks inside the core window, apart");
NEURON_STATIC_ASSERT(NEURON_DMA_ENGINES == 16, "16 DMA engines: dma_map is 16 bits");
NEURON_STATIC_ASSERT(NEURON_DMA_MAX_PACKETS == 4096, "num_packets 12 bits, 0 means 4096");

#endif /* NEURON_REGS_H */
