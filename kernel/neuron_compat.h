/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences between the kernels nnq.ko builds for (Debian's
 * 6.1 and bookworm-backports' 6.12, docs/build-environment.md#kernel-api), in
 * one place.
 *
 * These are feature tests, not version checks: distributions backport API
 * changes, so Kbuild looks for each interface in the target kernel's own
 * headers and defines NEURON_HAVE_* when it is there (see kernel/Kbuild).
 *
 *   vm_flags_set()/vm_flags_clear()  6.3 made vma->vm_flags read-only;
 *                                    older kernels write the field.
 *   eventfd_signal(ctx)              6.8 dropped the count argument.
 *   genl_info_dump(cb)->attrs        6.2 (split ops) moved a dump's parsed
 *                                    attributes from genl_dumpit_info()
 *                                    ->attrs into a struct genl_info.
 *   struct genl_ops                  not wrapped: plain genl_ops with a
 *                                    per-op .policy/.maxattr are accepted
 *                                    by both (6.12 turns them into split
 *                                    ops itself); pre_doit/post_doit,
 *                                    whose types changed, are not used.
 *   dev_coredump_put(dev)            6.10 added it (delete the device's
 *                                    held devcoredump); without it a new
 *                                    dump cannot replace a held one
 *                                    (neuron_hang.c).
 *   class_create(owner, name)        6.4 dropped the owner argument. Not
 *                                    wrapped: the driver registers a static
 *                                    struct class with class_register(),
 *                                    whose call is the same on both.
 */
#ifndef NEURON_COMPAT_H
#define NEURON_COMPAT_H

#include <linux/devcoredump.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <net/genetlink.h>

#ifndef NEURON_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/**
 * neuron_eventfd_signal() - add one to an eventfd counter
 * @ctx: eventfd context
 */
static inline void neuron_eventfd_signal(struct eventfd_ctx *ctx)
{
#ifdef NEURON_HAVE_EVENTFD_SIGNAL_NO_COUNT
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/**
 * neuron_genl_dump_attrs() - the attributes a dump request carried
 * @cb: the dump's callback state
 *
 * Return: the attribute table parsed with the operation's policy, indexed
 * by attribute type.
 */
static inline struct nlattr **neuron_genl_dump_attrs(struct netlink_callback *cb)
{
#ifdef NEURON_HAVE_GENL_INFO_DUMP
	return genl_info_dump(cb)->attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * Multicast groups gained capability flags in 6.6 (and Debian's 6.1 has
 * them backported). Without them any user could join the events group and
 * read every tenant's edges, so the module does not build rather than fall
 * back (docs/decisions/0005-tenancy.md).
 */
#ifdef NEURON_HAVE_GENL_MCAST_CAP
#define NEURON_GENL_MCAST_ADMIN	GENL_MCAST_CAP_NET_ADMIN
#else
/* the events group must not be joinable without CAP_NET_ADMIN */
#error "nnq needs GENL_MCAST_CAP_NET_ADMIN (Linux 6.6, or a backport)"
#endif

#ifndef NEURON_HAVE_DEV_COREDUMP_PUT
/* nothing to delete with: the held dump stays, devcoredump drops the new */
static inline void dev_coredump_put(struct device *dev)
{
}
#endif

#endif /* NEURON_COMPAT_H */
