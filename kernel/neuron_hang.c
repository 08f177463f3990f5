// SPDX-License-Identifier: GPL-2.0
/*
 * Hang detection and crash dumps (docs/decisions/0012-hang-detection.md,
 * #coredump; include/uapi/linux/neuron.h NEURON_IOC_HANG_TIMEOUT,
 * NEURON_EDGE_HANG, struct neuron_coredump_header).
 *
 * A delayed work item per device, the scanner, runs while the device is in
 * service (neuron_hang_start() at the end of the enable path,
 * neuron_hang_stop() after the disable path's fence). Each run samples
 * STATUS, EXEC_COUNT and SOFT_RESET_COUNTER of every engine under the
 * device's read lock and &neuron_device.lock, like any ioctl, then
 * re-arms itself a twentieth of the smallest hang timeout later (at least
 * 25 ms), or sooner when a stall it is timing reaches its timeout first. An engine
 * RUNNING or WAITING whose two counters have not moved since a sample at
 * least its core's timeout ago is hung: one report per stall (the stall
 * ends when a counter moves or the engine leaves RUNNING/WAITING):
 *  - a devcoredump of the core (neuron_hang_dump()), taken first so it
 *    exists when the event is read;
 *  - one NEURON_EDGE_HANG event: @core, @cause the state seen (RUNNING or
 *    WAITING), @queues the engine's bit, @pc, @count the core's hangs since
 *    probe; delivered like ENGINE_STOPPED (the core's owner, the watchers,
 *    generic netlink);
 *  - sysfs hangs (per core and engine) and a KOBJ_CHANGE uevent
 *    NNQ_EVENT=hang NNQ_CORE=<c> NNQ_ENGINE=<e> NNQ_PC=<pc> NNQ_PID=<pid>
 *    NNQ_COMM=<comm>, the process that submitted the program (its PID in
 *    the initial namespace, where uevents and the log are read; its
 *    command name escaped as sysfs core_owners escapes it), which the log
 *    line names too;
 *  - under the device's hang_policy "reset", the engine is reset and the
 *    stop reported (NEURON_EDGE_ENGINE_STOPPED, NEURON_STOP_HANG).
 * Devcoredumps are limited per core (neuron_hang_dump_admit(),
 * docs/decisions/0038-coredump-slot.md): a kernel keeps one dump per device
 * until it is read or 5 minutes pass and drops every dump made meanwhile,
 * so a tenant's fatal-error loop would hold that slot for ever. A core gets
 * at most one dump per coredump_interval_ms (sysfs; default 10 minutes);
 * the dumps it holds back are counted (sysfs hangs "coredumps_skipped"),
 * and where the kernel can delete a held dump (dev_coredump_put(), 6.10)
 * the newest admitted dump replaces it.
 * An engine seen HALTED (a fatal error) gets a devcoredump and a KOBJ_CHANGE
 * uevent NNQ_EVENT=fatal NNQ_CORE NNQ_ENGINE NNQ_PC NNQ_PID NNQ_COMM
 * NNQ_ERROR=<error_id>,
 * once per halt, and no event: the fatal error was already reported to the
 * program's owner by its record.
 *
 * A hang is seen between timeout and timeout + one scan period after the
 * last instruction retired (the stall starts at the first sample that
 * finds it, at most one period late, and the scanner runs again when its
 * timeout is up): 500 to 525 ms for a 500 ms timeout, within the 10% that
 * docs/decisions/0012-hang-detection.md promises; 100 to 125 ms for the
 * shortest, 100 ms, whose twentieth the period floor overrides.
 */
#include <linux/devcoredump.h>
#include <linux/jiffies.h>
#include <linux/kobject.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/vmalloc.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_compat.h"

static unsigned int neuron_hang_default_ms = 10000;

static int neuron_hang_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint(val, 0, &ms);
	if (ret)
		return ret;
	if (ms < NEURON_HANG_TIMEOUT_MIN_MS || ms > NEURON_HANG_TIMEOUT_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, ms);
	return 0;
}

static const struct kernel_param_ops neuron_hang_param_ops = {
	.set = neuron_hang_param_set,
	.get = param_get_uint,
};

module_param_cb(hang_timeout_ms, &neuron_hang_param_ops,
		&neuron_hang_default_ms, 0600);
MODULE_PARM_DESC(hang_timeout_ms,
		 "ms an engine may run or wait without retiring an instruction before it is reported hung (100..600000, default 10000; a core's owner may override it, NEURON_IOC_HANG_TIMEOUT)");

/* Whether core @c carries an override of its current owner. */
static bool neuron_hang_overridden(struct neuron_device *ndev, u32 c)
{
	struct neuron_file *owner = ndev->owner[c];

	return ndev->hang_timeout_ms[c] && owner &&
	       owner->client_id == ndev->hang_timeout_client[c];
}

/* The hang timeout of core @c in ms; &neuron_device.lock held. */
static u32 neuron_hang_timeout(struct neuron_device *ndev, u32 c)
{
	if (neuron_hang_overridden(ndev, c))
		return ndev->hang_timeout_ms[c];
	return READ_ONCE(neuron_hang_default_ms);
}

/*
 * The scanner's period floor: a core's owner may set a 100 ms timeout, and
 * a twentieth of it would make the device-wide scan (three register reads
 * of every engine of every core, under the device's lock) run 200 times a
 * second on every tenant's behalf.
 */
#define NEURON_HANG_PERIOD_MIN_MS	25

/**
 * neuron_hang_period_ms() - the hang scanner's period
 * @ndev: device; &neuron_device.lock held
 *
 * A twentieth of the smallest hang timeout in force, at least
 * NEURON_HANG_PERIOD_MIN_MS (docs/decisions/0012-hang-detection.md "Scanner").
 *
 * Return: the period in ms.
 */
u32 neuron_hang_period_ms(struct neuron_device *ndev)
{
	u32 c, ms = READ_ONCE(neuron_hang_default_ms);

	for (c = 0; c < ndev->num_cores; c++)
		ms = min(ms, neuron_hang_timeout(ndev, c));
	return max_t(u32, ms / 20, NEURON_HANG_PERIOD_MIN_MS);
}

static unsigned long neuron_hang_period(struct neuron_device *ndev)
{
	return max(msecs_to_jiffies(neuron_hang_period_ms(ndev)), 1UL);
}

/* Copy the last records before TAIL of one queue; returns the count. */
static u32 neuron_hang_dump_queue(struct neuron_device *ndev,
				  struct neuron_nq *nq,
				  struct neuron_coredump_queue *dq)
{
	u32 c = nq->core, q = nq->queue, i, idx;
	u32 entries = nq->size / NEURON_ISA_NOTIFICATION_NBYTES;
	u8 *rec = (u8 *)(dq + 1);
	u32 n;

	dq->queue = q;
	dq->flags = nq->flags;
	dq->size = nq->size;
	dq->head = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_HEAD));
	dq->tail = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_TAIL));
	n = min3(entries, (u32)NEURON_COREDUMP_RECORDS, dq->tail);
	for (i = 0; i < n; i++, rec += NEURON_ISA_NOTIFICATION_NBYTES) {
		idx = (dq->tail - n + i) % entries;
		if (nq->flags & NEURON_NQ_F_DEVICE_MEM)
			memcpy_fromio(rec, ndev->mem + nq->mem_off +
				      idx * NEURON_ISA_NOTIFICATION_NBYTES,
				      NEURON_ISA_NOTIFICATION_NBYTES);
		else if (nq->ring)
			memcpy(rec, page_address(nq->ring->pages) +
			       idx * NEURON_ISA_NOTIFICATION_NBYTES,
			       NEURON_ISA_NOTIFICATION_NBYTES);
	}
	dq->rec_count = n;
	return n;
}

/*
 * Whether core @c may have a devcoredump now: none yet since probe (or the
 * last write of coredump_interval_ms), the last one at least
 * &neuron_device.coredump_interval_ms ago, or no limit (0). An admitted
 * dump starts the core's next interval; a refused one is counted.
 * &neuron_device.lock held.
 */
static bool neuron_hang_dump_admit(struct neuron_device *ndev, u32 c)
{
	u32 ms = ndev->coredump_interval_ms;
	unsigned long now = jiffies;

	lockdep_assert_held(&ndev->lock);
	if (ms && ndev->coredump_taken[c] &&
	    time_before(now, ndev->coredump_at[c] + msecs_to_jiffies(ms))) {
		ndev->coredumps_skipped++;
		return false;
	}
	ndev->coredump_taken[c] = true;
	ndev->coredump_at[c] = now;
	return true;
}

/*
 * Capture core @c for a hang or halt of engine @e and hand it to
 * devcoredump (docs/decisions/0013-coredump.md): the header, every engine's
 * registers, the queues on the core of the file the engine's program
 * belongs to with their last records (host rings read from their pages,
 * device rings from BAR4), and the program's instructions around @pc.
 * At most one per core per interval (neuron_hang_dump_admit()); it replaces
 * a dump the device still holds where the kernel can (dev_coredump_put()).
 */
static void neuron_hang_dump(struct neuron_device *ndev, u32 c, u32 e,
			     u32 cause, u32 pc)
{
	struct neuron_file *owner = ndev->eng_owner[c][e] ?: ndev->owner[c];
	struct neuron_coredump_header *h;
	struct neuron_coredump_engine *de;
	u32 q, i, nqs = 0, recs = 0, first, last, count;
	u64 base;
	size_t size;
	u8 *p;

	if (!neuron_hang_dump_admit(ndev, c))
		return;
	for (q = 0; owner && q < NEURON_NUM_SW_QUEUES; q++) {
		struct neuron_nq *nq = ndev->nq[c][q];

		if (nq && nq->owner == owner) {
			nqs++;
			recs += min_t(u32, NEURON_COREDUMP_RECORDS,
				      nq->size / NEURON_ISA_NOTIFICATION_NBYTES);
		}
	}
	count = min_t(u32, NEURON_MAX_PROGRAM_INSNS,
		      neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PROG_COUNT)));
	base = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PROG_BASE_LO)) |
	       (u64)neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PROG_BASE_HI)) << 32;
	first = pc > NEURON_COREDUMP_INSNS ? pc - NEURON_COREDUMP_INSNS : 0;
	last = min(count, pc + NEURON_COREDUMP_INSNS + 1);
	if (last <= first || base > ndev->mem_size ||
	    (u64)last * NEURON_EMU_INSN_BYTES > ndev->mem_size - base)
		last = first;

	size = sizeof(*h) + NEURON_ENGINES_PER_CORE * sizeof(*de) +
	       nqs * sizeof(struct neuron_coredump_queue) +
	       recs * NEURON_ISA_NOTIFICATION_NBYTES +
	       (last - first) * NEURON_EMU_INSN_BYTES;
	h = vzalloc(size);
	if (!h)
		return;
	memcpy(h->magic, NEURON_COREDUMP_MAGIC, sizeof(h->magic));
	h->version = NEURON_COREDUMP_VERSION;
	h->header_size = sizeof(*h);
	h->device = ndev->id;
	h->core = c;
	h->engine = e;
	h->cause = cause;
	h->pc = pc;
	h->timestamp_ns = ktime_get_ns();
	h->timeout_ms = neuron_hang_timeout(ndev, c);
	h->num_engines = NEURON_ENGINES_PER_CORE;
	h->insn_first = first;
	h->insn_count = last - first;

	de = (struct neuron_coredump_engine *)(h + 1);
	for (i = 0; i < NEURON_ENGINES_PER_CORE; i++, de++) {
		de->state = neuron_rd(ndev, NEURON_ENG_REG(c, i, NEURON_ENG_STATUS));
		de->pc = neuron_rd(ndev, NEURON_ENG_REG(c, i, NEURON_ENG_PC));
		de->exec_count =
			neuron_rd(ndev, NEURON_ENG_REG(c, i, NEURON_ENG_EXEC_COUNT));
		de->soft_reset_counter =
			neuron_rd(ndev, NEURON_ENG_REG(c, i, NEURON_ENG_SOFT_RESET_COUNTER));
		de->last_error =
			neuron_rd(ndev, NEURON_ENG_REG(c, i, NEURON_ENG_LAST_ERROR));
		de->prog_count =
			neuron_rd(ndev, NEURON_ENG_REG(c, i, NEURON_ENG_PROG_COUNT));
	}

	p = (u8 *)de;
	for (q = 0; owner && q < NEURON_NUM_SW_QUEUES; q++) {
		struct neuron_nq *nq = ndev->nq[c][q];
		struct neuron_coredump_queue *dq = (void *)p;

		if (!nq || nq->owner != owner)
			continue;
		p += sizeof(*dq) +
		     neuron_hang_dump_queue(ndev, nq, dq) *
		     NEURON_ISA_NOTIFICATION_NBYTES;
		h->num_queues++;
	}
	if (last > first)
		memcpy_fromio(p, ndev->mem + base + (u64)first * NEURON_EMU_INSN_BYTES,
			      (last - first) * NEURON_EMU_INSN_BYTES);
	p += (last - first) * NEURON_EMU_INSN_BYTES;
	h->total_size = p - (u8 *)h;
	ndev->coredumps++;
	/* the newest admitted dump is the one to read (no-op before 6.10) */
	dev_coredump_put(&ndev->pdev->dev);
	/* devcoredump owns (and vfree()s) the buffer from here on */
	dev_coredumpv(&ndev->pdev->dev, h, h->total_size, GFP_KERNEL);
}

/*
 * The process that submitted the program on @c/@e, as the hang log line
 * and uevent name it: its PID in the initial namespace, where the kernel
 * log and uevents are read, and its escaped command name; "-" for both
 * when no program was submitted there since probe.
 */
static void neuron_hang_submitter(struct neuron_device *ndev, u32 c, u32 e,
				  char pid[12], char comm[NEURON_COMM_ESCAPED_LEN])
{
	if (!ndev->eng_pid[c][e]) {
		strscpy(pid, "-", 12);
		strscpy(comm, "-", NEURON_COMM_ESCAPED_LEN);
		return;
	}
	snprintf(pid, 12, "%d", ndev->eng_pid[c][e]);
	neuron_comm_escape(ndev->eng_comm[c][e], comm);
}

/*
 * KOBJ_CHANGE NNQ_EVENT=hang or fatal with the engine's core, number, pc
 * and the program's submitter, NNQ_PID and NNQ_COMM
 * (docs/decisions/0011-reset-and-recovery.md#uevents,
 * #uevent-process); a fatal one adds NNQ_ERROR, the engine's
 * LAST_ERROR (a TPB error_id).
 */
static void neuron_hang_uevent(struct neuron_device *ndev, const char *what,
			       u32 c, u32 e, u32 pc)
{
	char evt[24], core[24], engine[24], pcs[24], err[24], pid[24];
	char comm[sizeof("NNQ_COMM=") + NEURON_COMM_ESCAPED_LEN];
	char *envp[8] = { evt, core, engine, pcs, pid, comm, NULL, NULL };
	char p[12], n[NEURON_COMM_ESCAPED_LEN];

	if (!ndev->cdevice)
		return;
	neuron_hang_submitter(ndev, c, e, p, n);
	snprintf(evt, sizeof(evt), "NNQ_EVENT=%s", what);
	snprintf(core, sizeof(core), "NNQ_CORE=%u", c);
	snprintf(engine, sizeof(engine), "NNQ_ENGINE=%u", e);
	snprintf(pcs, sizeof(pcs), "NNQ_PC=%u", pc);
	snprintf(pid, sizeof(pid), "NNQ_PID=%s", p);
	snprintf(comm, sizeof(comm), "NNQ_COMM=%s", n);
	if (!strcmp(what, "fatal")) {
		snprintf(err, sizeof(err), "NNQ_ERROR=%u",
			 neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_LAST_ERROR)));
		envp[6] = err;
	}
	kobject_uevent_env(&ndev->cdevice->kobj, KOBJ_CHANGE, envp);
}

static void neuron_hang_report(struct neuron_device *ndev, u32 c, u32 e,
			       u32 state)
{
	u32 pc = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PC));
	/* one read: the log line says what this report then does */
	bool reset = READ_ONCE(ndev->hang_policy) == NEURON_HANG_RESET;
	struct neuron_event ev = {
		.edge = NEURON_EDGE_HANG,
		.core = c,
		.cause = state,
		.queues = BIT(e),
		.pc = pc,
	};
	char pid[12], comm[NEURON_COMM_ESCAPED_LEN];
	u32 i;

	ndev->hang_seen[c][e] = true;
	ndev->hangs[c][e]++;
	for (i = 0; i < NEURON_ENGINES_PER_CORE; i++)
		ev.count += ndev->hangs[c][i];
	neuron_hang_submitter(ndev, c, e, pid, comm);
	neuron_hw_error(ndev, c, e, NEURON_HWE_HANG,
			reset ? NEURON_HWA_NONE : NEURON_HWA_CHECK_PROGRAM,
			"%s at pc %u, nothing retired for %u ms; program of pid %s comm %s; %s",
			state == NEURON_ENGINE_WAITING ? "waiting" : "running",
			pc, neuron_hang_timeout(ndev, c), pid, comm,
			reset ? "engine reset (hang_policy reset)" :
				"left to its owner (hang_policy report)");
	neuron_hang_dump(ndev, c, e, NEURON_COREDUMP_HANG, pc);
	neuron_events_broadcast(ndev, &ev);
	neuron_hang_uevent(ndev, "hang", c, e, pc);
	if (reset) {
		state = neuron_hw_engine_reset(ndev, c, e);
		neuron_busy_update(ndev, c, e, NEURON_ENGINE_IDLE);
		ndev->eng_owner[c][e] = NULL;
		if (neuron_engine_state_busy(state))
			neuron_events_engines_stopped(ndev, c, BIT(e),
						      NEURON_STOP_HANG);
	}
}

/*
 * One engine's sample; &neuron_device.lock held, device in service.
 * Returns the jiffies until the stall it times reaches its timeout, or
 * MAX_JIFFY_OFFSET when it times none.
 */
static unsigned long neuron_hang_check(struct neuron_device *ndev, u32 c,
				       u32 e)
{
	u32 state = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_STATUS));
	u32 exec = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_EXEC_COUNT));
	u32 src = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_SOFT_RESET_COUNTER));
	unsigned long now = jiffies;
	/* progress: an instruction retired or another program started */
	u32 mark = exec ^ (src << 20);
	unsigned long deadline;

	/* the scanner's sample is also the busy time's (neuron_busy.c) */
	neuron_busy_update(ndev, c, e, state);
	if (state == NEURON_ENGINE_HALTED) {
		if (!ndev->hang_seen[c][e]) {
			u32 pc = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PC));
			u32 err = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_LAST_ERROR));
			char pid[12], comm[NEURON_COMM_ESCAPED_LEN];

			neuron_hang_submitter(ndev, c, e, pid, comm);
			neuron_hw_error(ndev, c, e, NEURON_HWE_ENGINE_HALTED,
					NEURON_HWA_CHECK_PROGRAM,
					"fatal error %u at pc %u; program of pid %s comm %s; halted until the engine is reset",
					err, pc, pid, comm);
			neuron_hang_dump(ndev, c, e, NEURON_COREDUMP_HALTED, pc);
			neuron_hang_uevent(ndev, "fatal", c, e, pc);
		}
		ndev->hang_seen[c][e] = true;
		ndev->hang_since[c][e] = 0;
		return MAX_JIFFY_OFFSET;
	}
	if (!neuron_engine_state_busy(state)) {
		ndev->hang_seen[c][e] = false;
		ndev->hang_since[c][e] = 0;
		return MAX_JIFFY_OFFSET;
	}
	if (!ndev->hang_since[c][e] || mark != ndev->hang_exec[c][e]) {
		ndev->hang_exec[c][e] = mark;
		ndev->hang_since[c][e] = now ?: 1;
		ndev->hang_seen[c][e] = false;
	}
	if (ndev->hang_seen[c][e])
		return MAX_JIFFY_OFFSET;
	deadline = ndev->hang_since[c][e] +
		   msecs_to_jiffies(neuron_hang_timeout(ndev, c));
	if (time_before(now, deadline))
		return deadline - now;
	neuron_hang_report(ndev, c, e, state);
	return MAX_JIFFY_OFFSET;
}

static void neuron_hang_work(struct work_struct *work)
{
	struct neuron_device *ndev = container_of(to_delayed_work(work),
						  struct neuron_device,
						  hang_work);
	unsigned long period, next = MAX_JIFFY_OFFSET;
	u32 c, e;

	/* offline or dead: neuron_hang_start() arms it again */
	if (neuron_enter(ndev))
		return;
	mutex_lock(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++)
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++)
			next = min(next, neuron_hang_check(ndev, c, e));
	/* a stall's timeout is judged when it is up, not a period later */
	period = clamp(next, 1UL, neuron_hang_period(ndev));
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	schedule_delayed_work(&ndev->hang_work, period);
}

/**
 * neuron_hang_init() - prepare the hang scanner of a new device
 * @ndev: device being probed
 */
void neuron_hang_init(struct neuron_device *ndev)
{
	INIT_DELAYED_WORK(&ndev->hang_work, neuron_hang_work);
}

/**
 * neuron_hang_start() - start scanning a device that entered service
 * @ndev: device, @offline just cleared by the enable path
 *
 * Forgets every stall seen before (the disable path reset the engines).
 */
void neuron_hang_start(struct neuron_device *ndev)
{
	mutex_lock(&ndev->lock);
	memset(ndev->hang_since, 0, sizeof(ndev->hang_since));
	memset(ndev->hang_seen, 0, sizeof(ndev->hang_seen));
	mutex_unlock(&ndev->lock);
	schedule_delayed_work(&ndev->hang_work, 0);
}

/**
 * neuron_hang_stop() - stop scanning
 * @ndev: device, fenced (offline or dead) by the disable path, no lock held
 *
 * The scanner finds the device out of service and does not re-arm; a run
 * under way is waited for.
 */
void neuron_hang_stop(struct neuron_device *ndev)
{
	cancel_delayed_work_sync(&ndev->hang_work);
}

/**
 * neuron_hang_ioctl_timeout() - NEURON_IOC_HANG_TIMEOUT
 * @nfile: the caller's file
 * @arg: in: @core (< num_cores), @timeout_ms (NEURON_HANG_TIMEOUT_MIN_MS..
 *	NEURON_HANG_TIMEOUT_MAX_MS, or 0 to only query), @reserved zero
 *	(@is_default is out only); out: @timeout_ms, the core's timeout now,
 *	@is_default (1: the module parameter hang_timeout_ms applies)
 *
 * Setting needs ownership of the core (docs/decisions/0005-tenancy.md; a free
 * core becomes the caller's); the override lasts while the caller owns the
 * core. The scanner runs at once, so its period follows the new timeout.
 * docs/decisions/0012-hang-detection.md.
 *
 * Return: 0; -EINVAL (core or timeout_ms out of range, reserved nonzero);
 * -EPERM (another file owns the core); -ENOMEM; -EIO (stale file, device
 * offline); -ENODEV (device removed).
 */
int neuron_hang_ioctl_timeout(struct neuron_file *nfile,
			      struct neuron_hang_timeout *arg)
{
	static const char cmd[] = "HANG_TIMEOUT";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core;
	int ret;

	if (c >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (arg->timeout_ms && (arg->timeout_ms < NEURON_HANG_TIMEOUT_MIN_MS ||
				arg->timeout_ms > NEURON_HANG_TIMEOUT_MAX_MS))
		return neuron_bad_field(ndev, cmd, "timeout_ms");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	if (arg->timeout_ms) {
		ret = neuron_owner_claim(nfile, c);
		if (ret)
			goto out_unlock;
		ndev->hang_timeout_ms[c] = arg->timeout_ms;
		ndev->hang_timeout_client[c] = nfile->client_id;
		mod_delayed_work(system_wq, &ndev->hang_work, 0);
	}
	arg->is_default = !neuron_hang_overridden(ndev, c);
	arg->timeout_ms = neuron_hang_timeout(ndev, c);
out_unlock:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}
