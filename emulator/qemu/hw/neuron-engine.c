/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: the five engines of a core (PE, ACT, POOL, DVE, SP) and the
 * instruction set of include/neuron/emu_isa.h (docs/device-model.md
 * "Engines").
 *
 * An engine runs from its QEMU_CLOCK_VIRTUAL timer, never inside an MMIO
 * handler, and retires at most NEURON_ENGINE_BATCH instructions per callback
 * so the vCPU keeps running under TCG. Each instruction walks the steps of
 * enum NeuronStep: FETCH (decode, reject bad encodings), WAIT (EVENTS
 * wait_mode), INST_START, OP, UPDATE (EVENTS update_mode), INST_END, RETIRE.
 *
 * A step makes at most one record and performs its side effect before
 * handing the record over. A record that its queue cannot take yet (full and
 * backpressured) is parked in NeuronEngine.pending and the engine stalls;
 * when woken it writes the parked record and moves on to the next step. So a
 * stalled instruction never repeats a side effect, and no record is lost or
 * written twice.
 *
 * Calls go down only (neuron-tpb.h, "Call direction"): records to NOTIFIC,
 * updates to EVT_SEM, copies to the DGE helper; the throttle edge goes up
 * as NEURON_UP_THROTTLE. neuron-tpb.c wakes engines with
 * neuron_engine_wake_waiters() and neuron_engine_wake_queue().
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "neuron-tpb.h"

/*
 * Records are built byte by byte with the accessors of
 * include/uapi/linux/neuron_record.h: NREC_FIELD stores @v into the field @f
 * (NEURON_ISA_<f>_MASK/_SHIFT, which truncates it to the field's width) of
 * the little-endian word of @n bytes at byte @off; NREC_LE stores a whole field.
 */
#define NREC_FIELD(rec, off, n, f, v) \
    neuron_rec_put_field((rec)->bytes, (off), (n), NEURON_ISA_##f##_MASK, \
                         NEURON_ISA_##f##_SHIFT, (v))
#define NREC_LE(rec, off, n, v)  neuron_rec_put_le((rec)->bytes, (off), (n), (v))

/* Word 0 of trace, EXPLICIT and DGE_METADATA records: PC and debug_hint. */
static void neuron_rec_word0(union neuron_isa_notification *rec, uint32_t pc,
                             uint32_t debug_hint)
{
    NREC_FIELD(rec, NEURON_ISA_W0_OFFSET, 4, W0_PC, pc);
    NREC_FIELD(rec, NEURON_ISA_W0_OFFSET, 4, W0_DEBUG_HINT, debug_hint);
}

static const char *const neuron_engine_names[NEURON_ENGINES_PER_CORE] = {
    "PE", "ACT", "POOL", "DVE", "SP",
};

static int64_t neuron_now_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* RUNNING or WAITING: a program is in progress. */
static bool neuron_engine_active(NeuronEngine *e)
{
    return e->state == NEURON_ENGINE_RUNNING ||
           e->state == NEURON_ENGINE_WAITING;
}

/*
 * Whether engine @e keeps its core from being quiesced: a program is in
 * progress or a record is still owed to NOTIFIC (DEV_STATUS.QUIESCED).
 */
bool neuron_engine_busy(NeuronEngine *e)
{
    return neuron_engine_active(e) || e->has_pending;
}

/* Runs the engine soon (from the main loop) if it has work to do. */
static void neuron_engine_kick(NeuronEngine *e)
{
    if (neuron_engine_active(e)) {
        timer_mod_anticipate(e->timer, neuron_now_ns());
    }
}

/* Wakes the core's engines waiting on a semaphore or an event. */
void neuron_engine_wake_waiters(NeuronCore *c)
{
    unsigned int i;

    for (i = 0; i < NEURON_ENGINES_PER_CORE; i++) {
        NeuronEngine *e = &c->engine[i];

        if (e->state == NEURON_ENGINE_WAITING && e->stalled_queue < 0) {
            neuron_engine_kick(e);
        }
    }
}

/* Wakes engines stalled on queue @q (any queue if @q < 0) to retry. */
void neuron_engine_wake_queue(NeuronCore *c, int q)
{
    unsigned int i;

    for (i = 0; i < NEURON_ENGINES_PER_CORE; i++) {
        NeuronEngine *e = &c->engine[i];

        if (e->stalled_queue >= 0 && (q < 0 || e->stalled_queue == q)) {
            neuron_engine_kick(e);
        }
    }
}

/**
 * neuron_engine_set_pending() - hand a record of class @cls to NOTIFIC
 *
 * Sets the header's notific_type; NOTIFIC fills in phase, overflow and the
 * timestamp when it writes the record (neuron_notific_push()).
 */
static void neuron_engine_set_pending(NeuronEngine *e, unsigned int cls,
                                      union neuron_isa_notification *rec,
                                      uint8_t notific_type)
{
    rec->bytes[NEURON_ISA_HEADER_OFFSET] = notific_type;
    e->pending = *rec;
    e->pending_class = cls;
    e->has_pending = true;
}

/* INST_START / INST_END (@kind), with the instruction's data CRC. */
static void neuron_engine_trace_record(NeuronEngine *e, unsigned int kind,
                                       uint16_t crc)
{
    union neuron_isa_notification rec = { };

    neuron_rec_word0(&rec, e->pc, le16_to_cpu(e->insn.debug_hint));
    NREC_LE(&rec, NEURON_ISA_TRACE_SOFT_RESET_COUNTER_OFFSET, 2, e->soft_reset_counter);
    NREC_LE(&rec, NEURON_ISA_TRACE_DATA_CRC_OFFSET, 2, crc);
    neuron_engine_set_pending(e, NEURON_CLASS_TRACE, &rec,
                              NEURON_ENGINE_NOTIFIC_TYPE(e->index, kind));
}

/* NOTIFY: an EXPLICIT record. */
static void neuron_engine_explicit_record(NeuronEngine *e)
{
    union neuron_isa_notification rec = { };

    neuron_rec_word0(&rec, e->pc, le16_to_cpu(e->insn.debug_hint));
    NREC_LE(&rec, NEURON_ISA_EXPLICIT_SOFT_RESET_COUNTER_OFFSET, 2,
       e->soft_reset_counter);
    NREC_LE(&rec, NEURON_ISA_EXPLICIT_DEBUG_HINT_EXT_OFFSET, 2,
       le16_to_cpu(e->insn.operand.arg.debug_hint_extended));
    neuron_engine_set_pending(e, NEURON_CLASS_EXPLICIT, &rec,
                              NEURON_ENGINE_NOTIFIC_TYPE(e->index,
                                  NEURON_ENGINE_RECORD_EXPLICIT));
}

/* An engine-made EVT_SEM update and its record (value = after the update). */
static void neuron_engine_evtsem_update(NeuronEngine *e, unsigned int mode,
                                        unsigned int idx, uint32_t value)
{
    union neuron_isa_notification rec = { };

    NREC_LE(&rec, NEURON_ISA_EVT_SEM_VALUE_OFFSET, 4,
       neuron_evtsem_apply(e->core, mode, idx, value));
    NREC_LE(&rec, NEURON_ISA_EVT_SEM_ID_OFFSET, 1, idx);
    NREC_FIELD(&rec, NEURON_ISA_EVT_SEM_MODE_OFFSET, 1, EVT_SEM_UPDATE_MODE, mode);
    NREC_FIELD(&rec, NEURON_ISA_EVT_SEM_MODE_OFFSET, 1, EVT_SEM_IS_EVENT,
          neuron_evtsem_is_event_mode(mode));
    NREC_LE(&rec, NEURON_ISA_EVT_SEM_BLOCK_ID_OFFSET, 1, e->index);
    neuron_engine_set_pending(e, NEURON_CLASS_EVT_SEM, &rec,
                              NEURON_ENGINE_NOTIFIC_TYPE(e->index,
                                  NEURON_ENGINE_RECORD_EVT_SEM));
}

/**
 * neuron_engine_error_record() - a TPB_ERROR record
 * (docs/hardware.md#rec-tpb-error)
 * @error_id:  enum neuron_isa_tpb_error_type, byte 0
 * @info_kind: enum neuron_isa_seq_info_kind, metadata_lo
 * @info:      metadata_hi.info (docs/hardware.md#rec-error-ids)
 * @bc_reg:    metadata_lo bc_reg (DGE bounds errors, else 0)
 * @direction: metadata_lo direction, enum neuron_dge_direction bits
 *
 * metadata_hi carries the sequencer arm {block_id = engine, program_counter
 * = PC, info} (docs/hardware.md#rec-seq-metadata), so the host can tell which
 * engine and instruction raised it on the shared errors queue.
 */
static void neuron_engine_error_record(NeuronEngine *e, uint8_t error_id,
                                       unsigned int info_kind, uint8_t info,
                                       unsigned int bc_reg,
                                       unsigned int direction)
{
    union neuron_isa_notification rec = { };

    const unsigned int lo = NEURON_ISA_TPB_ERROR_METADATA_LO_OFFSET;
    const unsigned int hi = NEURON_ISA_TPB_ERROR_METADATA_HI_OFFSET;

    NREC_LE(&rec, NEURON_ISA_TPB_ERROR_ID_OFFSET, 1, error_id);
    NREC_FIELD(&rec, lo, 2, SEQ_LO_INFO_KIND, info_kind);
    NREC_FIELD(&rec, lo, 2, SEQ_LO_BC_REG, bc_reg);
    NREC_FIELD(&rec, lo, 2, SEQ_LO_DIRECTION, direction);
    NREC_FIELD(&rec, hi, 4, SEQ_HI_BLOCK_ID, e->index);
    NREC_FIELD(&rec, hi, 4, SEQ_HI_PC, e->pc);
    NREC_FIELD(&rec, hi, 4, SEQ_HI_INFO, info);
    neuron_engine_set_pending(e, NEURON_CLASS_ERROR, &rec,
                              NEURON_ISA_NOTIFICATION_TYPE_TPB_ERROR);
}

/**
 * neuron_engine_set_fatal() - SEQUENCER_FATAL: report, then halt
 *
 * The record is written first (stalling like any other); the engine then
 * enters HALTED and raises intr_6. No completion follows: the host sees a
 * timeout (docs/hardware.md#timeout). Only CTRL.RESET leaves HALTED.
 */
static void neuron_engine_set_fatal(NeuronEngine *e, unsigned int info_kind,
                                    uint8_t info, unsigned int bc_reg,
                                    unsigned int direction)
{
    neuron_engine_error_record(e, NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL,
                               info_kind, info, bc_reg, direction);
    e->last_error = NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL;
    e->step = NEURON_STEP_FATAL;
}

/* THROTTLE: the edge, and with THROTTLE_CTRL armed an interrupt-form record. */
static void neuron_engine_throttle(NeuronEngine *e, uint32_t level)
{
    union neuron_isa_notification rec = { };

    neuron_core_up(e->core, NEURON_UP_THROTTLE, 0);
    if (!e->core->cfg.throttle_armed) {
        return;
    }
    NREC_FIELD(&rec, NEURON_ISA_INTR_W0_OFFSET, 2, INTR_GROUP,
          NEURON_ISA_INTERRUPT_GROUP_THROTTLE);
    NREC_FIELD(&rec, NEURON_ISA_INTR_W0_OFFSET, 2, INTR_BLOCK_ID, e->index);
    NREC_LE(&rec, NEURON_ISA_INTR_CAUSE_OFFSET, 4, level);
    neuron_engine_set_pending(e, NEURON_CLASS_THROTTLE, &rec,
                              NEURON_ISA_NOTIFICATION_TYPE_ERROR);
}

/* The log prefix naming engine @e and its PC, "core C engine E (NAME) pc P" */
static void neuron_engine_who(NeuronEngine *e, char *buf, size_t len)
{
    snprintf(buf, len, "core %u engine %u (%s) pc %u", e->core->index,
             e->index, neuron_engine_names[e->index], e->pc);
}

/**
 * neuron_engine_log() - LOG_GUEST_ERROR about engine @e's current instruction
 *
 * Prefixes the message with core, engine and PC, so every bad-input message
 * names where it happened.
 */
static void G_GNUC_PRINTF(2, 3) neuron_engine_log(NeuronEngine *e,
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
    qemu_log_mask(LOG_GUEST_ERROR,
                  "neuron-tpb: core %u engine %u (%s) pc %u: %s\n",
                  e->core->index, e->index, neuron_engine_names[e->index],
                  e->pc, msg);
}

/*
 * DGE_COPY's structural checks (docs/hardware.md#dge-structural, #dge-indirect,
 * #dge-validity, neuron-dge.c): on failure HandleIllegalInstr, i.e.
 * SEQUENCER_FATAL with info_kind DGE_INVALID, info = the failing bits,
 * direction = the failing directions.
 */
static bool neuron_engine_dge_decode_ok(NeuronEngine *e)
{
    NeuronDgeDesc d;
    unsigned int bc_reg;
    uint8_t bad;

    neuron_dge_decode(&e->insn, &d);
    bad = neuron_dge_check(&d, &bc_reg);
    if (!bad) {
        return true;
    }
    neuron_engine_log(e, "DGE descriptor invalid:%s%s%s%s%s (bc_src 0x%02x "
                      "bc_dst 0x%02x indirect 0x%02x backend %u mode 0x%02x "
                      "index table 0x%x length 0x%x): "
                      "HandleIllegalInstr, SEQUENCER_FATAL, halted",
                      (bad & NEURON_DGE_DIR_SRC) ? " src BOUND_CHECK_REG" : "",
                      (bad & NEURON_DGE_DIR_DST) ? " dst BOUND_CHECK_REG" : "",
                      (bad & NEURON_DGE_BAD_BACKEND) ? " backend" : "",
                      (bad & NEURON_DGE_BAD_INDEX) ? " index encoding" : "",
                      (bad & NEURON_DGE_BAD_LENGTH) ? " length" : "",
                      d.bc_src, d.bc_dst, d.indirect, d.backend, d.mode,
                      d.idx_table, d.length);
    neuron_engine_set_fatal(e, NEURON_ISA_SEQ_INFO_DGE_INVALID, bad, bc_reg,
                            bad & (NEURON_DGE_DIR_SRC | NEURON_DGE_DIR_DST));
    return false;
}

/*
 * Rejects encodings the engine cannot execute: unknown opcode, nonzero
 * reserved fields, out-of-range modes or indices (docs/device-model.md:
 * SEQUENCER_FATAL, info_kind BAD_OPCODE, info = opcode). DGE_COPY has its
 * own structural checks (docs/hardware.md#dge-structural, #dge-indirect,
 * #dge-validity).
 */
static bool neuron_engine_decode_ok(NeuronEngine *e)
{
    const struct neuron_emu_insn *in = &e->insn;
    uint32_t idx = le32_to_cpu(in->operand.arg.idx);
    uint32_t value = le32_to_cpu(in->operand.arg.value);
    const char *why = NULL;

    if (in->opcode >= NEURON_OP_COUNT) {
        why = "unknown opcode";
    } else if (in->opcode == NEURON_OP_DGE_COPY &&
               e->core->cfg.gen == NEURON_GEN_SUNDA) {
        why = "DGE_COPY is illegal on gen sunda (no DGE, docs/hardware.md#generations)";
    } else if (in->opcode == NEURON_OP_DGE_COPY &&
               e->index != NEURON_ENGINE_POOL) {
        /* docs/hardware.md#dge: the DGE is part of the POOL firmware */
        why = "DGE_COPY is illegal off the POOL engine (docs/hardware.md#dge)";
    } else if (in->opcode != NEURON_OP_DGE_COPY &&
               (in->flags || in->reserved0)) {
        why = "nonzero reserved field (flags or reserved0)";
    } else if (in->events.wait_mode > NEURON_WAIT_EVENT_SET) {
        why = "EVENTS.wait_mode out of range";
    } else if (in->events.update_mode > NEURON_EVT_SEM_UPDATE_EVENT_CLEAR) {
        why = "EVENTS.update_mode out of range";
    } else if (in->opcode == NEURON_OP_DGE_COPY) {
        return neuron_engine_dge_decode_ok(e);
    } else if (in->operand.arg.reserved1 || in->operand.arg.reserved2) {
        why = "nonzero operand reserved field (reserved1 or reserved2)";
    } else {
        switch (in->opcode) {
        case NEURON_OP_SEM_SET:
        case NEURON_OP_SEM_INC:
        case NEURON_OP_SEM_DEC:
        case NEURON_OP_WAIT_GE:
        case NEURON_OP_WAIT_GE_AND_DEC:
        case NEURON_OP_EVENT_SET:
        case NEURON_OP_EVENT_CLEAR:
            if (idx >= NEURON_EVT_SEM_COUNT) {
                why = "operand idx is not a semaphore/event (>= 256)";
            }
            break;
        case NEURON_OP_REG_WRITE:
            if (idx >= NEURON_ENG_NUM_SREGS) {
                why = "operand idx is not a $S register (>= 64)";
            }
            break;
        case NEURON_OP_FP_ERROR:
            if (value > NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL || idx > 0xff) {
                why = "FP_ERROR value is not an error_id or idx > 0xff";
            }
            break;
        default:
            break;
        }
    }
    if (!why) {
        return true;
    }
    neuron_engine_log(e, "%s (opcode 0x%02x): SEQUENCER_FATAL, halted", why,
                      in->opcode);
    neuron_engine_set_fatal(e, NEURON_ISA_SEQ_INFO_BAD_OPCODE, in->opcode,
                            0, 0);
    return false;
}

/* Reads the instruction at PC from device memory and checks it. */
static bool neuron_engine_fetch(NeuronEngine *e)
{
    const NeuronDevMem *m = e->core->mem;
    uint64_t addr = e->prog_base + (uint64_t)e->pc * NEURON_EMU_INSN_BYTES;
    const uint8_t *p = neuron_mem_at(m, addr, NEURON_EMU_INSN_BYTES);

    e->traced = false;
    e->halt_after = false;
    e->delay_armed = false;
    e->crc_in = 0;
    e->crc_out = 0;

    if (addr < e->prog_base || !p) {
        memset(&e->insn, 0, sizeof(e->insn));
        neuron_engine_log(e, "instruction fetch outside device memory "
                          "(PROG_BASE + PC * 32): SEQUENCER_FATAL, halted");
        neuron_engine_set_fatal(e, NEURON_ISA_SEQ_INFO_EXCEPTION, 0, 0, 0);
        return false;
    }
    memcpy(&e->insn, p, sizeof(e->insn));
    return neuron_engine_decode_ok(e);
}

/* EVENTS wait_mode: true once the instruction may start. */
static bool neuron_engine_wait_ready(NeuronEngine *e)
{
    NeuronCore *c = e->core;
    struct neuron_emu_events ev = e->insn.events;
    uint32_t value = le32_to_cpu(ev.semaphore_value);

    switch (ev.wait_mode) {
    case NEURON_WAIT_SEM_GE:
        return neuron_evtsem_sem(c, ev.wait_idx) >= value;
    case NEURON_WAIT_SEM_GE_AND_DEC:
        return neuron_evtsem_try_dec(c, ev.wait_idx, value);
    case NEURON_WAIT_EVENT_SET:
        return neuron_evtsem_event(c, ev.wait_idx);
    default:
        return true;
    }
}

/* Success-path "DGE packet notification" (docs/hardware.md#rec-dge-metadata). */
static void neuron_engine_dge_metadata_record(NeuronEngine *e)
{
    union neuron_isa_notification rec = { };

    neuron_rec_word0(&rec, e->pc, NEURON_ISA_TPB_INSTRUCTION_METADATA_TYPE_DGE);
    /*
     * The split the DMA engines used (docs/device-model.md#dma-engines);
     * the 12-bit field truncates 4096 to 0, the hardware's encoding.
     */
    NREC_LE(&rec, NEURON_ISA_DGE_DMA_MAP_OFFSET, 2, e->dma.map);
    NREC_FIELD(&rec, NEURON_ISA_DGE_W6_OFFSET, 2, DGE_NUM_PACKETS,
               e->dma.num_packets);
    neuron_engine_set_pending(e, NEURON_CLASS_DGE, &rec,
                              NEURON_ENGINE_NOTIFIC_TYPE(e->index,
                                  NEURON_ENGINE_RECORD_EXPLICIT));
}

/*
 * The completion of DMA engine @i's part of the last DGE copy, on a queue
 * whose M2S_TRIGGER bit is set (docs/device-model.md#dma-engines).
 */
static void neuron_engine_dma_record(NeuronEngine *e, unsigned int i)
{
    union neuron_isa_notification rec = { };

    NREC_LE(&rec, NEURON_ISA_DMA_ENGINE_OFFSET, 1, i);
    NREC_LE(&rec, NEURON_ISA_DMA_QUEUE_OFFSET, 1, 0);
    NREC_LE(&rec, NEURON_ISA_DMA_DESC_COUNT_OFFSET, 4, e->dma.packets[i]);
    neuron_engine_set_pending(e, NEURON_CLASS_DMA, &rec,
                              NEURON_ISA_NOTIFICATION_TYPE_DMA);
}

/*
 * DGE_COPY (decoded and structurally valid): the DGE helper copies and says
 * which record is owed; at most one record. Returns false if the engine is
 * to halt (an index bound error), else it continues.
 */
static bool neuron_engine_dge(NeuronEngine *e)
{
    char who[64] = "";
    NeuronDgeCopy op = {
        .mem = e->core->mem,
        .sreg = e->sreg,
        .packet_notif = e->feature_flags & NEURON_FEATURE_DGE_PACKET_NOTIF,
        .want_crc = e->traced,
        .who = who,
    };

    neuron_dge_decode(&e->insn, &op.desc);
    if (qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        neuron_engine_who(e, who, sizeof(who));
    }
    neuron_dge_exec(&op);
    e->crc_out = op.crc_out;
    if (op.emitted) {
        /* cannot fail: neuron_dge_check() refused a longer descriptor */
        neuron_dma_split(op.desc.length, &e->dma);
        neuron_dma_complete(e->core, &e->dma);
        e->dma_owed = neuron_dma_armed(e->core, e->dma.map);
    }
    switch (op.record) {
    case NEURON_DGE_RECORD_NONE:
        break;
    case NEURON_DGE_RECORD_BOUNDS:
        neuron_engine_error_record(e, NEURON_ISA_TPB_ERROR_SEQUENCER_NONFATAL,
                                   NEURON_ISA_SEQ_INFO_DGE_BOUNDS, op.info,
                                   op.bc_reg, op.dirs);
        break;
    case NEURON_DGE_RECORD_BOUNDS_FATAL:
        /* docs/decisions/0018-dge-index-path.md: an index OOB that is an error */
        neuron_engine_set_fatal(e, NEURON_ISA_SEQ_INFO_DGE_BOUNDS, op.info,
                                op.bc_reg, op.dirs);
        return false;
    case NEURON_DGE_RECORD_MEMORY_ERROR:
        neuron_engine_error_record(e, NEURON_ISA_TPB_ERROR_MEMORY_ERROR,
                                   NEURON_ISA_SEQ_INFO_OTHER, 0, 0, 0);
        break;
    case NEURON_DGE_RECORD_METADATA:
        neuron_engine_dge_metadata_record(e);
        break;
    }
    return true;
}

/* The operation of the current instruction (already decoded and valid). */
static NeuronOpResult neuron_engine_op(NeuronEngine *e)
{
    NeuronCore *c = e->core;
    uint32_t idx = le32_to_cpu(e->insn.operand.arg.idx);
    uint32_t value = le32_to_cpu(e->insn.operand.arg.value);
    int64_t now;

    switch (e->insn.opcode) {
    case NEURON_OP_NOP:
        return NEURON_OP_DONE;
    case NEURON_OP_NOTIFY:
        neuron_engine_explicit_record(e);
        return NEURON_OP_DONE;
    case NEURON_OP_HALT:
        e->halt_after = true;
        return NEURON_OP_DONE;
    case NEURON_OP_SEM_SET:
        neuron_engine_evtsem_update(e, NEURON_EVT_SEM_UPDATE_SEM_SET, idx,
                                    value);
        return NEURON_OP_DONE;
    case NEURON_OP_SEM_INC:
        neuron_engine_evtsem_update(e, NEURON_EVT_SEM_UPDATE_SEM_INC, idx,
                                    value);
        return NEURON_OP_DONE;
    case NEURON_OP_SEM_DEC:
        neuron_engine_evtsem_update(e, NEURON_EVT_SEM_UPDATE_SEM_DEC, idx,
                                    value);
        return NEURON_OP_DONE;
    case NEURON_OP_WAIT_GE:
        return neuron_evtsem_sem(c, idx) >= value ? NEURON_OP_DONE
                                                  : NEURON_OP_BLOCKED;
    case NEURON_OP_WAIT_GE_AND_DEC:
        return neuron_evtsem_try_dec(c, idx, value) ? NEURON_OP_DONE
                                                    : NEURON_OP_BLOCKED;
    case NEURON_OP_EVENT_SET:
        neuron_engine_evtsem_update(e, NEURON_EVT_SEM_UPDATE_EVENT_SET, idx, 0);
        return NEURON_OP_DONE;
    case NEURON_OP_EVENT_CLEAR:
        neuron_engine_evtsem_update(e, NEURON_EVT_SEM_UPDATE_EVENT_CLEAR, idx,
                                    0);
        return NEURON_OP_DONE;
    case NEURON_OP_REG_WRITE:
        e->sreg[idx] = value;
        return NEURON_OP_DONE;
    case NEURON_OP_DGE_COPY:
        return neuron_engine_dge(e) ? NEURON_OP_DONE : NEURON_OP_FATAL;
    case NEURON_OP_FP_ERROR:
        if (value == NEURON_ISA_TPB_ERROR_SEQUENCER_FATAL) {
            /* a fatal error id halts like any fatal error (LAST_ERROR 0x0a) */
            neuron_engine_set_fatal(e, NEURON_ISA_SEQ_INFO_FP, idx, 0, 0);
            return NEURON_OP_FATAL;
        }
        /* Injected, non-fatal: report and go on (LAST_ERROR is for fatal). */
        neuron_engine_error_record(e, value, NEURON_ISA_SEQ_INFO_FP, idx, 0, 0);
        return NEURON_OP_DONE;
    case NEURON_OP_THROTTLE:
        neuron_engine_throttle(e, value);
        return NEURON_OP_DONE;
    case NEURON_OP_DELAY:
        now = neuron_now_ns();
        if (!e->delay_armed) {
            e->delay_armed = true;
            e->delay_deadline_ns = now + value;
        }
        if (now < e->delay_deadline_ns) {
            timer_mod(e->timer, e->delay_deadline_ns);
            return NEURON_OP_BUSY;
        }
        e->delay_armed = false;
        return NEURON_OP_DONE;
    default:
        g_assert_not_reached();
    }
}

/*
 * Runs engine @e until it blocks, finishes, halts or has retired a batch.
 * Loops over steps; before any step a parked record must be written.
 */
static void neuron_engine_run(NeuronEngine *e)
{
    NeuronCore *c = e->core;
    unsigned int retired = 0;
    struct neuron_emu_events ev;
    int q;

    if (c->cfg.stuck_engine == (int)e->index) {
        return; /* fault injection: RUNNING forever, nothing retires */
    }

    while (neuron_engine_active(e)) {
        if (e->has_pending) {
            if (neuron_notific_push(c, e->pending_class, &e->pending, &q) ==
                NEURON_PUSH_STALLED) {
                e->state = NEURON_ENGINE_WAITING;
                e->stalled_queue = q;
                return;
            }
            e->has_pending = false;
            e->stalled_queue = -1;
        }
        e->state = NEURON_ENGINE_RUNNING;

        switch (e->step) {
        case NEURON_STEP_FETCH:
            if (e->pc >= e->prog_count) {
                e->state = NEURON_ENGINE_IDLE;
                return;
            }
            if (neuron_engine_fetch(e)) {
                e->step = NEURON_STEP_WAIT;
            }
            break;
        case NEURON_STEP_WAIT:
            if (!neuron_engine_wait_ready(e)) {
                e->state = NEURON_ENGINE_WAITING;
                return;
            }
            e->step = NEURON_STEP_INST_START;
            break;
        case NEURON_STEP_INST_START:
            e->step = NEURON_STEP_OP;
            if (neuron_notific_traced(c, e->index)) {
                e->traced = true;
                if (e->insn.opcode == NEURON_OP_DGE_COPY) {
                    NeuronDgeDesc d;

                    neuron_dge_decode(&e->insn, &d);
                    e->crc_in = neuron_dge_input_crc(c->mem, &d);
                }
                neuron_engine_trace_record(e, NEURON_ENGINE_RECORD_INST_START,
                                           e->crc_in);
            }
            break;
        case NEURON_STEP_OP:
            switch (neuron_engine_op(e)) {
            case NEURON_OP_DONE:
                e->step = NEURON_STEP_DMA;
                break;
            case NEURON_OP_BLOCKED:
                e->state = NEURON_ENGINE_WAITING;
                return;
            case NEURON_OP_BUSY:
                return;
            case NEURON_OP_FATAL:
                e->step = NEURON_STEP_FATAL;
                break;
            }
            break;
        case NEURON_STEP_DMA:
            if (!e->dma_owed) {
                e->step = NEURON_STEP_UPDATE;
                break;
            }
            /* lowest DMA engine first; one record per step */
            neuron_engine_dma_record(e, ctz32(e->dma_owed));
            e->dma_owed &= e->dma_owed - 1;
            break;
        case NEURON_STEP_UPDATE:
            e->step = NEURON_STEP_INST_END;
            ev = e->insn.events;
            if (ev.update_mode != NEURON_EVT_SEM_UPDATE_NONE) {
                neuron_engine_evtsem_update(e, ev.update_mode, ev.update_idx,
                                            le32_to_cpu(ev.semaphore_value));
            }
            break;
        case NEURON_STEP_INST_END:
            e->step = NEURON_STEP_RETIRE;
            if (e->traced) {
                neuron_engine_trace_record(e, NEURON_ENGINE_RECORD_INST_END,
                                           e->crc_out);
            }
            break;
        case NEURON_STEP_RETIRE:
            e->pc++;
            e->exec_count++;
            e->step = NEURON_STEP_FETCH;
            if (e->halt_after) {
                e->state = NEURON_ENGINE_IDLE;
                return;
            }
            if (c->cfg.insn_delay_ns) {
                /* Slow producer (fault injection): one instruction per tick. */
                timer_mod(e->timer, neuron_now_ns() + c->cfg.insn_delay_ns);
                return;
            }
            if (++retired >= NEURON_ENGINE_BATCH) {
                timer_mod(e->timer,
                          neuron_now_ns() + NEURON_ENGINE_BATCH_GAP_NS);
                return;
            }
            break;
        case NEURON_STEP_FATAL:
            e->state = NEURON_ENGINE_HALTED;
            neuron_notific_raise(c, NEURON_NOTIFIC_INTR_ENGINE_FATAL);
            return;
        }
    }
}

static void neuron_engine_timer_cb(void *opaque)
{
    neuron_engine_run(opaque);
}

void neuron_engine_init(NeuronEngine *e, NeuronCore *c, unsigned int index)
{
    e->core = c;
    e->index = index;
    e->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, neuron_engine_timer_cb, e);
    neuron_engine_reset(e, true);
}

void neuron_engine_finalize(NeuronEngine *e)
{
    timer_free(e->timer);
    e->timer = NULL;
}

/**
 * neuron_engine_reset() - stop @e and make it IDLE at PC 0
 * @power_on: also clear the registers (device reset); CTRL.RESET and the
 *            global RESET keep semaphores, $S, FEATURE_FLAGS, the counters
 *            and LAST_ERROR (docs/device-model.md)
 *
 * A parked record is discarded: the program it belonged to is gone.
 */
void neuron_engine_reset(NeuronEngine *e, bool power_on)
{
    NeuronCore *c = e->core;
    int q = e->stalled_queue;
    unsigned int i;

    timer_del(e->timer);
    e->state = NEURON_ENGINE_IDLE;
    e->pc = 0;
    e->step = NEURON_STEP_FETCH;
    e->has_pending = false;
    e->stalled_queue = -1;
    e->dma_owed = 0;
    e->traced = false;
    e->halt_after = false;
    e->delay_armed = false;
    memset(&e->insn, 0, sizeof(e->insn));

    /* STATUS.STALLED stays only while another engine still waits there. */
    if (q >= 0 && !power_on) {
        bool others = false;

        for (i = 0; i < NEURON_ENGINES_PER_CORE; i++) {
            others |= c->engine[i].stalled_queue == q;
        }
        if (!others) {
            neuron_notific_unstall(c, q);
        }
    }

    if (power_on) {
        e->prog_base = 0;
        e->prog_count = 0;
        e->soft_reset_counter = 0;
        e->exec_count = 0;
        e->feature_flags = 0;
        e->last_error = NEURON_LAST_ERROR_NONE;
        memset(e->sreg, 0, sizeof(e->sreg));
    }
}

static void neuron_engine_ctrl(NeuronEngine *e, uint32_t val)
{
    if (val & ~(NEURON_ENG_CTRL_START | NEURON_ENG_CTRL_RESET)) {
        neuron_engine_log(e, "CTRL 0x%x has undefined bits (only START, "
                          "RESET)", val);
    }
    if (val & NEURON_ENG_CTRL_RESET) {
        neuron_engine_reset(e, false);
    }
    if (!(val & NEURON_ENG_CTRL_START)) {
        return;
    }
    if (e->state != NEURON_ENGINE_IDLE) {
        neuron_engine_log(e, e->state == NEURON_ENGINE_HALTED ?
                          "CTRL.START ignored: engine HALTED, RESET it first" :
                          "CTRL.START ignored: engine is running");
        return;
    }
    e->soft_reset_counter++;
    e->pc = 0;
    e->step = NEURON_STEP_FETCH;
    e->state = NEURON_ENGINE_RUNNING;
    neuron_engine_kick(e);
}

/* neuron_engine_read() - register read at offset @off of engine @e */
uint32_t neuron_engine_read(NeuronEngine *e, hwaddr off)
{

    if (off >= NEURON_ENG_SREG(0) &&
        off < NEURON_ENG_SREG(NEURON_ENG_NUM_SREGS)) {
        return e->sreg[(off - NEURON_ENG_SREG(0)) / 4];
    }
    switch (off) {
    case NEURON_ENG_CTRL:
        return 0;
    case NEURON_ENG_STATUS:
        return e->state;
    case NEURON_ENG_PROG_BASE_LO:
        return (uint32_t)e->prog_base;
    case NEURON_ENG_PROG_BASE_HI:
        return (uint32_t)(e->prog_base >> 32);
    case NEURON_ENG_PROG_COUNT:
        return e->prog_count;
    case NEURON_ENG_PC:
        return e->pc;
    case NEURON_ENG_SOFT_RESET_COUNTER:
        return e->soft_reset_counter;
    case NEURON_ENG_EXEC_COUNT:
        return e->exec_count;
    case NEURON_ENG_FEATURE_FLAGS:
        /* docs/hardware.md#generations: sunda has no NEURON_FEATURE_FLAGS register */
        return e->core->cfg.gen == NEURON_GEN_SUNDA ? 0 : e->feature_flags;
    case NEURON_ENG_LAST_ERROR:
        return e->last_error;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u engine %u: read of unknown "
                      "register +0x%" HWADDR_PRIx "\n",
                      e->core->index, e->index, off);
        return 0;
    }
}

/* Program registers are latched by START; changing them mid-run is refused. */
static bool neuron_engine_prog_writable(NeuronEngine *e, const char *name)
{
    if (!neuron_engine_active(e)) {
        return true;
    }
    neuron_engine_log(e, "%s write ignored while the engine runs", name);
    return false;
}

/* neuron_engine_write() - register write at offset @off of engine @e */
void neuron_engine_write(NeuronEngine *e, hwaddr off, uint32_t val)
{

    if (off >= NEURON_ENG_SREG(0) &&
        off < NEURON_ENG_SREG(NEURON_ENG_NUM_SREGS)) {
        e->sreg[(off - NEURON_ENG_SREG(0)) / 4] = val;
        return;
    }
    switch (off) {
    case NEURON_ENG_CTRL:
        neuron_engine_ctrl(e, val);
        break;
    case NEURON_ENG_PROG_BASE_LO:
        if (neuron_engine_prog_writable(e, "PROG_BASE_LO")) {
            e->prog_base = deposit64(e->prog_base, 0, 32, val);
        }
        break;
    case NEURON_ENG_PROG_BASE_HI:
        if (neuron_engine_prog_writable(e, "PROG_BASE_HI")) {
            e->prog_base = deposit64(e->prog_base, 32, 32, val);
        }
        break;
    case NEURON_ENG_PROG_COUNT:
        if (neuron_engine_prog_writable(e, "PROG_COUNT")) {
            e->prog_count = val;
        }
        break;
    case NEURON_ENG_FEATURE_FLAGS:
        if (e->core->cfg.gen == NEURON_GEN_SUNDA) {
            neuron_engine_log(e, "FEATURE_FLAGS write ignored: gen sunda has "
                              "no feature-flag register (docs/hardware.md#generations)");
            break;
        }
        if (val & ~NEURON_FEATURE_MASK) {
            neuron_engine_log(e, "FEATURE_FLAGS 0x%x has undefined bits "
                              "(only 0..2), dropped", val);
        }
        e->feature_flags = val & NEURON_FEATURE_MASK;
        break;
    case NEURON_ENG_STATUS:
    case NEURON_ENG_PC:
    case NEURON_ENG_SOFT_RESET_COUNTER:
    case NEURON_ENG_EXEC_COUNT:
    case NEURON_ENG_LAST_ERROR:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u engine %u: write 0x%x to read-only "
                      "register +0x%" HWADDR_PRIx " ignored\n",
                      e->core->index, e->index, val, off);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u engine %u: write 0x%x to unknown "
                      "register +0x%" HWADDR_PRIx " ignored\n",
                      e->core->index, e->index, val, off);
        break;
    }
}
