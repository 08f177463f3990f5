// SPDX-License-Identifier: GPL-2.0
/*
 * MSI-X interrupt handling: the error and overflow edges, the only
 * notification-path interrupts (docs/hardware.md#intr-edge, #msix;
 * docs/decisions/0004-device-details.md#msix-vectors,
 * docs/decisions/0001-original-architecture.md#arch-driver; regs.h).
 *
 * NEURON_MSIX_VECTORS(cores) vectors: vector c is core c's NOTIFIC summary
 * (tpb_notific_intr_0..8 in INTR_STATUS), then one for the throttle edge,
 * then one for device faults. Each is requested with its own name,
 * "nnq<N>-core<c>", "nnq<N>-throttle", "nnq<N>-fault", so they show
 * in /proc/interrupts.
 *
 * A handler reads its status register, writes the bits back to clear them
 * (W1C), counts each cause under &neuron_device.irq_lock and turns each
 * nonzero status it read into one struct neuron_event per core it names,
 * delivered three ways
 * (docs/decisions/0001-original-architecture.md#arch-driver): to the event
 * queues of the core's owner and the watchers and to the eventfds bound to
 * queues whose threshold was reached (neuron_events.c), and as a generic
 * netlink multicast (neuron_genl.c). THROTTLE and FAULT events are rate limited
 * per core and kind (neuron_irq_ratelimit(),
 * docs/decisions/0008-event-ratelimit.md). The core handler also clears and
 * counts THRESHOLD_STATUS (bit per queue that reached its threshold;
 * the device re-arms a threshold when the consumer moves HEAD). A status of
 * all ones means the function is gone and is not counted.
 *
 * Threaded handlers. The handlers are the thread functions of
 * request_threaded_irq() with the default primary handler (IRQF_ONESHOT),
 * so all of the above runs in process context: the netlink message is
 * allocated with GFP_KERNEL and sent with no risk of freeing an skb in hard
 * interrupt context, and a burst of edges (one per record in a backpressure
 * or disabled-queue storm) costs a thread wake-up instead of hard-IRQ time
 * with interrupts off. Nothing is lost meanwhile: the device latches causes
 * in its status registers until cleared, and an edge raised while the
 * thread runs makes it run again. Latency does not matter here: interrupts
 * carry only error, overflow, threshold and throttle edges; completions are
 * polled from the rings (docs/hardware.md#host-paths, #host-drain). The threads
 * take only irq_lock and ev_lock (neuron.h), never the rwsem or
 * &neuron_device.lock, so remove() can free them while holding neither.
 *
 * Interrupt storms. A NOTIFIC cause that the device asserts again as soon
 * as it is cleared (a stuck or screaming source; the device model's
 * fault-intr-storm property) would keep a core's thread, a SCHED_FIFO
 * task, running for ever and starve the rest of the system. The signature
 * does not depend on the machine's speed: every run of the handler uses
 * all NEURON_IRQ_MAX_LOOPS re-reads because the status is never found
 * clear. After NEURON_IRQ_STORM_RUNS such runs in a row the causes present
 * in every read (or, if they alternate, those of the last run) are masked
 * in INTR_MASK for NEURON_IRQ_STORM_HOLDOFF_MS, the storm is counted
 * (sysfs intr_storms, fault_counts "intr_storm") and reported as a FAULT
 * event with cause NEURON_FAULT_INTR_STORM and the core. A delayed work
 * item then unmasks them; a cause still latched raises a new edge at once
 * and is handled normally (its records were never at stake: they are in
 * the rings), or storms again and is masked again. So a storm costs at
 * most NEURON_IRQ_STORM_RUNS * NEURON_IRQ_MAX_LOOPS edges per hold-off,
 * other causes of the core keep being delivered, and nothing but edge
 * counts is lost. Causes masked for a storm are left latched in
 * INTR_STATUS (not cleared, not counted) until they are unmasked.
 * The completion cause (intr_0, THRESHOLD) is never masked: under heavy
 * legitimate traffic it fires again at once after every clear, and
 * masking it would stall every eventfd consumer of the core for the
 * hold-off exactly at peak; its cost stays bounded by the re-read budget.
 *
 * Interrupt budget. THROTTLE and intr_0 (THRESHOLD) are sources a tenant's
 * program drives at will (a loop of THROTTLE instructions; a threshold of
 * 1 and a HEAD moved after every record), and each edge would cost an
 * interrupt thread run that no tenant pays for. So each core has a budget
 * of &neuron_device.irqlimit_burst edges of each per
 * &neuron_device.irqlimit_interval_ms (sysfs irq_ratelimit, default
 * "32 10"; neuron_irq_budget()): the edge that uses it up masks the source
 * until the interval ends, and the hold is counted against the core (sysfs
 * irq_holds). intr_0 is masked in the core's own INTR_MASK, so only that
 * core's eventfd consumers wait, at most one interval, and are then woken
 * once for every queue that reached its threshold meanwhile (the bits stay
 * latched): coalescing, not loss. The device has no per-core mask for the
 * throttle edge (docs/device-model.md "Interrupts"), so a THROTTLE hold
 * disables the throttle vector: every core's throttle edges wait for the
 * end of the interval, latched in THROTTLE_STATUS, and each core's then
 * arrive as one edge; the throttle records in the rings are not touched
 * (docs/decisions/0039-interrupt-ratelimit.md). The storm machinery's
 * reasons not to mask intr_0 hold for its 100 ms hold-off of a cause that
 * never clears; this budget is per core and ends with its interval.
 */
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_trace.h"

/* Bounded re-reads of INTR_STATUS per interrupt, see neuron_irq_core(). */
#define NEURON_IRQ_MAX_LOOPS	8
/*
 * Storm: handler runs in a row that used every re-read (top of file). The
 * edges of one storm episode, 16 * 8 = 128, stay below an event queue's
 * NEURON_EVENT_QUEUE_LEN, so the FAULT event reporting the storm finds
 * room in the queue of a reader that keeps up between episodes.
 */
#define NEURON_IRQ_STORM_RUNS	16
/* How long the causes of a storm stay masked. */
#define NEURON_IRQ_STORM_HOLDOFF_MS	100

/* A read of all ones: the function is gone (surprise removal). */
static bool neuron_irq_gone(u32 status)
{
	return status == U32_MAX;
}

static void neuron_irq_count_spurious(struct neuron_device *ndev)
{
	spin_lock(&ndev->irq_lock);
	ndev->spurious_count++;
	spin_unlock(&ndev->irq_lock);
}

/**
 * neuron_irq_ratelimit() - whether to report a THROTTLE or FAULT event
 * @ndev: device; &neuron_device.irq_lock held
 * @ev: the event of one core (@ev->core < num_cores); on true its
 *	@suppressed is set
 * @kind: enum neuron_evlimit_kind
 *
 * At most &neuron_device.evlimit_burst events of one (core, kind) are
 * reported per &neuron_device.evlimit_interval_ms; an interval begins with
 * its first event. A suppressed edge is still counted (sysfs edge_counts)
 * and traced, and the count of them rides on the next event reported for
 * the same (core, kind) (docs/decisions/0008-event-ratelimit.md). So a tenant
 * whose program floods THROTTLE costs the interrupt thread one register
 * read per edge and no other file anything.
 *
 * Return: true to report @ev, false if it was suppressed.
 */
static bool neuron_irq_ratelimit(struct neuron_device *ndev,
				 struct neuron_event *ev, unsigned int kind)
{
	struct neuron_evlimit *l = &ndev->evlimit[ev->core][kind];
	unsigned long now = jiffies;

	lockdep_assert_held(&ndev->irq_lock);
	if (!l->used ||
	    time_after_eq(now, l->begin +
			  msecs_to_jiffies(ndev->evlimit_interval_ms))) {
		l->begin = now;
		l->used = 0;
	}
	if (l->used >= ndev->evlimit_burst) {
		if (l->pending < U32_MAX)
			l->pending++;
		ndev->ev_suppressed[ev->core][kind]++;
		return false;
	}
	l->used++;
	ev->suppressed = l->pending;
	l->pending = 0;
	return true;
}

/**
 * neuron_irq_ratelimit_forget() - drop the suppressed counts of one core
 * @ndev: device
 * @core: core index, < NEURON_MAX_CORES, whose edges now go to another file
 *	(or to none)
 *
 * The count of suppressed edges rides on the next event of the same core
 * and kind (neuron_irq_ratelimit()); once the core changes hands, the edges
 * the previous owner's program made are not the next owner's to hear of
 * (docs/decisions/0008-event-ratelimit.md). sysfs events_suppressed keeps them.
 * The interval and its budget stay: giving a core back and taking it again
 * does not buy a tenant more events.
 */
void neuron_irq_ratelimit_forget(struct neuron_device *ndev, u32 core)
{
	unsigned long flags;
	u32 k;

	spin_lock_irqsave(&ndev->irq_lock, flags);
	for (k = 0; k < NEURON_EVLIMIT_KINDS; k++)
		ndev->evlimit[core][k].pending = 0;
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
}

/* The causes of @core the driver keeps masked: storms and budget holds. */
static u32 neuron_irq_masked(struct neuron_device *ndev, u32 core)
{
	u32 held = READ_ONCE(ndev->irqlimit[core][NEURON_IRQLIMIT_THRESHOLD].held) ?
		   BIT(NEURON_NOTIFIC_INTR_THRESHOLD) : 0;

	return READ_ONCE(ndev->storm_masked[core]) | held;
}

/* INTR_MASK of @core: every cause but those neuron_irq_masked() names. */
static void neuron_irq_write_mask(struct neuron_device *ndev, u32 core)
{
	lockdep_assert_held(&ndev->irq_lock);
	neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_INTR_MASK),
		  NEURON_NOTIFIC_INTR_MASK_ALL & ~neuron_irq_masked(ndev, core));
}

/* The throttle vector's Linux IRQ number. */
static unsigned int neuron_irq_throttle_irq(struct neuron_device *ndev)
{
	return ndev->vec[NEURON_MSIX_VEC_THROTTLE(ndev->num_cores)].irq;
}

/*
 * Ends the hold of (@core, @kind): unmasks its source (a cause or edge
 * latched meanwhile then raises one edge) and starts a new interval with
 * the next edge. &neuron_device.irq_lock held.
 */
static void neuron_irq_release(struct neuron_device *ndev, u32 core,
			       unsigned int kind)
{
	struct neuron_irqlimit *l = &ndev->irqlimit[core][kind];

	lockdep_assert_held(&ndev->irq_lock);
	if (!l->held)
		return;
	WRITE_ONCE(l->held, false);
	l->used = 0;
	if (kind == NEURON_IRQLIMIT_THRESHOLD) {
		neuron_irq_write_mask(ndev, core);
	} else if (ndev->throttle_held) {
		ndev->throttle_held = false;
		enable_irq(neuron_irq_throttle_irq(ndev));
	}
}

/**
 * neuron_irq_release_all() - end every interrupt budget hold
 * @ndev: device; &neuron_device.irq_lock held
 *
 * Unmasks every source held for its budget and starts a new interval for
 * every (core, kind) (sysfs irq_ratelimit's write).
 */
void neuron_irq_release_all(struct neuron_device *ndev)
{
	u32 c, k;

	lockdep_assert_held(&ndev->irq_lock);
	for (c = 0; c < ndev->num_cores; c++)
		for (k = 0; k < NEURON_IRQLIMIT_KINDS; k++) {
			neuron_irq_release(ndev, c, k);
			ndev->irqlimit[c][k].used = 0;
		}
}

/*
 * Runs the hold work at @until (jiffies) unless it is due sooner: a hold
 * of a shorter interval must not wait for a longer one's (every caller
 * holds &neuron_device.irq_lock, so the pending expiry read is stable).
 */
static void neuron_irq_hold_at(struct neuron_device *ndev, unsigned long until,
			       unsigned long now)
{
	struct delayed_work *w = &ndev->irq_hold_work;

	if (!delayed_work_pending(w) || time_before(until, w->timer.expires))
		mod_delayed_work(system_wq, w, until - now);
}

/*
 * One edge of (@core, @kind) against its budget (top of file): the edge
 * that uses up &neuron_device.irqlimit_burst in the current interval masks
 * the source until the interval ends (@irq: the throttle vector's, for
 * THROTTLE). &neuron_device.irq_lock held.
 */
static void neuron_irq_budget(struct neuron_device *ndev, u32 core,
			      unsigned int kind, unsigned int irq)
{
	struct neuron_irqlimit *l = &ndev->irqlimit[core][kind];
	unsigned long now = jiffies;
	unsigned long len = msecs_to_jiffies(ndev->irqlimit_interval_ms);

	lockdep_assert_held(&ndev->irq_lock);
	if (!l->used || time_after_eq(now, l->begin + len)) {
		l->begin = now;
		l->used = 0;
	}
	if (++l->used < ndev->irqlimit_burst || l->held || ndev->storm_stop)
		return;
	if (kind == NEURON_IRQLIMIT_THROTTLE) {
		if (ndev->throttle_held)
			return;
		ndev->throttle_held = true;
		/* from the vector's own thread: no wait for it */
		disable_irq_nosync(irq);
	}
	l->until = time_after(l->begin + len, now) ? l->begin + len : now + 1;
	WRITE_ONCE(l->held, true);
	ndev->irq_holds[core][kind]++;
	if (kind == NEURON_IRQLIMIT_THRESHOLD)
		neuron_irq_write_mask(ndev, core);
	neuron_irq_hold_at(ndev, l->until, now);
}

/* Ends the holds whose interval is over; comes back for the others. */
static void neuron_irq_hold_work(struct work_struct *work)
{
	struct neuron_device *ndev =
		container_of(to_delayed_work(work), struct neuron_device,
			     irq_hold_work);
	unsigned long now = jiffies, next = MAX_JIFFY_OFFSET;
	u32 c, k;

	spin_lock_irq(&ndev->irq_lock);
	for (c = 0; c < ndev->num_cores && !ndev->storm_stop; c++)
		for (k = 0; k < NEURON_IRQLIMIT_KINDS; k++) {
			struct neuron_irqlimit *l = &ndev->irqlimit[c][k];

			if (!l->held)
				continue;
			if (time_before(now, l->until))
				next = min(next, l->until - now);
			else
				neuron_irq_release(ndev, c, k);
		}
	if (next != MAX_JIFFY_OFFSET && !ndev->storm_stop)
		neuron_irq_hold_at(ndev, now + next, now);
	spin_unlock_irq(&ndev->irq_lock);
}

/*
 * Storm detection after one run of neuron_irq_core() on @core that read a
 * nonzero status @loops times; @all: causes set in each of those reads,
 * @any: causes set in any of them. See the top of this file.
 */
static void neuron_irq_storm_check(struct neuron_device *ndev, u32 core,
				   unsigned int loops, u32 all, u32 any)
{
	unsigned long masked;
	struct neuron_event ev;
	bool report = false;
	unsigned int bit;
	u32 causes = 0;

	spin_lock(&ndev->irq_lock);
	if (loops < NEURON_IRQ_MAX_LOOPS) {
		/* the status was found clear: not a storm */
		ndev->storm_streak[core] = 0;
		goto unlock;
	}
	if (ndev->storm_streak[core]++)
		ndev->storm_causes[core] &= all;
	else
		ndev->storm_causes[core] = all;
	if (ndev->storm_streak[core] < NEURON_IRQ_STORM_RUNS || ndev->storm_stop)
		goto unlock;

	/* never the completion cause (top of file) */
	causes = (ndev->storm_causes[core] ?: any) &
		 ~BIT(NEURON_NOTIFIC_INTR_THRESHOLD);
	ndev->storm_streak[core] = 0;
	if (!causes)
		goto unlock;
	WRITE_ONCE(ndev->storm_masked[core], ndev->storm_masked[core] | causes);
	neuron_irq_write_mask(ndev, core);
	ndev->storm_count[core]++;
	masked = causes;
	for_each_set_bit(bit, &masked, NEURON_NOTIFIC_INTR_BITS)
		ndev->storm_masks[core][bit]++;
	ndev->fault_count[ilog2(NEURON_FAULT_INTR_STORM)]++;
	memset(&ev, 0, sizeof(ev));
	ev.core = core;
	ev.edge = NEURON_EDGE_FAULT;
	ev.cause = NEURON_FAULT_INTR_STORM;
	ev.count = ++ndev->fault_edges;
	report = neuron_irq_ratelimit(ndev, &ev, NEURON_EVLIMIT_FAULT);
	schedule_delayed_work(&ndev->storm_work,
			      msecs_to_jiffies(NEURON_IRQ_STORM_HOLDOFF_MS));
unlock:
	spin_unlock(&ndev->irq_lock);

	if (causes) {
		trace_neuron_storm_mask(ndev->id, core, causes,
					NEURON_IRQ_STORM_HOLDOFF_MS);
		neuron_hw_error(ndev, core, NEURON_HW_ERROR_NA,
				NEURON_HWE_INTR_STORM, NEURON_HWA_NONE,
				"interrupt causes %#x asserted again after every clear: masked for %u ms",
				causes, NEURON_IRQ_STORM_HOLDOFF_MS);
		if (report)
			neuron_events_broadcast(ndev, &ev);
	}
}

/* Re-enable the causes masked for a storm, after the hold-off. */
static void neuron_irq_storm_work(struct work_struct *work)
{
	struct neuron_device *ndev =
		container_of(to_delayed_work(work), struct neuron_device,
			     storm_work);
	u32 c;

	spin_lock(&ndev->irq_lock);
	for (c = 0; c < ndev->num_cores && !ndev->storm_stop; c++) {
		if (!ndev->storm_masked[c])
			continue;
		trace_neuron_storm_unmask(ndev->id, c, ndev->storm_masked[c]);
		WRITE_ONCE(ndev->storm_masked[c], 0);
		ndev->storm_streak[c] = 0;
		/* a cause still latched raises an edge at once */
		neuron_irq_write_mask(ndev, c);
	}
	spin_unlock(&ndev->irq_lock);
}

/*
 * Read and clear (W1C) one of the input buffer's edge registers of @core
 * (WRBUF_FULL_STATUS or WRBUF_DROP_STATUS, docs/device-model.md#wrbuf):
 * bit N is edge wr_buffer_full_N / _drop_N. Called after INTR_STATUS was
 * cleared, so an edge latched meanwhile is seen now or raises its summary
 * cause again.
 */
static unsigned long neuron_irq_take_wrbuf(struct neuron_device *ndev,
					   u32 core, u32 reg)
{
	u32 val = neuron_rd(ndev, NEURON_NOTIFIC_REG(core, reg));

	if (neuron_irq_gone(val))
		return 0;
	val &= NEURON_WRBUF_EDGE_MASK;
	if (val)
		neuron_wr(ndev, NEURON_NOTIFIC_REG(core, reg), val);
	return val;
}

/*
 * Core vector: tpb_notific_intr_0..8. INTR_STATUS is cleared before
 * THRESHOLD_STATUS is read, so a threshold hit racing with the handler is
 * either seen now or raises intr_0 again. The status is read again after
 * clearing, in case a cause arrived meanwhile without a new edge; each
 * nonzero read is one edge and one event. Causes masked for a storm or a
 * budget hold are left alone (latched) until they are unmasked.
 *
 * A threshold edge costs five register accesses, and each is needed: the
 * INTR_STATUS read (which causes), its W1C (the vector fires only on a
 * 0 -> nonzero edge of INTR_STATUS & INTR_MASK, docs/device-model.md "NOTIFIC
 * block"), the THRESHOLD_STATUS read (which queues) and its W1C (a bit left
 * set would be taken for a new hit on the next edge), and the INTR_STATUS
 * read again (a cause latched between the first read and the W1C raises no
 * new edge). THRESHOLD_STATUS is read only when intr_0 is set: a hit after
 * the first read leaves intr_0 latched, which that last read finds.
 */
static irqreturn_t neuron_irq_core(int irq, void *data)
{
	struct neuron_vector *vec = data;
	struct neuron_device *ndev = vec->ndev;
	u32 core = vec->index;
	u32 all = NEURON_NOTIFIC_INTR_MASK_ALL, any = 0;
	bool masked_only = false;
	struct neuron_event ev;
	unsigned long status, thr, wfull, wdrop;
	unsigned int bit, loop;
	u32 val;

	for (loop = 0; loop < NEURON_IRQ_MAX_LOOPS; loop++) {
		val = neuron_rd(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_INTR_STATUS));
		if (neuron_irq_gone(val))
			break;
		status = val & NEURON_NOTIFIC_INTR_MASK_ALL &
			 ~neuron_irq_masked(ndev, core);
		if (!status) {
			masked_only = val & NEURON_NOTIFIC_INTR_MASK_ALL;
			break;
		}
		all &= status;
		any |= status;
		neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_INTR_STATUS),
			  status);

		thr = 0;
		if (status & BIT(NEURON_NOTIFIC_INTR_THRESHOLD))
			thr = neuron_rd(ndev, NEURON_NOTIFIC_REG(core,
								 NEURON_NOTIFIC_THRESHOLD_STATUS));
		if (neuron_irq_gone(thr))
			thr = 0;
		thr &= NEURON_SW_QUEUE_MASK;
		if (thr)
			neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_THRESHOLD_STATUS),
				  thr);

		wfull = 0;
		wdrop = 0;
		if (status & BIT(NEURON_NOTIFIC_INTR_WRBUF_FULL))
			wfull = neuron_irq_take_wrbuf(ndev, core,
						      NEURON_NOTIFIC_WRBUF_FULL_STATUS);
		if (status & BIT(NEURON_NOTIFIC_INTR_HW_OVERFLOW))
			wdrop = neuron_irq_take_wrbuf(ndev, core,
						      NEURON_NOTIFIC_WRBUF_DROP_STATUS);

		memset(&ev, 0, sizeof(ev));
		ev.core = core;
		ev.edge = NEURON_EDGE_NOTIFIC;
		ev.cause = status;
		ev.queues = thr;
		ev.wrbuf_full = wfull;
		ev.wrbuf_drop = wdrop;
		/* @queues comes with the THRESHOLD bit (read only then) */

		spin_lock(&ndev->irq_lock);
		for_each_set_bit(bit, &status, NEURON_NOTIFIC_INTR_BITS)
			ndev->intr_count[core][bit]++;
		for_each_set_bit(bit, &thr, NEURON_NUM_SW_QUEUES)
			ndev->threshold_count[core][bit]++;
		for_each_set_bit(bit, &wfull, NEURON_NUM_SW_QUEUES)
			ndev->wrbuf_full_count[core][bit]++;
		for_each_set_bit(bit, &wdrop, NEURON_NUM_SW_QUEUES)
			ndev->wrbuf_drop_count[core][bit]++;
		ev.count = ++ndev->notific_edges[core];
		if (status & BIT(NEURON_NOTIFIC_INTR_THRESHOLD))
			neuron_irq_budget(ndev, core, NEURON_IRQLIMIT_THRESHOLD, 0);
		spin_unlock(&ndev->irq_lock);

		trace_neuron_irq_edge(ndev->id, ev.edge, ev.core, ev.cause,
				      ev.queues, ev.count);
		neuron_events_broadcast(ndev, &ev);
		/* adaptive moderation: one DIM sample per queue (neuron_dim.c) */
		if (thr)
			neuron_dim_irq(ndev, core, thr);
	}
	if (!loop) {
		/* an edge raised just before its cause was masked for a storm */
		if (masked_only)
			return IRQ_HANDLED;
		neuron_irq_count_spurious(ndev);
		return IRQ_NONE;
	}
	neuron_irq_storm_check(ndev, core, loop, all, any);
	return IRQ_HANDLED;
}

/* The bits of a global status register that name a core of @ndev. */
static unsigned long neuron_irq_core_bits(struct neuron_device *ndev, u32 val)
{
	return val & GENMASK(ndev->num_cores - 1, 0);
}

/*
 * One THROTTLE or FAULT event of core @ev->core, already counted: checked
 * against that core's rate limit (which fills @ev->suppressed), traced,
 * and sent unless the limit held it back.
 */
static void neuron_irq_report_core(struct neuron_device *ndev,
				   struct neuron_event *ev,
				   enum neuron_evlimit_kind kind)
{
	bool report;

	spin_lock(&ndev->irq_lock);
	report = neuron_irq_ratelimit(ndev, ev, kind);
	spin_unlock(&ndev->irq_lock);
	trace_neuron_irq_edge(ndev->id, ev->edge, ev->core, ev->cause,
			      ev->queues, ev->count);
	if (report)
		neuron_events_broadcast(ndev, ev);
}

/*
 * Throttle vector: the device fires it on every THROTTLE instruction and
 * latches bit c of THROTTLE_STATUS for core c (docs/device-model.md
 * "Interrupts"). Each core bit is one edge and one event of that core, for
 * the core's owner and the watchers only (neuron_events.c), rate limited
 * per core (neuron_irq_ratelimit()), and charged to the core's interrupt
 * budget (neuron_irq_budget(): the vector is disabled for the rest of the
 * interval when a core uses it up).
 */
static irqreturn_t neuron_irq_throttle(int irq, void *data)
{
	struct neuron_vector *vec = data;
	struct neuron_device *ndev = vec->ndev;
	struct neuron_event ev;
	unsigned long cores;
	unsigned int c;
	u32 status;

	status = neuron_rd(ndev, NEURON_REG_THROTTLE_STATUS);
	if (!status || neuron_irq_gone(status)) {
		neuron_irq_count_spurious(ndev);
		return IRQ_NONE;
	}
	neuron_wr(ndev, NEURON_REG_THROTTLE_STATUS, status);

	cores = neuron_irq_core_bits(ndev, status);
	for_each_set_bit(c, &cores, ndev->num_cores) {
		memset(&ev, 0, sizeof(ev));
		ev.edge = NEURON_EDGE_THROTTLE;
		ev.core = c;
		ev.cause = BIT(c);

		spin_lock(&ndev->irq_lock);
		ndev->throttle_count++;
		ev.count = ++ndev->throttle_edges[c];
		neuron_irq_budget(ndev, c, NEURON_IRQLIMIT_THROTTLE, irq);
		spin_unlock(&ndev->irq_lock);
		neuron_irq_report_core(ndev, &ev, NEURON_EVLIMIT_THROTTLE);
	}
	return IRQ_HANDLED;
}

/*
 * One hardware error line of @cause per core named in @cores (none named:
 * core "-"). The driver copes with every fault: a failed ring write is a
 * dropped record, counted and reported to the core's owner.
 */
static void neuron_irq_log_fault(struct neuron_device *ndev,
				 enum neuron_hw_error_cause cause,
				 unsigned long status, unsigned long cores)
{
	unsigned int c;

	if (!cores)
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				cause, NEURON_HWA_NONE,
				"device fault %#lx, no core named", status);
	for_each_set_bit(c, &cores, ndev->num_cores)
		neuron_hw_error(ndev, c, NEURON_HW_ERROR_NA, cause,
				NEURON_HWA_NONE, "device fault %#lx", status);
}

/*
 * Fault vector: FAULT_STATUS says what failed, FAULT_CORES which cores'
 * ring writes did (docs/device-model.md "Interrupts"). FAULT_STATUS is
 * cleared first, so a fault latched after it raises a new edge; its core
 * bit may already be taken by this run, and the next run then finds no
 * core: that event goes to the watchers only (@core 0xffffffff, UAPI).
 * One event per core named, for the core's owner and the watchers, rate
 * limited per core (neuron_irq_ratelimit()).
 */
static irqreturn_t neuron_irq_fault(int irq, void *data)
{
	struct neuron_vector *vec = data;
	struct neuron_device *ndev = vec->ndev;
	struct neuron_event ev;
	unsigned long status, cores;
	unsigned int bit, c;
	u32 val;

	status = neuron_rd(ndev, NEURON_REG_FAULT_STATUS);
	if (!status || neuron_irq_gone(status)) {
		neuron_irq_count_spurious(ndev);
		return IRQ_NONE;
	}
	neuron_wr(ndev, NEURON_REG_FAULT_STATUS, status);
	val = neuron_rd(ndev, NEURON_REG_FAULT_CORES);
	cores = neuron_irq_gone(val) ? 0 : neuron_irq_core_bits(ndev, val);
	if (cores)
		neuron_wr(ndev, NEURON_REG_FAULT_CORES, cores);

	memset(&ev, 0, sizeof(ev));
	ev.edge = NEURON_EDGE_FAULT;
	ev.cause = status;

	spin_lock(&ndev->irq_lock);
	for_each_set_bit(bit, &status, NEURON_FAULT_BITS)
		ndev->fault_count[bit]++;
	ev.count = ++ndev->fault_edges;
	spin_unlock(&ndev->irq_lock);

	if (status & NEURON_FAULT_DMA_ERROR)
		neuron_irq_log_fault(ndev, NEURON_HWE_DMA_ERROR, status, cores);
	if (status & NEURON_FAULT_INTR_STORM)
		neuron_irq_log_fault(ndev, NEURON_HWE_INTR_STORM, status, cores);
	if (status & ~NEURON_FAULT_NAMED)
		neuron_irq_log_fault(ndev, NEURON_HWE_DEVICE_FAULT, status, cores);
	if (!cores) {
		ev.core = U32_MAX;	/* no core named: the watchers only */
		trace_neuron_irq_edge(ndev->id, ev.edge, ev.core, ev.cause,
				      ev.queues, ev.count);
		neuron_events_broadcast(ndev, &ev);
		return IRQ_HANDLED;
	}
	for_each_set_bit(c, &cores, ndev->num_cores) {
		ev.core = c;
		ev.suppressed = 0;
		neuron_irq_report_core(ndev, &ev, NEURON_EVLIMIT_FAULT);
	}
	return IRQ_HANDLED;
}

/* Mask every cause at the device and flush; the vectors stay allocated. */
static void neuron_irq_mask_all(struct neuron_device *ndev)
{
	u32 c;

	for (c = 0; c < ndev->num_cores; c++)
		neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_INTR_MASK), 0);
	neuron_wr(ndev, NEURON_REG_FAULT_MASK, 0);
	neuron_rd(ndev, NEURON_REG_ID);
}

static void neuron_irq_unmask_all(struct neuron_device *ndev)
{
	u32 c;

	/* the threads may already mask a storming cause of an earlier core */
	spin_lock_irq(&ndev->irq_lock);
	for (c = 0; c < ndev->num_cores; c++)
		neuron_irq_write_mask(ndev, c);
	spin_unlock_irq(&ndev->irq_lock);
	neuron_wr(ndev, NEURON_REG_FAULT_MASK, NEURON_FAULT_NAMED);
}

static void neuron_irq_free_vectors(struct neuron_device *ndev)
{
	int i;

	for (i = 0; i < ndev->nvec; i++) {
		if (ndev->vec[i].irq > 0)
			free_irq(ndev->vec[i].irq, &ndev->vec[i]);
		ndev->vec[i].irq = 0;
	}
	pci_free_irq_vectors(ndev->pdev);
	ndev->nvec = 0;
}

/**
 * neuron_irq_init() - allocate and request the MSI-X vectors
 * @ndev: device, BAR0 mapped, @id and @num_cores known
 *
 * Allocates exactly NEURON_MSIX_VECTORS(cores) MSI-X vectors
 * (docs/decisions/0004-device-details.md#msix-vectors: one per core, throttle,
 * fault), requests each as a threaded interrupt (see the top of this file),
 * then unmasks every NOTIFIC cause (INTR_MASK = NEURON_NOTIFIC_INTR_MASK_ALL;
 * its reset value is 0) and the device faults (FAULT_MASK). The throttle
 * edge needs no mask; its records are armed by NEURON_IOC_THROTTLE
 * (NEURON_REG_THROTTLE_CTRL), not here.
 *
 * Return: 0, or the error of pci_alloc_irq_vectors() (e.g. -ENOSPC when
 * the device offers fewer vectors) or request_threaded_irq().
 */
int neuron_irq_init(struct neuron_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int nvec = NEURON_MSIX_VECTORS(ndev->num_cores);
	irq_handler_t handler;
	int i, ret;

	spin_lock_irq(&ndev->irq_lock);
	ndev->storm_stop = false;
	memset(ndev->storm_masked, 0, sizeof(ndev->storm_masked));
	memset(ndev->storm_streak, 0, sizeof(ndev->storm_streak));
	memset(ndev->irqlimit, 0, sizeof(ndev->irqlimit));
	ndev->throttle_held = false;
	spin_unlock_irq(&ndev->irq_lock);
	INIT_DELAYED_WORK(&ndev->storm_work, neuron_irq_storm_work);
	INIT_DELAYED_WORK(&ndev->irq_hold_work, neuron_irq_hold_work);
	neuron_dim_init(ndev);
	neuron_irq_mask_all(ndev);
	ret = pci_alloc_irq_vectors(pdev, nvec, nvec, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "cannot allocate %d MSI-X vectors: %d\n",
			nvec, ret);
		return ret;
	}
	ndev->nvec = nvec;

	for (i = 0; i < nvec; i++) {
		struct neuron_vector *vec = &ndev->vec[i];

		vec->ndev = ndev;
		vec->index = i;
		if (i < ndev->num_cores) {
			handler = neuron_irq_core;
			snprintf(vec->name, sizeof(vec->name),
				 NEURON_DEV_NAME "%d-core%d", ndev->id, i);
		} else if (i == NEURON_MSIX_VEC_THROTTLE(ndev->num_cores)) {
			handler = neuron_irq_throttle;
			snprintf(vec->name, sizeof(vec->name),
				 NEURON_DEV_NAME "%d-throttle", ndev->id);
		} else {
			handler = neuron_irq_fault;
			snprintf(vec->name, sizeof(vec->name),
				 NEURON_DEV_NAME "%d-fault", ndev->id);
		}
		ret = pci_irq_vector(pdev, i);
		if (ret < 0)
			goto err;
		ret = request_threaded_irq(ret, NULL, handler, IRQF_ONESHOT,
					   vec->name, vec);
		if (ret) {
			dev_err(&pdev->dev, "cannot request IRQ %s: %d\n",
				vec->name, ret);
			goto err;
		}
		vec->irq = pci_irq_vector(pdev, i);
	}

	neuron_irq_unmask_all(ndev);
	return 0;

err:
	neuron_irq_free_vectors(ndev);
	return ret;
}

/**
 * neuron_irq_fini() - mask at the device, then free the vectors
 * @ndev: device, BAR0 still mapped
 *
 * Stops the storm and budget machinery first (no thread masks and no work
 * item unmasks a cause after the masks are cleared; a throttle vector
 * disabled for a hold is enabled again, so its disable depth is balanced),
 * then masks everything and frees the vectors and stops adaptive moderation
 * (neuron_dim_fini()). After this no handler or work item runs or will run
 * (free_irq() waits for running threads), so the BARs may be unmapped and
 * the device freed. Called with neither &neuron_device.rwsem nor
 * &neuron_device.lock held.
 */
void neuron_irq_fini(struct neuron_device *ndev)
{
	spin_lock_irq(&ndev->irq_lock);
	ndev->storm_stop = true;
	spin_unlock_irq(&ndev->irq_lock);
	cancel_delayed_work_sync(&ndev->storm_work);
	cancel_delayed_work_sync(&ndev->irq_hold_work);
	spin_lock_irq(&ndev->irq_lock);
	neuron_irq_release_all(ndev);
	spin_unlock_irq(&ndev->irq_lock);
	neuron_irq_mask_all(ndev);
	neuron_irq_free_vectors(ndev);
	neuron_dim_fini(ndev);
}

/**
 * neuron_irq_ioctl_throttle() - NEURON_IOC_THROTTLE: arm throttle records
 * @nfile: the caller's file
 * @arg: @enable 1 to arm, 0 to disarm; reserved fields zero
 *
 * Sets or clears bit 0 of NEURON_REG_THROTTLE_CTRL. Armed, each THROTTLE
 * assertion also writes an ERROR (0x03) interrupt-form record of group
 * THROTTLE to the throttle class queue, NUM4 by default
 * (docs/hardware.md#throttle, #nq-routing; docs/device-model.md). The throttle
 * edge itself is handled and counted either way. The setting is device-wide
 * and stays until changed (it does not belong to the file), so it needs
 * CAP_SYS_ADMIN (docs/decisions/0005-tenancy.md).
 *
 * Return: 0; -EINVAL (@enable not 0 or 1, reserved nonzero); -EPERM (no
 * CAP_SYS_ADMIN); -EIO (stale file, device offline); -ENODEV (device
 * removed).
 */
int neuron_irq_ioctl_throttle(struct neuron_file *nfile,
			      const struct neuron_throttle *arg)
{
	static const char cmd[] = "THROTTLE";
	struct neuron_device *ndev = nfile->ndev;
	int ret;

	if (arg->enable > 1)
		return neuron_bad_field(ndev, cmd, "enable");
	if (arg->reserved0 || arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	neuron_wr(ndev, NEURON_REG_THROTTLE_CTRL, arg->enable);
	neuron_rd(ndev, NEURON_REG_THROTTLE_CTRL);	/* flush */
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return 0;
}
