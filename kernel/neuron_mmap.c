// SPDX-License-Identifier: GPL-2.0
/*
 * mmap of rings, head doorbell pages and the file's status page
 * (docs/decisions/0001-original-architecture.md#arch-parts "data flows one
 * way",
 * docs/decisions/0001-original-architecture.md#arch-driver "mmap",
 * #device-loss, #mapping-after-reset;
 * include/uapi/linux/neuron.h NEURON_IOC_NQ_INIT, struct neuron_status_page).
 *
 * Cookies. NEURON_IOC_NQ_INIT returns two mmap offsets per queue; userspace
 * must treat them as opaque. They are page-aligned and encode, in page
 * units (offset >> PAGE_SHIFT):
 *
 *	bits 31..24  type: 1 = ring, 2 = head doorbell page
 *	bits 23..16  core
 *	bits 15..8   queue
 *	bits  7..0   page within the mapping, 0 in a cookie
 *
 * i.e. ring = ((1 << 24) | (core << 16) | (queue << 8)) << PAGE_SHIFT and
 * doorbell = ((2 << 24) | (core << 16) | (queue << 8)) << PAGE_SHIFT. The
 * 8-bit page field holds the largest ring (1 MiB = 256 pages of 4 KiB),
 * so the file offsets of two mappings never overlap and a split VMA still
 * decodes. The status page is at the byte offset NEURON_STATUS_PAGE_OFFSET
 * (0x3000000000) whatever the page size: type 3 with 4 KiB pages, type 0
 * (core field 0xC0) with 16 KiB, type 0 core 0x30 with 64 KiB, never a
 * ring's or a doorbell's (BUILD_BUG_ON in neuron_mmap()); the same offset on every
 * file, each file mapping its own page (neuron_status.c). No length or
 * offset depends on 4 KiB pages: DEVICE_INFO reports @page_size and
 * @doorbell_size.
 *
 * Rules, checked at mmap() against the caller's file:
 *  - the cookie names a queue this file made (NEURON_IOC_NQ_INIT), else
 *    -EINVAL; the length is PAGE_ALIGN(size) for a ring and PAGE_SIZE for
 *    a doorbell, else -EINVAL; MAP_SHARED only, else -EINVAL.
 *  - rings are read-only: PROT_WRITE gives -EACCES and VM_MAYWRITE is
 *    cleared, so mprotect() cannot add write later (it fails with -EACCES).
 *  - nothing is executable: PROT_EXEC gives -EACCES, VM_MAYEXEC is cleared.
 *  - doorbell pages map BAR0 + NEURON_CORE_BASE(core) + NEURON_DOORBELL(queue)
 *    uncached: only the queue's HEAD register, at +0, read/write. The
 *    doorbells are NEURON_DOORBELL_SIZE (4 KiB) apart, so on a kernel
 *    whose pages are larger one page would hold other queues' doorbells
 *    and the NOTIFIC registers: there a doorbell mmap() is refused with
 *    -EOPNOTSUPP, DEVICE_INFO reports @doorbell_size 0, and HEAD is
 *    written with NEURON_IOC_NQ_HEAD
 *    (docs/decisions/0011-reset-and-recovery.md#page-size).
 *  - the status page: MAP_SHARED, exactly one page, read-only like a ring
 *    (-EACCES for PROT_WRITE or PROT_EXEC, VM_MAYWRITE and VM_MAYEXEC
 *    cleared), on any open file: one opened read-only (the page tells it
 *    only about itself), a stale one, and one whose device was removed
 *    (neither neuron_enter() nor the queue table is consulted).
 *
 * Backing. Every page of every mapping is inserted at fault time with
 * vmf_insert_pfn(), as vfio-pci does for its BARs: host-ring pages (RAM,
 * struct neuron_ring, cached), device-ring pages (BAR4, uncached) and
 * doorbell pages (BAR0, uncached). The VMAs are VM_IO | VM_PFNMAP |
 * VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY and no page is ever mapped at
 * mmap() time, so the same code is right with and without an IOMMU
 * (dma_mmap_coherent() on a VM_PFNMAP VMA hits a BUG in vm_insert_page()
 * when the DMA memory comes from the IOMMU's page allocator). A forked
 * child inherits none of them (VM_DONTCOPY): a mapping holds the file, so
 * an inherited one would keep a worker's parent's cores, memory and
 * queues after both closed the descriptor (docs/decisions/0007-fork.md).
 *
 * After a teardown
 * (docs/decisions/0011-reset-and-recovery.md#mapping-after-reset: NQ_DESTROY,
 * release, FLR, AER, suspend, shutdown, unbind, surprise removal) no
 * access to an old mapping raises a signal, the DRM/TTM unplug pattern:
 *  - a host ring VMA holds a reference on the ring's pages (vm_ops
 *    open/close, vm_private_data), so they stay mapped and readable, with
 *    the records the device wrote before it stopped, until the last
 *    munmap; the teardown only takes the device's side (dma_unmap_page()
 *    once the queue is confirmed off or bus mastering is off, as before;
 *    a quarantined ring keeps its device reference until then). Its fault
 *    needs neither the device nor the queue.
 *  - a device ring or doorbell VMA remembers its queue's serial number
 *    (vm_private_data). Its fault looks the queue up under
 *    &neuron_device.lock and inserts the BAR page before dropping it;
 *    every teardown zaps the queue's ring and doorbell from the owner's
 *    f_mapping under the same lock before the BAR range can be reused. A
 *    later fault that finds no live queue of this file with that serial
 *    (or the device offline, dead or the file stale) inserts a harmless
 *    page instead of the BAR: the zero page for a device ring (read-only:
 *    reads give zeros), the file's own dummy page for a doorbell (a write
 *    lands there and is seen only through this file's doorbell mappings;
 *    it reaches no device and no other file).
 * Ring VMAs are still counted per file, so NEURON_IOC_NQ_DESTROY refuses
 * (-EBUSY) while the ring is mapped; a doorbell mapping does not hold the
 * queue. The status page is never zapped: the disable path zaps the ring
 * and doorbell cookies only, and the page lives as long as the file,
 * which every VMA holds; it says what happened (STALE or GONE, the cause).
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_compat.h"

/**
 * neuron_mmap_cookie() - the mmap offset of a queue's ring or doorbell
 * @type: NEURON_COOKIE_RING or NEURON_COOKIE_DOORBELL
 * @core: core index
 * @queue: queue index
 *
 * Return: the byte offset to pass to mmap(), page-aligned (see the top of
 * this file for the encoding).
 */
u64 neuron_mmap_cookie(enum neuron_cookie_type type, u32 core, u32 queue)
{
	return NEURON_LAYOUT_COOKIE(type, core, queue, PAGE_SHIFT);
}

static u32 neuron_cookie_type(unsigned long pgoff)
{
	return pgoff >> NEURON_COOKIE_TYPE_SHIFT;
}

static u32 neuron_cookie_core(unsigned long pgoff)
{
	return (pgoff >> NEURON_COOKIE_CORE_SHIFT) & 0xff;
}

static u32 neuron_cookie_queue(unsigned long pgoff)
{
	return (pgoff >> NEURON_COOKIE_QUEUE_SHIFT) & 0xff;
}

/*
 * Take a reference on a host ring's pages (struct neuron_ring); the caller
 * already holds one (a VMA being copied or split, or the queue at mmap()).
 */
static void neuron_ring_get(struct neuron_ring *ring)
{
	kref_get(&ring->kref);
}

static void neuron_ring_release(struct kref *kref)
{
	struct neuron_ring *ring = container_of(kref, struct neuron_ring, kref);

	__free_pages(ring->pages, ring->order);
	kfree(ring);
}

/**
 * neuron_ring_put() - drop a reference on a host ring's pages
 * @ring: the ring
 *
 * The last put frees them: by then the device has no DMA mapping of them
 * (the queue drops its reference at its teardown, after dma_unmap_page(),
 * neuron_nq.c) and no VMA shows them.
 */
void neuron_ring_put(struct neuron_ring *ring)
{
	kref_put(&ring->kref, neuron_ring_release);
}

static atomic_t *neuron_vma_ring_maps(struct vm_area_struct *vma)
{
	struct neuron_file *nfile = vma->vm_file->private_data;

	if (neuron_cookie_type(vma->vm_pgoff) != NEURON_COOKIE_RING)
		return NULL;
	return &nfile->ring_maps[neuron_cookie_core(vma->vm_pgoff)]
				[neuron_cookie_queue(vma->vm_pgoff)];
}

/* A host ring's VMA holds its pages (struct neuron_ring); others NULL. */
static const struct vm_operations_struct neuron_host_ring_vm_ops;

static struct neuron_ring *neuron_vma_ring(struct vm_area_struct *vma)
{
	return vma->vm_ops == &neuron_host_ring_vm_ops ? vma->vm_private_data :
							 NULL;
}

/* fork(), a split or mremap() made another VMA of the same ring */
static void neuron_vm_open(struct vm_area_struct *vma)
{
	atomic_t *maps = neuron_vma_ring_maps(vma);
	struct neuron_ring *ring = neuron_vma_ring(vma);

	if (maps)
		atomic_inc(maps);
	if (ring)
		neuron_ring_get(ring);
}

static void neuron_vm_close(struct vm_area_struct *vma)
{
	atomic_t *maps = neuron_vma_ring_maps(vma);
	struct neuron_ring *ring = neuron_vma_ring(vma);

	if (maps)
		atomic_dec(maps);
	if (ring)
		neuron_ring_put(ring);
}

/*
 * A host ring's page: the VMA holds the pages, so neither the device nor
 * the queue is consulted, and it is the same page before and after any
 * teardown (see the top of this file).
 */
static vm_fault_t neuron_host_ring_fault(struct vm_fault *vmf)
{
	struct neuron_ring *ring = vmf->vma->vm_private_data;
	unsigned long page = vmf->pgoff & NEURON_COOKIE_PAGE_MASK;

	if (page >= 1UL << ring->order)
		return VM_FAULT_SIGBUS;	/* not reached: the length was checked */
	return vmf_insert_pfn(vmf->vma, vmf->address,
			      page_to_pfn(ring->pages) + page);
}

/*
 * The harmless page of a device ring or doorbell VMA whose queue is gone:
 * the zero page (a device ring is read-only) or the file's dummy page
 * (a doorbell, writable; allocated by its mmap()), mapped cached as the
 * RAM it is.
 */
static vm_fault_t neuron_vm_fault_dummy(struct vm_fault *vmf,
					struct neuron_file *nfile)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long pfn;

	if (neuron_cookie_type(vmf->pgoff) == NEURON_COOKIE_DOORBELL)
		pfn = page_to_pfn(nfile->dummy);
	else
		pfn = page_to_pfn(ZERO_PAGE(vmf->address));
	return vmf_insert_pfn_prot(vma, vmf->address, pfn,
				   vm_get_page_prot(vma->vm_flags));
}

/*
 * A device ring's or doorbell's page: the BAR page if the VMA's queue is
 * still the live queue of this file, else a harmless page; see the top of
 * this file.
 */
static vm_fault_t neuron_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct neuron_file *nfile = vma->vm_file->private_data;
	struct neuron_device *ndev = nfile->ndev;
	u32 core = neuron_cookie_core(vmf->pgoff);
	u32 queue = neuron_cookie_queue(vmf->pgoff);
	unsigned long page = vmf->pgoff & NEURON_COOKIE_PAGE_MASK;
	vm_fault_t ret;
	struct neuron_nq *nq;
	unsigned long pfn;

	if (neuron_enter_file(nfile))
		return neuron_vm_fault_dummy(vmf, nfile);
	mutex_lock(&ndev->lock);
	nq = core < ndev->num_cores && queue < NEURON_NUM_SW_QUEUES ?
	     ndev->nq[core][queue] : NULL;
	if (!nq || nq->owner != nfile ||
	    nq->seq != (unsigned long)vma->vm_private_data) {
		ret = neuron_vm_fault_dummy(vmf, nfile);
		goto out;
	}

	if (neuron_cookie_type(vmf->pgoff) == NEURON_COOKIE_RING) {
		if (page >= nq->alloc_size >> PAGE_SHIFT) {
			ret = VM_FAULT_SIGBUS;	/* not reached: length checked */
			goto out;
		}
		pfn = PHYS_PFN(ndev->mem_phys + nq->mem_off) + page;
	} else {
		pfn = PHYS_PFN(ndev->regs_phys + NEURON_CORE_BASE(nq->core) +
			       NEURON_DOORBELL(nq->queue));
	}
	ret = vmf_insert_pfn(vma, vmf->address, pfn);
out:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

static const struct vm_operations_struct neuron_vm_ops = {
	.open = neuron_vm_open,
	.close = neuron_vm_close,
	.fault = neuron_vm_fault,
};

static const struct vm_operations_struct neuron_host_ring_vm_ops = {
	.open = neuron_vm_open,
	.close = neuron_vm_close,
	.fault = neuron_host_ring_fault,
};

/*
 * The status page: the VMA holds the file, the file holds the page, so
 * no lock is needed and the device's state does not matter.
 */
static vm_fault_t neuron_status_fault(struct vm_fault *vmf)
{
	struct neuron_file *nfile = vmf->vma->vm_file->private_data;

	if (vmf->pgoff != NEURON_LAYOUT_STATUS_PGOFF(PAGE_SHIFT))
		return VM_FAULT_SIGBUS;	/* not reached: the length was checked */
	return vmf_insert_pfn(vmf->vma, vmf->address, neuron_status_pfn(nfile));
}

static const struct vm_operations_struct neuron_status_vm_ops = {
	.fault = neuron_status_fault,
};

/* See "Rules" at the top of this file: the status page's mapping. */
static int neuron_mmap_status(struct neuron_file *nfile,
			      struct vm_area_struct *vma)
{
	/* MAP_SHARED of a read-only file keeps only VM_MAYSHARE (do_mmap()) */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return neuron_bad_field(nfile->ndev, "mmap", "flags (not MAP_SHARED)");
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EACCES;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return neuron_bad_field(nfile->ndev, "mmap", "length");
	vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP |
			  VM_DONTCOPY);
	vma->vm_ops = &neuron_status_vm_ops;
	return 0;
}

/**
 * neuron_mmap() - map a queue's ring or head doorbell page, or the file's
 *	status page
 * @filp: the caller's file, which must own the queue (any file for its
 *	status page)
 * @vma: the new mapping; vm_pgoff holds a cookie from NEURON_IOC_NQ_INIT,
 *	or NEURON_STATUS_PAGE_OFFSET
 *
 * See the top of this file for the cookie encoding and the rules.
 * docs/decisions/0001-original-architecture.md#arch-driver "mmap: rings
 * read-only ..., the head doorbell page write-only in effect. Offsets
 * are opaque cookies from ioctls, checked against the caller's file.";
 * docs/decisions/0027-device-loss.md for the status page.
 *
 * No page is mapped here; each is inserted when first touched.
 *
 * Return: 0; -EINVAL (unknown cookie, a queue of another file, wrong
 * length, not MAP_SHARED); -EACCES (PROT_WRITE on a ring or the status
 * page, PROT_EXEC, a ring or doorbell of a file opened read-only); -EPERM
 * (a file of a core node, a ring or doorbell of another core:
 * docs/decisions/0017-core-nodes.md);
 * -ENODEV (device removed); -EIO (device offline, or the file is stale
 * after a reset). The status page gets neither of the last two.
 */
int neuron_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct neuron_file *nfile = filp->private_data;
	struct neuron_device *ndev = nfile->ndev;
	unsigned long pgoff = vma->vm_pgoff;
	unsigned long len = vma->vm_end - vma->vm_start;
	u32 type = neuron_cookie_type(pgoff);
	u32 core = neuron_cookie_core(pgoff);
	u32 queue = neuron_cookie_queue(pgoff);
	struct neuron_nq *nq;
	unsigned long want;
	int ret;

	/* the status page's offset is page-aligned and no ring's or doorbell's */
	BUILD_BUG_ON(NEURON_STATUS_PAGE_OFFSET % PAGE_SIZE);
	BUILD_BUG_ON(NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(PAGE_SHIFT)) ==
		     NEURON_COOKIE_RING);
	BUILD_BUG_ON(NEURON_LAYOUT_TYPE(NEURON_LAYOUT_STATUS_PGOFF(PAGE_SHIFT)) ==
		     NEURON_COOKIE_DOORBELL);
	if (pgoff == NEURON_LAYOUT_STATUS_PGOFF(PAGE_SHIFT))
		return neuron_mmap_status(nfile, vma);
	/* a read-only file owns no queue (docs/decisions/0005-tenancy.md) */
	if (!(filp->f_mode & FMODE_WRITE))
		return -EACCES;
	if ((type != NEURON_COOKIE_RING && type != NEURON_COOKIE_DOORBELL) ||
	    (pgoff & NEURON_COOKIE_PAGE_MASK))
		return neuron_bad_field(ndev, "mmap", "offset");
	if (!(vma->vm_flags & VM_SHARED))
		return neuron_bad_field(ndev, "mmap", "flags (not MAP_SHARED)");
	if (vma->vm_flags & VM_EXEC)
		return -EACCES;
	if (type == NEURON_COOKIE_RING && (vma->vm_flags & VM_WRITE))
		return -EACCES;
	/* a core node's file maps its own core's queues only */
	if (nfile->core_node && !neuron_file_may_core(nfile, core)) {
		dev_dbg_ratelimited(&ndev->pdev->dev,
				    "mmap: offset names core %u, not this core node's (pid %d %s)\n",
				    core, task_pid_nr(current), current->comm);
		return -EPERM;
	}
	/*
	 * a page would show other queues' doorbells
	 * (docs/decisions/0011-reset-and-recovery.md#page-size)
	 */
	if (type == NEURON_COOKIE_DOORBELL && !neuron_mmap_doorbell_size()) {
		dev_dbg(&ndev->pdev->dev,
			"mmap: offset (a doorbell: PAGE_SIZE %lu is above the doorbell stride %u; write HEAD with NEURON_IOC_NQ_HEAD)\n",
			PAGE_SIZE, NEURON_DOORBELL_SIZE);
		return -EOPNOTSUPP;
	}

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);

	nq = NULL;
	if (core < ndev->num_cores && queue < NEURON_NUM_SW_QUEUES)
		nq = ndev->nq[core][queue];
	if (!nq || nq->owner != nfile) {
		ret = neuron_bad_field(ndev, "mmap", "offset (no such queue)");
		goto out;
	}
	want = type == NEURON_COOKIE_RING ? nq->alloc_size : PAGE_SIZE;
	if (len != want) {
		ret = neuron_bad_field(ndev, "mmap", "length");
		goto out;
	}
	/* what the doorbell shows once its queue is gone */
	if (type == NEURON_COOKIE_DOORBELL && !nfile->dummy) {
		nfile->dummy = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!nfile->dummy) {
			ret = -ENOMEM;
			goto out;
		}
	}

	vm_flags_clear(vma, VM_MAYEXEC);
	if (type == NEURON_COOKIE_RING)
		vm_flags_clear(vma, VM_MAYWRITE);
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP |
			  VM_DONTCOPY);
	if (type == NEURON_COOKIE_RING && !(nq->flags & NEURON_NQ_F_DEVICE_MEM)) {
		/* host rings are ordinary cached RAM, held by the VMA */
		vma->vm_ops = &neuron_host_ring_vm_ops;
		vma->vm_private_data = nq->ring;
	} else {
		vma->vm_ops = &neuron_vm_ops;
		vma->vm_private_data = (void *)(unsigned long)nq->seq;
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	}
	/* as vm_ops->open would; ->close will balance it */
	neuron_vm_open(vma);
out:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_mmap_zap_queue() - unmap a queue's ring and doorbell from its owner
 * @nfile: the file that owns the queue
 * @core: core index
 * @queue: queue index
 * @ring_bytes: the ring's mapping length, PAGE_ALIGN(size)
 *
 * Called under &neuron_device.lock after the queue left the table, so a
 * new fault cannot map the BAR again (a device ring or doorbell faults in
 * a harmless page, a host ring its own pages, which its VMAs hold).
 */
void neuron_mmap_zap_queue(struct neuron_file *nfile, u32 core, u32 queue,
			   u32 ring_bytes)
{
	struct address_space *mapping = nfile->filp->f_mapping;

	lockdep_assert_held(&nfile->ndev->lock);
	unmap_mapping_range(mapping,
			    neuron_mmap_cookie(NEURON_COOKIE_RING, core, queue),
			    ring_bytes, 1);
	unmap_mapping_range(mapping,
			    neuron_mmap_cookie(NEURON_COOKIE_DOORBELL, core, queue),
			    PAGE_SIZE, 1);
}

/**
 * neuron_mmap_zap_all() - unmap every ring and doorbell of the device
 * @ndev: device, offline or dead
 *
 * Called by the disable path under &neuron_device.lock. Each open file's
 * f_mapping is zapped over the ring and doorbell cookies (types 1 and 2),
 * not the status page outside them; files opened through different inodes
 * of /dev/nnqN are each on the list, so no mapping is missed. The next
 * fault of a device ring or doorbell inserts a harmless page, a host ring
 * its own pages (see the top of this file).
 */
void neuron_mmap_zap_all(struct neuron_device *ndev)
{
	u64 first = neuron_mmap_cookie(NEURON_COOKIE_RING, 0, 0);
	u64 end = NEURON_LAYOUT_ZAP_END(PAGE_SHIFT);
	struct neuron_file *nfile;

	lockdep_assert_held(&ndev->lock);
	list_for_each_entry(nfile, &ndev->files, node)
		unmap_mapping_range(nfile->filp->f_mapping, first, end - first, 1);
}

/**
 * neuron_mmap_doorbell_size() - the length of a doorbell mapping
 *
 * Return: PAGE_SIZE when a page holds one queue's doorbell alone (4 KiB
 * pages: the doorbells are NEURON_DOORBELL_SIZE apart, regs.h), else 0:
 * doorbells cannot be mapped, HEAD is written with NEURON_IOC_NQ_HEAD
 * (docs/decisions/0011-reset-and-recovery.md#page-size). DEVICE_INFO reports it
 * as @doorbell_size.
 */
u32 neuron_mmap_doorbell_size(void)
{
	return NEURON_LAYOUT_DOORBELL_SIZE(PAGE_SHIFT);
}

/**
 * neuron_mmap_release_file() - free what a released file's mappings used
 * @nfile: the file; the VFS releases it only once no VMA maps it
 */
void neuron_mmap_release_file(struct neuron_file *nfile)
{
	if (nfile->dummy)
		__free_page(nfile->dummy);
	nfile->dummy = NULL;
}
