// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt-edge events for userspace: the per-file event queue behind
 * read() and poll() of /dev/nnqN, and the eventfds bound to queues
 * (docs/hardware.md#host-paths, #completion, #intr-edge;
 * docs/decisions/0001-original-architecture.md#arch-driver "MSI-X: handlers ...
 * wake poll()ers, signal bound eventfds"; include/uapi/linux/neuron.h "Events",
 * NEURON_IOC_NQ_EVENTFD).
 *
 * Every edge the interrupt threads handle (neuron_irq.c), every reset
 * the disable path reports (neuron_lifecycle.c), and every program the
 * driver stops while it runs (neuron_events_engines_stopped(), called by
 * the engine and ownership code) becomes one struct neuron_event, handed
 * to neuron_events_broadcast(), which
 *  - appends it to the event queue of the files that see it: a ring of
 *    NEURON_EVENT_QUEUE_LEN events. A NOTIFIC, ENGINE_STOPPED, THROTTLE,
 *    FAULT or HANG edge goes to the owner of its core and to the watchers
 *    (files opened with CAP_SYS_ADMIN); a RESET or PCI_ERROR edge to every
 *    subscribed file (docs/decisions/0005-tenancy.md). So the
 *    per-edge cost of the hot NOTIFIC path is one copy plus one per
 *    watcher, whatever other tenants open; sysfs event_fanout counts edges
 *    and copies. A full ring keeps its oldest events and counts the new one
 *    as lost; the next event queued carries the count in @lost ("events
 *    this file dropped just before this one");
 *  - for a NOTIFIC edge, signals (adds 1 to) the eventfd bound to each queue
 *    whose THRESHOLD_STATUS bit the edge carried, so a reaper thread can
 *    sleep on the eventfd instead of spinning on the ring
 *    (docs/hardware.md#completion);
 *  - wakes &neuron_device.waitq (read() and poll());
 *  - then multicasts it on generic netlink (neuron_genl.c).
 *
 * All of it runs under &neuron_device.ev_lock, a spinlock: the interrupt
 * thread holds no other lock, and eventfd_signal() may be called with a
 * spinlock held. Bound eventfds hold a context reference (eventfd_ctx_fdget)
 * that is dropped when the binding is replaced or removed, when the queue is
 * torn down (destroy, release of the owning file, remove()).
 */
#include <linux/capability.h>
#include <linux/eventfd.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_compat.h"
#include "neuron_trace.h"

/* Largest event size a reader may ask for (UAPI NEURON_IOC_EVENT_SIZE). */
#define NEURON_EVENT_SIZE_MAX	4096

/* The ring indices are free-running; the length must be a power of two. */
#define NEURON_EV_MASK	(NEURON_EVENT_QUEUE_LEN - 1)

/**
 * neuron_events_open() - prepare a new file for events
 * @nfile: the file being opened; @ndev and @filp set
 *
 * A file of /dev/nnqN opened with CAP_SYS_ADMIN watches every edge and is
 * subscribed at once (never one of a core node:
 * docs/decisions/0017-core-nodes.md);
 * any other file is subscribed by neuron_events_subscribe() when it
 * first acquires a core or calls read() or poll()
 * (docs/decisions/0005-tenancy.md).
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_events_open(struct neuron_file *nfile)
{
	BUILD_BUG_ON(!is_power_of_2(NEURON_EVENT_QUEUE_LEN));
	BUILD_BUG_ON(offsetof(struct neuron_event, size) !=
		     NEURON_EVENT_SIZE_VER0);
	mutex_init(&nfile->ev_read_lock);
	nfile->ev_size = NEURON_EVENT_SIZE_VER0;
	INIT_LIST_HEAD(&nfile->ev_node);
	/* a core node's file sees its own core's edges only, even as root */
	nfile->ev_watch = !nfile->core_node &&
			  file_ns_capable(nfile->filp, &init_user_ns,
					  CAP_SYS_ADMIN);
	return nfile->ev_watch ? neuron_events_subscribe(nfile) : 0;
}

/**
 * neuron_events_subscribe() - give a file its event queue, once
 * @nfile: the file
 *
 * Allocates the queue, charged to the caller's memory cgroup, and adds the
 * file to the device's watchers (CAP_SYS_ADMIN at open) or subscribers.
 * Edges handled from then on are queued for it. Idempotent. May be called
 * with &neuron_device.lock held.
 *
 * Return: 0 or -ENOMEM.
 */
int neuron_events_subscribe(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_event *buf;

	if (READ_ONCE(nfile->ev_buf))
		return 0;
	buf = kvcalloc(NEURON_EVENT_QUEUE_LEN, sizeof(*buf),
		       GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!buf)
		return -ENOMEM;
	spin_lock(&ndev->ev_lock);
	if (!nfile->ev_buf) {
		nfile->ev_buf = buf;
		list_add_tail(&nfile->ev_node, nfile->ev_watch ?
			      &ndev->ev_watchers : &ndev->ev_files);
		buf = NULL;
	}
	spin_unlock(&ndev->ev_lock);
	kvfree(buf);
	return 0;
}

/**
 * neuron_events_set_owner() - route a core's per-core edges to one file
 * @ndev: device
 * @core: core index
 * @nfile: the core's new owner, subscribed; NULL when the core is freed
 */
void neuron_events_set_owner(struct neuron_device *ndev, u32 core,
			     struct neuron_file *nfile)
{
	spin_lock(&ndev->ev_lock);
	ndev->ev_owner[core] = nfile;
	spin_unlock(&ndev->ev_lock);
}

/**
 * neuron_events_release() - unsubscribe a closing file, free its queue
 * @nfile: the file; its cores were freed already
 *
 * After this no interrupt thread touches the file's queue (the thread
 * walks the subscribers under &neuron_device.ev_lock).
 */
void neuron_events_release(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;

	spin_lock(&ndev->ev_lock);
	list_del(&nfile->ev_node);
	spin_unlock(&ndev->ev_lock);
	mutex_destroy(&nfile->ev_read_lock);
	kvfree(nfile->ev_buf);
	nfile->ev_buf = NULL;
}

/* Queue @ev for one file; called with &neuron_device.ev_lock held. */
static void neuron_events_push(struct neuron_file *nfile,
			       const struct neuron_event *ev)
{
	struct neuron_event *slot;

	if (nfile->ev_tail - nfile->ev_head >= NEURON_EVENT_QUEUE_LEN) {
		/* full: keep the oldest, count this one (UAPI "Events") */
		if (nfile->ev_lost < U32_MAX)
			nfile->ev_lost++;
		return;
	}
	nfile->ndev->ev_copies++;
	slot = &nfile->ev_buf[nfile->ev_tail & NEURON_EV_MASK];
	*slot = *ev;
	slot->lost = nfile->ev_lost;
	nfile->ev_lost = 0;
	nfile->ev_tail++;
}

/*
 * An edge of one core, for its owner and the watchers only: a tenant's
 * THROTTLE or faulting ring reaches no other tenant
 * (docs/decisions/0005-tenancy.md, docs/decisions/0008-event-ratelimit.md). One
 * with @core out of
 * range (a FAULT the device named no core for) reaches the watchers only.
 */
static bool neuron_events_per_core(const struct neuron_event *ev)
{
	return ev->edge == NEURON_EDGE_NOTIFIC ||
	       ev->edge == NEURON_EDGE_ENGINE_STOPPED ||
	       ev->edge == NEURON_EDGE_THROTTLE ||
	       ev->edge == NEURON_EDGE_FAULT ||
	       ev->edge == NEURON_EDGE_HANG;
}

/*
 * Hand one edge to files and eventfds, with no spinlock held: queues @ev
 * for the files that see it, signals the eventfds bound to the queues in
 * @ev->queues (NOTIFIC edges: THRESHOLD_STATUS bits), and wakes read() and
 * poll() (docs/hardware.md#completion, #intr-edge;
 * docs/decisions/0001-original-architecture.md#arch-driver). Never sleeps.
 */
static void neuron_events_deliver(struct neuron_device *ndev,
				  const struct neuron_event *ev)
{
	unsigned long queues = ev->queues;
	struct neuron_file *nfile;
	unsigned int q;

	spin_lock(&ndev->ev_lock);
	ndev->ev_edges++;
	list_for_each_entry(nfile, &ndev->ev_watchers, ev_node)
		neuron_events_push(nfile, ev);
	if (!neuron_events_per_core(ev)) {
		list_for_each_entry(nfile, &ndev->ev_files, ev_node)
			neuron_events_push(nfile, ev);
	} else if (ev->core < ndev->num_cores) {
		nfile = ndev->ev_owner[ev->core];
		if (nfile && !nfile->ev_watch)
			neuron_events_push(nfile, ev);
		/* only NOTIFIC's bits are queues */
		if (ev->edge != NEURON_EDGE_NOTIFIC)
			queues = 0;
		for_each_set_bit(q, &queues, NEURON_NUM_SW_QUEUES) {
			struct eventfd_ctx *ctx = ndev->nq_efd[ev->core][q];

			if (!ctx)
				continue;
			neuron_eventfd_signal(ctx);
			trace_neuron_threshold_wake(ndev->id, ev->core, q);
		}
	}
	spin_unlock(&ndev->ev_lock);
	wake_up_all(&ndev->waitq);
}

/**
 * neuron_events_broadcast() - report one edge to every listener
 * @ndev: device
 * @ev: the edge, filled in except @timestamp_ns, @device and @lost
 *
 * Stamps @ev with CLOCK_MONOTONIC and the instance number, queues it for
 * every open file, signals the eventfds bound to the queues in @ev->queues
 * (NOTIFIC edges), wakes read() and poll(), then multicasts it on generic
 * netlink. Called by the interrupt threads (neuron_irq.c) once per handled
 * edge and by the disable path (neuron_lifecycle.c) once per reset, with no
 * lock held, and by neuron_events_engines_stopped() with
 * &neuron_device.lock held; never with a spinlock held: it may sleep
 * (netlink allocation).
 */
void neuron_events_broadcast(struct neuron_device *ndev,
			     struct neuron_event *ev)
{
	ev->timestamp_ns = ktime_get_ns();
	ev->device = ndev->id;
	ev->size = sizeof(*ev);
	neuron_events_deliver(ndev, ev);
	neuron_genl_event(ev);
}

/**
 * neuron_events_engines_stopped() - count and report programs the driver stopped
 * @ndev: device, live; &neuron_device.lock held (the caller stopped the
 *	engines under it, so the stop and its report cannot be separated)
 * @core: core index, < num_cores; its owner, still routed to by
 *	neuron_events_set_owner(), gets the event
 * @engines: bit per engine (enum neuron_engine) that was RUNNING or WAITING
 *	when the driver reset it; 0 reports nothing
 * @cause: enum neuron_stop_cause
 *
 * Adds one to &neuron_device.programs_stopped of each engine (sysfs
 * programs_stopped, ENGINE_STATUS @programs_stopped) and broadcasts one
 * NEURON_EDGE_ENGINE_STOPPED event: @queues the engines, @count the
 * core's programs stopped since probe, these included. It goes where a
 * NOTIFIC edge of the core goes (the core's owner, the watchers, netlink):
 * a program is never stopped silently (docs/decisions/0024-submit-detach.md).
 * May sleep (netlink allocation).
 */
void neuron_events_engines_stopped(struct neuron_device *ndev, u32 core,
				   u32 engines, u32 cause)
{
	struct neuron_event ev = {
		.edge = NEURON_EDGE_ENGINE_STOPPED,
		.core = core,
		.cause = cause,
		.queues = engines,
	};
	u32 e;

	lockdep_assert_held(&ndev->lock);
	if (!engines)
		return;
	for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		if (engines & BIT(e))
			ndev->programs_stopped[core][e]++;
		ev.count += ndev->programs_stopped[core][e];
	}
	neuron_events_broadcast(ndev, &ev);
}

/* Whether the file has an event to read. */
static bool neuron_events_pending(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	bool ret;

	spin_lock(&ndev->ev_lock);
	ret = nfile->ev_tail != nfile->ev_head;
	spin_unlock(&ndev->ev_lock);
	return ret;
}

/*
 * Copy the oldest event out, leaving it queued; false if there is none.
 * Only readers (serialised by ev_read_lock) move ev_head, so the event
 * stays the oldest until neuron_events_consume().
 */
static bool neuron_events_peek(struct neuron_file *nfile,
			       struct neuron_event *ev)
{
	struct neuron_device *ndev = nfile->ndev;
	bool ret;

	spin_lock(&ndev->ev_lock);
	ret = nfile->ev_tail != nfile->ev_head;
	if (ret)
		*ev = nfile->ev_buf[nfile->ev_head & NEURON_EV_MASK];
	spin_unlock(&ndev->ev_lock);
	return ret;
}

static void neuron_events_consume(struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;

	spin_lock(&ndev->ev_lock);
	nfile->ev_head++;
	spin_unlock(&ndev->ev_lock);
}

/* remove() ran; @dead is read without the rwsem, as a wake-up condition. */
static bool neuron_events_dead(struct neuron_device *ndev)
{
	return READ_ONCE(ndev->dead);
}

/**
 * neuron_events_read() - read() of /dev/nnqN: whole struct neuron_event
 * @filp: the open file
 * @buf: user buffer
 * @len: its size in bytes; at least sizeof(struct neuron_event)
 * @ppos: unused (the file is not seekable)
 *
 * Returns as many whole events as fit in @len, oldest first, and at least
 * one: it blocks until one is queued unless the file is O_NONBLOCK (UAPI
 * "Events"). Events already queued are still returned after remove(); then
 * the call fails with -ENODEV. No lock but the file's ev_read_lock is held
 * across the copy to user memory.
 *
 * The first read() subscribes the file (neuron_events_subscribe()).
 *
 * Return: bytes read (a multiple of sizeof(struct neuron_event)); -EBADF
 * (file opened read-only); -EINVAL (@len smaller than one event); -ENOMEM
 * (no event queue); -EAGAIN (O_NONBLOCK and nothing queued, or
 * another read() of the file in progress); -ERESTARTSYS (a signal while
 * waiting); -EFAULT (@buf unwritable and nothing copied); -ENODEV (device
 * removed and nothing queued).
 */
ssize_t neuron_events_read(struct file *filp, char __user *buf, size_t len,
			   loff_t *ppos)
{
	struct neuron_file *nfile = filp->private_data;
	struct neuron_device *ndev = nfile->ndev;
	struct neuron_event ev;
	size_t done = 0, rec, fill;
	ssize_t ret;

	if (!(filp->f_mode & FMODE_WRITE))
		return -EBADF;
	ret = neuron_events_subscribe(nfile);
	if (ret)
		return ret;
	if (filp->f_flags & O_NONBLOCK) {
		if (!mutex_trylock(&nfile->ev_read_lock))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&nfile->ev_read_lock)) {
		return -ERESTARTSYS;
	}
	/* the record size this reader asked for (NEURON_IOC_EVENT_SIZE) */
	rec = nfile->ev_size;
	fill = min(rec, sizeof(ev));
	if (len < rec) {
		ret = -EINVAL;
		goto out;
	}

	while (len - done >= rec) {
		if (!neuron_events_peek(nfile, &ev)) {
			if (done)
				break;
			if (neuron_events_dead(ndev)) {
				ret = -ENODEV;
				goto out;
			}
			if (filp->f_flags & O_NONBLOCK) {
				ret = -EAGAIN;
				goto out;
			}
			ret = wait_event_interruptible(ndev->waitq,
						       neuron_events_pending(nfile) ||
						       neuron_events_dead(ndev));
			if (ret)
				goto out;
			continue;
		}
		ev.size = fill;	/* less for a reader of an older layout */
		if (copy_to_user(buf + done, &ev, fill) ||
		    clear_user(buf + done + fill, rec - fill)) {
			/* the event stays queued for the next read() */
			if (!done) {
				ret = -EFAULT;
				goto out;
			}
			break;
		}
		neuron_events_consume(nfile);
		done += rec;
	}
	ret = done;
out:
	mutex_unlock(&nfile->ev_read_lock);
	return ret;
}

/**
 * neuron_events_poll() - poll() of /dev/nnqN
 * @filp: the open file
 * @wait: poll table
 *
 * The first poll() subscribes the file (neuron_events_subscribe()).
 *
 * Return: EPOLLIN | EPOLLRDNORM when an event is queued (UAPI "Events");
 * EPOLLHUP | EPOLLERR once the device was removed; EPOLLERR for a file
 * opened read-only or when the event queue cannot be allocated.
 */
__poll_t neuron_events_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct neuron_file *nfile = filp->private_data;
	struct neuron_device *ndev = nfile->ndev;
	__poll_t mask = 0;

	if (!(filp->f_mode & FMODE_WRITE) || neuron_events_subscribe(nfile))
		return EPOLLERR;
	poll_wait(filp, &ndev->waitq, wait);
	if (neuron_events_pending(nfile))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (neuron_events_dead(ndev))
		mask |= EPOLLHUP | EPOLLERR;
	return mask;
}

/*
 * Replace the eventfd bound to (core, queue) with @ctx (NULL: unbind);
 * returns the previous one, whose reference the caller drops.
 */
static struct eventfd_ctx *neuron_events_swap_efd(struct neuron_device *ndev,
						  u32 core, u32 queue,
						  struct eventfd_ctx *ctx)
{
	struct eventfd_ctx *old;

	spin_lock(&ndev->ev_lock);
	old = ndev->nq_efd[core][queue];
	ndev->nq_efd[core][queue] = ctx;
	spin_unlock(&ndev->ev_lock);
	return old;
}

/**
 * neuron_events_ioctl_eventfd() - NEURON_IOC_NQ_EVENTFD: bind or unbind
 * @nfile: the caller's file, which must own the queue
 * @arg: @core, @queue of a queue this file made; @fd an eventfd to signal
 *	by 1 on each threshold interrupt of the queue, or -1 to unbind;
 *	reserved fields zero
 *
 * A new binding replaces the previous one. The binding ends with the
 * queue (NEURON_IOC_NQ_DESTROY, release of the file, remove()). The
 * threshold itself is the queue's THRESHOLD (NEURON_IOC_NQ_INIT) and is
 * re-armed by a HEAD write (docs/device-model.md). docs/hardware.md#completion
 * (the comp_efd wake chain),
 * docs/decisions/0001-original-architecture.md#arch-driver "bind an eventfd to
 * a queue's threshold interrupt".
 *
 * Return: 0; -EINVAL (core/queue out of range, reserved nonzero, @fd not
 * an eventfd); -EBADF (@fd not an open file); -ENOENT (no such queue made
 * by this file); -ENODEV (device removed).
 */
int neuron_events_ioctl_eventfd(struct neuron_file *nfile,
				const struct neuron_nq_eventfd *arg)
{
	static const char cmd[] = "NQ_EVENTFD";
	struct neuron_device *ndev = nfile->ndev;
	struct eventfd_ctx *ctx = NULL, *old = NULL;
	struct neuron_nq *nq;
	int ret;

	if (arg->core >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (arg->queue >= NEURON_NUM_SW_QUEUES)
		return neuron_bad_field(ndev, cmd, "queue");
	if (arg->reserved0 || arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	if (arg->fd != -1) {
		ctx = eventfd_ctx_fdget(arg->fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	}

	ret = neuron_enter_file(nfile);
	if (ret)
		goto out;
	mutex_lock(&ndev->lock);
	nq = ndev->nq[arg->core][arg->queue];
	if (nq && nq->owner == nfile) {
		old = neuron_events_swap_efd(ndev, arg->core, arg->queue, ctx);
		ctx = NULL;	/* the binding owns the reference now */
	} else {
		ret = -ENOENT;
	}
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
out:
	if (ctx)
		eventfd_ctx_put(ctx);
	if (old)
		eventfd_ctx_put(old);
	return ret;
}

/**
 * neuron_events_unbind_nq() - drop the eventfd bound to a queue, if any
 * @ndev: device
 * @core: core index
 * @queue: queue index
 *
 * Called with &neuron_device.lock held whenever a queue leaves the table,
 * so a later owner of the same (core, queue) does not signal it.
 */
void neuron_events_unbind_nq(struct neuron_device *ndev, u32 core, u32 queue)
{
	struct eventfd_ctx *old;

	lockdep_assert_held(&ndev->lock);
	old = neuron_events_swap_efd(ndev, core, queue, NULL);
	if (old)
		eventfd_ctx_put(old);
}

/**
 * neuron_events_ioctl_size() - NEURON_IOC_EVENT_SIZE: set the event size
 * @nfile: the caller's file
 * @arg: in: @size, bytes per event from now on (NEURON_EVENT_SIZE_VER0 ..
 *	NEURON_EVENT_SIZE_MAX); reserved zero. out: @kernel_size,
 *	sizeof(struct neuron_event) of this kernel
 *
 * A reader built against a later header passes its own struct size and
 * learns, from @kernel_size and each event's @size, which fields the
 * kernel fills (docs/decisions/0010-uapi-growth.md). Serialised with read().
 *
 * Return: 0; -EINVAL (@size out of range, reserved nonzero);
 * -ERESTARTSYS (a signal while a read() of the file was blocked).
 */
int neuron_events_ioctl_size(struct neuron_file *nfile,
			     struct neuron_event_size *arg)
{
	struct neuron_device *ndev = nfile->ndev;

	if (arg->size < NEURON_EVENT_SIZE_VER0 ||
	    arg->size > NEURON_EVENT_SIZE_MAX)
		return neuron_bad_field(ndev, "EVENT_SIZE", "size");
	if (arg->reserved)
		return neuron_bad_field(ndev, "EVENT_SIZE", "reserved");
	if (mutex_lock_interruptible(&nfile->ev_read_lock))
		return -ERESTARTSYS;
	nfile->ev_size = arg->size;
	mutex_unlock(&nfile->ev_read_lock);
	arg->kernel_size = sizeof(struct neuron_event);
	return 0;
}
