// SPDX-License-Identifier: GPL-2.0
/*
 * PCI probe, remove and shutdown of the neuron-tpb function
 * (docs/device-model.md "PCI function"; docs/architecture.md "Lifetimes").
 *
 * Lifetime model: struct neuron_device is reference counted (kref,
 * neuron_device.c) and holds no hardware resource of its own. Everything
 * the bound function uses is set up by probe and released by remove(), in
 * mirror order:
 *
 *   probe                                  remove
 *   map BAR0, check ID/version/geometry    (devres: unmap, release, disable)
 *   map BAR4                               (devres)
 *   64-bit DMA mask                        -
 *   device-memory allocator                allocator destroyed
 *   instance number reserved               instance number freed (last)
 *   enable: reset, wait READY, bus         disable: quiesce, zap mappings,
 *     master on, vectors                     bus master off, vectors freed,
 *                                            every ring and allocation freed
 *   /dev/nnqN published                    /dev/nnqN unpublished (first)
 *
 * So no DMA memory, vector or mapping outlives the bound device; what
 * open files still reference afterwards is only the structure, which
 * answers -ENODEV. Surprise removal is the same path: the disable step
 * sees a device that reads all ones and touches no register.
 */
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "neuron.h"

static const struct pci_device_id neuron_pci_ids[] = {
	{ PCI_DEVICE(NEURON_PCI_VENDOR_ID, NEURON_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, neuron_pci_ids);

static void neuron_pci_disable(void *data)
{
	pci_disable_device(data);
}

static void neuron_pci_release_regions(void *data)
{
	pci_release_mem_regions(data);
}

/*
 * Enable the function and map BAR0, all undone by devres after remove() (or
 * a failed probe). None of the devres actions refers to struct
 * neuron_device, which may be freed before they run.
 */
static int neuron_pci_map(struct neuron_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	struct device *dev = &pdev->dev;
	int ret;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;
	ret = devm_add_action_or_reset(dev, neuron_pci_disable, pdev);
	if (ret)
		return ret;
	/*
	 * If someone else (sysfs "enable") already enabled the function,
	 * pci_enable_device_mem() only counts and does not power it up; on
	 * 6.12 an unbind leaves the power state unknown, and MSI-X refuses a
	 * function that is not in D0.
	 */
	pci_set_power_state(pdev, PCI_D0);

	if (!(pci_resource_flags(pdev, NEURON_BAR_REGS) & IORESOURCE_MEM) ||
	    !(pci_resource_flags(pdev, NEURON_BAR_MEM) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, NEURON_BAR_REGS) < NEURON_BAR0_SIZE) {
		dev_err(dev, "BAR0/BAR4 missing or too small\n");
		return -ENODEV;
	}

	ret = pci_request_mem_regions(pdev, NEURON_DEV_NAME);
	if (ret)
		return ret;
	ret = devm_add_action_or_reset(dev, neuron_pci_release_regions, pdev);
	if (ret)
		return ret;

	ndev->regs_phys = pci_resource_start(pdev, NEURON_BAR_REGS);
	ndev->regs = devm_ioremap(dev, ndev->regs_phys, NEURON_BAR0_SIZE);
	if (!ndev->regs)
		return -ENOMEM;
	return 0;
}

/* Check the identity registers and read the geometry (regs.h global page). */
static int neuron_pci_identify(struct neuron_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	struct device *dev = &pdev->dev;
	u64 prog_bytes;
	u32 id, version;

	id = neuron_rd(ndev, NEURON_REG_ID);
	version = neuron_rd(ndev, NEURON_REG_VERSION);
	if (id != NEURON_ID_MAGIC) {
		dev_err(dev, "bad ID register %#010x (want %#010x)\n",
			id, NEURON_ID_MAGIC);
		return -ENODEV;
	}
	if (version != NEURON_REGS_VERSION) {
		dev_err(dev, "register map version %u unsupported (want %u)\n",
			version, NEURON_REGS_VERSION);
		return -ENODEV;
	}

	ndev->num_cores = neuron_rd(ndev, NEURON_REG_NUM_CORES);
	ndev->gen = neuron_rd(ndev, NEURON_REG_GEN);
	ndev->mem_size = neuron_rd(ndev, NEURON_REG_MEM_SIZE_LO) |
			 (u64)neuron_rd(ndev, NEURON_REG_MEM_SIZE_HI) << 32;

	if (ndev->num_cores < 1 || ndev->num_cores > NEURON_MAX_CORES) {
		dev_err(dev, "NUM_CORES %u out of range 1..%u\n",
			ndev->num_cores, NEURON_MAX_CORES);
		return -ENODEV;
	}
	if (ndev->gen != NEURON_GEN_SUNDA && ndev->gen != NEURON_GEN_CAYMAN) {
		dev_err(dev, "unknown GEN %u\n", ndev->gen);
		return -ENODEV;
	}

	/* program areas at the top: docs/decisions/0001-original-architecture.md#arch-driver */
	prog_bytes = (u64)ndev->num_cores * NEURON_ENGINES_PER_CORE *
		     NEURON_PROG_AREA_SIZE;
	if (ndev->mem_size > pci_resource_len(pdev, NEURON_BAR_MEM) ||
	    ndev->mem_size <= prog_bytes) {
		dev_err(dev, "MEM_SIZE %llu does not fit BAR4 (%llu) or the %llu program bytes\n",
			ndev->mem_size,
			(u64)pci_resource_len(pdev, NEURON_BAR_MEM), prog_bytes);
		return -ENODEV;
	}
	ndev->prog_base = ndev->mem_size - prog_bytes;
	ndev->timestamp_inc_ps =
		neuron_rd(ndev, NEURON_NOTIFIC_REG(0, NEURON_NOTIFIC_TIMESTAMP_INC));

	/* Device memory: program areas and device rings (devres unmaps). */
	ndev->mem_phys = pci_resource_start(pdev, NEURON_BAR_MEM);
	ndev->mem = devm_ioremap(dev, ndev->mem_phys, ndev->mem_size);
	if (!ndev->mem)
		return -ENOMEM;
	return 0;
}

/**
 * neuron_probe() - bind a neuron-tpb function
 * @pdev: the PCI function
 * @id: matching entry of neuron_pci_ids
 *
 * docs/device-model.md "PCI function": BAR0 registers, BAR4 device memory,
 * 64-bit DMA, NEURON_MSIX_VECTORS(cores) MSI-X vectors. The device is
 * reset and must report READY before bus mastering is enabled.
 *
 * Return: 0; -ENODEV for a function that is not a supported neuron-tpb
 * (bad magic, version, geometry) or that reads all ones; -ETIMEDOUT (not
 * ready after reset); -ENOMEM; -EBUSY when NEURON_MAX_DEVICES are bound;
 * or the error of the PCI, DMA, IRQ or cdev call that failed.
 */
static int neuron_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct neuron_device *ndev;
	int ret;

	ndev = kzalloc(sizeof(*ndev), GFP_KERNEL);
	if (!ndev)
		return -ENOMEM;
	kref_init(&ndev->kref);
	ndev->pdev = pci_dev_get(pdev);
	ndev->id = -1;
	init_rwsem(&ndev->rwsem);
	mutex_init(&ndev->lock);
	INIT_LIST_HEAD(&ndev->files);
	INIT_LIST_HEAD(&ndev->quarantine);
	spin_lock_init(&ndev->quota_lock);
	INIT_LIST_HEAD(&ndev->quotas);
	spin_lock_init(&ndev->irq_lock);
	spin_lock_init(&ndev->dim_lock);
	neuron_hw_error_init(ndev);
	ndev->evlimit_burst = NEURON_EVLIMIT_BURST_DEFAULT;
	ndev->evlimit_interval_ms = NEURON_EVLIMIT_INTERVAL_MS_DEFAULT;
	ndev->coredump_interval_ms = NEURON_COREDUMP_INTERVAL_MS_DEFAULT;
	ndev->irqlimit_burst = NEURON_IRQLIMIT_BURST_DEFAULT;
	ndev->irqlimit_interval_ms = NEURON_IRQLIMIT_INTERVAL_MS_DEFAULT;
	spin_lock_init(&ndev->ts_lock);
	init_waitqueue_head(&ndev->waitq);
	spin_lock_init(&ndev->ev_lock);
	INIT_LIST_HEAD(&ndev->ev_files);
	INIT_LIST_HEAD(&ndev->ev_watchers);
	neuron_hang_init(ndev);

	ret = neuron_pci_map(ndev);
	if (ret)
		goto err_put;
	ret = neuron_pci_identify(ndev);
	if (ret)
		goto err_put;

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret) {
		dev_err(dev, "no 64-bit DMA\n");
		goto err_put;
	}

	ret = neuron_mem_init(ndev);
	if (ret)
		goto err_put;
	ret = neuron_id_alloc(ndev);
	if (ret)
		goto err_pool;
	ret = neuron_dev_enable(ndev);
	if (ret)
		goto err_id;

	pci_set_drvdata(pdev, ndev);
	ret = neuron_cdev_register(ndev);
	if (ret)
		goto err_disable;

	dev_info(dev, NEURON_DEV_NAME "%d: %u cores, gen %u, %llu MiB device memory, %d MSI-X vectors\n",
		 ndev->id, ndev->num_cores, ndev->gen, ndev->mem_size >> 20,
		 ndev->nvec);
	return 0;

err_disable:
	pci_set_drvdata(pdev, NULL);
	/*
	 * A generic netlink request may have found the device while it was
	 * published: make it (and any later holder of a reference) see it
	 * dead before devres unmaps the BARs.
	 */
	neuron_dev_disable(ndev, NEURON_RESET_REMOVE, true);
err_id:
	neuron_id_free(ndev);
err_pool:
	neuron_mem_fini(ndev);
err_put:
	/* The devres actions (unmap, release, disable) run after this. */
	neuron_device_put(ndev);
	return ret;
}

/**
 * neuron_remove() - unbind, possibly with files open and rings mapped
 * @pdev: the PCI function
 *
 * Mirrors probe (see the top of this file): new opens fail; the disable
 * path (neuron_lifecycle.c) makes calls on open files return -ENODEV,
 * quiesces the device (unless it is gone), zaps every ring and doorbell
 * mapping (later accesses raise no signal: docs/decisions.md
 * #mapping-after-reset), turns bus mastering off, frees the vectors and
 * takes every ring from the device, and wakes blocked readers with a RESET event (events already
 * queued can still be read, then read() fails with -ENODEV). Nothing the
 * driver allocated for the device is left when this returns but the
 * reference-counted structure; the instance number is freed last.
 */
static void neuron_remove(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	neuron_dev_removing(ndev);	/* while the class device exists */
	neuron_cdev_unregister(ndev);
	neuron_dev_disable(ndev, NEURON_RESET_REMOVE, true);
	neuron_mem_fini(ndev);
	pci_set_drvdata(pdev, NULL);
	neuron_id_free(ndev);
	neuron_device_put(ndev);
}

/* Leave the device quiet (no DMA, no interrupt) for a kexec'd kernel. */
static void neuron_shutdown(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	neuron_dev_disable(ndev, NEURON_RESET_SHUTDOWN, true);
}

struct pci_driver neuron_pci_driver = {
	.name = NEURON_DEV_NAME,
	.id_table = neuron_pci_ids,
	.probe = neuron_probe,
	.remove = neuron_remove,
	.shutdown = neuron_shutdown,
	.err_handler = &neuron_err_handlers,
	.driver.pm = &neuron_pm_ops,
};
