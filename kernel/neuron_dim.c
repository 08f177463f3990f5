// SPDX-License-Identifier: GPL-2.0
/*
 * Adaptive interrupt moderation of a queue (NEURON_NQ_F_ADAPTIVE) with the
 * kernel's DIM library, as network drivers moderate their completion
 * interrupts (docs/decisions/0047-adaptive-moderation.md).
 *
 * Per queue, not per core vector: THRESHOLD and COALESCE_NS are per-queue
 * registers, and the queues of one core carry unrelated streams (one may
 * flood while another sees a record a second); one DIM per vector would
 * give the slow queue the flood's moderation.
 *
 * Each threshold interrupt of an adaptive queue is one DIM event: the core
 * vector's thread (process context, neuron_irq.c) reads the queue's TAIL
 * (records written, the packet counter) and hands the sample to net_dim().
 * Every DIM_NEVENTS events DIM compares the rates and may choose another
 * profile; then it schedules its work item, which programs the profile's
 * THRESHOLD and COALESCE_NS under &neuron_device.lock, exactly as
 * NQ_COALESCE would (the device counts the records already unread toward
 * the new limits at once: no interrupt is lost, docs/device-model.md#coalescing).
 *
 * The profiles (neuron_dim_profile()) come from the owner's latency budget B
 * and the ring's entries E: profile i has the time limit (3/4 B) / 2^(4-i),
 * so the top profile's interrupt comes 3/4 B after the first unread record
 * and the last quarter of the budget is left for the interrupt thread and
 * the consumer's wake-up; and the count limit 2 * 4^i records, never above
 * E / 2, so an interrupt finds at least half of the ring free and a
 * moderated ring never fills while its consumer keeps up. A queue starts
 * on the top profile (the budget's own), as NQ_INIT with THRESHOLD E/2 and
 * COALESCE_NS 3/4 B would; DIM moves it left when fewer interrupts would
 * not deliver more records.
 *
 * Locking: &neuron_device.dim_lock (a spinlock) guards struct neuron_dim
 * and DIM's state against the interrupt thread; the work item takes
 * &neuron_device.lock (the queue table, the registers NQ_COALESCE writes)
 * and then dim_lock. A queue's teardown only marks its slot off: the work
 * item may still run, and then finds @on false or another queue's @seq.
 * neuron_dim_fini() cancels the work items once no interrupt thread runs.
 */
#include <linux/dim.h>
#include <linux/workqueue.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_trace.h"

/* The top profile: the budget's own (see the top of this file). */
#define NEURON_DIM_TOP	(NEURON_DIM_LEVELS - 1)

/**
 * neuron_dim_profile() - THRESHOLD and COALESCE_NS of one profile
 * @budget_ns: the queue's latency budget, nanoseconds, 1..NEURON_NQ_COALESCE_NS_MAX
 * @entries: the ring's records (size / 16), 4..65536
 * @level: the profile, < NEURON_DIM_LEVELS
 * @threshold: out: the count limit, records, 1..@entries / 2
 * @coalesce_ns: out: the time limit, nanoseconds
 *
 * The table at the top of this file.
 */
void neuron_dim_profile(u32 budget_ns, u32 entries, u32 level, u32 *threshold,
			u32 *coalesce_ns)
{
	u32 shift = NEURON_DIM_TOP - level;

	*coalesce_ns = max_t(u32, (budget_ns / 4 * 3) >> shift, 1);
	*threshold = clamp_t(u32, 2u << (2 * level), 1, entries / 2);
}

/* Program the profile @level of @d's queue. */
static void neuron_dim_apply(struct neuron_device *ndev, struct neuron_nq *nq,
			     struct neuron_dim *d, u32 level)
{
	u32 thr, ns;

	lockdep_assert_held(&ndev->lock);
	neuron_dim_profile(d->budget_ns, d->entries, level, &thr, &ns);
	neuron_wr(ndev, NEURON_NQ_REG(nq->core, nq->queue, NEURON_NQ_THRESHOLD),
		  thr);
	neuron_wr(ndev, NEURON_NOTIFIC_REG(nq->core,
					   NEURON_NQ_COALESCE_NS(nq->queue)), ns);
	nq->threshold = thr;
	nq->coalesce_ns = ns;
	trace_neuron_dim_profile(ndev->id, nq->core, nq->queue, d->level,
				 level, thr, ns);
	spin_lock(&ndev->dim_lock);
	d->level = level;
	d->threshold = thr;
	d->coalesce_ns = ns;
	d->changes++;
	spin_unlock(&ndev->dim_lock);
}

/* DIM's work item: program the profile DIM chose, measure again. */
static void neuron_dim_work(struct work_struct *work)
{
	struct dim *dim = container_of(work, struct dim, work);
	struct neuron_dim *d = container_of(dim, struct neuron_dim, dim);
	struct neuron_device *ndev = d->ndev;
	struct neuron_nq *nq;
	u32 level;
	bool on;

	mutex_lock(&ndev->lock);
	nq = ndev->nq[d->core][d->queue];
	spin_lock(&ndev->dim_lock);
	on = d->on && nq && nq->seq == d->seq;
	level = min_t(u32, dim->profile_ix, NEURON_DIM_TOP);
	spin_unlock(&ndev->dim_lock);
	if (on && level != d->level)
		neuron_dim_apply(ndev, nq, d, level);
	spin_lock(&ndev->dim_lock);
	dim->state = DIM_START_MEASURE;
	spin_unlock(&ndev->dim_lock);
	mutex_unlock(&ndev->lock);
}

/**
 * neuron_dim_init() - prepare every queue slot's DIM state
 * @ndev: device, before its interrupts are requested
 */
void neuron_dim_init(struct neuron_device *ndev)
{
	u32 c, q;

	for (c = 0; c < NEURON_MAX_CORES; c++)
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
			struct neuron_dim *d = &ndev->dim[c][q];

			memset(d, 0, sizeof(*d));
			d->ndev = ndev;
			d->core = c;
			d->queue = q;
			INIT_WORK(&d->dim.work, neuron_dim_work);
		}
}

/**
 * neuron_dim_fini() - stop adaptive moderation on every queue
 * @ndev: device; no interrupt thread runs any more (neuron_irq_fini()),
 *	neither &neuron_device.lock nor the rwsem held
 *
 * Waits for the work items, so none runs after this returns.
 */
void neuron_dim_fini(struct neuron_device *ndev)
{
	u32 c, q;

	spin_lock_irq(&ndev->dim_lock);
	for (c = 0; c < NEURON_MAX_CORES; c++)
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			ndev->dim[c][q].on = false;
	spin_unlock_irq(&ndev->dim_lock);
	for (c = 0; c < NEURON_MAX_CORES; c++)
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			cancel_work_sync(&ndev->dim[c][q].dim.work);
}

/**
 * neuron_dim_start() - start adaptive moderation of a new queue
 * @nq: a queue made with NEURON_NQ_F_ADAPTIVE, enabled on its top profile
 *	(neuron_dim_profile() of NEURON_DIM_LEVELS - 1); &neuron_device.lock
 *	held
 * @budget_ns: its latency budget, nanoseconds, 1..NEURON_NQ_COALESCE_NS_MAX
 */
void neuron_dim_start(struct neuron_nq *nq, u32 budget_ns)
{
	struct neuron_device *ndev = nq->ndev;
	struct neuron_dim *d = &ndev->dim[nq->core][nq->queue];
	struct dim *dim = &d->dim;

	lockdep_assert_held(&ndev->lock);
	spin_lock(&ndev->dim_lock);
	d->seq = nq->seq;
	d->budget_ns = budget_ns;
	d->entries = nq->size / NEURON_ISA_NOTIFICATION_NBYTES;
	d->events = 0;
	d->tail = 0;	/* enabling reset TAIL */
	d->records = 0;
	d->level = NEURON_DIM_TOP;
	d->threshold = nq->threshold;
	d->coalesce_ns = nq->coalesce_ns;
	d->changes = 0;
	/* DIM's own state; its work item is left alone (it may be queued) */
	dim->state = DIM_START_MEASURE;
	memset(&dim->prev_stats, 0, sizeof(dim->prev_stats));
	memset(&dim->start_sample, 0, sizeof(dim->start_sample));
	memset(&dim->measuring_sample, 0, sizeof(dim->measuring_sample));
	dim->profile_ix = NEURON_DIM_TOP;
	dim->mode = DIM_CQ_PERIOD_MODE_START_FROM_EQE;
	dim->tune_state = DIM_GOING_RIGHT;
	dim->steps_right = 0;
	dim->steps_left = 0;
	dim->tired = 0;
	d->on = true;
	spin_unlock(&ndev->dim_lock);
}

/**
 * neuron_dim_stop() - end adaptive moderation of a queue
 * @nq: the queue (being torn down, or fixed by NQ_COALESCE);
 *	&neuron_device.lock held
 *
 * Its registers keep the profile last programmed until the caller writes
 * others; a work item of the slot that runs later changes nothing.
 */
void neuron_dim_stop(struct neuron_nq *nq)
{
	struct neuron_device *ndev = nq->ndev;
	struct neuron_dim *d = &ndev->dim[nq->core][nq->queue];

	lockdep_assert_held(&ndev->lock);
	spin_lock(&ndev->dim_lock);
	if (d->seq == nq->seq)
		d->on = false;
	spin_unlock(&ndev->dim_lock);
}

/**
 * neuron_dim_irq() - one threshold interrupt of some queues of a core
 * @ndev: device
 * @core: the core, < num_cores
 * @queues: THRESHOLD_STATUS bits: the queues whose interrupt this is
 *
 * Called by the core vector's thread (process context). One DIM sample
 * per adaptive queue named: its events and the records written (TAIL).
 */
void neuron_dim_irq(struct neuron_device *ndev, u32 core, unsigned long queues)
{
	struct dim_sample s;
	unsigned int q;
	u32 tail;

	for_each_set_bit(q, &queues, NEURON_NUM_SW_QUEUES) {
		struct neuron_dim *d = &ndev->dim[core][q];

		if (!READ_ONCE(d->on))
			continue;
		tail = neuron_rd(ndev, NEURON_NQ_REG(core, q, NEURON_NQ_TAIL));
		spin_lock(&ndev->dim_lock);
		if (d->on && tail != U32_MAX) {
			d->records += tail - d->tail;
			d->tail = tail;
			d->events++;
			dim_update_sample(d->events, d->records,
					  d->records * NEURON_ISA_NOTIFICATION_NBYTES,
					  &s);
#if IS_ENABLED(CONFIG_DIMLIB)
			net_dim(&d->dim, s);
#endif
		}
		spin_unlock(&ndev->dim_lock);
	}
}

/**
 * neuron_dim_show() - a queue slot's adaptive moderation, for sysfs
 * @ndev: device
 * @core: core, < NEURON_MAX_CORES
 * @queue: queue, < NEURON_NUM_SW_QUEUES
 * @level: out: the profile programmed, < NEURON_DIM_LEVELS
 * @threshold: out: its THRESHOLD, records
 * @coalesce_ns: out: its COALESCE_NS, nanoseconds
 * @changes: out: profile changes since the queue was made
 *
 * Return: whether the slot's queue is moderated adaptively now.
 */
bool neuron_dim_show(struct neuron_device *ndev, u32 core, u32 queue,
		     u32 *level, u32 *threshold, u32 *coalesce_ns, u64 *changes)
{
	struct neuron_dim *d = &ndev->dim[core][queue];
	bool on;

	spin_lock_irq(&ndev->dim_lock);
	on = d->on;
	*level = d->level;
	*threshold = d->threshold;
	*coalesce_ns = d->coalesce_ns;
	*changes = d->changes;
	spin_unlock_irq(&ndev->dim_lock);
	return on;
}
