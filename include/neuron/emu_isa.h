/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The instruction format the emulated engines execute (ours:
 * docs/decisions/0004-device-details.md#emu-isa): the encoding is UAPI,
 * <linux/neuron_isa.h> (NEURON_IOC_SUBMIT takes it); this header is the
 * device model's and the driver's way in, and pins that encoding: the static
 * assertions below check the size and byte offset of every field of every
 * instruction structure, and the bit ranges of the sub-byte fields, against
 * literals taken from the layouts the UAPI header's kernel-doc gives (bytes)
 * and from docs/hardware.md#dge-bounds-reg and #dge-indirect (bits).
 * scripts/check-headers.sh compiles this file alone as C11 and C++20
 * (headers.isa_asserts_c, headers.isa_asserts_cxx); offsetof() and sizeof
 * of a C bitfield do not compile, so a bitfield cannot come back unnoticed.
 */
#ifndef NEURON_EMU_ISA_H
#define NEURON_EMU_ISA_H

#include "notification.h"

#include "../uapi/linux/neuron_isa.h"	/* the encoding */

/* The byte offset and the size of member @m (a designator) of struct @s (a tag). */
#define NEURON_ISA_OFFSET(s, m)	offsetof(struct s, m)
#define NEURON_ISA_SIZE(s, m)	sizeof(((struct s *)0)->m)

/* struct neuron_emu_events: docs/hardware.md#evt-sem-ops, 8 bytes */
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_events) == 8, "EVENTS block is 8 bytes");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_events, wait_mode) == 0, "wait_mode at 0");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_events, wait_mode) == 1, "wait_mode: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_events, wait_idx) == 1, "wait_idx at 1");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_events, wait_idx) == 1, "wait_idx: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_events, update_mode) == 2, "update_mode at 2");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_events, update_mode) == 1, "update_mode: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_events, update_idx) == 3, "update_idx at 3");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_events, update_idx) == 1, "update_idx: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_events, semaphore_value) == 4, "semaphore_value at 4");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_events, semaphore_value) == 4, "semaphore_value: 4 B");

/* struct neuron_emu_dge_desc: 16 bytes, one byte per BOUND_CHECK_REG and DMA_INDIRECT_FLAGS */
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_dge_desc) == 16, "DGE descriptor 16 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, src) == 0, "src at 0");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, src) == 4, "src: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, dst) == 4, "dst at 4");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, dst) == 4, "dst: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, length) == 8, "length at 8");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, length) == 4, "length: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, bc_src) == 12, "bc_src at 12");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, bc_src) == 1, "bc_src: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, bc_dst) == 13, "bc_dst at 13");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, bc_dst) == 1, "bc_dst: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, indirect) == 14, "indirect at 14");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, indirect) == 1, "indirect: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_dge_desc, backend) == 15, "backend at 15");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_dge_desc, backend) == 1, "backend: 1 B");

/*
 * struct neuron_emu_insn: 32 bytes, EVENTS at +8, the operand at +16
 * (docs/decisions/0004-device-details.md#emu-isa)
 */
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_insn) == 32, "insn 32 B");
NEURON_STATIC_ASSERT(NEURON_EMU_INSN_BYTES == 32, "NEURON_EMU_INSN_BYTES");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, opcode) == 0, "opcode at 0");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, opcode) == 1, "opcode: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, flags) == 1, "flags at 1");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, flags) == 1, "flags: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, debug_hint) == 2, "debug_hint at 2");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, debug_hint) == 2, "debug_hint: 2 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, reserved0) == 4, "reserved0 at 4");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, reserved0) == 4, "reserved0: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, events) == 8, "events at 8");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, events) == 8, "events: 8 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand) == 16, "operand at 16");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand) == 16, "operand: 16 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.raw) == 16, "operand.raw at 16");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.raw) == 16, "operand.raw: 16 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.arg) == 16, "operand.arg at 16");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.arg) == 16, "operand.arg: 16 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.arg.idx) == 16, "operand.arg.idx at 16");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.arg.idx) == 4, "operand.arg.idx: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.arg.value) == 20, "operand.arg.value at 20");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.arg.value) == 4, "operand.arg.value: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.arg.debug_hint_extended) == 24, "operand.arg.debug_hint_extended at 24");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.arg.debug_hint_extended) == 2, "operand.arg.debug_hint_extended: 2 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.arg.reserved1) == 26, "operand.arg.reserved1 at 26");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.arg.reserved1) == 2, "operand.arg.reserved1: 2 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.arg.reserved2) == 28, "operand.arg.reserved2 at 28");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.arg.reserved2) == 4, "operand.arg.reserved2: 4 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.dge) == 16, "operand.dge at 16");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.dge) == 16, "operand.dge: 16 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.dge.bc_src) == 28, "operand.dge.bc_src at 28");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.dge.bc_src) == 1, "operand.dge.bc_src: 1 B");
NEURON_STATIC_ASSERT(NEURON_ISA_OFFSET(neuron_emu_insn, operand.dge.indirect) == 30, "operand.dge.indirect at 30");
NEURON_STATIC_ASSERT(NEURON_ISA_SIZE(neuron_emu_insn, operand.dge.indirect) == 1, "operand.dge.indirect: 1 B");

/* BOUND_CHECK_REG (docs/hardware.md#dge-bounds-reg): bits 5..0, 6, 7 */
NEURON_STATIC_ASSERT(NEURON_ISA_BC_REG_MASK == 0x3f && NEURON_ISA_BC_REG_SHIFT == 0, "bc_reg 5..0");
NEURON_STATIC_ASSERT(NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_MASK == 0x40 &&
		     NEURON_ISA_BC_DISABLE_OOB_ERROR_NOTIF_SHIFT == 6, "bc_disable_oob_error_notif: 6");
NEURON_STATIC_ASSERT(NEURON_ISA_BC_ENABLED_MASK == 0x80 && NEURON_ISA_BC_ENABLED_SHIFT == 7,
		     "bc_enabled 7");

/* DMA_INDIRECT_FLAGS (docs/hardware.md#dge-indirect): 1..0, 2, 3, 5..4, 7..6 */
NEURON_STATIC_ASSERT(NEURON_ISA_INDIRECT_MODE_MASK == 0x03 && NEURON_ISA_INDIRECT_MODE_SHIFT == 0,
		     "indirect_mode 1..0");
NEURON_STATIC_ASSERT(NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_MASK == 0x04 &&
		     NEURON_ISA_INDIRECT_IDX_BOUND_IS_ERR_SHIFT == 2, "idx_bound_is_err 2");
NEURON_STATIC_ASSERT(NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_MASK == 0x08 &&
		     NEURON_ISA_INDIRECT_NON_UNIQUE_DST_IDX_SHIFT == 3, "non_unique_dst_idx 3");
NEURON_STATIC_ASSERT(NEURON_ISA_INDIRECT_GATHER_DIM_MASK == 0x30 &&
		     NEURON_ISA_INDIRECT_GATHER_DIM_SHIFT == 4, "gather_dim 5..4");
NEURON_STATIC_ASSERT(NEURON_ISA_INDIRECT_SCATTER_DIM_MASK == 0xc0 &&
		     NEURON_ISA_INDIRECT_SCATTER_DIM_SHIFT == 6, "scatter_dim 7..6");

#endif /* NEURON_EMU_ISA_H */
