/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The instruction format the emulated engines execute (ours:
 * docs/decisions.md#emu-isa). A program is an array of 32-byte instructions
 * placed in device memory; the driver copies it there on NEURON_IOC_SUBMIT and
 * starts the engine.
 *
 * Every instruction carries the 8-byte EVENTS block of
 * docs/hardware.md#evt-sem-ops (wait_mode/wait_idx, update_mode/update_idx,
 * semaphore_value:u32): the engine first waits as wait_mode says, then (with
 * tracing on) writes INST_START, performs the operation, applies the update,
 * and writes INST_END. program_counter in records is the instruction's index.
 */
#ifndef NEURON_EMU_ISA_H
#define NEURON_EMU_ISA_H

#include "notification.h"

#define NEURON_EMU_INSN_BYTES	32

enum neuron_emu_opcode {
	NEURON_OP_NOP = 0x00,		/* nothing; trace brackets only */
	NEURON_OP_NOTIFY = 0x01,	/* EXPLICIT record (debug_hint, debug_hint_ext) */
	NEURON_OP_HALT = 0x02,		/* end of program: the engine goes idle */
	NEURON_OP_SEM_SET = 0x03,	/* sem[idx] = value */
	NEURON_OP_SEM_INC = 0x04,	/* sem[idx] += value */
	NEURON_OP_SEM_DEC = 0x05,	/* sem[idx] -= value */
	NEURON_OP_WAIT_GE = 0x06,	/* block until sem[idx] >= value */
	NEURON_OP_WAIT_GE_AND_DEC = 0x07, /* ... then sem[idx] -= value, atomically */
	NEURON_OP_EVENT_SET = 0x08,	/* event[idx] = 1 */
	NEURON_OP_EVENT_CLEAR = 0x09,	/* event[idx] = 0 */
	NEURON_OP_REG_WRITE = 0x0a,	/* $S[idx] = value */
	NEURON_OP_DGE_COPY = 0x0b,	/* DGE descriptor, operand.dge */
	NEURON_OP_FP_ERROR = 0x0c,	/* inject a TPB_ERROR with error_id = value */
	NEURON_OP_THROTTLE = 0x0d,	/* assert the throttle edge, level = value */
	NEURON_OP_DELAY = 0x0e,		/* busy for value nanoseconds */
	NEURON_OP_COUNT
};

/* wait_mode of the EVENTS block */
enum neuron_emu_wait_mode {
	NEURON_WAIT_NONE = 0,
	NEURON_WAIT_SEM_GE = 1,		/* sem[wait_idx] >= semaphore_value */
	NEURON_WAIT_SEM_GE_AND_DEC = 2,	/* ... then decrement by it */
	NEURON_WAIT_EVENT_SET = 3,	/* event[wait_idx] == 1 */
};

/* docs/hardware.md#evt-sem: the per-instruction EVENTS block, 8 bytes */
struct neuron_emu_events {
	uint8_t wait_mode;		/* enum neuron_emu_wait_mode */
	uint8_t wait_idx;
	uint8_t update_mode;		/* enum neuron_evt_sem_update_mode */
	uint8_t update_idx;
	uint32_t semaphore_value;
} NEURON_ISA_PACKED;

/*
 * DGE backends (docs/hardware.md#dge-detect: "Select backend Pool",
 * "NO BACKEND FOUND")
 */
enum neuron_dge_backend {
	NEURON_DGE_BACKEND_NONE = 0,	/* "NO BACKEND FOUND, doing nothing" */
	NEURON_DGE_BACKEND_POOL = 1,
	NEURON_DGE_BACKEND_RTL = 2,
};

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

/*
 * A DGE copy descriptor: addresses are BAR4 (device memory) offsets; the
 * bound-check bytes are docs/hardware.md#dge-bounds-reg, the indirect flags
 * docs/hardware.md#dge-indirect.
 *
 * A DGE_COPY also uses two fields of the instruction header that other
 * opcodes keep reserved (docs/program-syntax.md#dge-index,
 * docs/decisions.md#dge-index-path):
 *  - insn.flags is the descriptor's mode byte, NEURON_DGE_F_*: bit 0 selects
 *    wide-offset limits ($S[bc_reg] | $S[bc_reg + 1] << 32; else $S[bc_reg]
 *    alone), bits 3..1 the log2 of the element size of an indirect
 *    descriptor (1 to 128 bytes; 0 for a direct one), bits 7..4 are 0;
 *  - insn.reserved0 is the index table of an indirect descriptor: the BAR4
 *    offset (a multiple of 4) of length >> log2 little-endian u32 element
 *    indices; 0 for a direct one.
 * In an indirect descriptor, length (a nonzero multiple of the element size)
 * is the size of each direction's window: element i comes from
 * src + idx[i] * size (gather) or src + i * size, and goes to
 * dst + idx[i] * size (scatter) or dst + i * size.
 */
#define NEURON_DGE_F_WIDE_OFFSET	0x01	/* 64-bit limits from two $S */
#define NEURON_DGE_F_ELEM_SHIFT		1	/* log2(element bytes), bits 3..1 */
#define NEURON_DGE_F_ELEM_MASK		0x0e
#define NEURON_DGE_F_ALL		0x0f
#define NEURON_DGE_IDX_ENTRY_BYTES	4	/* one u32 index per element */
struct neuron_emu_dge_desc {
	uint32_t src;
	uint32_t dst;
	uint32_t length;				/* bytes */
	struct neuron_isa_tpb_bound_check_reg bc_src;
	struct neuron_isa_tpb_bound_check_reg bc_dst;
	struct neuron_isa_tpb_dma_indirect_flags indirect;
	uint8_t backend;				/* enum neuron_dge_backend */
} NEURON_ISA_PACKED;

struct neuron_emu_insn {
	uint8_t opcode;			/* +0  enum neuron_emu_opcode */
	uint8_t flags;			/* +1  DGE_COPY: NEURON_DGE_F_*; else 0 */
	uint16_t debug_hint;		/* +2  low 4 bits -> records' debug_hint */
	uint32_t reserved0;		/* +4  DGE_COPY: index table; else 0 */
	struct neuron_emu_events events; /* +8 */
	union {				/* +16 */
		uint8_t raw[16];
		struct {
			uint32_t idx;	/* semaphore, event or $S index */
			uint32_t value;
			uint16_t debug_hint_extended;	/* NOTIFY */
			uint16_t reserved1;
			uint32_t reserved2;
		} NEURON_ISA_PACKED arg;
		struct neuron_emu_dge_desc dge;
	} operand;
} NEURON_ISA_PACKED;

NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_bound_check_reg) == 1, "bound check reg 1 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_dma_indirect_flags) == 1, "indirect flags 1 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_events) == 8, "EVENTS block is 8 bytes");
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_dge_desc) == 16, "DGE descriptor 16 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_insn) == NEURON_EMU_INSN_BYTES, "insn 32 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_emu_insn, events) == 8, "events@8");
NEURON_STATIC_ASSERT(offsetof(struct neuron_emu_insn, operand) == 16, "operand@16");

#endif /* NEURON_EMU_ISA_H */
