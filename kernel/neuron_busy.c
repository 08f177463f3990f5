// SPDX-License-Identifier: GPL-2.0
/*
 * Engine busy time: how long each engine ran or waited on a program, for
 * fdinfo's nnq-engine-c<C>-<engine> lines (docs/metrics.md#fdinfo,
 * docs/decisions/0036-engine-busy-time.md).
 *
 * The device counts instructions, not time (docs/hardware.md has no busy
 * counter), so the driver times each program itself from what it sees:
 * an interval opens when SUBMIT writes START and closes at the first
 * sample that finds the engine neither RUNNING nor WAITING. Samples are
 * the hang scanner's (every engine, each period), every fdinfo read,
 * ENGINE_STATUS, the next SUBMIT and every reset the driver makes. The end
 * is therefore late by at most the time to the next sample, never early,
 * and a value once printed never goes down: while an interval is open it
 * counts up to "now", and it closes at a later "now" still.
 *
 * Everything here is under &neuron_device.lock; nothing here reads a
 * register (the callers hand in the state they read).
 */
#include <linux/ktime.h>

#include "neuron.h"

/* Close @c/@e's open interval at @now, if it has one. */
static void neuron_busy_close(struct neuron_device *ndev, u32 c, u32 e, u64 now)
{
	if (!ndev->busy_from[c][e])
		return;
	ndev->busy_total[c][e] += now - ndev->busy_from[c][e];
	ndev->busy_from[c][e] = 0;
}

/**
 * neuron_busy_start() - a program was just started on an engine
 * @ndev: device; &neuron_device.lock held
 * @core: core index, < num_cores
 * @engine: enum neuron_engine
 *
 * Opens the engine's busy interval at the current CLOCK_MONOTONIC time
 * (after closing one still open: SUBMIT only starts an IDLE engine).
 */
void neuron_busy_start(struct neuron_device *ndev, u32 core, u32 engine)
{
	u64 now = ktime_get_ns();

	lockdep_assert_held(&ndev->lock);
	neuron_busy_close(ndev, core, engine, now);
	/* 0 means "closed": a clock reading of 0 ns never happens after boot */
	ndev->busy_from[core][engine] = now ?: 1;
}

/**
 * neuron_busy_update() - an engine's state was just read
 * @ndev: device; &neuron_device.lock held
 * @core: core index, < num_cores
 * @engine: enum neuron_engine
 * @state: enum neuron_engine_state as NEURON_ENG_STATUS read (all ones from
 *	a device that is gone), or NEURON_ENGINE_IDLE after a reset
 *
 * Closes the open interval at the current time unless @state is RUNNING
 * or WAITING.
 */
void neuron_busy_update(struct neuron_device *ndev, u32 core, u32 engine,
			u32 state)
{
	lockdep_assert_held(&ndev->lock);
	if (!neuron_engine_state_busy(state))
		neuron_busy_close(ndev, core, engine, ktime_get_ns());
}

/**
 * neuron_busy_ns() - an engine's busy time so far
 * @ndev: device; &neuron_device.lock held
 * @core: core index, < num_cores
 * @engine: enum neuron_engine
 *
 * Return: ns the engine spent on programs since probe, the open interval
 * counted up to now; never less than an earlier return.
 */
u64 neuron_busy_ns(struct neuron_device *ndev, u32 core, u32 engine)
{
	u64 from = ndev->busy_from[core][engine];

	lockdep_assert_held(&ndev->lock);
	return ndev->busy_total[core][engine] +
	       (from ? ktime_get_ns() - from : 0);
}
