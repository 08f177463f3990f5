/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * neuron-tpb: private state of the emulated Neuron PCI function.
 *
 * Register, record and instruction layouts are not defined here: they come
 * from the project's shared headers (include/neuron/), copied into QEMU's
 * include/neuron/ by emulator/qemu/build-qemu.sh. Behaviour follows
 * docs/device-model.md; docs/hardware.md says which of it is the real
 * hardware's (the notification path, the DGE error notifications) and which
 * is ours.
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
 *              DMA error)
 * @stalled:    an engine waits for space (STATUS.STALLED)
 * @dma_error:  the last ring write failed (STATUS.DMA_ERROR)
 * @threshold_fired: intr_0 already raised since the last HEAD write
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
} NeuronQueue;

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
    NEURON_PUSH_STALLED,        /* full with backpressure: retry later */
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
    uint32_t feature_flags;             /* local reg 38 */
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

    bool has_pending;
    unsigned int pending_class;         /* enum neuron_notific_class */
    union neuron_isa_notification pending;
    int stalled_queue;                  /* queue it waits on, -1 if none */
} NeuronEngine;

/**
 * struct NeuronCore - one TPB: NOTIFIC block, engines, EVT_SEM unit
 * @ts_hi_latch:        TIMESTAMP_HI as latched by the last TIMESTAMP_LO read
 * @intr_status:        tpb_notific_intr_0..8, W1C
 * @intr_mask:          1 = the cause raises the core's MSI-X vector
 */
struct NeuronCore {
    NeuronTPBState *dev;
    unsigned int index;

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

    NeuronEngine engine[NEURON_ENGINES_PER_CORE];

    uint32_t sem[NEURON_EVT_SEM_COUNT];
    uint8_t event[NEURON_EVT_SEM_COUNT];
};

struct NeuronTPBState {
    PCIDevice parent_obj;

    MemoryRegion mmio;                  /* BAR0 */
    MemoryRegion mem;                   /* BAR4, device memory */
    uint8_t *mem_ptr;

    /* properties */
    uint32_t num_cores;
    uint64_t mem_size;
    char *gen_name;
    int32_t fault_dma_error_queue;      /* core * 10 + queue, -1 off */
    int32_t fault_stuck_engine;         /* core * 5 + engine, -1 off */
    int32_t fault_intr_storm;           /* core * 9 + intr cause, -1 off */
    uint64_t insn_delay_ns;

    uint32_t gen;                       /* enum neuron_gen */
    NeuronCore *cores;

    /* global page */
    uint32_t fault_status;
    uint32_t fault_mask;
    uint32_t throttle_status;
    uint32_t throttle_ctrl;
};

/* neuron-tpb.c */
void neuron_msix_notify(NeuronTPBState *s, unsigned int vector);
void neuron_fault_raise(NeuronTPBState *s, uint32_t bits);
void neuron_throttle_edge(NeuronTPBState *s);
bool neuron_mem_range_ok(NeuronTPBState *s, uint64_t off, uint64_t len);

/* neuron-notific.c */
uint64_t neuron_timestamp_ps(void);
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

/* neuron-engine.c */
void neuron_engine_init(NeuronEngine *e, NeuronCore *c, unsigned int index);
void neuron_engine_finalize(NeuronEngine *e);
void neuron_engine_reset(NeuronEngine *e, bool power_on);
uint32_t neuron_engine_read(NeuronEngine *e, hwaddr off);
void neuron_engine_write(NeuronEngine *e, hwaddr off, uint32_t val);
void neuron_core_wake_waiters(NeuronCore *c);
void neuron_core_wake_queue(NeuronCore *c, int q);
void neuron_engine_log(NeuronEngine *e, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);
void neuron_engine_set_pending(NeuronEngine *e, unsigned int cls,
                               union neuron_isa_notification *rec,
                               uint8_t notific_type);
void neuron_engine_error_record(NeuronEngine *e, uint8_t error_id,
                                unsigned int info_kind, uint8_t info,
                                unsigned int bc_reg, unsigned int direction);
void neuron_engine_set_fatal(NeuronEngine *e, unsigned int info_kind,
                             uint8_t info, unsigned int bc_reg,
                             unsigned int direction);

/* neuron-evtsem.c */
void neuron_evtsem_reset(NeuronCore *c);
uint32_t neuron_evtsem_read(NeuronCore *c, hwaddr off);
void neuron_evtsem_write(NeuronCore *c, hwaddr off, uint32_t val);
uint32_t neuron_evtsem_apply(NeuronCore *c, unsigned int mode,
                             unsigned int idx, uint32_t value);
bool neuron_evtsem_is_event_mode(unsigned int mode);

/* neuron-dge.c */
uint16_t neuron_crc16(const uint8_t *data, uint64_t len);
bool neuron_dge_decode_ok(NeuronEngine *e);
uint16_t neuron_dge_input_crc(NeuronEngine *e);
NeuronOpResult neuron_dge_exec(NeuronEngine *e);

#endif /* HW_MISC_NEURON_TPB_H */
