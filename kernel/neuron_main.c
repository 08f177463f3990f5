// SPDX-License-Identifier: GPL-2.0
/*
 * neuron.ko module entry: the "neuron" device class, the character device
 * region of /dev/neuronN, the instance-number allocator (also the device
 * list the generic netlink dumps walk), the generic netlink family and the
 * PCI driver registration (docs/decisions.md#arch-driver).
 */
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/xarray.h>

#include "neuron.h"

static dev_t neuron_devt_base;

/* instance number (= minor) -> struct neuron_device, for open() */
static DEFINE_XARRAY_ALLOC(neuron_devices);

/*
 * A static class registered with class_register() builds unchanged where
 * class_create() lost its owner argument (6.4), see neuron_compat.h.
 */
static struct class neuron_class = {
	.name = NEURON_DRV_NAME,
};

/**
 * neuron_id_alloc() - reserve an instance number for /dev/neuronN
 * @id: out: the number, also the minor of the character device
 *
 * The number is reserved but not yet visible to open(): neuron_id_publish()
 * makes it so once the device is ready.
 *
 * Return: 0, -EBUSY when NEURON_MAX_DEVICES are bound, or -ENOMEM.
 */
int neuron_id_alloc(u32 *id)
{
	return xa_alloc(&neuron_devices, id, NULL,
			XA_LIMIT(0, NEURON_MAX_DEVICES - 1), GFP_KERNEL);
}

/**
 * neuron_id_publish() - let open() of /dev/neuronN find @ndev
 * @ndev: device whose @id was reserved by neuron_id_alloc()
 */
void neuron_id_publish(struct neuron_device *ndev)
{
	xa_store(&neuron_devices, ndev->id, ndev, GFP_KERNEL);
}

/**
 * neuron_id_free() - release an instance number
 * @id: number from neuron_id_alloc()
 *
 * After this, open() of the old /dev/neuronN fails with -ENODEV; files
 * already open keep their reference on the device.
 */
void neuron_id_free(u32 id)
{
	xa_erase(&neuron_devices, id);
}

/**
 * neuron_device_get_by_minor() - look up and reference a device for open()
 * @minor: minor number of the opened character device
 *
 * Return: the device with a new reference (drop it with
 * neuron_device_put()), or NULL if no device is bound at @minor.
 */
struct neuron_device *neuron_device_get_by_minor(unsigned int minor)
{
	struct neuron_device *ndev;

	xa_lock(&neuron_devices);
	ndev = xa_load(&neuron_devices, minor);
	if (ndev)
		kref_get(&ndev->kref);
	xa_unlock(&neuron_devices);
	return ndev;
}

/**
 * neuron_device_get_next() - reference the bound device with the lowest
 *	instance number >= *@id, for walking all devices
 * @id: in: the first number to look at; out: the number found
 *
 * The generic netlink dumps walk the devices with this, one reference at a
 * time, so a device removed meanwhile is either skipped (its number is gone
 * from the table) or stays allocated until neuron_device_put(); callers
 * still check it is not dead (neuron_enter()) before touching hardware.
 *
 * Return: the device with a new reference, or NULL when there is none.
 */
struct neuron_device *neuron_device_get_next(unsigned long *id)
{
	struct neuron_device *ndev;

	xa_lock(&neuron_devices);
	ndev = xa_find(&neuron_devices, id, NEURON_MAX_DEVICES - 1, XA_PRESENT);
	if (ndev)
		kref_get(&ndev->kref);
	xa_unlock(&neuron_devices);
	return ndev;
}

/**
 * neuron_devt() - device number of /dev/neuron<@id>
 * @id: instance number
 *
 * Return: the dev_t.
 */
dev_t neuron_devt(u32 id)
{
	return MKDEV(MAJOR(neuron_devt_base), id);
}

/**
 * neuron_class_get() - the "neuron" device class
 *
 * Return: the class, registered for the module's lifetime.
 */
struct class *neuron_class_get(void)
{
	return &neuron_class;
}

static int __init neuron_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&neuron_devt_base, 0, NEURON_MAX_DEVICES,
				  NEURON_DRV_NAME);
	if (ret)
		return ret;

	ret = class_register(&neuron_class);
	if (ret)
		goto err_region;

	/* before any device can raise an event */
	ret = neuron_genl_register();
	if (ret)
		goto err_class;

	ret = pci_register_driver(&neuron_pci_driver);
	if (ret)
		goto err_genl;
	return 0;

err_genl:
	neuron_genl_unregister();
err_class:
	class_unregister(&neuron_class);
err_region:
	unregister_chrdev_region(neuron_devt_base, NEURON_MAX_DEVICES);
	return ret;
}

static void __exit neuron_exit_module(void)
{
	/* every device is removed, its interrupt threads freed, first */
	pci_unregister_driver(&neuron_pci_driver);
	neuron_genl_unregister();
	class_unregister(&neuron_class);
	unregister_chrdev_region(neuron_devt_base, NEURON_MAX_DEVICES);
	WARN_ON(!xa_empty(&neuron_devices));
	xa_destroy(&neuron_devices);
}

module_init(neuron_init);
module_exit(neuron_exit_module);

MODULE_DESCRIPTION("Driver for the emulated Neuron notification-queue accelerator");
MODULE_LICENSE("GPL");
