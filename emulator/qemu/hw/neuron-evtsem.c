/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: the per-core EVT_SEM unit (docs/hardware.md#evt-sem): 256 events
 * (0/1) and 256 32-bit semaphores, with the MMIO windows EVENT +0x0, READ
 * +0x1000, SET +0x1400, INC +0x1800, DEC +0x1C00 (one 32-bit register per
 * index).
 *
 * Semaphore arithmetic is modulo 2^32 and comparisons are unsigned. Any
 * change, from the host or an engine, wakes the core's waiting engines: it
 * is reported up as NEURON_UP_SEM_CHANGED (neuron-tpb.h, "Call direction").
 *
 * AXI_EVT_SEM (docs/device-model.md#axi-evt-sem): with AXI_NOTIFY bit 0 set,
 * every host write through the EVENT, SET, INC or DEC window writes one
 * AXI_EVT_SEM record (class EVT_SEM) with the value after the update. A
 * record its backpressured queue cannot take yet is parked (one slot) and
 * written when the queue has room (neuron_evtsem_retry()); a host write
 * that finds the slot taken loses its record, counted in AXI_DROPPED.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "neuron-tpb.h"

#define NEURON_EVT_SEM_WINDOW   (NEURON_EVT_SEM_COUNT * 4)

void neuron_evtsem_reset(NeuronCore *c)
{
    memset(c->sem, 0, sizeof(c->sem));
    memset(c->event, 0, sizeof(c->event));
    c->axi_notify = 0;
    c->axi_dropped = 0;
    c->axi_has_parked = false;
}

/* Quiesce (global RESET, D3hot, vanish): a parked record goes with it. */
void neuron_evtsem_drop_parked(NeuronCore *c)
{
    c->axi_has_parked = false;
}

/* Whether an AXI_EVT_SEM record still waits (DEV_STATUS.QUIESCED). */
bool neuron_evtsem_busy(NeuronCore *c)
{
    return c->axi_has_parked;
}

/* Hand the parked record to NOTIFIC; it stays parked if still stalled. */
static void neuron_evtsem_push_parked(NeuronCore *c)
{
    int q;

    if (neuron_notific_push(c, NEURON_CLASS_EVT_SEM, &c->axi_parked, &q) !=
        NEURON_PUSH_STALLED) {
        c->axi_has_parked = false;
    }
}

/* A queue has room again (NEURON_UP_QUEUE_ROOM): retry the parked record. */
void neuron_evtsem_retry(NeuronCore *c)
{
    if (c->axi_has_parked) {
        neuron_evtsem_push_parked(c);
    }
}

/* The AXI_EVT_SEM record of a host update (@mode on @idx, @value after it). */
static void neuron_evtsem_axi_record(NeuronCore *c, unsigned int mode,
                                     unsigned int idx, uint32_t value)
{
    uint8_t *r = c->axi_parked.bytes;

    if (c->axi_has_parked) {
        c->axi_dropped++;
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: AXI_EVT_SEM record of index %u "
                      "lost: the previous one still waits for its queue "
                      "(AXI_DROPPED %u)\n", c->index, idx, c->axi_dropped);
        return;
    }
    memset(&c->axi_parked, 0, sizeof(c->axi_parked));
    neuron_rec_put_le(r, NEURON_ISA_EVT_SEM_ID_OFFSET, 1, idx);
    neuron_rec_put_field(r, NEURON_ISA_EVT_SEM_MODE_OFFSET, 1,
                         NEURON_ISA_EVT_SEM_UPDATE_MODE_MASK,
                         NEURON_ISA_EVT_SEM_UPDATE_MODE_SHIFT, mode);
    neuron_rec_put_field(r, NEURON_ISA_EVT_SEM_MODE_OFFSET, 1,
                         NEURON_ISA_EVT_SEM_IS_EVENT_MASK,
                         NEURON_ISA_EVT_SEM_IS_EVENT_SHIFT,
                         neuron_evtsem_is_event_mode(mode));
    neuron_rec_put_le(r, NEURON_ISA_EVT_SEM_BLOCK_ID_OFFSET, 1,
                      NEURON_EVT_SEM_BLOCK_ID_AXI);
    neuron_rec_put_le(r, NEURON_ISA_EVT_SEM_VALUE_OFFSET, 4, value);
    r[NEURON_ISA_HEADER_OFFSET] = NEURON_ISA_NOTIFICATION_TYPE_AXI_EVT_SEM;
    c->axi_has_parked = true;
    neuron_evtsem_push_parked(c);
}

/* Whether an EVT_SEM update_mode acts on an event rather than a semaphore. */
bool neuron_evtsem_is_event_mode(unsigned int mode)
{
    return mode == NEURON_EVT_SEM_UPDATE_EVENT_SET ||
           mode == NEURON_EVT_SEM_UPDATE_EVENT_CLEAR;
}

/**
 * neuron_evtsem_apply() - perform an EVT_SEM update on core @c
 * @mode:  enum neuron_evt_sem_update_mode, not NONE
 * @idx:   event or semaphore index, < NEURON_EVT_SEM_COUNT
 * @value: operand for the semaphore modes
 *
 * Returns the event's or semaphore's value after the update (the
 * event_semaphore_value of the EVT_SEM record).
 */
uint32_t neuron_evtsem_apply(NeuronCore *c, unsigned int mode,
                             unsigned int idx, uint32_t value)
{
    uint32_t ret;

    switch (mode) {
    case NEURON_EVT_SEM_UPDATE_SEM_SET:
        ret = c->sem[idx] = value;
        break;
    case NEURON_EVT_SEM_UPDATE_SEM_INC:
        ret = c->sem[idx] += value;
        break;
    case NEURON_EVT_SEM_UPDATE_SEM_DEC:
        ret = c->sem[idx] -= value;
        break;
    case NEURON_EVT_SEM_UPDATE_EVENT_SET:
        ret = c->event[idx] = 1;
        break;
    case NEURON_EVT_SEM_UPDATE_EVENT_CLEAR:
        ret = c->event[idx] = 0;
        break;
    default:
        g_assert_not_reached();
    }
    neuron_core_up(c, NEURON_UP_SEM_CHANGED, 0);
    return ret;
}

/* Semaphore @idx (< NEURON_EVT_SEM_COUNT). */
uint32_t neuron_evtsem_sem(NeuronCore *c, unsigned int idx)
{
    return c->sem[idx];
}

/* Whether event @idx (< NEURON_EVT_SEM_COUNT) is set. */
bool neuron_evtsem_event(NeuronCore *c, unsigned int idx)
{
    return c->event[idx];
}

/*
 * A consuming wait: if semaphore @idx >= @value, subtract @value and return
 * true. Atomic with the test: everything runs under the BQL. It writes no
 * record and wakes nobody (a decrement satisfies no waiter).
 */
bool neuron_evtsem_try_dec(NeuronCore *c, unsigned int idx, uint32_t value)
{
    if (c->sem[idx] < value) {
        return false;
    }
    c->sem[idx] -= value;
    return true;
}

/* neuron_evtsem_read() - read at offset @off of the EVT_SEM unit */
uint32_t neuron_evtsem_read(NeuronCore *c, hwaddr off)
{
    unsigned int idx = (off % NEURON_EVT_SEM_WINDOW) / 4;

    if (off < NEURON_EVT_SEM_EVENT(NEURON_EVT_SEM_COUNT)) {
        return c->event[idx];
    }
    if (off == NEURON_EVT_SEM_AXI_NOTIFY) {
        return c->axi_notify;
    }
    if (off == NEURON_EVT_SEM_AXI_DROPPED) {
        return c->axi_dropped;
    }
    if (off >= NEURON_EVT_SEM_READ(0) &&
        off < NEURON_EVT_SEM_READ(NEURON_EVT_SEM_COUNT)) {
        return c->sem[idx];
    }
    qemu_log_mask(LOG_GUEST_ERROR,
                  "neuron-tpb: core %u: EVT_SEM read at +0x%" HWADDR_PRIx
                  " (not the EVENT or READ window)\n", c->index, off);
    return 0;
}

/* neuron_evtsem_write() - write at offset @off of the EVT_SEM unit */
void neuron_evtsem_write(NeuronCore *c, hwaddr off, uint32_t val)
{
    unsigned int idx = (off % NEURON_EVT_SEM_WINDOW) / 4;
    unsigned int mode;
    uint32_t now;

    if (off == NEURON_EVT_SEM_AXI_NOTIFY) {
        if (val & ~NEURON_EVT_SEM_AXI_NOTIFY_ON) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u: AXI_NOTIFY 0x%x has undefined "
                          "bits (only bit 0), dropped\n", c->index, val);
        }
        c->axi_notify = val & NEURON_EVT_SEM_AXI_NOTIFY_ON;
        return;
    }
    if (off < NEURON_EVT_SEM_EVENT(NEURON_EVT_SEM_COUNT)) {
        if (val > 1) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: core %u: EVENT[%u] write 0x%x, events "
                          "are 0 or 1: taken as 1\n", c->index, idx, val);
        }
        mode = val ? NEURON_EVT_SEM_UPDATE_EVENT_SET
                   : NEURON_EVT_SEM_UPDATE_EVENT_CLEAR;
    } else if (off >= NEURON_EVT_SEM_SET(0) &&
               off < NEURON_EVT_SEM_SET(NEURON_EVT_SEM_COUNT)) {
        mode = NEURON_EVT_SEM_UPDATE_SEM_SET;
    } else if (off >= NEURON_EVT_SEM_INC(0) &&
               off < NEURON_EVT_SEM_INC(NEURON_EVT_SEM_COUNT)) {
        mode = NEURON_EVT_SEM_UPDATE_SEM_INC;
    } else if (off >= NEURON_EVT_SEM_DEC(0) &&
               off < NEURON_EVT_SEM_DEC(NEURON_EVT_SEM_COUNT)) {
        mode = NEURON_EVT_SEM_UPDATE_SEM_DEC;
    } else {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: EVT_SEM write 0x%x at +0x%"
                      HWADDR_PRIx " ignored (READ window and AXI_DROPPED are "
                      "read-only)\n", c->index, val, off);
        return;
    }
    now = neuron_evtsem_apply(c, mode, idx, val);
    if (c->axi_notify & NEURON_EVT_SEM_AXI_NOTIFY_ON) {
        neuron_evtsem_axi_record(c, mode, idx, now);
    }
}
