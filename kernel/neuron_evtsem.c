// SPDX-License-Identifier: GPL-2.0
/*
 * Host access to a core's EVT_SEM unit: 256 events and 256 semaphores, each
 * operation one 32-bit access in its window (docs/hardware.md#evt-sem,
 * #evt-sem-windows; docs/decisions/0001-original-architecture.md#arch-driver
 * "semaphore and event access"; regs.h NEURON_EVT_SEM_*;
 * include/uapi/linux/neuron.h NEURON_IOC_EVT_SEM).
 *
 * Each operation is one register access in its window (EVENT +0x0, READ
 * +0x1000, SET +0x1400, INC +0x1800, DEC +0x1C00) followed by a read of
 * the value, which is what the ioctl returns. The device does the
 * arithmetic (modulo 2^32) and wakes engines waiting on the semaphore or
 * event; a host write produces an AXI_EVT_SEM record only while the core's
 * AXI_EVT_SEM notification is armed (NEURON_IOC_NOTIFY_TRIGGER,
 * docs/device-model.md#axi-evt-sem).
 */
#include <uapi/linux/neuron.h>

#include "neuron.h"

#define NEURON_EVT_SEM_REG(c, r) \
	(NEURON_CORE_BASE(c) + NEURON_EVT_SEM_BASE + (r))

/**
 * neuron_evtsem_ioctl() - NEURON_IOC_EVT_SEM: read or update one entry
 * @nfile: the caller's file
 * @arg: in: @core (< num_cores), @index (0..255), @op (enum
 *	neuron_evt_sem_op), @value (operand of SEM_SET/INC/DEC, ignored by
 *	the others), @reserved zero; out: @value, the semaphore or event read
 *	back after the operation
 *
 * The operations of one core are serialised under &neuron_device.lock, so
 * the value returned is the result of this call unless an engine updated
 * the entry in between (engines are not stopped). A read needs a core the
 * caller owns or nobody owns; a write (SET, INC, DEC, EVENT_SET,
 * EVENT_CLEAR) needs ownership of the core, and a free core becomes the
 * caller's (docs/decisions/0005-tenancy.md).
 *
 * Return: 0; -EINVAL (core, index or op out of range, reserved nonzero);
 * -EPERM (a core another file owns); -EIO (stale file, device offline);
 * -ENODEV (device removed).
 */
int neuron_evtsem_ioctl(struct neuron_file *nfile, struct neuron_evt_sem *arg)
{
	static const char cmd[] = "EVT_SEM";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, i = arg->index;
	u32 wr_reg = 0, wr_val = arg->value, rd_reg;
	bool write = true;
	int ret;

	if (c >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (i >= NEURON_EVT_SEM_COUNT)
		return neuron_bad_field(ndev, cmd, "index");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	rd_reg = NEURON_EVT_SEM_READ(i);
	switch (arg->op) {
	case NEURON_SEM_READ:
		write = false;
		break;
	case NEURON_SEM_SET:
		wr_reg = NEURON_EVT_SEM_SET(i);
		break;
	case NEURON_SEM_INC:
		wr_reg = NEURON_EVT_SEM_INC(i);
		break;
	case NEURON_SEM_DEC:
		wr_reg = NEURON_EVT_SEM_DEC(i);
		break;
	case NEURON_EVENT_READ:
		rd_reg = NEURON_EVT_SEM_EVENT(i);
		write = false;
		break;
	case NEURON_EVENT_SET:
	case NEURON_EVENT_CLEAR:
		rd_reg = NEURON_EVT_SEM_EVENT(i);
		wr_reg = rd_reg;
		wr_val = arg->op == NEURON_EVENT_SET;
		break;
	default:
		return neuron_bad_field(ndev, cmd, "op");
	}

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	if (write) {
		ret = neuron_owner_claim(nfile, c);
		if (ret)
			goto out_unlock;
		neuron_wr(ndev, NEURON_EVT_SEM_REG(c, wr_reg), wr_val);
	} else if (ndev->owner[c] && ndev->owner[c] != nfile) {
		ret = -EPERM;
		goto out_unlock;
	}
	/* the read also flushes the posted write */
	arg->value = neuron_rd(ndev, NEURON_EVT_SEM_REG(c, rd_reg));
out_unlock:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}
