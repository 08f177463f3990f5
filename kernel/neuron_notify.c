// SPDX-License-Identifier: GPL-2.0
/*
 * Completion notifications a core's owner arms: the M2S trigger of each of
 * the 16 DMA queues (a DMA record when the queue's engine finishes its
 * packets of a DGE copy) and the AXI_EVT_SEM notification (a record for
 * every host write through the EVT_SEM windows). docs/hardware.md#dma-engines,
 * docs/device-model.md#dma-engines, docs/device-model.md#axi-evt-sem;
 * regs.h NEURON_DMA_M2S_TRIGGER, NEURON_EVT_SEM_AXI_NOTIFY;
 * include/uapi/linux/neuron.h NEURON_IOC_NOTIFY_TRIGGER.
 *
 * The registers are the state: the driver keeps no copy. They are 0 after
 * a function reset, and neuron_hw_notify_off() clears them when the core's
 * owner gives it up, so a new owner starts with every notification off.
 */
#include <uapi/linux/neuron.h>

#include "neuron.h"

#define NEURON_CORE_REG(c, r)	(NEURON_CORE_BASE(c) + (r))

/**
 * neuron_notify_ioctl_trigger() - NEURON_IOC_NOTIFY_TRIGGER: arm or disarm
 *	one completion notification of a core
 * @nfile: the caller's file
 * @arg: in: @core (< num_cores), @source (enum neuron_trigger_source),
 *	@index (DMA queue 0..15, or 0 for AXI_EVT_SEM), @enable (0 or 1),
 *	@reserved and @reserved1 zero; out: @dma_armed (bit per armed DMA
 *	queue) and @axi_armed (0/1), read back from the device after the
 *	change, and @axi_dropped (AXI_EVT_SEM records lost since the caller
 *	took the core, docs/decisions/0025-axi-dropped.md)
 *
 * Needs ownership of the core; a free core becomes the caller's
 * (docs/decisions/0005-tenancy.md). Serialised with the other handlers of the
 * device under &neuron_device.lock, so the read-modify-write of
 * M2S_TRIGGER loses no other queue's bit.
 *
 * Return: 0; -EINVAL (core, source, index or enable out of range, reserved
 * or reserved1 nonzero); -EPERM (another file owns the core); -ENOMEM (the file's event
 * queue, on an implicit claim); -EIO (stale file, device offline); -ENODEV
 * (device removed).
 */
int neuron_notify_ioctl_trigger(struct neuron_file *nfile,
				struct neuron_notify_trigger *arg)
{
	static const char cmd[] = "NOTIFY_TRIGGER";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, dma_reg, dma_val;
	int ret;

	if (c >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	switch (arg->source) {
	case NEURON_TRIGGER_DMA_QUEUE:
		if (arg->index >= NEURON_DMA_ENGINES)
			return neuron_bad_field(ndev, cmd, "index");
		break;
	case NEURON_TRIGGER_AXI_EVT_SEM:
		if (arg->index)
			return neuron_bad_field(ndev, cmd, "index");
		break;
	default:
		return neuron_bad_field(ndev, cmd, "source");
	}
	if (arg->enable > 1)
		return neuron_bad_field(ndev, cmd, "enable");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	if (arg->reserved1)
		return neuron_bad_field(ndev, cmd, "reserved1");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	ret = neuron_owner_claim(nfile, c);
	if (ret)
		goto out_unlock;
	dma_reg = NEURON_CORE_REG(c, NEURON_DMA_BASE + NEURON_DMA_M2S_TRIGGER);
	if (arg->source == NEURON_TRIGGER_DMA_QUEUE) {
		dma_val = neuron_rd(ndev, dma_reg) & NEURON_DMA_ENGINE_MASK;
		if (arg->enable)
			dma_val |= BIT(arg->index);
		else
			dma_val &= ~BIT(arg->index);
		neuron_wr(ndev, dma_reg, dma_val);
	} else {
		neuron_wr(ndev, NEURON_CORE_REG(c, NEURON_EVT_SEM_BASE +
						NEURON_EVT_SEM_AXI_NOTIFY),
			  arg->enable ? NEURON_EVT_SEM_AXI_NOTIFY_ON : 0);
	}
	/* the reads also flush the posted write */
	arg->dma_armed = neuron_rd(ndev, dma_reg) & NEURON_DMA_ENGINE_MASK;
	arg->axi_armed = neuron_rd(ndev, NEURON_CORE_REG(c, NEURON_EVT_SEM_BASE +
						NEURON_EVT_SEM_AXI_NOTIFY)) &
			 NEURON_EVT_SEM_AXI_NOTIFY_ON;
	/* u32 arithmetic: the register wraps like the base */
	arg->axi_dropped = neuron_hw_axi_dropped(ndev, c) -
			   ndev->axi_dropped_base[c];
out_unlock:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}
