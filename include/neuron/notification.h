/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * C bitfield views of the 16-byte notification records, for the device
 * model's own tests (emulator/tests/devtest.c) and the kselftests, which
 * check records member by member. Not ABI and not a second definition: the
 * layouts, their enums and constants are defined once, as byte offsets,
 * masks and shifts, in include/uapi/linux/neuron_record.h; the device model,
 * the driver and libneuron read and write records through its accessors.
 * Every field of every view is checked against those masks at the end of
 * this file (sizes and byte offsets, in C and C++) and in
 * notification_views_check.hpp (bit positions, in C++20: a view built in a
 * constant expression, its bytes compared with hand-worked literals and
 * read back through the UAPI accessors; scripts/check-headers.sh compiles
 * it, and so does libneuron's test_decode.cpp).
 *
 * Bitfields are allocated from the least significant bit (GCC/Clang on
 * little-endian x86-64, the ABI the hardware's own headers were checked
 * with); the views hold for such hosts only.
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

#include "regs.h"	/* NEURON_STATIC_ASSERT; the UAPI record header */

#define NEURON_ISA_PACKED __attribute__((packed))

/*
 * Header byte, at byte 3 of every record (docs/hardware.md#rec-format,
 * #rec-header: NOTIFICATION_TYPE_LSB = 24, MSB = 28 in the first 32-bit
 * word).
 */
struct neuron_isa_notification_header {
	uint8_t notific_type : 5;		/* enum neuron_isa_notification_type */
	uint8_t software_queue_overflow : 1;	/* ring was full, ignore-full overwrote */
	uint8_t hardware_queue_overflow : 1;	/* lost before it: buffer drop, failed write */
	uint8_t phase : 1;			/* 1 on the first pass, flips on wrap */
} NEURON_ISA_PACKED;

/*
 * docs/hardware.md#rec-tpb-error: metadata is a 48-bit field split around the
 * header byte, bits 15:0 at byte 1 (metadata_lo) and bits 47:16 at byte 4
 * (metadata_hi).
 */
union neuron_isa_tpb_error_metadata_lo {
	uint16_t raw;
	/*
	 * Sequencer arm, ours (docs/decisions/0003-choices.md#seq-metadata-lo:
	 * the hardware description names no sub-fields for bits 15:0):
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

/* DMA completion records (ours; docs/device-model.md#dma-engines) */
struct neuron_isa_dma_notification {
	uint8_t dma_engine;
	uint8_t dma_queue;
	uint8_t reserved0;
	struct neuron_isa_notification_header header;
	uint32_t descriptor_count;	/* descriptors completed */
	uint64_t timestamp;
} NEURON_ISA_PACKED;

/* ERROR (0x03), the interrupt form {group:3, block_id:7, cause_bits} */
struct neuron_isa_interrupt_notification {
	uint16_t group : 3;		/* enum neuron_isa_interrupt_group */
	uint16_t block_id : 7;		/* engine or queue the cause came from */
	uint16_t reserved0 : 6;
	uint8_t reserved1;
	struct neuron_isa_notification_header header;
	uint32_t cause_bits;
	uint64_t timestamp;
} NEURON_ISA_PACKED;

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

/* Sizes and byte offsets of the views (the UAPI offsets, and literals) */
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

/* The views' byte offsets are the UAPI's */
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, metadata_lo) ==
		     NEURON_ISA_TPB_ERROR_METADATA_LO_OFFSET, "UAPI metadata_lo offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, metadata_hi) ==
		     NEURON_ISA_TPB_ERROR_METADATA_HI_OFFSET, "UAPI metadata_hi offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, header) ==
		     NEURON_ISA_HEADER_OFFSET, "UAPI header offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_error_notification, timestamp) ==
		     NEURON_ISA_TIMESTAMP_OFFSET, "UAPI timestamp offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_trace_notification, soft_reset_counter) ==
		     NEURON_ISA_TRACE_SOFT_RESET_COUNTER_OFFSET, "UAPI trace src offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_trace_notification, data_crc) ==
		     NEURON_ISA_TRACE_DATA_CRC_OFFSET, "UAPI trace crc offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_explicit_notification, debug_hint_extended) ==
		     NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET, "UAPI explicit dhe offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_tpb_dge_metadata_notification, dma_map) ==
		     NEURON_ISA_DGE_DMA_MAP_OFFSET, "UAPI dge dma_map offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_evt_sem_notification, block_id) ==
		     NEURON_ISA_EVT_SEM_BLOCK_ID_OFFSET, "UAPI evt_sem block_id offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_evt_sem_notification, event_semaphore_value) ==
		     NEURON_ISA_EVT_SEM_VALUE_OFFSET, "UAPI evt_sem value offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_dma_notification, dma_engine) ==
		     NEURON_ISA_DMA_ENGINE_OFFSET, "UAPI dma engine offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_dma_notification, dma_queue) ==
		     NEURON_ISA_DMA_QUEUE_OFFSET, "UAPI dma queue offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_dma_notification, descriptor_count) ==
		     NEURON_ISA_DMA_DESC_COUNT_OFFSET, "UAPI dma count offset");
NEURON_STATIC_ASSERT(offsetof(struct neuron_isa_interrupt_notification, cause_bits) ==
		     NEURON_ISA_INTR_CAUSE_OFFSET, "UAPI interrupt cause offset");

/*
 * Bit positions, field by field, are checked in C++20 (a view built in a
 * constant expression): include/neuron/notification_views_check.hpp.
 */

#endif /* NEURON_NOTIFICATION_H */
