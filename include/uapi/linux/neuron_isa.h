/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The instruction format the emulated engines execute (ours:
 * docs/decisions.md#emu-isa), as NEURON_IOC_SUBMIT takes it (struct
 * neuron_submit @insns of <linux/neuron.h>): a program is an array of 32-byte
 * instructions the driver copies to device memory before it starts the engine.
 * This is the only definition of the encoding; include/neuron/emu_isa.h (the
 * device model's and the driver's view) includes it and checks the sizes.
 *
 * Every instruction carries the 8-byte EVENTS block of
 * docs/hardware.md#evt-sem-ops (wait_mode/wait_idx, update_mode/update_idx,
 * semaphore_value:u32): the engine first waits as wait_mode says, then (with
 * tracing on) writes INST_START, performs the operation, applies the update,
 * and writes INST_END. program_counter in records is the instruction's index.
 *
 * Unlike <linux/neuron_record.h> this header has bitfields (the DGE
 * descriptor's bound-check and indirect bytes): they are allocated from the
 * least significant bit, as GCC and Clang do on little-endian hosts; their
 * byte-sized type is a GNU extension (__extension__ keeps -pedantic C89 quiet).
 */
#ifndef _UAPI_LINUX_NEURON_ISA_H
#define _UAPI_LINUX_NEURON_ISA_H

#include <linux/types.h>

#include "neuron_record.h"	/* enum neuron_engine, neuron_evt_sem_update_mode */

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
	NEURON_WAIT_EVENT_SET = 3	/* event[wait_idx] == 1 */
};

/* docs/hardware.md#evt-sem: the per-instruction EVENTS block, 8 bytes */
struct neuron_emu_events {
	__u8 wait_mode;		/* enum neuron_emu_wait_mode */
	__u8 wait_idx;
	__u8 update_mode;		/* enum neuron_evt_sem_update_mode */
	__u8 update_idx;
	__u32 semaphore_value;
} __attribute__((packed));

/*
 * DGE backends (docs/hardware.md#dge-detect: "Select backend Pool",
 * "NO BACKEND FOUND")
 */
enum neuron_dge_backend {
	NEURON_DGE_BACKEND_NONE = 0,	/* "NO BACKEND FOUND, doing nothing" */
	NEURON_DGE_BACKEND_POOL = 1,
	NEURON_DGE_BACKEND_RTL = 2
};

/*
 * NEURON_ISA_TPB_BOUND_CHECK_REG, one per DGE direction
 * (docs/hardware.md#dge-bounds-reg)
 */
struct neuron_isa_tpb_bound_check_reg {
	__extension__ __u8 bc_reg : 6;			/* $S index of the limit (+1: high 32 b) */
	__extension__ __u8 bc_disable_oob_error_notif : 1;	/* suppress the OOB notification */
	__extension__ __u8 bc_enabled : 1;			/* perform the bounds check */
} __attribute__((packed));

/* NEURON_ISA_TPB_DMA_INDIRECT_FLAGS (docs/hardware.md#dge-indirect) */
struct neuron_isa_tpb_dma_indirect_flags {
	__extension__ __u8 indirect_mode : 2;	/* 0: direct descriptor */
	__extension__ __u8 idx_bound_is_err : 1;
	__extension__ __u8 non_unique_dst_idx : 1;
	__extension__ __u8 gather_dim : 2;
	__extension__ __u8 scatter_dim : 2;
} __attribute__((packed));

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
	__u32 src;
	__u32 dst;
	__u32 length;				/* bytes */
	struct neuron_isa_tpb_bound_check_reg bc_src;
	struct neuron_isa_tpb_bound_check_reg bc_dst;
	struct neuron_isa_tpb_dma_indirect_flags indirect;
	__u8 backend;				/* enum neuron_dge_backend */
} __attribute__((packed));

struct neuron_emu_insn {
	__u8 opcode;			/* +0  enum neuron_emu_opcode */
	__u8 flags;			/* +1  DGE_COPY: NEURON_DGE_F_*; else 0 */
	__u16 debug_hint;		/* +2  low 4 bits -> records' debug_hint */
	__u32 reserved0;		/* +4  DGE_COPY: index table; else 0 */
	struct neuron_emu_events events; /* +8 */
	union {				/* +16 */
		__u8 raw[16];
		struct {
			__u32 idx;	/* semaphore, event or $S index */
			__u32 value;
			__u16 debug_hint_extended;	/* NOTIFY */
			__u16 reserved1;
			__u32 reserved2;
		} __attribute__((packed)) arg;
		struct neuron_emu_dge_desc dge;
	} operand;
} __attribute__((packed));

#endif /* _UAPI_LINUX_NEURON_ISA_H */
