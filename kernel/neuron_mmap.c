// SPDX-License-Identifier: GPL-2.0
/*
 * mmap of rings and head doorbell pages (docs/decisions.md#arch-parts "data
 * flows one way", docs/decisions.md#arch-driver "mmap";
 * include/uapi/linux/neuron.h NEURON_IOC_NQ_INIT).
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
 * 8-bit page field holds the largest ring (1 MiB = 256 pages), so the file
 * offsets of two mappings never overlap and a split VMA still decodes.
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
 *
 * Backing. Host rings (dma_alloc_coherent()) are mapped at mmap() time with
 * dma_mmap_coherent(). Device rings (BAR4) and doorbells (BAR0) are
 * inserted page by page at fault time with vmf_insert_pfn() after checking,
 * under the device's locks, that the device and the queue are still live.
 * All are VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP.
 *
 * Teardown. Each VMA holds a reference on its queue (vm_ops open/close) and
 * rings count their VMAs, so NEURON_IOC_NQ_DESTROY can refuse (-EBUSY)
 * while a ring is mapped. Destroy zaps the queue's doorbell page instead.
 * remove() zaps every mapping of every open file with
 * unmap_mapping_range() on each file's f_mapping; faults after that get
 * SIGBUS. Faulting (rather than io_remap_pfn_range() at mmap time) is what
 * makes the zap final for BAR pages: an mmap() racing with remove() cannot
 * leave a PTE behind, since its VMA only gets pages through the fault path,
 * which sees the device dead. Host rings get their PTEs in ->mmap, before
 * the VMA is linked into the file's mapping, so an mmap() racing with
 * remove() could link a populated VMA after the zap and keep reading ring
 * memory instead of getting SIGBUS (robust_test removal.unbind_while_mapping
 * saw it). Each host-ring VMA made by neuron_mmap() is therefore also kept
 * on &neuron_device.vmas until it is closed, and remove() zaps those one by
 * one under their mm's mmap_lock (neuron_mmap_zap_racing()), which waits
 * for an mmap() still linking its VMA. VMAs that fork(), mremap() or a
 * split make are linked before they get PTEs and need no tracking. The
 * ring memory itself lives until the last VMA goes (its queue reference).
 */
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

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

static bool neuron_vma_is_ring(struct vm_area_struct *vma)
{
	return neuron_cookie_type(vma->vm_pgoff) == NEURON_COOKIE_RING;
}

/**
 * struct neuron_vma - a host-ring VMA made by neuron_mmap(), for remove()
 * @node:	in &neuron_device.vmas, under &neuron_device.vma_lock
 * @vma:	the VMA; valid while on the list (neuron_vm_close() takes it
 *		off before the VMA is freed)
 */
struct neuron_vma {
	struct list_head node;
	struct vm_area_struct *vma;
};

/* Take @vma off &neuron_device.vmas if neuron_mmap() put it there. */
static void neuron_vma_untrack(struct neuron_device *ndev,
			       struct vm_area_struct *vma)
{
	struct neuron_vma *nv, *found = NULL;

	mutex_lock(&ndev->vma_lock);
	list_for_each_entry(nv, &ndev->vmas, node) {
		if (nv->vma == vma) {
			list_del(&nv->node);
			found = nv;
			break;
		}
	}
	mutex_unlock(&ndev->vma_lock);
	kfree(found);
}

static void neuron_vm_open(struct vm_area_struct *vma)
{
	struct neuron_nq *nq = vma->vm_private_data;

	neuron_nq_get(nq);
	if (neuron_vma_is_ring(vma))
		atomic_inc(&nq->ring_maps);
}

static void neuron_vm_close(struct vm_area_struct *vma)
{
	struct neuron_nq *nq = vma->vm_private_data;

	if (neuron_vma_is_ring(vma)) {
		if (!(nq->flags & NEURON_NQ_F_DEVICE_MEM))
			neuron_vma_untrack(nq->ndev, vma);
		atomic_dec(&nq->ring_maps);
	}
	neuron_nq_put(nq);
}

/*
 * Insert the one page of a BAR-backed mapping that faulted. Host rings were
 * populated at mmap() time; a fault there means they were zapped.
 */
static vm_fault_t neuron_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct neuron_nq *nq = vma->vm_private_data;
	struct neuron_device *ndev = nq->ndev;
	unsigned long page = vmf->pgoff & NEURON_COOKIE_PAGE_MASK;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long pfn;

	if (neuron_enter(ndev))
		return VM_FAULT_SIGBUS;
	mutex_lock(&ndev->lock);
	if (!nq->live)
		goto out;

	if (neuron_vma_is_ring(vma)) {
		if (!(nq->flags & NEURON_NQ_F_DEVICE_MEM) ||
		    page >= nq->alloc_size >> PAGE_SHIFT)
			goto out;
		pfn = PHYS_PFN(ndev->mem_phys + nq->mem_off) + page;
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

/* Map a host ring now; restore the cookie offset dma_mmap_coherent() hid. */
static int neuron_mmap_host_ring(struct neuron_nq *nq,
				 struct vm_area_struct *vma)
{
	unsigned long pgoff = vma->vm_pgoff;
	int ret;

	/* dma_mmap_coherent() takes vm_pgoff as an offset into the buffer */
	vma->vm_pgoff = 0;
	ret = dma_mmap_coherent(&nq->ndev->pdev->dev, vma, nq->cpu_addr,
				nq->dma_addr, nq->alloc_size);
	vma->vm_pgoff = pgoff;
	return ret;
}

/**
 * neuron_mmap() - map a queue's ring or head doorbell page
 * @filp: the caller's file, which must own the queue
 * @vma: the new mapping; vm_pgoff holds a cookie from NEURON_IOC_NQ_INIT
 *
 * See the top of this file for the cookie encoding and the rules.
 * docs/decisions.md#arch-driver "mmap: rings read-only ..., the head doorbell
 * page write-only in effect. Offsets are opaque cookies from ioctls, checked
 * against the caller's file."
 *
 * Return: 0; -EINVAL (unknown cookie, a queue of another file, wrong
 * length, not MAP_SHARED); -EACCES (PROT_WRITE on a ring, PROT_EXEC);
 * -ENODEV (device removed); or the error of dma_mmap_coherent().
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
	struct neuron_vma *nv = NULL;
	struct neuron_nq *nq;
	unsigned long want;
	int ret;

	if ((type != NEURON_COOKIE_RING && type != NEURON_COOKIE_DOORBELL) ||
	    (pgoff & NEURON_COOKIE_PAGE_MASK))
		return neuron_bad_field(ndev, "mmap", "offset");
	if (!(vma->vm_flags & VM_SHARED))
		return neuron_bad_field(ndev, "mmap", "flags (not MAP_SHARED)");
	if (vma->vm_flags & VM_EXEC)
		return -EACCES;
	if (type == NEURON_COOKIE_RING && (vma->vm_flags & VM_WRITE))
		return -EACCES;
	if (type == NEURON_COOKIE_RING) {
		/* a host ring's VMA is tracked for remove(), see the top */
		nv = kzalloc(sizeof(*nv), GFP_KERNEL);
		if (!nv)
			return -ENOMEM;
		nv->vma = vma;
	}

	ret = neuron_enter(ndev);
	if (ret)
		goto out_free;
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
	vma->vm_private_data = nq;

	if (type == NEURON_COOKIE_RING &&
	    !(nq->flags & NEURON_NQ_F_DEVICE_MEM)) {
		ret = neuron_mmap_host_ring(nq, vma);
		if (ret)
			goto out;
		/* before neuron_exit(): remove() sees it once it is dead */
		mutex_lock(&ndev->vma_lock);
		list_add_tail(&nv->node, &ndev->vmas);
		mutex_unlock(&ndev->vma_lock);
		nv = NULL;
	} else {
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	}
	/* as vm_ops->open would; ->close will balance it */
	neuron_vm_open(vma);
out:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
out_free:
	kfree(nv);
	return ret;
}

/**
 * neuron_mmap_zap_doorbell() - unmap a destroyed queue's doorbell page
 * @nfile: the file that owned the queue
 * @core: core index
 * @queue: queue index
 *
 * Called under &neuron_device.lock after the queue was marked not live, so
 * a new fault cannot map it again (it gets SIGBUS).
 */
void neuron_mmap_zap_doorbell(struct neuron_file *nfile, u32 core, u32 queue)
{
	lockdep_assert_held(&nfile->ndev->lock);
	unmap_mapping_range(nfile->filp->f_mapping,
			    neuron_mmap_cookie(NEURON_COOKIE_DOORBELL, core, queue),
			    NEURON_DOORBELL_SIZE, 1);
}

/**
 * neuron_mmap_zap_all() - unmap every ring and doorbell of the device
 * @ndev: device, already marked dead
 *
 * Called by remove() under &neuron_device.lock. Each open file's
 * f_mapping is zapped; files opened through different inodes of
 * /dev/neuronN are each on the list, so no mapping is missed.
 */
void neuron_mmap_zap_all(struct neuron_device *ndev)
{
	struct neuron_file *nfile;

	lockdep_assert_held(&ndev->lock);
	list_for_each_entry(nfile, &ndev->files, node)
		unmap_mapping_range(nfile->filp->f_mapping, 0, 0, 1);
}

/*
 * The mm of the first tracked VMA, referenced, or NULL when none is left.
 * VMAs of an mm that is exiting are dropped from the list: nobody can read
 * them any more, and their ->close finds nothing to take off.
 */
static struct mm_struct *neuron_mmap_next_mm(struct neuron_device *ndev)
{
	struct neuron_vma *nv, *tmp;
	struct mm_struct *mm = NULL;

	mutex_lock(&ndev->vma_lock);
	list_for_each_entry_safe(nv, tmp, &ndev->vmas, node) {
		if (mmget_not_zero(nv->vma->vm_mm)) {
			mm = nv->vma->vm_mm;
			break;
		}
		list_del(&nv->node);
		kfree(nv);
	}
	mutex_unlock(&ndev->vma_lock);
	return mm;
}

/**
 * neuron_mmap_zap_racing() - zap the host-ring VMAs made by mmap()
 * @ndev: device, already marked dead, mappings zapped by
 *	neuron_mmap_zap_all()
 *
 * Called by remove() with none of the device's locks held. One mm at a
 * time (the lock order puts &neuron_device.vma_lock inside mmap_lock):
 * taking its mmap_lock waits for an mmap() that was still linking its VMA
 * when the device died; then every tracked VMA of that mm loses its PTEs,
 * and a later access faults into neuron_vm_fault(), which gives SIGBUS.
 * The list is empty afterwards (no new host-ring mmap() succeeds once the
 * device is dead).
 */
void neuron_mmap_zap_racing(struct neuron_device *ndev)
{
	struct neuron_vma *nv, *tmp;
	struct mm_struct *mm;

	while ((mm = neuron_mmap_next_mm(ndev))) {
		mmap_read_lock(mm);
		mutex_lock(&ndev->vma_lock);
		list_for_each_entry_safe(nv, tmp, &ndev->vmas, node) {
			if (nv->vma->vm_mm != mm)
				continue;
			zap_vma_ptes(nv->vma, nv->vma->vm_start,
				     nv->vma->vm_end - nv->vma->vm_start);
			list_del(&nv->node);
			kfree(nv);
		}
		mutex_unlock(&ndev->vma_lock);
		mmap_read_unlock(mm);
		mmput(mm);
	}
}
