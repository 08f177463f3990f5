/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of nnq.ko, system "neuron" (docs/architecture.md#tracepoints):
 * read them with trace-cmd (trace-cmd record -e neuron) or perf (perf record
 * -e 'neuron:*'), or from /sys/kernel/tracing/events/neuron/.
 *
 * Every field is a scalar copied in TP_fast_assign(): the device's instance
 * number N of /dev/nnqN (@dev), core and queue indices, counts, bit masks.
 * No pointer is stored and nothing is dereferenced when the event is
 * printed, so a record stays meaningful after the device or the queue is
 * gone. The values of enum neuron_edge, enum neuron_reset_cause and enum
 * neuron_pci_error are exported with TRACE_DEFINE_ENUM() so trace-cmd and
 * perf print their names.
 *
 * CREATE_TRACE_POINTS is defined in neuron_trace.c alone, a bottom file of
 * the call graph (docs/architecture.md#call-direction): the files that emit
 * events use the tracepoint symbols it defines and it calls no other file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM neuron

#if !defined(NEURON_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define NEURON_TRACE_H

#include <linux/tracepoint.h>
#include <linux/types.h>
#include <uapi/linux/neuron.h>

TRACE_DEFINE_ENUM(NEURON_EDGE_NOTIFIC);
TRACE_DEFINE_ENUM(NEURON_EDGE_THROTTLE);
TRACE_DEFINE_ENUM(NEURON_EDGE_FAULT);
TRACE_DEFINE_ENUM(NEURON_EDGE_RESET);
TRACE_DEFINE_ENUM(NEURON_EDGE_PCI_ERROR);
TRACE_DEFINE_ENUM(NEURON_EDGE_ENGINE_STOPPED);
TRACE_DEFINE_ENUM(NEURON_EDGE_HANG);
TRACE_DEFINE_ENUM(NEURON_RESET_REMOVE);
TRACE_DEFINE_ENUM(NEURON_RESET_FLR);
TRACE_DEFINE_ENUM(NEURON_RESET_PCI_ERROR);
TRACE_DEFINE_ENUM(NEURON_RESET_SUSPEND);
TRACE_DEFINE_ENUM(NEURON_RESET_SHUTDOWN);
TRACE_DEFINE_ENUM(NEURON_PCI_ERROR_NONFATAL);
TRACE_DEFINE_ENUM(NEURON_PCI_ERROR_FATAL);
TRACE_DEFINE_ENUM(NEURON_PCI_ERROR_PERMANENT);

#define neuron_trace_edge_name(edge)				\
	__print_symbolic(edge,					\
			 { NEURON_EDGE_NOTIFIC, "notific" },	\
			 { NEURON_EDGE_THROTTLE, "throttle" },	\
			 { NEURON_EDGE_FAULT, "fault" },	\
			 { NEURON_EDGE_RESET, "reset" },	\
			 { NEURON_EDGE_PCI_ERROR, "pci_error" }, \
			 { NEURON_EDGE_ENGINE_STOPPED, "engine_stopped" }, \
			 { NEURON_EDGE_HANG, "hang" })

#define neuron_trace_reset_name(cause)				\
	__print_symbolic(cause,					\
			 { NEURON_RESET_REMOVE, "remove" },	\
			 { NEURON_RESET_FLR, "flr" },		\
			 { NEURON_RESET_PCI_ERROR, "pci_error" }, \
			 { NEURON_RESET_SUSPEND, "suspend" },	\
			 { NEURON_RESET_SHUTDOWN, "shutdown" })

#define neuron_trace_pci_error_name(what)			\
	__print_symbolic(what,					\
			 { NEURON_PCI_ERROR_NONFATAL, "nonfatal" }, \
			 { NEURON_PCI_ERROR_FATAL, "fatal" },	\
			 { NEURON_PCI_ERROR_PERMANENT, "permanent" })

/* Queues: NEURON_IOC_NQ_INIT made one, a teardown freed one. */
TRACE_EVENT(neuron_nq_init,
	    TP_PROTO(int dev, u32 core, u32 queue, u32 size, u32 flags,
		     u32 threshold),
	    TP_ARGS(dev, core, queue, size, flags, threshold),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, queue)
			     __field(u32, size)
			     __field(u32, flags)
			     __field(u32, threshold)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->queue = queue;
			   __entry->size = size;
			   __entry->flags = flags;
			   __entry->threshold = threshold;
	    ),
	    TP_printk("dev=%d core=%u queue=%u size=%u flags=0x%x threshold=%u",
		      __entry->dev, __entry->core, __entry->queue, __entry->size,
		      __entry->flags, __entry->threshold)
);

TRACE_EVENT(neuron_nq_destroy,
	    TP_PROTO(int dev, u32 core, u32 queue, bool hw),
	    TP_ARGS(dev, core, queue, hw),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, queue)
			     __field(bool, hw)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->queue = queue;
			   __entry->hw = hw;
	    ),
	    TP_printk("dev=%d core=%u queue=%u hw=%d", __entry->dev,
		      __entry->core, __entry->queue, __entry->hw)
);

/*
 * NEURON_IOC_NQ_COALESCE set a live queue's count limit @threshold (records)
 * and time limit @coalesce_ns (docs/device-model.md#coalescing).
 */
TRACE_EVENT(neuron_nq_coalesce,
	    TP_PROTO(int dev, u32 core, u32 queue, u32 threshold,
		     u32 coalesce_ns),
	    TP_ARGS(dev, core, queue, threshold, coalesce_ns),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, queue)
			     __field(u32, threshold)
			     __field(u32, coalesce_ns)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->queue = queue;
			   __entry->threshold = threshold;
			   __entry->coalesce_ns = coalesce_ns;
	    ),
	    TP_printk("dev=%d core=%u queue=%u threshold=%u coalesce_ns=%u",
		      __entry->dev, __entry->core, __entry->queue,
		      __entry->threshold, __entry->coalesce_ns)
);

/*
 * Adaptive moderation (neuron_dim.c): DIM moved a queue from profile @from
 * to @to, now programmed as @threshold and @coalesce_ns.
 */
TRACE_EVENT(neuron_dim_profile,
	    TP_PROTO(int dev, u32 core, u32 queue, u32 from, u32 to,
		     u32 threshold, u32 coalesce_ns),
	    TP_ARGS(dev, core, queue, from, to, threshold, coalesce_ns),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, queue)
			     __field(u32, from)
			     __field(u32, to)
			     __field(u32, threshold)
			     __field(u32, coalesce_ns)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->queue = queue;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->threshold = threshold;
			   __entry->coalesce_ns = coalesce_ns;
	    ),
	    TP_printk("dev=%d core=%u queue=%u profile=%u->%u threshold=%u coalesce_ns=%u",
		      __entry->dev, __entry->core, __entry->queue,
		      __entry->from, __entry->to, __entry->threshold,
		      __entry->coalesce_ns)
);

/* NEURON_IOC_SUBMIT starts @count instructions on one engine (before START). */
TRACE_EVENT(neuron_submit,
	    TP_PROTO(int dev, u32 core, u32 engine, u32 count, u32 flags),
	    TP_ARGS(dev, core, engine, count, flags),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, engine)
			     __field(u32, count)
			     __field(u32, flags)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->engine = engine;
			   __entry->count = count;
			   __entry->flags = flags;
	    ),
	    TP_printk("dev=%d core=%u engine=%u count=%u flags=0x%x",
		      __entry->dev, __entry->core, __entry->engine, __entry->count,
		      __entry->flags)
);

/*
 * One interrupt edge handled (one struct neuron_event): @edge enum
 * neuron_edge, @core (NOTIFIC edges), @cause (NOTIFIC: tpb_notific_intr
 * bits; THROTTLE: THROTTLE_STATUS; FAULT: NEURON_FAULT_* bits), @queues
 * (NOTIFIC: THRESHOLD_STATUS bits), @count (the edge's sequence number).
 */
TRACE_EVENT(neuron_irq_edge,
	    TP_PROTO(int dev, u32 edge, u32 core, u32 cause, u32 queues,
		     u64 count),
	    TP_ARGS(dev, edge, core, cause, queues, count),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, edge)
			     __field(u32, core)
			     __field(u32, cause)
			     __field(u32, queues)
			     __field(u64, count)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->edge = edge;
			   __entry->core = core;
			   __entry->cause = cause;
			   __entry->queues = queues;
			   __entry->count = count;
	    ),
	    TP_printk("dev=%d edge=%s core=%u cause=0x%x queues=0x%x count=%llu",
		      __entry->dev, neuron_trace_edge_name(__entry->edge),
		      __entry->core, __entry->cause, __entry->queues,
		      __entry->count)
);

/* The eventfd bound to a queue was signalled for its threshold edge. */
TRACE_EVENT(neuron_threshold_wake,
	    TP_PROTO(int dev, u32 core, u32 queue),
	    TP_ARGS(dev, core, queue),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, queue)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->queue = queue;
	    ),
	    TP_printk("dev=%d core=%u queue=%u", __entry->dev, __entry->core,
		      __entry->queue)
);

/* Interrupt storms: @causes masked for @holdoff_ms, then unmasked. */
TRACE_EVENT(neuron_storm_mask,
	    TP_PROTO(int dev, u32 core, u32 causes, u32 holdoff_ms),
	    TP_ARGS(dev, core, causes, holdoff_ms),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, causes)
			     __field(u32, holdoff_ms)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->causes = causes;
			   __entry->holdoff_ms = holdoff_ms;
	    ),
	    TP_printk("dev=%d core=%u causes=0x%x holdoff_ms=%u", __entry->dev,
		      __entry->core, __entry->causes, __entry->holdoff_ms)
);

TRACE_EVENT(neuron_storm_unmask,
	    TP_PROTO(int dev, u32 core, u32 causes),
	    TP_ARGS(dev, core, causes),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, core)
			     __field(u32, causes)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->core = core;
			   __entry->causes = causes;
	    ),
	    TP_printk("dev=%d core=%u causes=0x%x", __entry->dev, __entry->core,
		      __entry->causes)
);

/*
 * The lifecycle paths (neuron_lifecycle.c): the disable path starts
 * (@cause enum neuron_reset_cause, @hw_ok whether the device is touched)
 * and ends (@queues torn down, @unread records they held); the enable path
 * ends (@ret 0 or its error). AER reports (neuron_recovery.c): @what enum
 * neuron_pci_error.
 */
TRACE_EVENT(neuron_disable_begin,
	    TP_PROTO(int dev, u32 cause, bool hw_ok),
	    TP_ARGS(dev, cause, hw_ok),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, cause)
			     __field(bool, hw_ok)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->cause = cause;
			   __entry->hw_ok = hw_ok;
	    ),
	    TP_printk("dev=%d cause=%s hw_ok=%d", __entry->dev,
		      neuron_trace_reset_name(__entry->cause), __entry->hw_ok)
);

TRACE_EVENT(neuron_disable_end,
	    TP_PROTO(int dev, u32 cause, u32 queues, u64 unread),
	    TP_ARGS(dev, cause, queues, unread),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, cause)
			     __field(u32, queues)
			     __field(u64, unread)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->cause = cause;
			   __entry->queues = queues;
			   __entry->unread = unread;
	    ),
	    TP_printk("dev=%d cause=%s queues=%u unread=%llu", __entry->dev,
		      neuron_trace_reset_name(__entry->cause), __entry->queues,
		      __entry->unread)
);

TRACE_EVENT(neuron_enable,
	    TP_PROTO(int dev, int ret),
	    TP_ARGS(dev, ret),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(int, ret)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->ret = ret;
	    ),
	    TP_printk("dev=%d ret=%d", __entry->dev, __entry->ret)
);

TRACE_EVENT(neuron_pci_error,
	    TP_PROTO(int dev, u32 what),
	    TP_ARGS(dev, what),
	    TP_STRUCT__entry(__field(int, dev)
			     __field(u32, what)
	    ),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->what = what;
	    ),
	    TP_printk("dev=%d what=%s", __entry->dev,
		      neuron_trace_pci_error_name(__entry->what))
);

#endif /* NEURON_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE neuron_trace
#include <trace/define_trace.h>
