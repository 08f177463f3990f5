// SPDX-License-Identifier: GPL-2.0
/*
 * Argument checking shared by every ioctl and mmap handler
 * (include/uapi/linux/neuron.h, "Errors common to every ioctl").
 */
#include <linux/device.h>
#include <linux/sched.h>

#include "neuron.h"

/**
 * neuron_bad_field() - report an invalid ioctl field
 * @ndev: device
 * @cmd: ioctl name, e.g. "NQ_INIT"
 * @field: the field that failed validation
 *
 * Logs a rate-limited debug message naming the field (enable it with
 * dynamic debug: ``echo 'module neuron +p' > <debugfs>/dynamic_debug/control``
 * or ``insmod nnq.ko dyndbg=+p``).
 *
 * Return: -EINVAL, always.
 */
int neuron_bad_field(struct neuron_device *ndev, const char *cmd,
		     const char *field)
{
	dev_dbg_ratelimited(&ndev->pdev->dev, "%s: invalid %s (pid %d %s)\n",
			    cmd, field, task_pid_nr(current), current->comm);
	return -EINVAL;
}
