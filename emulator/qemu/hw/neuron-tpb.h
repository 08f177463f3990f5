/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: private state of the emulated Neuron PCI function.
 *
 * Register, record and instruction layouts are not defined here: they come
 * from the project's shared headers (include/neuron/), copied into QEMU's
 * include/neuron/ by emulator/qemu/build-qemu.sh. Behaviour follows
 * docs/device-model.md; docs/hardware.md#host-paths (device-to-host
 * notification path) and docs/hardware.md#dge (DGE error notifications) are the
 * hardware spec.
 *
 * Call direction. Calls between the files go one way only, downward:
 *
 *   neuron-tpb.c      the PCI function: owns NeuronTPBState and the cores,
 *        |            dispatches BAR0 to the blocks, global page, resets,
 *        |            and handles the blocks' upcalls (below)
 *        v
 *   neuron-engine.c   engine registers, the instruction state machine
 *        |
 *        v
 *   neuron-dge.c      DGE copy: a helper of the engine (device memory only)
 *   neuron-dma.c      the 16 DMA engines: packet split, M2S_TRIGGER
 *                     (the engine and the DGE helper use the split)
 *   neuron-notific.c  queues and interrupt causes: the engine pushes records
 *   neuron-evtsem.c   semaphores and events: the engine applies updates
 *
 * neuron-tpb.c also calls NOTIFIC, EVT_SEM and the DMA block directly for
 * their MMIO windows and resets; EVT_SEM hands its AXI_EVT_SEM records to
 * NOTIFIC (neuron_notific_push()). Below the blocks there are only the inline helpers of
 * this header (device memory, upcall). A block never calls a function of a
 * file above it and does not know NeuronTPBState: what it needs from the
 * device (DMA master, device memory, configuration) is handed to its core
 * at realize, and everything it reports upward goes through one narrow
 * interface, neuron_core_up() with a NeuronUpcall, which neuron-tpb.c
 * handles (sending MSI-X, latching faults, waking engines).
 */
#ifndef HW_MISC_NEURON_TPB_H
#define HW_MISC_NEURON_TPB_H

#include "hw/pci/pci.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "neuron/regs.h"
#include "neuron/notification.h"
#include "neuron/emu_isa.h"

#define TYPE_NEURON_TPB "neuron-tpb"
OBJECT_DECLARE_SIMPLE_TYPE(NeuronTPBState, NEURON_TPB)

/* Picoseconds per NOTIFIC timestamp tick (QEMU_CLOCK_VIRTUAL counts ns). */
#define NEURON_TIMESTAMP_INC_PS         1000

/* Instructions an engine retires per timer callback before yielding. */
#define NEURON_ENGINE_BATCH             64
/* Virtual-time gap after a full batch, so the vCPU gets the lock (ns). */
#define NEURON_ENGINE_BATCH_GAP_NS      1000

/* LAST_ERROR before any fatal error (matches the UAPI's "0xff if none"). */
#define NEURON_LAST_ERROR_NONE          0xff

typedef struct NeuronCore NeuronCore;

/**
 * struct NeuronDevMem - device memory (BAR4) as the blocks see it
 * @mr:   the RAM region, for dirty tracking
 * @ptr:  its host mapping
 * @size: bytes (the mem-size property)
 */
typedef struct NeuronDevMem {
    MemoryRegion *mr;
    uint8_t *ptr;
    uint64_t size;
} NeuronDevMem;

/* neuron_mem_range_ok() - whether [@off, @off + @len) lies in device memory */
static inline bool neuron_mem_range_ok(const NeuronDevMem *m, uint64_t off,
                                       uint64_t len)
{
    return off <= m->size && len <= m->size - off;
}

/*
 * neuron_mem_at() - the host pointer of device memory [@off, @off + @len),
 * or NULL if any of it lies outside. The one way the blocks reach device
 * memory (program fetch, DGE copies and their index tables, device-memory
 * rings): no value a guest writes into a register, a program or an index
 * table can make the model touch host memory outside its RAM block, even
 * where a caller's own check is wrong (docs/device-model.md#memory-access).
 */
static inline uint8_t *neuron_mem_at(const NeuronDevMem *m, uint64_t off,
                                     uint64_t len)
{
    return neuron_mem_range_ok(m, off, len) ? m->ptr + off : NULL;
}

/*
 * The upward interface: what a block reports to the device. neuron-tpb.c
 * installs the handler in every core (NeuronCore.up) and decides what each
 * event does; the blocks only say what happened.
 */
typedef enum NeuronUpcall {
    NEURON_UP_IRQ,              /* the core's INTR_STATUS & INTR_MASK went
                                   0 -> nonzero: send its MSI-X vector */
    NEURON_UP_FAULT,            /* arg: NEURON_FAULT_* bits the core latches */
    NEURON_UP_THROTTLE,         /* an engine of the core ran THROTTLE */
    NEURON_UP_SEM_CHANGED,      /* a semaphore or event changed: wake the
                                   core's waiting engines */
    NEURON_UP_QUEUE_ROOM,       /* arg: queue that has room again, was
                                   disabled or changed policy (-1: any):
                                   wake engines stalled on it */
} NeuronUpcall;

typedef void NeuronUpcallFn(void *opaque, NeuronCore *c, NeuronUpcall ev,
                            int arg);

/* Largest fault-torn-gap-us: the main loop sleeps that long per record. */
#define NEURON_TORN_GAP_US_MAX 1000

/**
 * struct NeuronCoreConfig - device configuration a core's blocks act on
 * @gen:             enum neuron_gen
 * @stuck_engine:    engine of this core that never retires (-1 none)
 * @dma_error_queue: queue of this core whose ring writes fail (-1 none)
 * @dma_error_bits:  FAULT_STATUS bits a failed ring write sets (property
 *                   fault-dma-error-bits: DMA_ERROR and maybe bits the
 *                   UAPI has no name for)
 * @intr_storm:      tpb_notific_intr cause stuck asserted (-1 none)
 * @stuck_disable_queue: queue of this core that ignores a QUEUE_ENABLE
 *                   write clearing its bit (-1 none): it stays enabled and
 *                   keeps writing its ring until RESET or a function reset
 * @insn_delay_ns:   virtual-time gap after every instruction (0 none)
 * @throttle_armed:  THROTTLE_CTRL bit 0 (the global register, mirrored)
 * @torn_header_first: negative control: host-ring records are written
 *                   header word first, then the body (property
 *                   fault-torn-header-first), so a polling consumer can
 *                   see a torn record
 * @torn_gap_us:     with @torn_header_first, how long the record stays torn
 *                   (host time between the two writes; property
 *                   fault-torn-gap-us), so a busy-polling consumer sees
 *                   torn records within a few thousand
 *
 * Written by neuron-tpb.c only (from the properties at realize, the
 * global page at run time); the blocks read it.
 */
typedef struct NeuronCoreConfig {
    uint32_t gen;
    int stuck_engine;
    int dma_error_queue;
    uint32_t dma_error_bits;
    int intr_storm;
    int stuck_disable_queue;
    uint64_t insn_delay_ns;
    bool throttle_armed;
    bool torn_header_first;
    uint32_t torn_gap_us;
    uint32_t wrbuf_depth;               /* property wrbuf-depth */
    uint32_t wrbuf_drain_ns;            /* property wrbuf-drain-ns: reset value */
} NeuronCoreConfig;

/**
 * struct NeuronQueue - one software notification queue
 * (docs/hardware.md#notific)
 * @base:       ring address: a bus address, or a BAR4 offset if
 *              @ctrl has NEURON_NQ_CTRL_DEVICE_MEM
 * @size:       ring bytes (power of two, >= NEURON_NQ_MIN_BYTES)
 * @head:       consumer count, free-running records (host writes it)
 * @tail:       producer count, free-running records (device advances it)
 * @threshold:  unread records that raise intr_0, 0 = off
 * @ctrl:       NEURON_NQ_CTRL_* bits
 * @overflow_count: records written over an unread one (ignore-full)
 * @drop_count: records dropped (queue disabled, full without a policy,
 *              DMA error, input buffer full with the drop policy)
 * @stalled:    an engine waits for space (STATUS.STALLED)
 * @dma_error:  the last ring write failed (STATUS.DMA_ERROR)
 * @threshold_fired: intr_0 already raised since the last HEAD write (the
 *              queue's threshold interrupt is disarmed until the next one)
 * @coalesce_ns: COALESCE_NS(q): the interrupt's time limit, ns after the
 *              first unread record; 0 = none (docs/device-model.md#coalescing)
 */
typedef struct NeuronQueue {
    uint64_t base;
    uint32_t size;
    uint32_t head;
    uint32_t tail;
    uint32_t threshold;
    uint32_t ctrl;
    uint32_t overflow_count;
    uint32_t drop_count;
    bool stalled;
    bool dma_error;
    bool threshold_fired;
    uint32_t coalesce_ns;
} NeuronQueue;

/**
 * struct NeuronCoalesceTimer - a queue's interrupt-coalescing time limit
 * (docs/device-model.md#coalescing)
 * @core:  the core whose NOTIFIC block holds the queue
 * @qi:    the queue
 * @timer: QEMU_CLOCK_VIRTUAL; pending while the time limit runs
 *
 * Kept beside NeuronCore.queue[] rather than in it, so a reset that clears
 * the queues does not lose the timers.
 */
typedef struct NeuronCoalesceTimer {
    NeuronCore *core;
    unsigned int qi;
    QEMUTimer *timer;
} NeuronCoalesceTimer;

/**
 * struct NeuronDmaSplit - a DGE descriptor spread over the DMA engines
 * (docs/device-model.md#dma-engines, neuron_dma_split())
 * @map:         bit i: DMA engine i takes packets (the record's dma_map)
 * @num_packets: packets of every engine in @map but the last, 1..4096
 * @packets:     packets of each engine (0 outside @map)
 */
typedef struct NeuronDmaSplit {
    uint16_t map;
    uint16_t num_packets;
    uint32_t packets[NEURON_DMA_ENGINES];
} NeuronDmaSplit;

/*
 * NOTIFIC input buffer (docs/device-model.md#wrbuf). The pseudo queue an
 * engine stalled on a full input buffer waits on (NeuronEngine.stalled_queue,
 * NEURON_UP_QUEUE_ROOM's argument): not a ring, so no STATUS.STALLED.
 */
#define NEURON_WRBUF_STALL      NEURON_NUM_SW_QUEUES

/**
 * struct NeuronWrbufEntry - one record waiting for the ring writer
 * @rec:     the record as the producer made it (header byte: type only)
 * @qi:      its queue, routed when it entered the buffer
 * @arrival: QEMU_CLOCK_VIRTUAL ns when it entered
 */
typedef struct NeuronWrbufEntry {
    union neuron_isa_notification rec;
    unsigned int qi;
    int64_t arrival;
} NeuronWrbufEntry;

/*
 * Where an engine is inside the current instruction. Each step has at most
 * one side effect and at most one record; a record that cannot be written
 * yet (full, backpressured queue) is parked in NeuronEngine.pending and the
 * engine resumes by writing it, never by redoing the step that made it.
 */
typedef enum NeuronStep {
    NEURON_STEP_FETCH,          /* read and validate the instruction at PC */
    NEURON_STEP_WAIT,           /* EVENTS block wait_mode */
    NEURON_STEP_INST_START,     /* trace bracket */
    NEURON_STEP_OP,             /* the operation itself */
    NEURON_STEP_DMA,            /* DGE_COPY: one DMA record per armed
                                   DMA queue of the copy (dma_owed) */
    NEURON_STEP_UPDATE,         /* EVENTS block update_mode */
    NEURON_STEP_INST_END,       /* trace bracket */
    NEURON_STEP_RETIRE,         /* PC++, EXEC_COUNT++ */
    NEURON_STEP_FATAL,          /* error record written: halt */
} NeuronStep;

/* What an operation step did. */
typedef enum NeuronOpResult {
    NEURON_OP_DONE,             /* completed; a record may be pending */
    NEURON_OP_BLOCKED,          /* waits on a semaphore: WAITING */
    NEURON_OP_BUSY,             /* still working, timer armed */
    NEURON_OP_FATAL,            /* fatal record pending, halt after it */
} NeuronOpResult;

/* Result of handing a record to NOTIFIC. */
typedef enum NeuronPushResult {
    NEURON_PUSH_WRITTEN,        /* in the ring, TAIL moved */
    NEURON_PUSH_DROPPED,        /* lost (policy or error); producer goes on */
    NEURON_PUSH_STALLED,        /* full with backpressure, or the input
                                   buffer full: retry later */
} NeuronPushResult;

/**
 * struct NeuronEngine - one of the five engines of a core
 *
 * Registers (regs.h, NEURON_ENG_*) first, then the execution state.
 * @pending holds a record that could not be written yet; while it is set the
 * engine does nothing but retry it (no record lost or duplicated).
 */
typedef struct NeuronEngine {
    NeuronCore *core;
    unsigned int index;                 /* enum neuron_engine, also block_id */
    QEMUTimer *timer;                   /* runs it, QEMU_CLOCK_VIRTUAL */

    uint32_t state;                     /* enum neuron_engine_state */
    uint64_t prog_base;                 /* BAR4 offset of instruction 0 */
    uint32_t prog_count;                /* instructions */
    uint32_t pc;                        /* current/next instruction index */
    uint32_t soft_reset_counter;        /* programs started */
    uint32_t exec_count;                /* instructions retired */
    uint32_t feature_flags;             /* local reg 38 (docs/hardware.md#dge-feature-flags) */
    uint32_t last_error;                /* error_id of the last fatal error */
    uint32_t sreg[NEURON_ENG_NUM_SREGS]; /* $S registers */

    NeuronStep step;
    struct neuron_emu_insn insn;        /* the instruction at pc, decoded */
    bool traced;                        /* INST_START written: INST_END owed */
    bool halt_after;                    /* HALT: go idle when it retires */
    bool delay_armed;                   /* DELAY started, deadline below */
    int64_t delay_deadline_ns;
    uint16_t crc_in;                    /* data_crc for INST_START */
    uint16_t crc_out;                   /* data_crc for INST_END */
    uint32_t dma_owed;                  /* DMA records still to write */
    NeuronDmaSplit dma;                 /* the last emitted DGE copy's split */

    bool has_pending;
    unsigned int pending_class;         /* enum neuron_notific_class */
    union neuron_isa_notification pending;
    int stalled_queue;                  /* queue it waits on, -1 if none */
} NeuronEngine;

/**
 * struct NeuronCore - one TPB: NOTIFIC block, engines, EVT_SEM unit
 * @pdev:               DMA master for host-memory rings
 * @mem:                device memory
 * @cfg:                configuration (struct NeuronCoreConfig)
 * @up:                 upcall handler, with @up_opaque (neuron_core_up())
 * @ts_hi_latch:        TIMESTAMP_HI as latched by the last TIMESTAMP_LO read
 * @intr_status:        tpb_notific_intr_0..8, W1C
 * @intr_mask:          1 = the cause raises the core's MSI-X vector
 */
struct NeuronCore {
    unsigned int index;
    PCIDevice *pdev;
    const NeuronDevMem *mem;
    NeuronCoreConfig cfg;
    NeuronUpcallFn *up;
    void *up_opaque;

    /* NOTIFIC (neuron-notific.c) */
    uint32_t ts_hi_latch;
    uint32_t intr_status;
    uint32_t intr_mask;
    uint32_t queue_enable;
    uint32_t sw_backpressure;
    uint32_t ignore_full;
    uint32_t route;
    uint32_t trace_enable;
    uint32_t threshold_status;
    NeuronQueue queue[NEURON_NUM_SW_QUEUES];
    NeuronCoalesceTimer coalesce[NEURON_NUM_SW_QUEUES];

    /* NOTIFIC input buffer (neuron-notific.c, docs/device-model.md#wrbuf) */
    NeuronWrbufEntry wrbuf[NEURON_WRBUF_DEPTH_MAX];
    unsigned int wrbuf_first;           /* index of the oldest entry */
    unsigned int wrbuf_level;           /* entries held */
    uint32_t wrbuf_drain_ns;            /* WRBUF_DRAIN_NS */
    uint32_t wrbuf_drop;                /* WRBUF_DROP: per-queue drop policy */
    uint32_t wrbuf_full_status;         /* W1C, wr_buffer_full_0..29 */
    uint32_t wrbuf_drop_status;         /* W1C, wr_buffer_drop_0..29 */
    uint32_t wrbuf_stalled;             /* queues whose producer waits */
    uint32_t wrbuf_full_count[NEURON_NUM_SW_QUEUES];
    uint32_t wrbuf_drop_count[NEURON_NUM_SW_QUEUES];
    uint32_t ovf_owed_hw;               /* queues whose next record carries
                                           hardware_queue_overflow */
    uint32_t ovf_owed_sw;               /* ... software_queue_overflow */
    int64_t wrbuf_next_ns;              /* the writer is free from then */
    QEMUTimer *wrbuf_timer;             /* the ring writer */

    /* engines (neuron-engine.c) */
    NeuronEngine engine[NEURON_ENGINES_PER_CORE];

    /* EVT_SEM (neuron-evtsem.c) */
    uint32_t sem[NEURON_EVT_SEM_COUNT];
    uint8_t event[NEURON_EVT_SEM_COUNT];
    uint32_t axi_notify;                /* AXI_NOTIFY */
    uint32_t axi_dropped;               /* AXI_DROPPED */
    bool axi_has_parked;                /* an AXI_EVT_SEM record waits */
    union neuron_isa_notification axi_parked;

    /* DMA engines (neuron-dma.c) */
    uint32_t dma_trigger;               /* M2S_TRIGGER */
    uint32_t dma_packets[NEURON_DMA_ENGINES];
};

/* neuron_core_up() - report @ev (with @arg) to the device: the only way up */
static inline void neuron_core_up(NeuronCore *c, NeuronUpcall ev, int arg)
{
    c->up(c->up_opaque, c, ev, arg);
}

struct NeuronTPBState {
    PCIDevice parent_obj;

    MemoryRegion mmio;                  /* BAR0 */
    MemoryRegion bar4;                  /* BAR4: @mem under @mem_dead */
    MemoryRegion mem;                   /* device memory */
    NeuronDevMem devmem;                /* the blocks' view of it */
    MemoryRegion mem_dead;              /* all-ones over BAR4 while dead */
    MemoryRegion msix_dead;             /* all-ones over BAR2 while dead */
    uint8_t pm_cap;                     /* config offset of the PM cap */

    /* properties */
    uint32_t num_cores;
    uint64_t mem_size;
    char *gen_name;
    int32_t fault_dma_error_queue;      /* core * 10 + queue, -1 off */
    uint32_t fault_dma_error_bits;      /* FAULT_STATUS bits of a failed write */
    int32_t fault_stuck_engine;         /* core * 5 + engine, -1 off */
    int32_t fault_intr_storm;           /* core * 9 + intr cause, -1 off */
    uint64_t insn_delay_ns;
    uint32_t reset_latency_us;
    int32_t fault_stuck_busy;           /* core, -1 off */
    int32_t fault_stuck_disable;        /* core * 10 + queue, -1 off */
    bool fault_torn_header_first;       /* host rings: header word first */
    uint32_t fault_torn_gap_us;         /* and the body this long after */
    uint32_t wrbuf_depth;               /* NOTIFIC input buffer records */
    uint32_t wrbuf_drain_ns;            /* ring writer ns per record */
    bool vanished;                      /* run-time QOM property */
    bool fault_never_ready;             /* run-time QOM property */

    uint32_t gen;                       /* enum neuron_gen */
    NeuronCore *cores;

    /* reset in progress until reset_timer fires (DEV_STATUS.READY) */
    QEMUTimer *reset_timer;
    bool ready;

    /* global page */
    uint32_t fault_status;
    uint32_t fault_cores;               /* FAULT_CORES: bit per core */
    uint32_t fault_mask;
    uint32_t throttle_status;
    uint32_t throttle_ctrl;
};

/*
 * Entry points, top to bottom. neuron-tpb.c has none: nothing calls up.
 */

/* neuron-engine.c: called by neuron-tpb.c */
void neuron_engine_init(NeuronEngine *e, NeuronCore *c, unsigned int index);
void neuron_engine_finalize(NeuronEngine *e);
void neuron_engine_reset(NeuronEngine *e, bool power_on);
uint32_t neuron_engine_read(NeuronEngine *e, hwaddr off);
void neuron_engine_write(NeuronEngine *e, hwaddr off, uint32_t val);
void neuron_engine_wake_waiters(NeuronCore *c);
void neuron_engine_wake_queue(NeuronCore *c, int q);
bool neuron_engine_busy(NeuronEngine *e);

/* neuron-dge.c: called by neuron-engine.c */

/*
 * Structural failure bits of neuron_dge_check(), after SRC 1 and DST 2:
 * an unknown backend; a bad index encoding (mode byte, index table, length
 * of an indirect descriptor: docs/device-model.md "DGE copy").
 */
#define NEURON_DGE_BAD_BACKEND  0x4
#define NEURON_DGE_BAD_INDEX    0x8
/* more packets than the 16 DMA engines take (docs/device-model.md#dma-engines) */
#define NEURON_DGE_BAD_LENGTH   0x10

/* metadata_hi.info of a DGE bounds record: bits 3..2, index OOB directions */
#define NEURON_DGE_INFO_INDEX_SHIFT 2

/* The record a DGE_COPY asks its engine to write. */
typedef enum NeuronDgeRecord {
    NEURON_DGE_RECORD_NONE,
    NEURON_DGE_RECORD_BOUNDS,           /* SEQUENCER_NONFATAL, DGE_BOUNDS */
    NEURON_DGE_RECORD_BOUNDS_FATAL,     /* SEQUENCER_FATAL, DGE_BOUNDS: halt */
    NEURON_DGE_RECORD_MEMORY_ERROR,     /* MEMORY_ERROR, info_kind OTHER */
    NEURON_DGE_RECORD_METADATA,         /* DGE_METADATA packet notification */
} NeuronDgeRecord;

/**
 * struct NeuronDgeDesc - a DGE_COPY's descriptor in host byte order, decoded
 * by neuron_dge_decode() from the little-endian instruction
 * (<linux/neuron_isa.h>)
 * @src:          source (BAR4 offset)
 * @dst:          destination (BAR4 offset)
 * @length:       bytes (of an indirect descriptor: each direction's window)
 * @idx_table:    the index table (BAR4 offset) of an indirect descriptor
 *                (the instruction's reserved0)
 * @bc_src:       the source's BOUND_CHECK_REG byte (NEURON_ISA_BC_*)
 * @bc_dst:       the destination's
 * @indirect:     the DMA_INDIRECT_FLAGS byte (NEURON_ISA_INDIRECT_*)
 * @backend:      enum neuron_dge_backend
 * @mode:         the instruction's mode byte (NEURON_DGE_F_*)
 */
typedef struct NeuronDgeDesc {
    uint32_t src;
    uint32_t dst;
    uint32_t length;
    uint32_t idx_table;
    uint8_t bc_src;
    uint8_t bc_dst;
    uint8_t indirect;
    uint8_t backend;
    uint8_t mode;
} NeuronDgeDesc;

/**
 * struct NeuronDgeCopy - one DGE_COPY as the engine hands it to the DGE
 * @mem:          device memory, where the copy happens
 * @desc:         the (structurally valid) descriptor, decoded
 * @sreg:         the engine's $S registers, for the bound limits
 * @packet_notif: FEATURE_FLAGS DGE_PACKET_NOTIF
 * @want_crc:     the instruction is traced: compute @crc_out
 * @who:          log prefix naming core, engine and PC
 *
 * Working state of neuron_dge_exec():
 * @idx:          an indirect copy's index table, read once before anything
 *                is checked or copied (docs/device-model.md "DGE copy")
 *
 * Results, filled by neuron_dge_exec():
 * @record:       the record the engine is to write
 * @emitted:      the descriptor was emitted and its bytes copied (its
 *                packets went to the DMA engines)
 * @dirs:         BOUNDS records: every failing direction
 * @info:         BOUNDS records: bits 1..0 the failing directions the record
 *                reports, bits 3..2 those that failed on an index
 * @bc_reg:       BOUNDS records: the first failing direction's bc_reg
 * @crc_out:      data_crc of INST_END (the destination after the copy)
 */
typedef struct NeuronDgeCopy {
    const NeuronDevMem *mem;
    NeuronDgeDesc desc;
    const uint32_t *sreg;
    bool packet_notif;
    bool want_crc;
    const char *who;

    uint32_t *idx;

    NeuronDgeRecord record;
    bool emitted;
    uint8_t dirs;
    uint8_t info;
    uint8_t bc_reg;
    uint16_t crc_out;
} NeuronDgeCopy;

uint16_t neuron_crc16(const uint8_t *data, uint64_t len);
void neuron_dge_decode(const struct neuron_emu_insn *in, NeuronDgeDesc *d);
uint8_t neuron_dge_check(const NeuronDgeDesc *d, unsigned int *bc_reg);
uint16_t neuron_dge_input_crc(const NeuronDevMem *m, const NeuronDgeDesc *d);
void neuron_dge_exec(NeuronDgeCopy *op);

/* neuron-dma.c: called by neuron-tpb.c, neuron-engine.c and neuron-dge.c */
void neuron_dma_reset(NeuronCore *c);
bool neuron_dma_split(uint32_t length, NeuronDmaSplit *out);
void neuron_dma_complete(NeuronCore *c, const NeuronDmaSplit *s);
uint32_t neuron_dma_armed(NeuronCore *c, uint32_t map);
uint32_t neuron_dma_read(NeuronCore *c, hwaddr off);
void neuron_dma_write(NeuronCore *c, hwaddr off, uint32_t val);

/* neuron-notific.c: called by neuron-tpb.c and neuron-engine.c */
uint64_t neuron_timestamp_ps(void);
void neuron_notific_init(NeuronCore *c);
void neuron_notific_finalize(NeuronCore *c);
void neuron_notific_reset(NeuronCore *c);
void neuron_notific_disable_all(NeuronCore *c);
uint32_t neuron_notific_read(NeuronCore *c, hwaddr off);
void neuron_notific_write(NeuronCore *c, hwaddr off, uint32_t val);
uint32_t neuron_doorbell_read(NeuronCore *c, unsigned int q, hwaddr off);
void neuron_doorbell_write(NeuronCore *c, unsigned int q, hwaddr off,
                           uint32_t val);
void neuron_notific_raise(NeuronCore *c, unsigned int cause);
NeuronPushResult neuron_notific_push(NeuronCore *c, unsigned int cls,
                                     union neuron_isa_notification *rec,
                                     int *stall_queue);
void neuron_notific_unstall(NeuronCore *c, unsigned int q);
bool neuron_notific_traced(NeuronCore *c, unsigned int engine);
bool neuron_notific_busy(NeuronCore *c);

/* neuron-evtsem.c: called by neuron-tpb.c and neuron-engine.c */
void neuron_evtsem_reset(NeuronCore *c);
uint32_t neuron_evtsem_read(NeuronCore *c, hwaddr off);
void neuron_evtsem_write(NeuronCore *c, hwaddr off, uint32_t val);
uint32_t neuron_evtsem_apply(NeuronCore *c, unsigned int mode,
                             unsigned int idx, uint32_t value);
bool neuron_evtsem_is_event_mode(unsigned int mode);
uint32_t neuron_evtsem_sem(NeuronCore *c, unsigned int idx);
bool neuron_evtsem_event(NeuronCore *c, unsigned int idx);
bool neuron_evtsem_try_dec(NeuronCore *c, unsigned int idx, uint32_t value);
void neuron_evtsem_retry(NeuronCore *c);
void neuron_evtsem_drop_parked(NeuronCore *c);
bool neuron_evtsem_busy(NeuronCore *c);

#endif /* HW_MISC_NEURON_TPB_H */
