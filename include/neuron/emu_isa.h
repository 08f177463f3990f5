/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The instruction format the emulated engines execute (ours:
 * docs/decisions.md#emu-isa): the encoding is UAPI, <linux/neuron_isa.h>
 * (NEURON_IOC_SUBMIT takes it); this header is the device model's and the
 * driver's view of it, with the layout checks.
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

#include "../uapi/linux/neuron_isa.h"	/* the encoding */

NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_bound_check_reg) == 1, "bound check reg 1 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_isa_tpb_dma_indirect_flags) == 1, "indirect flags 1 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_events) == 8, "EVENTS block is 8 bytes");
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_dge_desc) == 16, "DGE descriptor 16 B");
NEURON_STATIC_ASSERT(sizeof(struct neuron_emu_insn) == NEURON_EMU_INSN_BYTES, "insn 32 B");
NEURON_STATIC_ASSERT(offsetof(struct neuron_emu_insn, events) == 8, "events@8");
NEURON_STATIC_ASSERT(offsetof(struct neuron_emu_insn, operand) == 16, "operand@16");

#endif /* NEURON_EMU_ISA_H */
