// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory (BAR4): the one allocator behind NEURON_IOC_MEM_ALLOC and
 * the device-memory rings, and the check that keeps every program inside
 * the memory its file allocated (docs/decisions/0005-tenancy.md,
 * docs/decisions/0001-original-architecture.md#arch-driver "device memory
 * layout").
 *
 *   [0, mem_limit)          tenants' allocations (NEURON_IOC_MEM_ALLOC)
 *   [mem_limit, prog_base)  device-memory rings (neuron_nq.c)
 *   [prog_base, mem_size)   the engines' program areas (neuron_engine.c)
 *
 * One gen_pool covers [0, prog_base) in NEURON_MEM_ALIGN units; each kind
 * of allocation searches only its own part. Pool addresses are offsets
 * plus NEURON_MEM_ALIGN, because gen_pool_alloc() returns 0 for failure
 * and offset 0 is a valid allocation (gen_pool's own atomics serialise
 * its callers). Each file keeps its allocations in an rbtree by offset (a
 * SUBMIT's check costs O(log m) per range, not a walk of every
 * allocation); SUBMIT refuses a program whose DGE_COPY reads or writes
 * anything outside them, so no tenant's program can touch another's
 * memory, a ring or a program area.
 *
 * Locking (docs/decisions/0005-tenancy.md "memory and running programs"): a
 * file's tree is changed only with its &neuron_file.mem_lock and then
 * &neuron_device.lock held, and read with either. MEM_ALLOC, MEM_FREE and
 * SUBMIT through a file take its mem_lock first, inside
 * neuron_enter_file(), so SUBMIT checks its own program against its own
 * tree without the device's lock, which it takes only to start the
 * engine; the file's other calls wait for it, no other tenant's do. The
 * tree stays as checked until the engine is started and recorded
 * (&neuron_device.eng_owner), after which MEM_FREE sees the program and
 * refuses. A detached program of another file's core is checked under
 * the device's lock, the only place its owner is known. Release and the
 * disable path free a tree under the device's lock alone: then no call
 * through the file is inside (the last reference is gone, or the fence
 * waited for every call), so nobody holds its mem_lock.
 */
#include <linux/genalloc.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/pid.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"

#define NEURON_MEM_BIAS		NEURON_MEM_ALIGN

/**
 * struct neuron_mem_block - one NEURON_IOC_MEM_ALLOC allocation of a file
 * @node:	in &neuron_file.mem_blocks, keyed by @off (blocks of one file
 *		never overlap); see the top of the file for its locks
 * @off:	BAR4 offset
 * @size:	bytes, a multiple of NEURON_MEM_ALIGN
 */
struct neuron_mem_block {
	struct rb_node node;
	u64 off;
	u64 size;
};

/*
 * A part of the pool, in BAR4 offsets: [lo, hi); @align: the offset's
 * alignment in bytes, 0 for NEURON_MEM_ALIGN (a ring's is PAGE_SIZE, so
 * its mapping shows nothing else on a kernel with pages above 4 KiB).
 */
struct neuron_mem_span {
	u64 lo;
	u64 hi;
	u64 align;
};

/*
 * gen_pool algorithm: first fit inside the span @data names. @start_addr
 * is the chunk's pool address (NEURON_MEM_BIAS: offset 0); returning
 * @size tells gen_pool that nothing fits.
 */
static unsigned long neuron_mem_algo_span(unsigned long *map,
					  unsigned long size,
					  unsigned long start, unsigned int nr,
					  void *data, struct gen_pool *pool,
					  unsigned long start_addr)
{
	const struct neuron_mem_span *span = data;
	int order = pool->min_alloc_order;
	unsigned long lo = span->lo >> order, hi = min(size, span->hi >> order);
	unsigned long mask = span->align ? (span->align >> order) - 1 : 0;
	unsigned long bit;

	bit = bitmap_find_next_zero_area(map, hi, max(start, lo), nr, mask);
	return bit + nr <= hi ? bit : size;
}

/**
 * neuron_mem_init() - create the device-memory allocator
 * @ndev: device, geometry (mem_size, prog_base) known
 *
 * Half of the memory below the program areas is for tenants
 * (&neuron_device.mem_limit), the rest for device-memory rings; one user
 * may hold half of the tenants' part, allocations and device rings
 * together (&neuron_device.mem_quota, neuron_quota.c).
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_mem_init(struct neuron_device *ndev)
{
	u64 end = round_down(ndev->prog_base, NEURON_MEM_ALIGN);
	int nid = dev_to_node(&ndev->pdev->dev);

	ndev->mem_limit = min(round_down(ndev->mem_size / 2, NEURON_MEM_ALIGN),
			      end);
	ndev->mem_quota = round_down(ndev->mem_limit / 2, NEURON_MEM_ALIGN);
	if (!end)
		return 0;
	ndev->mem_pool = gen_pool_create(ilog2(NEURON_MEM_ALIGN), nid);
	if (!ndev->mem_pool)
		return -ENOMEM;
	if (gen_pool_add(ndev->mem_pool, NEURON_MEM_BIAS, end, nid)) {
		gen_pool_destroy(ndev->mem_pool);
		ndev->mem_pool = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * neuron_mem_fini() - destroy the device-memory allocator
 * @ndev: device, from remove(): every ring and allocation was freed by
 *	the disable path
 */
void neuron_mem_fini(struct neuron_device *ndev)
{
	if (ndev->mem_pool)
		gen_pool_destroy(ndev->mem_pool);
	ndev->mem_pool = NULL;
}

static int neuron_mem_take(struct neuron_device *ndev, u64 size,
			   genpool_algo_t algo, void *data, u64 *off)
{
	unsigned long addr;

	if (!ndev->mem_pool)
		return -ENOMEM;
	addr = gen_pool_alloc_algo(ndev->mem_pool, size, algo, data);
	if (!addr)
		return -ENOMEM;
	*off = addr - NEURON_MEM_BIAS;
	return 0;
}

static void neuron_mem_give(struct neuron_device *ndev, u64 off, u64 size)
{
	gen_pool_free(ndev->mem_pool, off + NEURON_MEM_BIAS, size);
}

/**
 * neuron_mem_ring_alloc() - device memory for a ring
 * @ndev: device
 * @size: bytes, a multiple of PAGE_SIZE
 * @off: out: BAR4 offset, in [mem_limit, prog_base), PAGE_SIZE-aligned
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_mem_ring_alloc(struct neuron_device *ndev, u64 size, u64 *off)
{
	struct neuron_mem_span span = {
		.lo = ndev->mem_limit,
		.hi = round_down(ndev->prog_base, NEURON_MEM_ALIGN),
		.align = PAGE_SIZE,
	};

	return neuron_mem_take(ndev, size, neuron_mem_algo_span, &span, off);
}

/**
 * neuron_mem_ring_free() - give a ring's device memory back
 * @ndev: device
 * @off: what neuron_mem_ring_alloc() returned
 * @size: the size it was given
 */
void neuron_mem_ring_free(struct neuron_device *ndev, u64 off, u64 size)
{
	neuron_mem_give(ndev, off, size);
}

/*
 * The allocation of @nfile with the highest offset at or below @addr, or
 * NULL: the only one that can hold @addr, since a file's blocks never
 * overlap. O(log m) in the file's m allocations. The file's mem_lock or
 * the device's lock held.
 */
static struct neuron_mem_block *neuron_mem_floor(struct neuron_file *nfile,
						 u64 addr)
{
	struct rb_node *n = nfile->mem_blocks.rb_node;
	struct neuron_mem_block *best = NULL, *blk;

	while (n) {
		blk = rb_entry(n, struct neuron_mem_block, node);
		if (blk->off <= addr) {
			best = blk;
			n = n->rb_right;
		} else {
			n = n->rb_left;
		}
	}
	return best;
}

/* The caller's allocation starting at @off, or NULL. */
static struct neuron_mem_block *neuron_mem_find(struct neuron_file *nfile,
						u64 off)
{
	struct neuron_mem_block *blk = neuron_mem_floor(nfile, off);

	return blk && blk->off == off ? blk : NULL;
}

/* Whether an allocation of the caller holds [addr, addr + len). */
static bool neuron_mem_owned(struct neuron_file *nfile, u64 addr, u64 len)
{
	struct neuron_mem_block *blk = neuron_mem_floor(nfile, addr);

	return blk && addr + len <= blk->off + blk->size &&
	       addr + len > addr;
}

/* The file's mem_lock and the device's lock held. */
static void neuron_mem_insert(struct neuron_file *nfile,
			      struct neuron_mem_block *new)
{
	struct rb_node **link = &nfile->mem_blocks.rb_node, *parent = NULL;
	struct neuron_mem_block *blk;

	lockdep_assert_held(&nfile->mem_lock);
	lockdep_assert_held(&nfile->ndev->lock);
	while (*link) {
		parent = *link;
		blk = rb_entry(parent, struct neuron_mem_block, node);
		link = new->off < blk->off ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&new->node, parent, link);
	rb_insert_color(&new->node, &nfile->mem_blocks);
	nfile->mem_bytes += new->size;
}

/* The file's mem_lock and the device's lock held. */
static void neuron_mem_remove(struct neuron_file *nfile,
			      struct neuron_mem_block *blk)
{
	lockdep_assert_held(&nfile->mem_lock);
	lockdep_assert_held(&nfile->ndev->lock);
	rb_erase(&blk->node, &nfile->mem_blocks);
	nfile->mem_bytes -= blk->size;
	neuron_quota_uncharge(nfile->ndev, nfile->quota, blk->size);
	neuron_mem_give(nfile->ndev, blk->off, blk->size);
}

/*
 * Zeroes [@off, @off + @size) of device memory a chunk at a time, yielding
 * the CPU between chunks: a 4 GiB allocation is seconds of uncached writes,
 * which must not hold a CPU without a scheduling point (a soft lockup
 * under PREEMPT_NONE). Called with only the file's mem_lock held.
 */
#define NEURON_MEM_CLEAR_CHUNK	SZ_1M
static void neuron_mem_clear(struct neuron_device *ndev, u64 off, u64 size)
{
	u64 done, n;

	for (done = 0; done < size; done += n) {
		n = min_t(u64, size - done, NEURON_MEM_CLEAR_CHUNK);
		memset_io(ndev->mem + off + done, 0, n);
		cond_resched();
	}
}

/**
 * neuron_mem_ioctl_alloc() - NEURON_IOC_MEM_ALLOC
 * @nfile: the caller's file
 * @arg: in: @size (bytes, 1..mem_limit, rounded up to NEURON_MEM_ALIGN),
 *	@flags (NEURON_MEM_F_FIXED), @offset (FIXED: the wanted BAR4 offset,
 *	NEURON_MEM_ALIGN-aligned; else zero), reserved zero; out: @offset
 *
 * The allocation belongs to the file until NEURON_IOC_MEM_FREE or its
 * release (docs/decisions/0005-tenancy.md) and reads as zeros when it is handed
 * out, whoever held the bytes before. Its bookkeeping is charged to the
 * caller's memory cgroup. The range is found and zeroed under the file's
 * own lock; the device's lock is held only to link it into the file's
 * tree (O(log m)).
 *
 * The bytes are charged to the user the file was opened by: a user holds
 * at most sysfs mem_quota (bytes; default half of mem_alloc_limit) of its
 * allocations and device rings together, through however many files, so
 * no tenant can take all device memory (neuron_quota.c,
 * docs/decisions/0005-tenancy.md "device memory per user").
 *
 * Return: 0; -EINVAL (size, offset, flags or reserved); -ENOSPC (the
 * user's device memory would pass the per-user quota); -ENOMEM (no free
 * range, or no memory for the bookkeeping); -EBUSY (FIXED: the range is
 * partly allocated); -EIO (stale file or device offline); -ENODEV.
 */
int neuron_mem_ioctl_alloc(struct neuron_file *nfile,
			   struct neuron_mem_alloc *arg)
{
	static const char cmd[] = "MEM_ALLOC";
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_mem_span span = { .hi = ndev->mem_limit };
	struct genpool_data_fixed fixed = { .offset = arg->offset };
	bool is_fixed = arg->flags & NEURON_MEM_F_FIXED;
	struct neuron_mem_block *blk;
	u64 size;
	int ret;

	if (!arg->size || arg->size > ndev->mem_limit)
		return neuron_bad_field(ndev, cmd, "size");
	size = round_up(arg->size, NEURON_MEM_ALIGN);
	if (arg->flags & ~NEURON_MEM_F_ALL)
		return neuron_bad_field(ndev, cmd, "flags");
	if (is_fixed ? (!IS_ALIGNED(arg->offset, NEURON_MEM_ALIGN) ||
			arg->offset > ndev->mem_limit - size) : arg->offset)
		return neuron_bad_field(ndev, cmd, "offset");
	if (arg->reserved0 || arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	blk = kzalloc(sizeof(*blk), GFP_KERNEL_ACCOUNT);
	if (!blk)
		return -ENOMEM;
	ret = neuron_enter_file(nfile);
	if (ret)
		goto out_free;
	mutex_lock(&nfile->mem_lock);
	ret = neuron_quota_charge(ndev, nfile->quota, size);
	if (ret)
		goto out_unlock;
	if (is_fixed)
		ret = neuron_mem_take(ndev, size, gen_pool_fixed_alloc, &fixed,
				      &blk->off);
	else
		ret = neuron_mem_take(ndev, size, neuron_mem_algo_span, &span,
				      &blk->off);
	if (!ret) {
		/* nothing of the block's previous owner reaches this one */
		neuron_mem_clear(ndev, blk->off, size);
		blk->size = size;
		mutex_lock(&ndev->lock);
		neuron_mem_insert(nfile, blk);
		mutex_unlock(&ndev->lock);
		arg->offset = blk->off;
		blk = NULL;
	} else {
		neuron_quota_uncharge(ndev, nfile->quota, size);
		if (is_fixed)
			ret = -EBUSY;
	}
out_unlock:
	mutex_unlock(&nfile->mem_lock);
	neuron_exit(ndev);
out_free:
	kfree(blk);
	return ret;
}

/*
 * Whether a program that belongs to @nfile (its own, or a detached one it
 * holds) runs or waits on an engine now: it may name any of the file's
 * allocations, checked only when it was submitted. &neuron_device.lock held.
 */
static bool neuron_mem_program_busy(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	unsigned long cores = nfile->cores;
	unsigned int c, e;

	u32 state;

	for_each_set_bit(c, &cores, NEURON_MAX_CORES) {
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
			if (ndev->eng_owner[c][e] != nfile)
				continue;
			state = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_STATUS));
			if (neuron_engine_state_busy(state))
				return true;
		}
	}
	return false;
}

/**
 * neuron_mem_ioctl_free() - NEURON_IOC_MEM_FREE
 * @nfile: the caller's file
 * @arg: @offset, as NEURON_IOC_MEM_ALLOC returned it; @reserved zero
 *
 * Refused while a program of the file runs or waits on any engine: SUBMIT
 * checked its addresses against the allocations it had then, so a freed
 * block handed to another file would still be reachable from it
 * (docs/decisions/0005-tenancy.md "memory and running programs"). The caller
 * waits for its engines, or resets them, and frees again. The file's lock
 * is held from the lookup to the removal, so no SUBMIT through the file
 * checks a program against the block meanwhile; the device's lock only
 * for the engines' state and the removal.
 *
 * Return: 0; -EINVAL (reserved); -ENOENT (no allocation of this file
 * starts at @offset); -EBUSY (a program of this file is RUNNING or
 * WAITING); -EIO (stale file or device offline); -ENODEV.
 */
int neuron_mem_ioctl_free(struct neuron_file *nfile,
			  const struct neuron_mem_free *arg)
{
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_mem_block *blk;
	int ret;

	if (arg->reserved)
		return neuron_bad_field(ndev, "MEM_FREE", "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&nfile->mem_lock);
	blk = neuron_mem_find(nfile, arg->offset);
	if (!blk) {
		ret = -ENOENT;
		goto out_unlock;
	}
	mutex_lock(&ndev->lock);
	if (neuron_mem_program_busy(nfile)) {
		dev_dbg_ratelimited(&ndev->pdev->dev, "MEM_FREE by pid %d (%s): a program of the file still runs; refused\n",
				    task_tgid_nr(current), current->comm);
		blk = NULL;
		ret = -EBUSY;
	} else {
		neuron_mem_remove(nfile, blk);
	}
	mutex_unlock(&ndev->lock);
out_unlock:
	mutex_unlock(&nfile->mem_lock);
	neuron_exit(ndev);
	kfree(blk);
	return ret;
}

/**
 * neuron_mem_check_program() - refuse a program that leaves its memory
 * @nfile: the file the program belongs to: the submitting file, or for a
 *	detached program (NEURON_SUBMIT_F_DETACH) the core's owner, on whose
 *	behalf it runs (docs/decisions/0024-submit-detach.md)
 * @insns: the program, @count struct neuron_emu_insn (kernel copy; its
 *	fields are little-endian)
 * @count: instructions
 * @prog_off: BAR4 offset the program is loaded at (its engine's area)
 * @bad: out, on -EACCES: the first range outside them, for
 *	neuron_mem_report_bad()
 *
 * Every DGE_COPY's source and destination range, [addr, addr + length)
 * with a length of 0 taken as 1 byte, must lie inside one allocation of
 * @nfile (docs/decisions/0005-tenancy.md). A source may also lie inside the
 * program itself, [@prog_off, @prog_off + @count * 32): those are the
 * caller's own bytes, and the only way a program can bring constants
 * into device memory (device memory is not mapped to userspace). Gather
 * and scatter descriptors name the same ranges: the device keeps every
 * element of an indexed direction inside [addr, addr + length)
 * (docs/device-model.md, "DGE copy"); their index table,
 * [insn.reserved0, + 4 * (length >> element shift)), must lie in an
 * allocation or the program too (include/uapi/linux/neuron_isa.h,
 * docs/decisions/0018-dge-index-path.md), and must not overlap the destination
 * [dst, dst + length): a copy that writes its own table could steer its
 * later elements on a device that reads the table as it goes
 * (docs/decisions/0005-tenancy.md "index tables"). O(@count log m) in @nfile's
 * m allocations, nothing logged. Called with @nfile's &neuron_file.mem_lock
 * held (SUBMIT through @nfile: no other tenant waits meanwhile) or
 * &neuron_device.lock (a detached program of another file's core).
 *
 * Return: 0; -EACCES (a range outside @nfile's memory) or -EINVAL (an
 * index table overlapping its copy's destination), with @bad filled in.
 */
int neuron_mem_check_program(struct neuron_file *nfile,
			     const struct neuron_emu_insn *insns, u32 count,
			     u64 prog_off, struct neuron_mem_bad *bad)
{
	u64 prog_end = prog_off + (u64)count * NEURON_EMU_INSN_BYTES;
	u32 i;

	lockdep_assert(lockdep_is_held(&nfile->mem_lock) ||
		       lockdep_is_held(&nfile->ndev->lock));
	for (i = 0; i < count; i++) {
		const struct neuron_emu_dge_desc *d = &insns[i].operand.dge;
		u64 src = le32_to_cpu(d->src), dst = le32_to_cpu(d->dst);
		u32 length = le32_to_cpu(d->length);
		u64 len = max_t(u64, length, 1), tab = 0, tlen = 0;
		const char *what = NULL;
		u64 at = 0, alen = len;
		int err = -EACCES;

		if (insns[i].opcode != NEURON_OP_DGE_COPY)
			continue;
		if (d->indirect & NEURON_ISA_INDIRECT_MODE_MASK) {
			tab = le32_to_cpu(insns[i].reserved0);
			tlen = max_t(u64, (u64)length >>
				     ((insns[i].flags & NEURON_DGE_F_ELEM_MASK) >>
				      NEURON_DGE_F_ELEM_SHIFT), 1) *
			       NEURON_DGE_IDX_ENTRY_BYTES;
		}
		if (!neuron_mem_owned(nfile, src, len) &&
		    !(src >= prog_off && src + len <= prog_end)) {
			what = "source";
			at = src;
		} else if (!neuron_mem_owned(nfile, dst, len)) {
			what = "destination";
			at = dst;
		} else if (tlen && !neuron_mem_owned(nfile, tab, tlen) &&
			   !(tab >= prog_off && tab + tlen <= prog_end)) {
			what = "index table";
			at = tab;
			alen = tlen;
		} else if (tlen && tab < dst + len && dst < tab + tlen) {
			what = "index table, inside its destination,";
			at = tab;
			alen = tlen;
			err = -EINVAL;
		}
		if (what) {
			bad->insn = i;
			bad->what = what;
			bad->at = at;
			bad->len = alen;
			bad->err = err;
			return err;
		}
	}
	return 0;
}

/**
 * neuron_mem_report_bad() - log a program neuron_mem_check_program() refused
 * @nfile: the program's owner
 * @bad: what the check filled in
 *
 * One rate-limited line naming the caller, the instruction, the range and
 * the owner whose allocations it is not in.
 */
void neuron_mem_report_bad(struct neuron_file *nfile,
			   const struct neuron_mem_bad *bad)
{
	if (bad->err == -EINVAL) {
		dev_info_ratelimited(&nfile->ndev->pdev->dev,
				     "SUBMIT by pid %d (%s): instruction %u: DGE_COPY %s [%#llx, +%#llx), is refused: a copy may not write its own index table\n",
				     task_tgid_nr(current), current->comm,
				     bad->insn, bad->what, bad->at, bad->len);
		return;
	}
	dev_info_ratelimited(&nfile->ndev->pdev->dev,
			     "SUBMIT by pid %d (%s): instruction %u: DGE_COPY %s [%#llx, +%#llx) is not memory the program's owner (pid %d, %s) allocated\n",
			     task_tgid_nr(current), current->comm,
			     bad->insn, bad->what, bad->at, bad->len,
			     pid_nr(nfile->owner_pid), nfile->owner_comm);
}

/**
 * neuron_mem_release_file() - free every allocation of a closing file
 * @nfile: the file being released
 *
 * Called with &neuron_device.lock held, after the file's engines were
 * stopped, or once the disable path has fenced the device: nobody can
 * allocate again before its engines are stopped (neuron_lifecycle.c).
 * The file's mem_lock is not taken (it comes before the device's lock):
 * no call through the file is inside then, and only those take it.
 */
void neuron_mem_release_file(struct neuron_file *nfile)
{
	struct neuron_mem_block *blk, *tmp;

	rbtree_postorder_for_each_entry_safe(blk, tmp, &nfile->mem_blocks, node) {
		neuron_mem_give(nfile->ndev, blk->off, blk->size);
		kfree(blk);
	}
	nfile->mem_blocks = RB_ROOT;
	neuron_quota_uncharge(nfile->ndev, nfile->quota, nfile->mem_bytes);
	nfile->mem_bytes = 0;
}

/**
 * neuron_mem_forget_all() - free every file's allocations
 * @ndev: device, in the disable path with &neuron_device.lock held and the
 *	engines stopped; the files open now are stale
 */
void neuron_mem_forget_all(struct neuron_device *ndev)
{
	struct neuron_file *nfile;

	lockdep_assert_held(&ndev->lock);
	list_for_each_entry(nfile, &ndev->files, node)
		neuron_mem_release_file(nfile);
}
