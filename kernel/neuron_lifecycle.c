// SPDX-License-Identifier: GPL-2.0
/*
 * The one disable path and the one enable path
 * (docs/decisions/0011-reset-and-recovery.md; docs/device-model.md "Reset,
 * quiesce and failure").
 *
 * remove(), shutdown(), reset_prepare() (FLR, sysfs reset), suspend and
 * the AER error_detected() callback all call neuron_dev_disable(); probe,
 * reset_done(), resume and the AER slot_reset() call neuron_dev_enable().
 * Disable, in order:
 *
 *  1. with &neuron_device.rwsem held for writing (so every call already
 *     inside has left), mark the device dead (remove) or offline and stale
 *     every open file (anything else): later calls get -ENODEV or -EIO;
 *     and turn every open file's status page GONE or STALE
 *     (neuron_status.c), so userspace stops touching its mappings before
 *     the steps below take them away;
 *  2. stop every engine, note what each queue held unread, disable every
 *     queue, and wait for the device to report QUIESCED (bounded; the log
 *     names the cores that did not) - skipped for a device that reads all
 *     ones or whose link is frozen;
 *  3. zap every ring and doorbell mapping of every file (later accesses
 *     raise no signal: a host ring faults its own pages back, a device
 *     ring or doorbell a harmless page, docs/decisions.md
 *     #mapping-after-reset); status pages stay mapped;
 *  4. clear bus mastering, so not even a device that failed to quiesce can
 *     write host memory any more, then mask and free the MSI-X vectors;
 *  5. free every queue and take its ring from the device (device memory
 *     freed, host pages DMA-unmapped: they go with their last mapping)
 *     and free every device-memory allocation, and forget the cores'
 *     owners;
 *  6. report one NEURON_EDGE_RESET event naming the cause, the number of
 *     queues torn down and the records they held unread.
 *
 * Enable resets the device and waits until it is ready before it turns
 * bus mastering on, then requests the vectors and lets calls in again.
 * The PCI core serialises these callbacks with the device lock, so the two
 * paths never run concurrently for one device.
 */
#include <linux/pci.h>

#include "neuron.h"
#include "neuron_trace.h"

/*
 * A KOBJ_CHANGE uevent of /dev/nnqN's class device, so udev rules and
 * fleet agents see state changes without polling
 * (docs/decisions/0011-reset-and-recovery.md#uevents): NNQ_EVENT and NNQ_STATE
 * both offline|online|failed|removing (NNQ_EVENT is the one key every uevent of
 * ours has, hang and fatal too) and, when the change has one,
 * NNQ_CAUSE=<enum neuron_reset_cause name>.
 */
static void neuron_uevent(struct neuron_device *ndev, const char *state,
			  enum neuron_reset_cause cause)
{
	char ev[32], st[32], ca[32];
	char *envp[4] = { ev, st, ca, NULL };

	if (!ndev->cdevice)
		return;
	snprintf(ev, sizeof(ev), "NNQ_EVENT=%s", state);
	snprintf(st, sizeof(st), "NNQ_STATE=%s", state);
	if (neuron_reset_cause_name(cause))
		snprintf(ca, sizeof(ca), "NNQ_CAUSE=%s",
			 neuron_reset_cause_name(cause));
	else
		envp[2] = NULL;
	kobject_uevent_env(&ndev->cdevice->kobj, KOBJ_CHANGE, envp);
}

/**
 * neuron_dev_removing() - announce a removal while the class device exists
 * @ndev: device whose remove() has begun, class device still registered
 *
 * Sends the KOBJ_CHANGE uevent NNQ_EVENT=removing NNQ_STATE=removing
 * NNQ_CAUSE=remove (docs/decisions/0011-reset-and-recovery.md#uevents).
 * remove() unregisters the
 * class device before the disable path runs, so the disable path's own
 * uevent finds none and the kernel's remove uevent of nnqN comes last.
 */
void neuron_dev_removing(struct neuron_device *ndev)
{
	neuron_uevent(ndev, "removing", NEURON_RESET_REMOVE);
}

/**
 * neuron_dev_failed() - announce that PCI error recovery gave up
 * @ndev: device, offline (the disable path ran) and staying so
 *
 * Called when AER recovery ends in PCI_ERS_RESULT_DISCONNECT (a permanent
 * failure, or a link reset after which the device did not come back). The
 * last uevent said offline and no online will follow, so a listener would
 * wait for ever: this sends the KOBJ_CHANGE uevent NNQ_EVENT=failed
 * NNQ_STATE=failed NNQ_CAUSE=pci_error, and sysfs state reads "failed"
 * until the device is removed
 * (docs/decisions/0011-reset-and-recovery.md#uevents).
 */
void neuron_dev_failed(struct neuron_device *ndev)
{
	WRITE_ONCE(ndev->failed, 1);
	neuron_uevent(ndev, "failed", NEURON_RESET_PCI_ERROR);
}

/**
 * neuron_dev_enable() - bring a reset (or newly probed) device into service
 * @ndev: device, BAR0 mapped, geometry and instance number known
 *
 * Resets the device and waits for READY (neuron_hw_reset()), puts every
 * core's semaphores, events, $S and flags back to their reset values
 * (neuron_hw_scrub_all()), enables bus mastering, allocates and requests
 * the MSI-X vectors and unmasks the interrupt causes, saves config space
 * for the PCI core's next restore, then clears @offline so calls are
 * accepted again (files opened before the last reset stay stale).
 *
 * Return: 0; -ENODEV (the device reads all ones); -ETIMEDOUT (not ready);
 * or the error of neuron_irq_init(). On error bus mastering is off again.
 */
int neuron_dev_enable(struct neuron_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int ret;

	ret = neuron_hw_reset(ndev);
	if (ret)
		goto out;
	neuron_hw_scrub_all(ndev);
	pci_set_master(pdev);
	ret = neuron_irq_init(ndev);
	if (ret) {
		pci_clear_master(pdev);
		goto out;
	}
	ndev->enabled = true;
	/*
	 * The PCI core puts this config space back after the next FLR, AER
	 * link reset or resume, and putting it back uses it up: saved on
	 * every enable, or a fatal AER error after an FLR finds memory
	 * decoding off
	 * (docs/decisions/0011-reset-and-recovery.md#saved-config).
	 */
	pci_save_state(pdev);
	neuron_pause(ndev, NEURON_PAUSE_ENABLE_READY);

	down_write(&ndev->rwsem);
	ndev->offline = 0;
	WRITE_ONCE(ndev->failed, 0);
	up_write(&ndev->rwsem);
	neuron_hang_start(ndev);
	neuron_uevent(ndev, "online", 0);
out:
	trace_neuron_enable(ndev->id, ret);
	return ret;
}

/*
 * Step 1: no call is inside once this returns, and every open file's
 * status page says so; see the top of the file.
 */
static void neuron_dev_fence(struct neuron_device *ndev,
			     enum neuron_reset_cause cause)
{
	down_write(&ndev->rwsem);
	if (cause != NEURON_RESET_REMOVE && cause != NEURON_RESET_SHUTDOWN)
		ndev->reset_gen++;
	/* the pages first: nothing (poll(), read()) reports the loss sooner */
	mutex_lock(&ndev->lock);
	neuron_status_end(ndev, cause);
	mutex_unlock(&ndev->lock);
	if (cause == NEURON_RESET_REMOVE)
		WRITE_ONCE(ndev->dead, 1);	/* read locklessly by read()/poll() */
	else
		ndev->offline = 1;
	up_write(&ndev->rwsem);
	neuron_uevent(ndev, cause == NEURON_RESET_REMOVE ? "removing" : "offline",
		      cause);
}

/**
 * neuron_dev_disable() - quiesce the device and release everything it uses
 * @ndev: device
 * @cause: why: enum neuron_reset_cause; NEURON_RESET_REMOVE marks the
 *	device dead for good, every other cause marks it offline until
 *	neuron_dev_enable()
 * @hw_ok: the device may be touched: false after a surprise removal (reads
 *	all ones, also detected here) or when AER reports a frozen link
 *
 * Runs the six steps at the top of this file. Idempotent: a second call
 * (say remove() after a failed AER recovery) finds nothing left to free.
 * Readers blocked in read() or poll() are woken by the RESET event.
 */
void neuron_dev_disable(struct neuron_device *ndev,
			enum neuron_reset_cause cause, bool hw_ok)
{
	struct neuron_event ev = {
		.edge = NEURON_EDGE_RESET,
		.cause = cause,
	};
	u64 unread = 0;
	u32 queues;

	neuron_dev_fence(ndev, cause);
	neuron_hang_stop(ndev);
	neuron_pause(ndev, NEURON_PAUSE_FENCED);
	if (hw_ok && neuron_hw_gone(ndev)) {
		hw_ok = false;
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_DEVICE_GONE, NEURON_HWA_REPLACE_DEVICE,
				"reads all ones at %s: torn down without touching the device",
				neuron_reset_cause_name(cause));
	}
	trace_neuron_disable_begin(ndev->id, cause, hw_ok);

	/*
	 * Each step takes &neuron_device.lock for itself: a release() that
	 * comes in between finds the device offline or dead and leaves what
	 * the device may still write to the steps below (neuron_release()).
	 */
	mutex_lock(&ndev->lock);
	neuron_engine_stop_all(ndev, hw_ok);
	mutex_unlock(&ndev->lock);
	neuron_pause(ndev, NEURON_PAUSE_ENGINES_STOPPED);

	mutex_lock(&ndev->lock);
	neuron_owner_forget_all(ndev);
	mutex_unlock(&ndev->lock);
	neuron_pause(ndev, NEURON_PAUSE_OWNERS_FORGOTTEN);

	mutex_lock(&ndev->lock);
	queues = neuron_nq_stop_all(ndev, hw_ok, &unread);
	mutex_unlock(&ndev->lock);
	neuron_pause(ndev, NEURON_PAUSE_QUEUES_STOPPED);

	if (hw_ok)
		neuron_hw_wait_quiesced(ndev);
	neuron_pause(ndev, NEURON_PAUSE_QUIESCED);

	mutex_lock(&ndev->lock);
	neuron_mmap_zap_all(ndev);
	mutex_unlock(&ndev->lock);
	neuron_pause(ndev, NEURON_PAUSE_ZAPPED);

	if (ndev->enabled) {
		pci_clear_master(ndev->pdev);
		neuron_pause(ndev, NEURON_PAUSE_BUS_MASTER_OFF);
		neuron_irq_fini(ndev);
		ndev->enabled = false;
		neuron_pause(ndev, NEURON_PAUSE_VECTORS_FREED);
	}

	mutex_lock(&ndev->lock);
	neuron_nq_teardown_all(ndev);
	mutex_unlock(&ndev->lock);
	neuron_pause(ndev, NEURON_PAUSE_RINGS_FREED);

	mutex_lock(&ndev->lock);
	neuron_mem_forget_all(ndev);
	ndev->reset_count[cause]++;
	ndev->reset_lost += unread;
	mutex_unlock(&ndev->lock);
	neuron_pause(ndev, NEURON_PAUSE_MEMORY_FORGOTTEN);

	ev.queues = queues;
	ev.count = unread;
	trace_neuron_disable_end(ndev->id, cause, queues, unread);
	if (queues || unread)
		dev_warn(&ndev->pdev->dev, "reset (cause %u): %u queues torn down, %llu records unread\n",
			 cause, queues, unread);
	neuron_events_broadcast(ndev, &ev);
	neuron_pause(ndev, NEURON_PAUSE_REPORTED);
}
