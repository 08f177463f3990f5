// SPDX-License-Identifier: GPL-2.0
/*
 * Software notification queues (NQs): ring memory, descriptor programming,
 * ownership (docs/hardware.md#notific, #nq-routing;
 * docs/decisions/0001-original-architecture.md#arch-device, #arch-driver;
 * docs/device-model.md "NOTIFIC block").
 *
 * A ring lives either in host memory (pages mapped with dma_map_page(), the device
 * writes records by DMA) or, with NEURON_NQ_F_DEVICE_MEM, in device memory:
 * a gen_pool hands out page-granular pieces of BAR4 [mem_size / 2,
 * prog_base). Allocations are whole pages either way, so a ring's mapping
 * never shows a neighbour's records.
 *
 * A queue is programmed while disabled (BASE, SIZE, THRESHOLD, CTRL,
 * COALESCE_NS and the overflow policy bits) and then enabled by setting its
 * QUEUE_ENABLE bit,
 * which resets HEAD = TAIL = 0 and the phase to 1. Overflow policy,
 * docs/hardware.md#nq-backpressure: SW_BACKPRESSURE (lossless, the default) or,
 * with NEURON_NQ_F_IGNORE_FULL, IGNORE_FULL (lossy overwrite, the record
 * carries software_queue_overflow). In front of the rings, the NOTIFIC
 * input buffer stalls a producer when it is full, or with
 * NEURON_NQ_F_WRBUF_DROP drops the queue's record (WRBUF_DROP bit,
 * docs/device-model.md#wrbuf).
 *
 * Interrupt coalescing (docs/device-model.md#coalescing): the queue's
 * threshold interrupt comes after THRESHOLD unread records (the count
 * limit) or COALESCE_NS after the first of them (the time limit), whichever
 * is first, once until the next accepted HEAD write. NQ_INIT sets both;
 * NQ_COALESCE changes them on the live queue, where the device counts the
 * records already unread toward the new limits at once.
 *
 * A queue belongs to the file that made it. Tearing it down disables it,
 * waits until the device shows it disabled, zaps the owner's mappings of
 * it and takes the ring from the device at once: a device ring's memory
 * is freed, a host ring's DMA mapping is undone and its pages are freed
 * by the last of the queue and the VMAs that map them (struct
 * neuron_ring), so nothing the device can reach outlives the bound
 * device, and no access to an old mapping raises a signal
 * (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset).
 */
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/swiotlb.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_trace.h"

/*
 * The device model's ring-writer service time, programmed into
 * WRBUF_DRAIN_NS of a core whenever a queue of it is made
 * (docs/device-model.md#wrbuf, docs/decisions/0026-wrbuf.md): 0, the reset
 * value, lets the writer keep up with any producer; a test that wants a
 * flood to outrun the writer sets it (root) before making its queues.
 */
static unsigned int wrbuf_drain_ns;
module_param(wrbuf_drain_ns, uint, 0644);
MODULE_PARM_DESC(wrbuf_drain_ns,
		 "NOTIFIC ring writer: ns per record, set on each core when a queue is made (0 = keeps up, at most 1000000)");

/*
 * Allocate and zero a ring: stale records must not look fresh (phase).
 * Host rings are physically contiguous pages, mapped for the device with
 * dma_map_page() (one bus range, an IOVA with an IOMMU); the fault
 * handler inserts them by PFN (neuron_mmap.c). The pages live in a
 * refcounted struct neuron_ring, so the teardown can take the device's
 * mapping away (dma_unmap_page()) while a user mapping still shows the
 * records until its munmap
 * (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset). They
 * are charged to the caller's memory cgroup; __GFP_RETRY_MAYFAIL makes a
 * cgroup at its limit fail the call with -ENOMEM rather than invoke its
 * OOM killer. Device rings come from the ring part of device memory
 * (neuron_mem.c) and are charged to the owner's user until they are freed,
 * quarantined or not (neuron_quota.c): -ENOSPC past its quota.
 */
static int neuron_nq_alloc_ring(struct neuron_nq *nq)
{
	struct neuron_device *ndev = nq->ndev;
	struct neuron_ring *ring;

	if (nq->flags & NEURON_NQ_F_DEVICE_MEM) {
		int ret = neuron_quota_charge(ndev, nq->owner->quota,
					      nq->alloc_size);

		if (ret)
			return ret;
		if (neuron_mem_ring_alloc(ndev, nq->alloc_size, &nq->mem_off)) {
			neuron_quota_uncharge(ndev, nq->owner->quota,
					      nq->alloc_size);
			return -ENOMEM;
		}
		nq->quota = neuron_quota_get(nq->owner->quota);
		memset_io(ndev->mem + nq->mem_off, 0, nq->alloc_size);
		return 0;
	}
	/*
	 * The consumer reads a host ring through its mapping, with no call in
	 * which the driver could sync it: where every streaming mapping is
	 * bounced (swiotlb=force, a confidential VM's shared pool) the device
	 * would write a bounce buffer the consumer never sees. The DMA mask is
	 * 64 bits and the ring page-aligned, so nothing else bounces it.
	 */
	if (is_swiotlb_force_bounce(&ndev->pdev->dev)) {
		dev_info_ratelimited(&ndev->pdev->dev, "NQ_INIT by pid %d (%s): flags (a host ring: DMA to host memory is bounced here, swiotlb; use NEURON_NQ_F_DEVICE_MEM)\n",
				     task_tgid_nr(current), current->comm);
		return -EOPNOTSUPP;
	}
	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return -ENOMEM;
	kref_init(&ring->kref);
	ring->order = get_order(nq->alloc_size);
	ring->pages = alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
				  __GFP_NOWARN | __GFP_ZERO, ring->order);
	if (!ring->pages) {
		kfree(ring);
		return -ENOMEM;
	}
	nq->dma_addr = dma_map_page(&ndev->pdev->dev, ring->pages, 0,
				    nq->alloc_size, DMA_FROM_DEVICE);
	if (dma_mapping_error(&ndev->pdev->dev, nq->dma_addr)) {
		neuron_ring_put(ring);
		return -ENOMEM;
	}
	nq->ring = ring;
	return 0;
}

/*
 * Take the ring from the device: called once the device no longer writes
 * it (its queue confirmed off, or bus mastering off). A device ring's
 * memory goes back to the allocator (its mappings were zapped and fault
 * in a harmless page from now on); a host ring loses its DMA mapping and
 * the queue's reference: its pages stay while a VMA maps them.
 */
static void neuron_nq_free_ring(struct neuron_nq *nq)
{
	struct neuron_device *ndev = nq->ndev;

	if (nq->flags & NEURON_NQ_F_DEVICE_MEM) {
		if (nq->mem_off) {
			neuron_mem_ring_free(ndev, nq->mem_off, nq->alloc_size);
			neuron_quota_uncharge(ndev, nq->quota, nq->alloc_size);
			neuron_quota_put(ndev, nq->quota);
		}
		nq->mem_off = 0;
		nq->quota = NULL;
	} else if (nq->ring) {
		dma_unmap_page(&ndev->pdev->dev, nq->dma_addr, nq->alloc_size,
			       DMA_FROM_DEVICE);
		neuron_ring_put(nq->ring);
		nq->ring = NULL;
	}
}

/* Set or clear one queue's bit in a per-core bitmask register. */
static void neuron_nq_assign_bit(struct neuron_device *ndev, u32 core,
				 u32 reg, u32 queue, bool set)
{
	u32 off = NEURON_NOTIFIC_REG(core, reg);
	u32 val = neuron_rd(ndev, off);

	if (set)
		val |= BIT(queue);
	else
		val &= ~BIT(queue);
	neuron_wr(ndev, off, val);
}

/* Program the descriptor while disabled, then enable (device-model.md). */
static void neuron_nq_hw_enable(struct neuron_nq *nq)
{
	struct neuron_device *ndev = nq->ndev;
	u32 c = nq->core, q = nq->queue;
	bool lossy = nq->flags & NEURON_NQ_F_IGNORE_FULL;
	u64 base;
	u32 ctrl;

	lockdep_assert_held(&ndev->lock);
	neuron_nq_assign_bit(ndev, c, NEURON_NOTIFIC_QUEUE_ENABLE, q, false);

	if (nq->flags & NEURON_NQ_F_DEVICE_MEM) {
		base = nq->mem_off;
		ctrl = NEURON_NQ_CTRL_DEVICE_MEM;
	} else {
		base = nq->dma_addr;
		ctrl = 0;
	}
	neuron_wr(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_BASE_LO),
		  lower_32_bits(base));
	neuron_wr(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_BASE_HI),
		  upper_32_bits(base));
	neuron_wr(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_SIZE), nq->size);
	neuron_wr(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_THRESHOLD),
		  nq->threshold);
	neuron_wr(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_CTRL), ctrl);
	neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NQ_COALESCE_NS(q)),
		  nq->coalesce_ns);

	/* backpressure or ignore-full: docs/hardware.md#nq-backpressure */
	neuron_nq_assign_bit(ndev, c, NEURON_NOTIFIC_IGNORE_FULL, q, lossy);
	neuron_nq_assign_bit(ndev, c, NEURON_NOTIFIC_SW_BACKPRESSURE, q,
			     !lossy);
	/* full input buffer: stall or drop (docs/device-model.md#wrbuf) */
	neuron_nq_assign_bit(ndev, c, NEURON_NOTIFIC_WRBUF_DROP, q,
			     nq->flags & NEURON_NQ_F_WRBUF_DROP);
	neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_WRBUF_DRAIN_NS),
		  min_t(u32, READ_ONCE(wrbuf_drain_ns),
			NEURON_WRBUF_DRAIN_NS_MAX));
	/* a stale threshold hit of an earlier user of this queue (W1C) */
	neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_THRESHOLD_STATUS),
		  BIT(q));

	neuron_nq_assign_bit(ndev, c, NEURON_NOTIFIC_QUEUE_ENABLE, q, true);

	/* the device's counters run since its reset, not since this enable */
	nq->overflow_base = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_OVERFLOW_COUNT));
	nq->drop_base = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_DROP_COUNT));
}

/*
 * Take a queue out of service and free it: disable it and wait for the
 * device to agree (unless the disable path already stopped every queue),
 * unbind its eventfd, unlink it, zap the owner's mappings of its ring and
 * doorbell (the fault handler no longer finds the queue: a host ring
 * faults its own pages back in, a device ring or doorbell a harmless
 * page), and take the ring from the device.
 */
static void neuron_nq_teardown(struct neuron_nq *nq, bool hw)
{
	struct neuron_device *ndev = nq->ndev;
	int off = 0;

	lockdep_assert_held(&ndev->lock);
	if (hw)
		off = neuron_hw_queue_off(ndev, nq->core, nq->queue);
	trace_neuron_nq_destroy(ndev->id, nq->core, nq->queue, hw);
	neuron_dim_stop(nq);
	neuron_events_unbind_nq(ndev, nq->core, nq->queue);
	ndev->nq[nq->core][nq->queue] = NULL;
	/* a queue whose file was released has no mapping left to zap */
	if (nq->owner)
		neuron_mmap_zap_queue(nq->owner, nq->core, nq->queue,
				      nq->alloc_size);
	if (off) {
		/*
		 * The device never said the queue is off: it may still write
		 * the ring. Keep the ring until bus mastering is off
		 * (neuron_nq_teardown_all());
		 * docs/decisions/0011-reset-and-recovery.md#quarantine.
		 * A device that is gone is logged by its removal instead.
		 */
		nq->owner = NULL;
		list_add_tail(&nq->quarantine, &ndev->quarantine);
		ndev->quarantined_total++;
		if (off == -ETIMEDOUT)
			neuron_hw_error(ndev, nq->core, NEURON_HW_ERROR_NA,
					NEURON_HWE_QUEUE_STUCK,
					NEURON_HWA_RESET_DEVICE,
					"queue %u did not confirm its disable: ring quarantined until the next reset",
					nq->queue);
		return;
	}
	neuron_nq_free_ring(nq);
	kfree(nq);
}

/*
 * Whether the ring last made for (@core, @queue) is quarantined: the device
 * never confirmed that queue off, so it may still hold it enabled, with the
 * old ring's BASE and its HEAD/TAIL, until the next reset.
 */
static bool neuron_nq_quarantined(struct neuron_device *ndev, u32 core,
				  u32 queue)
{
	struct neuron_nq *nq;

	lockdep_assert_held(&ndev->lock);
	list_for_each_entry(nq, &ndev->quarantine, quarantine)
		if (nq->core == core && nq->queue == queue)
			return true;
	return false;
}

/* Validate core and queue indices of any NQ ioctl. */
static int neuron_nq_check_id(struct neuron_device *ndev, const char *cmd,
			      u32 core, u32 queue)
{
	if (core >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (queue >= NEURON_NUM_SW_QUEUES)
		return neuron_bad_field(ndev, cmd, "queue");
	return 0;
}

/* The queue (core, queue) if @nfile made it, else NULL. */
static struct neuron_nq *neuron_nq_find(struct neuron_file *nfile, u32 core,
					u32 queue)
{
	struct neuron_nq *nq = nfile->ndev->nq[core][queue];

	lockdep_assert_held(&nfile->ndev->lock);
	return nq && nq->owner == nfile ? nq : NULL;
}

/**
 * neuron_nq_ioctl_init() - NEURON_IOC_NQ_INIT: make, program, enable a queue
 * @nfile: the caller's file, which will own the queue
 * @arg: in: @core (< num_cores), @queue (< 10), @size (ring bytes, a power
 *	of two in [NEURON_NQ_SIZE_MIN, NEURON_NQ_SIZE_MAX] = [64 B, 1 MiB],
 *	i.e. 4..65536 records of 16 bytes), @flags (NEURON_NQ_F_*),
 *	@threshold (unread records raising tpb_notific_intr_0, 0 = off, at
 *	most @size / 16), @coalesce_ns (the interrupt's time limit,
 *	nanoseconds after the first unread record, 0 = none, at most
 *	NEURON_NQ_COALESCE_NS_MAX = 10 ms); @reserved0, @reserved1, @reserved
 *	zero.
 *	out: @ring_offset, @doorbell_offset: mmap cookies (neuron_mmap.c)
 *
 * docs/hardware.md#nq-descriptor (descriptor at 0x100 + i * 0x28, backpressure
 * vs ignore-full), docs/hardware.md#nq-arming (arming a ring);
 * docs/device-model.md#coalescing (THRESHOLD and COALESCE_NS);
 * docs/decisions/0001-original-architecture.md#arch-driver "NQ init".
 *
 * Return: 0; -EINVAL (a field out of range, a reserved field or unknown
 * flag set; the debug log names it); -EPERM (another file owns the core; otherwise the core is now
 * the caller's, docs/decisions/0005-tenancy.md); -EBUSY (the queue is already
 * initialised, or its previous ring is quarantined until the next reset:
 * docs/decisions/0011-reset-and-recovery.md#quarantine); -ENOMEM (no host DMA
 * memory, the caller's memory cgroup is at its limit, or no room for a device
 * ring); -ENOSPC (a device ring would pass the user's device-memory quota,
 * docs/decisions/0005-tenancy.md "device memory per user"); -EOPNOTSUPP (a
 * host ring where DMA to host memory is bounced:
 * docs/decisions/0006-swiotlb.md); -EIO
 * (stale file, device offline); -ENODEV (device removed).
 */
int neuron_nq_ioctl_init(struct neuron_file *nfile, struct neuron_nq_init *arg)
{
	static const char cmd[] = "NQ_INIT";
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_nq *nq;
	u32 budget = 0;
	int ret;

	ret = neuron_nq_check_id(ndev, cmd, arg->core, arg->queue);
	if (ret)
		return ret;
	if (arg->size < NEURON_NQ_SIZE_MIN || arg->size > NEURON_NQ_SIZE_MAX ||
	    !is_power_of_2(arg->size))
		return neuron_bad_field(ndev, cmd, "size");
	if (arg->flags & ~NEURON_NQ_F_ALL)
		return neuron_bad_field(ndev, cmd, "flags");
	if (arg->threshold > arg->size / NEURON_ISA_NOTIFICATION_NBYTES)
		return neuron_bad_field(ndev, cmd, "threshold");
	if (arg->coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
		return neuron_bad_field(ndev, cmd, "coalesce_ns");
	/* adaptive: the driver owns THRESHOLD; needs the DIM library */
	if ((arg->flags & NEURON_NQ_F_ADAPTIVE) && !IS_ENABLED(CONFIG_DIMLIB))
		return neuron_bad_field(ndev, cmd, "flags");
	if ((arg->flags & NEURON_NQ_F_ADAPTIVE) && arg->threshold)
		return neuron_bad_field(ndev, cmd, "threshold");
	if (arg->reserved0)
		return neuron_bad_field(ndev, cmd, "reserved0");
	if (arg->reserved1)
		return neuron_bad_field(ndev, cmd, "reserved1");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	nq = kzalloc(sizeof(*nq), GFP_KERNEL_ACCOUNT);
	if (!nq)
		return -ENOMEM;
	nq->ndev = ndev;
	nq->owner = nfile;
	nq->core = arg->core;
	nq->queue = arg->queue;
	nq->size = arg->size;
	nq->alloc_size = PAGE_ALIGN(arg->size);
	nq->flags = arg->flags;
	nq->threshold = arg->threshold;
	nq->coalesce_ns = arg->coalesce_ns;
	if (nq->flags & NEURON_NQ_F_ADAPTIVE) {
		/* the top profile of the budget (neuron_dim.c) */
		budget = arg->coalesce_ns ?: NEURON_NQ_BUDGET_DEFAULT_NS;
		neuron_dim_profile(budget, nq->size / NEURON_ISA_NOTIFICATION_NBYTES,
				   NEURON_DIM_LEVELS - 1, &nq->threshold,
				   &nq->coalesce_ns);
	}

	ret = neuron_enter_file(nfile);
	if (ret)
		goto err_free;
	mutex_lock(&ndev->lock);
	ret = neuron_owner_claim(nfile, nq->core);
	if (ret)
		goto err_unlock;
	if (ndev->nq[nq->core][nq->queue]) {
		ret = -EBUSY;
		goto err_unlock;
	}
	/*
	 * Programming a queue the device still runs would move its writes
	 * to the new ring at the old TAIL (no enable edge resets HEAD/TAIL):
	 * the slot stays unusable until the reset that frees the old ring.
	 */
	if (neuron_nq_quarantined(ndev, nq->core, nq->queue)) {
		dev_dbg(&ndev->pdev->dev, "NQ_INIT: core %u queue %u: ring quarantined until the next reset\n",
			nq->core, nq->queue);
		ret = -EBUSY;
		goto err_unlock;
	}
	ret = neuron_nq_alloc_ring(nq);
	if (ret)
		goto err_unlock;

	neuron_nq_hw_enable(nq);
	nq->seq = ++ndev->nq_seq;
	ndev->nq[nq->core][nq->queue] = nq;
	if (nq->flags & NEURON_NQ_F_ADAPTIVE)
		neuron_dim_start(nq, budget);
	trace_neuron_nq_init(ndev->id, nq->core, nq->queue, nq->size,
			     nq->flags, nq->threshold);
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);

	arg->ring_offset = neuron_mmap_cookie(NEURON_COOKIE_RING, nq->core,
					      nq->queue);
	arg->doorbell_offset = neuron_mmap_cookie(NEURON_COOKIE_DOORBELL,
						  nq->core, nq->queue);
	return 0;

err_unlock:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
err_free:
	kfree(nq);
	return ret;
}

/**
 * neuron_nq_ioctl_destroy() - NEURON_IOC_NQ_DESTROY: disable and free a queue
 * @nfile: the caller's file
 * @arg: @core, @queue of a queue this file made; @reserved zero
 *
 * The queue is disabled (records routed to it are dropped from then on,
 * docs/device-model.md), its doorbell page is unmapped from the caller
 * (a later access reaches the file's dummy page, not the device:
 * docs/decisions/0011-reset-and-recovery.md#mapping-after-reset) and its ring
 * is freed at once, even while the doorbell page is mapped.
 *
 * Return: 0; -EINVAL (core/queue out of range, reserved nonzero); -ENOENT
 * (no such queue made by this file); -EBUSY (the ring is still mapped);
 * -ENODEV (device removed).
 */
int neuron_nq_ioctl_destroy(struct neuron_file *nfile,
			    const struct neuron_nq_id *arg)
{
	static const char cmd[] = "NQ_DESTROY";
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_nq *nq;
	int ret;

	ret = neuron_nq_check_id(ndev, cmd, arg->core, arg->queue);
	if (ret)
		return ret;
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	nq = neuron_nq_find(nfile, arg->core, arg->queue);
	if (!nq)
		ret = -ENOENT;
	else if (atomic_read(&nfile->ring_maps[arg->core][arg->queue]))
		ret = -EBUSY;
	else
		neuron_nq_teardown(nq, true);
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_nq_ioctl_info() - NEURON_IOC_NQ_INFO: a queue's state and counters
 * @nfile: the caller's file
 * @arg: in: @core, @queue of a queue this file made, reserved zero;
 *	out: @head, @tail (free-running record counts), @phase (of the next
 *	record), @size (bytes), @flags, @threshold (records), @coalesce_ns
 *	(nanoseconds, 0 = no time limit), @overflow_count, @drop_count
 *	(records, since the queue was made: neuron_nq_read_counts())
 *
 * Reads the queue descriptor (regs.h NEURON_NQ_*; docs/hardware.md#nq-head-tail
 * head_ptr / tail_ptr); @threshold and @coalesce_ns are the values last set
 * by NQ_INIT or NQ_COALESCE (docs/device-model.md#coalescing);
 * docs/decisions/0001-original-architecture.md#arch-driver "NQ info".
 *
 * Return: 0; -EINVAL (core/queue out of range, reserved nonzero); -ENOENT
 * (no such queue made by this file); -ENODEV (device removed).
 */
int neuron_nq_ioctl_info(struct neuron_file *nfile, struct neuron_nq_info *arg)
{
	static const char cmd[] = "NQ_INFO";
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_nq *nq;
	u32 c = arg->core, q = arg->queue;
	u32 overflow, drops;
	int ret;

	ret = neuron_nq_check_id(ndev, cmd, c, q);
	if (ret)
		return ret;
	/* @route was reserved1: an out field now, its input ignored */
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	nq = neuron_nq_find(nfile, c, q);
	if (nq) {
		arg->route = neuron_rd(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_ROUTE));
		arg->head = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_HEAD));
		arg->tail = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_TAIL));
		arg->phase = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_STATUS)) &
			     NEURON_NQ_STATUS_PHASE;
		arg->size = nq->size;
		arg->flags = nq->flags;
		arg->threshold = nq->threshold;
		arg->coalesce_ns = nq->coalesce_ns;
		neuron_nq_read_counts(nq, &overflow, &drops);
		arg->overflow_count = overflow;
		arg->drop_count = drops;
	} else {
		ret = -ENOENT;
	}
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_nq_ioctl_coalesce() - NEURON_IOC_NQ_COALESCE: a live queue's limits
 * @nfile: the caller's file
 * @arg: @core (< num_cores), @queue (< 10) of a queue this file made;
 *	the count limit @threshold (unread records that raise the queue's
 *	threshold interrupt, tpb_notific_intr_0; 0 = none; at most the
 *	ring's entries, size / 16) and the time limit @coalesce_ns
 *	(nanoseconds after the first unread record at which it is raised if
 *	@threshold was not reached; 0 = none; at most
 *	NEURON_NQ_COALESCE_NS_MAX, 10 ms); @reserved zero
 *
 * Writes THRESHOLD, then COALESCE_NS, of the running queue under
 * &neuron_device.lock. The device counts the records already unread
 * toward the new limits at once (docs/device-model.md#coalescing), so a
 * change loses no interrupt: at worst the write between the two registers
 * raises one a little early. The queue keeps its records, HEAD and TAIL.
 * docs/decisions/0028-coalescing.md.
 *
 * Return: 0; -EINVAL (core/queue out of range, @coalesce_ns above the
 * maximum, @reserved nonzero, @threshold above the ring's entries; the
 * debug log names the field); -ENOENT (no such queue made by this file);
 * -EIO (stale file, device offline); -ENODEV (device removed).
 */
int neuron_nq_ioctl_coalesce(struct neuron_file *nfile,
			     const struct neuron_nq_coalesce *arg)
{
	static const char cmd[] = "NQ_COALESCE";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, q = arg->queue;
	struct neuron_nq *nq;
	int ret;

	ret = neuron_nq_check_id(ndev, cmd, c, q);
	if (ret)
		return ret;
	if (arg->coalesce_ns > NEURON_NQ_COALESCE_NS_MAX)
		return neuron_bad_field(ndev, cmd, "coalesce_ns");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	nq = neuron_nq_find(nfile, c, q);
	if (!nq) {
		ret = -ENOENT;
	} else if (arg->threshold > nq->size / NEURON_ISA_NOTIFICATION_NBYTES) {
		ret = neuron_bad_field(ndev, cmd, "threshold");
	} else {
		/* a setting fixed by hand ends adaptive moderation */
		neuron_dim_stop(nq);
		neuron_wr(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_THRESHOLD),
			  arg->threshold);
		neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NQ_COALESCE_NS(q)),
			  arg->coalesce_ns);
		nq->threshold = arg->threshold;
		nq->coalesce_ns = arg->coalesce_ns;
		trace_neuron_nq_coalesce(ndev->id, c, q, arg->threshold,
					 arg->coalesce_ns);
	}
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_nq_ioctl_head() - NEURON_IOC_NQ_HEAD: write a queue's HEAD
 * @nfile: the caller's file
 * @arg: @core (< num_cores), @queue (< 10) of a queue this file made;
 *	@head, the records consumed (a free-running count, what a doorbell
 *	store writes); @reserved0, @reserved zero
 *
 * What a store to the queue's doorbell mapping does, for a kernel whose
 * pages are larger than the doorbell stride (doorbells not mappable,
 * DEVICE_INFO @doorbell_size 0;
 * docs/decisions/0011-reset-and-recovery.md#page-size); it works
 * with any page size. The device checks @head as it checks a doorbell
 * write (docs/device-model.md, docs/hardware.md#nq-head-tail).
 *
 * Return: 0; -EINVAL (core/queue out of range, reserved nonzero; the debug
 * log names the field); -ENOENT (no such queue made by this file); -EIO
 * (stale file, device offline); -ENODEV (device removed).
 */
int neuron_nq_ioctl_head(struct neuron_file *nfile,
			 const struct neuron_nq_head *arg)
{
	static const char cmd[] = "NQ_HEAD";
	struct neuron_device *ndev = nfile->ndev;
	int ret;

	ret = neuron_nq_check_id(ndev, cmd, arg->core, arg->queue);
	if (ret)
		return ret;
	if (arg->reserved0)
		return neuron_bad_field(ndev, cmd, "reserved0");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	if (neuron_nq_find(nfile, arg->core, arg->queue))
		neuron_wr(ndev, NEURON_NQ_REG(arg->core, arg->queue, NEURON_NQ_HEAD),
			  arg->head);
	else
		ret = -ENOENT;
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_nq_route_valid() - whether @route is a route word the core can take
 * @route: the word NEURON_IOC_NQ_ROUTE was asked to program
 *
 * Return: true when no bit lies above NEURON_ROUTE_MASK and every class's
 * 4-bit queue number (NEURON_ROUTE_QUEUE()) is a queue of the NOTIFIC
 * block, below NEURON_NUM_SW_QUEUES (docs/hardware.md#nq-routing: the
 * device drops a class routed to queue 10..15).
 */
static bool neuron_nq_route_valid(u32 route)
{
	u32 cls;

	if (route & ~NEURON_ROUTE_MASK)
		return false;
	for (cls = 0; cls < NEURON_CLASS_COUNT; cls++)
		if (NEURON_ROUTE_QUEUE(route, cls) >= NEURON_NUM_SW_QUEUES)
			return false;
	return true;
}

/**
 * neuron_nq_ioctl_route() - NEURON_IOC_NQ_ROUTE: read or program a core's
 *	ROUTE word
 * @nfile: the caller's file
 * @arg: in: @core (< num_cores), @op (NEURON_ROUTE_OP_GET or _SET),
 *	@route (SET: one 4-bit software queue number per enum
 *	neuron_notific_class, each below 10, bits 31..28 zero; GET: zero),
 *	@reserved0 and @reserved zero; out: @route, the core's ROUTE word
 *	read back from the device after the call
 *
 * SET needs ownership of the core (a free core becomes the caller's,
 * docs/decisions/0005-tenancy.md) and no queue of the core: the records a
 * queue holds keep the class they were routed with, so a consumer
 * decodes a queue's records with one route for the queue's life
 * (docs/decisions/0022-route-programmable.md). The register is the state; the
 * driver keeps no copy. It is NEURON_ROUTE_DEFAULT after a function reset
 * and neuron_hw_core_scrub() writes the default back when the owner gives
 * the core up. GET needs no ownership. Serialised with the queue handlers
 * under &neuron_device.lock.
 *
 * Return: 0; -EINVAL (@core, @op or @route out of range, @route nonzero
 * for GET, reserved nonzero; the debug log names the field); -EPERM (SET:
 * another file owns the core); -EBUSY (SET: a queue of the core exists);
 * -ENOMEM (the file's event queue, on an implicit claim); -EIO (stale
 * file, device offline); -ENODEV (device removed).
 */
int neuron_nq_ioctl_route(struct neuron_file *nfile,
			  struct neuron_nq_route *arg)
{
	static const char cmd[] = "NQ_ROUTE";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, q, reg;
	int ret;

	if (c >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (arg->op != NEURON_ROUTE_OP_GET && arg->op != NEURON_ROUTE_OP_SET)
		return neuron_bad_field(ndev, cmd, "op");
	if (arg->op == NEURON_ROUTE_OP_GET ? arg->route != 0 :
	    !neuron_nq_route_valid(arg->route))
		return neuron_bad_field(ndev, cmd, "route");
	if (arg->reserved0)
		return neuron_bad_field(ndev, cmd, "reserved0");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	reg = NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_ROUTE);
	if (arg->op == NEURON_ROUTE_OP_SET) {
		ret = neuron_owner_claim(nfile, c);
		if (ret)
			goto out_unlock;
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
			if (ndev->nq[c][q]) {
				ret = -EBUSY;
				goto out_unlock;
			}
		}
		neuron_wr(ndev, reg, arg->route);
	}
	/* the read also flushes the posted write */
	arg->route = neuron_rd(ndev, reg);
out_unlock:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_nq_release_file() - tear down every queue a closing file owns
 * @nfile: the file being released; no VMA maps it any more
 * @hw: the device is live (neither offline nor dead)
 *
 * Called with &neuron_device.lock held, after the file's engines were
 * stopped. On a live device each queue is disabled with the device's
 * acknowledgment (neuron_hw_queue_off()) before its ring is freed, or
 * quarantined without one. On a device the disable path has fenced, each
 * queue it has not torn down yet is only disowned: the device may still
 * write its ring, which neuron_nq_teardown_all() frees once bus mastering
 * is off (docs/decisions/0011-reset-and-recovery.md "release during a reset").
 */
void neuron_nq_release_file(struct neuron_file *nfile, bool hw)
{
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_nq *nq;
	u32 c, q;

	lockdep_assert_held(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++) {
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
			nq = neuron_nq_find(nfile, c, q);
			if (!nq)
				continue;
			if (hw)
				neuron_nq_teardown(nq, true);
			else
				nq->owner = NULL;	/* the disable path frees it */
		}
	}
}

/**
 * neuron_nq_stop_all() - disable every queue, count what was not read
 * @ndev: device, offline or dead, its engines stopped
 * @hw_ok: the device answers MMIO; false for a device that is gone or a
 *	frozen link, whose registers are not touched
 * @unread: out: records written but not yet consumed (TAIL - HEAD, at most
 *	the ring's entries: on ignore-full the device laps HEAD without
 *	moving it, docs/device-model.md) summed over the live queues; 0 when
 *	!@hw_ok (unknowable)
 *
 * First half of the disable path (neuron_lifecycle.c): the queues stay in
 * the table, with their rings, until neuron_nq_teardown_all(), which runs
 * once the device has quiesced and bus mastering is off.
 *
 * Return: the number of live queues.
 */
u32 neuron_nq_stop_all(struct neuron_device *ndev, bool hw_ok, u64 *unread)
{
	u32 c, q, n = 0, head, tail, entries;

	lockdep_assert_held(&ndev->lock);
	*unread = 0;
	for (c = 0; c < ndev->num_cores; c++) {
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
			if (!ndev->nq[c][q])
				continue;
			n++;
			if (!hw_ok)
				continue;
			head = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_HEAD));
			tail = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_TAIL));
			entries = ndev->nq[c][q]->size / NEURON_ISA_NOTIFICATION_NBYTES;
			*unread += min(tail - head, entries);
		}
		if (hw_ok)
			neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_QUEUE_ENABLE), 0);
	}
	return n;
}

/**
 * neuron_nq_teardown_all() - free every queue of a stopped device
 * @ndev: device, queues stopped by neuron_nq_stop_all(), quiesced (or
 *	gone) and bus mastering off
 *
 * Called with &neuron_device.lock held. Every user mapping of every ring
 * and doorbell is zapped and every ring taken from the device before this
 * returns (device memory freed, host pages DMA-unmapped and left to their
 * VMAs), the rings of released files' queues and the quarantined ones too.
 */
void neuron_nq_teardown_all(struct neuron_device *ndev)
{
	struct neuron_nq *nq, *tmp;
	u32 c, q;

	lockdep_assert_held(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++)
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			if (ndev->nq[c][q])
				neuron_nq_teardown(ndev->nq[c][q], false);
	/* bus mastering is off: no device writes a quarantined ring now */
	list_for_each_entry_safe(nq, tmp, &ndev->quarantine, quarantine) {
		list_del(&nq->quarantine);
		neuron_nq_free_ring(nq);
		kfree(nq);
	}
}
