// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory per user (docs/decisions/0005-tenancy.md "device memory per
 * user").
 *
 * Every byte of device memory a tenant holds is charged to one record per
 * (device, user): its MEM_ALLOC allocations and its device-memory rings.
 * The user is the euid of the credentials the file was opened with
 * (f_cred), like every other permission of the file. A second file of the
 * same user, or a file kept open by a mapping or a forked child, draws on
 * the same record, so no user holds more than sysfs mem_quota of a device
 * however many files it opens.
 *
 * A record lives while a file of its user is open on the device or a ring
 * charged to it exists (a queue outlives its file while its ring is
 * quarantined, neuron_nq.c): each holds a reference. The records are on
 * &neuron_device.quotas under &neuron_device.quota_lock, a spinlock taken
 * last, inside &neuron_device.lock and a file's mem_lock.
 */
#include <linux/cred.h>
#include <linux/slab.h>

#include "neuron.h"

/**
 * struct neuron_quota - device memory one user holds on one device
 * @node:	in &neuron_device.quotas
 * @uid:	the user
 * @bytes:	allocations and device rings charged now
 * @refs:	open files of the user, plus device rings charged to it
 */
struct neuron_quota {
	struct list_head node;
	kuid_t uid;
	u64 bytes;
	refcount_t refs;
};

static struct neuron_quota *neuron_quota_find(struct neuron_device *ndev,
					      kuid_t uid)
{
	struct neuron_quota *q;

	lockdep_assert_held(&ndev->quota_lock);
	list_for_each_entry(q, &ndev->quotas, node)
		if (uid_eq(q->uid, uid))
			return q;
	return NULL;
}

/**
 * neuron_quota_open() - attach a new file to its user's record
 * @nfile: the file being opened (@filp set)
 *
 * Return: 0, or -ENOMEM (the user's first file, and no memory for its
 * record).
 */
int neuron_quota_open(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	kuid_t uid = nfile->filp->f_cred->euid;
	struct neuron_quota *q, *new;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;
	spin_lock(&ndev->quota_lock);
	q = neuron_quota_find(ndev, uid);
	if (q) {
		refcount_inc(&q->refs);
	} else {
		q = new;
		new = NULL;
		q->uid = uid;
		refcount_set(&q->refs, 1);
		list_add(&q->node, &ndev->quotas);
	}
	spin_unlock(&ndev->quota_lock);
	kfree(new);
	nfile->quota = q;
	return 0;
}

/**
 * neuron_quota_put() - drop a reference on a user's record
 * @ndev: its device
 * @q: the record; freed with its last reference, when it charges nothing
 */
void neuron_quota_put(struct neuron_device *ndev, struct neuron_quota *q)
{
	bool last;

	spin_lock(&ndev->quota_lock);
	last = refcount_dec_and_test(&q->refs);
	if (last) {
		WARN_ON_ONCE(q->bytes);
		list_del(&q->node);
	}
	spin_unlock(&ndev->quota_lock);
	if (last)
		kfree(q);
}

/**
 * neuron_quota_get() - another reference on a user's record
 * @q: the record, referenced by the caller
 *
 * Return: @q.
 */
struct neuron_quota *neuron_quota_get(struct neuron_quota *q)
{
	refcount_inc(&q->refs);
	return q;
}

/**
 * neuron_quota_charge() - charge device memory to a user
 * @ndev: the device
 * @q: the user's record
 * @bytes: what the user is about to hold
 *
 * Return: 0, or -ENOSPC when the user's charges would pass sysfs
 * mem_quota (nothing is charged then; a rate-limited debug line names the
 * user, what it holds and the quota).
 */
int neuron_quota_charge(struct neuron_device *ndev, struct neuron_quota *q,
			u64 bytes)
{
	u64 quota = READ_ONCE(ndev->mem_quota), held;
	bool fits;

	spin_lock(&ndev->quota_lock);
	held = q->bytes;
	fits = bytes <= quota && held <= quota - bytes;
	if (fits)
		q->bytes += bytes;
	spin_unlock(&ndev->quota_lock);
	if (fits)
		return 0;
	dev_dbg_ratelimited(&ndev->pdev->dev, "uid %u (pid %d %s): %llu bytes of device memory held, %llu more would pass the quota of %llu per user\n",
			    from_kuid(&init_user_ns, q->uid),
			    task_tgid_nr(current), current->comm,
			    held, bytes, quota);
	return -ENOSPC;
}

/**
 * neuron_quota_uncharge() - give back what neuron_quota_charge() charged
 * @ndev: the device
 * @q: the user's record
 * @bytes: bytes the user no longer holds
 */
void neuron_quota_uncharge(struct neuron_device *ndev, struct neuron_quota *q,
			   u64 bytes)
{
	spin_lock(&ndev->quota_lock);
	if (!WARN_ON_ONCE(q->bytes < bytes))
		q->bytes -= bytes;
	else
		q->bytes = 0;
	spin_unlock(&ndev->quota_lock);
}

/**
 * neuron_quota_show() - sysfs mem_users: what each user holds
 * @ndev: the device
 * @buf: the sysfs page
 *
 * One line per user with a file open or a device ring: "uid <uid> bytes
 * <n>", the uid as seen from the initial user namespace.
 *
 * Return: bytes written to @buf.
 */
ssize_t neuron_quota_show(struct neuron_device *ndev, char *buf)
{
	struct neuron_quota *q;
	ssize_t len = 0;

	spin_lock(&ndev->quota_lock);
	list_for_each_entry(q, &ndev->quotas, node)
		len += sysfs_emit_at(buf, len, "uid %u bytes %llu\n",
				     from_kuid(&init_user_ns, q->uid), q->bytes);
	spin_unlock(&ndev->quota_lock);
	return len;
}
