// SPDX-License-Identifier: GPL-2.0
/*
 * MSI-X interrupt handling (seed 001 §6 "the error / overflow edge — the
 * only interrupt that crosses"; DESIGN.md §2 "MSI-X", §4; regs.h).
 *
 * NEURON_MSIX_VECTORS(cores) vectors: vector c is core c's NOTIFIC summary
 * (tpb_notific_intr_0..8 in INTR_STATUS), then one for the throttle edge,
 * then one for device faults. Each is requested with its own name,
 * "neuron<N>-core<c>", "neuron<N>-throttle", "neuron<N>-fault", so they show
 * in /proc/interrupts.
 *
 * A handler reads its status register, writes the bits back to clear them
 * (W1C), counts each cause under &neuron_device.irq_lock (the only lock the
 * interrupt path takes) and wakes &neuron_device.waitq. The core handler
 * also clears and counts THRESHOLD_STATUS (bit per queue that reached its
 * threshold; the device re-arms a threshold when the consumer moves HEAD).
 * A status of all ones means the function is gone and is not counted.
 * Later issues add eventfd, poll and netlink delivery on top of the counts.
 */
#include <linux/interrupt.h>
#include <linux/pci.h>

#include "neuron.h"

/* Bounded re-reads of INTR_STATUS per interrupt, see neuron_irq_core(). */
#define NEURON_IRQ_MAX_LOOPS	8

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

/*
 * Core vector: tpb_notific_intr_0..8. INTR_STATUS is cleared before
 * THRESHOLD_STATUS is read, so a threshold hit racing with the handler is
 * either seen now or raises intr_0 again. The status is read again after
 * clearing, in case a cause arrived meanwhile without a new edge.
 */
static irqreturn_t neuron_irq_core(int irq, void *data)
{
	struct neuron_vector *vec = data;
	struct neuron_device *ndev = vec->ndev;
	u32 core = vec->index;
	unsigned long status, thr;
	unsigned int bit, loop;
	u32 val;

	for (loop = 0; loop < NEURON_IRQ_MAX_LOOPS; loop++) {
		val = neuron_rd(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_INTR_STATUS));
		status = val & NEURON_NOTIFIC_INTR_MASK_ALL;
		if (!status || neuron_irq_gone(val))
			break;
		neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_INTR_STATUS),
			  status);

		thr = neuron_rd(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_THRESHOLD_STATUS));
		thr &= NEURON_SW_QUEUE_MASK;
		if (thr)
			neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_THRESHOLD_STATUS),
				  thr);

		spin_lock(&ndev->irq_lock);
		for_each_set_bit(bit, &status, NEURON_NOTIFIC_INTR_BITS)
			ndev->intr_count[core][bit]++;
		for_each_set_bit(bit, &thr, NEURON_NUM_SW_QUEUES)
			ndev->threshold_count[core][bit]++;
		spin_unlock(&ndev->irq_lock);
	}
	if (!loop) {
		neuron_irq_count_spurious(ndev);
		return IRQ_NONE;
	}
	wake_up_all(&ndev->waitq);
	return IRQ_HANDLED;
}

static irqreturn_t neuron_irq_throttle(int irq, void *data)
{
	struct neuron_vector *vec = data;
	struct neuron_device *ndev = vec->ndev;
	u32 status;

	status = neuron_rd(ndev, NEURON_REG_THROTTLE_STATUS);
	if (!status || neuron_irq_gone(status)) {
		neuron_irq_count_spurious(ndev);
		return IRQ_NONE;
	}
	neuron_wr(ndev, NEURON_REG_THROTTLE_STATUS, status);

	spin_lock(&ndev->irq_lock);
	ndev->throttle_count++;
	spin_unlock(&ndev->irq_lock);

	wake_up_all(&ndev->waitq);
	return IRQ_HANDLED;
}

static irqreturn_t neuron_irq_fault(int irq, void *data)
{
	struct neuron_vector *vec = data;
	struct neuron_device *ndev = vec->ndev;
	unsigned long status;
	unsigned int bit;

	status = neuron_rd(ndev, NEURON_REG_FAULT_STATUS);
	if (!status || neuron_irq_gone(status)) {
		neuron_irq_count_spurious(ndev);
		return IRQ_NONE;
	}
	neuron_wr(ndev, NEURON_REG_FAULT_STATUS, status);

	spin_lock(&ndev->irq_lock);
	for_each_set_bit(bit, &status, NEURON_FAULT_BITS)
		ndev->fault_count[bit]++;
	spin_unlock(&ndev->irq_lock);

	dev_warn_ratelimited(&ndev->pdev->dev, "device fault %#lx\n", status);
	wake_up_all(&ndev->waitq);
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

	for (c = 0; c < ndev->num_cores; c++)
		neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_INTR_MASK),
			  NEURON_NOTIFIC_INTR_MASK_ALL);
	neuron_wr(ndev, NEURON_REG_FAULT_MASK,
		  NEURON_FAULT_DMA_ERROR | NEURON_FAULT_INTR_STORM);
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
 * Allocates exactly NEURON_MSIX_VECTORS(cores) MSI-X vectors (DESIGN.md §2:
 * one per core, throttle, fault), requests each, then unmasks every NOTIFIC
 * cause and device fault at the device. The throttle source is armed later
 * by its own ioctl (NEURON_REG_THROTTLE_CTRL), not here.
 *
 * Return: 0, or the error of pci_alloc_irq_vectors() (e.g. -ENOSPC when
 * the device offers fewer vectors) or request_irq().
 */
int neuron_irq_init(struct neuron_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int nvec = NEURON_MSIX_VECTORS(ndev->num_cores);
	irq_handler_t handler;
	int i, ret;

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
			snprintf(vec->name, sizeof(vec->name), "neuron%d-core%d",
				 ndev->id, i);
		} else if (i == NEURON_MSIX_VEC_THROTTLE(ndev->num_cores)) {
			handler = neuron_irq_throttle;
			snprintf(vec->name, sizeof(vec->name), "neuron%d-throttle",
				 ndev->id);
		} else {
			handler = neuron_irq_fault;
			snprintf(vec->name, sizeof(vec->name), "neuron%d-fault",
				 ndev->id);
		}
		ret = pci_irq_vector(pdev, i);
		if (ret < 0)
			goto err;
		ret = request_irq(ret, handler, 0, vec->name, vec);
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
 * After this no handler runs or will run (free_irq() waits for running
 * ones), so the BARs may be unmapped and the device freed.
 */
void neuron_irq_fini(struct neuron_device *ndev)
{
	neuron_irq_mask_all(ndev);
	neuron_irq_free_vectors(ndev);
}
