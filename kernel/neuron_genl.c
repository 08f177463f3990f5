// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "neuron"
 * (docs/decisions/0001-original-architecture.md#arch-driver "Generic
 * netlink family neuron (strict policies): get-device (do and dump), get-nq
 * (dump with counters), and a multicast group events";
 * include/uapi/linux/neuron.h NEURON_GENL_*; docs/hardware.md#intr-edge: the
 * error/overflow edge is what the kernel driver consumes and passes on).
 *
 *   NEURON_CMD_GET_DEVICE  do: NEURON_A_DEVICE required; dump: every bound
 *                          device. Device attributes, one NEURON_A_INTR_COUNTS
 *                          nest per core (NEURON_A_CORE, then one
 *                          NEURON_A_COUNT per tpb_notific_intr_0..8), the
 *                          throttle and fault edge counts.
 *   NEURON_CMD_GET_NQ      dump, optionally filtered by NEURON_A_DEVICE: one
 *                          message per live queue, HEAD/TAIL/phase and the
 *                          overflow/drop counters read from the hardware
 *                          (counted from the queue's creation).
 *   NEURON_CMD_EVENT       multicast on "events", one per interrupt edge,
 *                          from the interrupt threads (neuron_irq.c).
 *
 * Validation is strict (no GENL_DONT_VALIDATE_* flag, the family's
 * resv_start_op left 0): a request may carry only NEURON_A_DEVICE, a u32;
 * any other attribute, a wrong length or an unknown type is rejected by the
 * core with -EINVAL and an extended ack pointing at it. The operations use
 * plain struct genl_ops with a per-op policy, which both 6.1 and 6.12 take
 * (6.12 converts them to split ops); the one API difference, how a dump
 * finds its parsed attributes, is in neuron_compat.h.
 *
 * Permissions (docs/decisions/0005-tenancy.md). Nothing here carries a kernel
 * or physical address, a ring's contents or anything a process gave the
 * driver. GET_DEVICE (geometry and edge counters, like the world-readable
 * sysfs attributes of neuron_sysfs.c) is open to everyone. GET_NQ shows
 * every tenant's queues and "events" every tenant's edges, so both need
 * CAP_NET_ADMIN (GENL_ADMIN_PERM; the group's capability flag where the
 * kernel has it, neuron_compat.h). The family is not netns-aware (the
 * device is not a per-namespace resource), so only the initial network
 * namespace sees it.
 *
 * Devices are found through the instance table of neuron_main.c, one
 * reference at a time (neuron_device_get_next()), and checked with
 * neuron_enter() before registers are read, so a device removed during a
 * dump is skipped, never touched after remove().
 */
#include <linux/module.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_compat.h"

/* Index of NEURON_GENL_MCGRP_EVENTS in neuron_genl_mcgrps[]. */
#define NEURON_GENL_MCGRP_EVENTS_IDX	0

/* Dump cursor in netlink_callback.args[] */
#define NEURON_GENL_ARG_DEVICE	0	/* next device instance number */
#define NEURON_GENL_ARG_QUEUE	1	/* next core * 10 + queue of it */

static struct genl_family neuron_genl_family;

/* Requests may name a device and nothing else. */
static const struct nla_policy neuron_genl_policy[NEURON_A_DEVICE + 1] = {
	[NEURON_A_DEVICE] = { .type = NLA_U32 },
};

static int neuron_genl_put_u64(struct sk_buff *skb, int type, u64 val)
{
	return nla_put_u64_64bit(skb, type, val, NEURON_A_PAD);
}

/* One NEURON_A_INTR_COUNTS nest for @core. */
static int neuron_genl_put_intr_counts(struct sk_buff *skb,
				       struct neuron_device *ndev, u32 core)
{
	u64 counts[NEURON_NOTIFIC_INTR_BITS];
	struct nlattr *nest;
	unsigned int i;

	spin_lock_irq(&ndev->irq_lock);
	memcpy(counts, ndev->intr_count[core], sizeof(counts));
	spin_unlock_irq(&ndev->irq_lock);

	nest = nla_nest_start(skb, NEURON_A_INTR_COUNTS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NEURON_A_CORE, core))
		goto cancel;
	for (i = 0; i < NEURON_NOTIFIC_INTR_BITS; i++)
		if (neuron_genl_put_u64(skb, NEURON_A_COUNT, counts[i]))
			goto cancel;
	nla_nest_end(skb, nest);
	return 0;

cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/*
 * One NEURON_CMD_GET_DEVICE message; the caller checked the device is live.
 * Returns 0 or -EMSGSIZE (nothing left in @skb).
 */
static int neuron_genl_fill_device(struct sk_buff *skb,
				   struct neuron_device *ndev, u32 portid,
				   u32 seq, int flags)
{
	u64 throttle, faults;
	void *hdr;
	u32 c;

	hdr = genlmsg_put(skb, portid, seq, &neuron_genl_family, flags,
			  NEURON_CMD_GET_DEVICE);
	if (!hdr)
		return -EMSGSIZE;

	if (nla_put_u32(skb, NEURON_A_DEVICE, ndev->id) ||
	    nla_put_u16(skb, NEURON_A_PCI_VENDOR, ndev->pdev->vendor) ||
	    nla_put_u16(skb, NEURON_A_PCI_DEVICE, ndev->pdev->device) ||
	    nla_put_u32(skb, NEURON_A_NUM_CORES, ndev->num_cores) ||
	    nla_put_u32(skb, NEURON_A_GEN, ndev->gen) ||
	    neuron_genl_put_u64(skb, NEURON_A_MEM_SIZE, ndev->mem_size))
		goto cancel;
	for (c = 0; c < ndev->num_cores; c++)
		if (neuron_genl_put_intr_counts(skb, ndev, c))
			goto cancel;

	spin_lock_irq(&ndev->irq_lock);
	throttle = ndev->throttle_count;
	faults = ndev->fault_edges;
	spin_unlock_irq(&ndev->irq_lock);
	if (neuron_genl_put_u64(skb, NEURON_A_THROTTLE_COUNT, throttle) ||
	    neuron_genl_put_u64(skb, NEURON_A_FAULT_COUNT, faults))
		goto cancel;

	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * neuron_genl_get_device_doit() - NEURON_CMD_GET_DEVICE request
 * @skb: the request
 * @info: parsed request; NEURON_A_DEVICE (u32, N of /dev/nnqN) required
 *
 * Replies with one NEURON_CMD_GET_DEVICE message (see the top of this file).
 *
 * Return: 0; -EINVAL with the missing attribute in the extended ack when
 * NEURON_A_DEVICE is absent; -ENODEV with an extended ack naming it when no
 * such device is bound (or it is being removed); -ENOMEM; -EMSGSIZE.
 */
static int neuron_genl_get_device_doit(struct sk_buff *skb,
				       struct genl_info *info)
{
	struct neuron_device *ndev;
	struct nlattr *attr;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, NEURON_A_DEVICE)) {
		NL_SET_ERR_MSG(info->extack, "NEURON_A_DEVICE is required");
		return -EINVAL;
	}
	attr = info->attrs[NEURON_A_DEVICE];
	ndev = neuron_device_get_by_minor(nla_get_u32(attr));
	if (!ndev) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such neuron device");
		return -ENODEV;
	}

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = neuron_enter(ndev);
	if (ret) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "neuron device removed");
		goto out_free;
	}
	ret = neuron_genl_fill_device(msg, ndev, info->snd_portid,
				      info->snd_seq, 0);
	neuron_exit(ndev);
	if (ret)
		goto out_free;
	neuron_device_put(ndev);
	return genlmsg_reply(msg, info);

out_free:
	nlmsg_free(msg);
out_put:
	neuron_device_put(ndev);
	return ret;
}

/**
 * neuron_genl_get_device_dumpit() - NEURON_CMD_GET_DEVICE dump
 * @skb: buffer to fill
 * @cb: dump state; args[0] is the next device instance number
 *
 * One message per bound, live device, in instance-number order.
 *
 * Return: the length of @skb (more to come) or 0 (done).
 */
static int neuron_genl_get_device_dumpit(struct sk_buff *skb,
					 struct netlink_callback *cb)
{
	unsigned long id = cb->args[NEURON_GENL_ARG_DEVICE];
	struct neuron_device *ndev;
	int ret = 0;

	while ((ndev = neuron_device_get_next(&id))) {
		if (!neuron_enter(ndev)) {
			ret = neuron_genl_fill_device(skb, ndev,
						      NETLINK_CB(cb->skb).portid,
						      cb->nlh->nlmsg_seq,
						      NLM_F_MULTI);
			neuron_exit(ndev);
		}
		neuron_device_put(ndev);
		if (ret)
			break;	/* full: resume at this device */
		id++;
	}
	cb->args[NEURON_GENL_ARG_DEVICE] = id;
	return skb->len;
}

/*
 * One NEURON_CMD_GET_NQ message for a live queue. Called with the device
 * entered and &neuron_device.lock held; reads the queue descriptor.
 */
static int neuron_genl_fill_nq(struct sk_buff *skb, struct neuron_nq *nq,
			       u32 portid, u32 seq)
{
	struct neuron_device *ndev = nq->ndev;
	u32 c = nq->core, q = nq->queue;
	u32 head, tail, status, overflow, drops;
	u64 thresholds;
	void *hdr;

	lockdep_assert_held(&ndev->lock);
	head = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_HEAD));
	tail = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_TAIL));
	status = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_STATUS));
	neuron_nq_read_counts(nq, &overflow, &drops);
	spin_lock_irq(&ndev->irq_lock);
	thresholds = ndev->threshold_count[c][q];
	spin_unlock_irq(&ndev->irq_lock);

	hdr = genlmsg_put(skb, portid, seq, &neuron_genl_family, NLM_F_MULTI,
			  NEURON_CMD_GET_NQ);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NEURON_A_DEVICE, ndev->id) ||
	    nla_put_u32(skb, NEURON_A_CORE, c) ||
	    nla_put_u32(skb, NEURON_A_QUEUE, q) ||
	    nla_put_u32(skb, NEURON_A_HEAD, head) ||
	    nla_put_u32(skb, NEURON_A_TAIL, tail) ||
	    nla_put_u8(skb, NEURON_A_PHASE, status & NEURON_NQ_STATUS_PHASE) ||
	    nla_put_u32(skb, NEURON_A_SIZE, nq->size) ||
	    nla_put_u32(skb, NEURON_A_FLAGS, nq->flags) ||
	    neuron_genl_put_u64(skb, NEURON_A_OVERFLOW_COUNT, overflow) ||
	    neuron_genl_put_u64(skb, NEURON_A_DROP_COUNT, drops) ||
	    neuron_genl_put_u64(skb, NEURON_A_THRESHOLD_COUNT, thresholds)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * Dump the live queues of one device from flat index *@pos (core * 10 +
 * queue); on a full @skb leave *@pos at the queue that did not fit.
 */
static int neuron_genl_dump_nqs(struct sk_buff *skb,
				struct netlink_callback *cb,
				struct neuron_device *ndev, unsigned long *pos)
{
	unsigned long end;
	int ret = 0;

	if (neuron_enter(ndev))
		return 0;	/* removed meanwhile: nothing to list */
	mutex_lock(&ndev->lock);
	end = (unsigned long)ndev->num_cores * NEURON_NUM_SW_QUEUES;
	for (; *pos < end; (*pos)++) {
		struct neuron_nq *nq = ndev->nq[*pos / NEURON_NUM_SW_QUEUES]
					       [*pos % NEURON_NUM_SW_QUEUES];

		if (!nq)
			continue;
		ret = neuron_genl_fill_nq(skb, nq, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq);
		if (ret)
			break;
	}
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_genl_get_nq_dumpit() - NEURON_CMD_GET_NQ dump
 * @skb: buffer to fill
 * @cb: dump state; args[0] next device, args[1] next core * 10 + queue
 *
 * One message per live queue of every device, or of the device named by
 * NEURON_A_DEVICE: HEAD, TAIL and phase as the hardware has them, the
 * queue's size and NEURON_NQ_F_* flags, its overflow and drop counts since
 * it was made (as NEURON_IOC_NQ_INFO) and the threshold interrupts counted
 * for that queue index since probe.
 *
 * Return: the length of @skb (more to come), 0 (done), or -ENODEV with an
 * extended ack naming NEURON_A_DEVICE when it names no bound device.
 */
static int neuron_genl_get_nq_dumpit(struct sk_buff *skb,
				     struct netlink_callback *cb)
{
	struct nlattr *attr = neuron_genl_dump_attrs(cb)[NEURON_A_DEVICE];
	unsigned long id = cb->args[NEURON_GENL_ARG_DEVICE];
	unsigned long pos = cb->args[NEURON_GENL_ARG_QUEUE];
	struct neuron_device *ndev;
	int ret = 0;

	if (attr) {
		u32 want = nla_get_u32(attr);

		if (id > want)
			return 0;	/* its queues were all sent */
		ndev = neuron_device_get_by_minor(want);
		if (!ndev) {
			NL_SET_ERR_MSG_ATTR(cb->extack, attr,
					    "no such neuron device");
			return -ENODEV;
		}
		ret = neuron_genl_dump_nqs(skb, cb, ndev, &pos);
		neuron_device_put(ndev);
		cb->args[NEURON_GENL_ARG_DEVICE] = ret ? want : want + 1;
		cb->args[NEURON_GENL_ARG_QUEUE] = ret ? pos : 0;
		return skb->len;
	}

	while ((ndev = neuron_device_get_next(&id))) {
		ret = neuron_genl_dump_nqs(skb, cb, ndev, &pos);
		neuron_device_put(ndev);
		if (ret)
			break;	/* full: resume at this queue */
		id++;
		pos = 0;
	}
	cb->args[NEURON_GENL_ARG_DEVICE] = id;
	cb->args[NEURON_GENL_ARG_QUEUE] = pos;
	return skb->len;
}

static const struct genl_ops neuron_genl_ops[] = {
	{
		.cmd = NEURON_CMD_GET_DEVICE,
		.doit = neuron_genl_get_device_doit,
		.dumpit = neuron_genl_get_device_dumpit,
		.policy = neuron_genl_policy,
		.maxattr = NEURON_A_DEVICE,
	},
	{
		.cmd = NEURON_CMD_GET_NQ,
		.dumpit = neuron_genl_get_nq_dumpit,
		.policy = neuron_genl_policy,
		.maxattr = NEURON_A_DEVICE,
		/* every tenant's queues: docs/decisions/0005-tenancy.md */
		.flags = GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group neuron_genl_mcgrps[] = {
	[NEURON_GENL_MCGRP_EVENTS_IDX] = {
		.name = NEURON_GENL_MCGRP_EVENTS,
		/* every tenant's edges: docs/decisions/0005-tenancy.md */
		.flags = NEURON_GENL_MCAST_ADMIN,
	},
};

static struct genl_family neuron_genl_family __ro_after_init = {
	.name = NEURON_GENL_NAME,
	.version = NEURON_GENL_VERSION,
	.module = THIS_MODULE,
	.ops = neuron_genl_ops,
	.n_ops = ARRAY_SIZE(neuron_genl_ops),
	.mcgrps = neuron_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(neuron_genl_mcgrps),
};

/* Attribute space of one NEURON_CMD_EVENT message. */
static size_t neuron_genl_event_size(void)
{
	return 10 * nla_total_size(sizeof(u32)) +	/* device .. pc */
	       2 * nla_total_size_64bit(sizeof(u64));	/* count, timestamp */
}

/**
 * neuron_genl_event() - multicast one interrupt edge on group "events"
 * @ev: the edge (its @lost field is per file and not sent)
 *
 * Called from the interrupt threads (process context, may sleep) for each
 * handled edge; does nothing when nobody listens. A message that cannot be
 * allocated is not sent (the edge is still counted and queued to files).
 * Attributes: NEURON_A_DEVICE, _CORE, _EDGE, _CAUSE, _QUEUES, _WRBUF_FULL,
 * _WRBUF_DROP, _SUPPRESSED, _PC, _COUNT, _TIMESTAMP (UAPI
 * "NEURON_CMD_EVENT").
 */
void neuron_genl_event(const struct neuron_event *ev)
{
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&neuron_genl_family, &init_net,
				NEURON_GENL_MCGRP_EVENTS_IDX))
		return;
	skb = genlmsg_new(neuron_genl_event_size(), GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &neuron_genl_family, 0, NEURON_CMD_EVENT);
	if (!hdr)
		goto err;
	if (nla_put_u32(skb, NEURON_A_DEVICE, ev->device) ||
	    nla_put_u32(skb, NEURON_A_CORE, ev->core) ||
	    nla_put_u32(skb, NEURON_A_EDGE, ev->edge) ||
	    nla_put_u32(skb, NEURON_A_CAUSE, ev->cause) ||
	    nla_put_u32(skb, NEURON_A_QUEUES, ev->queues) ||
	    nla_put_u32(skb, NEURON_A_WRBUF_FULL, ev->wrbuf_full) ||
	    nla_put_u32(skb, NEURON_A_WRBUF_DROP, ev->wrbuf_drop) ||
	    nla_put_u32(skb, NEURON_A_SUPPRESSED, ev->suppressed) ||
	    nla_put_u32(skb, NEURON_A_PC, ev->pc) ||
	    neuron_genl_put_u64(skb, NEURON_A_COUNT, ev->count) ||
	    neuron_genl_put_u64(skb, NEURON_A_TIMESTAMP, ev->timestamp_ns))
		goto err;
	genlmsg_end(skb, hdr);
	/* -ESRCH when the last listener just left: nothing to do */
	genlmsg_multicast(&neuron_genl_family, skb, 0,
			  NEURON_GENL_MCGRP_EVENTS_IDX, GFP_KERNEL);
	return;
err:
	nlmsg_free(skb);
}

/**
 * neuron_genl_register() - register the "neuron" family at module load
 *
 * Return: 0 or the error of genl_register_family().
 */
int neuron_genl_register(void)
{
	return genl_register_family(&neuron_genl_family);
}

/**
 * neuron_genl_unregister() - unregister the family at module unload
 *
 * Called after every device was removed, so no interrupt thread sends an
 * event any more; listeners are dropped from the group, dumps in progress
 * are finished by the netlink core (the family pins the module meanwhile).
 */
void neuron_genl_unregister(void)
{
	genl_unregister_family(&neuron_genl_family);
}
