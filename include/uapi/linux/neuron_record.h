/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The neuron device's values userspace sees: the 16-byte notification
 * records the engines write into the mmapped rings (NQs), and the device
 * values the ioctls and events of <linux/neuron.h> report (generation,
 * engine states, feature flags, fault bits, interrupt causes, record
 * classes). This is the only definition of these values and layouts in the
 * project; <linux/neuron_isa.h> has the instruction encoding, include/neuron/
 * keeps what is private to the device model and the driver (register offsets,
 * bitfield views of the records).
 *
 * Byte order: every multi-byte field of a record is little-endian, whatever
 * the host's byte order. Fields narrower than a byte or not byte-aligned are
 * given as a mask and a shift within the little-endian word at a byte offset
 * (NEURON_ISA_*_OFFSET, _MASK, _SHIFT); there are no C bitfields here, so
 * the layout does not depend on the compiler. Read records with the
 * NEURON_REC_*() accessors (macros, usable from C and C++, also in C++
 * constant expressions: @rec is any array or pointer of bytes); write them
 * with neuron_rec_put_*().
 *
 * Sources:
 *   docs/hardware.md#rec-format, #rec-types, #timestamp: 16-byte records, the
 *     header byte, the 24 notific_type values, phase bit, 1 ps timestamp
 *   docs/hardware.md#rec-tpb-error, #rec-error-ids, #rec-seq-metadata:
 *     NEURON_ISA_TPB_ERROR_NOTIFICATION (byte offsets), the error-id enum,
 *     the sequencer metadata_hi arm {block_id:4, pc:12, info:8}
 *   docs/hardware.md#rec-dge-metadata:
 *     NEURON_ISA_TPB_DGE_METADATA_NOTIFICATION
 *   docs/hardware.md#generations, #intr-causes, #nq-routing,
 *     #dge-feature-flags: generations, tpb_notific_intr_0..8, record
 *     classes, the feature-flag bits
 *
 * Layouts the hardware description does not give (trace, explicit, EVT_SEM,
 * DMA, the ERROR 0x03 interrupt form) are ours
 * (docs/decisions/0003-choices.md#own-record-layouts); they keep the header at
 * byte 3 and the timestamp at byte 8 like every layout it gives.
 */
#ifndef _UAPI_LINUX_NEURON_RECORD_H
#define _UAPI_LINUX_NEURON_RECORD_H

#include <linux/types.h>

/* ---- Device identity and sizes ------------------------------------------ */

/* PCI identity (struct neuron_device_info @vendor, @device) */
#define NEURON_PCI_VENDOR_ID	0x1d0f	/* Amazon */
#define NEURON_PCI_DEVICE_ID	0x7f00	/* used by no shipping device */

#define NEURON_MAX_CORES	15	/* cores (TPBs) a device can have */
#define NEURON_ENGINES_PER_CORE	5	/* PE, ACT, POOL, DVE, SP */
#define NEURON_NUM_SW_QUEUES	10	/* software NQs per core */
#define NEURON_EVT_SEM_COUNT	256	/* events, and semaphores, per core */
#define NEURON_DMA_ENGINES	16	/* DMA engines (and DMA queues) per core: dma_map bits */

/* Generations (struct neuron_device_info @gen; docs/hardware.md#generations) */
enum neuron_gen {
	NEURON_GEN_SUNDA = 0,	/* no DGE path, no feature-flag register */
	NEURON_GEN_CAYMAN = 1
};

/*
 * The five engines of a core, in notific_type order (docs/hardware.md#rec-types:
 * PE 0x04, ACT 0x08, POOL 0x0c, DVE 0x10, SP 0x14). The engine index is also
 * the block_id the device writes in records.
 */
enum neuron_engine {
	NEURON_ENGINE_PE = 0,
	NEURON_ENGINE_ACT = 1,
	NEURON_ENGINE_POOL = 2,
	NEURON_ENGINE_DVE = 3,
	NEURON_ENGINE_SP = 4
};

/* Engine states (struct neuron_engine_status @state) */
enum neuron_engine_state {
	NEURON_ENGINE_IDLE = 0,
	NEURON_ENGINE_RUNNING = 1,
	NEURON_ENGINE_WAITING = 2,	/* on a semaphore, event or full queue */
	NEURON_ENGINE_HALTED = 3	/* fatal error; only a reset leaves it */
};

/*
 * Feature flags (struct neuron_feature_flags @flags):
 * AWS_NEURON_ISA_XT_NEURON_FEATURE_FLAGS, local register 38 of every engine
 * (docs/hardware.md#dge-feature-flags)
 */
#define NEURON_FEATURE_DVE_PERF_MODE	(1u << 0)
#define NEURON_FEATURE_DGE_PACKET_NOTIF	(1u << 1)	/* gates DGE packet records */
#define NEURON_FEATURE_EVT_ACCEL_ADDR	(1u << 2)
#define NEURON_FEATURE_MASK		0x7u

/* Device faults (NEURON_EDGE_FAULT @cause bits, sysfs fault_counts) */
#define NEURON_FAULT_DMA_ERROR	(1u << 0)	/* an AXI write to host memory failed */
#define NEURON_FAULT_INTR_STORM	(1u << 1)	/* interrupts were rate limited */
/* every bit named above; a device may raise others, counted as "unnamed" */
#define NEURON_FAULT_NAMED	(NEURON_FAULT_DMA_ERROR | NEURON_FAULT_INTR_STORM)

/*
 * tpb_notific_intr_N causes (NEURON_EDGE_NOTIFIC @cause: bit N is cause N):
 * intr_1 is the hardware's, the rest are ours (docs/hardware.md#intr-causes)
 */
enum neuron_notific_intr {
	NEURON_NOTIFIC_INTR_THRESHOLD = 0,	/* a queue's unread count reached THRESHOLD */
	NEURON_NOTIFIC_INTR_DISABLED_QUEUE = 1,	/* write to a disabled queue, dropped */
	/* a full queue lost a record: ignore-full overwrote one, or no policy dropped one */
	NEURON_NOTIFIC_INTR_SW_OVERFLOW = 2,
	NEURON_NOTIFIC_INTR_HW_OVERFLOW = 3,	/* the input buffer dropped a record */
	NEURON_NOTIFIC_INTR_AXI_WRITE_ERROR = 4, /* the ring write failed (DMA error) */
	NEURON_NOTIFIC_INTR_BACKPRESSURE = 5,	/* a full queue stalled an engine */
	NEURON_NOTIFIC_INTR_ENGINE_FATAL = 6,	/* an engine halted on a fatal error */
	NEURON_NOTIFIC_INTR_BAD_HEAD = 7,	/* HEAD write outside [HEAD, TAIL] */
	NEURON_NOTIFIC_INTR_WRBUF_FULL = 8,	/* the input buffer was full: a producer stalled */
	NEURON_NOTIFIC_INTR_RESERVED = 8	/* the first release's name of bit 8 */
};

#define NEURON_NOTIFIC_INTR_BITS	9
#define NEURON_NOTIFIC_INTR_MASK_ALL	0x1ff

/*
 * Record classes, each routed to one software queue of its core
 * (docs/hardware.md#nq-routing): the queue a consumer drains tells it what
 * kind of record it reads. The device's route word gives 4 bits per class;
 * NEURON_ROUTE_DEFAULT is the routing the driver leaves in place.
 */
enum neuron_notific_class {
	NEURON_CLASS_TRACE = 0,		/* INST_START / INST_END */
	NEURON_CLASS_EXPLICIT = 1,	/* EXPLICIT */
	NEURON_CLASS_EVT_SEM = 2,	/* EVT_SEM (NUM2) */
	NEURON_CLASS_ERROR = 3,		/* ERROR / TPB_ERROR (NUM3, errors_NT) */
	NEURON_CLASS_THROTTLE = 4,	/* throttle / HAM (NUM4) */
	NEURON_CLASS_DGE = 5,		/* DGE_METADATA packet notifications */
	NEURON_CLASS_DMA = 6,		/* DMA completions */
	NEURON_CLASS_COUNT = 8
};

#define NEURON_ROUTE_DEFAULT	0x01543210u	/* class i -> queue i; DMA -> 1 */
#define NEURON_ROUTE_QUEUE(route, cls)	(((route) >> (4 * (cls))) & 0xf)

/* ---- Records: common parts ---------------------------------------------- */

/* docs/hardware.md#rec-format: every queue entry is 16 bytes */
#define NEURON_ISA_NOTIFICATION_NBYTES	16

/*
 * Header byte, at byte 3 of every record (docs/hardware.md#rec-format,
 * #rec-header: NOTIFICATION_TYPE_LSB = 24, MSB = 28 in the first 32-bit
 * word): notific_type in bits 4:0, software overflow (ignore-full overwrote
 * a record) bit 5, hardware overflow bit 6 (records of this queue before
 * this one were lost on the way to the ring: the input buffer dropped one,
 * or a ring write failed), phase bit 7 (1 on the first pass over the ring,
 * flips on every wrap).
 */
#define NEURON_ISA_HEADER_OFFSET	3
#define NEURON_ISA_HEADER_TYPE_MASK	0x1f
#define NEURON_ISA_HEADER_TYPE_SHIFT	0
#define NEURON_ISA_HEADER_SW_OVF	0x20
#define NEURON_ISA_HEADER_SW_OVF_SHIFT	5
#define NEURON_ISA_HEADER_HW_OVF	0x40
#define NEURON_ISA_HEADER_HW_OVF_SHIFT	6
#define NEURON_ISA_HEADER_PHASE		0x80
#define NEURON_ISA_HEADER_PHASE_SHIFT	7

/* le64 at byte 8 of every record: device time in picoseconds */
#define NEURON_ISA_TIMESTAMP_OFFSET	8

/* docs/hardware.md#rec-types: 24 values; per engine {INST_START, INST_END, EXPLICIT, EVT_SEM} */
enum neuron_isa_notification_type {
	NEURON_ISA_NOTIFICATION_TYPE_DMA = 0x02,
	NEURON_ISA_NOTIFICATION_TYPE_ERROR = 0x03,
	NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START = 0x04,
	NEURON_ISA_NOTIFICATION_TYPE_PE_INST_END = 0x05,
	NEURON_ISA_NOTIFICATION_TYPE_PE_EXPLICIT = 0x06,
	NEURON_ISA_NOTIFICATION_TYPE_PE_EVT_SEM = 0x07,
	NEURON_ISA_NOTIFICATION_TYPE_ACT_INST_START = 0x08,
	NEURON_ISA_NOTIFICATION_TYPE_ACT_INST_END = 0x09,
	NEURON_ISA_NOTIFICATION_TYPE_ACT_EXPLICIT = 0x0a,
	NEURON_ISA_NOTIFICATION_TYPE_ACT_EVT_SEM = 0x0b,
	NEURON_ISA_NOTIFICATION_TYPE_POOL_INST_START = 0x0c,
	NEURON_ISA_NOTIFICATION_TYPE_POOL_INST_END = 0x0d,
	NEURON_ISA_NOTIFICATION_TYPE_POOL_EXPLICIT = 0x0e,
	NEURON_ISA_NOTIFICATION_TYPE_POOL_EVT_SEM = 0x0f,
	NEURON_ISA_NOTIFICATION_TYPE_DVE_INST_START = 0x10,
	NEURON_ISA_NOTIFICATION_TYPE_DVE_INST_END = 0x11,
	NEURON_ISA_NOTIFICATION_TYPE_DVE_EXPLICIT = 0x12,
	NEURON_ISA_NOTIFICATION_TYPE_DVE_EVT_SEM = 0x13,
	NEURON_ISA_NOTIFICATION_TYPE_SP_INST_START = 0x14,
	NEURON_ISA_NOTIFICATION_TYPE_SP_INST_END = 0x15,
	NEURON_ISA_NOTIFICATION_TYPE_SP_EXPLICIT = 0x16,
	NEURON_ISA_NOTIFICATION_TYPE_SP_EVT_SEM = 0x17,
	NEURON_ISA_NOTIFICATION_TYPE_AXI_EVT_SEM = 0x1b,
	NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR = 0x1f
};

#define NEURON_ISA_NOTIFICATION_TYPE_COUNT 24

/* The per-engine record kinds, the low two bits of an engine notific_type. */
enum neuron_engine_record_kind {
	NEURON_ENGINE_RECORD_INST_START = 0,
	NEURON_ENGINE_RECORD_INST_END = 1,
	NEURON_ENGINE_RECORD_EXPLICIT = 2,
	NEURON_ENGINE_RECORD_EVT_SEM = 3
};

/* notific_type of engine @engine's record kind @kind: 0x04 + 4 * engine + kind */
#define NEURON_ENGINE_NOTIFIC_TYPE(engine, kind) \
	((__u8)(NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START + 4 * (engine) + (kind)))
/* for an engine notific_type (0x04..0x17): the engine, and the record kind */
#define NEURON_NOTIFIC_TYPE_ENGINE(type) \
	(((type) - NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START) / 4)
#define NEURON_NOTIFIC_TYPE_KIND(type) \
	(((type) - NEURON_ISA_NOTIFICATION_TYPE_PE_INST_START) % 4)

/* ---- Record layouts ------------------------------------------------------ */

/*
 * Word 0 of trace, EXPLICIT and DGE_METADATA records, a le32 at byte 0:
 * program_counter bits 19:0 (the instruction index), debug_hint bits 23:20,
 * the header byte bits 31:24.
 */
#define NEURON_ISA_W0_OFFSET		0
#define NEURON_ISA_W0_PC_MASK		0x000fffffu
#define NEURON_ISA_W0_PC_SHIFT		0
#define NEURON_ISA_W0_DEBUG_HINT_MASK	0x00f00000u
#define NEURON_ISA_W0_DEBUG_HINT_SHIFT	20

/*
 * Trace records, INST_START and INST_END (ours; docs/hardware.md#rec-classes
 * names the fields): word 0; le16 soft_reset_counter at byte 4 (programs
 * the engine started); le16 data_crc at byte 6, the CRC16 of the
 * instruction's input (INST_START) or output (INST_END) data, 0 for
 * instructions that move none.
 */
#define NEURON_ISA_TRACE_SOFT_RESET_COUNTER_OFFSET	4
#define NEURON_ISA_TRACE_DATA_CRC_OFFSET		6

/*
 * EXPLICIT records (ours; docs/hardware.md#rec-classes names the fields):
 * word 0; le16 soft_reset_counter at byte 4; le16 debug_hint_extended at
 * byte 6.
 */
#define NEURON_ISA_EXPLICIT_SOFT_RESET_COUNTER_OFFSET	4
#define NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET	6

/*
 * NEURON_ISA_TPB_DGE_METADATA_NOTIFICATION (docs/hardware.md#rec-dge-metadata),
 * an engine EXPLICIT type on the DGE queue with debug_hint
 * NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE: word 0; le16 dma_map at
 * byte 4 (bitmap of 16 DMA engine IDs); le16 at byte 6: num_packets bits
 * 11:0 (DMA packets per engine, 0 means 4096), reserved bits 13:12,
 * infer_program_counter bit 14, dma_group_id bit 15.
 */
#define NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE	0x1
#define NEURON_ISA_DGE_DMA_MAP_OFFSET		4
#define NEURON_ISA_DGE_W6_OFFSET		6
#define NEURON_ISA_DGE_NUM_PACKETS_MASK		0x0fff
#define NEURON_ISA_DGE_NUM_PACKETS_SHIFT	0
#define NEURON_ISA_DGE_RESERVED_MASK		0x3000
#define NEURON_ISA_DGE_RESERVED_SHIFT		12
#define NEURON_ISA_DGE_INFER_PC_MASK		0x4000
#define NEURON_ISA_DGE_INFER_PC_SHIFT		14
#define NEURON_ISA_DGE_DMA_GROUP_ID_MASK	0x8000
#define NEURON_ISA_DGE_DMA_GROUP_ID_SHIFT	15

/* EVT_SEM update modes, in EVT_SEM records (docs/hardware.md#evt-sem-ops) */
enum neuron_evt_sem_update_mode {
	NEURON_EVT_SEM_UPDATE_NONE = 0,
	NEURON_EVT_SEM_UPDATE_SEM_SET = 1,
	NEURON_EVT_SEM_UPDATE_SEM_INC = 2,
	NEURON_EVT_SEM_UPDATE_SEM_DEC = 3,
	NEURON_EVT_SEM_UPDATE_EVENT_SET = 4,
	NEURON_EVT_SEM_UPDATE_EVENT_CLEAR = 5
};

/*
 * EVT_SEM records, per engine and AXI_EVT_SEM (ours;
 * docs/hardware.md#rec-classes names event_semaphore_id, update_mode and the
 * new event_semaphore_value): byte 0 event_semaphore_id (0..255); byte 1:
 * update_mode bits 3:0 (enum neuron_evt_sem_update_mode), is_event bit 4
 * (1: an event, 0: a semaphore), reserved bits 7:5; byte 2 block_id (the
 * engine that made the update, NEURON_EVT_SEM_BLOCK_ID_AXI in AXI_EVT_SEM
 * records); le32 event_semaphore_value at byte 4 (the value after the
 * update). AXI_EVT_SEM records are written for host writes through the
 * EVT_SEM windows while the core's AXI_NOTIFY is on
 * (docs/device-model.md#axi-evt-sem).
 */
#define NEURON_ISA_EVT_SEM_ID_OFFSET		0
#define NEURON_ISA_EVT_SEM_MODE_OFFSET		1
#define NEURON_ISA_EVT_SEM_UPDATE_MODE_MASK	0x0f
#define NEURON_ISA_EVT_SEM_UPDATE_MODE_SHIFT	0
#define NEURON_ISA_EVT_SEM_IS_EVENT_MASK	0x10
#define NEURON_ISA_EVT_SEM_IS_EVENT_SHIFT	4
#define NEURON_ISA_EVT_SEM_BLOCK_ID_OFFSET	2
#define NEURON_ISA_EVT_SEM_VALUE_OFFSET		4
#define NEURON_EVT_SEM_BLOCK_ID_AXI		0xff	/* the update came over AXI (the host) */

/*
 * DMA completion records (ours; docs/device-model.md#dma-engines), class
 * NEURON_CLASS_DMA, written when DMA engine dma_engine finishes its part of
 * a DGE copy and its queue's M2S trigger is armed
 * (NEURON_IOC_NOTIFY_TRIGGER): byte 0 dma_engine (0..15, a bit of the
 * DGE_METADATA record's dma_map); byte 1 dma_queue (the engine's queue, 0:
 * each engine has one); byte 2 reserved (0); header at byte 3; le32
 * descriptor_count at byte 4: the DMA packets (descriptors) the engine
 * completed for that copy, 1..4096; timestamp at byte 8.
 */
#define NEURON_ISA_DMA_ENGINE_OFFSET		0
#define NEURON_ISA_DMA_QUEUE_OFFSET		1
#define NEURON_ISA_DMA_DESC_COUNT_OFFSET	4

/*
 * ERROR (0x03) records take NEURON_ISA_INTERRUPT_NOTIFICATION's form
 * {group:3, block_id:7, cause_bits}, the hardware's "sending interrupt"
 * record; ERROR is its interrupt-and-warning class
 * (docs/hardware.md#rec-interrupt). le16 at byte 0: group bits 2:0 (enum
 * neuron_isa_interrupt_group), block_id bits 9:3 (the engine or queue the
 * cause came from), reserved bits 15:10; byte 2 reserved; le32 cause_bits
 * at byte 4.
 */
enum neuron_isa_interrupt_group {
	NEURON_ISA_INTERRUPT_GROUP_NOTIFIC = 0,	/* cause_bits = tpb_notific_intr_0..8 */
	NEURON_ISA_INTERRUPT_GROUP_THROTTLE = 1, /* cause_bits = throttle level */
	NEURON_ISA_INTERRUPT_GROUP_DEVICE = 2	/* cause_bits = NEURON_FAULT_* bits */
};

#define NEURON_ISA_INTR_W0_OFFSET		0
#define NEURON_ISA_INTR_GROUP_MASK		0x0007
#define NEURON_ISA_INTR_GROUP_SHIFT		0
#define NEURON_ISA_INTR_BLOCK_ID_MASK		0x03f8
#define NEURON_ISA_INTR_BLOCK_ID_SHIFT		3
#define NEURON_ISA_INTR_CAUSE_OFFSET		4

/* NEURON_ISA_TPB_ERROR_TYPE, the error_id at byte 0 (docs/hardware.md#rec-error-ids) */
enum neuron_isa_tpb_error_type {
	NEURON_ISA_TPB_ERROR_FP_UNDERFLOW = 0x00,
	NEURON_ISA_TPB_ERROR_FP_NAN = 0x01,
	NEURON_ISA_TPB_ERROR_FP_INF = 0x02,
	NEURON_ISA_TPB_ERROR_FP_OVERFLOW = 0x03,
	NEURON_ISA_TPB_ERROR_MEMORY_ERROR = 0x04,
	NEURON_ISA_TPB_ERROR_FAKE_ERROR = 0x05,
	NEURON_ISA_TPB_ERROR_SEMAPHORE_ERROR = 0x06,
	NEURON_ISA_TPB_ERROR_EVENT_ERROR = 0x07,
	NEURON_ISA_TPB_ERROR_PSUM_COLLISION = 0x08,
	NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL = 0x09,
	NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL = 0x0a
};

/* what the sequencer arm's info holds (docs/hardware.md#rec-seq-metadata) */
enum neuron_isa_seq_info_kind {
	NEURON_ISA_SEQ_INFO_OTHER = 0,		/* reserved */
	NEURON_ISA_SEQ_INFO_BAD_OPCODE = 1,	/* info = opcode */
	NEURON_ISA_SEQ_INFO_SIGNAL = 2,		/* info = signo */
	NEURON_ISA_SEQ_INFO_FP = 3,		/* info = exception flags */
	NEURON_ISA_SEQ_INFO_EXCEPTION = 4,	/* info = Type:4, Cause:4 */
	NEURON_ISA_SEQ_INFO_DGE_BOUNDS = 5,	/* ours: DGE content OOB */
	NEURON_ISA_SEQ_INFO_DGE_INVALID = 6	/* ours: DGE structural error */
};

/* DGE direction bits, in the sequencer arm's direction */
enum neuron_dge_direction {
	NEURON_DGE_DIR_SRC = 1,
	NEURON_DGE_DIR_DST = 2
};

/*
 * NEURON_ISA_TPB_ERROR_NOTIFICATION, byte for byte
 * (docs/hardware.md#rec-tpb-error): byte 0 error_id (enum
 * neuron_isa_tpb_error_type); a 48-bit metadata split around the header
 * byte, bits 15:0 a le16 at byte 1 (metadata_lo) and bits 47:16 a le32 at
 * byte 4 (metadata_hi).
 *
 * Sequencer arm (SEQUENCER_NONFATAL, SEQUENCER_FATAL): metadata_hi is
 * NEURON_ISA_TPB_SEQUENCER_GENERIC_ERROR_METADATA_HI
 * (docs/hardware.md#rec-seq-metadata): block_id bits 3:0 (the engine),
 * program_counter bits 15:4 (the faulting instruction), info bits 23:16,
 * reserved bits 31:24. metadata_lo is ours
 * (docs/decisions/0003-choices.md#seq-metadata-lo): info_kind bits 3:0 (enum
 * neuron_isa_seq_info_kind), bc_reg bits 9:4 (DGE: the $S index holding the
 * bound), direction bits 11:10 (DGE: enum neuron_dge_direction bits),
 * reserved bits 15:12.
 */
#define NEURON_ISA_TPB_ERROR_ID_OFFSET		0
#define NEURON_ISA_TPB_ERROR_METADATA_LO_OFFSET	1
#define NEURON_ISA_TPB_ERROR_METADATA_HI_OFFSET	4
#define NEURON_ISA_SEQ_LO_INFO_KIND_MASK	0x000f
#define NEURON_ISA_SEQ_LO_INFO_KIND_SHIFT	0
#define NEURON_ISA_SEQ_LO_BC_REG_MASK		0x03f0
#define NEURON_ISA_SEQ_LO_BC_REG_SHIFT		4
#define NEURON_ISA_SEQ_LO_DIRECTION_MASK	0x0c00
#define NEURON_ISA_SEQ_LO_DIRECTION_SHIFT	10
#define NEURON_ISA_SEQ_HI_BLOCK_ID_MASK		0x0000000fu
#define NEURON_ISA_SEQ_HI_BLOCK_ID_SHIFT	0
#define NEURON_ISA_SEQ_HI_PC_MASK		0x0000fff0u
#define NEURON_ISA_SEQ_HI_PC_SHIFT		4
#define NEURON_ISA_SEQ_HI_INFO_MASK		0x00ff0000u
#define NEURON_ISA_SEQ_HI_INFO_SHIFT		16

/* ---- Accessors ------------------------------------------------------------ */

/* A field of a word: (word & mask) >> shift, and a value placed in a field. */
#define NEURON_FIELD_GET(mask, shift, word)	(((word) & (mask)) >> (shift))
#define NEURON_FIELD_PREP(mask, shift, val)	(((val) << (shift)) & (mask))

/* Little-endian loads from the bytes of a record at byte offset @off. */
#define NEURON_REC_U8(rec, off)	((__u8)(rec)[(off)])
#define NEURON_REC_LE16(rec, off) \
	((__u16)((__u16)(rec)[(off)] | (__u16)((__u16)(rec)[(off) + 1] << 8)))
#define NEURON_REC_LE32(rec, off) \
	((__u32)(rec)[(off)] | ((__u32)(rec)[(off) + 1] << 8) | \
	 ((__u32)(rec)[(off) + 2] << 16) | ((__u32)(rec)[(off) + 3] << 24))
#define NEURON_REC_LE64(rec, off) \
	((__u64)NEURON_REC_LE32(rec, off) | ((__u64)NEURON_REC_LE32(rec, (off) + 4) << 32))

/* Every record */
#define NEURON_REC_HEADER(rec)	NEURON_REC_U8(rec, NEURON_ISA_HEADER_OFFSET)
#define NEURON_REC_HDR_FIELD(rec, mask, shift) \
	((__u8)NEURON_FIELD_GET(mask, shift, NEURON_REC_HEADER(rec)))
#define NEURON_REC_TYPE(rec) \
	NEURON_REC_HDR_FIELD(rec, NEURON_ISA_HEADER_TYPE_MASK, NEURON_ISA_HEADER_TYPE_SHIFT)
#define NEURON_REC_SW_OVF(rec) \
	NEURON_REC_HDR_FIELD(rec, NEURON_ISA_HEADER_SW_OVF, NEURON_ISA_HEADER_SW_OVF_SHIFT)
#define NEURON_REC_HW_OVF(rec) \
	NEURON_REC_HDR_FIELD(rec, NEURON_ISA_HEADER_HW_OVF, NEURON_ISA_HEADER_HW_OVF_SHIFT)
#define NEURON_REC_PHASE(rec) \
	NEURON_REC_HDR_FIELD(rec, NEURON_ISA_HEADER_PHASE, NEURON_ISA_HEADER_PHASE_SHIFT)
#define NEURON_REC_TIMESTAMP(rec) NEURON_REC_LE64(rec, NEURON_ISA_TIMESTAMP_OFFSET)

/* Trace, EXPLICIT, DGE_METADATA: word 0 */
#define NEURON_REC_PC(rec) \
	NEURON_FIELD_GET(NEURON_ISA_W0_PC_MASK, NEURON_ISA_W0_PC_SHIFT, \
			 NEURON_REC_LE32(rec, NEURON_ISA_W0_OFFSET))
#define NEURON_REC_DEBUG_HINT(rec) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_W0_DEBUG_HINT_MASK, NEURON_ISA_W0_DEBUG_HINT_SHIFT, \
				NEURON_REC_LE32(rec, NEURON_ISA_W0_OFFSET)))

/* Trace */
#define NEURON_REC_TRACE_SOFT_RESET_COUNTER(rec) \
	NEURON_REC_LE16(rec, NEURON_ISA_TRACE_SOFT_RESET_COUNTER_OFFSET)
#define NEURON_REC_TRACE_DATA_CRC(rec) NEURON_REC_LE16(rec, NEURON_ISA_TRACE_DATA_CRC_OFFSET)

/* EXPLICIT */
#define NEURON_REC_EXPLICIT_SOFT_RESET_COUNTER(rec) \
	NEURON_REC_LE16(rec, NEURON_ISA_EXPLICIT_SOFT_RESET_COUNTER_OFFSET)
#define NEURON_REC_EXPLICIT_DEBUG_HINT_EXT(rec) \
	NEURON_REC_LE16(rec, NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET)

/* DGE_METADATA */
#define NEURON_REC_DGE_DMA_MAP(rec) NEURON_REC_LE16(rec, NEURON_ISA_DGE_DMA_MAP_OFFSET)
#define NEURON_REC_DGE_W6_FIELD(rec, f) \
	((__u16)NEURON_FIELD_GET(NEURON_ISA_DGE_##f##_MASK, NEURON_ISA_DGE_##f##_SHIFT, \
				 NEURON_REC_LE16(rec, NEURON_ISA_DGE_W6_OFFSET)))
#define NEURON_REC_DGE_NUM_PACKETS(rec)	NEURON_REC_DGE_W6_FIELD(rec, NUM_PACKETS)
#define NEURON_REC_DGE_RESERVED(rec)	NEURON_REC_DGE_W6_FIELD(rec, RESERVED)
#define NEURON_REC_DGE_INFER_PC(rec)	NEURON_REC_DGE_W6_FIELD(rec, INFER_PC)
#define NEURON_REC_DGE_DMA_GROUP_ID(rec) NEURON_REC_DGE_W6_FIELD(rec, DMA_GROUP_ID)

/* EVT_SEM */
#define NEURON_REC_EVT_SEM_ID(rec)	NEURON_REC_U8(rec, NEURON_ISA_EVT_SEM_ID_OFFSET)
#define NEURON_REC_EVT_SEM_MODE_FIELD(rec, f) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_EVT_SEM_##f##_MASK, NEURON_ISA_EVT_SEM_##f##_SHIFT, \
				NEURON_REC_U8(rec, NEURON_ISA_EVT_SEM_MODE_OFFSET)))
#define NEURON_REC_EVT_SEM_UPDATE_MODE(rec) NEURON_REC_EVT_SEM_MODE_FIELD(rec, UPDATE_MODE)
#define NEURON_REC_EVT_SEM_IS_EVENT(rec) NEURON_REC_EVT_SEM_MODE_FIELD(rec, IS_EVENT)
#define NEURON_REC_EVT_SEM_BLOCK_ID(rec) NEURON_REC_U8(rec, NEURON_ISA_EVT_SEM_BLOCK_ID_OFFSET)
#define NEURON_REC_EVT_SEM_VALUE(rec)	NEURON_REC_LE32(rec, NEURON_ISA_EVT_SEM_VALUE_OFFSET)

/* DMA */
#define NEURON_REC_DMA_ENGINE(rec)	NEURON_REC_U8(rec, NEURON_ISA_DMA_ENGINE_OFFSET)
#define NEURON_REC_DMA_QUEUE(rec)	NEURON_REC_U8(rec, NEURON_ISA_DMA_QUEUE_OFFSET)
#define NEURON_REC_DMA_DESC_COUNT(rec)	NEURON_REC_LE32(rec, NEURON_ISA_DMA_DESC_COUNT_OFFSET)

/* ERROR (interrupt form) */
#define NEURON_REC_INTR_GROUP(rec) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_INTR_GROUP_MASK, NEURON_ISA_INTR_GROUP_SHIFT, \
				NEURON_REC_LE16(rec, NEURON_ISA_INTR_W0_OFFSET)))
#define NEURON_REC_INTR_BLOCK_ID(rec) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_INTR_BLOCK_ID_MASK, NEURON_ISA_INTR_BLOCK_ID_SHIFT, \
				NEURON_REC_LE16(rec, NEURON_ISA_INTR_W0_OFFSET)))
#define NEURON_REC_INTR_CAUSE(rec)	NEURON_REC_LE32(rec, NEURON_ISA_INTR_CAUSE_OFFSET)

/* TPB_ERROR */
#define NEURON_REC_TPB_ERROR_ID(rec)	NEURON_REC_U8(rec, NEURON_ISA_TPB_ERROR_ID_OFFSET)
#define NEURON_REC_TPB_METADATA_LO(rec) \
	NEURON_REC_LE16(rec, NEURON_ISA_TPB_ERROR_METADATA_LO_OFFSET)
#define NEURON_REC_TPB_METADATA_HI(rec) \
	NEURON_REC_LE32(rec, NEURON_ISA_TPB_ERROR_METADATA_HI_OFFSET)
#define NEURON_REC_SEQ_LO_FIELD(rec, f) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_SEQ_LO_##f##_MASK, NEURON_ISA_SEQ_LO_##f##_SHIFT, \
				NEURON_REC_TPB_METADATA_LO(rec)))
#define NEURON_REC_SEQ_INFO_KIND(rec)	NEURON_REC_SEQ_LO_FIELD(rec, INFO_KIND)
#define NEURON_REC_SEQ_BC_REG(rec)	NEURON_REC_SEQ_LO_FIELD(rec, BC_REG)
#define NEURON_REC_SEQ_DIRECTION(rec)	NEURON_REC_SEQ_LO_FIELD(rec, DIRECTION)
#define NEURON_REC_SEQ_BLOCK_ID(rec) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_SEQ_HI_BLOCK_ID_MASK, NEURON_ISA_SEQ_HI_BLOCK_ID_SHIFT, \
				NEURON_REC_TPB_METADATA_HI(rec)))
#define NEURON_REC_SEQ_PC(rec) \
	((__u16)NEURON_FIELD_GET(NEURON_ISA_SEQ_HI_PC_MASK, NEURON_ISA_SEQ_HI_PC_SHIFT, \
				 NEURON_REC_TPB_METADATA_HI(rec)))
#define NEURON_REC_SEQ_INFO(rec) \
	((__u8)NEURON_FIELD_GET(NEURON_ISA_SEQ_HI_INFO_MASK, NEURON_ISA_SEQ_HI_INFO_SHIFT, \
				NEURON_REC_TPB_METADATA_HI(rec)))

/*
 * Writers: store @val little-endian at byte @off of @rec, or into the field
 * @mask/@shift of the little-endian word there (the rest of the word kept).
 */
static __inline__ void neuron_rec_put_le(__u8 *rec, unsigned int off,
					 unsigned int bytes, __u64 val)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		rec[off + i] = (__u8)(val >> (8 * i));
}

static __inline__ void neuron_rec_put_field(__u8 *rec, unsigned int off,
					    unsigned int bytes, __u32 mask,
					    unsigned int shift, __u32 val)
{
	__u32 word = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		word |= (__u32)rec[off + i] << (8 * i);
	word = (word & ~mask) | ((val << shift) & mask);
	neuron_rec_put_le(rec, off, bytes, word);
}

#endif /* _UAPI_LINUX_NEURON_RECORD_H */
