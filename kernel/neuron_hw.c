// SPDX-License-Identifier: GPL-2.0
/*
 * Device handshakes: reset and wait until ready, wait until quiesced
 * (docs/device-model.md "Reset, quiesce and failure"; regs.h global page).
 *
 * A write to a device register is posted: it says nothing about when the
 * device acted on it. Both waits below therefore poll a status register
 * the device sets itself, with a bounded timeout, and treat a read of all
 * ones as a device that is gone (surprise removal, a frozen link).
 * Register access only; nothing here knows about queues, files or events.
 *
 * Also the one log line of every hardware error the driver sees,
 * neuron_hw_error() (docs/decisions/0014-hw-error-log.md): node agents match it
 * (userspace/tools/node-problem-detector/nnq-hw-errors.json, and the
 * vendor's rules through its NEURON_HW_ERR= key), so its shape is fixed
 * here once rather than at each site.
 */
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/iopoll.h>
#include <linux/ratelimit.h>

#include "neuron.h"

/* How long the device may take to leave reset or to stop its DMA. */
#define NEURON_HW_TIMEOUT_MS	500u
#define NEURON_HW_TIMEOUT_US	(NEURON_HW_TIMEOUT_MS * 1000u)
#define NEURON_HW_POLL_US	10

/* enum neuron_engine order; the hardware error log's and fdinfo's names */
const char *const neuron_engine_names[NEURON_ENGINES_PER_CORE] = {
	"pe", "act", "pool", "dve", "sp",
};

/*
 * The hardware error log's words. @name is the cause= word; @key the
 * NEURON_HW_ERR= value, the cause in upper case with '_' for '-', the way
 * the real driver's stack spells its error types, so that "DMA_ERROR"
 * is the word the vendor's rules look for (docs/decisions/0014-hw-error-log.md#hw-error-key);
 * @suppressed names the cause in the kernel's "<name>: N callbacks
 * suppressed" line of its rate limit.
 */
struct neuron_hw_error_words {
	const char *name;
	const char *key;
	const char *suppressed;
};

static const struct neuron_hw_error_words neuron_hw_error_causes[NEURON_HWE_CAUSES] = {
	[NEURON_HWE_INTR_STORM] = { "intr-storm", "INTR_STORM",
		NEURON_DEV_NAME " intr-storm" },
	[NEURON_HWE_DMA_ERROR] = { "dma-error", "DMA_ERROR",
		NEURON_DEV_NAME " dma-error" },
	[NEURON_HWE_DEVICE_FAULT] = { "device-fault", "DEVICE_FAULT",
		NEURON_DEV_NAME " device-fault" },
	[NEURON_HWE_HANG] = { "hang", "HANG",
		NEURON_DEV_NAME " hang" },
	[NEURON_HWE_ENGINE_HALTED] = { "engine-halted", "ENGINE_HALTED",
		NEURON_DEV_NAME " engine-halted" },
	[NEURON_HWE_QUEUE_STUCK] = { "queue-stuck", "QUEUE_STUCK",
		NEURON_DEV_NAME " queue-stuck" },
	[NEURON_HWE_QUIESCE_TIMEOUT] = { "quiesce-timeout", "QUIESCE_TIMEOUT",
		NEURON_DEV_NAME " quiesce-timeout" },
	[NEURON_HWE_NOT_READY] = { "not-ready", "NOT_READY",
		NEURON_DEV_NAME " not-ready" },
	[NEURON_HWE_PCI_NONFATAL] = { "pci-nonfatal", "PCI_NONFATAL",
		NEURON_DEV_NAME " pci-nonfatal" },
	[NEURON_HWE_PCI_FATAL] = { "pci-fatal", "PCI_FATAL",
		NEURON_DEV_NAME " pci-fatal" },
	[NEURON_HWE_PCI_PERMANENT] = { "pci-permanent", "PCI_PERMANENT",
		NEURON_DEV_NAME " pci-permanent" },
	[NEURON_HWE_RECOVERY_FAILED] = { "recovery-failed", "RECOVERY_FAILED",
		NEURON_DEV_NAME " recovery-failed" },
	[NEURON_HWE_DEVICE_GONE] = { "device-gone", "DEVICE_GONE",
		NEURON_DEV_NAME " device-gone" },
};

/*
 * The line after the driver's name and PCI address, which are written as
 * dev_printk() writes them (docs/decisions/0014-hw-error-log.md)
 */
#define NEURON_HW_ERROR_FMT \
	"%s %s: %s%d: hw-error NEURON_HW_ERR=%s core=%s engine=%s cause=%s action=%s: %pV\n"

static const char *const neuron_hw_error_actions[] = {
	[NEURON_HWA_NONE] = "none",
	[NEURON_HWA_CHECK_PROGRAM] = "check-program",
	[NEURON_HWA_RESET_DEVICE] = "reset-device",
	[NEURON_HWA_REPLACE_DEVICE] = "replace-device",
};

/**
 * neuron_hw_error_init() - start the hardware error log's rate limits
 * @ndev: device being probed, before anything can log for it
 *
 * One rate limit per cause and device, with the defaults of the
 * dev_*_ratelimited() macros: a storm on one device, or of one cause,
 * keeps no other error out of the log.
 */
void neuron_hw_error_init(struct neuron_device *ndev)
{
	u32 i;

	for (i = 0; i < NEURON_HWE_CAUSES; i++)
		ratelimit_state_init(&ndev->hw_error_rs[i],
				     DEFAULT_RATELIMIT_INTERVAL,
				     DEFAULT_RATELIMIT_BURST);
}

/**
 * neuron_hw_error() - log one hardware error, in the one documented shape
 * @ndev: device
 * @core: the core it concerns, or NEURON_HW_ERROR_NA
 * @engine: the engine it concerns (enum neuron_engine), or NEURON_HW_ERROR_NA
 * @cause: enum neuron_hw_error_cause
 * @action: enum neuron_hw_error_action
 * @fmt: printf format of the free text that ends the line, no newline
 *
 * Prints, after the driver's name and the PCI address as dev_printk()
 * writes them:
 *
 *   nnq<N>: hw-error NEURON_HW_ERR=<KEY> core=<c|-> engine=<name|->
 *   cause=<cause> action=<action>: <text>
 *
 * (one line) at KERN_ERR for reset-device and replace-device, else
 * KERN_WARNING; at most DEFAULT_RATELIMIT_BURST lines of one device and
 * cause per DEFAULT_RATELIMIT_INTERVAL (docs/decisions/0014-hw-error-log.md).
 * Through printk(), not dev_printk(): the device's SUBSYSTEM and DEVICE
 * lines that dev_printk() adds to the /dev/kmsg record would keep a rule
 * ending in ".*" from reaching the end of the record
 * (docs/decisions/0014-hw-error-log.md#hw-error-key). Any context but hard interrupt (the
 * interrupt handlers are threaded).
 */
void neuron_hw_error(struct neuron_device *ndev, u32 core, u32 engine,
		     enum neuron_hw_error_cause cause,
		     enum neuron_hw_error_action action, const char *fmt, ...)
{
	const char *eng = engine < NEURON_ENGINES_PER_CORE ?
			  neuron_engine_names[engine] : "-";
	const struct neuron_hw_error_words *c = &neuron_hw_error_causes[cause];
	struct device *dev = &ndev->pdev->dev;
	struct va_format vaf;
	char cs[12] = "-";
	va_list args;

	if (!___ratelimit(&ndev->hw_error_rs[cause], c->suppressed))
		return;
	if (core != NEURON_HW_ERROR_NA)
		snprintf(cs, sizeof(cs), "%u", core);
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (action >= NEURON_HWA_RESET_DEVICE)
		pr_err(NEURON_HW_ERROR_FMT, dev_driver_string(dev), dev_name(dev),
		       NEURON_DEV_NAME, ndev->id, c->key, cs, eng, c->name,
		       neuron_hw_error_actions[action], &vaf);
	else
		pr_warn(NEURON_HW_ERROR_FMT, dev_driver_string(dev), dev_name(dev),
			NEURON_DEV_NAME, ndev->id, c->key, cs, eng, c->name,
			neuron_hw_error_actions[action], &vaf);
	va_end(args);
}

/**
 * neuron_hw_gone() - whether the function no longer answers MMIO reads
 * @ndev: device, BAR0 mapped
 *
 * Return: true when the identity register reads all ones.
 */
bool neuron_hw_gone(struct neuron_device *ndev)
{
	return neuron_rd(ndev, NEURON_REG_ID) == U32_MAX;
}

/**
 * neuron_hw_reset() - reset the device and wait until it is ready
 * @ndev: device, BAR0 mapped
 *
 * Writes NEURON_REG_RESET (every engine stops, every queue is disabled,
 * work in flight is dropped) and polls NEURON_REG_DEV_STATUS until the
 * device reports READY, for at most half a second. Probe, recovery and
 * resume call it before bus mastering is (re-)enabled.
 *
 * Return: 0; -ENODEV if the device reads all ones; -ETIMEDOUT if it did
 * not become ready (logged with the last status read).
 */
int neuron_hw_reset(struct neuron_device *ndev)
{
	u32 status;
	int ret;

	neuron_wr(ndev, NEURON_REG_RESET, 1);
	ret = readl_poll_timeout(ndev->regs + NEURON_REG_DEV_STATUS, status,
				 status == U32_MAX ||
				 (status & NEURON_DEV_STATUS_READY),
				 NEURON_HW_POLL_US, NEURON_HW_TIMEOUT_US);
	if (status == U32_MAX)
		return -ENODEV;
	if (ret)
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_NOT_READY, NEURON_HWA_REPLACE_DEVICE,
				"not ready %u ms after reset (DEV_STATUS %#x)",
				NEURON_HW_TIMEOUT_MS, status);
	return ret;
}

/**
 * neuron_hw_wait_quiesced() - wait until the device has no DMA in flight
 * @ndev: device whose engines were stopped and queues disabled
 *
 * Polls NEURON_REG_DEV_STATUS for QUIESCED, for at most half a second.
 * On a timeout the log names every core NEURON_REG_BUSY_CORES still shows
 * busy; the caller goes on (the device is reset next, or is going away)
 * but must not free memory the device may still write before that reset.
 *
 * Return: 0; -ENODEV if the device reads all ones (nothing to wait for);
 * -ETIMEDOUT.
 */
int neuron_hw_wait_quiesced(struct neuron_device *ndev)
{
	unsigned long busy;
	u32 status;
	int ret, c;

	ret = readl_poll_timeout(ndev->regs + NEURON_REG_DEV_STATUS, status,
				 status == U32_MAX ||
				 (status & NEURON_DEV_STATUS_QUIESCED),
				 NEURON_HW_POLL_US, NEURON_HW_TIMEOUT_US);
	if (status == U32_MAX)
		return -ENODEV;
	if (!ret)
		return 0;
	busy = neuron_rd(ndev, NEURON_REG_BUSY_CORES);
	/* the device is reset or removed next: nothing for anyone to do */
	for_each_set_bit(c, &busy, NEURON_MAX_CORES)
		neuron_hw_error(ndev, c, NEURON_HW_ERROR_NA,
				NEURON_HWE_QUIESCE_TIMEOUT, NEURON_HWA_NONE,
				"did not quiesce in %u ms (DEV_STATUS %#x)",
				NEURON_HW_TIMEOUT_MS, status);
	if (!busy)
		neuron_hw_error(ndev, NEURON_HW_ERROR_NA, NEURON_HW_ERROR_NA,
				NEURON_HWE_QUIESCE_TIMEOUT, NEURON_HWA_NONE,
				"did not quiesce in %u ms (DEV_STATUS %#x, no core busy)",
				NEURON_HW_TIMEOUT_MS, status);
	return ret;
}

/**
 * neuron_hw_queue_off() - disable one queue and wait until the device agrees
 * @ndev: device
 * @core: core index
 * @queue: queue index
 *
 * Clears the queue's QUEUE_ENABLE bit and reads the register back until the
 * bit reads 0 (the device stopped writing the ring), for at most half a
 * second. Other queues of the core are untouched.
 *
 * Return: 0, -ENODEV (all ones) or -ETIMEDOUT (the caller logs what it
 * does about it: neuron_nq.c quarantines the ring).
 */
int neuron_hw_queue_off(struct neuron_device *ndev, u32 core, u32 queue)
{
	u32 off = NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_QUEUE_ENABLE);
	u32 val;
	int ret;

	neuron_wr(ndev, off, neuron_rd(ndev, off) & ~BIT(queue));
	ret = readl_poll_timeout(ndev->regs + off, val,
				 val == U32_MAX || !(val & BIT(queue)),
				 NEURON_HW_POLL_US, NEURON_HW_TIMEOUT_US);
	if (val == U32_MAX)
		return -ENODEV;
	return ret;
}

/**
 * neuron_hw_engine_reset() - stop one engine and clear a fatal halt
 * @ndev: device, live
 * @core: core index, < num_cores
 * @engine: enum neuron_engine, < NEURON_ENGINES_PER_CORE
 *
 * Reads the engine's status, writes CTRL.RESET and flushes it with a
 * second read: the engine is IDLE with PC 0 when this returns; semaphores,
 * $S and FEATURE_FLAGS are kept (docs/device-model.md "Engines").
 *
 * Return: the engine's state just before the reset (enum
 * neuron_engine_state; all ones from a device that is gone), so the
 * caller can tell whether it stopped a program.
 */
u32 neuron_hw_engine_reset(struct neuron_device *ndev, u32 core, u32 engine)
{
	u32 state = neuron_rd(ndev, NEURON_ENG_REG(core, engine, NEURON_ENG_STATUS));

	neuron_wr(ndev, NEURON_ENG_REG(core, engine, NEURON_ENG_CTRL),
		  NEURON_ENG_CTRL_RESET);
	neuron_rd(ndev, NEURON_ENG_REG(core, engine, NEURON_ENG_STATUS));
	return state;
}

/**
 * neuron_hw_notify_off() - disarm a core's completion notifications
 * @ndev: device, live
 * @core: core index, < num_cores
 *
 * Clears M2S_TRIGGER (every DMA queue) and AXI_NOTIFY, the registers
 * NEURON_IOC_NOTIFY_TRIGGER sets (docs/device-model.md#dma-engines,
 * #axi-evt-sem), and flushes the writes with a read.
 */
void neuron_hw_notify_off(struct neuron_device *ndev, u32 core)
{
	u32 base = NEURON_CORE_BASE(core);

	neuron_wr(ndev, base + NEURON_DMA_BASE + NEURON_DMA_M2S_TRIGGER, 0);
	neuron_wr(ndev, base + NEURON_EVT_SEM_BASE + NEURON_EVT_SEM_AXI_NOTIFY,
		  0);
	neuron_rd(ndev, base + NEURON_DMA_BASE + NEURON_DMA_M2S_TRIGGER);
}

/**
 * neuron_hw_axi_dropped() - a core's AXI_DROPPED counter
 * @ndev: device, live
 * @core: core index, < num_cores
 *
 * Return: the AXI_EVT_SEM records the core's EVT_SEM unit lost since the
 * function's last reset, a free-running u32 (docs/device-model.md#axi-evt-sem).
 */
u32 neuron_hw_axi_dropped(struct neuron_device *ndev, u32 core)
{
	return neuron_rd(ndev, NEURON_CORE_BASE(core) + NEURON_EVT_SEM_BASE +
			 NEURON_EVT_SEM_AXI_DROPPED);
}

/**
 * neuron_hw_core_scrub() - put a core's program state back to its reset values
 * @ndev: device, live
 * @core: core index; no program runs on it (its engines were reset)
 *
 * Clears what one owner's programs leave for the next: every event and
 * semaphore of the EVT_SEM unit, every engine's $S registers and feature
 * flags, the core's TRACE_ENABLE bits and its ROUTE word, back to
 * NEURON_ROUTE_DEFAULT (docs/decisions/0005-tenancy.md "a core changes hands
 * clean", docs/decisions/0022-route-programmable.md). AXI_EVT_SEM records must
 * be off already (neuron_hw_notify_off()), so the clearing writes make none.
 */
void neuron_hw_core_scrub(struct neuron_device *ndev, u32 core)
{
	u32 evt = NEURON_CORE_BASE(core) + NEURON_EVT_SEM_BASE;
	u32 i, e;

	for (i = 0; i < NEURON_EVT_SEM_COUNT; i++) {
		neuron_wr(ndev, evt + NEURON_EVT_SEM_EVENT(i), 0);
		neuron_wr(ndev, evt + NEURON_EVT_SEM_SET(i), 0);
	}
	for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
		for (i = 0; i < NEURON_ENG_NUM_SREGS; i++)
			neuron_wr(ndev, NEURON_ENG_REG(core, e, NEURON_ENG_SREG(i)), 0);
		if (ndev->gen != NEURON_GEN_SUNDA)
			neuron_wr(ndev, NEURON_ENG_REG(core, e, NEURON_ENG_FEATURE_FLAGS), 0);
	}
	neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_TRACE_ENABLE), 0);
	neuron_wr(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_ROUTE),
		  NEURON_ROUTE_DEFAULT);
	neuron_rd(ndev, NEURON_NOTIFIC_REG(core, NEURON_NOTIFIC_TRACE_ENABLE));
}

/**
 * neuron_hw_scrub_all() - put every core's program state back to reset values
 * @ndev: device, live, just reset (neuron_hw_reset()): no engine runs and no
 *	queue is enabled
 *
 * The device's RESET keeps semaphores, events, $S and feature flags
 * (docs/device-model.md "Reset, quiesce and failure"), and an owner whose
 * file outlived the fence of an unbind, a removal or a PCI error was never
 * scrubbed by neuron_owner_drop() (the fenced device is not touched then).
 * The enable path calls this before any file can own a core, so no tenant
 * reads what the last one left, and a free core always reads its reset
 * values (docs/decisions/0005-tenancy.md "a core changes hands clean").
 */
void neuron_hw_scrub_all(struct neuron_device *ndev)
{
	u32 c;

	for (c = 0; c < ndev->num_cores; c++) {
		neuron_hw_notify_off(ndev, c);
		neuron_hw_core_scrub(ndev, c);
	}
}
