/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: the DGE copy descriptor (docs/hardware.md#dge,
 * docs/decisions.md#arch-device, the "DGE" section of docs/device-model.md).
 *
 * Two error severities (docs/hardware.md#dge-structural, #dge-recovery):
 *  - structural: a BOUND_CHECK_REG or the indirect flags fail the validity
 *    predicates of docs/hardware.md#dge-indirect, #dge-validity, or the backend
 *    is not one we know: HandleIllegalInstr, i.e. SEQUENCER_FATAL and the
 *    engine halts. Checked at decode, before INST_START.
 *  - content: an address beyond its direction's bound (addr <= limit fails,
 *    docs/hardware.md#dge-detect): the descriptor is not emitted; a
 *    SEQUENCER_NONFATAL TPB_ERROR is written iff FEATURE_FLAGS bit 1 is set and
 *    that direction's bc_disable_oob_error_notif is 0
 *    (docs/hardware.md#dge-gating); the engine continues.
 * "No backend" does nothing and continues (docs/hardware.md#dge-recovery). A
 * copy that is emitted is done in device memory and, with bit 1 set, announced
 * by a DGE_METADATA record (docs/hardware.md#rec-dge-metadata).
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "neuron-tpb.h"

#define NEURON_DGE_BAD_BACKEND  0x4     /* structural info bit, after SRC/DST */
#define NEURON_DGE_BACKEND_MAX  NEURON_DGE_BACKEND_RTL

/* indirect_mode bits: 1 = gather (src indexed), 2 = scatter (dst indexed). */
#define NEURON_DGE_INDIRECT_GATHER  0x1
#define NEURON_DGE_INDIRECT_SCATTER 0x2

/**
 * neuron_crc16() - CRC-16/CCITT-FALSE (poly 0x1021, init 0xffff, no
 * reflection, no final xor) of @len bytes: the data_crc of trace records.
 */
uint16_t neuron_crc16(const uint8_t *data, uint64_t len)
{
    uint16_t crc = 0xffff;
    uint64_t i;
    int bit;

    for (i = 0; i < len; i++) {
        crc ^= (uint16_t)data[i] << 8;
        for (bit = 0; bit < 8; bit++) {
            crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
        }
    }
    return crc;
}

/*
 * is_valid_register_read_with_marker (docs/hardware.md#dge-validity): the limit
 * is $S[bc_reg] | $S[bc_reg + 1] << 32, so both registers must exist.
 */
static bool neuron_dge_reg_read_ok(unsigned int reg)
{
    return reg + 1 < NEURON_ENG_NUM_SREGS;
}

/*
 * has_valid_bound_check_reg (docs/hardware.md#dge-validity): all zero, or
 * enabled and readable
 */
static bool neuron_dge_bc_valid(struct neuron_isa_tpb_bound_check_reg bc)
{
    return (!bc.bc_enabled && !bc.bc_reg && !bc.bc_disable_oob_error_notif) ||
           (bc.bc_enabled && neuron_dge_reg_read_ok(bc.bc_reg));
}

/*
 * docs/hardware.md#dge-indirect has_valid_idx_bound_check_reg, for an indexed
 * direction: the base predicate (our reading of _no_flags), and an index OOB
 * may not be both silent and not an error.
 */
static bool neuron_dge_idx_bc_valid(struct neuron_isa_tpb_bound_check_reg bc,
                                    struct neuron_isa_tpb_dma_indirect_flags fl)
{
    return neuron_dge_bc_valid(bc) &&
           (fl.idx_bound_is_err || !bc.bc_disable_oob_error_notif);
}

static bool neuron_dge_indexed(struct neuron_emu_dge_desc *d, unsigned int dir)
{
    unsigned int bit = dir == NEURON_DGE_DIR_SRC ? NEURON_DGE_INDIRECT_GATHER
                                                 : NEURON_DGE_INDIRECT_SCATTER;

    return d->indirect.indirect_mode & bit;
}

/**
 * neuron_dge_decode_ok() - structural validity of the DGE descriptor at PC
 *
 * On failure the engine gets a SEQUENCER_FATAL record (info_kind
 * DGE_INVALID, info = bits SRC 1 / DST 2 / backend 4 that failed, direction
 * = the failing directions, bc_reg = the first failing one's) and halts.
 */
bool neuron_dge_decode_ok(NeuronEngine *e)
{
    struct neuron_emu_dge_desc d = e->insn.operand.dge;
    uint8_t bad = 0;
    unsigned int bc_reg = 0;
    bool ok;

    ok = neuron_dge_indexed(&d, NEURON_DGE_DIR_SRC) ?
         neuron_dge_idx_bc_valid(d.bc_src, d.indirect) :
         neuron_dge_bc_valid(d.bc_src);
    if (!ok) {
        bad |= NEURON_DGE_DIR_SRC;
        bc_reg = d.bc_src.bc_reg;
    }
    ok = neuron_dge_indexed(&d, NEURON_DGE_DIR_DST) ?
         neuron_dge_idx_bc_valid(d.bc_dst, d.indirect) :
         neuron_dge_bc_valid(d.bc_dst);
    if (!ok) {
        if (!bad) {
            bc_reg = d.bc_dst.bc_reg;
        }
        bad |= NEURON_DGE_DIR_DST;
    }
    if (d.backend > NEURON_DGE_BACKEND_MAX) {
        bad |= NEURON_DGE_BAD_BACKEND;
    }
    if (!bad) {
        return true;
    }
    neuron_engine_log(e, "DGE descriptor invalid:%s%s%s (bc_src 0x%02x "
                      "bc_dst 0x%02x indirect 0x%02x backend %u): "
                      "HandleIllegalInstr, SEQUENCER_FATAL, halted",
                      (bad & NEURON_DGE_DIR_SRC) ? " src BOUND_CHECK_REG" : "",
                      (bad & NEURON_DGE_DIR_DST) ? " dst BOUND_CHECK_REG" : "",
                      (bad & NEURON_DGE_BAD_BACKEND) ? " backend" : "",
                      e->insn.operand.raw[12], e->insn.operand.raw[13],
                      e->insn.operand.raw[14], d.backend);
    neuron_engine_set_fatal(e, NEURON_ISA_SEQ_INFO_DGE_INVALID, bad, bc_reg,
                            bad & (NEURON_DGE_DIR_SRC | NEURON_DGE_DIR_DST));
    return false;
}

/* data_crc of INST_START: the source bytes, when they are in device memory. */
uint16_t neuron_dge_input_crc(NeuronEngine *e)
{
    NeuronTPBState *s = e->core->dev;
    struct neuron_emu_dge_desc d = e->insn.operand.dge;

    if (d.backend == NEURON_DGE_BACKEND_NONE || !d.length ||
        !neuron_mem_range_ok(s, d.src, d.length)) {
        return 0;
    }
    return neuron_crc16(s->mem_ptr + d.src, d.length);
}

/*
 * The bounds check of one direction (docs/hardware.md#dge-detect: addr <=
 * limit). The address checked is the last byte the copy touches.
 * Returns true if the direction is out of bounds.
 */
static bool neuron_dge_oob(NeuronEngine *e,
                           struct neuron_isa_tpb_bound_check_reg bc,
                           uint32_t addr, uint32_t length, uint64_t *limit,
                           uint64_t *last)
{
    if (!bc.bc_enabled) {
        return false;
    }
    *limit = e->sreg[bc.bc_reg] | (uint64_t)e->sreg[bc.bc_reg + 1] << 32;
    *last = (uint64_t)addr + (length ? length - 1 : 0);
    return *last > *limit;
}

/* Success-path "DGE packet notification" (docs/hardware.md#rec-dge-metadata) */
static void neuron_dge_metadata_record(NeuronEngine *e)
{
    union neuron_isa_notification rec = { };

    rec.dge_metadata.program_counter = e->pc & 0xfffff;
    rec.dge_metadata.debug_hint = NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE;
    rec.dge_metadata.dma_map = 0x1;     /* one emulated DMA engine, id 0 */
    rec.dge_metadata.num_packets = 1;   /* one descriptor, one packet */
    neuron_engine_set_pending(e, NEURON_CLASS_DGE, &rec,
                              neuron_engine_notific_type(e->index,
                                  NEURON_ENGINE_RECORD_EXPLICIT));
}

/**
 * neuron_dge_exec() - execute a structurally valid DGE_COPY
 *
 * Makes at most one record: the bounds error, a MEMORY_ERROR for a copy
 * outside device memory, or the DGE_METADATA success record.
 */
NeuronOpResult neuron_dge_exec(NeuronEngine *e)
{
    NeuronTPBState *s = e->core->dev;
    struct neuron_emu_dge_desc d = e->insn.operand.dge;
    bool notif = e->feature_flags & NEURON_FEATURE_DGE_PACKET_NOTIF;
    uint64_t limit[2] = { 0, 0 }, last[2] = { 0, 0 };
    unsigned int oob = 0, report = 0, bc_reg = 0;

    if (d.backend == NEURON_DGE_BACKEND_NONE) {
        neuron_engine_log(e, "DGE: NO BACKEND FOUND, doing nothing");
        return NEURON_OP_DONE;
    }

    if (neuron_dge_oob(e, d.bc_src, d.src, d.length, &limit[0], &last[0])) {
        oob |= NEURON_DGE_DIR_SRC;
    }
    if (neuron_dge_oob(e, d.bc_dst, d.dst, d.length, &limit[1], &last[1])) {
        oob |= NEURON_DGE_DIR_DST;
    }
    if (oob) {
        /*
         * Gate 2 per failing direction (docs/hardware.md#dge-bounds-reg); on an
         * indexed direction idx_bound_is_err makes the OOB an error to report
         * whatever the suppress bit says (docs/hardware.md#dge-indirect).
         */
        if ((oob & NEURON_DGE_DIR_SRC) &&
            (!d.bc_src.bc_disable_oob_error_notif ||
             (neuron_dge_indexed(&d, NEURON_DGE_DIR_SRC) &&
              d.indirect.idx_bound_is_err))) {
            report |= NEURON_DGE_DIR_SRC;
            bc_reg = d.bc_src.bc_reg;
        }
        if ((oob & NEURON_DGE_DIR_DST) &&
            (!d.bc_dst.bc_disable_oob_error_notif ||
             (neuron_dge_indexed(&d, NEURON_DGE_DIR_DST) &&
              d.indirect.idx_bound_is_err))) {
            if (!report) {
                bc_reg = d.bc_dst.bc_reg;
            }
            report |= NEURON_DGE_DIR_DST;
        }
        neuron_engine_log(e, "DGE: Failed bounds check (src %d 0x%" PRIx64
                          "<=0x%" PRIx64 ", dst %d 0x%" PRIx64 "<=0x%" PRIx64
                          "): descriptor not emitted, %s",
                          !!(oob & NEURON_DGE_DIR_SRC), last[0], limit[0],
                          !!(oob & NEURON_DGE_DIR_DST), last[1], limit[1],
                          notif && report ? "error notification dispatched"
                                          : "notification suppressed");
        if (notif && report) {
            neuron_engine_error_record(e,
                                       NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL,
                                       NEURON_ISA_SEQ_INFO_DGE_BOUNDS, report,
                                       bc_reg, report);
        }
        return NEURON_OP_DONE;
    }

    if (!neuron_mem_range_ok(s, d.src, d.length) ||
        !neuron_mem_range_ok(s, d.dst, d.length)) {
        /* Not a bounds-check failure: the bus itself rejects the access. */
        neuron_engine_log(e, "DGE copy src 0x%x dst 0x%x length 0x%x leaves "
                          "device memory: MEMORY_ERROR, descriptor not "
                          "emitted", d.src, d.dst, d.length);
        neuron_engine_error_record(e, NEURON_ISA_TPB_ERROR_MEMORY_ERROR,
                                   NEURON_ISA_SEQ_INFO_OTHER, 0, 0, 0);
        return NEURON_OP_DONE;
    }

    memmove(s->mem_ptr + d.dst, s->mem_ptr + d.src, d.length);
    memory_region_set_dirty(&s->mem, d.dst, d.length);
    if (e->traced && d.length) {
        e->crc_out = neuron_crc16(s->mem_ptr + d.dst, d.length);
    }
    if (notif) {
        neuron_dge_metadata_record(e);
    }
    return NEURON_OP_DONE;
}
