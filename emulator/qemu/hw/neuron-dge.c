/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: the DGE copy descriptor (docs/hardware.md#dge,
 * docs/decisions/0001-original-architecture.md#arch-device, the "DGE" section
 * of docs/device-model.md).
 *
 * Error severities (docs/hardware.md#dge-structural, #dge-recovery,
 * docs/decisions/0018-dge-index-path.md):
 *  - structural: a BOUND_CHECK_REG or the indirect flags fail the validity
 *    predicates of docs/hardware.md#dge-indirect, #dge-validity, the index
 *    encoding is malformed, or the backend is not one we know:
 *    HandleIllegalInstr, i.e. SEQUENCER_FATAL and the engine halts. Checked
 *    at decode, before INST_START.
 *  - address content: a direct direction's last byte beyond its bound
 *    (addr <= limit fails, docs/hardware.md#dge-detect): the descriptor is
 *    not emitted; a SEQUENCER_NONFATAL TPB_ERROR is written iff FEATURE_FLAGS
 *    bit 1 is set and that direction's bc_disable_oob_error_notif is 0
 *    (docs/hardware.md#dge-gating); the engine continues.
 *  - index content: an index of an indexed direction beyond its bound: never
 *    silent. With idx_bound_is_err, or with FEATURE_FLAGS bit 1 clear (no
 *    notification can carry it), a SEQUENCER_FATAL record and the engine
 *    halts; else a SEQUENCER_NONFATAL record (the suppress bit is 0 there by
 *    the validity rule) and the engine continues.
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

/* A sub-byte field of a descriptor byte (<linux/neuron_isa.h> masks). */
#define NEURON_DGE_FIELD(byte, f) \
    (((byte) & NEURON_ISA_##f##_MASK) >> NEURON_ISA_##f##_SHIFT)

/**
 * neuron_dge_decode() - the DGE_COPY instruction @in's descriptor, mode byte
 * and index table in host byte order (@in is little-endian, as the program
 * in device memory)
 */
void neuron_dge_decode(const struct neuron_emu_insn *in, NeuronDgeDesc *d)
{
    const struct neuron_emu_dge_desc *w = &in->operand.dge;

    d->src = le32_to_cpu(w->src);
    d->dst = le32_to_cpu(w->dst);
    d->length = le32_to_cpu(w->length);
    d->idx_table = le32_to_cpu(in->reserved0);
    d->bc_src = w->bc_src;
    d->bc_dst = w->bc_dst;
    d->indirect = w->indirect;
    d->backend = w->backend;
    d->mode = in->flags;
}

static bool neuron_dge_wide(uint8_t mode)
{
    return mode & NEURON_DGE_F_WIDE_OFFSET;
}

/*
 * is_valid_register_read_with_marker (docs/hardware.md#dge-validity): in
 * wide-offset mode the limit is $S[bc_reg] | $S[bc_reg + 1] << 32, so both
 * registers must exist; in narrow mode only $S[bc_reg] is read.
 */
static bool neuron_dge_reg_read_ok(unsigned int reg, uint8_t mode)
{
    return reg + (neuron_dge_wide(mode) ? 1 : 0) < NEURON_ENG_NUM_SREGS;
}

/* docs/hardware.md#dge-validity has_valid_bound_check_reg: all zero, or enabled and readable */
static bool neuron_dge_bc_valid(uint8_t bc, uint8_t mode)
{
    bool enabled = NEURON_DGE_FIELD(bc, BC_ENABLED);

    return (!enabled && !NEURON_DGE_FIELD(bc, BC_REG) &&
            !NEURON_DGE_FIELD(bc, BC_DISABLE_OOB_ERROR_NOTIF)) ||
           (enabled && neuron_dge_reg_read_ok(NEURON_DGE_FIELD(bc, BC_REG), mode));
}

/*
 * docs/hardware.md#dge-indirect has_valid_idx_bound_check_reg, for an indexed
 * direction: the base predicate (our reading of _no_flags), and an index OOB
 * may not be both silent and not an error.
 */
static bool neuron_dge_idx_bc_valid(uint8_t bc, uint8_t fl, uint8_t mode)
{
    return neuron_dge_bc_valid(bc, mode) &&
           (NEURON_DGE_FIELD(fl, INDIRECT_IDX_BOUND_IS_ERR) ||
            !NEURON_DGE_FIELD(bc, BC_DISABLE_OOB_ERROR_NOTIF));
}

static bool neuron_dge_indexed(const NeuronDgeDesc *d, unsigned int dir)
{
    unsigned int bit = dir == NEURON_DGE_DIR_SRC ?
                       NEURON_ISA_INDIRECT_MODE_GATHER :
                       NEURON_ISA_INDIRECT_MODE_SCATTER;

    return NEURON_DGE_FIELD(d->indirect, INDIRECT_MODE) & bit;
}

static unsigned int neuron_dge_elem_shift(uint8_t mode)
{
    return (mode & NEURON_DGE_F_ELEM_MASK) >> NEURON_DGE_F_ELEM_SHIFT;
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

/*
 * The index encoding (emu_isa.h, docs/device-model.md "DGE copy"): no
 * unknown mode bits; a direct descriptor has no element size and no index
 * table; an indirect one has a 4-byte aligned table and a nonzero length
 * that is a whole number of elements.
 */
static bool neuron_dge_index_encoding_ok(const NeuronDgeDesc *d)
{
    uint32_t elem = 1u << neuron_dge_elem_shift(d->mode);

    if (d->mode & ~NEURON_DGE_F_ALL) {
        return false;
    }
    if (!NEURON_DGE_FIELD(d->indirect, INDIRECT_MODE)) {
        return !(d->mode & NEURON_DGE_F_ELEM_MASK) && !d->idx_table;
    }
    return !(d->idx_table % NEURON_DGE_IDX_ENTRY_BYTES) && d->length &&
           !(d->length & (elem - 1));
}

/**
 * neuron_dge_check() - structural validity of the DGE_COPY descriptor @d
 * (neuron_dge_decode())
 * @bc_reg: set to the first failing direction's bc_reg
 *
 * Returns 0 if valid, else the failing bits: NEURON_DGE_DIR_SRC,
 * NEURON_DGE_DIR_DST (BOUND_CHECK_REG or indirect flags),
 * NEURON_DGE_BAD_BACKEND, NEURON_DGE_BAD_INDEX and NEURON_DGE_BAD_LENGTH
 * (more packets than the DMA engines take, neuron_dma_split()). The engine makes that a
 * SEQUENCER_FATAL (info_kind DGE_INVALID, info = the bits, direction = the
 * failing directions) and halts.
 */
uint8_t neuron_dge_check(const NeuronDgeDesc *d, unsigned int *bc_reg)
{
    NeuronDmaSplit split;
    uint8_t mode = d->mode;
    uint8_t bad = 0;
    bool ok;

    *bc_reg = 0;
    ok = neuron_dge_indexed(d, NEURON_DGE_DIR_SRC) ?
         neuron_dge_idx_bc_valid(d->bc_src, d->indirect, mode) :
         neuron_dge_bc_valid(d->bc_src, mode);
    if (!ok) {
        bad |= NEURON_DGE_DIR_SRC;
        *bc_reg = NEURON_DGE_FIELD(d->bc_src, BC_REG);
    }
    ok = neuron_dge_indexed(d, NEURON_DGE_DIR_DST) ?
         neuron_dge_idx_bc_valid(d->bc_dst, d->indirect, mode) :
         neuron_dge_bc_valid(d->bc_dst, mode);
    if (!ok) {
        if (!bad) {
            *bc_reg = NEURON_DGE_FIELD(d->bc_dst, BC_REG);
        }
        bad |= NEURON_DGE_DIR_DST;
    }
    if (d->backend > NEURON_DGE_BACKEND_MAX) {
        bad |= NEURON_DGE_BAD_BACKEND;
    }
    if (!neuron_dge_index_encoding_ok(d)) {
        bad |= NEURON_DGE_BAD_INDEX;
    }
    if (!neuron_dma_split(d->length, &split)) {
        bad |= NEURON_DGE_BAD_LENGTH;
    }
    return bad;
}

/* data_crc of INST_START: the source bytes, when they are in device memory. */
uint16_t neuron_dge_input_crc(const NeuronDevMem *m, const NeuronDgeDesc *d)
{
    const uint8_t *p = neuron_mem_at(m, d->src, d->length);

    if (d->backend == NEURON_DGE_BACKEND_NONE || !d->length || !p) {
        return 0;
    }
    return neuron_crc16(p, d->length);
}

/*
 * A direction's limit (docs/hardware.md#dge-bounds-reg): $S[bc_reg], and in
 * wide-offset mode $S[bc_reg + 1] as its upper 32 bits. Narrow mode never
 * reads $S[bc_reg + 1] (bc_reg may be 63).
 */
static uint64_t neuron_dge_limit(const NeuronDgeCopy *op, uint8_t bc)
{
    unsigned int reg = NEURON_DGE_FIELD(bc, BC_REG);
    uint64_t limit = op->sreg[reg];

    if (neuron_dge_wide(op->desc.mode)) {
        limit |= (uint64_t)op->sreg[reg + 1] << 32;
    }
    return limit;
}

/*
 * Reads an indirect copy's @count-entry index table once into @op->idx
 * (the caller checked that it lies in device memory). Every later step
 * reads the snapshot, never device memory: a scatter whose destination
 * window holds its own table rewrites the table's bytes, not the indices
 * its later elements go to, so an element cannot leave the window the
 * first pass checked (docs/device-model.md "DGE copy").
 */
static void neuron_dge_read_indices(NeuronDgeCopy *op, uint32_t count)
{
    const uint8_t *tab = neuron_mem_at(op->mem, op->desc.idx_table,
                                       (uint64_t)count *
                                       NEURON_DGE_IDX_ENTRY_BYTES);
    uint32_t i;

    op->idx = g_new(uint32_t, count);
    for (i = 0; i < count; i++) {
        op->idx[i] = ldl_le_p(tab + (uint64_t)i * NEURON_DGE_IDX_ENTRY_BYTES);
    }
}

static uint32_t neuron_dge_idx(const NeuronDgeCopy *op, uint32_t i)
{
    return op->idx[i];
}

/*
 * The bounds check of one direction (docs/hardware.md#dge-detect: addr <=
 * limit; docs/decisions/0018-dge-index-path.md). A direct direction compares
 * the last byte the copy touches, addr + max(length, 1) - 1; an indexed one
 * compares every index. Returns true if the direction is out of bounds;
 * @shown/@limit are what the log prints (the last byte or the first
 * failing index).
 */
static bool neuron_dge_oob(const NeuronDgeCopy *op, unsigned int dir,
                           uint8_t bc, uint32_t addr, uint32_t count, uint64_t *shown,
                           uint64_t *limit)
{
    const NeuronDgeDesc *d = &op->desc;
    uint32_t i;

    if (!NEURON_DGE_FIELD(bc, BC_ENABLED)) {
        return false;
    }
    *limit = neuron_dge_limit(op, bc);
    if (!neuron_dge_indexed(d, dir)) {
        *shown = (uint64_t)addr + (d->length ? d->length - 1 : 0);
        return *shown > *limit;
    }
    for (i = 0; i < count; i++) {
        *shown = neuron_dge_idx(op, i);
        if (*shown > *limit) {
            return true;
        }
    }
    return false;
}

/*
 * Element @i of direction @dir: its BAR4 offset, or false if it leaves the
 * direction's window [addr, addr + length) (the range the driver checked
 * against the file's allocations, docs/decisions/0005-tenancy.md).
 */
static bool neuron_dge_elem(const NeuronDgeCopy *op, unsigned int dir,
                            uint32_t addr, uint32_t i, uint32_t elem,
                            uint64_t *off)
{
    uint64_t rel = (uint64_t)(neuron_dge_indexed(&op->desc, dir) ?
                              neuron_dge_idx(op, i) : i) * elem;

    *off = addr + rel;
    return rel + elem <= op->desc.length;
}

/*
 * Gather/scatter element by element; false (nothing written) if one leaves
 * its window. Both passes take the indices from the one snapshot, so the
 * second copies exactly the elements the first checked.
 */
static bool neuron_dge_indirect_copy(NeuronDgeCopy *op, uint32_t count,
                                     uint32_t elem)
{
    const NeuronDevMem *m = op->mem;
    const NeuronDgeDesc *d = &op->desc;
    uint8_t *from, *to;
    uint64_t s, t;
    uint32_t i;

    for (i = 0; i < count; i++) {
        if (!neuron_dge_elem(op, NEURON_DGE_DIR_SRC, d->src, i, elem, &s) ||
            !neuron_dge_elem(op, NEURON_DGE_DIR_DST, d->dst, i, elem, &t)) {
            neuron_dge_log(op, "DGE element %u (index %u) leaves its "
                           "window [addr, addr + length 0x%x): "
                           "MEMORY_ERROR, descriptor not emitted", i,
                           neuron_dge_idx(op, i), d->length);
            return false;
        }
    }
    for (i = 0; i < count; i++) {
        if (!neuron_dge_elem(op, NEURON_DGE_DIR_SRC, d->src, i, elem, &s) ||
            !neuron_dge_elem(op, NEURON_DGE_DIR_DST, d->dst, i, elem, &t)) {
            return false;       /* not reached: the first pass checked it */
        }
        from = neuron_mem_at(m, s, elem);
        to = neuron_mem_at(m, t, elem);
        if (!from || !to) {
            return false;       /* not reached: the windows are in memory */
        }
        memmove(to, from, elem);
    }
    return true;
}

/* Which failing directions a bounds record reports and whether it is fatal. */
static void neuron_dge_bounds_outcome(NeuronDgeCopy *op, unsigned int oob)
{
    const NeuronDgeDesc *d = &op->desc;
    unsigned int report = 0, index = 0, dir;
    bool fatal = false;

    for (dir = NEURON_DGE_DIR_SRC; dir <= NEURON_DGE_DIR_DST; dir <<= 1) {
        uint8_t bc = dir == NEURON_DGE_DIR_SRC ? d->bc_src : d->bc_dst;

        if (!(oob & dir)) {
            continue;
        }
        if (neuron_dge_indexed(d, dir)) {
            /*
             * docs/decisions/0018-dge-index-path.md: an index OOB is never
             * silent: an error with idx_bound_is_err, or when bit 1 leaves
             * no notification to carry it.
             */
            index |= dir;
            report |= dir;
            fatal |= NEURON_DGE_FIELD(d->indirect, INDIRECT_IDX_BOUND_IS_ERR) ||
                     !op->packet_notif;
        } else if (!NEURON_DGE_FIELD(bc, BC_DISABLE_OOB_ERROR_NOTIF)) {
            report |= dir;  /* gate 2, docs/hardware.md#dge-bounds-reg */
        }
    }
    op->dirs = oob;
    op->bc_reg = NEURON_DGE_FIELD((oob & NEURON_DGE_DIR_SRC) ? d->bc_src
                                                             : d->bc_dst,
                                  BC_REG);
    op->info = report | index << NEURON_DGE_INFO_INDEX_SHIFT;
    if (fatal) {
        op->record = NEURON_DGE_RECORD_BOUNDS_FATAL;
    } else if (op->packet_notif && report) {
        op->record = NEURON_DGE_RECORD_BOUNDS;   /* gate 1 */
    }
}

/*
 * The log of a failed bounds check, in the reference firmware's words
 * (docs/device-model.md#dge-log, docs/hardware.md#dge-detect):
 *   DGE: bounds:(%1d 0x%llx<=0x%llx, %1d 0x%llx<=0x%llx)
 *       per direction, src then dst: bc_enabled, the address (or index)
 *       checked, the limit
 *   DGE: Failed bounds check. $S[%i]+=%i.
 *       once per failing direction, src first: its bc_reg and by how much
 *       the address (or index) exceeds the limit
 *   DGE: Dispatched error notification
 *       when the SEQUENCER_NONFATAL record is dispatched; the other two
 *       outcomes (an index bound error, or no record) have lines of ours.
 * Each line is prefixed with op->who by neuron_dge_log().
 */
static void neuron_dge_log_bounds(const NeuronDgeCopy *op, unsigned int oob,
                                  const uint64_t shown[2],
                                  const uint64_t limit[2])
{
    const NeuronDgeDesc *d = &op->desc;
    unsigned int dir, i;

    if (!qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    neuron_dge_log(op, "DGE: bounds:(%1d 0x%" PRIx64 "<=0x%" PRIx64
                   ", %1d 0x%" PRIx64 "<=0x%" PRIx64 ")",
                   (int)NEURON_DGE_FIELD(d->bc_src, BC_ENABLED),
                   shown[0], limit[0],
                   (int)NEURON_DGE_FIELD(d->bc_dst, BC_ENABLED),
                   shown[1], limit[1]);
    for (dir = NEURON_DGE_DIR_SRC, i = 0; dir <= NEURON_DGE_DIR_DST;
         dir <<= 1, i++) {
        uint8_t bc = dir == NEURON_DGE_DIR_SRC ? d->bc_src : d->bc_dst;

        if (oob & dir) {
            neuron_dge_log(op, "DGE: Failed bounds check. $S[%u]+=%" PRIu64
                           ".", (unsigned int)NEURON_DGE_FIELD(bc, BC_REG),
                           shown[i] - limit[i]);
        }
    }
    switch (op->record) {
    case NEURON_DGE_RECORD_BOUNDS:
        neuron_dge_log(op, "DGE: Dispatched error notification");
        break;
    case NEURON_DGE_RECORD_BOUNDS_FATAL:
        neuron_dge_log(op, "DGE: index out of bounds: SEQUENCER_FATAL, "
                       "engine halted");
        break;
    default:
        neuron_dge_log(op, "DGE: error notification not dispatched (%s): "
                       "descriptor skipped",
                       op->packet_notif ? "bc_disable_oob_error_notif"
                                        : "FEATURE_FLAGS bit 1 clear");
        break;
    }
}

/* The body of neuron_dge_exec(), which owns @op->idx around it. */
static void neuron_dge_run(NeuronDgeCopy *op)
{
    const NeuronDevMem *m = op->mem;
    const NeuronDgeDesc *d = &op->desc;
    bool indirect = NEURON_DGE_FIELD(d->indirect, INDIRECT_MODE);
    uint32_t elem = 1u << neuron_dge_elem_shift(d->mode);
    uint32_t count = indirect ? d->length / elem : 0;
    uint64_t limit[2] = { 0, 0 }, shown[2] = { 0, 0 };
    unsigned int oob = 0;

    op->record = NEURON_DGE_RECORD_NONE;
    op->emitted = false;
    op->dirs = 0;
    op->info = 0;
    op->bc_reg = 0;
    op->crc_out = 0;

    if (d->backend == NEURON_DGE_BACKEND_NONE) {
        neuron_dge_log(op, "DGE: NO BACKEND FOUND, doing nothing");
        return;
    }
    if (indirect && !neuron_mem_range_ok(m, d->idx_table,
                                         (uint64_t)count *
                                         NEURON_DGE_IDX_ENTRY_BYTES)) {
        neuron_dge_log(op, "DGE index table 0x%x (%u entries) leaves device "
                       "memory: MEMORY_ERROR, descriptor not emitted",
                       d->idx_table, count);
        op->record = NEURON_DGE_RECORD_MEMORY_ERROR;
        return;
    }
    if (indirect) {
        neuron_dge_read_indices(op, count);
    }

    if (neuron_dge_oob(op, NEURON_DGE_DIR_SRC, d->bc_src, d->src, count,
                       &shown[0], &limit[0])) {
        oob |= NEURON_DGE_DIR_SRC;
    }
    if (neuron_dge_oob(op, NEURON_DGE_DIR_DST, d->bc_dst, d->dst, count,
                       &shown[1], &limit[1])) {
        oob |= NEURON_DGE_DIR_DST;
    }
    if (oob) {
        neuron_dge_bounds_outcome(op, oob);
        neuron_dge_log_bounds(op, oob, shown, limit);
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

    if (indirect) {
        if (!neuron_dge_indirect_copy(op, count, elem)) {
            op->record = NEURON_DGE_RECORD_MEMORY_ERROR;
            return;
        }
    } else {
        memmove(neuron_mem_at(m, d->dst, d->length),
                neuron_mem_at(m, d->src, d->length), d->length);
    }
    memory_region_set_dirty(m->mr, d->dst, d->length);
    if (op->want_crc && d->length) {
        op->crc_out = neuron_crc16(neuron_mem_at(m, d->dst, d->length),
                                   d->length);
    }
    op->emitted = true;     /* the DMA engines moved its packets */
    if (op->packet_notif) {
        op->record = NEURON_DGE_RECORD_METADATA;
    }
}

/**
 * neuron_dge_exec() - execute the structurally valid DGE_COPY @op
 *
 * Sets @op->record to the one record owed (if any): the bounds error
 * (non-fatal, or fatal for an index OOB that no notification may carry), a
 * MEMORY_ERROR for a copy outside device memory or an element outside its
 * window, or the DGE_METADATA success record. An indirect copy's index
 * table is read once, before any check (neuron_dge_read_indices()).
 */
void neuron_dge_exec(NeuronDgeCopy *op)
{
    op->idx = NULL;
    neuron_dge_run(op);
    g_free(op->idx);
    op->idx = NULL;
}
