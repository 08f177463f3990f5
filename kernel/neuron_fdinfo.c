// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file usage in /proc/<pid>/fdinfo/<fd> (docs/metrics.md#fdinfo), in
 * the shape of the kernel's DRM client usage stats
 * (Documentation/gpu/drm-usage-stats.rst): one "key:\tvalue[ unit]" line
 * each, keys prefixed "nnq-", a client id unique while the module is
 * loaded, and counters that only grow while the file holds what they
 * count. Lines, in order:
 *
 *   nnq-driver:	nnq
 *   nnq-pdev:	the PCI address of the device
 *   nnq-client-id:	a number unique to this open file
 *   nnq-cores:	the cores the file owns, a hex mask
 *   nnq-memory-device:	device memory the file holds, KiB
 *   nnq-memory-rings:	host and device ring bytes of its queues, KiB
 *   nnq-insns-c<C>-<ENGINE>:	instructions an engine of a core the file
 *			owns retired since the file took the core (the
 *			engine's EXEC_COUNT less its value then)
 *   nnq-engine-c<C>-<ENGINE>:	ns that engine spent running or waiting on
 *			programs since the file took the core (the
 *			meaning of DRM's drm-engine-<name>; the driver's
 *			own timing, neuron_busy.c), with the unit "ns"
 *   nnq-axi-dropped-c<C>:	AXI_EVT_SEM records a core the file owns
 *			lost since the file took it (AXI_DROPPED less its
 *			value then; docs/decisions/0025-axi-dropped.md)
 *   nnq-queue-c<C>-q<Q>-records:	records the device wrote to a queue of
 *			the file (its TAIL)
 *   nnq-queue-c<C>-q<Q>-overflow:	records overwritten unread (ignore-full)
 *   nnq-queue-c<C>-q<Q>-drops:	records dropped (DMA write error, input
 *			buffer drop policy)
 *
 * The register-backed lines are printed only while the device is live and
 * the file current (a stale or removed file shows the first six, nnq-driver
 * to nnq-memory-rings).
 */
#include <linux/atomic.h>
#include <linux/pci.h>
#include <linux/seq_file.h>

#include "neuron.h"

static atomic64_t neuron_client_ids = ATOMIC64_INIT(0);

/**
 * neuron_fdinfo_open() - give a new file its client id
 * @nfile: the file being opened
 */
void neuron_fdinfo_open(struct neuron_file *nfile)
{
	nfile->client_id = atomic64_inc_return(&neuron_client_ids);
}

/* Every queue line of @nfile; &neuron_device.lock held, device live. */
static void neuron_fdinfo_queues(struct seq_file *m, struct neuron_file *nfile)
{
	struct neuron_device *ndev = nfile->ndev;
	u32 c, q, overflow, drops, tail;
	struct neuron_nq *nq;

	for (c = 0; c < ndev->num_cores; c++) {
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
			nq = ndev->nq[c][q];
			if (!nq || nq->owner != nfile)
				continue;
			tail = neuron_rd(ndev, NEURON_NQ_REG(c, q, NEURON_NQ_TAIL));
			neuron_nq_read_counts(nq, &overflow, &drops);
			seq_printf(m, "nnq-queue-c%u-q%u-records:\t%u\n", c, q, tail);
			seq_printf(m, "nnq-queue-c%u-q%u-overflow:\t%u\n", c, q, overflow);
			seq_printf(m, "nnq-queue-c%u-q%u-drops:\t%u\n", c, q, drops);
		}
	}
}

/**
 * neuron_fdinfo_show() - the file's usage for /proc/<pid>/fdinfo/<fd>
 * @m: the fdinfo seq_file
 * @filp: an open file of /dev/nnqN
 *
 * Prints the lines at the top of this file. Takes &neuron_device.rwsem
 * for reading and &neuron_device.lock, like an ioctl.
 */
void neuron_fdinfo_show(struct seq_file *m, struct file *filp)
{
	struct neuron_file *nfile = filp->private_data;
	struct neuron_device *ndev = nfile->ndev;
	unsigned long cores;
	u64 ring_bytes = 0;
	bool live;
	u32 c, q, e, insns, state;

	seq_puts(m, "nnq-driver:\t" NEURON_DEV_NAME "\n");
	seq_printf(m, "nnq-pdev:\t%s\n", pci_name(ndev->pdev));
	seq_printf(m, "nnq-client-id:\t%llu\n", nfile->client_id);

	live = !neuron_enter_file(nfile);
	mutex_lock(&ndev->lock);
	cores = nfile->cores;
	for (c = 0; c < ndev->num_cores; c++)
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			if (ndev->nq[c][q] && ndev->nq[c][q]->owner == nfile)
				ring_bytes += ndev->nq[c][q]->alloc_size;
	seq_printf(m, "nnq-cores:\t%#lx\n", cores);
	seq_printf(m, "nnq-memory-device:\t%llu KiB\n", nfile->mem_bytes >> 10);
	seq_printf(m, "nnq-memory-rings:\t%llu KiB\n", ring_bytes >> 10);
	if (live) {
		for_each_set_bit(c, &cores, NEURON_MAX_CORES) {
			for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
				insns = neuron_rd(ndev, NEURON_ENG_REG(c, e,
								       NEURON_ENG_EXEC_COUNT));
				seq_printf(m, "nnq-insns-c%u-%s:\t%u\n", c,
					   neuron_engine_names[e],
					   insns - ndev->exec_base[c][e]);
			}
			for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
				state = neuron_rd(ndev, NEURON_ENG_REG(c, e,
								       NEURON_ENG_STATUS));
				/* this read is a sample of the busy time too */
				neuron_busy_update(ndev, c, e, state);
				seq_printf(m, "nnq-engine-c%u-%s:\t%llu ns\n", c,
					   neuron_engine_names[e],
					   neuron_busy_ns(ndev, c, e) -
					   ndev->busy_base[c][e]);
			}
			seq_printf(m, "nnq-axi-dropped-c%u:\t%u\n", c,
				   neuron_hw_axi_dropped(ndev, c) -
				   ndev->axi_dropped_base[c]);
		}
		neuron_fdinfo_queues(m, nfile);
	}
	mutex_unlock(&ndev->lock);
	if (live)
		neuron_exit(ndev);
}
