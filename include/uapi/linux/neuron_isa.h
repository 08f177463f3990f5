/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The instruction format the emulated engines execute (ours:
 * docs/decisions/0004-device-details.md#emu-isa), as NEURON_IOC_SUBMIT takes it
 * (struct neuron_submit @insns of <linux/neuron.h>): a program is an array of
 * 32-byte instructions the driver copies to device memory before it starts the
 * engine. This is the only definition of the encoding; include/neuron/emu_isa.h
 * (the device model's and the driver's view) includes it and checks the sizes.
 *
 * Every instruction carries the 8-byte EVENTS block of
 * docs/hardware.md#evt-sem-ops (wait_mode/wait_idx, update_mode/update_idx,
 * semaphore_value:u32): the engine first waits as wait_mode says, then (with
 * tracing on) writes INST_START, performs the operation, applies the update,
 * and writes INST_END. program_counter in records is the instruction's index.
 *
 * Byte order and layout: every multi-byte field is little-endian (__le16,
 * __le32), whatever the host's byte order: convert with cpu_to_le32() and
 * le32_to_cpu() (kernel, QEMU) or htole32() and le32toh() (<endian.h>). The
 * structures are packed and hold fixed-width fields only, at the byte offsets
 * their kernel-doc gives (static assertions in include/neuron/emu_isa.h
 * check every one). There are no C bitfields: a field narrower than a byte
 * (the DGE descriptor's bound-check and indirect-flags bytes) is a bit range
 * of a one-byte field, given as NEURON_ISA_*_MASK and _SHIFT (the field is
 * (byte & MASK) >> SHIFT), so the layout does not depend on the compiler.
 */
#ifndef _UAPI_LINUX_NEURON_ISA_H
#define _UAPI_LINUX_NEURON_ISA_H

#include <linux/types.h>

#include "neuron_record.h"	/* enum neuron_engine, neuron_evt_sem_update_mode */

/** NEURON_EMU_INSN_BYTES - the size of one instruction */
#define NEURON_EMU_INSN_BYTES	32

/**
 * enum neuron_emu_opcode - the instruction's opcode byte
 * @NEURON_OP_NOP: nothing; trace brackets only
 * @NEURON_OP_NOTIFY: EXPLICIT record (debug_hint, debug_hint_ext)
 * @NEURON_OP_HALT: end of program: the engine goes idle
 * @NEURON_OP_SEM_SET: sem[idx] = value
 * @NEURON_OP_SEM_INC: sem[idx] += value
 * @NEURON_OP_SEM_DEC: sem[idx] -= value
 * @NEURON_OP_WAIT_GE: block until sem[idx] >= value
 * @NEURON_OP_WAIT_GE_AND_DEC: ... then sem[idx] -= value, atomically
 * @NEURON_OP_EVENT_SET: event[idx] = 1
 * @NEURON_OP_EVENT_CLEAR: event[idx] = 0
 * @NEURON_OP_REG_WRITE: $S[idx] = value
 * @NEURON_OP_DGE_COPY: DGE descriptor, operand.dge
 * @NEURON_OP_FP_ERROR: inject a TPB_ERROR with error_id = value
 * @NEURON_OP_THROTTLE: assert the throttle edge, level = value
 * @NEURON_OP_DELAY: busy for value nanoseconds
 * @NEURON_OP_COUNT: the number of opcodes
 */
enum neuron_emu_opcode {
	NEURON_OP_NOP = 0x00,
	NEURON_OP_NOTIFY = 0x01,
	NEURON_OP_HALT = 0x02,
	NEURON_OP_SEM_SET = 0x03,
	NEURON_OP_SEM_INC = 0x04,
	NEURON_OP_SEM_DEC = 0x05,
	NEURON_OP_WAIT_GE = 0x06,
	NEURON_OP_WAIT_GE_AND_DEC = 0x07,
	NEURON_OP_EVENT_SET = 0x08,
	NEURON_OP_EVENT_CLEAR = 0x09,
	NEURON_OP_REG_WRITE = 0x0a,
	NEURON_OP_DGE_COPY = 0x0b,
	NEURON_OP_FP_ERROR = 0x0c,
	NEURON_OP_THROTTLE = 0x0d,
	NEURON_OP_DELAY = 0x0e,
	NEURON_OP_COUNT
};

/**
 * enum neuron_emu_wait_mode - wait_mode of the EVENTS block
 * @NEURON_WAIT_NONE: start at once
 * @NEURON_WAIT_SEM_GE: until sem[wait_idx] >= semaphore_value
 * @NEURON_WAIT_SEM_GE_AND_DEC: the same, then sem[wait_idx] -= semaphore_value
 * @NEURON_WAIT_EVENT_SET: until event[wait_idx] == 1
 */
enum neuron_emu_wait_mode {
	NEURON_WAIT_NONE = 0,
	NEURON_WAIT_SEM_GE = 1,
	NEURON_WAIT_SEM_GE_AND_DEC = 2,
	NEURON_WAIT_EVENT_SET = 3
};

/**
 * struct neuron_emu_events - the per-instruction EVENTS block, 8 bytes
 * (docs/hardware.md#evt-sem-ops)
 * @wait_mode: byte 0, enum neuron_emu_wait_mode
 * @wait_idx: byte 1, the semaphore or event waited on
 * @update_mode: byte 2, enum neuron_evt_sem_update_mode, applied after the
 *	operation
 * @update_idx: byte 3, the semaphore or event updated
 * @semaphore_value: bytes 4..7, little-endian: the wait's threshold and the
 *	update's operand
 */
struct neuron_emu_events {
	__u8 wait_mode;
	__u8 wait_idx;
	__u8 update_mode;
	__u8 update_idx;
	__le32 semaphore_value;
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
 * NEURON_ISA_TPB_BOUND_CHECK_REG, one byte per DGE direction (the
 * descriptor's bc_src and bc_dst; docs/hardware.md#dge-bounds-reg): bc_reg
 * bits 5..0, bc_disable_oob_error_notif bit 6, bc_enabled bit 7.
 */

/**
 * NEURON_ISA_BC_REG_MASK - bound-check byte bits 5..0, bc_reg: the $S index
 * of the limit (in wide-offset mode bc_reg + 1 holds its upper 32 bits)
 */
#define NEURON_ISA_BC_REG_MASK				0x3f
/** NEURON_ISA_BC_REG_SHIFT - bound-check byte: bc_reg's lowest bit */
#define NEURON_ISA_BC_REG_SHIFT				0
/**
 * NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK - bound-check byte bit 6,
 * bc_disable_oob_error_notif: no error notification for this direction
 */
#define NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK	0x40
/** NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_SHIFT - bound-check byte: its bit */
#define NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_SHIFT	6
/**
 * NEURON_ISA_BC_ENABLED_MASK - bound-check byte bit 7, bc_enabled: perform
 * the bounds check for this direction
 */
#define NEURON_ISA_BC_ENABLED_MASK			0x80
/** NEURON_ISA_BC_ENABLED_SHIFT - bound-check byte: bc_enabled's bit */
#define NEURON_ISA_BC_ENABLED_SHIFT			7

/*
 * NEURON_ISA_TPB_DMA_INDIRECT_FLAGS, one byte (the descriptor's indirect;
 * docs/hardware.md#dge-indirect): indirect_mode bits 1..0, idx_bound_is_err
 * bit 2, non_unique_dst_idx bit 3, gather_dim bits 5..4, scatter_dim bits
 * 7..6.
 */

/**
 * NEURON_ISA_INDIRECT_MODE_MASK - indirect-flags byte bits 1..0,
 * indirect_mode: NEURON_ISA_INDIRECT_MODE_* bits (0: a direct descriptor)
 */
#define NEURON_ISA_INDIRECT_MODE_MASK			0x03
/** NEURON_ISA_INDIRECT_MODE_SHIFT - indirect-flags byte: indirect_mode's lowest bit */
#define NEURON_ISA_INDIRECT_MODE_SHIFT			0
/**
 * NEURON_ISA_INDIRECT_MODE_GATHER - indirect_mode value bit 0: the source is
 * indexed (ours, docs/decisions/0018-dge-index-path.md)
 */
#define NEURON_ISA_INDIRECT_MODE_GATHER			0x1
/**
 * NEURON_ISA_INDIRECT_MODE_SCATTER - indirect_mode value bit 1: the
 * destination is indexed (ours, docs/decisions/0018-dge-index-path.md)
 */
#define NEURON_ISA_INDIRECT_MODE_SCATTER		0x2
/**
 * NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_MASK - indirect-flags byte bit 2,
 * idx_bound_is_err: an out-of-bounds index is a hard error
 */
#define NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_MASK	0x04
/** NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_SHIFT - indirect-flags byte: its bit */
#define NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_SHIFT	2
/**
 * NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_MASK - indirect-flags byte bit 3,
 * non_unique_dst_idx
 */
#define NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_MASK	0x08
/** NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_SHIFT - indirect-flags byte: its bit */
#define NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_SHIFT	3
/** NEURON_ISA_INDIRECT_GATHER_DIM_MASK - indirect-flags byte bits 5..4, gather_dim */
#define NEURON_ISA_INDIRECT_GATHER_DIM_MASK		0x30
/** NEURON_ISA_INDIRECT_GATHER_DIM_SHIFT - indirect-flags byte: gather_dim's lowest bit */
#define NEURON_ISA_INDIRECT_GATHER_DIM_SHIFT		4
/** NEURON_ISA_INDIRECT_SCATTER_DIM_MASK - indirect-flags byte bits 7..6, scatter_dim */
#define NEURON_ISA_INDIRECT_SCATTER_DIM_MASK		0xc0
/** NEURON_ISA_INDIRECT_SCATTER_DIM_SHIFT - indirect-flags byte: scatter_dim's lowest bit */
#define NEURON_ISA_INDIRECT_SCATTER_DIM_SHIFT		6

/*
 * A DGE_COPY also uses two fields of the instruction header that other
 * opcodes keep reserved (docs/program-syntax.md#dge-index,
 * docs/decisions/0018-dge-index-path.md):
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

/** NEURON_DGE_F_WIDE_OFFSET - mode bit 0: 64-bit limits from two $S */
#define NEURON_DGE_F_WIDE_OFFSET	0x01
/** NEURON_DGE_F_ELEM_SHIFT - mode bits 3..1, log2(element bytes): lowest bit */
#define NEURON_DGE_F_ELEM_SHIFT		1
/** NEURON_DGE_F_ELEM_MASK - mode bits 3..1: log2(element bytes) */
#define NEURON_DGE_F_ELEM_MASK		0x0e
/** NEURON_DGE_F_ALL - every defined mode bit (bits 7..4 must be 0) */
#define NEURON_DGE_F_ALL		0x0f
/** NEURON_DGE_IDX_ENTRY_BYTES - one little-endian u32 index per element */
#define NEURON_DGE_IDX_ENTRY_BYTES	4

/**
 * struct neuron_emu_dge_desc - a DGE copy descriptor, 16 bytes (the operand
 * of a DGE_COPY); addresses are BAR4 (device memory) offsets
 * @src: bytes 0..3, little-endian: the source
 * @dst: bytes 4..7, little-endian: the destination
 * @length: bytes 8..11, little-endian: bytes to copy (of an indirect
 *	descriptor: each direction's window)
 * @bc_src: byte 12, the source's NEURON_ISA_TPB_BOUND_CHECK_REG
 *	(NEURON_ISA_BC_*; docs/hardware.md#dge-bounds-reg)
 * @bc_dst: byte 13, the destination's, the same way
 * @indirect: byte 14, NEURON_ISA_TPB_DMA_INDIRECT_FLAGS
 *	(NEURON_ISA_INDIRECT_*; docs/hardware.md#dge-indirect)
 * @backend: byte 15, enum neuron_dge_backend
 */
struct neuron_emu_dge_desc {
	__le32 src;
	__le32 dst;
	__le32 length;
	__u8 bc_src;
	__u8 bc_dst;
	__u8 indirect;
	__u8 backend;
} __attribute__((packed));

/**
 * struct neuron_emu_insn - one instruction, 32 bytes
 * @opcode: byte 0, enum neuron_emu_opcode
 * @flags: byte 1, DGE_COPY: the mode byte, NEURON_DGE_F_*; else 0
 * @debug_hint: bytes 2..3, little-endian: its low 4 bits are the records'
 *	debug_hint
 * @reserved0: bytes 4..7, little-endian: DGE_COPY: the index table of an
 *	indirect descriptor (a BAR4 offset); else 0
 * @events: bytes 8..15, the EVENTS block
 * @operand: bytes 16..31, by opcode
 * @operand.raw: the 16 bytes
 * @operand.arg: every opcode but DGE_COPY
 * @operand.arg.idx: bytes 16..19, little-endian: semaphore, event or $S index
 * @operand.arg.value: bytes 20..23, little-endian: the operation's value
 * @operand.arg.debug_hint_extended: bytes 24..25, little-endian: NOTIFY's
 *	debug_hint_ext; else 0
 * @operand.arg.reserved1: bytes 26..27, 0
 * @operand.arg.reserved2: bytes 28..31, 0
 * @operand.dge: DGE_COPY: the descriptor
 */
struct neuron_emu_insn {
	__u8 opcode;
	__u8 flags;
	__le16 debug_hint;
	__le32 reserved0;
	struct neuron_emu_events events;
	union {
		__u8 raw[16];
		struct {
			__le32 idx;
			__le32 value;
			__le16 debug_hint_extended;
			__le16 reserved1;
			__le32 reserved2;
		} __attribute__((packed)) arg;
		struct neuron_emu_dge_desc dge;
	} operand;
} __attribute__((packed));

#endif /* _UAPI_LINUX_NEURON_ISA_H */
