// SPDX-License-Identifier: GPL-2.0
/*
 * Recovery: PCI error handling (AER), function reset (FLR, sysfs "reset")
 * and power management (suspend/resume, freeze/thaw, poweroff/restore).
 * docs/decisions/0011-reset-and-recovery.md says what open files see.
 *
 * Every case that loses the device's state goes through the one disable
 * path and comes back through the one enable path (neuron_lifecycle.c):
 * every queue is torn down and counted in a NEURON_EDGE_RESET event, files
 * open at the time turn stale (-EIO), and new files work once the device
 * is enabled again. A non-fatal uncorrectable error loses nothing: the
 * device keeps running and only a NEURON_EDGE_PCI_ERROR event reports it.
 */
#include <linux/pci.h>
#include <linux/pm.h>

#include "neuron.h"
#include "neuron_trace.h"

static void neuron_report_pci_error(struct neuron_device *ndev, u32 what)
{
	struct neuron_event ev = {
		.edge = NEURON_EDGE_PCI_ERROR,
		.cause = what,
	};

	trace_neuron_pci_error(ndev->id, what);
	neuron_events_broadcast(ndev, &ev);
}

/**
 * neuron_error_detected() - AER: an uncorrectable error was reported
 * @pdev: the PCI function
 * @state: pci_channel_io_normal (non-fatal), _frozen (fatal: the link is
 *	being reset) or _perm_failure
 *
 * Non-fatal: nothing is torn down (PCI_ERS_RESULT_CAN_RECOVER; the core
 * then calls mmio_enabled). Fatal: the disable path runs without touching
 * the device, whose MMIO may not answer (PCI_ERS_RESULT_NEED_RESET; the
 * core resets the link and calls slot_reset). Permanent failure: the same,
 * and the device stays offline until removal (PCI_ERS_RESULT_DISCONNECT).
 * Each case is reported as a NEURON_EDGE_PCI_ERROR event.
 *
 * Return: the pci_ers_result_t above.
 */
static pci_ers_result_t neuron_error_detected(struct pci_dev *pdev,
					      pci_channel_state_t state)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	/* a failed recovery after this logs recovery-failed itself */
	switch (state) {
	case pci_channel_io_normal:
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_PCI_NONFATAL, NEURON_HWA_NONE,
				"PCI error detected (channel state %d): nothing torn down",
				state);
		neuron_report_pci_error(ndev, NEURON_PCI_ERROR_NONFATAL);
		return PCI_ERS_RESULT_CAN_RECOVER;
	case pci_channel_io_frozen:
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_PCI_FATAL, NEURON_HWA_NONE,
				"PCI error detected (channel state %d): queues torn down, the link is reset",
				state);
		neuron_report_pci_error(ndev, NEURON_PCI_ERROR_FATAL);
		neuron_dev_disable(ndev, NEURON_RESET_PCI_ERROR, false);
		return PCI_ERS_RESULT_NEED_RESET;
	default:
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_PCI_PERMANENT, NEURON_HWA_REPLACE_DEVICE,
				"PCI error detected (channel state %d): offline until removed",
				state);
		neuron_report_pci_error(ndev, NEURON_PCI_ERROR_PERMANENT);
		neuron_dev_disable(ndev, NEURON_RESET_PCI_ERROR, false);
		neuron_dev_failed(ndev);
		return PCI_ERS_RESULT_DISCONNECT;
	}
}

/**
 * neuron_mmio_enabled() - AER: MMIO works again after a non-fatal error
 * @pdev: the PCI function
 *
 * Return: PCI_ERS_RESULT_RECOVERED if the device answers with its identity,
 * else PCI_ERS_RESULT_NEED_RESET.
 */
static pci_ers_result_t neuron_mmio_enabled(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	if (neuron_rd(ndev, NEURON_REG_ID) != NEURON_ID_MAGIC)
		return PCI_ERS_RESULT_NEED_RESET;
	return PCI_ERS_RESULT_RECOVERED;
}

/**
 * neuron_slot_reset() - AER: the link was reset
 * @pdev: the PCI function
 *
 * Restores the saved config space and runs the enable path (reset, wait
 * READY, bus mastering, vectors). A device that was running normally
 * (non-fatal error escalated by another driver on the link) is first taken
 * through the disable path, since the reset lost its state.
 *
 * Return: PCI_ERS_RESULT_RECOVERED, or PCI_ERS_RESULT_DISCONNECT if the
 * device did not come back.
 */
static pci_ers_result_t neuron_slot_reset(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	if (ndev->enabled)
		neuron_dev_disable(ndev, NEURON_RESET_PCI_ERROR, false);
	pci_restore_state(pdev);
	if (neuron_dev_enable(ndev)) {
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_RECOVERY_FAILED, NEURON_HWA_REPLACE_DEVICE,
				"did not recover after the link reset: offline until removed");
		neuron_dev_failed(ndev);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	dev_info(&pdev->dev, "recovered after the link reset\n");
	return PCI_ERS_RESULT_RECOVERED;
}

/**
 * neuron_error_resume() - AER: recovery is complete
 * @pdev: the PCI function
 *
 * Nothing left to do: slot_reset already accepted calls again.
 */
static void neuron_error_resume(struct pci_dev *pdev)
{
	dev_info(&pdev->dev, "PCI error recovery done\n");
}

/**
 * neuron_reset_prepare() - a function reset (FLR, sysfs reset) is coming
 * @pdev: the PCI function
 *
 * Runs the disable path; the PCI core saves config space and resets the
 * function afterwards.
 */
static void neuron_reset_prepare(struct pci_dev *pdev)
{
	neuron_dev_disable(pci_get_drvdata(pdev), NEURON_RESET_FLR, true);
}

/**
 * neuron_reset_done() - the function reset is over
 * @pdev: the PCI function, config space restored by the core
 *
 * Runs the enable path; on failure the device stays offline (calls get
 * -EIO) until it is removed.
 */
static void neuron_reset_done(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	if (neuron_dev_enable(ndev))
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_RECOVERY_FAILED, NEURON_HWA_REPLACE_DEVICE,
				"did not come back after the function reset: offline until removed");
}

const struct pci_error_handlers neuron_err_handlers = {
	.error_detected = neuron_error_detected,
	.mmio_enabled = neuron_mmio_enabled,
	.slot_reset = neuron_slot_reset,
	.resume = neuron_error_resume,
	.reset_prepare = neuron_reset_prepare,
	.reset_done = neuron_reset_done,
};

/**
 * neuron_suspend() - system sleep, hibernation image or poweroff
 * @dev: the PCI function's struct device
 *
 * Runs the disable path: the device loses its state in D3 (the PCI core
 * saves config space and powers it down after this returns).
 *
 * Return: 0.
 */
static int neuron_suspend(struct device *dev)
{
	neuron_dev_disable(dev_get_drvdata(dev), NEURON_RESET_SUSPEND, true);
	return 0;
}

/**
 * neuron_resume() - back from system sleep or hibernation
 * @dev: the PCI function's struct device, in D0, config space restored
 *
 * Return: 0 or the error of the enable path (the device then stays
 * offline: calls get -EIO).
 */
static int neuron_resume(struct device *dev)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int ret = neuron_dev_enable(ndev);

	if (ret)
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_RECOVERY_FAILED, NEURON_HWA_REPLACE_DEVICE,
				"did not come back after resume (%d): offline until removed",
				ret);
	return ret;
}

DEFINE_SIMPLE_DEV_PM_OPS(neuron_pm_ops, neuron_suspend, neuron_resume);
