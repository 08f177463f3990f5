// SPDX-License-Identifier: GPL-2.0
/*
 * Pause points between the steps of the disable and enable paths
 * (neuron_lifecycle.c), for tests that must put a client's close, munmap,
 * ioctl, read() or poll() inside one exact window of a reset or removal
 * instead of hoping a loop hits it
 * (docs/decisions/0011-reset-and-recovery.md#pause-points).
 *
 * Two module parameters, both root only:
 *
 *   pause_step  (rw) 0: off. N (enum neuron_pause_step): the next device
 *               to reach step N waits there until pause_step changes (or
 *               NEURON_PAUSE_MAX_MS pass, so a broken test cannot wedge a
 *               reset for good).
 *   paused_at   (ro) the step a device is waiting at now, or 0.
 *
 * A test writes N to pause_step, starts the reset or unbind in another
 * process, waits until paused_at reads N, makes its call, then writes 0.
 * A pause holds no lock of the driver's: every entry point can run.
 * Off, a pause point costs one READ_ONCE(). One point is not a reset's:
 * NEURON_PAUSE_SUBMIT_CHECKED, inside a SUBMIT between its check of the
 * program and the device's lock; it holds its file's mem_lock and is
 * inside neuron_enter_file(), and shows what waits for a SUBMIT's check
 * and what does not (tenancy_test's submit_check).
 */
#include <linux/moduleparam.h>
#include <linux/wait.h>

#include "neuron.h"

/* The longest a pause point waits: a test makes its call in far less. */
#define NEURON_PAUSE_MAX_MS	30000

static DECLARE_WAIT_QUEUE_HEAD(neuron_pause_wq);
static unsigned int neuron_pause_step;
static unsigned int neuron_paused_at;

static int neuron_pause_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint(val, kp);

	if (!ret)
		wake_up_all(&neuron_pause_wq);
	return ret;
}

static const struct kernel_param_ops neuron_pause_ops = {
	.set = neuron_pause_set,
	.get = param_get_uint,
};

module_param_cb(pause_step, &neuron_pause_ops, &neuron_pause_step, 0600);
MODULE_PARM_DESC(pause_step,
		 "test only: step of the disable/enable path to wait at (enum neuron_pause_step, 0 off)");
module_param_named(paused_at, neuron_paused_at, uint, 0400);
MODULE_PARM_DESC(paused_at, "test only: the step a device waits at now, 0 if none");

/**
 * neuron_pause() - wait at a step of the disable or enable path if asked to
 * @ndev: device taking the step
 * @step: the step just completed, enum neuron_pause_step
 *
 * Called with no lock of the driver's held (NEURON_PAUSE_SUBMIT_CHECKED:
 * its file's mem_lock and &neuron_device.rwsem for reading). Returns at
 * once unless the module parameter pause_step names @step; then waits
 * until it changes, at most NEURON_PAUSE_MAX_MS.
 */
void neuron_pause(struct neuron_device *ndev, enum neuron_pause_step step)
{
	if (READ_ONCE(neuron_pause_step) != step)
		return;
	WRITE_ONCE(neuron_paused_at, step);
	dev_info(&ndev->pdev->dev, "paused after step %u\n", step);
	if (!wait_event_timeout(neuron_pause_wq,
				READ_ONCE(neuron_pause_step) != step,
				msecs_to_jiffies(NEURON_PAUSE_MAX_MS)))
		dev_warn(&ndev->pdev->dev, "pause after step %u timed out\n",
			 step);
	WRITE_ONCE(neuron_paused_at, 0);
}
