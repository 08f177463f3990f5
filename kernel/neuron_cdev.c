// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/nnqN and /dev/nnqN-coreC: file operations and ioctl dispatch
 * (docs/decisions/0001-original-architecture.md#arch-driver,
 * docs/decisions/0017-core-nodes.md, include/uapi/linux/neuron.h).
 *
 * Both kinds of node have the same file operations and the same struct
 * neuron_file; a file of a core node differs only in
 * &neuron_file.node_cores and &neuron_file.core_node, which the dispatcher
 * checks before any command runs (neuron_ioctl_node_check()), so ownership,
 * release, reset and removal take one path whatever node a file came from.
 *
 * Every ioctl argument is copied in with copy_struct_from_user() at the
 * caller's size (_IOC_SIZE(cmd): any size from the command's first release
 * up, docs/decisions/0010-uapi-growth.md), checked with no lock held (reserved
 * fields and unknown flags must be zero: -EINVAL, and a dynamic-debug
 * message names the field), carried out with the device's locks held, and
 * copied back out with no lock held. No user copy is ever done under
 * &neuron_device.rwsem or &neuron_device.lock (see neuron.h).
 */
#include <linux/cdev.h>
#include <linux/compat.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"

static dev_t neuron_devt_base;

/*
 * A static class registered with class_register() builds unchanged where
 * class_create() lost its owner argument (6.4), see neuron_compat.h.
 */
static struct class neuron_class = {
	.name = NEURON_DEV_NAME,
};

static dev_t neuron_devt(u32 id)
{
	return MKDEV(MAJOR(neuron_devt_base), id);
}

/* The first core node's number of device @id (see NEURON_CORE_MINOR_BASE). */
static dev_t neuron_core_devt(u32 id, u32 core)
{
	return MKDEV(MAJOR(neuron_devt_base),
		     NEURON_CORE_MINOR_BASE + id * NEURON_MAX_CORES + core);
}

/*
 * The instance number and, for a core node, the core of a minor number;
 * *@core is U32_MAX for /dev/nnqN.
 */
static u32 neuron_minor_decode(unsigned int minor, u32 *core)
{
	if (minor < NEURON_CORE_MINOR_BASE) {
		*core = U32_MAX;
		return minor;
	}
	minor -= NEURON_CORE_MINOR_BASE;
	*core = minor % NEURON_MAX_CORES;
	return minor / NEURON_MAX_CORES;
}

/**
 * neuron_ioctl_device_info() - NEURON_IOC_DEVICE_INFO
 * @nfile: the caller's file
 * @info: out: struct neuron_device_info, reserved fields zero
 *
 * Reports the geometry read at probe (regs.h global page), the ABI
 * limits of include/uapi/linux/neuron.h and the mapping sizes of this
 * kernel (@page_size = PAGE_SIZE, @doorbell_size), and the cores the file
 * may name (@file_cores: one for a core node's file);
 * docs/decisions/0001-original-architecture.md#arch-driver
 * "device info", #page-size, #core-nodes.
 *
 * Return: 0, or -ENODEV if the device was removed.
 */
static int neuron_ioctl_device_info(struct neuron_file *nfile,
				    struct neuron_device_info *info)
{
	struct neuron_device *ndev = nfile->ndev;
	int ret;

	ret = neuron_enter(ndev);
	if (ret)
		return ret;
	memset(info, 0, sizeof(*info));
	info->abi_version = NEURON_ABI_VERSION;
	info->vendor = ndev->pdev->vendor;
	info->device = ndev->pdev->device;
	info->num_cores = ndev->num_cores;
	info->engines_per_core = NEURON_ENGINES_PER_CORE;
	info->queues_per_core = NEURON_NUM_SW_QUEUES;
	info->gen = ndev->gen;
	info->mem_size = ndev->mem_size;
	info->nq_size_min = NEURON_NQ_SIZE_MIN;
	info->nq_size_max = NEURON_NQ_SIZE_MAX;
	info->max_program_insns = NEURON_MAX_PROGRAM_INSNS;
	info->timestamp_inc_ps = ndev->timestamp_inc_ps;
	info->mem_alloc_limit = ndev->mem_limit;
	info->capabilities = NEURON_CAP_SIZED_ARGS | NEURON_CAP_TENANCY |
			     NEURON_CAP_EVENT_SIZE | NEURON_CAP_RESET_EVENTS |
			     NEURON_CAP_COALESCE | NEURON_CAP_TIMESTAMP |
			     NEURON_CAP_SUBMIT_GRANT | NEURON_CAP_STATUS_PAGE |
			     NEURON_CAP_PAGE_SIZE | NEURON_CAP_ROUTE |
			     NEURON_CAP_CORE_NODES | NEURON_CAP_HANG |
			     NEURON_CAP_AXI_DROPPED;
	if (IS_ENABLED(CONFIG_DIMLIB))
		info->capabilities |= NEURON_CAP_ADAPTIVE;
	info->file_cores = nfile->node_cores;
	/* mapping lengths come from here, never from 4 KiB (neuron_mmap.c) */
	info->page_size = PAGE_SIZE;
	info->doorbell_size = neuron_mmap_doorbell_size();
	neuron_exit(ndev);
	return 0;
}

/**
 * neuron_ioctl_timestamp() - NEURON_IOC_TIMESTAMP: one device clock sample
 * @nfile: the caller's file (any: read-only and stale files too)
 * @ts: in: @core (< num_cores), @reserved0 and @reserved zero; out:
 *	@sys_before_ns and @sys_after_ns (CLOCK_MONOTONIC nanoseconds) around
 *	the read of the core's NOTIFIC timestamp @device_ps (picoseconds, the
 *	clock that stamps records: docs/hardware.md#timestamp)
 *
 * Reads TIMESTAMP_LO, which latches TIMESTAMP_HI, then TIMESTAMP_HI,
 * between two ktime_get_ns() calls, like PTP_SYS_OFFSET_EXTENDED: the
 * device read happened inside [@sys_before_ns, @sys_after_ns]. The pair is
 * read under &neuron_device.ts_lock so two callers' latches do not mix;
 * holding a spinlock also keeps the window free of preemption. It changes
 * nothing, so a read-only file and a file left stale by a reset may call
 * it, as DEVICE_INFO (docs/decisions/0028-coalescing.md: why it exists).
 *
 * Return: 0; -EINVAL (core out of range, reserved nonzero; the debug log
 * names the field); -EIO (device offline for a reset); -ENODEV (device
 * removed).
 */
static int neuron_ioctl_timestamp(struct neuron_file *nfile,
				  struct neuron_timestamp *ts)
{
	static const char cmd[] = "TIMESTAMP";
	struct neuron_device *ndev = nfile->ndev;
	u32 lo, hi;
	int ret;

	if (ts->core >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (ts->reserved0)
		return neuron_bad_field(ndev, cmd, "reserved0");
	if (ts->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter(ndev);
	if (ret)
		return ret;
	spin_lock(&ndev->ts_lock);
	ts->sys_before_ns = ktime_get_ns();
	lo = neuron_rd(ndev, NEURON_NOTIFIC_REG(ts->core, NEURON_NOTIFIC_TIMESTAMP_LO));
	hi = neuron_rd(ndev, NEURON_NOTIFIC_REG(ts->core, NEURON_NOTIFIC_TIMESTAMP_HI));
	ts->sys_after_ns = ktime_get_ns();
	spin_unlock(&ndev->ts_lock);
	neuron_exit(ndev);
	ts->device_ps = (u64)hi << 32 | lo;
	return 0;
}

union neuron_ioctl_arg {
	struct neuron_device_info device_info;
	struct neuron_nq_init nq_init;
	struct neuron_nq_id nq_id;
	struct neuron_nq_info nq_info;
	struct neuron_submit submit;
	struct neuron_engine_status engine_status;
	struct neuron_engine_id engine_id;
	struct neuron_feature_flags feature_flags;
	struct neuron_nq_eventfd nq_eventfd;
	struct neuron_evt_sem evt_sem;
	struct neuron_throttle throttle;
	struct neuron_cores cores;
	struct neuron_mem_alloc mem_alloc;
	struct neuron_mem_free mem_free;
	struct neuron_event_size event_size;
	struct neuron_notify_trigger notify_trigger;
	struct neuron_nq_coalesce nq_coalesce;
	struct neuron_timestamp timestamp;
	struct neuron_core_grant core_grant;
	struct neuron_nq_head nq_head;
	struct neuron_nq_route nq_route;
	struct neuron_hang_timeout hang_timeout;
};

/**
 * enum neuron_node_rule - what a file of a core node may do with a command
 *	(docs/decisions/0017-core-nodes.md has the table)
 * @NEURON_NODE_DEVICE: device-wide: -EPERM. Zero, so a command added
 *	without a rule is refused on core nodes until someone decides
 * @NEURON_NODE_FILE: names no core; acts on the file itself: allowed
 * @NEURON_NODE_CORE: the struct's @core must be the node's core
 * @NEURON_NODE_MASK: the struct's @cores mask may hold the node's core only
 * @NEURON_NODE_OWNER: names no core, but on a core node the file must own
 *	the node's core: it is taken if free (implicit acquisition), -EPERM
 *	if another file owns it (MEM_ALLOC: a core node's memory is its
 *	core's owner's)
 */
enum neuron_node_rule {
	NEURON_NODE_DEVICE = 0,
	NEURON_NODE_FILE,
	NEURON_NODE_CORE,
	NEURON_NODE_MASK,
	NEURON_NODE_OWNER,
};

/**
 * struct neuron_ioctl_def - what the dispatcher knows of one command
 * @cmd:	the command with the kernel's struct size
 * @size_ver0:	the smallest struct size accepted: the first release's
 * @read_only:	allowed on a file opened without write access
 * @node:	enum neuron_node_rule: allowed on a core node's file?
 */
struct neuron_ioctl_def {
	unsigned int cmd;
	unsigned int size_ver0;
	bool read_only;
	u8 node;
};

#define NEURON_IOCTL(name, arg, ro, rule) \
	[_IOC_NR(NEURON_IOC_##name)] = { NEURON_IOC_##name, \
					 NEURON_##arg##_SIZE_VER0, ro, \
					 NEURON_NODE_##rule }

/* Indexed by command number; the UAPI header documents each. */
static const struct neuron_ioctl_def neuron_ioctls[] = {
	NEURON_IOCTL(DEVICE_INFO, DEVICE_INFO, true, FILE),
	NEURON_IOCTL(NQ_INIT, NQ_INIT, false, CORE),
	NEURON_IOCTL(NQ_DESTROY, NQ_ID, false, CORE),
	NEURON_IOCTL(NQ_INFO, NQ_INFO, false, CORE),
	NEURON_IOCTL(SUBMIT, SUBMIT, false, CORE),
	NEURON_IOCTL(ENGINE_STATUS, ENGINE_STATUS, true, CORE),
	NEURON_IOCTL(ENGINE_RESET, ENGINE_ID, false, CORE),
	NEURON_IOCTL(FEATURE_FLAGS, FEATURE_FLAGS, false, CORE),
	NEURON_IOCTL(NQ_EVENTFD, NQ_EVENTFD, false, CORE),
	NEURON_IOCTL(EVT_SEM, EVT_SEM, false, CORE),
	NEURON_IOCTL(THROTTLE, THROTTLE, false, DEVICE),
	NEURON_IOCTL(CORE_ACQUIRE, CORES, false, MASK),
	NEURON_IOCTL(CORE_RELEASE, CORES, false, MASK),
	NEURON_IOCTL(MEM_ALLOC, MEM_ALLOC, false, OWNER),
	NEURON_IOCTL(MEM_FREE, MEM_FREE, false, FILE),
	NEURON_IOCTL(EVENT_SIZE, EVENT_SIZE, false, FILE),
	NEURON_IOCTL(NOTIFY_TRIGGER, NOTIFY_TRIGGER, false, CORE),
	NEURON_IOCTL(NQ_COALESCE, NQ_COALESCE, false, CORE),
	NEURON_IOCTL(TIMESTAMP, TIMESTAMP, true, CORE),
	NEURON_IOCTL(CORE_GRANT, CORE_GRANT, false, MASK),
	NEURON_IOCTL(NQ_HEAD, NQ_HEAD, false, CORE),
	NEURON_IOCTL(NQ_ROUTE, NQ_ROUTE, false, CORE),
	NEURON_IOCTL(HANG_TIMEOUT, HANG_TIMEOUT, false, CORE),
};

/*
 * The definition of @cmd whatever struct size it carries, or NULL for a
 * command this driver does not have (type, number or direction).
 */
static const struct neuron_ioctl_def *neuron_ioctl_find(unsigned int cmd)
{
	const struct neuron_ioctl_def *def;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != NEURON_IOCTL_MAGIC || nr >= ARRAY_SIZE(neuron_ioctls))
		return NULL;
	def = &neuron_ioctls[array_index_nospec(nr, ARRAY_SIZE(neuron_ioctls))];
	if (!def->cmd || _IOC_DIR(cmd) != _IOC_DIR(def->cmd))
		return NULL;
	return def;
}

/*
 * The @core or @cores field of a command whose rule is NEURON_NODE_CORE or
 * NEURON_NODE_MASK (one switch, beside the dispatcher's, so a new command
 * of either rule gets its field named here or is refused below).
 */
static bool neuron_ioctl_core_field(unsigned int cmd,
				    const union neuron_ioctl_arg *karg,
				    u64 *val)
{
	switch (cmd) {
	case NEURON_IOC_NQ_INIT:
		*val = karg->nq_init.core;
		return true;
	case NEURON_IOC_NQ_DESTROY:
		*val = karg->nq_id.core;
		return true;
	case NEURON_IOC_NQ_INFO:
		*val = karg->nq_info.core;
		return true;
	case NEURON_IOC_SUBMIT:
		*val = karg->submit.core;
		return true;
	case NEURON_IOC_ENGINE_STATUS:
		*val = karg->engine_status.core;
		return true;
	case NEURON_IOC_ENGINE_RESET:
		*val = karg->engine_id.core;
		return true;
	case NEURON_IOC_FEATURE_FLAGS:
		*val = karg->feature_flags.core;
		return true;
	case NEURON_IOC_NQ_EVENTFD:
		*val = karg->nq_eventfd.core;
		return true;
	case NEURON_IOC_EVT_SEM:
		*val = karg->evt_sem.core;
		return true;
	case NEURON_IOC_NOTIFY_TRIGGER:
		*val = karg->notify_trigger.core;
		return true;
	case NEURON_IOC_NQ_COALESCE:
		*val = karg->nq_coalesce.core;
		return true;
	case NEURON_IOC_TIMESTAMP:
		*val = karg->timestamp.core;
		return true;
	case NEURON_IOC_NQ_HEAD:
		*val = karg->nq_head.core;
		return true;
	case NEURON_IOC_NQ_ROUTE:
		*val = karg->nq_route.core;
		return true;
	case NEURON_IOC_HANG_TIMEOUT:
		*val = karg->hang_timeout.core;
		return true;
	case NEURON_IOC_CORE_ACQUIRE:
	case NEURON_IOC_CORE_RELEASE:
		*val = karg->cores.cores;
		return true;
	case NEURON_IOC_CORE_GRANT:
		*val = karg->core_grant.cores;
		return true;
	}
	return false;
}

/*
 * NEURON_NODE_OWNER: the core node's file owns its core, now or already
 * (neuron_owner_claim(): -EPERM if another file owns it).
 */
static int neuron_ioctl_node_claim(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	int ret;

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	ret = neuron_owner_claim(nfile, __ffs64(nfile->node_cores));
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_ioctl_node_check() - may this file's node carry this command?
 * @nfile: the caller's file
 * @def: the command's definition (its &neuron_ioctl_def.node rule)
 * @karg: the kernel's copy of the argument
 *
 * A file of /dev/nnqN passes every command to its handler. A file of a
 * core node /dev/nnqN-coreC may run a command that acts on the file itself
 * (DEVICE_INFO, MEM_FREE, EVENT_SIZE); MEM_ALLOC once it owns the node's
 * core (taken here if free); one that names a core or a core mask only
 * when it names the node's core alone (a mask of 0, a query, too); a
 * device-wide command (THROTTLE) never (docs/decisions/0017-core-nodes.md).
 * What follows is the handler's, with the same ownership rules as on
 * /dev/nnqN.
 *
 * Return: 0; -EPERM naming the field at debug level (another core, a
 * device-wide command, MEM_ALLOC while another file owns the core);
 * -ENOMEM, -EIO, -ENODEV (taking the core, as neuron_owner_claim() and
 * neuron_enter_file()).
 */
static int neuron_ioctl_node_check(struct neuron_file *nfile,
				   const struct neuron_ioctl_def *def,
				   const union neuron_ioctl_arg *karg)
{
	struct neuron_device *ndev = nfile->ndev;
	const char *what;
	u64 val = 0;

	if (!nfile->core_node || def->node == NEURON_NODE_FILE)
		return 0;
	if (def->node == NEURON_NODE_OWNER)
		return neuron_ioctl_node_claim(nfile);
	if (def->node == NEURON_NODE_DEVICE) {
		what = "command (device-wide)";
	} else if (!neuron_ioctl_core_field(def->cmd, karg, &val)) {
		what = "command (no core field known)";
	} else if (def->node == NEURON_NODE_CORE) {
		if (neuron_file_may_core(nfile, val))
			return 0;
		what = "core";
	} else {
		if (!(val & ~nfile->node_cores))
			return 0;
		what = "cores";
	}
	dev_dbg_ratelimited(&ndev->pdev->dev,
			    "ioctl %u: %s 0x%llx refused on a core node's file (cores 0x%llx; pid %d %s)\n",
			    _IOC_NR(def->cmd), what, val, nfile->node_cores,
			    task_pid_nr(current), current->comm);
	return -EPERM;
}

/* Carry out one command on the kernel's copy of its argument. */
static int neuron_ioctl_dispatch(struct neuron_file *nfile, unsigned int cmd,
				 union neuron_ioctl_arg *karg)
{
	switch (cmd) {
	case NEURON_IOC_DEVICE_INFO:
		return neuron_ioctl_device_info(nfile, &karg->device_info);
	case NEURON_IOC_NQ_INIT:
		return neuron_nq_ioctl_init(nfile, &karg->nq_init);
	case NEURON_IOC_NQ_DESTROY:
		return neuron_nq_ioctl_destroy(nfile, &karg->nq_id);
	case NEURON_IOC_NQ_INFO:
		return neuron_nq_ioctl_info(nfile, &karg->nq_info);
	case NEURON_IOC_SUBMIT:
		return neuron_engine_ioctl_submit(nfile, &karg->submit);
	case NEURON_IOC_ENGINE_STATUS:
		return neuron_engine_ioctl_status(nfile, &karg->engine_status);
	case NEURON_IOC_ENGINE_RESET:
		return neuron_engine_ioctl_reset(nfile, &karg->engine_id);
	case NEURON_IOC_FEATURE_FLAGS:
		return neuron_engine_ioctl_feature_flags(nfile,
							 &karg->feature_flags);
	case NEURON_IOC_NQ_EVENTFD:
		return neuron_events_ioctl_eventfd(nfile, &karg->nq_eventfd);
	case NEURON_IOC_EVT_SEM:
		return neuron_evtsem_ioctl(nfile, &karg->evt_sem);
	case NEURON_IOC_THROTTLE:
		return neuron_irq_ioctl_throttle(nfile, &karg->throttle);
	case NEURON_IOC_CORE_ACQUIRE:
		return neuron_owner_ioctl_acquire(nfile, &karg->cores);
	case NEURON_IOC_CORE_RELEASE:
		return neuron_owner_ioctl_release(nfile, &karg->cores);
	case NEURON_IOC_MEM_ALLOC:
		return neuron_mem_ioctl_alloc(nfile, &karg->mem_alloc);
	case NEURON_IOC_MEM_FREE:
		return neuron_mem_ioctl_free(nfile, &karg->mem_free);
	case NEURON_IOC_EVENT_SIZE:
		return neuron_events_ioctl_size(nfile, &karg->event_size);
	case NEURON_IOC_NOTIFY_TRIGGER:
		return neuron_notify_ioctl_trigger(nfile, &karg->notify_trigger);
	case NEURON_IOC_NQ_COALESCE:
		return neuron_nq_ioctl_coalesce(nfile, &karg->nq_coalesce);
	case NEURON_IOC_TIMESTAMP:
		return neuron_ioctl_timestamp(nfile, &karg->timestamp);
	case NEURON_IOC_CORE_GRANT:
		return neuron_owner_ioctl_grant(nfile, &karg->core_grant);
	case NEURON_IOC_NQ_HEAD:
		return neuron_nq_ioctl_head(nfile, &karg->nq_head);
	case NEURON_IOC_NQ_ROUTE:
		return neuron_nq_ioctl_route(nfile, &karg->nq_route);
	case NEURON_IOC_HANG_TIMEOUT:
		return neuron_hang_ioctl_timeout(nfile, &karg->hang_timeout);
	}
	return -ENOTTY;
}

/*
 * The caller never learns it owns what the call made: undo it (a queue
 * that got mapped meanwhile is cleaned up by release()).
 */
static void neuron_ioctl_undo(struct neuron_file *nfile, unsigned int cmd,
			      const union neuron_ioctl_arg *karg)
{
	if (cmd == NEURON_IOC_NQ_INIT) {
		struct neuron_nq_id nq_id = {
			.core = karg->nq_init.core,
			.queue = karg->nq_init.queue,
		};

		neuron_nq_ioctl_destroy(nfile, &nq_id);
	} else if (cmd == NEURON_IOC_MEM_ALLOC) {
		struct neuron_mem_free mem_free = {
			.offset = karg->mem_alloc.offset,
		};

		neuron_mem_ioctl_free(nfile, &mem_free);
	}
}

/**
 * neuron_ioctl() - ioctl entry of /dev/nnqN
 * @filp: the open file
 * @cmd: NEURON_IOC_* (include/uapi/linux/neuron.h), with the size of the
 *	caller's struct: any size from the command's NEURON_*_SIZE_VER0 up
 * @arg: user pointer to the command's structure
 *
 * Copies the argument in with copy_struct_from_user() (a smaller struct is
 * extended with zeros, a larger one must be zero beyond the kernel's), and
 * the result back up to the smaller of the two sizes
 * (docs/decisions/0010-uapi-growth.md). A file opened without write access may
 * only call DEVICE_INFO, ENGINE_STATUS and TIMESTAMP
 * (docs/decisions/0005-tenancy.md).
 *
 * Return: 0 or the command's error (see each neuron_*_ioctl_* function and
 * the UAPI header); -EPERM on a core node's file for a command naming
 * another core or a device-wide one (neuron_ioctl_node_check()); -ENOTTY
 * for an unknown command; -EINVAL for a struct
 * smaller than the first release's; -E2BIG for a larger struct with a
 * nonzero byte beyond the kernel's; -EBADF for a command that changes
 * something on a file opened read-only; -EFAULT for a bad pointer;
 * -ENODEV once the device is removed.
 */
static long neuron_ioctl(struct file *filp, unsigned int cmd,
			 unsigned long arg)
{
	struct neuron_file *nfile = filp->private_data;
	const struct neuron_ioctl_def *def = neuron_ioctl_find(cmd);
	void __user *uarg = (void __user *)arg;
	union neuron_ioctl_arg karg;
	unsigned int usize = _IOC_SIZE(cmd), ksize;
	int ret;

	if (!def)
		return -ENOTTY;
	if (!def->read_only && !(filp->f_mode & FMODE_WRITE))
		return -EBADF;
	if (usize < def->size_ver0)
		return -EINVAL;
	ksize = _IOC_SIZE(def->cmd);
	if (WARN_ON_ONCE(ksize > sizeof(karg)))
		return -ENOTTY;

	memset(&karg, 0, sizeof(karg));
	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		ret = copy_struct_from_user(&karg, ksize, uarg, usize);
		if (ret)
			return ret;
	}

	ret = neuron_ioctl_node_check(nfile, def, &karg);
	if (ret)
		return ret;
	ret = neuron_ioctl_dispatch(nfile, def->cmd, &karg);
	if (ret || !(_IOC_DIR(cmd) & _IOC_READ))
		return ret;

	if (copy_to_user(uarg, &karg, min(usize, ksize))) {
		neuron_ioctl_undo(nfile, def->cmd, &karg);
		return -EFAULT;
	}
	return 0;
}

/**
 * neuron_open() - open /dev/nnqN or /dev/nnqN-coreC
 * @inode: the character device inode
 * @filp: the new file
 *
 * A file of /dev/nnqN may name every core; one of the core node
 * /dev/nnqN-coreC only core C (&neuron_file.node_cores,
 * docs/decisions/0017-core-nodes.md). A file of /dev/nnqN opened with
 * CAP_SYS_ADMIN is subscribed to every interrupt-edge event at once
 * (neuron_events.c); others subscribe when they need to. Every file gets
 * its status page, LIVE (neuron_status.c).
 *
 * Return: 0; -ENODEV if the device is gone or going (or the core node
 * names no core of it); -EIO while it is offline for a reset; -ENOMEM.
 */
static int neuron_open(struct inode *inode, struct file *filp)
{
	struct neuron_device *ndev;
	struct neuron_file *nfile;
	u32 id, core;
	int ret;

	id = neuron_minor_decode(iminor(inode), &core);
	ndev = neuron_device_get_by_minor(id);
	if (!ndev)
		return -ENODEV;
	if (core != U32_MAX && core >= ndev->num_cores) {
		ret = -ENODEV;
		goto err_put;
	}

	nfile = kzalloc(sizeof(*nfile), GFP_KERNEL_ACCOUNT);
	if (!nfile) {
		ret = -ENOMEM;
		goto err_put;
	}
	nfile->ndev = ndev;
	nfile->filp = filp;
	nfile->core_node = core != U32_MAX;
	nfile->node_cores = nfile->core_node ? BIT_ULL(core) :
			    GENMASK_ULL(ndev->num_cores - 1, 0);
	mutex_init(&nfile->mem_lock);
	nfile->mem_blocks = RB_ROOT;
	neuron_fdinfo_open(nfile);
	ret = neuron_quota_open(nfile);
	if (ret)
		goto err_free;

	ret = neuron_enter(ndev);
	if (ret)
		goto err_quota;
	nfile->reset_gen = ndev->reset_gen;
	ret = neuron_status_open(nfile, ndev->reset_gen);
	if (ret) {
		neuron_exit(ndev);
		goto err_quota;
	}
	ret = neuron_events_open(nfile);
	if (ret) {
		neuron_exit(ndev);
		neuron_status_release(nfile);
		goto err_quota;
	}
	mutex_lock(&ndev->lock);
	list_add_tail(&nfile->node, &ndev->files);
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);

	filp->private_data = nfile;
	return nonseekable_open(inode, filp);

err_quota:
	neuron_quota_put(ndev, nfile->quota);
err_free:
	kfree(nfile);
err_put:
	neuron_device_put(ndev);
	return ret;
}

/**
 * neuron_release() - last close of an open file
 * @inode: the character device inode
 * @filp: the file
 *
 * docs/decisions/0001-original-architecture.md#arch-driver: "NQs belong to
 * the file that made them and are torn down when it is released". The VFS
 * calls this only once no VMA maps the file any more (after kill -9, once
 * the process's memory is torn down). First the engines whose programs
 * belong to this file (its own and the detached ones it holds) are reset,
 * so none keeps writing records, each program stopped that way is reported
 * (NEURON_EDGE_ENGINE_STOPPED), and its cores and their grants are freed
 * (docs/decisions/0005-tenancy.md, #submit-detach); the programs it submitted
 * detached to other files' cores keep running. Then each queue
 * it owns is disabled, the disable flushed with a register read, its
 * eventfd unbound and its ring freed, and its device memory is freed.
 * Once the disable path (neuron_lifecycle.c) has fenced the device (a
 * reset, suspend, PCI error or removal, at any of its steps) the hardware
 * is not touched, but the file is still taken out of every table that
 * names it: its cores and engines are disowned, its queues are left to
 * the disable path to free once bus mastering is off, its memory is
 * returned (docs/decisions/0011-reset-and-recovery.md "release during a
 * reset"). Last, the file's event queue is unsubscribed and freed, its
 * status page (no longer mapped, and off the list the disable path
 * writes) is freed, and its reference on its user's device-memory record
 * is dropped (neuron_quota.c).
 *
 * Return: 0.
 */
static int neuron_release(struct inode *inode, struct file *filp)
{
	struct neuron_file *nfile = filp->private_data;
	struct neuron_device *ndev = nfile->ndev;
	bool live;

	down_read(&ndev->rwsem);
	live = !ndev->dead && !ndev->offline;
	mutex_lock(&ndev->lock);
	list_del(&nfile->node);
	neuron_owner_release_file(nfile, live);
	neuron_nq_release_file(nfile, live);
	neuron_mem_release_file(nfile);
	mutex_unlock(&ndev->lock);
	up_read(&ndev->rwsem);

	neuron_events_release(nfile);
	neuron_mmap_release_file(nfile);
	neuron_status_release(nfile);
	put_pid(nfile->owner_pid);
	neuron_quota_put(ndev, nfile->quota);
	mutex_destroy(&nfile->mem_lock);
	kfree(nfile);
	neuron_device_put(ndev);
	return 0;
}

static const struct file_operations neuron_fops = {
	.owner = THIS_MODULE,
	.open = neuron_open,
	.release = neuron_release,
	.read = neuron_events_read,
	.poll = neuron_events_poll,
	.unlocked_ioctl = neuron_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = neuron_mmap,
	.show_fdinfo = neuron_fdinfo_show,
};

/* A character device with our file operations; NULL if out of memory. */
static struct cdev *neuron_cdev_alloc(void)
{
	/*
	 * The cdev has its own lifetime: open files keep it referenced after
	 * remove() and after struct neuron_device is gone.
	 */
	struct cdev *cdev = cdev_alloc();

	if (cdev) {
		cdev->owner = THIS_MODULE;
		cdev->ops = &neuron_fops;
	}
	return cdev;
}

/* Remove the core nodes' class devices made so far (and none is left). */
static void neuron_cdev_destroy_cores(struct neuron_device *ndev)
{
	u32 c;

	for (c = 0; c < NEURON_MAX_CORES; c++) {
		if (!ndev->core_dev[c])
			continue;
		device_destroy(&neuron_class, neuron_core_devt(ndev->id, c));
		ndev->core_dev[c] = NULL;
	}
}

/*
 * Make /dev/nnqN-coreC for every core: class devices that are children of
 * /dev/nnqN's (their sysfs "device" link names it), each with its core
 * attribute (neuron_sysfs.c).
 */
static int neuron_cdev_create_cores(struct neuron_device *ndev)
{
	struct device *dev;
	u32 c;

	for (c = 0; c < ndev->num_cores; c++) {
		dev = device_create_with_groups(&neuron_class, ndev->cdevice,
						neuron_core_devt(ndev->id, c),
						ndev, neuron_core_attr_groups,
						NEURON_DEV_NAME "%d-core%u",
						ndev->id, c);
		if (IS_ERR(dev)) {
			neuron_cdev_destroy_cores(ndev);
			return PTR_ERR(dev);
		}
		ndev->core_dev[c] = dev;
	}
	return 0;
}

/**
 * neuron_cdev_register() - create /dev/nnq<id> and /dev/nnq<id>-core<c>
 * @ndev: a fully initialised device
 *
 * Publishes the instance number (neuron_device.c) so open() finds it, and
 * makes the whole device's node and one node per core
 * (docs/decisions/0017-core-nodes.md), each live once every node exists.
 *
 * Return: 0, -ENOMEM, or the error of cdev_add() or device_create(). On
 * error the number is not published and no node is left; the caller
 * still frees the number.
 */
int neuron_cdev_register(struct neuron_device *ndev)
{
	dev_t devt = neuron_devt(ndev->id);
	struct device *cdevice;
	int ret;

	ndev->cdev = neuron_cdev_alloc();
	if (!ndev->cdev)
		return -ENOMEM;
	ndev->core_cdev = neuron_cdev_alloc();
	if (!ndev->core_cdev) {
		ret = -ENOMEM;
		goto err_alloc;
	}

	/*
	 * The nodes appear before the cdevs are live (an open in between
	 * gets -ENXIO) and the cdevs before the number is published (an open
	 * in between gets -ENODEV), so nothing can have opened the device if
	 * a step fails.
	 */
	cdevice = device_create_with_groups(&neuron_class,
					    &ndev->pdev->dev, devt, ndev,
					    neuron_attr_groups,
					    NEURON_DEV_NAME "%d", ndev->id);
	if (IS_ERR(cdevice)) {
		ret = PTR_ERR(cdevice);
		goto err_cdev;
	}
	ndev->cdevice = cdevice;
	ret = neuron_cdev_create_cores(ndev);
	if (ret)
		goto err_device;

	ret = cdev_add(ndev->cdev, devt, 1);
	if (ret)
		goto err_cores;
	ret = cdev_add(ndev->core_cdev, neuron_core_devt(ndev->id, 0),
		       ndev->num_cores);
	if (ret) {
		cdev_del(ndev->cdev);
		ndev->cdev = NULL;
		goto err_cores;
	}
	neuron_id_publish(ndev);
	return 0;

err_cores:
	neuron_cdev_destroy_cores(ndev);
err_device:
	device_destroy(&neuron_class, devt);
	ndev->cdevice = NULL;
err_cdev:
	kobject_put(&ndev->core_cdev->kobj);
	ndev->core_cdev = NULL;
err_alloc:
	if (ndev->cdev)
		kobject_put(&ndev->cdev->kobj);
	ndev->cdev = NULL;
	return ret;
}

/**
 * neuron_cdev_unregister() - remove /dev/nnq<id> and its core nodes
 * @ndev: device
 *
 * New opens of any of the nodes fail with -ENODEV from here on; open
 * files are unaffected (neuron_remove() makes their calls fail). The
 * instance number stays reserved until remove() frees it last.
 *
 * The hang scanner still runs until the disable path stops it, and sends
 * its uevents through @ndev->cdevice under &neuron_device.lock: the
 * pointer is cleared under that lock before the class device goes, so a
 * scan either finished its uevent or finds none to send.
 */
void neuron_cdev_unregister(struct neuron_device *ndev)
{
	neuron_id_unpublish(ndev);
	neuron_cdev_destroy_cores(ndev);
	mutex_lock(&ndev->lock);
	ndev->cdevice = NULL;	/* no uevent of the scanner or the disable path */
	mutex_unlock(&ndev->lock);
	device_destroy(&neuron_class, neuron_devt(ndev->id));
	neuron_pause(ndev, NEURON_PAUSE_CDEV_GONE);
	cdev_del(ndev->core_cdev);
	ndev->core_cdev = NULL;
	cdev_del(ndev->cdev);
	ndev->cdev = NULL;
}

/**
 * neuron_cdev_init() - register the character device region and the class
 *
 * The region holds NEURON_MINORS numbers: the whole devices' and the core
 * nodes' (see NEURON_CORE_MINOR_BASE).
 *
 * Called once at module load, before any device is probed.
 *
 * Return: 0 or the error of alloc_chrdev_region() or class_register().
 */
int neuron_cdev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&neuron_devt_base, 0, NEURON_MINORS,
				  NEURON_DEV_NAME);
	if (ret)
		return ret;
	ret = class_register(&neuron_class);
	if (ret)
		unregister_chrdev_region(neuron_devt_base, NEURON_MINORS);
	return ret;
}

/**
 * neuron_cdev_exit() - undo neuron_cdev_init() at module unload
 */
void neuron_cdev_exit(void)
{
	class_unregister(&neuron_class);
	unregister_chrdev_region(neuron_devt_base, NEURON_MINORS);
}
