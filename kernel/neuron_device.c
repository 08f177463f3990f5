// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime of struct neuron_device and the table of bound devices.
 *
 * One model: a kref. The bound PCI function holds one reference from probe
 * to the end of remove(); every open file and every generic netlink request
 * that looked the device up holds one while it runs. Hardware resources
 * (BARs, vectors, rings, DMA memory) are never tied to the kref: remove()
 * releases all of them before it returns (neuron_pci.c), so what outlives
 * remove() is only this structure, which then answers every call with
 * -ENODEV.
 *
 * The instance number N of /dev/nnqN indexes the table. A device is in
 * the table from neuron_id_alloc() to neuron_id_free() (the last step of
 * remove()), but open() and the generic netlink walks only find it while
 * it is published, between neuron_id_publish() and neuron_id_unpublish().
 */
#include <linux/slab.h>
#include <linux/xarray.h>

#include "neuron.h"

/* instance number (= minor) -> struct neuron_device */
static DEFINE_XARRAY_ALLOC(neuron_devices);

/**
 * neuron_id_alloc() - reserve an instance number for a new device
 * @ndev: the device; its @id is set on success
 *
 * The number is reserved but not yet visible to open() or netlink:
 * neuron_id_publish() makes it so once the device is ready.
 *
 * Return: 0, -EBUSY when NEURON_MAX_DEVICES are bound, or -ENOMEM.
 */
int neuron_id_alloc(struct neuron_device *ndev)
{
	u32 id;
	int ret;

	ret = xa_alloc(&neuron_devices, &id, ndev,
		       XA_LIMIT(0, NEURON_MAX_DEVICES - 1), GFP_KERNEL);
	if (!ret)
		ndev->id = id;
	return ret;
}

static void neuron_id_set_published(struct neuron_device *ndev, bool on)
{
	xa_lock(&neuron_devices);
	ndev->published = on;
	xa_unlock(&neuron_devices);
}

/**
 * neuron_id_publish() - let open() and netlink find @ndev
 * @ndev: device whose number was reserved by neuron_id_alloc()
 */
void neuron_id_publish(struct neuron_device *ndev)
{
	neuron_id_set_published(ndev, true);
}

/**
 * neuron_id_unpublish() - hide @ndev from open() and netlink
 * @ndev: device
 *
 * Opens started afterwards fail with -ENODEV; the number stays reserved
 * (no new device can take it) until neuron_id_free().
 */
void neuron_id_unpublish(struct neuron_device *ndev)
{
	neuron_id_set_published(ndev, false);
}

/**
 * neuron_id_free() - release a device's instance number
 * @ndev: device, unpublished; its interrupt threads, which stamp the
 *	number into events, are gone
 */
void neuron_id_free(struct neuron_device *ndev)
{
	xa_erase(&neuron_devices, ndev->id);
}

/**
 * neuron_device_get_by_minor() - look up and reference a device for open()
 * @minor: minor number of the opened character device
 *
 * Return: the device with a new reference (drop it with
 * neuron_device_put()), or NULL if no published device has that number.
 */
struct neuron_device *neuron_device_get_by_minor(unsigned int minor)
{
	struct neuron_device *ndev;

	xa_lock(&neuron_devices);
	ndev = xa_load(&neuron_devices, minor);
	if (ndev && ndev->published)
		kref_get(&ndev->kref);
	else
		ndev = NULL;
	xa_unlock(&neuron_devices);
	return ndev;
}

/**
 * neuron_device_get_next() - reference the published device with the
 *	lowest instance number >= *@id, for walking all devices
 * @id: in: the first number to look at; out: the number found
 *
 * The generic netlink dumps walk the devices with this, one reference at a
 * time; callers still check the device is live (neuron_enter()) before
 * touching hardware.
 *
 * Return: the device with a new reference, or NULL when there is none.
 */
struct neuron_device *neuron_device_get_next(unsigned long *id)
{
	struct neuron_device *ndev;

	xa_lock(&neuron_devices);
	xa_for_each_start(&neuron_devices, *id, ndev, *id) {
		if (ndev->published) {
			kref_get(&ndev->kref);
			break;
		}
	}
	xa_unlock(&neuron_devices);
	return ndev;
}

/**
 * neuron_device_table_empty() - whether every device released its number
 *
 * Return: true when no instance number is reserved (module unload check).
 */
bool neuron_device_table_empty(void)
{
	return xa_empty(&neuron_devices);
}

static void neuron_device_release(struct kref *kref)
{
	struct neuron_device *ndev =
		container_of(kref, struct neuron_device, kref);

	pci_dev_put(ndev->pdev);
	kfree(ndev);
}

/**
 * neuron_device_put() - drop a reference on a device
 * @ndev: device
 *
 * The last reference frees the structure; every hardware resource was
 * released by remove() before (see the top of this file).
 */
void neuron_device_put(struct neuron_device *ndev)
{
	kref_put(&ndev->kref, neuron_device_release);
}
