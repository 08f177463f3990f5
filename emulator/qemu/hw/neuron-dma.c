/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: the 16 DMA engines of a core (docs/hardware.md#dma-engines,
 * docs/device-model.md#dma-engines).
 *
 * The DGE hands every copy descriptor it emits to the DMA engines as
 * packets of NEURON_DMA_PACKET_BYTES: neuron_dma_split() says which engines
 * take how many packets, which is what the DGE_METADATA record reports
 * (dma_map, num_packets). The copy itself is done by the DGE helper in
 * device memory; this block keeps the per-engine packet counters and the
 * M2S_TRIGGER register, whose bit i makes DMA engine i's queue write a DMA
 * record when the engine finishes its part of a descriptor (the engine
 * writes it, one record per step, neuron-engine.c).
 *
 * A helper of the engine (neuron-tpb.h, "Call direction"): it calls nothing
 * but the inline helpers of neuron-tpb.h.
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "neuron-tpb.h"

void neuron_dma_reset(NeuronCore *c)
{
    c->dma_trigger = 0;
    memset(c->dma_packets, 0, sizeof(c->dma_packets));
}

/**
 * neuron_dma_split() - how a descriptor of @length bytes spreads over the
 * DMA engines (docs/device-model.md#dma-engines)
 * @out: the engines used, the packets of each, and num_packets
 *
 * P = max(1, ceil(@length / NEURON_DMA_PACKET_BYTES)) packets go to the
 * fewest engines that can take them, n = ceil(P / 4096), engines 0..n-1;
 * each takes ceil(P / n) packets except the last, which takes the rest.
 * num_packets is ceil(P / n), 1..4096 (the record stores 4096 as 0).
 *
 * Returns false (nothing filled) if P exceeds 16 * 4096 packets: the
 * descriptor is too long for the DMA engines (a structural error).
 */
bool neuron_dma_split(uint32_t length, NeuronDmaSplit *out)
{
    uint64_t p = MAX(1, DIV_ROUND_UP((uint64_t)length,
                                     NEURON_DMA_PACKET_BYTES));
    uint32_t n, per, i;

    if (p > (uint64_t)NEURON_DMA_ENGINES * NEURON_DMA_MAX_PACKETS) {
        return false;
    }
    n = DIV_ROUND_UP(p, NEURON_DMA_MAX_PACKETS);
    per = DIV_ROUND_UP(p, n);
    memset(out, 0, sizeof(*out));
    for (i = 0; i < n; i++) {
        out->packets[i] = MIN(per, p - (uint64_t)i * per);
    }
    out->map = MAKE_64BIT_MASK(0, n);
    out->num_packets = per;
    return true;
}

/* The engines of @s have completed their packets: count them. */
void neuron_dma_complete(NeuronCore *c, const NeuronDmaSplit *s)
{
    unsigned int i;

    for (i = 0; i < NEURON_DMA_ENGINES; i++) {
        c->dma_packets[i] += s->packets[i];
    }
}

/* The DMA engines of @map whose queue completion writes a DMA record. */
uint32_t neuron_dma_armed(NeuronCore *c, uint32_t map)
{
    return c->dma_trigger & map;
}

/* neuron_dma_read() - read at offset @off of the DMA block */
uint32_t neuron_dma_read(NeuronCore *c, hwaddr off)
{
    if (off >= NEURON_DMA_PACKETS(0) &&
        off < NEURON_DMA_PACKETS(NEURON_DMA_ENGINES)) {
        return c->dma_packets[(off - NEURON_DMA_PACKETS(0)) / 4];
    }
    switch (off) {
    case NEURON_DMA_M2S_TRIGGER:
        return c->dma_trigger;
    case NEURON_DMA_NUM_ENGINES_REG:
        return NEURON_DMA_ENGINES;
    case NEURON_DMA_PACKET_BYTES_REG:
        return NEURON_DMA_PACKET_BYTES;
    default:
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: DMA read of unknown register +0x%"
                      HWADDR_PRIx "\n", c->index, off);
        return 0;
    }
}

/* neuron_dma_write() - write at offset @off of the DMA block */
void neuron_dma_write(NeuronCore *c, hwaddr off, uint32_t val)
{
    if (off != NEURON_DMA_M2S_TRIGGER) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: DMA write 0x%x to %s register +0x%"
                      HWADDR_PRIx " ignored\n", c->index, val,
                      off < NEURON_DMA_SPAN ? "read-only" : "unknown", off);
        return;
    }
    if (val & ~NEURON_DMA_ENGINE_MASK) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "neuron-tpb: core %u: M2S_TRIGGER 0x%x has bits beyond "
                      "the 16 DMA queues, dropped\n", c->index, val);
    }
    c->dma_trigger = val & NEURON_DMA_ENGINE_MASK;
}
