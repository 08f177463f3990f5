/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mmap offsets and lengths of nnq.ko as functions of the page shift
 * (docs/decisions/0011-reset-and-recovery.md#page-size,
 * docs/decisions/0003-choices.md#mmap-cookies). neuron_mmap.c uses them
 * with PAGE_SHIFT; userspace/tests/test_page_size.cpp evaluates the same
 * expressions with 12, 14 and 16 (4, 16 and 64 KiB pages), which is how a
 * 16 KiB kernel is checked without one. Only macros, on the UAPI's and
 * regs.h's constants, so the file builds in the kernel and on the host.
 * Include <linux/neuron.h> (the UAPI) and <neuron/regs.h> first.
 */
#ifndef NEURON_MMAP_LAYOUT_H
#define NEURON_MMAP_LAYOUT_H

/* a cookie in page units: type 31..24, core 23..16, queue 15..8, page 7..0 */
#define NEURON_COOKIE_TYPE_SHIFT	24
#define NEURON_COOKIE_CORE_SHIFT	16
#define NEURON_COOKIE_QUEUE_SHIFT	8
#define NEURON_COOKIE_PAGE_MASK		0xffUL

/* the cookie types (enum neuron_cookie_type in neuron.h names 1 and 2) */
#define NEURON_LAYOUT_RING		1
#define NEURON_LAYOUT_DOORBELL		2

/* the byte offset of a ring's or doorbell's cookie */
#define NEURON_LAYOUT_COOKIE(type, core, queue, shift)				\
	((((unsigned long long)(type) << NEURON_COOKIE_TYPE_SHIFT) |		\
	  ((unsigned long long)(core) << NEURON_COOKIE_CORE_SHIFT) |		\
	  ((unsigned long long)(queue) << NEURON_COOKIE_QUEUE_SHIFT)) << (shift))

/* the type field of a page offset */
#define NEURON_LAYOUT_TYPE(pgoff)	((unsigned long long)(pgoff) >> NEURON_COOKIE_TYPE_SHIFT)

/*
 * The status page's page offset: NEURON_STATUS_PAGE_OFFSET is a byte
 * offset (0x3000000000, 2^36-aligned) whatever the page size; in page
 * units its type field is 3 (4 KiB) or 0 (16 and 64 KiB), never a
 * ring's or a doorbell's.
 */
#define NEURON_LAYOUT_STATUS_PGOFF(shift)	(NEURON_STATUS_PAGE_OFFSET >> (shift))

/* the doorbell cookies end here; the disable path zaps [ring 0, this) */
#define NEURON_LAYOUT_ZAP_END(shift) \
	NEURON_LAYOUT_COOKIE(NEURON_LAYOUT_DOORBELL + 1, 0, 0, shift)

/*
 * A doorbell mapping's length: one page when a page holds one queue's
 * doorbell alone (the doorbells are NEURON_DOORBELL_SIZE = 4 KiB apart,
 * regs.h), else 0: not mappable, HEAD goes by NEURON_IOC_NQ_HEAD.
 */
#define NEURON_LAYOUT_DOORBELL_SIZE(shift)					\
	((NEURON_DOORBELL_SIZE >> (shift)) == 1 ? (unsigned long)NEURON_DOORBELL_SIZE : 0UL)

/* a ring's mapping length: its size rounded up to the page, -(-x & -page) */
#define NEURON_LAYOUT_RING_BYTES(size, shift)					\
	(0UL - ((0UL - (unsigned long)(size)) & (0UL - (1UL << (shift)))))

#endif /* NEURON_MMAP_LAYOUT_H */
