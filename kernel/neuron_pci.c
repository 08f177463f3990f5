// SPDX-License-Identifier: GPL-2.0
/*
 * PCI probe and remove of the neuron-tpb function
 * (docs/decisions.md#arch-device, #arch-driver; docs/device-model.md "PCI
 * function").
 *
 * Probe maps BAR0 (registers) and BAR4 (device memory), checks the ID magic
 * and register-map version, quiesces the device with a global RESET, sets
 * up the device-ring pool and the MSI-X vectors, and publishes /dev/neuronN.
 *
 * Remove may run while files are open and rings are mapped: it marks the
 * device dead (later calls get -ENODEV), quiesces it, zaps every user
 * mapping, tears the queues down and frees the interrupts. What is still
 * referenced (the struct neuron_device, ring memory still mapped) lives on
 * until the last reference goes; see neuron.h.
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

static void neuron_device_release(struct kref *kref)
{
	struct neuron_device *ndev =
		container_of(kref, struct neuron_device, kref);

	neuron_nq_pool_fini(ndev);
	pci_dev_put(ndev->pdev);
	kfree(ndev);
}

/**
 * neuron_device_put() - drop a reference on a device
 * @ndev: device
 *
 * The last reference frees the device-ring pool (empty by then: every queue
 * holds a reference) and the structure itself.
 */
void neuron_device_put(struct neuron_device *ndev)
{
	kref_put(&ndev->kref, neuron_device_release);
}

/*
 * Make every later neuron_enter() fail with -ENODEV, after the calls
 * already inside have left (they hold the rwsem for reading).
 */
static void neuron_mark_dead(struct neuron_device *ndev)
{
	down_write(&ndev->rwsem);
	WRITE_ONCE(ndev->dead, 1);	/* also read locklessly by read()/poll() */
	up_write(&ndev->rwsem);
}

/* Global RESET (regs.h): stop all engines, disable all queues. */
static void neuron_hw_reset(struct neuron_device *ndev)
{
	neuron_wr(ndev, NEURON_REG_RESET, 1);
	neuron_rd(ndev, NEURON_REG_ID);	/* flush the posted write */
}

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
	 * function that is not in D0. The function has no PM capability, so
	 * this only sets the state the core believes in.
	 */
	pci_set_power_state(pdev, PCI_D0);

	if (!(pci_resource_flags(pdev, NEURON_BAR_REGS) & IORESOURCE_MEM) ||
	    !(pci_resource_flags(pdev, NEURON_BAR_MEM) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, NEURON_BAR_REGS) < NEURON_BAR0_SIZE) {
		dev_err(dev, "BAR0/BAR4 missing or too small\n");
		return -ENODEV;
	}

	ret = pci_request_mem_regions(pdev, NEURON_DRV_NAME);
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

	/* Program areas at the top (docs/decisions.md#device-memory) */
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
 * docs/decisions.md#arch-driver, docs/device-model.md "PCI function": BAR0
 * registers, BAR4 device memory, 64-bit DMA, NEURON_MSIX_VECTORS(cores) MSI-X
 * vectors.
 *
 * Return: 0; -ENODEV for a function that is not a supported neuron-tpb
 * (bad magic, version, geometry); -ENOMEM; -EBUSY when NEURON_MAX_DEVICES
 * are bound; or the error of the PCI, DMA, IRQ or cdev call that failed.
 */
static int neuron_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct neuron_device *ndev;
	u32 inst;
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
	spin_lock_init(&ndev->irq_lock);
	init_waitqueue_head(&ndev->waitq);
	spin_lock_init(&ndev->ev_lock);
	INIT_LIST_HEAD(&ndev->ev_files);
	mutex_init(&ndev->vma_lock);
	INIT_LIST_HEAD(&ndev->vmas);

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
	pci_set_master(pdev);

	/* Start from a quiet device: no engine runs, no queue is enabled. */
	neuron_hw_reset(ndev);

	ret = neuron_nq_pool_init(ndev);
	if (ret)
		goto err_put;

	ret = neuron_id_alloc(&inst);
	if (ret)
		goto err_put;
	ndev->id = inst;

	ret = neuron_irq_init(ndev);
	if (ret)
		goto err_id;

	pci_set_drvdata(pdev, ndev);
	ret = neuron_cdev_register(ndev);
	if (ret)
		goto err_irq;

	dev_info(dev, "neuron%d: %u cores, gen %u, %llu MiB device memory, %d MSI-X vectors\n",
		 ndev->id, ndev->num_cores, ndev->gen, ndev->mem_size >> 20,
		 ndev->nvec);
	return 0;

err_irq:
	pci_set_drvdata(pdev, NULL);
	neuron_irq_fini(ndev);
err_id:
	neuron_id_free(ndev->id);
	/*
	 * neuron_cdev_register() published the number: a generic netlink
	 * request may have found the device meanwhile. Make it (and any
	 * later holder of a reference) see it dead before devres unmaps
	 * the BARs.
	 */
	neuron_mark_dead(ndev);
err_put:
	/* The devres actions (unmap, release, disable) run after this. */
	neuron_device_put(ndev);
	return ret;
}

/**
 * neuron_remove() - unbind, possibly with files open and rings mapped
 * @pdev: the PCI function
 *
 * docs/decisions.md#arch-driver "Unbind/surprise removal": new opens fail,
 * calls on open files return -ENODEV, user mappings are zapped (later accesses
 * get SIGBUS), the device is quiesced with a global RESET, every queue is torn
 * down (unbinding its eventfd) and the interrupts are freed before the BARs
 * are unmapped; then readers blocked in read() or poll() are woken (events
 * already queued can still be read, then read() fails with -ENODEV).
 */
static void neuron_remove(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	neuron_cdev_unregister(ndev);
	neuron_mark_dead(ndev);

	/* No ioctl, mmap or fault touches the device from here on. */
	mutex_lock(&ndev->lock);
	neuron_hw_reset(ndev);
	neuron_mmap_zap_all(ndev);
	neuron_engine_forget_all(ndev);
	neuron_nq_teardown_all(ndev);
	mutex_unlock(&ndev->lock);
	/* host rings whose mmap() was still linking its VMA (takes mmap_lock) */
	neuron_mmap_zap_racing(ndev);

	neuron_irq_fini(ndev);
	/* blocked read() and poll() see @dead now and return */
	wake_up_all(&ndev->waitq);

	pci_set_drvdata(pdev, NULL);
	neuron_device_put(ndev);
}

/* Leave the device quiet (no DMA, no interrupt) for a kexec'd kernel. */
static void neuron_shutdown(struct pci_dev *pdev)
{
	struct neuron_device *ndev = pci_get_drvdata(pdev);

	down_read(&ndev->rwsem);
	if (!ndev->dead) {
		mutex_lock(&ndev->lock);
		neuron_hw_reset(ndev);
		mutex_unlock(&ndev->lock);
	}
	up_read(&ndev->rwsem);
	pci_clear_master(pdev);
}

struct pci_driver neuron_pci_driver = {
	.name = NEURON_DRV_NAME,
	.id_table = neuron_pci_ids,
	.probe = neuron_probe,
	.remove = neuron_remove,
	.shutdown = neuron_shutdown,
};
