// SPDX-License-Identifier: GPL-2.0
/*
 * Read-only sysfs attributes of /sys/class/nnq/nnqN: the device state a
 * test or an operator needs without an open file.
 *
 *   queue_enable  one line per core, "core<c> 0x<mask>": the NOTIFIC
 *                 QUEUE_ENABLE register as the hardware has it
 *                 (docs/hardware.md#notific), so a test can prove a released
 *                 file left no queue enabled
 *   axi_dropped   one line per core, "core<c> <n>": the core's AXI_DROPPED
 *                 register, AXI_EVT_SEM records its EVT_SEM unit lost
 *                 since the function's last reset
 *                 (docs/decisions/0025-axi-dropped.md)
 *   intr_counts   one line per core, "core<c>" then the edges counted for
 *                 each tpb_notific_intr_0..8 cause; then "throttle <n>",
 *                 "spurious <n>"
 *   threshold_counts  one line per core, "core<c>" then, for each queue
 *                 0..9, the THRESHOLD_STATUS bits seen (threshold
 *                 interrupts, each also signals the queue's eventfd)
 *   moderation    one line per queue under adaptive moderation
 *                 (NEURON_NQ_F_ADAPTIVE, neuron_dim.c): "core<c>
 *                 queue<q> profile <p> threshold <t> coalesce_ns <ns>
 *                 changes <n>": DIM's profile 0..4, the THRESHOLD and
 *                 COALESCE_NS it programmed, profile changes since the
 *                 queue was made
 *   wrbuf_counts  two lines per core, "core<c> full" and "core<c> drop",
 *                 then for each queue 0..9 the wr_buffer_full_N /
 *                 wr_buffer_drop_N edges seen (N = queue; the NOTIFIC
 *                 input buffer, docs/device-model.md#wrbuf). Edges, not
 *                 records: NQ_INFO's drop_count counts the records
 *   edge_counts   the interrupt edges handled, i.e. the events delivered
 *                 (struct neuron_event.count): one line per core
 *                 "core<c> <n>" (NOTIFIC), then "throttle <n>", "fault <n>"
 *   fault_counts  device faults by NEURON_REG_FAULT_STATUS bit:
 *                 "dma_error <n>", "intr_storm <n>" (the storms the driver
 *                 rate limited, neuron_irq.c), "unnamed <n>" (the bits
 *                 the UAPI has no name for, summed: each is logged as
 *                 device-fault)
 *   intr_storms   one line per core, "core<c> <n> 0x<mask>": interrupt
 *                 storms detected on the core, and the tpb_notific_intr
 *                 causes masked for one right now
 *   storm_masks   one line per core, "core<c>" then, for each
 *                 tpb_notific_intr_0..8 cause, the storms that masked it
 *                 (the first column, intr_0, stays 0: neuron_irq.c)
 *   events_suppressed  one line per core, "core<c> throttle <n> fault <n>":
 *                 THROTTLE and FAULT events of the core the rate limit
 *                 kept from files and netlink
 *                 (docs/decisions/0008-event-ratelimit.md)
 *   event_ratelimit  (0644) "<burst> <interval_ms>": at most burst THROTTLE
 *                 (and, apart, FAULT) events of one core per interval_ms;
 *                 default "16 1000"; a write (root) starts a new interval
 *                 for every core
 *   irq_ratelimit  (0644) "<burst> <interval_ms>": at most burst THROTTLE
 *                 (and, apart, intr_0 THRESHOLD) edges of one core handled
 *                 per interval_ms; the last masks the source until the
 *                 interval ends (neuron_irq.c); default "32 10"; a write
 *                 (root) ends every hold and starts a new interval
 *                 (docs/decisions/0039-interrupt-ratelimit.md)
 *   irq_holds     one line per core, "core<c> throttle <n> threshold <n>":
 *                 the times the core used up its interrupt budget and the
 *                 source was masked for the rest of the interval
 *   reset_counts  the times the disable path tore every queue down, by
 *                 cause ("remove", "flr", "pci_error", "suspend",
 *                 "shutdown"), then "records_lost <n>": records the
 *                 consumers had not read when their rings went
 *   core_owners   one line per core: "<c> <pid> <comm>" for a core an open
 *                 file owns (the thread group that first acquired a core
 *                 through that file, its PID as the reader's PID namespace
 *                 sees it; "<c> 0 ?" if invisible there, so neither PID
 *                 nor command crosses PID namespaces), "<c> - -" for a
 *                 free one
 *                 (docs/decisions/0005-tenancy.md). <comm> is the owner's to
 *                 choose (PR_SET_NAME takes any bytes): its blanks,
 *                 backslashes, control and non-ASCII bytes are written
 *                 "\xHH" (lower-case hex), so a name is one word that
 *                 cannot end its line or forge another one
 *                 (docs/metrics.md#sources)
 *   programs_stopped  one line per core, "core<c>" then, for each engine
 *                 PE, ACT, POOL, DVE, SP, the programs the driver stopped
 *                 while RUNNING or WAITING (the owner's ENGINE_RESET,
 *                 CORE_RELEASE or release; each stop is also a
 *                 NEURON_EDGE_ENGINE_STOPPED event;
 *                 docs/decisions/0024-submit-detach.md)
 *   hangs         one line per core, "core<c>" then, for each engine PE,
 *                 ACT, POOL, DVE, SP, the hangs the scanner reported
 *                 (NEURON_EDGE_HANG); then "coredumps <n>": devcoredumps
 *                 taken for hangs and halts; "coredumps_skipped <n>":
 *                 dumps the per-core limit held back (coredump_interval_ms);
 *                 then "scan_period_ms <n>":
 *                 the scanner's period now
 *                 (docs/decisions/0012-hang-detection.md)
 *   hang_policy   (0644, written by root) "report" or "reset": what the
 *                 scanner does to a hung engine besides reporting it
 *   coredump_interval_ms  (0644, written by root) at most one devcoredump
 *                 of a core per this many ms, 0 = no limit, up to
 *                 86400000; default 600000; a write starts afresh for
 *                 every core (docs/decisions/0038-coredump-slot.md)
 *   event_fanout  "edges <n>": edges handed to open files' event queues;
 *                 "copies <n>": events queued by them. copies / edges is
 *                 the per-edge fan-out cost (neuron_events.c)
 *   mem_quota     (0600) bytes of device memory one user may hold, its
 *                 allocations and device rings through all its files
 *                 (MEM_ALLOC or NQ_INIT past it: -ENOSPC); default half of
 *                 mem_alloc_limit; a multiple of NEURON_MEM_ALIGN up to
 *                 mem_alloc_limit
 *                 (docs/decisions/0005-tenancy.md#device-memory-per-user)
 *   mem_users     (0400) "uid <uid> bytes <n>" per user with a file open
 *                 or a device ring: what counts against mem_quota
 *   rings_quarantined  "now <n>", "total <n>": rings kept because the
 *                 device never confirmed their queue off, now and since
 *                 probe; freed once bus mastering is off
 *                 (docs/decisions/0011-reset-and-recovery.md#quarantine)
 *
 * Root only (0400): the attributes above that carry a figure of each core,
 * queue_enable to hangs except fault_counts, irq_ratelimit and
 * reset_counts, and mem_quota, mem_users.
 * sysfs does not follow the device cgroup, so a pod given one core node
 * would otherwise read every other tenant's per-core figures; a tenant
 * reads its own core's in its file's fdinfo (neuron_fdinfo.c), and the
 * monitors (neuron-nq, the Prometheus exporter, the device plugin) run as
 * root (docs/decisions/0005-tenancy.md#per-core-counters). The rest stay
 * 0444: device-wide sums, state, and core_owners, whose PIDs and names do
 * not cross PID namespaces.
 *
 * The counters count since probe
 * (docs/decisions/0001-original-architecture.md#arch-driver "count every
 * edge").
 *
 * A core node's class device, /sys/class/nnq/nnqN-coreC (a child of
 * nnqN's, so its "device" link names /sys/class/nnq/nnqN), has one
 * attribute of its own (docs/decisions/0017-core-nodes.md):
 *
 *   core          "<c>": the core whose calls a file of /dev/nnqN-coreC
 *                 may make
 */
#include <linux/bitops.h>
#include <linux/device.h>
#include <linux/log2.h>
#include <linux/pid.h>
#include <linux/string_helpers.h>
#include <linux/sysfs.h>

#include "neuron.h"

static ssize_t queue_enable_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int len = 0;
	u32 c;

	if (neuron_enter(ndev))
		return -ENODEV;
	for (c = 0; c < ndev->num_cores; c++) {
		u32 mask = neuron_rd(ndev, NEURON_NOTIFIC_REG(c,
					NEURON_NOTIFIC_QUEUE_ENABLE));

		len += sysfs_emit_at(buf, len, "core%u 0x%03x\n", c, mask);
	}
	neuron_exit(ndev);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(queue_enable);

static ssize_t axi_dropped_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int len = 0;
	u32 c;

	if (neuron_enter(ndev))
		return -ENODEV;
	for (c = 0; c < ndev->num_cores; c++)
		len += sysfs_emit_at(buf, len, "core%u %u\n", c,
				     neuron_hw_axi_dropped(ndev, c));
	neuron_exit(ndev);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(axi_dropped);

static ssize_t intr_counts_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 counts[NEURON_NOTIFIC_INTR_BITS];
	u64 throttle, spurious;
	unsigned long flags;
	int len = 0;
	u32 c, i;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		memcpy(counts, ndev->intr_count[c], sizeof(counts));
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u", c);
		for (i = 0; i < NEURON_NOTIFIC_INTR_BITS; i++)
			len += sysfs_emit_at(buf, len, " %llu", counts[i]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	spin_lock_irqsave(&ndev->irq_lock, flags);
	throttle = ndev->throttle_count;
	spurious = ndev->spurious_count;
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
	len += sysfs_emit_at(buf, len, "throttle %llu\nspurious %llu\n",
			     throttle, spurious);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(intr_counts);

static ssize_t threshold_counts_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 counts[NEURON_NUM_SW_QUEUES];
	unsigned long flags;
	int len = 0;
	u32 c, q;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		memcpy(counts, ndev->threshold_count[c], sizeof(counts));
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u", c);
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			len += sysfs_emit_at(buf, len, " %llu", counts[q]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	return len;
}
static DEVICE_ATTR_ADMIN_RO(threshold_counts);

static ssize_t moderation_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u32 c, q, level, thr, ns;
	u64 changes;
	int len = 0;

	for (c = 0; c < ndev->num_cores; c++)
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			if (neuron_dim_show(ndev, c, q, &level, &thr, &ns,
					    &changes))
				len += sysfs_emit_at(buf, len,
						     "core%u queue%u profile %u threshold %u coalesce_ns %u changes %llu\n",
						     c, q, level, thr, ns,
						     changes);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(moderation);

static ssize_t wrbuf_counts_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 full[NEURON_NUM_SW_QUEUES], drop[NEURON_NUM_SW_QUEUES];
	unsigned long flags;
	int len = 0;
	u32 c, q;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		memcpy(full, ndev->wrbuf_full_count[c], sizeof(full));
		memcpy(drop, ndev->wrbuf_drop_count[c], sizeof(drop));
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u full", c);
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			len += sysfs_emit_at(buf, len, " %llu", full[q]);
		len += sysfs_emit_at(buf, len, "\ncore%u drop", c);
		for (q = 0; q < NEURON_NUM_SW_QUEUES; q++)
			len += sysfs_emit_at(buf, len, " %llu", drop[q]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	return len;
}
static DEVICE_ATTR_ADMIN_RO(wrbuf_counts);

static ssize_t edge_counts_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 edges, throttle, faults;
	unsigned long flags;
	int len = 0;
	u32 c;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		edges = ndev->notific_edges[c];
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u %llu\n", c, edges);
	}
	spin_lock_irqsave(&ndev->irq_lock, flags);
	throttle = ndev->throttle_count;
	faults = ndev->fault_edges;
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
	len += sysfs_emit_at(buf, len, "throttle %llu\nfault %llu\n",
			     throttle, faults);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(edge_counts);

static ssize_t fault_counts_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	unsigned long unnamed_bits = ~(unsigned long)NEURON_FAULT_NAMED;
	u64 dma, storm, unnamed = 0;
	unsigned long flags;
	unsigned int bit;

	spin_lock_irqsave(&ndev->irq_lock, flags);
	dma = ndev->fault_count[ilog2(NEURON_FAULT_DMA_ERROR)];
	storm = ndev->fault_count[ilog2(NEURON_FAULT_INTR_STORM)];
	for_each_set_bit(bit, &unnamed_bits, NEURON_FAULT_BITS)
		unnamed += ndev->fault_count[bit];
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
	return sysfs_emit(buf, "dma_error %llu\nintr_storm %llu\nunnamed %llu\n",
			  dma, storm, unnamed);
}
static DEVICE_ATTR_RO(fault_counts);

static ssize_t intr_storms_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	unsigned long flags;
	int len = 0;
	u64 storms;
	u32 c, masked;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		storms = ndev->storm_count[c];
		masked = ndev->storm_masked[c];
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u %llu 0x%03x\n", c, storms,
				     masked);
	}
	return len;
}
static DEVICE_ATTR_ADMIN_RO(intr_storms);

static ssize_t storm_masks_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 masks[NEURON_NOTIFIC_INTR_BITS];
	unsigned long flags;
	int len = 0;
	u32 c, i;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		memcpy(masks, ndev->storm_masks[c], sizeof(masks));
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u", c);
		for (i = 0; i < NEURON_NOTIFIC_INTR_BITS; i++)
			len += sysfs_emit_at(buf, len, " %llu", masks[i]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	return len;
}
static DEVICE_ATTR_ADMIN_RO(storm_masks);

static ssize_t events_suppressed_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	unsigned long flags;
	u64 throttle, fault;
	int len = 0;
	u32 c;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		throttle = ndev->ev_suppressed[c][NEURON_EVLIMIT_THROTTLE];
		fault = ndev->ev_suppressed[c][NEURON_EVLIMIT_FAULT];
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u throttle %llu fault %llu\n",
				     c, throttle, fault);
	}
	return len;
}
static DEVICE_ATTR_ADMIN_RO(events_suppressed);

/*
 * "<burst> <interval_ms>" of a rate limit, read under
 * &neuron_device.irq_lock (event_ratelimit, irq_ratelimit).
 */
static ssize_t neuron_limit_show(struct neuron_device *ndev, const u32 *burst,
				 const u32 *ms, char *buf)
{
	unsigned long flags;
	u32 b, m;

	spin_lock_irqsave(&ndev->irq_lock, flags);
	b = *burst;
	m = *ms;
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
	return sysfs_emit(buf, "%u %u\n", b, m);
}

/* Parses "<burst> <interval_ms>": each from 1 to its maximum, or -EINVAL. */
static int neuron_limit_parse(const char *buf, u32 burst_max, u32 ms_max,
			      u32 *burst, u32 *ms)
{
	if (sscanf(buf, "%u %u", burst, ms) != 2)
		return -EINVAL;
	if (!*burst || *burst > burst_max || !*ms || *ms > ms_max)
		return -EINVAL;
	return 0;
}

static ssize_t event_ratelimit_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);

	return neuron_limit_show(ndev, &ndev->evlimit_burst,
				 &ndev->evlimit_interval_ms, buf);
}

/*
 * "<burst> <interval_ms>": burst 1..NEURON_EVENT_QUEUE_LEN, interval_ms
 * 1..NEURON_EVLIMIT_INTERVAL_MS_MAX; root only. Every (core, kind) starts a
 * new interval; the edges suppressed so far still ride on the next event.
 */
static ssize_t event_ratelimit_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	unsigned long flags;
	u32 burst, ms, c, k;
	int ret;

	ret = neuron_limit_parse(buf, NEURON_EVENT_QUEUE_LEN,
				 NEURON_EVLIMIT_INTERVAL_MS_MAX, &burst, &ms);
	if (ret)
		return ret;
	spin_lock_irqsave(&ndev->irq_lock, flags);
	ndev->evlimit_burst = burst;
	ndev->evlimit_interval_ms = ms;
	for (c = 0; c < NEURON_MAX_CORES; c++)
		for (k = 0; k < NEURON_EVLIMIT_KINDS; k++)
			ndev->evlimit[c][k].used = 0;
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
	return count;
}
static DEVICE_ATTR_RW(event_ratelimit);

static ssize_t irq_ratelimit_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);

	return neuron_limit_show(ndev, &ndev->irqlimit_burst,
				 &ndev->irqlimit_interval_ms, buf);
}

/*
 * "<burst> <interval_ms>": burst 1..NEURON_IRQLIMIT_BURST_MAX, interval_ms
 * 1..NEURON_IRQLIMIT_INTERVAL_MS_MAX; root only (the mode). Every hold
 * ends and every (core, kind) starts a new interval.
 */
static ssize_t irq_ratelimit_store(struct device *dev,
				   struct device_attribute *attr,
				   const char *buf, size_t count)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	unsigned long flags;
	u32 burst, ms;
	int ret;

	ret = neuron_limit_parse(buf, NEURON_IRQLIMIT_BURST_MAX,
				 NEURON_IRQLIMIT_INTERVAL_MS_MAX, &burst, &ms);
	if (ret)
		return ret;
	spin_lock_irqsave(&ndev->irq_lock, flags);
	ndev->irqlimit_burst = burst;
	ndev->irqlimit_interval_ms = ms;
	if (!ndev->storm_stop)
		neuron_irq_release_all(ndev);
	spin_unlock_irqrestore(&ndev->irq_lock, flags);
	return count;
}
static DEVICE_ATTR_RW(irq_ratelimit);

static ssize_t irq_holds_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 holds[NEURON_IRQLIMIT_KINDS];
	unsigned long flags;
	int len = 0;
	u32 c;

	for (c = 0; c < ndev->num_cores; c++) {
		spin_lock_irqsave(&ndev->irq_lock, flags);
		memcpy(holds, ndev->irq_holds[c], sizeof(holds));
		spin_unlock_irqrestore(&ndev->irq_lock, flags);
		len += sysfs_emit_at(buf, len, "core%u throttle %llu threshold %llu\n",
				     c, holds[NEURON_IRQLIMIT_THROTTLE],
				     holds[NEURON_IRQLIMIT_THRESHOLD]);
	}
	return len;
}
static DEVICE_ATTR_ADMIN_RO(irq_holds);

static ssize_t reset_counts_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int len = 0;
	u32 i;

	mutex_lock(&ndev->lock);
	for (i = NEURON_RESET_REMOVE; i < NEURON_RESET_CAUSES; i++)
		len += sysfs_emit_at(buf, len, "%s %llu\n",
				     neuron_reset_cause_name(i),
				     ndev->reset_count[i]);
	len += sysfs_emit_at(buf, len, "records_lost %llu\n", ndev->reset_lost);
	mutex_unlock(&ndev->lock);
	return len;
}
static DEVICE_ATTR_RO(reset_counts);

static ssize_t core_owners_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	char comm[NEURON_COMM_ESCAPED_LEN];
	int len = 0;
	u32 c;

	mutex_lock(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++) {
		struct neuron_file *owner = ndev->owner[c];
		pid_t pid = owner ? pid_vnr(owner->owner_pid) : 0;

		/* an owner outside the reader's PID namespace: no name either */
		if (owner && pid) {
			neuron_comm_escape(owner->owner_comm, comm);
			len += sysfs_emit_at(buf, len, "%u %d %s\n", c, pid,
					     comm);
		} else if (owner) {
			len += sysfs_emit_at(buf, len, "%u 0 ?\n", c);
		} else {
			len += sysfs_emit_at(buf, len, "%u - -\n", c);
		}
	}
	mutex_unlock(&ndev->lock);
	return len;
}
static DEVICE_ATTR_RO(core_owners);

static ssize_t programs_stopped_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int len = 0;
	u32 c, e;

	mutex_lock(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++) {
		len += sysfs_emit_at(buf, len, "core%u", c);
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++)
			len += sysfs_emit_at(buf, len, " %llu",
					     ndev->programs_stopped[c][e]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	mutex_unlock(&ndev->lock);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(programs_stopped);

static ssize_t hangs_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int len = 0;
	u32 c, e;

	mutex_lock(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++) {
		len += sysfs_emit_at(buf, len, "core%u", c);
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++)
			len += sysfs_emit_at(buf, len, " %llu", ndev->hangs[c][e]);
		len += sysfs_emit_at(buf, len, "\n");
	}
	len += sysfs_emit_at(buf, len, "coredumps %llu\n", ndev->coredumps);
	len += sysfs_emit_at(buf, len, "coredumps_skipped %llu\n",
			     ndev->coredumps_skipped);
	len += sysfs_emit_at(buf, len, "scan_period_ms %u\n",
			     neuron_hang_period_ms(ndev));
	mutex_unlock(&ndev->lock);
	return len;
}
static DEVICE_ATTR_ADMIN_RO(hangs);

/*
 * state: "online", "offline" (a reset or recovery is under way), "failed"
 * (PCI error recovery gave up; offline until removal) or "removing", as the
 * last NNQ_EVENT uevent said, for a reader that starts
 * after the event (docs/decisions/0011-reset-and-recovery.md#uevents). A
 * snapshot: the flags may change as soon as it is read.
 */
static ssize_t state_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	const char *state = "online";

	if (READ_ONCE(ndev->dead))
		state = "removing";
	else if (READ_ONCE(ndev->failed))
		state = "failed";
	else if (READ_ONCE(ndev->offline))
		state = "offline";
	return sysfs_emit(buf, "%s\n", state);
}
static DEVICE_ATTR_RO(state);

static const char * const neuron_hang_policies[] = {
	[NEURON_HANG_REPORT] = "report",
	[NEURON_HANG_RESET] = "reset",
};

static ssize_t hang_policy_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n",
			  neuron_hang_policies[READ_ONCE(ndev->hang_policy)]);
}

/* "report" or "reset"; the mode (0644, root's) keeps tenants out */
static ssize_t hang_policy_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	int i = sysfs_match_string(neuron_hang_policies, buf);

	if (i < 0)
		return i;
	mutex_lock(&ndev->lock);
	WRITE_ONCE(ndev->hang_policy, i);
	mutex_unlock(&ndev->lock);
	return count;
}
static DEVICE_ATTR_RW(hang_policy);

static ssize_t coredump_interval_ms_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u32 ms;

	mutex_lock(&ndev->lock);
	ms = ndev->coredump_interval_ms;
	mutex_unlock(&ndev->lock);
	return sysfs_emit(buf, "%u\n", ms);
}

/* ms, 0..NEURON_COREDUMP_INTERVAL_MS_MAX; root only (the mode) */
static ssize_t coredump_interval_ms_store(struct device *dev,
					  struct device_attribute *attr,
					  const char *buf, size_t count)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u32 ms;
	int ret;

	ret = kstrtou32(buf, 0, &ms);
	if (ret)
		return ret;
	if (ms > NEURON_COREDUMP_INTERVAL_MS_MAX)
		return -EINVAL;
	mutex_lock(&ndev->lock);
	ndev->coredump_interval_ms = ms;
	memset(ndev->coredump_taken, 0, sizeof(ndev->coredump_taken));
	mutex_unlock(&ndev->lock);
	return count;
}
static DEVICE_ATTR_RW(coredump_interval_ms);

static ssize_t event_fanout_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 edges, copies;

	spin_lock(&ndev->ev_lock);
	edges = ndev->ev_edges;
	copies = ndev->ev_copies;
	spin_unlock(&ndev->ev_lock);
	return sysfs_emit(buf, "edges %llu\ncopies %llu\n", edges, copies);
}
static DEVICE_ATTR_RO(event_fanout);

static ssize_t rings_quarantined_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	struct neuron_nq *nq;
	u64 now = 0, total;

	mutex_lock(&ndev->lock);
	list_for_each_entry(nq, &ndev->quarantine, quarantine)
		now++;
	total = ndev->quarantined_total;
	mutex_unlock(&ndev->lock);
	return sysfs_emit(buf, "now %llu\ntotal %llu\n", now, total);
}
static DEVICE_ATTR_RO(rings_quarantined);

static ssize_t mem_quota_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%llu\n", READ_ONCE(ndev->mem_quota));
}

/* bytes, a multiple of NEURON_MEM_ALIGN up to mem_alloc_limit; root only */
static ssize_t mem_quota_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t count)
{
	struct neuron_device *ndev = dev_get_drvdata(dev);
	u64 val;
	int ret;

	ret = kstrtou64(buf, 0, &val);
	if (ret)
		return ret;
	if (!val || val > ndev->mem_limit || !IS_ALIGNED(val, NEURON_MEM_ALIGN))
		return -EINVAL;
	mutex_lock(&ndev->lock);
	WRITE_ONCE(ndev->mem_quota, val);
	mutex_unlock(&ndev->lock);
	return count;
}

/* root only, read too: the value is configuration, not for tenants */
static DEVICE_ATTR_ADMIN_RW(mem_quota);

static ssize_t mem_users_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return neuron_quota_show(dev_get_drvdata(dev), buf);
}

/* root only: which users hold the device is not for tenants */
static DEVICE_ATTR_ADMIN_RO(mem_users);

static struct attribute *neuron_attrs[] = {
	&dev_attr_queue_enable.attr,
	&dev_attr_axi_dropped.attr,
	&dev_attr_intr_counts.attr,
	&dev_attr_threshold_counts.attr,
	&dev_attr_moderation.attr,
	&dev_attr_wrbuf_counts.attr,
	&dev_attr_edge_counts.attr,
	&dev_attr_fault_counts.attr,
	&dev_attr_intr_storms.attr,
	&dev_attr_storm_masks.attr,
	&dev_attr_events_suppressed.attr,
	&dev_attr_event_ratelimit.attr,
	&dev_attr_irq_ratelimit.attr,
	&dev_attr_irq_holds.attr,
	&dev_attr_reset_counts.attr,
	&dev_attr_core_owners.attr,
	&dev_attr_programs_stopped.attr,
	&dev_attr_hangs.attr,
	&dev_attr_state.attr,
	&dev_attr_hang_policy.attr,
	&dev_attr_coredump_interval_ms.attr,
	&dev_attr_event_fanout.attr,
	&dev_attr_rings_quarantined.attr,
	&dev_attr_mem_quota.attr,
	&dev_attr_mem_users.attr,
	NULL,
};

static const struct attribute_group neuron_attr_group = {
	.attrs = neuron_attrs,
};

const struct attribute_group *neuron_attr_groups[] = {
	&neuron_attr_group,
	NULL,
};

static ssize_t core_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	u32 minor = MINOR(dev->devt) - NEURON_CORE_MINOR_BASE;

	return sysfs_emit(buf, "%u\n", minor % NEURON_MAX_CORES);
}
static DEVICE_ATTR_RO(core);

static struct attribute *neuron_core_attrs[] = {
	&dev_attr_core.attr,
	NULL,
};

static const struct attribute_group neuron_core_attr_group = {
	.attrs = neuron_core_attrs,
};

/* The attributes of /sys/class/nnq/nnqN-coreC (neuron_cdev.c). */
const struct attribute_group *neuron_core_attr_groups[] = {
	&neuron_core_attr_group,
	NULL,
};
