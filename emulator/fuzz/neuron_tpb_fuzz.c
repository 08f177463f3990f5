// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * neuron-tpb-program: a structure-aware libFuzzer target for the neuron-tpb
 * device model (docs/decisions/0049-device-model-fuzzing.md#program-target).
 *
 * QEMU's generic-fuzz writes random values to random registers; it rarely
 * builds a valid program, a DGE index table and an enabled ring at once.
 * This target decodes its input as a list of operations (instructions into
 * the program area, data and index tables into device memory, register
 * writes, queue set-up, engine starts, time steps: "Input" below) and runs
 * them against the model through qtest, in a forked child per input. After
 * the run it checks the model's memory invariants:
 *   - BAR4: no byte changed outside the destination windows
 *     [dst, dst + length) of the DGE_COPY instructions in the program area
 *     and the device-memory rings the input enabled (their largest size);
 *   - guest RAM around the host rings: no byte changed outside the host
 *     rings the input set up (no record outside a ring);
 * and aborts with the first byte that broke one. ASan and UBSan see the rest.
 *
 * Built by emulator/fuzz/build-fuzz-qemu.sh into qemu-fuzz-x86_64:
 *   qemu-fuzz-x86_64 --fuzz-target=neuron-tpb-program corpus/
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include "tests/qtest/libqtest.h"
#include "qemu/bswap.h"
#include "hw/pci/pci_regs.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "fuzz.h"
#include "fork_fuzz.h"
#include "neuron/regs.h"
#include "neuron/emu_isa.h"

/* The layout the harness imposes on BAR4 (mem-size=1M on the command line). */
#define MEM_SIZE        0x100000u
#define PROG_SLOTS      128u                    /* [0, 0x1000): program area */
#define PROG_END        (PROG_SLOTS * NEURON_EMU_INSN_BYTES)
#define NCORES          2u
#define RING_SLOT       0x1000u                 /* one per core and queue */
#define RING_SLOTS      (NCORES * NEURON_NUM_SW_QUEUES)
#define DEV_RING_BASE   PROG_END                /* [0x1000, 0x15000) */
#define DATA_BASE       (DEV_RING_BASE + RING_SLOTS * RING_SLOT)
#define DATA_SIZE       (MEM_SIZE - DATA_BASE)
/* Guest RAM watched for stray ring writes; host ring slots from +RING_SLOT. */
#define HOST_BASE       0x1000000u
#define HOST_SPAN       ((RING_SLOTS + 2) * RING_SLOT)
#define RING_LOG2_MIN   6                       /* NEURON_NQ_MIN_BYTES */
#define RING_LOG2_MAX   12                      /* RING_SLOT */
/* Virtual time the model runs after the input's last operation. */
#define SETTLE_NS       (20 * 1000 * 1000)
#define CHILD_TIMEOUT_S 2

static QPCIBar bar0, bar4;
static uint8_t *shadow_mem, *shadow_host, *actual;

/* The input, read front to back; reads past its end yield zeros. */
typedef struct Input {
    const uint8_t *p;
    size_t left;
} Input;

static uint8_t get8(Input *in)
{
    if (!in->left) {
        return 0;
    }
    in->left--;
    return *in->p++;
}

static uint16_t get16(Input *in)
{
    return get8(in) | (uint16_t)get8(in) << 8;
}

static uint32_t get32(Input *in)
{
    return get16(in) | (uint32_t)get16(in) << 16;
}

/* What the run may write: per ring slot, the largest size it was set up with. */
typedef struct Allowed {
    uint32_t dev_ring[RING_SLOTS];
    uint32_t host_ring[RING_SLOTS];
} Allowed;

static uint8_t canary(uint64_t i)
{
    return 0xa5 ^ (uint8_t)(i * 0x3b) ^ (uint8_t)(i >> 8);
}

static uint64_t core_reg(unsigned int core, uint32_t off)
{
    return bar0.addr + NEURON_CORE_BASE(core % NCORES) + off;
}

static void mem_write(QTestState *s, uint32_t off, const void *buf, size_t len)
{
    memcpy(shadow_mem + off, buf, len);
    qtest_memwrite(s, bar4.addr + off, buf, len);
}

/*
 * A register write the harness owns (ring placement, program location) is
 * dropped: those registers define the windows the invariants check, so they
 * are set only through the QUEUE and START operations.
 */
static bool reg_owned_by_harness(uint32_t off)
{
    if (off >= NEURON_NQ_DESC(0) && off < NEURON_NQ_DESC(NEURON_NUM_SW_QUEUES)) {
        uint32_t f = (off - NEURON_NQ_DESC(0)) % 0x28;

        return f == NEURON_NQ_BASE_LO || f == NEURON_NQ_BASE_HI ||
               f == NEURON_NQ_SIZE || f == NEURON_NQ_CTRL;
    }
    if (off >= NEURON_ENGINE_BASE(0) &&
        off < NEURON_ENGINE_BASE(NEURON_ENGINES_PER_CORE)) {
        uint32_t f = (off - NEURON_ENGINE_BASE(0)) % 0x200;

        return f == NEURON_ENG_PROG_BASE_LO || f == NEURON_ENG_PROG_BASE_HI ||
               f == NEURON_ENG_PROG_COUNT;
    }
    return false;
}

/*
 * An instruction into program slot @slot. A DGE_COPY whose destination
 * window would reach the program area or the rings is moved into the data
 * area: the program must not rewrite itself (the windows are computed from
 * what the harness wrote) and a ring's bytes belong to its queue.
 */
static void op_insn(QTestState *s, Input *in)
{
    struct neuron_emu_insn insn;
    unsigned int slot = get8(in) % PROG_SLOTS;
    uint8_t *b = (uint8_t *)&insn;
    size_t i;

    for (i = 0; i < sizeof(insn); i++) {
        b[i] = get8(in);
    }
    insn.opcode %= NEURON_OP_COUNT + 1;         /* mostly valid opcodes */
    if (insn.opcode == NEURON_OP_DGE_COPY &&
        le32_to_cpu(insn.operand.dge.dst) < DATA_BASE) {
        insn.operand.dge.dst = cpu_to_le32(DATA_BASE +
                                           le32_to_cpu(insn.operand.dge.dst));
    }
    mem_write(s, slot * NEURON_EMU_INSN_BYTES, &insn, sizeof(insn));
}

static void op_data(QTestState *s, Input *in)
{
    uint8_t buf[256];
    uint32_t off = DATA_BASE + (uint32_t)get16(in) * 16 % DATA_SIZE;
    size_t len = get8(in), i;

    len = MIN(len, (size_t)(MEM_SIZE - off));
    for (i = 0; i < len; i++) {
        buf[i] = get8(in);
    }
    mem_write(s, off, buf, len);
}

/* An index table of small entries (a byte each): indices near their window. */
static void op_idx(QTestState *s, Input *in)
{
    uint32_t off = DATA_BASE + (uint32_t)get16(in) * 4 % DATA_SIZE;
    size_t count = get8(in) % 64, i;
    uint32_t v;

    for (i = 0; i < count && off + 4 <= MEM_SIZE; i++, off += 4) {
        v = cpu_to_le32(get8(in));
        mem_write(s, off, &v, 4);
    }
}

static void op_reg(QTestState *s, Input *in)
{
    unsigned int core = get8(in);
    uint32_t off = get16(in) & 0xfffc;
    uint32_t val = get32(in);

    if (!reg_owned_by_harness(off)) {
        qtest_writel(s, core_reg(core, off), val);
    }
}

/* NOTIFIC's own registers, descriptors and coalescing: 0x000..0x3fc. */
static void op_notific(QTestState *s, Input *in)
{
    unsigned int core = get8(in);
    uint32_t off = (uint32_t)get8(in) * 4 % 0x400;
    uint32_t val = get32(in);

    if (!reg_owned_by_harness(off)) {
        qtest_writel(s, core_reg(core, off), val);
    }
}

/*
 * Set up queue q of a core in its ring slot: disable, place, size,
 * (re-)enable. The slot's allowed window grows to the largest size.
 */
static void op_queue(QTestState *s, Input *in, Allowed *a)
{
    unsigned int core = get8(in) % NCORES;
    unsigned int q = get8(in) % NEURON_NUM_SW_QUEUES;
    uint8_t fl = get8(in);
    unsigned int slot = core * NEURON_NUM_SW_QUEUES + q;
    bool dev = fl & 1;
    uint32_t size = 1u << (RING_LOG2_MIN + (fl >> 1 & 7) %
                           (RING_LOG2_MAX - RING_LOG2_MIN + 1));
    uint64_t base = dev ? DEV_RING_BASE + slot * RING_SLOT :
                          HOST_BASE + (slot + 1) * RING_SLOT;
    uint64_t desc = core_reg(core, NEURON_NQ_DESC(q));
    uint32_t en = qtest_readl(s, core_reg(core, NEURON_NOTIFIC_QUEUE_ENABLE));

    qtest_writel(s, core_reg(core, NEURON_NOTIFIC_QUEUE_ENABLE), en & ~(1u << q));
    qtest_writel(s, desc + NEURON_NQ_BASE_LO, (uint32_t)base);
    qtest_writel(s, desc + NEURON_NQ_BASE_HI, base >> 32);
    qtest_writel(s, desc + NEURON_NQ_SIZE, size);
    qtest_writel(s, desc + NEURON_NQ_CTRL, dev ? NEURON_NQ_CTRL_DEVICE_MEM : 0);
    if (dev) {
        a->dev_ring[slot] = MAX(a->dev_ring[slot], size);
    } else {
        a->host_ring[slot] = MAX(a->host_ring[slot], size);
    }
    if (fl & 0x10) {
        qtest_writel(s, core_reg(core, NEURON_NOTIFIC_QUEUE_ENABLE),
                     (en & ~(1u << q)) | 1u << q);
    }
}

/* Start an engine on instructions [slot, slot + count) of the program area. */
static void op_start(QTestState *s, Input *in)
{
    unsigned int core = get8(in);
    unsigned int e = get8(in) % NEURON_ENGINES_PER_CORE;
    unsigned int slot = get8(in) % PROG_SLOTS;
    unsigned int count = get8(in) % (PROG_SLOTS - slot) + 1;
    uint64_t eng = core_reg(core, NEURON_ENGINE_BASE(e));

    qtest_writel(s, eng + NEURON_ENG_PROG_BASE_LO, slot * NEURON_EMU_INSN_BYTES);
    qtest_writel(s, eng + NEURON_ENG_PROG_BASE_HI, 0);
    qtest_writel(s, eng + NEURON_ENG_PROG_COUNT, count);
    qtest_writel(s, eng + NEURON_ENG_CTRL, NEURON_ENG_CTRL_START);
}

static void op_sreg(QTestState *s, Input *in)
{
    unsigned int core = get8(in);
    unsigned int e = get8(in) % NEURON_ENGINES_PER_CORE;
    unsigned int n = get8(in) % NEURON_ENG_NUM_SREGS;

    qtest_writel(s, core_reg(core, NEURON_ENGINE_BASE(e) + NEURON_ENG_SREG(n)),
                 get32(in));
}

static void op_feature(QTestState *s, Input *in)
{
    unsigned int core = get8(in);
    unsigned int e = get8(in) % NEURON_ENGINES_PER_CORE;

    qtest_writel(s, core_reg(core, NEURON_ENGINE_BASE(e) +
                             NEURON_ENG_FEATURE_FLAGS), get8(in));
}

/* EVT_SEM: EVENT, SET, INC, DEC windows and AXI_NOTIFY. */
static void op_evtsem(QTestState *s, Input *in)
{
    static const uint32_t window[] = {
        NEURON_EVT_SEM_EVENT(0), NEURON_EVT_SEM_SET(0), NEURON_EVT_SEM_INC(0),
        NEURON_EVT_SEM_DEC(0), NEURON_EVT_SEM_AXI_NOTIFY,
    };
    unsigned int core = get8(in);
    unsigned int w = get8(in) % ARRAY_SIZE(window);
    unsigned int idx = w == 4 ? 0 : get8(in);

    qtest_writel(s, core_reg(core, NEURON_EVT_SEM_BASE + window[w] + idx * 4),
                 get32(in));
}

static void op_global(QTestState *s, Input *in)
{
    uint32_t off = (get8(in) % 16) * 4;

    qtest_writel(s, bar0.addr + off, get32(in));
}

static void op_dma(QTestState *s, Input *in)
{
    unsigned int core = get8(in);
    uint32_t off = (uint32_t)get8(in) * 4 % NEURON_DMA_SPAN;

    qtest_writel(s, core_reg(core, NEURON_DMA_BASE + off), get32(in));
}

static void op_step(QTestState *s, Input *in)
{
    qtest_clock_step(s, (int64_t)get16(in) * 100);
}

enum { OP_INSN, OP_DATA, OP_IDX, OP_REG, OP_NOTIFIC, OP_QUEUE, OP_START,
       OP_SREG, OP_FEATURE, OP_EVTSEM, OP_GLOBAL, OP_DMA, OP_STEP, OP_COUNT };

static bool in_window(uint64_t off, uint64_t base, uint64_t len)
{
    return off >= base && off - base < len;
}

/* Whether the model may have written BAR4 byte @off (see the top comment). */
static bool mem_allowed(const Allowed *a, uint32_t off)
{
    unsigned int i;

    for (i = 0; i < RING_SLOTS; i++) {
        if (in_window(off, DEV_RING_BASE + i * RING_SLOT, a->dev_ring[i])) {
            return true;
        }
    }
    for (i = 0; i < PROG_SLOTS; i++) {
        const struct neuron_emu_insn *insn = (const void *)(shadow_mem +
                                             i * NEURON_EMU_INSN_BYTES);

        if (insn->opcode == NEURON_OP_DGE_COPY &&
            in_window(off, le32_to_cpu(insn->operand.dge.dst),
                      le32_to_cpu(insn->operand.dge.length))) {
            return true;
        }
    }
    return false;
}

static bool host_allowed(const Allowed *a, uint32_t off)
{
    unsigned int i;

    for (i = 0; i < RING_SLOTS; i++) {
        if (in_window(off, (i + 1) * RING_SLOT, a->host_ring[i])) {
            return true;
        }
    }
    return false;
}

static void check_invariants(QTestState *s, const Allowed *a)
{
    uint32_t i;

    qtest_memread(s, bar4.addr, actual, MEM_SIZE);
    for (i = 0; i < MEM_SIZE; i++) {
        if (actual[i] != shadow_mem[i] && !mem_allowed(a, i)) {
            fprintf(stderr, "neuron-tpb-program: invariant broken: BAR4 byte "
                    "0x%x changed 0x%02x -> 0x%02x outside every DGE "
                    "destination window and device-memory ring\n",
                    i, shadow_mem[i], actual[i]);
            abort();
        }
    }
    qtest_memread(s, HOST_BASE, actual, HOST_SPAN);
    for (i = 0; i < HOST_SPAN; i++) {
        if (actual[i] != shadow_host[i] && !host_allowed(a, i)) {
            fprintf(stderr, "neuron-tpb-program: invariant broken: guest RAM "
                    "0x%x changed 0x%02x -> 0x%02x outside every host ring "
                    "set up\n", HOST_BASE + i, shadow_host[i], actual[i]);
            abort();
        }
    }
}

/* NEURON_FUZZ_DEBUG=1: what the engines and queues did, to read an input */
static void dump_state(QTestState *s)
{
    unsigned int c, e, q;

    for (c = 0; c < NCORES; c++) {
        for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
            uint64_t eng = core_reg(c, NEURON_ENGINE_BASE(e));

            fprintf(stderr, "core %u engine %u: status %u pc %u executed %u "
                    "last_error 0x%x\n", c, e,
                    qtest_readl(s, eng + NEURON_ENG_STATUS),
                    qtest_readl(s, eng + NEURON_ENG_PC),
                    qtest_readl(s, eng + NEURON_ENG_EXEC_COUNT),
                    qtest_readl(s, eng + NEURON_ENG_LAST_ERROR));
        }
        for (q = 0; q < NEURON_NUM_SW_QUEUES; q++) {
            fprintf(stderr, "core %u queue %u: tail %u drops %u\n", c, q,
                    qtest_readl(s, core_reg(c, NEURON_NQ_DESC(q) + NEURON_NQ_TAIL)),
                    qtest_readl(s, core_reg(c, NEURON_NQ_DESC(q) +
                                            NEURON_NQ_DROP_COUNT)));
        }
    }
}

static void run_input(QTestState *s, const unsigned char *data, size_t size)
{
    Input in = { data, size };
    Allowed a = { 0 };
    uint32_t i;

    for (i = 0; i < MEM_SIZE; i++) {
        shadow_mem[i] = canary(i);
    }
    qtest_memwrite(s, bar4.addr, shadow_mem, MEM_SIZE);
    for (i = 0; i < HOST_SPAN; i++) {
        shadow_host[i] = canary(i + 7);
    }
    qtest_memwrite(s, HOST_BASE, shadow_host, HOST_SPAN);

    while (in.left) {
        switch (get8(&in) % OP_COUNT) {
        case OP_INSN:    op_insn(s, &in); break;
        case OP_DATA:    op_data(s, &in); break;
        case OP_IDX:     op_idx(s, &in); break;
        case OP_REG:     op_reg(s, &in); break;
        case OP_NOTIFIC: op_notific(s, &in); break;
        case OP_QUEUE:   op_queue(s, &in, &a); break;
        case OP_START:   op_start(s, &in); break;
        case OP_SREG:    op_sreg(s, &in); break;
        case OP_FEATURE: op_feature(s, &in); break;
        case OP_EVTSEM:  op_evtsem(s, &in); break;
        case OP_GLOBAL:  op_global(s, &in); break;
        case OP_DMA:     op_dma(s, &in); break;
        case OP_STEP:    op_step(s, &in); break;
        }
    }
    qtest_clock_step(s, SETTLE_NS);
    flush_events(s);
    if (getenv("NEURON_FUZZ_DEBUG")) {
        dump_state(s);
    }
    check_invariants(s, &a);
}

/*
 * One child per input, so every input starts from the same device (the
 * state set up by pre_fuzz); coverage reaches the parent through the
 * shared counters (fork_fuzz.h). A child that found something has already
 * written the crash file (libFuzzer's handlers run in it): the parent stops.
 */
static void neuron_fuzz(QTestState *s, const unsigned char *data, size_t size)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        alarm(CHILD_TIMEOUT_S);         /* a runaway input is not a finding */
        run_input(s, data, size);
        _Exit(0);
    }
    flush_events(s);
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status)) {
        _Exit(WEXITSTATUS(status));
    }
}

static void neuron_pre_fuzz(QTestState *s)
{
    QPCIBus *bus = qpci_new_pc(s, NULL);
    QPCIDevice *rp, *dev;

    g_assert_cmpint(qpci_secondary_buses_init(bus), ==, 1);
    rp = qpci_device_find(bus, QPCI_DEVFN(1, 0));
    g_assert_nonnull(rp);
    qpci_config_writew(rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, 0xeff0);
    qpci_config_writew(rp, PCI_PREF_MEMORY_BASE, 0xfff0);
    qpci_config_writew(rp, PCI_PREF_MEMORY_LIMIT, 0x0000);
    qpci_device_enable(rp);
    dev = qpci_device_find(bus, QPCI_DEVFN(1 << 5, 0));
    g_assert_nonnull(dev);
    bar0 = qpci_iomap(dev, 0, NULL);
    bar4 = qpci_iomap(dev, 4, NULL);
    qpci_device_enable(dev);
    /* the machine reset started the function's reset: READY 100 us later */
    qtest_clock_step(s, 100 * 1000);
    g_assert_cmphex(qtest_readl(s, bar0.addr + NEURON_REG_ID), ==,
                    NEURON_ID_MAGIC);
    shadow_mem = g_malloc(MEM_SIZE);
    shadow_host = g_malloc(HOST_SPAN);
    actual = g_malloc(MAX(MEM_SIZE, HOST_SPAN));
    counter_shm_init();
}

static GString *neuron_cmdline(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -nodefaults "
                        "-m 64M -display none "
                        "-L /usr/share/seabios -L /usr/share/qemu "
                        "-device pcie-root-port,id=rp1,bus=pcie.0,chassis=1,"
                        "addr=01.0 "
                        "-device neuron-tpb,id=neuron0,bus=rp1,cores=2,"
                        "mem-size=1M");
}

static void register_neuron_fuzz_targets(void)
{
    static const FuzzTarget target = {
        .name = "neuron-tpb-program",
        .description = "neuron-tpb: programs, index tables, rings and "
                       "register writes; checks that nothing is written "
                       "outside the DGE windows and rings set up",
        .get_init_cmdline = neuron_cmdline,
        .pre_fuzz = neuron_pre_fuzz,
        .fuzz = neuron_fuzz,
    };

    fuzz_add_target(&target);
}

fuzz_target_init(register_neuron_fuzz_targets);
