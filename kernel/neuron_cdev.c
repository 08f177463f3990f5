// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/neuronN: file operations and ioctl dispatch
 * (docs/decisions.md#arch-driver, include/uapi/linux/neuron.h).
 *
 * Every ioctl argument is copied in with exactly _IOC_SIZE(cmd) bytes (the
 * command number encodes the structure size, so a caller built against a
 * different layout gets -ENOTTY), checked with no lock held (reserved
 * fields and unknown flags must be zero: -EINVAL, and a dynamic-debug
 * message names the field), carried out with the device's locks held, and
 * copied back out with no lock held. No user copy is ever done under
 * &neuron_device.rwsem or &neuron_device.lock (see neuron.h).
 */
#include <linux/cdev.h>
#include <linux/compat.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
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
	.name = NEURON_DRV_NAME,
};

static dev_t neuron_devt(u32 id)
{
	return MKDEV(MAJOR(neuron_devt_base), id);
}

/**
 * neuron_ioctl_device_info() - NEURON_IOC_DEVICE_INFO
 * @nfile: the caller's file
 * @info: out: struct neuron_device_info, reserved fields zero
 *
 * Reports the geometry read at probe (regs.h global page) and the ABI
 * limits of include/uapi/linux/neuron.h; docs/decisions.md#arch-driver "device
 * info".
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
	neuron_exit(ndev);
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
};

/**
 * neuron_ioctl() - ioctl entry of /dev/neuronN
 * @filp: the open file
 * @cmd: NEURON_IOC_* (include/uapi/linux/neuron.h)
 * @arg: user pointer to the command's structure
 *
 * A file opened without write access may only call DEVICE_INFO and
 * ENGINE_STATUS (docs/decisions.md#tenancy).
 *
 * Return: 0 or the command's error (see each neuron_*_ioctl_* function and
 * the UAPI header); -ENOTTY for an unknown command, -EBADF for any other
 * command on a file opened read-only, -EFAULT for a bad pointer, -ENODEV
 * once the device is removed.
 */
static long neuron_ioctl(struct file *filp, unsigned int cmd,
			 unsigned long arg)
{
	struct neuron_file *nfile = filp->private_data;
	void __user *uarg = (void __user *)arg;
	union neuron_ioctl_arg karg;
	unsigned int size = _IOC_SIZE(cmd);
	int ret;

	switch (cmd) {
	case NEURON_IOC_NQ_INIT:
	case NEURON_IOC_NQ_DESTROY:
	case NEURON_IOC_NQ_INFO:
	case NEURON_IOC_SUBMIT:
	case NEURON_IOC_ENGINE_RESET:
	case NEURON_IOC_FEATURE_FLAGS:
	case NEURON_IOC_NQ_EVENTFD:
	case NEURON_IOC_EVT_SEM:
	case NEURON_IOC_THROTTLE:
	case NEURON_IOC_CORE_ACQUIRE:
	case NEURON_IOC_CORE_RELEASE:
	case NEURON_IOC_MEM_ALLOC:
	case NEURON_IOC_MEM_FREE:
		if (!(filp->f_mode & FMODE_WRITE))
			return -EBADF;
		break;
	case NEURON_IOC_DEVICE_INFO:
	case NEURON_IOC_ENGINE_STATUS:
		break;	/* open to a file opened read-only */
	default:
		return -ENOTTY;
	}
	if (WARN_ON_ONCE(size > sizeof(karg)))
		return -ENOTTY;

	memset(&karg, 0, sizeof(karg));
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(&karg, uarg, size))
		return -EFAULT;

	switch (cmd) {
	case NEURON_IOC_DEVICE_INFO:
		ret = neuron_ioctl_device_info(nfile, &karg.device_info);
		break;
	case NEURON_IOC_NQ_INIT:
		ret = neuron_nq_ioctl_init(nfile, &karg.nq_init);
		break;
	case NEURON_IOC_NQ_DESTROY:
		ret = neuron_nq_ioctl_destroy(nfile, &karg.nq_id);
		break;
	case NEURON_IOC_NQ_INFO:
		ret = neuron_nq_ioctl_info(nfile, &karg.nq_info);
		break;
	case NEURON_IOC_SUBMIT:
		ret = neuron_engine_ioctl_submit(nfile, &karg.submit);
		break;
	case NEURON_IOC_ENGINE_STATUS:
		ret = neuron_engine_ioctl_status(nfile, &karg.engine_status);
		break;
	case NEURON_IOC_ENGINE_RESET:
		ret = neuron_engine_ioctl_reset(nfile, &karg.engine_id);
		break;
	case NEURON_IOC_FEATURE_FLAGS:
		ret = neuron_engine_ioctl_feature_flags(nfile,
							&karg.feature_flags);
		break;
	case NEURON_IOC_NQ_EVENTFD:
		ret = neuron_events_ioctl_eventfd(nfile, &karg.nq_eventfd);
		break;
	case NEURON_IOC_EVT_SEM:
		ret = neuron_evtsem_ioctl(nfile, &karg.evt_sem);
		break;
	case NEURON_IOC_CORE_ACQUIRE:
		ret = neuron_owner_ioctl_acquire(nfile, &karg.cores);
		break;
	case NEURON_IOC_CORE_RELEASE:
		ret = neuron_owner_ioctl_release(nfile, &karg.cores);
		break;
	case NEURON_IOC_MEM_ALLOC:
		ret = neuron_mem_ioctl_alloc(nfile, &karg.mem_alloc);
		break;
	case NEURON_IOC_MEM_FREE:
		ret = neuron_mem_ioctl_free(nfile, &karg.mem_free);
		break;
	default: /* NEURON_IOC_THROTTLE */
		ret = neuron_irq_ioctl_throttle(nfile, &karg.throttle);
		break;
	}
	if (ret || !(_IOC_DIR(cmd) & _IOC_READ))
		return ret;

	if (copy_to_user(uarg, &karg, size)) {
		/*
		 * The caller never learns it owns the new queue: undo it
		 * (unless it got mapped meanwhile; release() cleans up then).
		 */
		if (cmd == NEURON_IOC_NQ_INIT) {
			struct neuron_nq_id nq_id = {
				.core = karg.nq_init.core,
				.queue = karg.nq_init.queue,
			};

			neuron_nq_ioctl_destroy(nfile, &nq_id);
		} else if (cmd == NEURON_IOC_MEM_ALLOC) {
			struct neuron_mem_free mem_free = {
				.offset = karg.mem_alloc.offset,
			};

			neuron_mem_ioctl_free(nfile, &mem_free);
		}
		return -EFAULT;
	}
	return 0;
}

/**
 * neuron_open() - open /dev/neuronN
 * @inode: the character device inode
 * @filp: the new file
 *
 * A file opened with CAP_SYS_ADMIN is subscribed to every interrupt-edge
 * event at once (neuron_events.c); others subscribe when they need to.
 *
 * Return: 0; -ENODEV if the device is gone or going; -ENOMEM.
 */
static int neuron_open(struct inode *inode, struct file *filp)
{
	struct neuron_device *ndev;
	struct neuron_file *nfile;
	int ret;

	ndev = neuron_device_get_by_minor(iminor(inode));
	if (!ndev)
		return -ENODEV;

	nfile = kzalloc(sizeof(*nfile), GFP_KERNEL_ACCOUNT);
	if (!nfile) {
		ret = -ENOMEM;
		goto err_put;
	}
	nfile->ndev = ndev;
	nfile->filp = filp;
	INIT_LIST_HEAD(&nfile->mem_blocks);

	ret = neuron_enter(ndev);
	if (ret)
		goto err_free;
	nfile->reset_gen = ndev->reset_gen;
	ret = neuron_events_open(nfile);
	if (ret) {
		neuron_exit(ndev);
		goto err_free;
	}
	mutex_lock(&ndev->lock);
	list_add_tail(&nfile->node, &ndev->files);
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);

	filp->private_data = nfile;
	return nonseekable_open(inode, filp);

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
 * docs/decisions.md#arch-driver: "NQs belong to the file that made them and are
 * torn down when it is released". The VFS calls this only once no VMA maps the
 * file any more (after kill -9, once the process's memory is torn down).
 * First the engines this file submitted to are reset (so none keeps writing
 * records) and its cores freed (docs/decisions.md#tenancy), then each queue
 * it owns is disabled, the disable flushed with a register read, its
 * eventfd unbound and its ring freed, and its device memory is freed.
 * After remove(), or while a reset keeps the device offline, the disable
 * path (neuron_lifecycle.c) has already done all of that. Last,
 * the file's event queue is unsubscribed and freed.
 *
 * Return: 0.
 */
static int neuron_release(struct inode *inode, struct file *filp)
{
	struct neuron_file *nfile = filp->private_data;
	struct neuron_device *ndev = nfile->ndev;

	bool live;

	down_read(&ndev->rwsem);
	mutex_lock(&ndev->lock);
	list_del(&nfile->node);
	live = !ndev->dead && !ndev->offline;
	if (live) {
		neuron_owner_release_file(nfile);
		neuron_nq_release_file(nfile);
	}
	neuron_mem_release_file(nfile, live);
	mutex_unlock(&ndev->lock);
	up_read(&ndev->rwsem);

	neuron_events_release(nfile);
	put_pid(nfile->owner_pid);
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
};

/**
 * neuron_cdev_register() - create /dev/neuron<id>
 * @ndev: a fully initialised device
 *
 * Publishes the instance number (neuron_device.c) so open() finds it.
 *
 * Return: 0, -ENOMEM, or the error of cdev_add() or device_create(). On
 * error the number is unpublished again; the caller still frees it.
 */
int neuron_cdev_register(struct neuron_device *ndev)
{
	dev_t devt = neuron_devt(ndev->id);
	struct device *cdevice;
	int ret;

	/*
	 * The cdev has its own lifetime: open files keep it referenced after
	 * remove() and after struct neuron_device is gone.
	 */
	ndev->cdev = cdev_alloc();
	if (!ndev->cdev)
		return -ENOMEM;
	ndev->cdev->owner = THIS_MODULE;
	ndev->cdev->ops = &neuron_fops;

	/*
	 * The node appears before the cdev is live (an open in between gets
	 * -ENXIO), so nothing can have opened the device if cdev_add() fails.
	 */
	neuron_id_publish(ndev);
	cdevice = device_create_with_groups(&neuron_class,
					    &ndev->pdev->dev, devt, ndev,
					    neuron_attr_groups,
					    NEURON_DRV_NAME "%d", ndev->id);
	if (IS_ERR(cdevice)) {
		ret = PTR_ERR(cdevice);
		goto err_cdev;
	}
	ndev->cdevice = cdevice;

	ret = cdev_add(ndev->cdev, devt, 1);
	if (ret)
		goto err_device;
	return 0;

err_device:
	device_destroy(&neuron_class, devt);
	ndev->cdevice = NULL;
err_cdev:
	neuron_id_unpublish(ndev);
	kobject_put(&ndev->cdev->kobj);
	ndev->cdev = NULL;
	return ret;
}

/**
 * neuron_cdev_unregister() - remove /dev/neuron<id>
 * @ndev: device
 *
 * New opens fail with -ENODEV from here on; open files are unaffected
 * (neuron_remove() makes their calls fail). The instance number stays
 * reserved until remove() frees it last.
 */
void neuron_cdev_unregister(struct neuron_device *ndev)
{
	neuron_id_unpublish(ndev);
	device_destroy(&neuron_class, neuron_devt(ndev->id));
	cdev_del(ndev->cdev);
	ndev->cdev = NULL;
}

/**
 * neuron_cdev_init() - register the character device region and the class
 *
 * Called once at module load, before any device is probed.
 *
 * Return: 0 or the error of alloc_chrdev_region() or class_register().
 */
int neuron_cdev_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&neuron_devt_base, 0, NEURON_MAX_DEVICES,
				  NEURON_DRV_NAME);
	if (ret)
		return ret;
	ret = class_register(&neuron_class);
	if (ret)
		unregister_chrdev_region(neuron_devt_base, NEURON_MAX_DEVICES);
	return ret;
}

/**
 * neuron_cdev_exit() - undo neuron_cdev_init() at module unload
 */
void neuron_cdev_exit(void)
{
	class_unregister(&neuron_class);
	unregister_chrdev_region(neuron_devt_base, NEURON_MAX_DEVICES);
}
