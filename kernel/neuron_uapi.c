// SPDX-License-Identifier: GPL-2.0
/*
 * Argument checking shared by every ioctl and mmap handler
 * (include/uapi/linux/neuron.h, "Errors common to every ioctl"), and the
 * names of UAPI values that sysfs and uevents print.
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

/**
 * neuron_reset_cause_name() - the name of an enum neuron_reset_cause
 * @cause: NEURON_RESET_REMOVE .. NEURON_RESET_SHUTDOWN
 *
 * The one spelling sysfs reset_counts and the NNQ_CAUSE uevent key use.
 *
 * Return: "remove", "flr", "pci_error", "suspend", "shutdown", or NULL for
 * any other value.
 */
const char *neuron_reset_cause_name(u32 cause)
{
	static const char *const names[NEURON_RESET_CAUSES] = {
		[NEURON_RESET_REMOVE] = "remove",
		[NEURON_RESET_FLR] = "flr",
		[NEURON_RESET_PCI_ERROR] = "pci_error",
		[NEURON_RESET_SUSPEND] = "suspend",
		[NEURON_RESET_SHUTDOWN] = "shutdown",
	};

	return cause < NEURON_RESET_CAUSES ? names[cause] : NULL;
}
