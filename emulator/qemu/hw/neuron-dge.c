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
 *
 * A helper of the engine (neuron-tpb.h, "Call direction"): it checks and
 * executes the descriptor it is given and says which record is owed; the
 * engine makes the records and decides about halting.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "neuron-tpb.h"

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

/* docs/hardware.md#dge-validity has_valid_bound_check_reg: all zero, or enabled and readable */
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

static bool neuron_dge_indexed(const struct neuron_emu_dge_desc *d,
                               unsigned int dir)
{
    unsigned int bit = dir == NEURON_DGE_DIR_SRC ? NEURON_DGE_INDIRECT_GATHER
                                                 : NEURON_DGE_INDIRECT_SCATTER;

    return d->indirect.indirect_mode & bit;
}

/* Log prefixed with the engine's core, index and PC (op->who). */
static void G_GNUC_PRINTF(2, 3) neuron_dge_log(const NeuronDgeCopy *op,
                                               const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    if (!qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "neuron-tpb: %s: %s\n", op->who, msg);
}

/**
 * neuron_dge_check() - structural validity of DGE descriptor @d
 * @bc_reg: set to the first failing direction's bc_reg
 *
 * Returns 0 if valid, else the failing bits: NEURON_DGE_DIR_SRC,
 * NEURON_DGE_DIR_DST (BOUND_CHECK_REG or indirect flags) and
 * NEURON_DGE_BAD_BACKEND. The engine makes that a SEQUENCER_FATAL
 * (info_kind DGE_INVALID, info = the bits, direction = the failing
 * directions) and halts.
 */
uint8_t neuron_dge_check(const struct neuron_emu_dge_desc *d,
                         unsigned int *bc_reg)
{
    uint8_t bad = 0;
    bool ok;

    *bc_reg = 0;
    ok = neuron_dge_indexed(d, NEURON_DGE_DIR_SRC) ?
         neuron_dge_idx_bc_valid(d->bc_src, d->indirect) :
         neuron_dge_bc_valid(d->bc_src);
    if (!ok) {
        bad |= NEURON_DGE_DIR_SRC;
        *bc_reg = d->bc_src.bc_reg;
    }
    ok = neuron_dge_indexed(d, NEURON_DGE_DIR_DST) ?
         neuron_dge_idx_bc_valid(d->bc_dst, d->indirect) :
         neuron_dge_bc_valid(d->bc_dst);
    if (!ok) {
        if (!bad) {
            *bc_reg = d->bc_dst.bc_reg;
        }
        bad |= NEURON_DGE_DIR_DST;
    }
    if (d->backend > NEURON_DGE_BACKEND_MAX) {
        bad |= NEURON_DGE_BAD_BACKEND;
    }
    return bad;
}

/* data_crc of INST_START: the source bytes, when they are in device memory. */
uint16_t neuron_dge_input_crc(const NeuronDevMem *m,
                              const struct neuron_emu_dge_desc *d)
{
    if (d->backend == NEURON_DGE_BACKEND_NONE || !d->length ||
        !neuron_mem_range_ok(m, d->src, d->length)) {
        return 0;
    }
    return neuron_crc16(m->ptr + d->src, d->length);
}

/*
 * The bounds check of one direction (docs/hardware.md#dge-detect: addr <=
 * limit). The address checked is the last byte the copy touches.
 * Returns true if the direction is out of bounds.
 */
static bool neuron_dge_oob(const NeuronDgeCopy *op,
                           struct neuron_isa_tpb_bound_check_reg bc,
                           uint32_t addr, uint32_t length, uint64_t *limit,
                           uint64_t *last)
{
    if (!bc.bc_enabled) {
        return false;
    }
    *limit = op->sreg[bc.bc_reg] | (uint64_t)op->sreg[bc.bc_reg + 1] << 32;
    *last = (uint64_t)addr + (length ? length - 1 : 0);
    return *last > *limit;
}

/**
 * neuron_dge_exec() - execute the structurally valid DGE_COPY @op
 *
 * Sets @op->record to the one record owed (if any): the bounds error, a
 * MEMORY_ERROR for a copy outside device memory, or the DGE_METADATA
 * success record.
 */
void neuron_dge_exec(NeuronDgeCopy *op)
{
    const NeuronDevMem *m = op->mem;
    const struct neuron_emu_dge_desc *d = &op->desc;
    bool notif = op->packet_notif;
    uint64_t limit[2] = { 0, 0 }, last[2] = { 0, 0 };
    unsigned int oob = 0, report = 0, bc_reg = 0;

    op->record = NEURON_DGE_RECORD_NONE;
    op->dirs = 0;
    op->bc_reg = 0;
    op->crc_out = 0;

    if (d->backend == NEURON_DGE_BACKEND_NONE) {
        neuron_dge_log(op, "DGE: NO BACKEND FOUND, doing nothing");
        return;
    }

    if (neuron_dge_oob(op, d->bc_src, d->src, d->length, &limit[0],
                       &last[0])) {
        oob |= NEURON_DGE_DIR_SRC;
    }
    if (neuron_dge_oob(op, d->bc_dst, d->dst, d->length, &limit[1],
                       &last[1])) {
        oob |= NEURON_DGE_DIR_DST;
    }
    if (oob) {
        /*
         * Gate 2 per failing direction (docs/hardware.md#dge-bounds-reg); on an
         * indexed direction idx_bound_is_err makes the OOB an error to report
         * whatever the suppress bit says (docs/hardware.md#dge-indirect).
         */
        if ((oob & NEURON_DGE_DIR_SRC) &&
            (!d->bc_src.bc_disable_oob_error_notif ||
             (neuron_dge_indexed(d, NEURON_DGE_DIR_SRC) &&
              d->indirect.idx_bound_is_err))) {
            report |= NEURON_DGE_DIR_SRC;
            bc_reg = d->bc_src.bc_reg;
        }
        if ((oob & NEURON_DGE_DIR_DST) &&
            (!d->bc_dst.bc_disable_oob_error_notif ||
             (neuron_dge_indexed(d, NEURON_DGE_DIR_DST) &&
              d->indirect.idx_bound_is_err))) {
            if (!report) {
                bc_reg = d->bc_dst.bc_reg;
            }
            report |= NEURON_DGE_DIR_DST;
        }
        neuron_dge_log(op, "DGE: Failed bounds check (src %d 0x%" PRIx64
                       "<=0x%" PRIx64 ", dst %d 0x%" PRIx64 "<=0x%" PRIx64
                       "): descriptor not emitted, %s",
                       !!(oob & NEURON_DGE_DIR_SRC), last[0], limit[0],
                       !!(oob & NEURON_DGE_DIR_DST), last[1], limit[1],
                       notif && report ? "error notification dispatched"
                                       : "notification suppressed");
        if (notif && report) {
            op->record = NEURON_DGE_RECORD_BOUNDS;
            op->dirs = report;
            op->bc_reg = bc_reg;
        }
        return;
    }

    if (!neuron_mem_range_ok(m, d->src, d->length) ||
        !neuron_mem_range_ok(m, d->dst, d->length)) {
        /* Not a bounds-check failure: the bus itself rejects the access. */
        neuron_dge_log(op, "DGE copy src 0x%x dst 0x%x length 0x%x leaves "
                       "device memory: MEMORY_ERROR, descriptor not "
                       "emitted", d->src, d->dst, d->length);
        op->record = NEURON_DGE_RECORD_MEMORY_ERROR;
        return;
    }

    memmove(m->ptr + d->dst, m->ptr + d->src, d->length);
    memory_region_set_dirty(m->mr, d->dst, d->length);
    if (op->want_crc && d->length) {
        op->crc_out = neuron_crc16(m->ptr + d->dst, d->length);
    }
    if (notif) {
        op->record = NEURON_DGE_RECORD_METADATA;
    }
}
