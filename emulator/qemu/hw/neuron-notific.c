/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: the per-core NOTIFIC block (docs/hardware.md#notific,
 * docs/device-model.md "NOTIFIC block").
 *
 * Ten software notification queues (NQs). Each is a ring of 16-byte records
 * in host memory (written by DMA) or in device memory (BAR4, with
 * CTRL.DEVICE_MEM). HEAD and TAIL are free-running record counts; the record
 * for count n goes to slot n % entries with phase ((n / entries) & 1) ^ 1,
 * i.e. 1 on the first pass and flipped on every wrap. The record is written
 * first (its header word last) and TAIL moves after it, so a consumer that
 * sees TAIL (or the phase) move sees the whole record. Software owns HEAD:
 * the device never writes it, not even when ignore-full overwrites.
 *
 * Interrupt causes are tpb_notific_intr_0..8 (regs.h enum
 * neuron_notific_intr). INTR_STATUS is W1C; the core's MSI-X vector fires on
 * each 0 -> nonzero edge of INTR_STATUS & INTR_MASK.
 *
 * A queue's threshold interrupt (its THRESHOLD_STATUS bit and intr_0) is
 * coalesced (docs/device-model.md#coalescing): it is raised when THRESHOLD
 * records are unread (the count limit) or COALESCE_NS after the first
 * unread record (the time limit, one QEMU_CLOCK_VIRTUAL timer per queue),
 * whichever comes first; once, until the next accepted HEAD write.
 *
 * Called by neuron-tpb.c (registers, reset) and the engines (records). It
 * calls nothing above it: the vector edge, device faults and "engines may
 * retry" go up as NEURON_UP_IRQ, NEURON_UP_FAULT and NEURON_UP_QUEUE_ROOM
 * (neuron-tpb.h, "Call direction").
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/host-utils.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "neuron-tpb.h"
#include "uapi/linux/neuron.h"      /* NEURON_NQ_COALESCE_NS_MAX */

#define NEURON_NQ_DESC_STRIDE   (NEURON_NQ_DESC(1) - NEURON_NQ_DESC(0))
#define NEURON_NQ_MAX_BYTES     (1u << 31)
#define NEURON_TRACE_MASK       ((1u << NEURON_ENGINES_PER_CORE) - 1)

/**
 * neuron_timestamp_ps() - the NOTIFIC timestamp, in picoseconds
 *
 * docs/hardware.md#timestamp: a 64-bit free-running counter in 1 ps units,
 * snapshotted into byte 8 of every record. QEMU_CLOCK_VIRTUAL ns * 1000
 * (TIMESTAMP_INC reads 1000): monotonic, and stops with the VM.
 */
uint64_t neuron_timestamp_ps(void)
{
    return (uint64_t)qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) *
           NEURON_TIMESTAMP_INC_PS;
}

static bool neuron_nq_size_ok(uint32_t size)
{
    return is_power_of_2(size) && size >= NEURON_NQ_MIN_BYTES &&
           size <= NEURON_NQ_MAX_BYTES;
}

/* Records the ring holds; only meaningful once SIZE passed neuron_nq_size_ok */
static uint32_t neuron_nq_entries(const NeuronQueue *q)
{
    return q->size / NEURON_ISA_NOTIFICATION_NBYTES;
}

/* Phase bit of the record with free-running count @count: 1 on pass 0. */
static bool neuron_nq_phase(const NeuronQueue *q, uint32_t count)
{
    if (!neuron_nq_size_ok(q->size)) {
        return true;
    }
    return !((count >> ctz32(neuron_nq_entries(q))) & 1);
}

static bool neuron_nq_enabled(const NeuronCore *c, unsigned int qi)
{
    return c->queue_enable & BIT(qi);
}

/**
 * neuron_notific_raise() - set tpb_notific_intr_@cause
 *
 * Fires the core's vector if this makes INTR_STATUS & INTR_MASK nonzero.
 */
void neuron_notific_raise(NeuronCore *c, unsigned int cause)
{
    bool was_pending = c->intr_status & c->intr_mask;

    c->intr_status |= BIT(cause);
    if (!was_pending && (c->intr_status & c->intr_mask)) {
        neuron_core_up(c, NEURON_UP_IRQ, 0);
    }
}

/*
 * Interrupt coalescing (docs/device-model.md#coalescing). The queue's
 * threshold interrupt is "armed" while threshold_fired is false; firing
 * disarms it and stops the time limit; an accepted HEAD write re-arms it.
 */
static void neuron_nq_fire(NeuronCore *c, unsigned int qi)
{
    timer_del(c->coalesce[qi].timer);
    c->queue[qi].threshold_fired = true;
    c->threshold_status |= BIT(qi);
    neuron_notific_raise(c, NEURON_NOTIFIC_INTR_THRESHOLD);
}

/* Start the time limit, COALESCE_NS from now, unless it is off or running. */
static void neuron_nq_coalesce_start(NeuronCore *c, unsigned int qi)
{
    QEMUTimer *t = c->coalesce[qi].timer;
    uint32_t ns = c->queue[qi].coalesce_ns;

    if (ns && !timer_pending(t)) {
        timer_mod(t, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns);
    }
}

/*
 * A record was written, or THRESHOLD or COALESCE_NS changed: if the queue's
 * interrupt is armed and records are unread, fire when the count limit is
 * reached, else let the time limit run.
 */
static void neuron_nq_coalesce_check(NeuronCore *c, unsigned int qi)
{
    NeuronQueue *q = &c->queue[qi];
    uint32_t unread = q->tail - q->head;

    if (!neuron_nq_enabled(c, qi) || q->threshold_fired || !unread) {
        return;
    }
    if (q->threshold && unread >= q->threshold) {
        neuron_nq_fire(c, qi);
        return;
    }
    neuron_nq_coalesce_start(c, qi);
}

/* The time limit expired: fire if still armed and something is unread. */
static void neuron_nq_coalesce_expired(void *opaque)
{
    NeuronCoalesceTimer *ct = opaque;
    NeuronCore *c = ct->core;
    NeuronQueue *q = &c->queue[ct->qi];

    if (neuron_nq_enabled(c, ct->qi) && !q->threshold_fired &&
        q->tail != q->head) {
        neuron_nq_fire(c, ct->qi);
    }
}

/* Stop queue @qi's time limit (reset, disable). */
static void neuron_nq_coalesce_stop(NeuronCore *c, unsigned int qi)
{
    if (c->coalesce[qi].timer) {
        timer_del(c->coalesce[qi].timer);
    }
}

/*
 * fault-intr-storm (fault injection): the chosen cause of the chosen core is
 * stuck asserted. It is set at reset and set again at once whenever the host
 * clears it, so every W1C of INTR_STATUS is followed by a new edge while the
 * cause is masked in: a screaming interrupt the driver has to rate limit.
 */
static void neuron_notific_storm(NeuronCore *c)
{
    int cause = c->cfg.intr_storm;

    if (cause < 0) {
        return;
    }
    if (!(c->intr_status & BIT(cause))) {
        neuron_notific_raise(c, cause);
    }
}

/*
 * The NOTIFIC input buffer (docs/device-model.md#wrbuf,
 * docs/hardware.md#wr-buffer): a FIFO of up to cfg.wrbuf_depth records
 * between the producers and the ring writer. The writer takes
 * WRBUF_DRAIN_NS of virtual time per record; with 0 it keeps up, and a
 * record handed to an empty buffer is written at once (as before the
 * buffer existed). When the buffer is full a record of queue q stalls its
 * producer (wr_buffer_full_q, intr_8) or, with WRBUF_DROP bit q, is dropped
 * (wr_buffer_drop_q, intr_3) and the next record of q that enters the
 * buffer carries hardware_queue_overflow. The writer itself stalls, the
 * record kept at the head of the FIFO, when its ring is full under
 * backpressure, until a HEAD write or a policy change.
 */
static void neuron_wrbuf_reset(NeuronCore *c)
{
    if (c->wrbuf_timer) {
        timer_del(c->wrbuf_timer);
    }
    c->wrbuf_first = 0;
    c->wrbuf_level = 0;
    c->wrbuf_drain_ns = c->cfg.wrbuf_drain_ns;
    c->wrbuf_drop = 0;
    c->wrbuf_full_status = 0;
    c->wrbuf_drop_status = 0;
    c->wrbuf_stalled = 0;
    memset(c->wrbuf_full_count, 0, sizeof(c->wrbuf_full_count));
    memset(c->wrbuf_drop_count, 0, sizeof(c->wrbuf_drop_count));
    c->ovf_owed_hw = 0;
    c->ovf_owed_sw = 0;
    c->wrbuf_next_ns = 0;
}

/* Run the ring writer soon (from the main loop), if it has work. */
static void neuron_wrbuf_kick(NeuronCore *c)
{
    if (c->wrbuf_level) {
        timer_mod_anticipate(c->wrbuf_timer,
                             qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
}

/*
 * Queue @qi was disabled: its buffered records are nobody's now (a later
 * user of the queue must not get them). They are dropped and counted in
 * DROP_COUNT, with no interrupt.
 */
static void neuron_wrbuf_purge(NeuronCore *c, unsigned int qi)
{
    unsigned int i, kept = 0;
    NeuronWrbufEntry *src, *dst;

    for (i = 0; i < c->wrbuf_level; i++) {
        src = &c->wrbuf[(c->wrbuf_first + i) % NEURON_WRBUF_DEPTH_MAX];
        if (src->qi == qi) {
            c->queue[qi].drop_count++;
            continue;
        }
        dst = &c->wrbuf[(c->wrbuf_first + kept) % NEURON_WRBUF_DEPTH_MAX];
        if (dst != src) {
            *dst = *src;
        }
        kept++;
    }
    c->wrbuf_level = kept;
    c->ovf_owed_hw &= ~BIT(qi);
    c->ovf_owed_sw &= ~BIT(qi);
}

/* Power-on state of the block: all queues off, default policy and routing. */
void neuron_notific_reset(NeuronCore *c)
{
    unsigned int qi;

    c->ts_hi_latch = 0;
    c->intr_status = 0;
    c->intr_mask = 0;
    c->queue_enable = 0;
    c->sw_backpressure = NEURON_SW_QUEUE_MASK;
    c->ignore_full = 0;
    c->route = NEURON_ROUTE_DEFAULT;
    c->trace_enable = 0;
    c->threshold_status = 0;
    memset(c->queue, 0, sizeof(c->queue));
    for (qi = 0; qi < NEURON_NUM_SW_QUEUES; qi++) {
        neuron_nq_coalesce_stop(c, qi);
    }
    neuron_wrbuf_reset(c);
    neuron_notific_storm(c);
}

/*
 * Disables every queue (global RESET). Engines were reset first, so nobody
 * is stalled on a queue any more.
 */
void neuron_notific_disable_all(NeuronCore *c)
{
    unsigned int qi;

    c->queue_enable = 0;
    for (qi = 0; qi < NEURON_NUM_SW_QUEUES; qi++) {
        c->queue[qi].stalled = false;
        neuron_nq_coalesce_stop(c, qi);
        neuron_wrbuf_purge(c, qi);
    }
    c->wrbuf_stalled = 0;
}

/*
 * An engine stalled on queue @q was reset and no other engine waits there:
 * STATUS.STALLED clears.
 */
void neuron_notific_unstall(NeuronCore *c, unsigned int q)
{
    if (q < NEURON_NUM_SW_QUEUES) {
        c->queue[q].stalled = false;
    }
}

/* Whether any queue is enabled (the core is not quiesced, DEV_STATUS). */
bool neuron_notific_busy(NeuronCore *c)
{
    return c->queue_enable != 0 || c->wrbuf_level != 0;
}

/* Whether TRACE_ENABLE brackets engine @engine's instructions. */
bool neuron_notific_traced(NeuronCore *c, unsigned int engine)
{
    return c->trace_enable & BIT(engine);
}

/*
 * Stores @rec in slot @slot of queue @qi, header last: bytes 4..15 first,
 * then (after a write barrier) the 32-bit word holding the header byte, for
 * host rings (two DMA writes) and device-memory rings alike, so a consumer
 * polling the phase bit never sees a torn record
 * (docs/hardware.md#nq-write). The negative control
 * fault-torn-header-first writes a host ring's header word first, and
 * fault-torn-gap-us holds the record torn that long: the main loop sleeps
 * with the BQL held, so a vCPU busy-polling guest memory runs on and sees
 * the record torn, while one that writes a register (a HEAD doorbell)
 * waits; a consumer spinning on an empty ring is the one that sees it.
 * Returns false if the write failed (bad address or injected DMA error).
 */
static bool neuron_nq_store(NeuronCore *c, unsigned int qi, uint32_t slot,
                            const union neuron_isa_notification *rec)
{
    NeuronQueue *q = &c->queue[qi];
    uint64_t addr = q->base + (uint64_t)slot * NEURON_ISA_NOTIFICATION_NBYTES;
    const unsigned int w0 = sizeof(uint32_t);
    const unsigned int body = NEURON_ISA_NOTIFICATION_NBYTES - w0;
    uint32_t word0;
    uint8_t *p;

    if (c->cfg.dma_error_queue == (int)qi) {
        return false;
    }
    if (!(q->ctrl & NEURON_NQ_CTRL_DEVICE_MEM)) {
        if (c->cfg.torn_header_first) {
            if (pci_dma_write(c->pdev, addr, rec->bytes, w0) != MEMTX_OK) {
                return false;
            }
            smp_wmb();
            if (c->cfg.torn_gap_us) {
                g_usleep(c->cfg.torn_gap_us);
            }
            return pci_dma_write(c->pdev, addr + w0, rec->bytes + w0,
                                 body) == MEMTX_OK;
        }
        if (pci_dma_write(c->pdev, addr + w0, rec->bytes + w0,
                          body) != MEMTX_OK) {
            return false;
        }
        smp_wmb();  /* the body is visible before the phase bit flips */
        return pci_dma_write(c->pdev, addr, rec->bytes, w0) == MEMTX_OK;
    }

    /*
     * Range and 16-byte alignment were checked when the queue was enabled;
     * the accessor checks the range again, so no later register write can
     * aim a store outside device memory.
     */
    p = neuron_mem_at(c->mem, addr, NEURON_ISA_NOTIFICATION_NBYTES);
    if (!p) {
        return false;
    }
    memcpy(&word0, rec->bytes, sizeof(word0));
    memcpy(p + w0, rec->bytes + w0, body);
    smp_wmb();      /* the body is visible before the phase bit flips */
    qatomic_set((uint32_t *)p, word0);
    memory_region_set_dirty(c->mem->mr, addr, NEURON_ISA_NOTIFICATION_NBYTES);
    return true;
}

/*
 * A record of queue @qi was lost by the ring writer itself (a failed ring
 * write): the queue's next record carries hardware_queue_overflow, so the
 * consumer sees where the gap is (docs/decisions/0026-wrbuf.md). That is the
 * first record of @qi behind the writer's in the input buffer (@buffered:
 * the lost one was the buffer's head), else the next to arrive.
 */
static void neuron_nq_owe_hw_ovf(NeuronCore *c, unsigned int qi, bool buffered)
{
    unsigned int i;

    for (i = buffered ? 1 : 0; i < c->wrbuf_level; i++) {
        NeuronWrbufEntry *e = &c->wrbuf[(c->wrbuf_first + i) %
                                        NEURON_WRBUF_DEPTH_MAX];

        if (e->qi == qi) {
            e->rec.bytes[NEURON_ISA_HEADER_OFFSET] |= NEURON_ISA_HEADER_HW_OVF;
            return;
        }
    }
    c->ovf_owed_hw |= BIT(qi);
}

/*
 * The ring writer: writes @rec into queue @qi (docs/device-model.md, "NOTIFIC
 * block"), @ovf (NEURON_ISA_HEADER_HW_OVF or 0) OR'd into its header;
 * @buffered: @rec is the input buffer's head.
 * Policy when the ring is full: IGNORE_FULL writes at TAIL over the oldest
 * unread record, marked software_queue_overflow, and leaves HEAD alone
 * (software owns it, docs/hardware.md#head-doorbell); it wins over
 * backpressure. SW_BACKPRESSURE stalls the writer (@stall_queue = @qi);
 * with neither the record is dropped as a software queue overflow (intr_2,
 * docs/decisions/0026-wrbuf.md) and the next record written to the queue
 * carries software_queue_overflow. A disabled queue drops the record (intr_1,
 * docs/hardware.md#nq-backpressure) and marks nothing: the queue has no
 * reader, and its next user must not inherit the mark. A failed ring write
 * drops it too (intr_4, device DMA fault), and the queue's next record
 * carries hardware_queue_overflow. So every record the writer loses of an
 * enabled queue leaves a mark on a later one, a mark @rec carried
 * included (a full ring's drop marks the next record written).
 */
static NeuronPushResult neuron_nq_write(NeuronCore *c, unsigned int qi,
                                        union neuron_isa_notification *rec,
                                        uint8_t ovf, bool buffered,
                                        int *stall_queue)
{
    NeuronQueue *q = &c->queue[qi];
    uint32_t entries;
    bool overwrite = false;
    uint8_t hdr;

    *stall_queue = -1;
    if (!neuron_nq_enabled(c, qi)) {
        q->drop_count++;
        neuron_notific_raise(c, NEURON_NOTIFIC_INTR_DISABLED_QUEUE);
        return NEURON_PUSH_DROPPED;
    }

    entries = neuron_nq_entries(q);
    if (q->tail - q->head >= entries) {
        if (c->ignore_full & BIT(qi)) {
            overwrite = true;
        } else if (c->sw_backpressure & BIT(qi)) {
            if (!q->stalled) {
                q->stalled = true;
                neuron_notific_raise(c, NEURON_NOTIFIC_INTR_BACKPRESSURE);
            }
            *stall_queue = qi;
            return NEURON_PUSH_STALLED;
        } else {
            q->drop_count++;
            c->ovf_owed_sw |= BIT(qi);
            neuron_notific_raise(c, NEURON_NOTIFIC_INTR_SW_OVERFLOW);
            return NEURON_PUSH_DROPPED;
        }
    }

    hdr = rec->bytes[NEURON_ISA_HEADER_OFFSET] & NEURON_ISA_HEADER_TYPE_MASK;
    hdr |= ovf & NEURON_ISA_HEADER_HW_OVF;
    if (overwrite || (c->ovf_owed_sw & BIT(qi))) {
        hdr |= NEURON_ISA_HEADER_SW_OVF;
    }
    if (neuron_nq_phase(q, q->tail)) {
        hdr |= NEURON_ISA_HEADER_PHASE;
    }
    rec->bytes[NEURON_ISA_HEADER_OFFSET] = hdr;
    stq_le_p(&rec->bytes[NEURON_ISA_TIMESTAMP_OFFSET], neuron_timestamp_ps());

    if (!neuron_nq_store(c, qi, q->tail & (entries - 1), rec)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: ring write at BASE 0x%"
                      PRIx64 " slot %u failed (%s): record dropped\n",
                      c->index, qi, q->base, q->tail & (entries - 1),
                      (q->ctrl & NEURON_NQ_CTRL_DEVICE_MEM) ? "device memory"
                                                            : "host DMA");
        q->drop_count++;
        q->dma_error = true;
        neuron_nq_owe_hw_ovf(c, qi, buffered);
        neuron_notific_raise(c, NEURON_NOTIFIC_INTR_AXI_WRITE_ERROR);
        neuron_core_up(c, NEURON_UP_FAULT, (int)c->cfg.dma_error_bits);
        return NEURON_PUSH_DROPPED;
    }
    q->dma_error = false;
    q->tail++;
    c->ovf_owed_sw &= ~BIT(qi);

    if (overwrite) {
        /*
         * Record TAIL - 1 - entries is gone. HEAD stays where software put
         * it: unread (TAIL - HEAD) now exceeds entries, and the consumer's
         * next HEAD write anywhere in [HEAD, TAIL] is accepted.
         */
        q->overflow_count++;
        neuron_notific_raise(c, NEURON_NOTIFIC_INTR_SW_OVERFLOW);
    }
    neuron_nq_coalesce_check(c, qi);   /* count limit, or start the time */
    return NEURON_PUSH_WRITTEN;
}

/*
 * The ring writer's timer: writes the buffered records, oldest first, one
 * per WRBUF_DRAIN_NS of virtual time (a late timer catches up, so the rate
 * holds on average). It stops at a record whose ring is full under
 * backpressure, keeping it at the head (the FIFO keeps its order), until a
 * HEAD write or a policy change kicks it. Freeing a slot wakes the
 * producers that stalled on the full buffer.
 */
static void neuron_wrbuf_run(void *opaque)
{
    NeuronCore *c = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    bool freed = false;
    int sq;

    while (c->wrbuf_level) {
        NeuronWrbufEntry *e = &c->wrbuf[c->wrbuf_first];
        int64_t at = MAX(c->wrbuf_next_ns, e->arrival);
        uint8_t ovf = e->rec.bytes[NEURON_ISA_HEADER_OFFSET] &
                      NEURON_ISA_HEADER_HW_OVF;

        if (at > now) {
            timer_mod(c->wrbuf_timer, at);
            break;
        }
        if (neuron_nq_write(c, e->qi, &e->rec, ovf, true, &sq) ==
            NEURON_PUSH_STALLED) {
            break;
        }
        c->wrbuf_next_ns = at + c->wrbuf_drain_ns;
        c->wrbuf_first = (c->wrbuf_first + 1) % NEURON_WRBUF_DEPTH_MAX;
        c->wrbuf_level--;
        freed = true;
    }
    if (freed && c->wrbuf_stalled) {
        c->wrbuf_stalled = 0;
        neuron_core_up(c, NEURON_UP_QUEUE_ROOM, NEURON_WRBUF_STALL);
    }
}

void neuron_notific_init(NeuronCore *c)
{
    unsigned int qi;

    c->wrbuf_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, neuron_wrbuf_run, c);
    for (qi = 0; qi < NEURON_NUM_SW_QUEUES; qi++) {
        c->coalesce[qi].core = c;
        c->coalesce[qi].qi = qi;
        c->coalesce[qi].timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                             neuron_nq_coalesce_expired,
                                             &c->coalesce[qi]);
    }
}

void neuron_notific_finalize(NeuronCore *c)
{
    unsigned int qi;

    timer_free(c->wrbuf_timer);
    c->wrbuf_timer = NULL;
    for (qi = 0; qi < NEURON_NUM_SW_QUEUES; qi++) {
        timer_free(c->coalesce[qi].timer);
        c->coalesce[qi].timer = NULL;
    }
}

/**
 * neuron_notific_push() - hand a record of class @cls to the NOTIFIC block
 * @c:           the core whose NOTIFIC block takes the record
 * @cls:         enum neuron_notific_class; ROUTE picks the queue
 * @rec:         the record; header byte 3 holds notific_type, the ring
 *               writer fills in phase, the overflow bits and the timestamp
 *               (byte 8)
 * @stall_queue: set on NEURON_PUSH_STALLED to the queue to wait on (the
 *               ring's, or NEURON_WRBUF_STALL for the input buffer), else -1
 *
 * The record enters the input buffer (neuron_wrbuf_reset() above says what
 * happens when it is full); with WRBUF_DRAIN_NS 0 and the buffer empty it
 * goes straight to the ring writer (neuron_nq_write()), whose results it
 * returns. NEURON_PUSH_WRITTEN also means "buffered": it will be written.
 */
NeuronPushResult neuron_notific_push(NeuronCore *c, unsigned int cls,
                                     union neuron_isa_notification *rec,
                                     int *stall_queue)
{
    unsigned int qi = NEURON_ROUTE_QUEUE(c->route, cls);
    NeuronWrbufEntry *e;
    int64_t now;

    *stall_queue = -1;
    if (qi >= NEURON_NUM_SW_QUEUES) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: ROUTE sends class %u to queue %u "
                      "(only %u queues): record dropped\n",
                      c->index, cls, qi, NEURON_NUM_SW_QUEUES);
        neuron_notific_raise(c, NEURON_NOTIFIC_INTR_DISABLED_QUEUE);
        return NEURON_PUSH_DROPPED;
    }
    if (!c->wrbuf_drain_ns && !c->wrbuf_level) {
        uint8_t ovf = (c->ovf_owed_hw & BIT(qi)) ? NEURON_ISA_HEADER_HW_OVF
                                                 : 0;
        NeuronPushResult r = neuron_nq_write(c, qi, rec, ovf, false,
                                             stall_queue);

        if (r == NEURON_PUSH_WRITTEN) {
            c->ovf_owed_hw &= ~BIT(qi);
        }
        return r;
    }

    if (c->wrbuf_level >= c->cfg.wrbuf_depth) {
        if (c->wrbuf_drop & BIT(qi)) {
            c->queue[qi].drop_count++;
            c->wrbuf_drop_count[qi]++;
            c->ovf_owed_hw |= BIT(qi);
            c->wrbuf_drop_status |= BIT(qi);
            neuron_notific_raise(c, NEURON_NOTIFIC_INTR_HW_OVERFLOW);
            return NEURON_PUSH_DROPPED;
        }
        if (!(c->wrbuf_stalled & BIT(qi))) {
            c->wrbuf_stalled |= BIT(qi);
            c->wrbuf_full_count[qi]++;
        }
        c->wrbuf_full_status |= BIT(qi);
        neuron_notific_raise(c, NEURON_NOTIFIC_INTR_WRBUF_FULL);
        *stall_queue = NEURON_WRBUF_STALL;
        neuron_wrbuf_kick(c);
        return NEURON_PUSH_STALLED;
    }

    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    e = &c->wrbuf[(c->wrbuf_first + c->wrbuf_level) % NEURON_WRBUF_DEPTH_MAX];
    e->rec = *rec;
    e->rec.bytes[NEURON_ISA_HEADER_OFFSET] &= NEURON_ISA_HEADER_TYPE_MASK;
    if (c->ovf_owed_hw & BIT(qi)) {
        e->rec.bytes[NEURON_ISA_HEADER_OFFSET] |= NEURON_ISA_HEADER_HW_OVF;
        c->ovf_owed_hw &= ~BIT(qi);
    }
    e->qi = qi;
    e->arrival = now;
    c->wrbuf_level++;
    if (c->wrbuf_level == 1 && c->wrbuf_next_ns <= now) {
        neuron_wrbuf_run(c);    /* an idle writer takes it at once */
    } else if (c->wrbuf_level == 1) {
        timer_mod(c->wrbuf_timer, c->wrbuf_next_ns);
    }
    return NEURON_PUSH_WRITTEN;
}

/* Whether queue @qi may be enabled with its current descriptor. */
static bool neuron_nq_config_ok(NeuronCore *c, unsigned int qi)
{
    NeuronQueue *q = &c->queue[qi];

    if (!neuron_nq_size_ok(q->size)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: SIZE %u is not a power "
                      "of two in [%u, 0x%x]: not enabled\n", c->index, qi,
                      q->size, NEURON_NQ_MIN_BYTES, NEURON_NQ_MAX_BYTES);
        return false;
    }
    if (q->base % NEURON_ISA_NOTIFICATION_NBYTES) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: BASE 0x%" PRIx64
                      " is not 16-byte aligned: not enabled\n",
                      c->index, qi, q->base);
        return false;
    }
    if ((q->ctrl & NEURON_NQ_CTRL_DEVICE_MEM) &&
        !neuron_mem_range_ok(c->mem, q->base, q->size)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: device-memory ring "
                      "BASE 0x%" PRIx64 " + SIZE 0x%x exceeds mem-size 0x%"
                      PRIx64 ": not enabled\n", c->index, qi, q->base,
                      q->size, c->mem->size);
        return false;
    }
    return true;
}

/*
 * QUEUE_ENABLE: a newly enabled queue starts empty (HEAD = TAIL = 0, phase
 * 1); a disabled one stops taking records at once, and engines stalled on it
 * are woken so their record is dropped instead of waiting forever.
 * fault-stuck-disable (fault injection): the chosen queue ignores a write
 * clearing its bit; it reads back as enabled and keeps writing its ring
 * until the RESET register or a function reset stops it.
 */
static void neuron_notific_set_enable(NeuronCore *c, uint32_t val)
{
    uint32_t on, off;
    unsigned int qi;

    if (val & ~NEURON_SW_QUEUE_MASK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: QUEUE_ENABLE 0x%x names queues "
                      "beyond %u\n", c->index, val, NEURON_NUM_SW_QUEUES - 1);
        val &= NEURON_SW_QUEUE_MASK;
    }
    if (c->cfg.stuck_disable_queue >= 0) {
        val |= c->queue_enable & BIT(c->cfg.stuck_disable_queue);
    }
    on = val & ~c->queue_enable;
    off = c->queue_enable & ~val;

    for (qi = 0; qi < NEURON_NUM_SW_QUEUES; qi++) {
        NeuronQueue *q = &c->queue[qi];

        if (on & BIT(qi)) {
            if (!neuron_nq_config_ok(c, qi)) {
                val &= ~BIT(qi);
                continue;
            }
            q->head = 0;
            q->tail = 0;
            q->stalled = false;
            q->dma_error = false;
            q->threshold_fired = false;
            c->threshold_status &= ~BIT(qi);
        }
        if (off & BIT(qi)) {
            q->stalled = false;
            neuron_nq_coalesce_stop(c, qi);
            neuron_wrbuf_purge(c, qi);
        }
    }
    c->queue_enable = val;
    if (off) {
        neuron_wrbuf_kick(c);   /* it may have waited on one of them */
    }

    for (qi = 0; qi < NEURON_NUM_SW_QUEUES; qi++) {
        if (off & BIT(qi)) {
            neuron_core_up(c, NEURON_UP_QUEUE_ROOM, qi);
        }
    }
}

/*
 * A HEAD write (descriptor or doorbell page). Software owns HEAD; the device
 * only checks it: accepted iff it neither moves back nor passes TAIL,
 * new - old <= TAIL - old (u32 arithmetic), i.e. new in [HEAD, TAIL]. While
 * nothing was overwritten (TAIL - HEAD <= entries) that is the same as
 * "TAIL - new <= entries && new - old <= entries"; after an ignore-full lap
 * it lets the consumer skip the overwritten records in one write.
 *
 * An accepted write re-arms the threshold interrupt and restarts its time
 * limit: records left unread are delivered within COALESCE_NS even if no
 * new record comes. It never fires on the count here: a consumer that
 * drains until empty would get a wake-up for records it is about to read
 * (docs/device-model.md#coalescing).
 */
static void neuron_nq_write_head(NeuronCore *c, unsigned int qi, uint32_t val)
{
    NeuronQueue *q = &c->queue[qi];
    uint32_t entries;

    if (!neuron_nq_enabled(c, qi)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: HEAD write 0x%x to a "
                      "disabled queue ignored\n", c->index, qi, val);
        return;
    }
    entries = neuron_nq_entries(q);
    if (val - q->head > q->tail - q->head) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: HEAD write 0x%x rejected "
                      "(HEAD 0x%x TAIL 0x%x, %u entries)\n", c->index, qi,
                      val, q->head, q->tail, entries);
        neuron_notific_raise(c, NEURON_NOTIFIC_INTR_BAD_HEAD);
        return;
    }
    q->head = val;
    q->threshold_fired = false;
    timer_del(c->coalesce[qi].timer);
    if (q->tail != q->head) {
        neuron_nq_coalesce_start(c, qi);
    }
    if (q->tail - q->head < entries) {
        q->stalled = false;
        neuron_wrbuf_kick(c);
        neuron_core_up(c, NEURON_UP_QUEUE_ROOM, qi);
    }
}

static uint32_t neuron_nq_status(NeuronCore *c, unsigned int qi)
{
    NeuronQueue *q = &c->queue[qi];
    uint32_t st = 0;

    if (neuron_nq_phase(q, q->tail)) {
        st |= NEURON_NQ_STATUS_PHASE;
    }
    if (neuron_nq_enabled(c, qi) && q->tail - q->head >= neuron_nq_entries(q)) {
        st |= NEURON_NQ_STATUS_FULL;
    }
    if (q->stalled) {
        st |= NEURON_NQ_STATUS_STALLED;
    }
    if (q->dma_error) {
        st |= NEURON_NQ_STATUS_DMA_ERROR;
    }
    return st;
}

static uint32_t neuron_nq_desc_read(NeuronCore *c, unsigned int qi, hwaddr reg)
{
    NeuronQueue *q = &c->queue[qi];

    switch (reg) {
    case NEURON_NQ_BASE_LO:
        return (uint32_t)q->base;
    case NEURON_NQ_BASE_HI:
        return (uint32_t)(q->base >> 32);
    case NEURON_NQ_SIZE:
        return q->size;
    case NEURON_NQ_HEAD:
        return q->head;
    case NEURON_NQ_TAIL:
        return q->tail;
    case NEURON_NQ_THRESHOLD:
        return q->threshold;
    case NEURON_NQ_STATUS:
        return neuron_nq_status(c, qi);
    case NEURON_NQ_CTRL:
        return q->ctrl;
    case NEURON_NQ_OVERFLOW_COUNT:
        return q->overflow_count;
    case NEURON_NQ_DROP_COUNT:
        return q->drop_count;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: read of unknown "
                      "descriptor register 0x%" HWADDR_PRIx "\n",
                      c->index, qi, reg);
        return 0;
    }
}

/* BASE, SIZE and CTRL describe the ring: only while the queue is disabled. */
static bool neuron_nq_desc_writable(NeuronCore *c, unsigned int qi,
                                    const char *name, uint32_t val)
{
    if (!neuron_nq_enabled(c, qi)) {
        return true;
    }
    qemu_log_mask(LOG_GUEST_ERROR,
                  "neuron-tpb: core %u queue %u: %s write 0x%x while the "
                  "queue is enabled ignored\n", c->index, qi, name, val);
    return false;
}

static void neuron_nq_desc_write(NeuronCore *c, unsigned int qi, hwaddr reg,
                                 uint32_t val)
{
    NeuronQueue *q = &c->queue[qi];

    switch (reg) {
    case NEURON_NQ_BASE_LO:
        if (neuron_nq_desc_writable(c, qi, "BASE_LO", val)) {
            q->base = deposit64(q->base, 0, 32, val);
        }
        break;
    case NEURON_NQ_BASE_HI:
        if (neuron_nq_desc_writable(c, qi, "BASE_HI", val)) {
            q->base = deposit64(q->base, 32, 32, val);
        }
        break;
    case NEURON_NQ_SIZE:
        if (neuron_nq_desc_writable(c, qi, "SIZE", val)) {
            q->size = val;
        }
        break;
    case NEURON_NQ_CTRL:
        if (!neuron_nq_desc_writable(c, qi, "CTRL", val)) {
            break;
        }
        if (val & ~NEURON_NQ_CTRL_DEVICE_MEM) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u queue %u: CTRL 0x%x has "
                          "undefined bits\n", c->index, qi, val);
        }
        q->ctrl = val & NEURON_NQ_CTRL_DEVICE_MEM;
        break;
    case NEURON_NQ_HEAD:
        neuron_nq_write_head(c, qi, val);
        break;
    case NEURON_NQ_THRESHOLD:
        /*
         * Allowed at any time; on a live queue the records already unread
         * count toward the new limit at once (docs/device-model.md#coalescing).
         */
        q->threshold = val;
        neuron_nq_coalesce_check(c, qi);
        break;
    case NEURON_NQ_TAIL:
    case NEURON_NQ_STATUS:
    case NEURON_NQ_OVERFLOW_COUNT:
    case NEURON_NQ_DROP_COUNT:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: write 0x%x to read-only "
                      "descriptor register 0x%" HWADDR_PRIx " ignored\n",
                      c->index, qi, val, reg);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: write 0x%x to unknown "
                      "descriptor register 0x%" HWADDR_PRIx " ignored\n",
                      c->index, qi, val, reg);
        break;
    }
}

/*
 * COALESCE_NS(q), the queue's time limit (docs/device-model.md#coalescing):
 * above NEURON_NQ_COALESCE_NS_MAX it is clamped. On a live queue the new
 * value applies at once: 0 stops a running time limit; a running one that
 * the new value would end sooner is brought forward (never postponed); and
 * records already unread start it if it was not running.
 */
static void neuron_nq_write_coalesce(NeuronCore *c, unsigned int qi,
                                     uint32_t val)
{
    QEMUTimer *t = c->coalesce[qi].timer;

    if (val > NEURON_NQ_COALESCE_NS_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u queue %u: COALESCE_NS %u above "
                      "%u: %u used\n", c->index, qi, val,
                      NEURON_NQ_COALESCE_NS_MAX, NEURON_NQ_COALESCE_NS_MAX);
        val = NEURON_NQ_COALESCE_NS_MAX;
    }
    c->queue[qi].coalesce_ns = val;
    if (!val) {
        timer_del(t);
    } else if (timer_pending(t)) {
        timer_mod_anticipate(t, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + val);
    }
    neuron_nq_coalesce_check(c, qi);
}

/* Offset of COALESCE_NS(q) in the NOTIFIC block, or -1 for another register. */
static int neuron_nq_coalesce_reg(hwaddr off)
{
    if (off >= NEURON_NQ_COALESCE_NS(0) &&
        off < NEURON_NQ_COALESCE_NS(NEURON_NUM_SW_QUEUES) && !(off & 3)) {
        return (off - NEURON_NQ_COALESCE_NS(0)) / 4;
    }
    return -1;
}

/* neuron_notific_read() - a read at offset @off of the core's NOTIFIC block */
uint32_t neuron_notific_read(NeuronCore *c, hwaddr off)
{
    uint64_t ts;

    if (off >= NEURON_NQ_DESC(0) &&
        off < NEURON_NQ_DESC(NEURON_NUM_SW_QUEUES)) {
        off -= NEURON_NQ_DESC(0);
        return neuron_nq_desc_read(c, off / NEURON_NQ_DESC_STRIDE,
                                   off % NEURON_NQ_DESC_STRIDE);
    }

    switch (off) {
    case NEURON_NOTIFIC_TIMESTAMP_LO:
        ts = neuron_timestamp_ps();
        c->ts_hi_latch = (uint32_t)(ts >> 32);
        return (uint32_t)ts;
    case NEURON_NOTIFIC_TIMESTAMP_HI:
        return c->ts_hi_latch;
    case NEURON_NOTIFIC_TIMESTAMP_INC:
        return NEURON_TIMESTAMP_INC_PS;
    case NEURON_NOTIFIC_INTR_STATUS:
        return c->intr_status;
    case NEURON_NOTIFIC_INTR_MASK:
        return c->intr_mask;
    case NEURON_NOTIFIC_QUEUE_ENABLE:
        return c->queue_enable;
    case NEURON_NOTIFIC_SW_BACKPRESSURE:
        return c->sw_backpressure;
    case NEURON_NOTIFIC_IGNORE_FULL:
        return c->ignore_full;
    case NEURON_NOTIFIC_ROUTE:
        return c->route;
    case NEURON_NOTIFIC_TRACE_ENABLE:
        return c->trace_enable;
    case NEURON_NOTIFIC_THRESHOLD_STATUS:
        return c->threshold_status;
    case NEURON_NOTIFIC_WRBUF_DEPTH:
        return c->cfg.wrbuf_depth;
    case NEURON_NOTIFIC_WRBUF_LEVEL:
        return c->wrbuf_level;
    case NEURON_NOTIFIC_WRBUF_DRAIN_NS:
        return c->wrbuf_drain_ns;
    case NEURON_NOTIFIC_WRBUF_DROP:
        return c->wrbuf_drop;
    case NEURON_NOTIFIC_WRBUF_FULL_STATUS:
        return c->wrbuf_full_status;
    case NEURON_NOTIFIC_WRBUF_DROP_STATUS:
        return c->wrbuf_drop_status;
    default:
        if (off >= NEURON_NOTIFIC_WRBUF_FULL_COUNT(0) &&
            off < NEURON_NOTIFIC_WRBUF_FULL_COUNT(NEURON_NUM_SW_QUEUES) &&
            !(off & 3)) {
            return c->wrbuf_full_count[(off - NEURON_NOTIFIC_WRBUF_FULL_COUNT(0)) / 4];
        }
        if (off >= NEURON_NOTIFIC_WRBUF_DROP_COUNT(0) &&
            off < NEURON_NOTIFIC_WRBUF_DROP_COUNT(NEURON_NUM_SW_QUEUES) &&
            !(off & 3)) {
            return c->wrbuf_drop_count[(off - NEURON_NOTIFIC_WRBUF_DROP_COUNT(0)) / 4];
        }
        if (neuron_nq_coalesce_reg(off) >= 0) {
            return c->queue[neuron_nq_coalesce_reg(off)].coalesce_ns;
        }
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: read of unknown NOTIFIC register "
                      "0x%" HWADDR_PRIx "\n", c->index, off);
        return 0;
    }
}

static void neuron_notific_check_route(NeuronCore *c, uint32_t route)
{
    unsigned int cls;

    for (cls = 0; cls < NEURON_CLASS_COUNT; cls++) {
        if (NEURON_ROUTE_QUEUE(route, cls) >= NEURON_NUM_SW_QUEUES) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u: ROUTE 0x%08x sends class %u "
                          "to queue %u (only %u queues): its records will be "
                          "dropped\n", c->index, route, cls,
                          NEURON_ROUTE_QUEUE(route, cls),
                          NEURON_NUM_SW_QUEUES);
        }
    }
}

/* Masks a per-queue register value, logging bits beyond queue 9. */
static uint32_t neuron_notific_queue_bits(NeuronCore *c, const char *name,
                                          uint32_t val)
{
    if (val & ~NEURON_SW_QUEUE_MASK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: %s 0x%x names queues beyond %u\n",
                      c->index, name, val, NEURON_NUM_SW_QUEUES - 1);
    }
    return val & NEURON_SW_QUEUE_MASK;
}

/* neuron_notific_write() - a write at offset @off of the NOTIFIC block */
void neuron_notific_write(NeuronCore *c, hwaddr off, uint32_t val)
{
    bool was_pending;

    if (off >= NEURON_NQ_DESC(0) &&
        off < NEURON_NQ_DESC(NEURON_NUM_SW_QUEUES)) {
        off -= NEURON_NQ_DESC(0);
        neuron_nq_desc_write(c, off / NEURON_NQ_DESC_STRIDE,
                             off % NEURON_NQ_DESC_STRIDE, val);
        return;
    }

    switch (off) {
    case NEURON_NOTIFIC_TIMESTAMP_LO:
    case NEURON_NOTIFIC_TIMESTAMP_HI:
    case NEURON_NOTIFIC_TIMESTAMP_INC:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: write 0x%x to read-only NOTIFIC "
                      "timestamp register 0x%" HWADDR_PRIx " ignored\n",
                      c->index, val, off);
        break;
    case NEURON_NOTIFIC_INTR_STATUS:
        c->intr_status &= ~val;
        neuron_notific_storm(c);
        break;
    case NEURON_NOTIFIC_INTR_MASK:
        if (val & ~NEURON_NOTIFIC_INTR_MASK_ALL) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u: INTR_MASK 0x%x has bits "
                          "beyond intr_8\n", c->index, val);
        }
        was_pending = c->intr_status & c->intr_mask;
        c->intr_mask = val & NEURON_NOTIFIC_INTR_MASK_ALL;
        if (!was_pending && (c->intr_status & c->intr_mask)) {
            neuron_core_up(c, NEURON_UP_IRQ, 0);
        }
        break;
    case NEURON_NOTIFIC_QUEUE_ENABLE:
        neuron_notific_set_enable(c, val);
        break;
    case NEURON_NOTIFIC_SW_BACKPRESSURE:
        c->sw_backpressure = neuron_notific_queue_bits(c, "SW_BACKPRESSURE",
                                                       val);
        /* A stalled producer may now be allowed to drop or overwrite. */
        neuron_wrbuf_kick(c);
        neuron_core_up(c, NEURON_UP_QUEUE_ROOM, -1);
        break;
    case NEURON_NOTIFIC_IGNORE_FULL:
        c->ignore_full = neuron_notific_queue_bits(c, "IGNORE_FULL", val);
        neuron_wrbuf_kick(c);
        neuron_core_up(c, NEURON_UP_QUEUE_ROOM, -1);
        break;
    case NEURON_NOTIFIC_WRBUF_DRAIN_NS:
        if (val > NEURON_WRBUF_DRAIN_NS_MAX) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u: WRBUF_DRAIN_NS %u above %u: "
                          "%u used\n", c->index, val,
                          NEURON_WRBUF_DRAIN_NS_MAX,
                          NEURON_WRBUF_DRAIN_NS_MAX);
            val = NEURON_WRBUF_DRAIN_NS_MAX;
        }
        c->wrbuf_drain_ns = val;
        break;
    case NEURON_NOTIFIC_WRBUF_DROP:
        c->wrbuf_drop = neuron_notific_queue_bits(c, "WRBUF_DROP", val);
        /* a producer stalled on the full buffer may now drop instead */
        neuron_core_up(c, NEURON_UP_QUEUE_ROOM, NEURON_WRBUF_STALL);
        break;
    case NEURON_NOTIFIC_WRBUF_FULL_STATUS:
        c->wrbuf_full_status &= ~val;
        break;
    case NEURON_NOTIFIC_WRBUF_DROP_STATUS:
        c->wrbuf_drop_status &= ~val;
        break;
    case NEURON_NOTIFIC_ROUTE:
        neuron_notific_check_route(c, val);
        c->route = val;
        break;
    case NEURON_NOTIFIC_TRACE_ENABLE:
        if (val & ~NEURON_TRACE_MASK) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u: TRACE_ENABLE 0x%x names "
                          "engines beyond %u\n", c->index, val,
                          NEURON_ENGINES_PER_CORE - 1);
        }
        c->trace_enable = val & NEURON_TRACE_MASK;
        break;
    case NEURON_NOTIFIC_THRESHOLD_STATUS:
        c->threshold_status &= ~val;
        break;
    default:
        if (neuron_nq_coalesce_reg(off) >= 0) {
            neuron_nq_write_coalesce(c, neuron_nq_coalesce_reg(off), val);
            break;
        }
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: write 0x%x to unknown NOTIFIC "
                      "register 0x%" HWADDR_PRIx " ignored\n",
                      c->index, val, off);
        break;
    }
}

/*
 * Doorbell page of queue @q: only its HEAD, at +0, so the page can be mapped
 * into a process without exposing anything else.
 */
uint32_t neuron_doorbell_read(NeuronCore *c, unsigned int q, hwaddr off)
{
    if (off != 0) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u doorbell %u: read of +0x%"
                      HWADDR_PRIx " (only HEAD at +0)\n", c->index, q, off);
        return 0;
    }
    return c->queue[q].head;
}

void neuron_doorbell_write(NeuronCore *c, unsigned int q, hwaddr off,
                           uint32_t val)
{
    if (off != 0) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u doorbell %u: write 0x%x to +0x%"
                      HWADDR_PRIx " ignored (only HEAD at +0)\n",
                      c->index, q, val, off);
        return;
    }
    neuron_nq_write_head(c, q, val);
}
