/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: emulated Neuron ML-accelerator PCI function.
 *
 * This file holds the PCI side: identity, the three BARs, MSI-X, the
 * properties, the global register page and the BAR0 dispatch to the per-core
 * blocks (NOTIFIC in neuron-notific.c, engines in neuron-engine.c, EVT_SEM in
 * neuron-evtsem.c). It owns all the state and is the top of the call graph:
 * the blocks report to it only through neuron_tpb_upcall() (neuron-tpb.h,
 * "Call direction"). Behaviour contract: docs/device-model.md; register map:
 * include/neuron/regs.h.
 *
 * BAR0  1 MiB 64-bit MMIO: global page at 0, core c at 0x10000 * (c + 1).
 * BAR2  MSI-X table + PBA: vector c = core c's NOTIFIC summary, then the
 *       throttle edge, then device faults
 *       (docs/decisions/0004-device-details.md#msix-vectors).
 * BAR4  device memory ("HBM"), 64-bit prefetchable RAM: rings with
 *       CTRL.DEVICE_MEM, engine programs, DGE buffers.
 *
 * Config space: MSI-X capability at 0x40, PCI power management (D0, D3hot)
 * at 0x60, PCIe (with FLR) at 0x80, AER extended capability at 0x100.
 *
 * Resets (global RESET register, qdev reset, FLR, D3hot -> D0) stop the
 * engines at once and complete after reset-latency-us of virtual time
 * (DEV_STATUS.READY). In D3hot, or while the run-time property "vanished"
 * is set, the function is "dead": every BAR reads all-ones and drops
 * writes, and no engine runs, so there is no DMA and no MSI-X message.
 * Vanished also makes config space read all-ones (fell off the bus).
 *
 * Locking: every entry point (MMIO, engine timers) runs under the BQL, so the
 * state needs no lock of its own.
 */

#include "qemu/osdep.h"
#include "qemu/units.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_aer.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "qemu/range.h"
#include "migration/vmstate.h"
#include "neuron-tpb.h"

#if HOST_BIG_ENDIAN
#error "include/neuron/ bitfield layouts assume a little-endian host"
#endif

#define NEURON_MEM_SIZE_MIN     (1 * MiB)
#define NEURON_MEM_SIZE_MAX     (16 * GiB)
#define NEURON_PCI_REVISION     1
#define NEURON_PCIE_CAP_OFFSET  0x80
#define NEURON_PM_CAP_OFFSET    0x60
#define NEURON_AER_OFFSET       0x100
#define NEURON_PM_D0            0
#define NEURON_PM_D3HOT         3

#define NEURON_THROTTLE_ARMED   (1u << 0)
#define NEURON_RESET_QUIESCE    1u

#define NEURON_ENGINE_STRIDE    (NEURON_ENGINE_BASE(1) - NEURON_ENGINE_BASE(0))

/* Power state from PMCSR: NEURON_PM_D0 or NEURON_PM_D3HOT. */
static unsigned int neuron_pm_state(NeuronTPBState *s)
{
    return pci_get_word(PCI_DEVICE(s)->config + s->pm_cap + PCI_PM_CTRL) &
           PCI_PM_CTRL_STATE_MASK;
}

/*
 * "Dead": vanished, or in D3hot. The BARs read all-ones and drop writes,
 * engines are stopped, and no MSI-X message leaves the function.
 */
static bool neuron_dead(NeuronTPBState *s)
{
    return s->vanished || neuron_pm_state(s) == NEURON_PM_D3HOT;
}

/* Puts the all-ones overlays over BAR2 and BAR4 while the function is dead. */
static void neuron_update_dead(NeuronTPBState *s)
{
    bool dead = neuron_dead(s);

    memory_region_set_enabled(&s->mem_dead, dead);
    memory_region_set_enabled(&s->msix_dead, dead);
}

/**
 * neuron_msix_notify() - send MSI-X vector @vector if the guest enabled MSI-X
 *
 * The function has no INTx: with MSI-X off, edges are only visible in the
 * status registers.
 */
static void neuron_msix_notify(NeuronTPBState *s, unsigned int vector)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (neuron_dead(s)) {
        return;
    }
    if (msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

/**
 * neuron_fault_raise() - core @core latches device fault @bits
 *
 * FAULT_STATUS gets @bits and FAULT_CORES bit @core, so the host knows
 * which core's ring write failed (docs/device-model.md "Interrupts"). The
 * fault vector fires when FAULT_STATUS & FAULT_MASK goes from 0 to
 * nonzero, the same edge rule as the NOTIFIC summary.
 */
static void neuron_fault_raise(NeuronTPBState *s, unsigned int core,
                               uint32_t bits)
{
    bool was_pending = s->fault_status & s->fault_mask;

    s->fault_status |= bits;
    s->fault_cores |= 1u << core;
    if (!was_pending && (s->fault_status & s->fault_mask)) {
        neuron_msix_notify(s, NEURON_MSIX_VEC_FAULT(s->num_cores));
    }
}

/**
 * neuron_throttle_edge() - an engine of core @core ran THROTTLE
 *
 * Every assertion is an edge on the throttle vector (the throttle class is
 * the driver-managed channel, docs/hardware.md#throttle); THROTTLE_STATUS
 * bit @core records that the core ran one until the host clears it (W1C).
 */
static void neuron_throttle_edge(NeuronTPBState *s, unsigned int core)
{
    s->throttle_status |= 1u << core;
    neuron_msix_notify(s, NEURON_MSIX_VEC_THROTTLE(s->num_cores));
}

/**
 * neuron_tpb_upcall() - what a core's blocks report (enum NeuronUpcall)
 *
 * The only way up from neuron-engine.c, neuron-notific.c and
 * neuron-evtsem.c; installed in every core at realize.
 */
static void neuron_tpb_upcall(void *opaque, NeuronCore *c, NeuronUpcall ev,
                              int arg)
{
    NeuronTPBState *s = opaque;

    switch (ev) {
    case NEURON_UP_IRQ:
        neuron_msix_notify(s, NEURON_MSIX_VEC_CORE(c->index));
        break;
    case NEURON_UP_FAULT:
        neuron_fault_raise(s, c->index, arg);
        break;
    case NEURON_UP_THROTTLE:
        neuron_throttle_edge(s, c->index);
        break;
    case NEURON_UP_SEM_CHANGED:
        neuron_engine_wake_waiters(c);
        break;
    case NEURON_UP_QUEUE_ROOM:
        neuron_engine_wake_queue(c, arg);
        neuron_evtsem_retry(c);
        break;
    }
}

/* THROTTLE_CTRL changed: the engines read it from their core's config. */
static void neuron_set_throttle_ctrl(NeuronTPBState *s, uint32_t val)
{
    unsigned int c;

    s->throttle_ctrl = val;
    for (c = 0; c < s->num_cores; c++) {
        s->cores[c].cfg.throttle_armed = val & NEURON_THROTTLE_ARMED;
    }
}

/*
 * Stop every engine, disable every queue (global RESET, entering D3hot,
 * vanishing). Parked records are dropped with their programs.
 */
static void neuron_quiesce(NeuronTPBState *s)
{
    unsigned int c, e;

    for (c = 0; c < s->num_cores; c++) {
        NeuronCore *core = &s->cores[c];

        for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
            neuron_engine_reset(&core->engine[e], false);
        }
        neuron_notific_disable_all(core);
        neuron_evtsem_drop_parked(core);
    }
}

/* Everything of the function back to its power-on value (not config space). */
static void neuron_power_on(NeuronTPBState *s)
{
    unsigned int c, e;

    s->fault_status = 0;
    s->fault_cores = 0;
    s->fault_mask = 0;
    s->throttle_status = 0;
    neuron_set_throttle_ctrl(s, 0);
    for (c = 0; c < s->num_cores; c++) {
        NeuronCore *core = &s->cores[c];

        for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
            neuron_engine_reset(&core->engine[e], true);
        }
        neuron_notific_reset(core);
        neuron_evtsem_reset(core);
        neuron_dma_reset(core);
    }
}

/*
 * A reset (of any kind) has stopped everything: the function is READY
 * again reset-latency-us of virtual time later. Until then DEV_STATUS reads
 * 0 and writes outside the global page are ignored.
 */
static void neuron_reset_begin(NeuronTPBState *s)
{
    if (s->fault_never_ready) {
        /* the function does not come back: DEV_STATUS stays 0 */
        timer_del(s->reset_timer);
        s->ready = false;
        return;
    }
    if (!s->reset_latency_us) {
        timer_del(s->reset_timer);
        s->ready = true;
        return;
    }
    s->ready = false;
    timer_mod(s->reset_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              (int64_t)s->reset_latency_us * SCALE_US);
}

static void neuron_reset_done(void *opaque)
{
    NeuronTPBState *s = opaque;

    s->ready = true;
}

/*
 * Cores that are not quiesced: an engine RUNNING or WAITING or a record
 * still owed, or a queue enabled; plus fault-stuck-busy's core for ever.
 */
static uint32_t neuron_busy_cores(NeuronTPBState *s)
{
    uint32_t busy = 0;
    unsigned int c, e;

    for (c = 0; c < s->num_cores; c++) {
        NeuronCore *core = &s->cores[c];
        bool b = neuron_notific_busy(core) || neuron_evtsem_busy(core);

        for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
            b |= neuron_engine_busy(&core->engine[e]);
        }
        if (b) {
            busy |= BIT(c);
        }
    }
    if (s->fault_stuck_busy >= 0) {
        busy |= BIT(s->fault_stuck_busy);
    }
    return busy;
}

static uint32_t neuron_dev_status(NeuronTPBState *s)
{
    if (!s->ready) {
        return 0;
    }
    return NEURON_DEV_STATUS_READY |
           (neuron_busy_cores(s) ? 0 : NEURON_DEV_STATUS_QUIESCED);
}

static uint32_t neuron_global_read(NeuronTPBState *s, hwaddr addr)
{
    switch (addr) {
    case NEURON_REG_ID:
        return NEURON_ID_MAGIC;
    case NEURON_REG_VERSION:
        return NEURON_REGS_VERSION;
    case NEURON_REG_NUM_CORES:
        return s->num_cores;
    case NEURON_REG_GEN:
        return s->gen;
    case NEURON_REG_MEM_SIZE_LO:
        return (uint32_t)s->mem_size;
    case NEURON_REG_MEM_SIZE_HI:
        return (uint32_t)(s->mem_size >> 32);
    case NEURON_REG_FAULT_STATUS:
        return s->fault_status;
    case NEURON_REG_FAULT_MASK:
        return s->fault_mask;
    case NEURON_REG_FAULT_CORES:
        return s->fault_cores;
    case NEURON_REG_THROTTLE_STATUS:
        return s->throttle_status;
    case NEURON_REG_THROTTLE_CTRL:
        return s->throttle_ctrl;
    case NEURON_REG_RESET:
        return 0;
    case NEURON_REG_DEV_STATUS:
        return neuron_dev_status(s);
    case NEURON_REG_BUSY_CORES:
        return neuron_busy_cores(s);
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: read of unknown global register 0x%"
                      HWADDR_PRIx "\n", addr);
        return 0;
    }
}

static void neuron_global_write(NeuronTPBState *s, hwaddr addr, uint32_t val)
{
    bool was_pending;

    switch (addr) {
    case NEURON_REG_ID:
    case NEURON_REG_VERSION:
    case NEURON_REG_NUM_CORES:
    case NEURON_REG_GEN:
    case NEURON_REG_MEM_SIZE_LO:
    case NEURON_REG_MEM_SIZE_HI:
    case NEURON_REG_DEV_STATUS:
    case NEURON_REG_BUSY_CORES:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: write 0x%x to read-only global register 0x%"
                      HWADDR_PRIx " ignored\n", val, addr);
        break;
    case NEURON_REG_FAULT_STATUS:
        s->fault_status &= ~val;
        break;
    case NEURON_REG_FAULT_CORES:
        s->fault_cores &= ~val;
        break;
    case NEURON_REG_FAULT_MASK:
        if (val & ~NEURON_FAULT_NAMED) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: FAULT_MASK 0x%x has undefined bits\n",
                          val);
        }
        was_pending = s->fault_status & s->fault_mask;
        s->fault_mask = val & NEURON_FAULT_NAMED;
        if (!was_pending && (s->fault_status & s->fault_mask)) {
            neuron_msix_notify(s, NEURON_MSIX_VEC_FAULT(s->num_cores));
        }
        break;
    case NEURON_REG_THROTTLE_STATUS:
        s->throttle_status &= ~val;
        break;
    case NEURON_REG_THROTTLE_CTRL:
        if (val & ~NEURON_THROTTLE_ARMED) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: THROTTLE_CTRL 0x%x has undefined bits\n",
                          val);
        }
        neuron_set_throttle_ctrl(s, val & NEURON_THROTTLE_ARMED);
        break;
    case NEURON_REG_RESET:
        if (val != NEURON_RESET_QUIESCE) {
            qemu_log_mask(LOG_GUEST_ERROR,
                          "neuron-tpb: RESET takes 1, 0x%x ignored\n", val);
            break;
        }
        neuron_quiesce(s);
        neuron_reset_begin(s);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: write 0x%x to unknown global register 0x%"
                      HWADDR_PRIx " ignored\n", val, addr);
        break;
    }
}

static uint32_t neuron_core_read(NeuronCore *c, hwaddr off)
{
    if (off < NEURON_DOORBELL_BASE) {
        return neuron_notific_read(c, off);
    }
    if (off < NEURON_DOORBELL(NEURON_NUM_SW_QUEUES)) {
        off -= NEURON_DOORBELL_BASE;
        return neuron_doorbell_read(c, off / NEURON_DOORBELL_SIZE,
                                    off % NEURON_DOORBELL_SIZE);
    }
    if (off >= NEURON_ENGINE_BASE(0) &&
        off < NEURON_ENGINE_BASE(NEURON_ENGINES_PER_CORE)) {
        off -= NEURON_ENGINE_BASE(0);
        return neuron_engine_read(&c->engine[off / NEURON_ENGINE_STRIDE],
                                  off % NEURON_ENGINE_STRIDE);
    }
    if (off >= NEURON_EVT_SEM_BASE &&
        off < NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_SPAN) {
        return neuron_evtsem_read(c, off - NEURON_EVT_SEM_BASE);
    }
    if (off >= NEURON_DMA_BASE && off < NEURON_DMA_BASE + NEURON_DMA_SPAN) {
        return neuron_dma_read(c, off - NEURON_DMA_BASE);
    }
    qemu_log_mask(LOG_GUEST_ERROR,
                  "neuron-tpb: core %u: read of unmapped offset 0x%"
                  HWADDR_PRIx "\n", c->index, off);
    return 0;
}

static void neuron_core_write(NeuronCore *c, hwaddr off, uint32_t val)
{
    if (off < NEURON_DOORBELL_BASE) {
        neuron_notific_write(c, off, val);
        return;
    }
    if (off < NEURON_DOORBELL(NEURON_NUM_SW_QUEUES)) {
        off -= NEURON_DOORBELL_BASE;
        neuron_doorbell_write(c, off / NEURON_DOORBELL_SIZE,
                              off % NEURON_DOORBELL_SIZE, val);
        return;
    }
    if (off >= NEURON_ENGINE_BASE(0) &&
        off < NEURON_ENGINE_BASE(NEURON_ENGINES_PER_CORE)) {
        off -= NEURON_ENGINE_BASE(0);
        neuron_engine_write(&c->engine[off / NEURON_ENGINE_STRIDE],
                            off % NEURON_ENGINE_STRIDE, val);
        return;
    }
    if (off >= NEURON_EVT_SEM_BASE &&
        off < NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_SPAN) {
        neuron_evtsem_write(c, off - NEURON_EVT_SEM_BASE, val);
        return;
    }
    if (off >= NEURON_DMA_BASE && off < NEURON_DMA_BASE + NEURON_DMA_SPAN) {
        neuron_dma_write(c, off - NEURON_DMA_BASE, val);
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR,
                  "neuron-tpb: core %u: write 0x%x to unmapped offset 0x%"
                  HWADDR_PRIx " ignored\n", c->index, val, off);
}

/* Returns the core owning BAR0 offset @addr, or NULL (global page, absent). */
static NeuronCore *neuron_addr_core(NeuronTPBState *s, hwaddr addr)
{
    uint64_t idx = addr / NEURON_CORE_STRIDE;

    if (idx == 0 || idx > s->num_cores) {
        return NULL;
    }
    return &s->cores[idx - 1];
}

static uint64_t neuron_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    NeuronTPBState *s = opaque;
    NeuronCore *c;

    if (neuron_dead(s)) {
        return UINT32_MAX;
    }
    if (addr < NEURON_CORE_BASE(0)) {
        return neuron_global_read(s, addr);
    }
    c = neuron_addr_core(s, addr);
    if (!c) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: read of 0x%" HWADDR_PRIx
                      ": no such core (cores=%u)\n", addr, s->num_cores);
        return 0;
    }
    return neuron_core_read(c, addr % NEURON_CORE_STRIDE);
}

static void neuron_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    NeuronTPBState *s = opaque;
    NeuronCore *c;

    if (neuron_dead(s)) {
        return;
    }
    if (addr < NEURON_CORE_BASE(0)) {
        neuron_global_write(s, addr, val);
        return;
    }
    if (!s->ready) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: write 0x%" PRIx64 " to 0x%" HWADDR_PRIx
                      " ignored: reset in progress (DEV_STATUS.READY 0)\n",
                      val, addr);
        return;
    }
    c = neuron_addr_core(s, addr);
    if (!c) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: write to 0x%" HWADDR_PRIx
                      ": no such core (cores=%u)\n", addr, s->num_cores);
        return;
    }
    neuron_core_write(c, addr % NEURON_CORE_STRIDE, val);
}

/*
 * All registers are 32-bit. A 64-bit access is split low word first, which
 * makes a 64-bit TIMESTAMP read coherent (reading LO latches HI).
 */
static const MemoryRegionOps neuron_mmio_ops = {
    .read = neuron_mmio_read,
    .write = neuron_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* BAR2 and BAR4 of a dead function: reads all-ones, writes dropped. */
static uint64_t neuron_dead_read(void *opaque, hwaddr addr, unsigned size)
{
    return size == 8 ? UINT64_MAX : MAKE_64BIT_MASK(0, size * 8);
}

static void neuron_dead_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
}

static const MemoryRegionOps neuron_dead_ops = {
    .read = neuron_dead_read,
    .write = neuron_dead_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

static bool neuron_check_props(NeuronTPBState *s, Error **errp)
{
    if (s->num_cores < 1 || s->num_cores > NEURON_MAX_CORES) {
        error_setg(errp, "neuron-tpb: cores=%u, must be 1..%u",
                   s->num_cores, NEURON_MAX_CORES);
        return false;
    }
    if (!is_power_of_2(s->mem_size) || s->mem_size < NEURON_MEM_SIZE_MIN ||
        s->mem_size > NEURON_MEM_SIZE_MAX) {
        error_setg(errp, "neuron-tpb: mem-size=%" PRIu64 " must be a power "
                   "of two in [1 MiB, 16 GiB]", s->mem_size);
        return false;
    }
    if (!s->gen_name || !strcmp(s->gen_name, "cayman")) {
        s->gen = NEURON_GEN_CAYMAN;
    } else if (!strcmp(s->gen_name, "sunda")) {
        s->gen = NEURON_GEN_SUNDA;
    } else {
        error_setg(errp, "neuron-tpb: gen=%s, must be cayman or sunda",
                   s->gen_name);
        return false;
    }
    if (s->wrbuf_depth < 1 || s->wrbuf_depth > NEURON_WRBUF_DEPTH_MAX) {
        error_setg(errp, "neuron-tpb: wrbuf-depth=%u, must be 1..%u",
                   s->wrbuf_depth, NEURON_WRBUF_DEPTH_MAX);
        return false;
    }
    if (s->wrbuf_drain_ns > NEURON_WRBUF_DRAIN_NS_MAX) {
        error_setg(errp, "neuron-tpb: wrbuf-drain-ns=%u, must be 0..%u",
                   s->wrbuf_drain_ns, NEURON_WRBUF_DRAIN_NS_MAX);
        return false;
    }
    if (s->fault_torn_gap_us > NEURON_TORN_GAP_US_MAX ||
        (s->fault_torn_gap_us && !s->fault_torn_header_first)) {
        error_setg(errp, "neuron-tpb: fault-torn-gap-us=%u, must be 0..%u "
                   "and needs fault-torn-header-first=on",
                   s->fault_torn_gap_us, NEURON_TORN_GAP_US_MAX);
        return false;
    }
    if (s->fault_dma_error_queue < -1 ||
        s->fault_dma_error_queue >=
            (int32_t)(s->num_cores * NEURON_NUM_SW_QUEUES)) {
        error_setg(errp, "neuron-tpb: fault-dma-error-queue=%d, must be -1 "
                   "or core*%u+queue", s->fault_dma_error_queue,
                   NEURON_NUM_SW_QUEUES);
        return false;
    }
    if (!(s->fault_dma_error_bits & NEURON_FAULT_DMA_ERROR) ||
        (s->fault_dma_error_bits & NEURON_FAULT_INTR_STORM)) {
        error_setg(errp, "neuron-tpb: fault-dma-error-bits=0x%x, must have "
                   "bit 0 (DMA_ERROR) and not bit 1 (INTR_STORM, the "
                   "driver's own)", s->fault_dma_error_bits);
        return false;
    }
    if (s->fault_stuck_engine < -1 ||
        s->fault_stuck_engine >=
            (int32_t)(s->num_cores * NEURON_ENGINES_PER_CORE)) {
        error_setg(errp, "neuron-tpb: fault-stuck-engine=%d, must be -1 "
                   "or core*%u+engine", s->fault_stuck_engine,
                   NEURON_ENGINES_PER_CORE);
        return false;
    }
    if (s->fault_intr_storm < -1 ||
        s->fault_intr_storm >=
            (int32_t)(s->num_cores * NEURON_NOTIFIC_INTR_BITS)) {
        error_setg(errp, "neuron-tpb: fault-intr-storm=%d, must be -1 "
                   "or core*%u+cause", s->fault_intr_storm,
                   NEURON_NOTIFIC_INTR_BITS);
        return false;
    }
    if (s->fault_stuck_disable < -1 ||
        s->fault_stuck_disable >=
            (int32_t)(s->num_cores * NEURON_NUM_SW_QUEUES)) {
        error_setg(errp, "neuron-tpb: fault-stuck-disable=%d, must be -1 "
                   "or core*%u+queue", s->fault_stuck_disable,
                   NEURON_NUM_SW_QUEUES);
        return false;
    }
    if (s->fault_stuck_busy < -1 ||
        s->fault_stuck_busy >= (int32_t)s->num_cores) {
        error_setg(errp, "neuron-tpb: fault-stuck-busy=%d, must be -1 "
                   "or a core", s->fault_stuck_busy);
        return false;
    }
    return true;
}

/*
 * PCI power management: D0 and D3hot (PMC advertises neither D1 nor D2, nor
 * PME), No_Soft_Reset 0, i.e. D3hot -> D0 loses the function's state.
 * QEMU 7.2 has no generic PM support: the state lives in PMCSR only and
 * neuron_config_write() acts on it.
 */
static int neuron_pm_init(NeuronTPBState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    int pos = pci_add_capability(pdev, PCI_CAP_ID_PM, NEURON_PM_CAP_OFFSET,
                                 PCI_PM_SIZEOF, errp);

    if (pos < 0) {
        return pos;
    }
    s->pm_cap = pos;
    pci_set_word(pdev->config + pos + PCI_PM_PMC, PCI_PM_CAP_VER_1_2);
    pci_set_word(pdev->config + pos + PCI_PM_CTRL, NEURON_PM_D0);
    pci_set_word(pdev->wmask + pos + PCI_PM_CTRL, PCI_PM_CTRL_STATE_MASK);
    return pos;
}

/*
 * A PMCSR write moved the power state from @old. D1/D2 are not supported:
 * the write leaves the state as it was. Entering D3hot stops the engines
 * (like RESET); D3hot -> D0 is a function reset (state lost).
 */
static void neuron_pm_update(NeuronTPBState *s, unsigned int old)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *pmcsr = pdev->config + s->pm_cap + PCI_PM_CTRL;
    unsigned int new = neuron_pm_state(s);

    if (new == old) {
        return;
    }
    if (new != NEURON_PM_D0 && new != NEURON_PM_D3HOT) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: PMCSR power state D%u not supported, "
                      "stays D%u\n", new, old);
        pci_word_test_and_clear_mask(pmcsr, PCI_PM_CTRL_STATE_MASK);
        pci_word_test_and_set_mask(pmcsr, old);
        return;
    }
    if (new == NEURON_PM_D3HOT) {
        neuron_quiesce(s);
    } else {
        neuron_power_on(s);
        neuron_reset_begin(s);
    }
    neuron_update_dead(s);
}

static uint32_t neuron_config_read(PCIDevice *pdev, uint32_t addr, int len)
{
    NeuronTPBState *s = NEURON_TPB(pdev);

    if (s->vanished) {
        return MAKE_64BIT_MASK(0, len * 8);
    }
    return pci_default_read_config(pdev, addr, len);
}

/*
 * Config writes: PMCSR (power state), AER's status and log registers, and
 * DEVCTL.BCR_FLR (pcie_cap_flr_write_config() resets the function through
 * pci_device_reset(), hence neuron_tpb_reset()). A vanished function
 * ignores them all.
 */
static void neuron_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val,
                                int len)
{
    NeuronTPBState *s = NEURON_TPB(pdev);
    unsigned int pm = neuron_pm_state(s);

    if (s->vanished) {
        return;
    }
    pci_default_write_config(pdev, addr, val, len);
    if (ranges_overlap(addr, len, s->pm_cap + PCI_PM_CTRL, 2)) {
        neuron_pm_update(s, pm);
    }
    if (ranges_overlap(addr, len, NEURON_AER_OFFSET, PCI_ERR_SIZEOF)) {
        pcie_aer_write_config(pdev, addr, val, len);
    }
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

/* What core @c's blocks need of the properties, per core. */
static void neuron_core_config(NeuronTPBState *s, NeuronCore *c)
{
    int32_t dma = s->fault_dma_error_queue;
    int32_t stuck = s->fault_stuck_engine;
    int32_t storm = s->fault_intr_storm;
    int32_t off = s->fault_stuck_disable;

    c->cfg.gen = s->gen;
    c->cfg.dma_error_queue =
        dma >= 0 && dma / NEURON_NUM_SW_QUEUES == (int32_t)c->index ?
        dma % NEURON_NUM_SW_QUEUES : -1;
    c->cfg.dma_error_bits = s->fault_dma_error_bits;
    c->cfg.stuck_engine =
        stuck >= 0 && stuck / NEURON_ENGINES_PER_CORE == (int32_t)c->index ?
        stuck % NEURON_ENGINES_PER_CORE : -1;
    c->cfg.intr_storm =
        storm >= 0 && storm / NEURON_NOTIFIC_INTR_BITS == (int32_t)c->index ?
        storm % NEURON_NOTIFIC_INTR_BITS : -1;
    c->cfg.stuck_disable_queue =
        off >= 0 && off / NEURON_NUM_SW_QUEUES == (int32_t)c->index ?
        off % NEURON_NUM_SW_QUEUES : -1;
    c->cfg.insn_delay_ns = s->insn_delay_ns;
    c->cfg.throttle_armed = s->throttle_ctrl & NEURON_THROTTLE_ARMED;
    c->cfg.torn_header_first = s->fault_torn_header_first;
    c->cfg.torn_gap_us = s->fault_torn_gap_us;
    c->cfg.wrbuf_depth = s->wrbuf_depth;
    c->cfg.wrbuf_drain_ns = s->wrbuf_drain_ns;
}

static void neuron_tpb_realize(PCIDevice *pdev, Error **errp)
{
    ERRP_GUARD();
    NeuronTPBState *s = NEURON_TPB(pdev);
    unsigned int c, e, v;

    if (!neuron_check_props(s, errp)) {
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, 0);
    if (pcie_endpoint_cap_init(pdev, NEURON_PCIE_CAP_OFFSET) < 0) {
        error_setg(errp, "neuron-tpb: cannot add the PCIe capability");
        return;
    }
    pcie_cap_flr_init(pdev);
    pcie_cap_deverr_init(pdev);
    if (neuron_pm_init(s, errp) < 0) {
        return;
    }
    if (pcie_aer_init(pdev, PCI_ERR_VER, NEURON_AER_OFFSET, PCI_ERR_SIZEOF,
                      errp) < 0) {
        return;
    }

    memory_region_init_io(&s->mmio, OBJECT(s), &neuron_mmio_ops, s,
                          "neuron-tpb-regs", NEURON_BAR0_SIZE);
    pci_register_bar(pdev, NEURON_BAR_REGS,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);

    if (msix_init_exclusive_bar(pdev, NEURON_MSIX_VECTORS(s->num_cores),
                                NEURON_BAR_MSIX, errp)) {
        pcie_aer_exit(pdev);
        return;
    }
    memory_region_init_io(&s->msix_dead, OBJECT(s), &neuron_dead_ops, s,
                          "neuron-tpb-msix-dead",
                          memory_region_size(&pdev->msix_exclusive_bar));
    memory_region_set_enabled(&s->msix_dead, false);
    memory_region_add_subregion_overlap(&pdev->msix_exclusive_bar, 0,
                                        &s->msix_dead, 1);
    for (v = 0; v < NEURON_MSIX_VECTORS(s->num_cores); v++) {
        msix_vector_use(pdev, v);
    }

    memory_region_init_ram(&s->mem, OBJECT(s), "neuron-tpb-mem", s->mem_size,
                           errp);
    if (*errp) {
        memory_region_del_subregion(&pdev->msix_exclusive_bar, &s->msix_dead);
        msix_uninit_exclusive_bar(pdev);
        pcie_aer_exit(pdev);
        return;
    }
    s->devmem.mr = &s->mem;
    s->devmem.ptr = memory_region_get_ram_ptr(&s->mem);
    s->devmem.size = s->mem_size;
    memory_region_init(&s->bar4, OBJECT(s), "neuron-tpb-bar4", s->mem_size);
    memory_region_add_subregion(&s->bar4, 0, &s->mem);
    memory_region_init_io(&s->mem_dead, OBJECT(s), &neuron_dead_ops, s,
                          "neuron-tpb-mem-dead", s->mem_size);
    memory_region_set_enabled(&s->mem_dead, false);
    memory_region_add_subregion_overlap(&s->bar4, 0, &s->mem_dead, 1);
    pci_register_bar(pdev, NEURON_BAR_MEM,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->bar4);
    s->reset_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, neuron_reset_done, s);
    s->ready = true;

    s->cores = g_new0(NeuronCore, s->num_cores);
    for (c = 0; c < s->num_cores; c++) {
        NeuronCore *core = &s->cores[c];

        core->index = c;
        core->pdev = pdev;
        core->mem = &s->devmem;
        core->up = neuron_tpb_upcall;
        core->up_opaque = s;
        neuron_core_config(s, core);
        neuron_notific_init(core);
        neuron_notific_reset(core);
        neuron_evtsem_reset(core);
        neuron_dma_reset(core);
        for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
            neuron_engine_init(&core->engine[e], core, e);
        }
    }
    neuron_update_dead(s);
}

static void neuron_tpb_exit(PCIDevice *pdev)
{
    NeuronTPBState *s = NEURON_TPB(pdev);
    unsigned int c, e;

    for (c = 0; c < s->num_cores; c++) {
        for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
            neuron_engine_finalize(&s->cores[c].engine[e]);
        }
        neuron_notific_finalize(&s->cores[c]);
    }
    g_free(s->cores);
    s->cores = NULL;
    timer_free(s->reset_timer);
    s->reset_timer = NULL;
    /*
     * A subregion holds a reference on its owner, and these are the
     * device's own regions inside its own containers: left in place, they
     * would keep the unplugged device (and its RAMBlock, whose name the
     * next device in the slot needs) alive for ever.
     */
    memory_region_del_subregion(&s->bar4, &s->mem_dead);
    memory_region_del_subregion(&s->bar4, &s->mem);
    memory_region_del_subregion(&pdev->msix_exclusive_bar, &s->msix_dead);
    msix_uninit_exclusive_bar(pdev);
    pcie_aer_exit(pdev);
}

/*
 * Device (PCI function) reset, also FLR: everything back to power-on values,
 * power state D0, and READY after reset-latency-us.
 */
static void neuron_tpb_reset(DeviceState *dev)
{
    NeuronTPBState *s = NEURON_TPB(dev);
    uint8_t *pmcsr = PCI_DEVICE(s)->config + s->pm_cap + PCI_PM_CTRL;

    pci_word_test_and_clear_mask(pmcsr, PCI_PM_CTRL_STATE_MASK);
    neuron_power_on(s);
    neuron_reset_begin(s);
    neuron_update_dead(s);
}

/*
 * "vanished", settable at run time (qom-set): the function fell off the bus.
 * Setting it stops everything; clearing it brings the function back as
 * after a function reset.
 */
static bool neuron_get_vanished(Object *obj, Error **errp)
{
    return NEURON_TPB(obj)->vanished;
}

static void neuron_set_vanished(Object *obj, bool value, Error **errp)
{
    NeuronTPBState *s = NEURON_TPB(obj);

    if (value == s->vanished) {
        return;
    }
    s->vanished = value;
    if (!DEVICE(obj)->realized) {
        return;
    }
    if (value) {
        neuron_quiesce(s);
    } else {
        neuron_power_on(s);
        neuron_reset_begin(s);
    }
    neuron_update_dead(s);
}

/*
 * "fault-never-ready", settable at run time (qom-set): from the next reset
 * on, the function never reports READY (a device that does not come back
 * from a link reset or FLR). Clearing it lets the next reset complete.
 */
static bool neuron_get_never_ready(Object *obj, Error **errp)
{
    return NEURON_TPB(obj)->fault_never_ready;
}

static void neuron_set_never_ready(Object *obj, bool value, Error **errp)
{
    NEURON_TPB(obj)->fault_never_ready = value;
}

/*
 * Engine progress lives in timers and parked records; migrating it is not
 * worth it for a test device, so refuse migration outright.
 */
static const VMStateDescription neuron_tpb_vmstate = {
    .name = TYPE_NEURON_TPB,
    .unmigratable = 1,
};

static Property neuron_tpb_properties[] = {
    DEFINE_PROP_UINT32("cores", NeuronTPBState, num_cores, 2),
    DEFINE_PROP_SIZE("mem-size", NeuronTPBState, mem_size, 64 * MiB),
    DEFINE_PROP_STRING("gen", NeuronTPBState, gen_name),
    DEFINE_PROP_INT32("fault-dma-error-queue", NeuronTPBState,
                      fault_dma_error_queue, -1),
    /* a newer device's finer cause beside DMA_ERROR, docs/device-model.md */
    DEFINE_PROP_UINT32("fault-dma-error-bits", NeuronTPBState,
                       fault_dma_error_bits, NEURON_FAULT_DMA_ERROR),
    DEFINE_PROP_INT32("fault-stuck-engine", NeuronTPBState,
                      fault_stuck_engine, -1),
    DEFINE_PROP_INT32("fault-intr-storm", NeuronTPBState,
                      fault_intr_storm, -1),
    DEFINE_PROP_UINT64("insn-delay-ns", NeuronTPBState, insn_delay_ns, 0),
    DEFINE_PROP_UINT32("reset-latency-us", NeuronTPBState, reset_latency_us,
                       100),
    DEFINE_PROP_INT32("fault-stuck-busy", NeuronTPBState, fault_stuck_busy,
                      -1),
    DEFINE_PROP_INT32("fault-stuck-disable", NeuronTPBState,
                      fault_stuck_disable, -1),
    DEFINE_PROP_BOOL("fault-torn-header-first", NeuronTPBState,
                     fault_torn_header_first, false),
    DEFINE_PROP_UINT32("fault-torn-gap-us", NeuronTPBState, fault_torn_gap_us,
                       0),
    /* NOTIFIC input buffer, docs/device-model.md#wrbuf */
    DEFINE_PROP_UINT32("wrbuf-depth", NeuronTPBState, wrbuf_depth, 16),
    DEFINE_PROP_UINT32("wrbuf-drain-ns", NeuronTPBState, wrbuf_drain_ns, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void neuron_tpb_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = neuron_tpb_realize;
    pc->exit = neuron_tpb_exit;
    pc->config_read = neuron_config_read;
    pc->config_write = neuron_config_write;
    pc->vendor_id = NEURON_PCI_VENDOR_ID;
    pc->device_id = NEURON_PCI_DEVICE_ID;
    pc->class_id = NEURON_PCI_CLASS;
    pc->revision = NEURON_PCI_REVISION;

    dc->desc = "Neuron ML accelerator function (emulated TPBs + NOTIFIC)";
    dc->reset = neuron_tpb_reset;
    dc->vmsd = &neuron_tpb_vmstate;
    device_class_set_props(dc, neuron_tpb_properties);
    object_class_property_add_bool(klass, "vanished", neuron_get_vanished,
                                   neuron_set_vanished);
    object_class_property_set_description(klass, "vanished",
        "the function fell off the bus: BARs and config space read "
        "all-ones, no DMA, no MSI-X (settable at run time)");
    object_class_property_add_bool(klass, "fault-never-ready",
                                   neuron_get_never_ready,
                                   neuron_set_never_ready);
    object_class_property_set_description(klass, "fault-never-ready",
        "from the next reset on, DEV_STATUS never reports READY: the "
        "function does not come back (settable at run time)");
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo neuron_tpb_info = {
    .name = TYPE_NEURON_TPB,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(NeuronTPBState),
    .class_init = neuron_tpb_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void neuron_tpb_register_types(void)
{
    type_register_static(&neuron_tpb_info);
}

type_init(neuron_tpb_register_types)
