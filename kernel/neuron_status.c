// SPDX-License-Identifier: GPL-2.0
/*
 * The status page of an open file (NEURON_CAP_STATUS_PAGE; struct
 * neuron_status_page in include/uapi/linux/neuron.h;
 * docs/decisions/0027-device-loss.md).
 *
 * Every open file has one zeroed page (PAGE_SIZE bytes, DEVICE_INFO
 * @page_size), allocated at open (charged to the
 * opener's memory cgroup) and freed at release. It is the file's, not the
 * device's: the disable path never frees or zaps it, and the VFS releases
 * a file only once every mapping of it is gone, so the page outlives every
 * mapping of it (neuron_mmap.c maps it read-only at fault time). Userspace
 * reads it instead of asking the kernel (poll(), an ioctl) whether the
 * file still works before it touches a ring or doorbell mapping.
 *
 * Writers: open makes the page LIVE; the first step of the disable path
 * (neuron_lifecycle.c, the fence), with &neuron_device.rwsem held for
 * writing and &neuron_device.lock held, turns the page of every open file
 * STALE (a reset) or GONE (a removal), before the disable path stops an
 * engine, disables a queue or zaps a mapping.
 *
 * Ordering, for a reader that loads @state with acquire semantics:
 * @cause and @generation are written first, then @state with
 * smp_store_release(), so a reader that sees the new state sees the rest;
 * neuron_status_end() then issues smp_mb(), so the new state is visible to
 * every CPU before the disable path goes on. The mappings are zapped
 * later (neuron_mmap_zap_all()), so a reader whose load follows the zap in
 * time finds the page not LIVE: only an access already past its check when
 * the disable path began can still fault.
 */
#include <linux/gfp.h>
#include <linux/mm.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"

/**
 * neuron_status_open() - give a new file its status page, LIVE
 * @nfile: the file being opened
 * @generation: &neuron_device.reset_gen now (read inside neuron_enter(),
 *	so no reset can fall between it and the file joining the list)
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_status_open(struct neuron_file *nfile, u32 generation)
{
	struct neuron_status_page *sp;

	/* one page whatever its size (DEVICE_INFO @page_size): 4 KiB at least */
	BUILD_BUG_ON(sizeof(*sp) > PAGE_SIZE);
	sp = (struct neuron_status_page *)get_zeroed_page(GFP_KERNEL_ACCOUNT);
	if (!sp)
		return -ENOMEM;
	sp->generation = generation;
	sp->state = NEURON_STATUS_LIVE;
	nfile->status = sp;
	return 0;
}

/**
 * neuron_status_release() - free a file's status page
 * @nfile: the file, already off &neuron_device.files (so no disable path
 *	writes the page any more) and no longer mapped (the VFS releases a
 *	file only once its last mapping is gone)
 */
void neuron_status_release(struct neuron_file *nfile)
{
	free_page((unsigned long)nfile->status);
	nfile->status = NULL;
}

/**
 * neuron_status_pfn() - the page frame of a file's status page
 * @nfile: the file; its page lives as long as the file
 *
 * Return: the PFN the fault handler inserts (neuron_mmap.c).
 */
unsigned long neuron_status_pfn(const struct neuron_file *nfile)
{
	return page_to_pfn(virt_to_page(nfile->status));
}

/**
 * neuron_status_end() - tell every open file that it no longer works
 * @ndev: device; &neuron_device.rwsem held for writing (no call is inside
 *	the driver) and &neuron_device.lock held (the list of open files)
 * @cause: enum neuron_reset_cause of the disable path that is starting
 *
 * A LIVE page becomes GONE for NEURON_RESET_REMOVE and STALE for any
 * other cause; a STALE page becomes GONE on a removal; a GONE page stays
 * as it is. @cause and @generation describe the change; see the top of
 * this file for the ordering.
 */
void neuron_status_end(struct neuron_device *ndev, enum neuron_reset_cause cause)
{
	u32 state = cause == NEURON_RESET_REMOVE ? NEURON_STATUS_GONE :
						   NEURON_STATUS_STALE;
	struct neuron_file *nfile;

	lockdep_assert_held_write(&ndev->rwsem);
	lockdep_assert_held(&ndev->lock);
	list_for_each_entry(nfile, &ndev->files, node) {
		struct neuron_status_page *sp = nfile->status;
		u32 now = READ_ONCE(sp->state);

		if (now == NEURON_STATUS_GONE ||
		    (now == NEURON_STATUS_STALE && state == NEURON_STATUS_STALE))
			continue;
		WRITE_ONCE(sp->cause, cause);
		WRITE_ONCE(sp->generation, ndev->reset_gen);
		/* pairs with the reader's acquire load: cause, generation first */
		smp_store_release(&sp->state, state);
	}
	/* visible everywhere before any engine stops or mapping goes */
	smp_mb();
}
