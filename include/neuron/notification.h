/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The 16-byte NEURON_ISA notification records that the engines write into the
 * notification queues (NQs), shared by the device model, the driver and
 * libneuron. This is the only definition of these layouts in the project.
 *
 * Sources:
 *   docs/hardware.md#rec-format, #rec-types, #timestamp: 16-byte records, the
 *     header byte, the 24 notific_type values, phase bit, 1 ps timestamp
 *   docs/hardware.md#rec-tpb-error, #rec-error-ids, #rec-seq-metadata:
 *     NEURON_ISA_TPB_ERROR_NOTIFICATION (byte offsets), the error-id enum,
 *     the sequencer metadata_hi arm {block_id:4, pc:12, info:8}
 *   docs/hardware.md#rec-dge-metadata:
 *     NEURON_ISA_TPB_DGE_METADATA_NOTIFICATION
 *   docs/hardware.md#dge-bounds-reg, #dge-indirect: BOUND_CHECK_REG,
 *     DMA_INDIRECT_FLAGS (one byte each)
 *
 * Layouts the hardware description does not give (trace, explicit, EVT_SEM,
 * DMA, the ERROR 0x03 interrupt form) are ours
 * (docs/decisions.md#own-record-layouts); they keep the header at byte 3 and
 * the timestamp at byte 8 like every layout it gives, and each field is
 * documented.
 *
 * Bitfields are allocated from the least significant bit (GCC/Clang on
 * little-endian x86-64, the ABI the hardware's own headers were checked
 * with). Every size and offset is checked below; bit positions are also given
 * as masks, for code that prefers shifts to bitfields.
 */
#ifndef NEURON_NOTIFICATION_H
#define NEURON_NOTIFICATION_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#else
#include <stdint.h>
#include <stddef.h>
#endif

#if defined(__cplusplus)
#define NEURON_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define NEURON_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define NEURON_ISA_PACKED __attribute__((packed))

/* docs/hardware.md#rec-format: every queue entry is 16 bytes */
#define NEURON_ISA_NOTIFICATION_NBYTES 0x10

/*
 * Header byte, at byte 3 of every record (docs/hardware.md#rec-format,
 * #rec-header: NOTIFICATION_TYPE_LSB = 24, MSB = 28 in the first 32-bit
 * word).
 */
struct neuron_isa_notification_header {
	uint8_t notific_type : 5;		/* enum neuron_isa_notification_type */
	uint8_t software_queue_overflow : 1;	/* ring was full, ignore-full overwrote */
	uint8_t hardware_queue_overflow : 1;	/* NOTIFIC input buffer overflowed */
	uint8_t phase : 1;			/* 1 on the first pass, flips on wrap */
} NEURON_ISA_PACKED;

#define NEURON_ISA_HEADER_OFFSET	3
#define NEURON_ISA_HEADER_TYPE_MASK	0x1f
#define NEURON_ISA_HEADER_SW_OVF	0x20
#define NEURON_ISA_HEADER_HW_OVF	0x40
#define NEURON_ISA_HEADER_PHASE		0x80
#define NEURON_ISA_TIMESTAMP_OFFSET	8

/*
 * docs/hardware.md#rec-types: 24 values; per engine {INST_START, INST_END,
 * EXPLICIT, EVT_SEM}
 */
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
	NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR = 0x1f,
};

#define NEURON_ISA_NOTIFICATION_TYPE_COUNT 24

/*
 * The five engines of a TPB, in notific_type order (docs/hardware.md#rec-types:
 * PE 0x04, ACT 0x08, POOL 0x0c, DVE 0x10, SP 0x14). The engine index is also
 * the block_id the device writes in error metadata.
 */
enum neuron_engine {
	NEURON_ENGINE_PE = 0,
	NEURON_ENGINE_ACT = 1,
	NEURON_ENGINE_POOL = 2,
	NEURON_ENGINE_DVE = 3,
	NEURON_ENGINE_SP = 4,
};

#define NEURON_ENGINES_PER_CORE 5

/* The per-engine record kinds, the low two bits of an engine notific_type. */
enum neuron_engine_record_kind {
	NEURON_ENGINE_RECORD_INST_START = 0,
	NEURON_ENGINE_RECORD_INST_END = 1,
	NEURON_ENGINE_RECORD_EXPLICIT = 2,
	NEURON_ENGINE_RECORD_EVT_SEM = 3,
};

/** neuron_engine_notific_type() - notific_type of an engine's record kind. */
static inline uint8_t neuron_engine_notific_type(unsigned int engine,
						 unsigned int kind)
{
	return (uint8_t)(0x04 + 4 * engine + kind);
}

/*
 * NEURON_ISA_TPB_ERROR_TYPE, the error_id at byte 0
 * (docs/hardware.md#rec-error-ids)
 */
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
	NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL = 0x0a,
};

/*
 * docs/hardware.md#rec-tpb-error: metadata is a 48-bit field split around the
 * header byte, bits 15:0 at byte 1 (metadata_lo) and bits 47:16 at byte 4
 * (metadata_hi).
 */
union neuron_isa_tpb_error_metadata_lo {
	uint16_t raw;
	/*
	 * Sequencer arm, ours (docs/decisions.md#seq-metadata-lo: the hardware
	 * description names no sub-fields for bits 15:0):
	 * what kind of condition metadata_hi.info describes, and for DGE
	 * bounds failures which register and direction.
	 */
	struct {
		uint16_t info_kind : 4;	/* enum neuron_isa_seq_info_kind */
		uint16_t bc_reg : 6;	/* DGE: $S index holding the bound */
		uint16_t direction : 2;	/* DGE: enum neuron_dge_direction bits */
		uint16_t reserved : 4;
	} NEURON_ISA_PACKED sequencer;
} NEURON_ISA_PACKED;

union neuron_isa_tpb_error_metadata_hi {
	uint32_t raw;
	/*
	 * NEURON_ISA_TPB_SEQUENCER_GENERIC_ERROR_METADATA_HI
	 * (docs/hardware.md#rec-seq-metadata)
	 */
	struct {
		uint32_t block_id : 4;		/* engine that raised it */
		uint32_t program_counter : 12;	/* faulting instruction index */
		uint32_t info : 8;		/* per info_kind, see below */
		uint32_t reserved : 8;
	} NEURON_ISA_PACKED sequencer;
} NEURON_ISA_PACKED;

/* what metadata_hi.sequencer.info holds (docs/hardware.md#rec-seq-metadata) */
enum neuron_isa_seq_info_kind {
	NEURON_ISA_SEQ_INFO_OTHER = 0,		/* reserved */
	NEURON_ISA_SEQ_INFO_BAD_OPCODE = 1,	/* info = opcode */
	NEURON_ISA_SEQ_INFO_SIGNAL = 2,		/* info = signo */
	NEURON_ISA_SEQ_INFO_FP = 3,		/* info = exception flags */
	NEURON_ISA_SEQ_INFO_EXCEPTION = 4,	/* info = Type:4, Cause:4 */
	NEURON_ISA_SEQ_INFO_DGE_BOUNDS = 5,	/* ours: DGE content OOB */
	NEURON_ISA_SEQ_INFO_DGE_INVALID = 6,	/* ours: DGE structural error */
};

/*
 * NEURON_ISA_TPB_ERROR_NOTIFICATION, byte for byte
 * (docs/hardware.md#rec-tpb-error)
 */
struct neuron_isa_tpb_error_notification {
	uint8_t error_id;					/* +0 */
	union neuron_isa_tpb_error_metadata_lo metadata_lo;	/* +1 */
	struct neuron_isa_notification_header header;		/* +3 */
	union neuron_isa_tpb_error_metadata_hi metadata_hi;	/* +4 */
	uint64_t timestamp;					/* +8, ps */
} NEURON_ISA_PACKED;

/* docs/hardware.md#rec-dge-metadata: METADATA_TYPE_DGE */
#define NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE 0x1

/*
 * NEURON_ISA_TPB_DGE_METADATA_NOTIFICATION (docs/hardware.md#rec-dge-metadata)
 */
struct neuron_isa_tpb_dge_metadata_notification {
	uint32_t program_counter : 20;
	uint32_t debug_hint : 4;	/* NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE */
	uint32_t header : 8;		/* struct neuron_isa_notification_header */
	uint16_t dma_map;		/* bitmap of 16 DMA engine IDs */
	uint16_t num_packets : 12;	/* DMA packets per engine, 0 means 4096 */
	uint16_t reserved : 2;
	uint16_t infer_program_counter : 1;
	uint16_t dma_group_id : 1;
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/*
 * Trace records, INST_START and INST_END (ours; docs/hardware.md#rec-classes
 * names the fields): program_counter:20 is the instruction index in the
 * submitted stream, soft_reset_counter counts the engine's executions,
 * data_crc is the CRC16 of the instruction's input (INST_START) or output
 * (INST_END) data, 0 for instructions that move none.
 */
struct neuron_isa_trace_notification {
	uint32_t program_counter : 20;
	uint32_t debug_hint : 4;
	uint32_t header : 8;
	uint16_t soft_reset_counter;
	uint16_t data_crc;
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/* EXPLICIT records (ours; docs/hardware.md#rec-classes names the fields) */
struct neuron_isa_explicit_notification {
	uint32_t program_counter : 20;
	uint32_t debug_hint : 4;
	uint32_t header : 8;
	uint16_t soft_reset_counter;
	uint16_t debug_hint_extended;
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/* EVT_SEM update modes, in EVT_SEM records (docs/hardware.md#evt-sem-ops) */
enum neuron_evt_sem_update_mode {
	NEURON_EVT_SEM_UPDATE_NONE = 0,
	NEURON_EVT_SEM_UPDATE_SEM_SET = 1,
	NEURON_EVT_SEM_UPDATE_SEM_INC = 2,
	NEURON_EVT_SEM_UPDATE_SEM_DEC = 3,
	NEURON_EVT_SEM_UPDATE_EVENT_SET = 4,
	NEURON_EVT_SEM_UPDATE_EVENT_CLEAR = 5,
};

/*
 * EVT_SEM records, per engine and AXI_EVT_SEM (ours;
 * docs/hardware.md#rec-classes names event_semaphore_id, update_mode and the
 * new event_semaphore_value).
 */
struct neuron_isa_evt_sem_notification {
	uint8_t event_semaphore_id;	/* 0..255 */
	uint8_t update_mode : 4;	/* enum neuron_evt_sem_update_mode */
	uint8_t is_event : 1;		/* 1: an event, 0: a semaphore */
	uint8_t reserved0 : 3;
	uint8_t block_id;		/* engine that made the update */
	struct neuron_isa_notification_header header;
	uint32_t event_semaphore_value;	/* value after the update */
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/* DMA completion records (ours) */
struct neuron_isa_dma_notification {
	uint8_t dma_engine;
	uint8_t dma_queue;
	uint8_t reserved0;
	struct neuron_isa_notification_header header;
	uint32_t descriptor_count;	/* descriptors completed */
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/*
 * ERROR (0x03) records take NEURON_ISA_INTERRUPT_NOTIFICATION's form
 * {group:3, block_id:7, cause_bits}, the hardware's "sending interrupt"
 * record; ERROR is its interrupt-and-warning class
 * (docs/hardware.md#rec-interrupt). We write them for NOTIFIC interrupt
 * causes; group is the cause group below.
 */
enum neuron_isa_interrupt_group {
	NEURON_ISA_INTERRUPT_GROUP_NOTIFIC = 0,	/* cause_bits = tpb_notific_intr_0..8 */
	NEURON_ISA_INTERRUPT_GROUP_THROTTLE = 1, /* cause_bits = throttle level */
	NEURON_ISA_INTERRUPT_GROUP_DEVICE = 2,	/* cause_bits = device fault bits */
};

struct neuron_isa_interrupt_notification {
	uint16_t group : 3;		/* enum neuron_isa_interrupt_group */
	uint16_t block_id : 7;		/* engine or queue the cause came from */
	uint16_t reserved0 : 6;
	uint8_t reserved1;
	struct neuron_isa_notification_header header;
	uint32_t cause_bits;
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/*
 * NEURON_ISA_TPB_BOUND_CHECK_REG, one per DGE direction
 * (docs/hardware.md#dge-bounds-reg)
 */
struct neuron_isa_tpb_bound_check_reg {
	uint8_t bc_reg : 6;			/* $S index of the limit (+1: high 32 b) */
	uint8_t bc_disable_oob_error_notif : 1;	/* suppress the OOB notification */
	uint8_t bc_enabled : 1;			/* perform the bounds check */
} NEURON_ISA_PACKED;

/* NEURON_ISA_TPB_DMA_INDIRECT_FLAGS (docs/hardware.md#dge-indirect) */
struct neuron_isa_tpb_dma_indirect_flags {
	uint8_t indirect_mode : 2;	/* 0: direct descriptor */
	uint8_t idx_bound_is_err : 1;
	uint8_t non_unique_dst_idx : 1;
	uint8_t gather_dim : 2;
	uint8_t scatter_dim : 2;
} NEURON_ISA_PACKED;

/* DGE direction bits used in error metadata */
enum neuron_dge_direction {
	NEURON_DGE_DIR_SRC = 1,
	NEURON_DGE_DIR_DST = 2,
};

/* Any record: the raw bytes and every view of them. */
union neuron_isa_notification {
	uint8_t bytes[NEURON_ISA_NOTIFICATION_NBYTES];
	struct {
		uint8_t body[3];
		struct neuron_isa_notification_header header;
		uint32_t body_hi;
		uint64_t timestamp;
	} NEURON_ISA_PACKED generic;
	struct neuron_isa_tpb_error_notification tpb_error;
	struct neuron_isa_tpb_dge_metadata_notification dge_metadata;
	struct neuron_isa_trace_notification trace;
	struct neuron_isa_explicit_notification explicit_notif;
	struct neuron_isa_evt_sem_notification evt_sem;
	struct neuron_isa_dma_notification dma;
	struct neuron_isa_interrupt_notification interrupt;
} NEURON_ISA_PACKED;

/* neuron_isa_header_byte() - the header byte of a raw record */
static inline uint8_t neuron_isa_header_byte(const void *record)
{
	return ((const uint8_t *)record)[NEURON_ISA_HEADER_OFFSET];
}

/*
 * Sizes and offsets: docs/hardware.md#records, #dge-bounds-reg, #dge-indirect
 * and our own layouts.
 */
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_notification_header) == 1, "header is 1 byte");
NEURON_STATIC_ASSERT(sizeof(union neuron_isa_notification) == 16, "record is 16 bytes");
NEURON_STATIC_ASSERT(sizeof(union neuron_isa_tpb_error_metadata_lo) == 2, "metadata_lo 2 B");
NEURON_STATIC_ASSERT(sizeof(union neuron_isa_tpb_error_metadata_hi) == 4, "metadata_hi 4 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_error_notification) == 16, "tpb_error 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, error_id) == 0, "error_id@0");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, metadata_lo) == 1, "metadata_lo@1");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, header) == 3, "header@3");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, metadata_hi) == 4, "metadata_hi@4");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_dge_metadata_notification) == 16, "dge_metadata 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_dge_metadata_notification, dma_map) == 4, "dma_map@4");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_dge_metadata_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_trace_notification) == 16, "trace 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_trace_notification, soft_reset_counter) == 4, "src@4");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_trace_notification, data_crc) == 6, "crc@6");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_trace_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_explicit_notification) == 16, "explicit 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_explicit_notification, debug_hint_extended) == 6, "dhe@6");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_explicit_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_evt_sem_notification) == 16, "evt_sem 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_evt_sem_notification, header) == 3, "header@3");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_evt_sem_notification, event_semaphore_value) == 4, "value@4");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_evt_sem_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_dma_notification) == 16, "dma 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_dma_notification, header) == 3, "header@3");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_dma_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_interrupt_notification) == 16, "interrupt 16 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_interrupt_notification, header) == 3, "header@3");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_interrupt_notification, cause_bits) == 4, "cause@4");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_interrupt_notification, timestamp) == 8, "timestamp@8");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_bound_check_reg) == 1, "bound check reg 1 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_dma_indirect_flags) == 1, "indirect flags 1 B");

#endif /* NEURON_NOTIFICATION_H */
