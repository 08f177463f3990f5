// SPDX-License-Identifier: GPL-2.0
/*
 * Core ownership (docs/decisions/0005-tenancy.md; include/uapi/linux/neuron.h
 * "Tenancy", NEURON_IOC_CORE_ACQUIRE/RELEASE).
 *
 * Every core (TPB) belongs to at most one open file: &neuron_device.owner
 * names it, &neuron_file.cores is the same fact seen from the file, both
 * under &neuron_device.lock. A file acquires a core explicitly, or
 * implicitly through the first call that needs ownership of a free core
 * (neuron_owner_claim(), called by the queue, engine and EVT_SEM handlers).
 * The owner alone may change anything on its cores; the engines it started
 * are reset and its completion notifications (NEURON_IOC_NOTIFY_TRIGGER)
 * disarmed when it gives a core up. sysfs core_owners prints the table
 * (neuron_sysfs.c). The first acquisition subscribes the
 * file to events (neuron_events.c), so its NOTIFIC edges reach it.
 *
 * Grants (NEURON_IOC_CORE_GRANT, docs/decisions/0024-submit-detach.md): the
 * owner may name one uid per core, &neuron_device.grant_uid, whose files
 * may submit detached programs there; such a program belongs to the owner
 * (neuron_owner_of_program()), so giving the core up stops it like the
 * owner's own. Grants end with the ownership and on a device reset. Every
 * program stopped while RUNNING or WAITING is counted and reported
 * (neuron_events_engines_stopped()).
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"

/* Give @nfile core @c, which nobody owns; &neuron_device.lock held. */
static int neuron_owner_take(struct neuron_file *nfile, u32 c)
{
	struct neuron_device *ndev = nfile->ndev;
	u32 e;
	int ret;

	ret = neuron_events_subscribe(nfile);
	if (ret)
		return ret;
	if (!nfile->cores) {
		put_pid(nfile->owner_pid);
		nfile->owner_pid = get_task_pid(current, PIDTYPE_TGID);
		get_task_comm(nfile->owner_comm, current);
	}
	ndev->owner[c] = nfile;
	/* fdinfo counts the instructions retired and busy time from here on */
	for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		ndev->exec_base[c][e] =
			neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_EXEC_COUNT));
		ndev->busy_base[c][e] = neuron_busy_ns(ndev, c, e);
	}
	/* and the AXI_EVT_SEM records lost (NOTIFY_TRIGGER @axi_dropped) */
	ndev->axi_dropped_base[c] = neuron_hw_axi_dropped(ndev, c);
	neuron_events_set_owner(ndev, c, nfile);
	nfile->cores |= BIT_ULL(c);
	return 0;
}

/*
 * Take core @c from @nfile, resetting the engines whose programs belong to
 * it (its own and the detached ones it holds) and ending the core's grant.
 * The programs stopped while running or waiting are reported with @cause
 * (enum neuron_stop_cause) before the core's edges stop reaching @nfile.
 * Without @hw (the disable path has fenced the device and stops every
 * engine itself) only the bookkeeping is done.
 */
static void neuron_owner_drop(struct neuron_file *nfile, u32 c, u32 cause,
			      bool hw)
{
	struct neuron_device *ndev = nfile->ndev;
	u32 e, state, stopped = 0;

	for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		if (ndev->eng_owner[c][e] != nfile)
			continue;
		if (hw) {
			state = neuron_hw_engine_reset(ndev, c, e);
			if (neuron_engine_state_busy(state))
				stopped |= BIT(e);
			neuron_busy_update(ndev, c, e, NEURON_ENGINE_IDLE);
		}
		ndev->eng_owner[c][e] = NULL;
	}
	neuron_events_engines_stopped(ndev, c, stopped, cause);
	/*
	 * The next owner starts with no DMA or AXI_EVT_SEM records armed and
	 * with none of this owner's semaphores, events, $S or flags
	 */
	if (hw) {
		neuron_hw_notify_off(ndev, c);
		neuron_hw_core_scrub(ndev, c);
	}
	ndev->grant_cores &= ~BIT_ULL(c);
	ndev->owner[c] = NULL;
	neuron_events_set_owner(ndev, c, NULL);
	/* the edges this owner's programs made are not the next owner's */
	neuron_irq_ratelimit_forget(ndev, c);
	nfile->cores &= ~BIT_ULL(c);
}

/**
 * neuron_owner_claim() - check, or implicitly take, ownership of a core
 * @nfile: the caller's file
 * @core: core index, < num_cores
 *
 * Called with &neuron_device.lock held by every handler that changes
 * something on a core (docs/decisions/0005-tenancy.md "implicit acquisition").
 *
 * Return: 0 if @nfile owns @core, now or already; -EPERM if another file
 * owns it; -ENOMEM (the file's event queue could not be allocated).
 */
int neuron_owner_claim(struct neuron_file *nfile, u32 core)
{
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_file *owner;

	lockdep_assert_held(&ndev->lock);
	owner = ndev->owner[core];
	if (owner == nfile)
		return 0;
	if (owner) {
		dev_dbg_ratelimited(&ndev->pdev->dev, "core %u is owned by pid %d (%s); refused pid %d (%s)\n",
				    core, pid_nr(owner->owner_pid),
				    owner->owner_comm, task_tgid_nr(current),
				    current->comm);
		return -EPERM;
	}
	return neuron_owner_take(nfile, core);
}

/**
 * neuron_owner_of_program() - the file a program submitted to a core belongs to
 * @nfile: the submitting file
 * @core: core index, < num_cores
 * @detach: NEURON_SUBMIT_F_DETACH was given
 *
 * Called with &neuron_device.lock held by SUBMIT. Without @detach, and
 * with it when @nfile owns @core or nobody does, this is
 * neuron_owner_claim(): the program is @nfile's. With @detach on a core
 * another file owns, the program is that owner's if the owner granted the
 * core to the uid @nfile was opened with (the effective uid of its
 * f_cred: a permission travels with the file, not with whoever calls
 * through it); docs/decisions/0024-submit-detach.md.
 *
 * Return: the program's owner: @nfile or the core's owner;
 * ERR_PTR(-EPERM) (another file owns the core and granted it to no uid of
 * @nfile); ERR_PTR(-ENOMEM) (the file's event queue, implicit claim).
 */
struct neuron_file *neuron_owner_of_program(struct neuron_file *nfile,
					    u32 core, bool detach)
{
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_file *owner;
	kuid_t uid;
	int ret;

	lockdep_assert_held(&ndev->lock);
	owner = ndev->owner[core];
	if (detach && owner && owner != nfile) {
		uid = nfile->filp->f_cred->euid;
		if ((ndev->grant_cores & BIT_ULL(core)) &&
		    uid_eq(ndev->grant_uid[core], uid))
			return owner;
		dev_dbg_ratelimited(&ndev->pdev->dev, "core %u: pid %d (%s) holds no grant for uid %u; detached submit refused\n",
				    core, task_tgid_nr(current), current->comm,
				    from_kuid_munged(&init_user_ns, uid));
		return ERR_PTR(-EPERM);
	}
	ret = neuron_owner_claim(nfile, core);
	return ret ? ERR_PTR(ret) : nfile;
}

/* Validate a core mask: no bit at or above num_cores, reserved zero. */
static int neuron_owner_check(struct neuron_device *ndev, const char *cmd,
			      const struct neuron_cores *arg)
{
	if (arg->cores & ~GENMASK_ULL(ndev->num_cores - 1, 0))
		return neuron_bad_field(ndev, cmd, "cores");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	return 0;
}

/**
 * neuron_owner_ioctl_acquire() - NEURON_IOC_CORE_ACQUIRE
 * @nfile: the caller's file
 * @arg: in: @cores, a mask of core indices (< num_cores), @reserved zero;
 *	out: @owned, the cores the file owns afterwards
 *
 * All or nothing: if any named core belongs to another file, none is
 * taken. docs/decisions/0005-tenancy.md.
 *
 * Return: 0; -EINVAL (a bit >= num_cores, reserved nonzero); -EBUSY (a
 * named core is owned by another file); -ENOMEM (event queue); -EIO (stale
 * file or device offline); -ENODEV (device removed).
 */
int neuron_owner_ioctl_acquire(struct neuron_file *nfile,
			       struct neuron_cores *arg)
{
	struct neuron_device *ndev = nfile->ndev;
	unsigned long want;
	unsigned int c;
	int ret;

	ret = neuron_owner_check(ndev, "CORE_ACQUIRE", arg);
	if (ret)
		return ret;
	want = arg->cores;

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	for_each_set_bit(c, &want, NEURON_MAX_CORES) {
		if (ndev->owner[c] && ndev->owner[c] != nfile) {
			ret = -EBUSY;
			goto out;
		}
	}
	for_each_set_bit(c, &want, NEURON_MAX_CORES) {
		if (ndev->owner[c])
			continue;
		ret = neuron_owner_take(nfile, c);
		if (ret)	/* only the first take allocates */
			goto out;
	}
out:
	arg->owned = nfile->cores;
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_owner_ioctl_release() - NEURON_IOC_CORE_RELEASE
 * @nfile: the caller's file
 * @arg: in: @cores, a mask of cores this file owns, @reserved zero; out:
 *	@owned, the cores the file still owns
 *
 * Resets the engines the file started on each named core, then frees the
 * cores. All or nothing, like acquisition. docs/decisions/0005-tenancy.md.
 *
 * Return: 0; -EINVAL (a bit >= num_cores, reserved nonzero); -EPERM (a
 * named core is not owned by this file); -EBUSY (the file has a queue on a
 * named core); -EIO (stale file or device offline); -ENODEV (device
 * removed).
 */
int neuron_owner_ioctl_release(struct neuron_file *nfile,
			       struct neuron_cores *arg)
{
	struct neuron_device *ndev = nfile->ndev;
	unsigned long want;
	unsigned int c, q;
	int ret;

	ret = neuron_owner_check(ndev, "CORE_RELEASE", arg);
	if (ret)
		return ret;
	want = arg->cores;

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	if (want & ~nfile->cores) {
		ret = -EPERM;
		goto out;
	}
	for_each_set_bit(c, &want, NEURON_MAX_CORES) {
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
			if (ndev->nq[c][q]) {
				ret = -EBUSY;
				goto out;
			}
		}
	}
	for_each_set_bit(c, &want, NEURON_MAX_CORES)
		neuron_owner_drop(nfile, c, NEURON_STOP_CORE_RELEASE, true);
out:
	arg->owned = nfile->cores;
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_owner_ioctl_grant() - NEURON_IOC_CORE_GRANT
 * @nfile: the caller's file
 * @arg: in: @cores, a mask of cores this file owns; @op
 *	NEURON_GRANT_OP_GRANT or NEURON_GRANT_OP_REVOKE; @uid, for GRANT the
 *	user ID in the caller's user namespace, for REVOKE zero; @reserved
 *	zero. out: @granted, the cores of this file with a grant afterwards
 *
 * GRANT lets files opened by @uid submit detached programs
 * (NEURON_SUBMIT_F_DETACH) to the named cores, replacing an earlier
 * grant's uid; REVOKE ends the grants (running programs keep running).
 * All or nothing: nothing changes unless the file owns every named core.
 * Unlike the calls that change a core, it never takes a free one.
 * docs/decisions/0024-submit-detach.md.
 *
 * Return: 0; -EINVAL (a bit >= num_cores, unknown op, @uid unmapped or
 * nonzero for REVOKE, reserved nonzero); -EPERM (a named core is not owned
 * by this file); -EIO (stale file or device offline); -ENODEV (device
 * removed).
 */
int neuron_owner_ioctl_grant(struct neuron_file *nfile,
			     struct neuron_core_grant *arg)
{
	static const char cmd[] = "CORE_GRANT";
	struct neuron_device *ndev = nfile->ndev;
	kuid_t uid = INVALID_UID;
	unsigned long want;
	unsigned int c;
	int ret;

	if (arg->cores & ~GENMASK_ULL(ndev->num_cores - 1, 0))
		return neuron_bad_field(ndev, cmd, "cores");
	if (arg->op != NEURON_GRANT_OP_GRANT && arg->op != NEURON_GRANT_OP_REVOKE)
		return neuron_bad_field(ndev, cmd, "op");
	if (arg->op == NEURON_GRANT_OP_GRANT) {
		uid = make_kuid(current_user_ns(), arg->uid);
		if (!uid_valid(uid))
			return neuron_bad_field(ndev, cmd, "uid");
	} else if (arg->uid) {
		return neuron_bad_field(ndev, cmd, "uid");
	}
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	want = arg->cores;

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	if (want & ~nfile->cores) {
		ret = -EPERM;
		goto out;
	}
	for_each_set_bit(c, &want, NEURON_MAX_CORES) {
		if (arg->op == NEURON_GRANT_OP_GRANT) {
			ndev->grant_uid[c] = uid;
			ndev->grant_cores |= BIT_ULL(c);
		} else {
			ndev->grant_cores &= ~BIT_ULL(c);
		}
	}
out:
	arg->granted = ndev->grant_cores & nfile->cores;
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_owner_release_file() - free every core of a closing file
 * @nfile: the file being released
 * @hw: the device is live: reset the file's engines; false once the
 *	disable path has fenced the device (it stops every engine itself)
 *
 * Called with &neuron_device.lock held, before the file's queues are torn
 * down: the engines whose programs belong to it (detached ones included)
 * stop first, each one stopped while it ran is reported
 * (NEURON_STOP_RELEASE), and the cores' grants end. Afterwards no core,
 * engine or event route names @nfile.
 */
void neuron_owner_release_file(struct neuron_file *nfile, bool hw)
{
	unsigned long cores = nfile->cores;
	unsigned int c;

	lockdep_assert_held(&nfile->ndev->lock);
	for_each_set_bit(c, &cores, NEURON_MAX_CORES)
		neuron_owner_drop(nfile, c, NEURON_STOP_RELEASE, hw);
}

/**
 * neuron_owner_forget_all() - free every core of every file
 * @ndev: device, in the disable path with &neuron_device.lock held; the
 *	engines are stopped already
 *
 * The files open now are stale (docs/decisions/0011-reset-and-recovery.md):
 * a file opened after the reset may acquire the cores. Every grant ends.
 */
void neuron_owner_forget_all(struct neuron_device *ndev)
{
	u32 c;

	lockdep_assert_held(&ndev->lock);
	ndev->grant_cores = 0;
	for (c = 0; c < NEURON_MAX_CORES; c++) {
		if (ndev->owner[c])
			ndev->owner[c]->cores = 0;
		ndev->owner[c] = NULL;
		neuron_events_set_owner(ndev, c, NULL);
		neuron_irq_ratelimit_forget(ndev, c);
	}
}
