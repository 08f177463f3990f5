// SPDX-License-Identifier: GPL-2.0
/*
 * mmap of rings, head doorbell pages and the file's status page
 * (docs/decisions.md#arch-parts "data flows one way",
 * docs/decisions.md#arch-driver "mmap", #device-loss;
 * include/uapi/linux/neuron.h NEURON_IOC_NQ_INIT, struct neuron_status_page).
 *
 * Cookies. NEURON_IOC_NQ_INIT returns two mmap offsets per queue; userspace
 * must treat them as opaque. They are page-aligned and encode, in page
 * units (offset >> PAGE_SHIFT):
 *
 *	bits 31..24  type: 1 = ring, 2 = head doorbell page, 3 = status page
 *	bits 23..16  core
 *	bits 15..8   queue
 *	bits  7..0   page within the mapping, 0 in a cookie
 *
 * i.e. ring = ((1 << 24) | (core << 16) | (queue << 8)) << PAGE_SHIFT and
 * doorbell = ((2 << 24) | (core << 16) | (queue << 8)) << PAGE_SHIFT. The
 * 8-bit page field holds the largest ring (1 MiB = 256 pages), so the file
 * offsets of two mappings never overlap and a split VMA still decodes.
 * The status page is type 3 with core, queue and page 0, the UAPI's
 * NEURON_STATUS_PAGE_OFFSET (3 << 36 with the 4 KiB pages this driver
 * assumes, as its doorbell pages do): the same offset on every file, each
 * file mapping its own page (neuron_status.c).
 *
 * Rules, checked at mmap() against the caller's file:
 *  - the cookie names a queue this file made (NEURON_IOC_NQ_INIT), else
 *    -EINVAL; the length is PAGE_ALIGN(size) for a ring and 4096 for a
 *    doorbell, else -EINVAL; MAP_SHARED only, else -EINVAL.
 *  - rings are read-only: PROT_WRITE gives -EACCES and VM_MAYWRITE is
 *    cleared, so mprotect() cannot add write later (it fails with -EACCES).
 *  - nothing is executable: PROT_EXEC gives -EACCES, VM_MAYEXEC is cleared.
 *  - doorbell pages map BAR0 + NEURON_CORE_BASE(core) + NEURON_DOORBELL(queue)
 *    uncached: only the queue's HEAD register, at +0, read/write.
 *  - the status page: MAP_SHARED, exactly one page, read-only like a ring
 *    (-EACCES for PROT_WRITE or PROT_EXEC, VM_MAYWRITE and VM_MAYEXEC
 *    cleared), on any open file: one opened read-only (the page tells it
 *    only about itself), a stale one, and one whose device was removed
 *    (neither neuron_enter() nor the queue table is consulted).
 *
 * Backing. Every page of every mapping is inserted at fault time with
 * vmf_insert_pfn(), as vfio-pci does for its BARs: host-ring pages (RAM
 * from dma_alloc_pages(), cached), device-ring pages (BAR4, uncached) and
 * doorbell pages (BAR0, uncached). The VMAs are VM_IO | VM_PFNMAP |
 * VM_DONTEXPAND | VM_DONTDUMP and no page is ever mapped at mmap() time,
 * so the same code is right with and without an IOMMU (dma_mmap_coherent()
 * on a VM_PFNMAP VMA hits a BUG in vm_insert_page() when the DMA memory
 * comes from the IOMMU's page allocator).
 *
 * Teardown. The fault handler looks the queue up under &neuron_device.lock
 * and inserts the PFN before dropping it; every teardown (NQ_DESTROY,
 * release, remove, reset) zaps the queue's ring and doorbell from the
 * owner's f_mapping under the same lock before it frees the ring. So a PTE
 * can never outlive the memory it shows: after a teardown, a fault finds
 * no queue, or a newer queue than the one the VMA was made for (each VMA
 * remembers its queue's serial number in vm_private_data), and gets
 * SIGBUS. VMAs hold no reference on the queue; ring VMAs are only counted
 * per file, so NEURON_IOC_NQ_DESTROY can refuse (-EBUSY) while the ring is
 * mapped. A doorbell mapping does not hold the queue: destroy frees the
 * ring at once and the doorbell VMA faults to SIGBUS. The status page is
 * never zapped: the disable path zaps the ring and doorbell cookies only,
 * and the page lives as long as the file, which every VMA holds.
 */
#include <linux/fs.h>
#include <linux/mm.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_compat.h"

#define NEURON_COOKIE_TYPE_SHIFT	24
#define NEURON_COOKIE_CORE_SHIFT	16
#define NEURON_COOKIE_QUEUE_SHIFT	8
#define NEURON_COOKIE_PAGE_MASK		0xffUL

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
	u64 pgoff = ((u64)type << NEURON_COOKIE_TYPE_SHIFT) |
		    (core << NEURON_COOKIE_CORE_SHIFT) |
		    (queue << NEURON_COOKIE_QUEUE_SHIFT);

	return pgoff << PAGE_SHIFT;
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

static atomic_t *neuron_vma_ring_maps(struct vm_area_struct *vma)
{
	struct neuron_file *nfile = vma->vm_file->private_data;

	if (neuron_cookie_type(vma->vm_pgoff) != NEURON_COOKIE_RING)
		return NULL;
	return &nfile->ring_maps[neuron_cookie_core(vma->vm_pgoff)]
				[neuron_cookie_queue(vma->vm_pgoff)];
}

/* fork(), a split or mremap() made another VMA of the same ring */
static void neuron_vm_open(struct vm_area_struct *vma)
{
	atomic_t *maps = neuron_vma_ring_maps(vma);

	if (maps)
		atomic_inc(maps);
}

static void neuron_vm_close(struct vm_area_struct *vma)
{
	atomic_t *maps = neuron_vma_ring_maps(vma);

	if (maps)
		atomic_dec(maps);
}

/*
 * Insert the page that faulted, if the VMA's queue is still the live queue
 * of this file: see "Teardown" at the top of this file.
 */
static vm_fault_t neuron_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct neuron_file *nfile = vma->vm_file->private_data;
	struct neuron_device *ndev = nfile->ndev;
	u32 core = neuron_cookie_core(vmf->pgoff);
	u32 queue = neuron_cookie_queue(vmf->pgoff);
	unsigned long page = vmf->pgoff & NEURON_COOKIE_PAGE_MASK;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	struct neuron_nq *nq;
	unsigned long pfn;

	if (neuron_enter(ndev))
		return VM_FAULT_SIGBUS;
	mutex_lock(&ndev->lock);
	nq = core < ndev->num_cores && queue < NEURON_NUM_SW_QUEUES ?
	     ndev->nq[core][queue] : NULL;
	if (!nq || nq->owner != nfile ||
	    nq->seq != (unsigned long)vma->vm_private_data)
		goto out;

	if (neuron_cookie_type(vmf->pgoff) == NEURON_COOKIE_RING) {
		if (page >= nq->alloc_size >> PAGE_SHIFT)
			goto out;
		if (nq->flags & NEURON_NQ_F_DEVICE_MEM)
			pfn = PHYS_PFN(ndev->mem_phys + nq->mem_off) + page;
		else
			pfn = page_to_pfn(nq->pages) + page;
	} else {
		if (page)
			goto out;
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

/*
 * The status page: the VMA holds the file, the file holds the page, so
 * no lock is needed and the device's state does not matter.
 */
static vm_fault_t neuron_status_fault(struct vm_fault *vmf)
{
	struct neuron_file *nfile = vmf->vma->vm_file->private_data;

	if (vmf->pgoff != neuron_mmap_cookie(NEURON_COOKIE_STATUS, 0, 0) >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
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
	if (vma->vm_end - vma->vm_start != NEURON_STATUS_PAGE_SIZE)
		return neuron_bad_field(nfile->ndev, "mmap", "length");
	vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
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
 * docs/decisions.md#arch-driver "mmap: rings read-only ..., the head doorbell
 * page write-only in effect. Offsets are opaque cookies from ioctls, checked
 * against the caller's file."; docs/decisions.md#device-loss for the
 * status page.
 *
 * No page is mapped here; each is inserted when first touched.
 *
 * Return: 0; -EINVAL (unknown cookie, a queue of another file, wrong
 * length, not MAP_SHARED); -EACCES (PROT_WRITE on a ring or the status
 * page, PROT_EXEC, a ring or doorbell of a file opened read-only);
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

	BUILD_BUG_ON(((u64)NEURON_COOKIE_STATUS << NEURON_COOKIE_TYPE_SHIFT << PAGE_SHIFT) !=
		     NEURON_STATUS_PAGE_OFFSET);
	if (pgoff == neuron_mmap_cookie(NEURON_COOKIE_STATUS, 0, 0) >> PAGE_SHIFT)
		return neuron_mmap_status(nfile, vma);
	/* a read-only file owns no queue (docs/decisions.md#tenancy) */
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
	want = type == NEURON_COOKIE_RING ? nq->alloc_size :
					    NEURON_DOORBELL_SIZE;
	if (len != want) {
		ret = neuron_bad_field(ndev, "mmap", "length");
		goto out;
	}

	vm_flags_clear(vma, VM_MAYEXEC);
	if (type == NEURON_COOKIE_RING)
		vm_flags_clear(vma, VM_MAYWRITE);
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &neuron_vm_ops;
	vma->vm_private_data = (void *)(unsigned long)nq->seq;
	/* host rings are ordinary cached RAM; BAR pages are not */
	if (type != NEURON_COOKIE_RING || (nq->flags & NEURON_NQ_F_DEVICE_MEM))
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
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
 * new fault cannot map it again (it gets SIGBUS).
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
			    NEURON_DOORBELL_SIZE, 1);
}

/**
 * neuron_mmap_zap_all() - unmap every ring and doorbell of the device
 * @ndev: device, offline or dead
 *
 * Called by the disable path under &neuron_device.lock. Each open file's
 * f_mapping is zapped over the ring and doorbell cookies (types 1 and 2),
 * not the status page above them; files opened through different inodes
 * of /dev/nnqN are each on the list, so no mapping is missed.
 */
void neuron_mmap_zap_all(struct neuron_device *ndev)
{
	u64 first = neuron_mmap_cookie(NEURON_COOKIE_RING, 0, 0);
	u64 end = neuron_mmap_cookie(NEURON_COOKIE_STATUS, 0, 0);
	struct neuron_file *nfile;

	lockdep_assert_held(&ndev->lock);
	list_for_each_entry(nfile, &ndev->files, node)
		unmap_mapping_range(nfile->filp->f_mapping, first, end - first, 1);
}
