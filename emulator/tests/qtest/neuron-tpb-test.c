/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the neuron-tpb device model: drives the PCI function from the
 * host through QEMU's qtest protocol, with no guest kernel. Each case starts
 * its own q35 machine with the function behind a PCIe root port (as in the
 * VM lanes, 01:00.0), programs the port's bus numbers and memory window,
 * maps the BARs with libqos and steps QEMU_CLOCK_VIRTUAL by hand, so the
 * engines, the reset latency and the timestamp are deterministic.
 *
 * Expected values are written out here as literals from docs/hardware.md
 * (#notific, #nq-descriptor, #nq-head-tail, #rec-header, #rec-phase,
 * #rec-types, #evt-sem-windows, #intr-causes, #timestamp),
 * docs/decisions/0004-device-details.md#register-map, #msix-vectors and
 * docs/device-model.md (reset values, queue rules, full-queue policies,
 * MSI-X edges, resets), never taken from the model's headers: a register
 * moved in the model, or in include/neuron/regs.h, fails here.
 *
 * The build script (emulator/qemu/build-qemu.sh) copies this file into the
 * QEMU tree's tests/qtest/ and builds it with ninja next to
 * qemu-system-x86_64. Run it as QEMU's runner does:
 *   QTEST_QEMU_BINARY=.../qemu-system-x86_64 ./neuron-tpb-test --tap -k
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "hw/pci/pci_regs.h"

/* ---- the register map, by hand (docs/decisions/0004-device-details.md#register-map) */

/* global page */
#define R_ID            0x000
#define R_VERSION       0x004
#define R_NUM_CORES     0x008
#define R_GEN           0x00c
#define R_MEM_SIZE_LO   0x010
#define R_MEM_SIZE_HI   0x014
#define R_FAULT_STATUS  0x018
#define R_FAULT_MASK    0x01c
#define R_THROTTLE_STAT 0x020
#define R_THROTTLE_CTRL 0x024
#define R_FAULT_CORES   0x034
#define R_RESET         0x028
#define R_DEV_STATUS    0x02c
#define R_BUSY_CORES    0x030

/* core c's 64 KiB window starts at 0x10000 * (c + 1) */
#define CORE(c)         (0x10000u * ((c) + 1))

/* NOTIFIC block at the start of the core window (docs/hardware.md#notific) */
#define N_TS_LO         0x000
#define N_TS_HI         0x004
#define N_TS_INC        0x008
#define N_INTR_STATUS   0x010
#define N_INTR_MASK     0x014
#define N_QUEUE_ENABLE  0x018
#define N_SW_BACKPRESS  0x01c
#define N_IGNORE_FULL   0x020
#define N_ROUTE         0x024
#define N_TRACE_ENABLE  0x028
#define N_THRESH_STATUS 0x02c
/* COALESCE_NS of queue q, after the descriptors (docs/device-model.md#coalescing) */
#define N_COALESCE(q)   (0x300u + (q) * 4u)

/* queue descriptor q at 0x100 + q * 0x28 (docs/hardware.md#nq-descriptor) */
#define Q(q)            (0x100u + (q) * 0x28u)
#define Q_BASE_LO       0x00
#define Q_BASE_HI       0x04
#define Q_SIZE          0x08
#define Q_HEAD          0x0c
#define Q_TAIL          0x10
#define Q_THRESHOLD     0x14
#define Q_STATUS        0x18
#define Q_CTRL          0x1c
#define Q_OVERFLOW      0x20
#define Q_DROP          0x24

/* head doorbell page of queue q */
#define DOORBELL(q)     (0x1000u + (q) * 0x1000u)

/* engine e (PE 0, ACT 1, POOL 2, DVE 3, SP 4) at 0xb000 + e * 0x200 */
#define ENG(e)          (0xb000u + (e) * 0x200u)
#define E_CTRL          0x00
#define E_STATUS        0x04
#define E_PROG_BASE_LO  0x08
#define E_PROG_BASE_HI  0x0c
#define E_PROG_COUNT    0x10
#define E_PC            0x14
#define E_SOFT_RESETS   0x18
#define E_EXEC_COUNT    0x1c
#define E_FEATURE_FLAGS 0x20
#define E_LAST_ERROR    0x24
#define E_SREG(n)       (0x100u + (n) * 4u)

/* EVT_SEM unit (docs/hardware.md#evt-sem-windows) */
#define EVTSEM          0xc000u
#define ES_EVENT(i)     (EVTSEM + 0x0000u + (i) * 4u)
#define ES_READ(i)      (EVTSEM + 0x1000u + (i) * 4u)
#define ES_SET(i)       (EVTSEM + 0x1400u + (i) * 4u)
#define ES_INC(i)       (EVTSEM + 0x1800u + (i) * 4u)
#define ES_DEC(i)       (EVTSEM + 0x1c00u + (i) * 4u)
#define ES_AXI_NOTIFY   (EVTSEM + 0x2000u)
#define ES_AXI_DROPPED  (EVTSEM + 0x2004u)

/* DMA block (docs/device-model.md#dma-engines) */
#define DMA             0xf000u
#define DMA_TRIGGER     (DMA + 0x000u)
#define DMA_NUM_ENGINES (DMA + 0x004u)
#define DMA_PKT_BYTES   (DMA + 0x008u)
#define DMA_PACKETS(i)  (DMA + 0x040u + (i) * 4u)

/* engine states, CTRL bits, queue STATUS bits */
#define ST_IDLE         0
#define ST_RUNNING      1
#define ST_WAITING      2
#define ST_HALTED       3
#define CTRL_START      0x1
#define QS_PHASE        0x1
#define QS_FULL         0x2
#define QS_STALLED      0x4
#define QS_DMA_ERROR    0x8
#define QC_DEVICE_MEM   0x1

/* opcodes (docs/decisions/0004-device-details.md#emu-isa) */
#define OP_NOP          0x00
#define OP_NOTIFY       0x01
#define OP_HALT         0x02
#define OP_SEM_INC      0x04
#define OP_WAIT_GE      0x06
#define OP_THROTTLE     0x0d
#define OP_DGE_COPY     0x0b

/* the machine: 2 cores, 16 MiB of device memory */
#define MEM_SIZE        0x1000000u
#define PROG_OFF        0x100000u       /* BAR4 offset of the test program */
#define RP_DEVFN        QPCI_DEVFN(1, 0)        /* root port 00:01.0 */
#define DEV_DEVFN       QPCI_DEVFN(1 << 5, 0)   /* the function, 01:00.0 */

typedef struct {
    QTestState *qts;
    QGuestAllocator alloc;
    QPCIBus *bus;
    QPCIDevice *rp, *dev;
    QPCIBar bar0, bar4;
    uint64_t size0, size4;
} Dev;

static void rp_setup(Dev *d)
{
    /* bus 1 behind the port; one window over 0xe0000000..0xefffffff */
    g_assert_cmpint(qpci_secondary_buses_init(d->bus), ==, 1);
    d->rp = qpci_device_find(d->bus, RP_DEVFN);
    g_assert_nonnull(d->rp);
    qpci_config_writew(d->rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(d->rp, PCI_MEMORY_LIMIT, 0xeff0);
    qpci_config_writew(d->rp, PCI_PREF_MEMORY_BASE, 0xfff0);   /* off */
    qpci_config_writew(d->rp, PCI_PREF_MEMORY_LIMIT, 0x0000);
    qpci_device_enable(d->rp);
}

/* Maps BAR0 and BAR4 and enables memory decoding and bus mastering. */
static void dev_map(Dev *d)
{
    d->bar0 = qpci_iomap(d->dev, 0, &d->size0);
    d->bar4 = qpci_iomap(d->dev, 4, &d->size4);
    qpci_device_enable(d->dev);
}

static Dev *dev_start(const char *props)
{
    Dev *d = g_new0(Dev, 1);

    d->qts = qtest_initf("-machine q35 -nodefaults "
                         "-L /usr/share/seabios -L /usr/share/qemu "
                         "-device pcie-root-port,id=rp1,bus=pcie.0,chassis=1,"
                         "addr=01.0 "
                         "-device neuron-tpb,id=neuron0,bus=rp1,"
                         "mem-size=16M%s", props ? props : "");
    pc_alloc_init(&d->alloc, d->qts, ALLOC_NO_FLAGS);
    d->bus = qpci_new_pc(d->qts, &d->alloc);
    rp_setup(d);
    d->dev = qpci_device_find(d->bus, DEV_DEVFN);
    g_assert_nonnull(d->dev);
    dev_map(d);
    /* machine reset started a reset of the function: READY 100 us later */
    qtest_clock_step(d->qts, 100 * 1000);
    return d;
}

static void dev_stop(Dev *d)
{
    g_free(d->dev);
    g_free(d->rp);
    qpci_free_pc(d->bus);
    alloc_destroy(&d->alloc);
    qtest_quit(d->qts);
    g_free(d);
}

static uint32_t rd(Dev *d, uint32_t off)
{
    return qpci_io_readl(d->dev, d->bar0, off);
}

static void wr(Dev *d, uint32_t off, uint32_t v)
{
    qpci_io_writel(d->dev, d->bar0, off, v);
}

static void step_us(Dev *d, unsigned int us)
{
    qtest_clock_step(d->qts, us * 1000ll);
}

/* ---- programs: 32-byte instructions (docs/decisions/0004-device-details.md#emu-isa) */

typedef struct {
    uint8_t b[32];
} Insn;

static Insn insn(uint8_t op, uint16_t hint, uint32_t idx, uint32_t value)
{
    Insn in = { };

    in.b[0] = op;
    stw_le_p(&in.b[2], hint);
    stl_le_p(&in.b[16], idx);
    stl_le_p(&in.b[20], value);
    return in;
}

static Insn notify(uint16_t hint, uint16_t ext)
{
    Insn in = insn(OP_NOTIFY, hint, 0, 0);

    stw_le_p(&in.b[24], ext);
    return in;
}

/* Loads @n instructions at PROG_OFF + e * 0x10000 and starts engine @e. */
static void load_start(Dev *d, unsigned int c, unsigned int e, const Insn *p,
                       unsigned int n)
{
    uint32_t off = PROG_OFF + (c * 5 + e) * 0x10000u;

    qpci_memwrite(d->dev, d->bar4, off, p, n * sizeof(*p));
    wr(d, CORE(c) + ENG(e) + E_PROG_BASE_LO, off);
    wr(d, CORE(c) + ENG(e) + E_PROG_BASE_HI, 0);
    wr(d, CORE(c) + ENG(e) + E_PROG_COUNT, n);
    wr(d, CORE(c) + ENG(e) + E_CTRL, CTRL_START);
}
#define run(d, c, e, p, n) (load_start(d, c, e, p, n), step_us(d, 1000)) /* and 1 ms */

/* Queue q of core c as a host-memory ring of @size bytes; returns its address */
static uint64_t host_ring(Dev *d, unsigned int c, unsigned int q,
                          uint32_t size, uint32_t threshold)
{
    uint64_t ring = guest_alloc(&d->alloc, size);
    g_autofree uint8_t *zero = g_malloc0(size);

    qtest_memwrite(d->qts, ring, zero, size);
    wr(d, CORE(c) + Q(q) + Q_BASE_LO, (uint32_t)ring);
    wr(d, CORE(c) + Q(q) + Q_BASE_HI, (uint32_t)(ring >> 32));
    wr(d, CORE(c) + Q(q) + Q_SIZE, size);
    wr(d, CORE(c) + Q(q) + Q_CTRL, 0);
    wr(d, CORE(c) + Q(q) + Q_THRESHOLD, threshold);
    wr(d, CORE(c) + N_QUEUE_ENABLE,
       rd(d, CORE(c) + N_QUEUE_ENABLE) | (1u << q));
    g_assert_cmphex(rd(d, CORE(c) + N_QUEUE_ENABLE) & (1u << q), ==, 1u << q);
    return ring;
}

static void slot(Dev *d, uint64_t ring, unsigned int i, uint8_t rec[16])
{
    qtest_memread(d->qts, ring + i * 16, rec, 16);
}

/* ---- identity and BARs --------------------------------------------------- */

static void test_pci_identity(void)
{
    Dev *d = dev_start(NULL);

    g_assert_cmphex(qpci_config_readw(d->dev, PCI_VENDOR_ID), ==, 0x1d0f);
    g_assert_cmphex(qpci_config_readw(d->dev, PCI_DEVICE_ID), ==, 0x7f00);
    g_assert_cmphex(qpci_config_readw(d->dev, PCI_CLASS_DEVICE), ==, 0x1200);
    g_assert_cmphex(qpci_config_readb(d->dev, PCI_REVISION_ID), ==, 1);
    g_assert_cmphex(qpci_config_readb(d->dev, PCI_HEADER_TYPE), ==, 0);
    g_assert_cmphex(qpci_config_readb(d->dev, PCI_INTERRUPT_PIN), ==, 0);
    /* MSI-X at 0x40, power management at 0x60, PCI Express at 0x80 */
    g_assert_cmphex(qpci_find_capability(d->dev, PCI_CAP_ID_MSIX, 0), ==, 0x40);
    g_assert_cmphex(qpci_find_capability(d->dev, PCI_CAP_ID_PM, 0), ==, 0x60);
    g_assert_cmphex(qpci_find_capability(d->dev, PCI_CAP_ID_EXP, 0), ==, 0x80);
    /* Function Level Reset advertised: DEVCAP bit 28 */
    g_assert_cmphex(qpci_config_readl(d->dev, 0x80 + PCI_EXP_DEVCAP) &
                    (1u << 28), ==, 1u << 28);
    dev_stop(d);
}

/* Size probe of one BAR register: all-ones written, the mask read back. */
static uint32_t bar_probe(QPCIDevice *dev, uint8_t reg)
{
    uint32_t old = qpci_config_readl(dev, reg), v;

    qpci_config_writel(dev, reg, 0xffffffff);
    v = qpci_config_readl(dev, reg);
    qpci_config_writel(dev, reg, old);
    return v;
}

static void test_bar_sizes(void)
{
    Dev *d = dev_start(NULL);

    /* BAR0: 1 MiB, memory, 64-bit, not prefetchable */
    g_assert_cmphex(bar_probe(d->dev, PCI_BASE_ADDRESS_0), ==, 0xfff00004);
    g_assert_cmphex(d->size0, ==, 0x100000);
    /* BAR2: the MSI-X table and PBA, one 4 KiB page */
    g_assert_cmphex(bar_probe(d->dev, PCI_BASE_ADDRESS_2), ==, 0xfffff000);
    /* BAR4: mem-size (16 MiB here), 64-bit prefetchable */
    g_assert_cmphex(bar_probe(d->dev, PCI_BASE_ADDRESS_4), ==, 0xff00000c);
    g_assert_cmphex(d->size4, ==, 0x1000000);
    /* BAR1, BAR3 and BAR5 are the upper halves */
    g_assert_cmphex(bar_probe(d->dev, PCI_BASE_ADDRESS_1), ==, 0xffffffff);
    g_assert_cmphex(bar_probe(d->dev, PCI_BASE_ADDRESS_5), ==, 0xffffffff);
    /* device memory is plain RAM through BAR4 */
    qpci_io_writel(d->dev, d->bar4, 0xfffffc, 0x5a5aa5a5);
    g_assert_cmphex(qpci_io_readl(d->dev, d->bar4, 0xfffffc), ==, 0x5a5aa5a5);
    dev_stop(d);
}

/* ---- registers ----------------------------------------------------------- */

static void test_global_regs(void)
{
    Dev *d = dev_start(NULL);

    g_assert_cmphex(rd(d, R_ID), ==, 0x4e45524e);             /* "NREN" */
    g_assert_cmphex(rd(d, R_VERSION), ==, 1);
    g_assert_cmphex(rd(d, R_NUM_CORES), ==, 2);
    g_assert_cmphex(rd(d, R_GEN), ==, 1);                      /* cayman */
    g_assert_cmphex(rd(d, R_MEM_SIZE_LO), ==, 0x1000000);
    g_assert_cmphex(rd(d, R_MEM_SIZE_HI), ==, 0);
    g_assert_cmphex(rd(d, R_FAULT_STATUS), ==, 0);
    g_assert_cmphex(rd(d, R_FAULT_MASK), ==, 0);
    g_assert_cmphex(rd(d, R_THROTTLE_STAT), ==, 0);
    g_assert_cmphex(rd(d, R_THROTTLE_CTRL), ==, 0);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);      /* READY | QUIESCED */
    g_assert_cmphex(rd(d, R_BUSY_CORES), ==, 0);
    g_assert_cmphex(rd(d, R_FAULT_CORES), ==, 0);
    /* read-only: a write changes nothing */
    wr(d, R_ID, 0);
    wr(d, R_NUM_CORES, 7);
    g_assert_cmphex(rd(d, R_ID), ==, 0x4e45524e);
    g_assert_cmphex(rd(d, R_NUM_CORES), ==, 2);
    /* FAULT_MASK and THROTTLE_CTRL keep their defined bits only */
    wr(d, R_FAULT_MASK, 0xffffffff);
    g_assert_cmphex(rd(d, R_FAULT_MASK), ==, 0x3);
    wr(d, R_THROTTLE_CTRL, 0xffffffff);
    g_assert_cmphex(rd(d, R_THROTTLE_CTRL), ==, 0x1);
    dev_stop(d);
}

static void test_gen_sunda(void)
{
    Dev *d = dev_start(",gen=sunda,cores=3");

    g_assert_cmphex(rd(d, R_GEN), ==, 0);
    g_assert_cmphex(rd(d, R_NUM_CORES), ==, 3);
    /* no FEATURE_FLAGS register on sunda: reads 0, ignores writes */
    wr(d, CORE(2) + ENG(2) + E_FEATURE_FLAGS, 0x2);
    g_assert_cmphex(rd(d, CORE(2) + ENG(2) + E_FEATURE_FLAGS), ==, 0);
    /* 3 cores + throttle + fault vectors */
    qpci_msix_enable(d->dev);
    g_assert_cmpint(qpci_msix_table_size(d->dev), ==, 5);
    dev_stop(d);
}

static void test_core_reset_values(void)
{
    Dev *d = dev_start(NULL);
    unsigned int c, q, e;

    for (c = 0; c < 2; c++) {
        uint32_t b = CORE(c);

        g_assert_cmphex(rd(d, b + N_TS_INC), ==, 1000);
        g_assert_cmphex(rd(d, b + N_INTR_STATUS), ==, 0);
        g_assert_cmphex(rd(d, b + N_INTR_MASK), ==, 0);
        g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 0);
        g_assert_cmphex(rd(d, b + N_SW_BACKPRESS), ==, 0x3ff);
        g_assert_cmphex(rd(d, b + N_IGNORE_FULL), ==, 0);
        g_assert_cmphex(rd(d, b + N_ROUTE), ==, 0x01543210);
        g_assert_cmphex(rd(d, b + N_TRACE_ENABLE), ==, 0);
        g_assert_cmphex(rd(d, b + N_THRESH_STATUS), ==, 0);
        for (q = 0; q < 10; q++) {
            g_assert_cmphex(rd(d, b + Q(q) + Q_BASE_LO), ==, 0);
            g_assert_cmphex(rd(d, b + Q(q) + Q_SIZE), ==, 0);
            g_assert_cmphex(rd(d, b + Q(q) + Q_HEAD), ==, 0);
            g_assert_cmphex(rd(d, b + Q(q) + Q_TAIL), ==, 0);
            g_assert_cmphex(rd(d, b + Q(q) + Q_OVERFLOW), ==, 0);
            g_assert_cmphex(rd(d, b + Q(q) + Q_DROP), ==, 0);
        }
        for (e = 0; e < 5; e++) {
            g_assert_cmphex(rd(d, b + ENG(e) + E_STATUS), ==, ST_IDLE);
            g_assert_cmphex(rd(d, b + ENG(e) + E_PC), ==, 0);
            g_assert_cmphex(rd(d, b + ENG(e) + E_SOFT_RESETS), ==, 0);
            g_assert_cmphex(rd(d, b + ENG(e) + E_EXEC_COUNT), ==, 0);
            g_assert_cmphex(rd(d, b + ENG(e) + E_FEATURE_FLAGS), ==, 0);
            g_assert_cmphex(rd(d, b + ENG(e) + E_LAST_ERROR), ==, 0xff);
            g_assert_cmphex(rd(d, b + ENG(e) + E_SREG(63)), ==, 0);
        }
    }
    dev_stop(d);
}

static void test_register_rw(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(1);

    /* per-queue registers keep bits 9..0 (10 queues) */
    wr(d, b + N_SW_BACKPRESS, 0xffffffff);
    g_assert_cmphex(rd(d, b + N_SW_BACKPRESS), ==, 0x3ff);
    wr(d, b + N_IGNORE_FULL, 0x00000201);
    g_assert_cmphex(rd(d, b + N_IGNORE_FULL), ==, 0x201);
    /* INTR_MASK: nine causes */
    wr(d, b + N_INTR_MASK, 0xffffffff);
    g_assert_cmphex(rd(d, b + N_INTR_MASK), ==, 0x1ff);
    wr(d, b + N_ROUTE, 0x76543210);
    g_assert_cmphex(rd(d, b + N_ROUTE), ==, 0x76543210);
    /* descriptor fields of a disabled queue */
    wr(d, b + Q(9) + Q_BASE_LO, 0x12345670);
    wr(d, b + Q(9) + Q_BASE_HI, 0x9);
    wr(d, b + Q(9) + Q_SIZE, 0x1000);
    wr(d, b + Q(9) + Q_THRESHOLD, 17);
    wr(d, b + Q(9) + Q_CTRL, QC_DEVICE_MEM);
    g_assert_cmphex(rd(d, b + Q(9) + Q_BASE_LO), ==, 0x12345670);
    g_assert_cmphex(rd(d, b + Q(9) + Q_BASE_HI), ==, 0x9);
    g_assert_cmphex(rd(d, b + Q(9) + Q_SIZE), ==, 0x1000);
    g_assert_cmphex(rd(d, b + Q(9) + Q_THRESHOLD), ==, 17);
    g_assert_cmphex(rd(d, b + Q(9) + Q_CTRL), ==, QC_DEVICE_MEM);
    /* the neighbour descriptor is untouched */
    g_assert_cmphex(rd(d, b + Q(8) + Q_SIZE), ==, 0);
    /* engine registers: program, $S, feature flags (local reg 38) */
    wr(d, b + ENG(4) + E_PROG_BASE_LO, 0x2000);
    wr(d, b + ENG(4) + E_PROG_COUNT, 9);
    wr(d, b + ENG(4) + E_SREG(38), 0xdeadbeef);
    wr(d, b + ENG(4) + E_FEATURE_FLAGS, 0x2);
    g_assert_cmphex(rd(d, b + ENG(4) + E_PROG_BASE_LO), ==, 0x2000);
    g_assert_cmphex(rd(d, b + ENG(4) + E_PROG_COUNT), ==, 9);
    g_assert_cmphex(rd(d, b + ENG(4) + E_SREG(38)), ==, 0xdeadbeef);
    g_assert_cmphex(rd(d, b + ENG(4) + E_FEATURE_FLAGS), ==, 0x2);
    g_assert_cmphex(rd(d, b + ENG(3) + E_SREG(38)), ==, 0);
    /* core 0 untouched by core 1's writes */
    g_assert_cmphex(rd(d, CORE(0) + N_ROUTE), ==, 0x01543210);
    dev_stop(d);
}

static void test_timestamp(void)
{
    Dev *d = dev_start(NULL);
    int64_t ns = qtest_clock_step(d->qts, 123456);
    uint64_t ps;

    /* picoseconds of the virtual clock; reading LO latches HI */
    ps = rd(d, CORE(0) + N_TS_LO);
    ps |= (uint64_t)rd(d, CORE(0) + N_TS_HI) << 32;
    g_assert_cmpuint(ps, ==, (uint64_t)ns * 1000);
    ns = qtest_clock_step(d->qts, 5000000000ll);        /* past 2^32 ps */
    ps = rd(d, CORE(1) + N_TS_LO);
    ps |= (uint64_t)rd(d, CORE(1) + N_TS_HI) << 32;
    g_assert_cmpuint(ps, ==, (uint64_t)ns * 1000);
    g_assert_cmphex(ps >> 32, !=, 0);
    dev_stop(d);
}

/* ---- queue programming --------------------------------------------------- */

static void test_queue_enable_checks(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);

    /* SIZE not a power of two: the enable bit stays 0 */
    wr(d, b + Q(4) + Q_BASE_LO, 0x1000);
    wr(d, b + Q(4) + Q_SIZE, 48);
    wr(d, b + Q(4) + Q_CTRL, QC_DEVICE_MEM);
    wr(d, b + N_QUEUE_ENABLE, 1u << 4);
    g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 0);
    /* below the 64-byte minimum */
    wr(d, b + Q(4) + Q_SIZE, 32);
    wr(d, b + N_QUEUE_ENABLE, 1u << 4);
    g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 0);
    /* BASE not 16-byte aligned */
    wr(d, b + Q(4) + Q_SIZE, 64);
    wr(d, b + Q(4) + Q_BASE_LO, 0x1008);
    wr(d, b + N_QUEUE_ENABLE, 1u << 4);
    g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 0);
    /* a device-memory ring past mem-size (16 MiB) */
    wr(d, b + Q(4) + Q_BASE_LO, 0xfffff0);
    wr(d, b + N_QUEUE_ENABLE, 1u << 4);
    g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 0);
    /* valid: enabled, empty, phase 1 */
    wr(d, b + Q(4) + Q_BASE_LO, 0xffffc0);
    wr(d, b + N_QUEUE_ENABLE, 1u << 4);
    g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 1u << 4);
    g_assert_cmphex(rd(d, b + Q(4) + Q_HEAD), ==, 0);
    g_assert_cmphex(rd(d, b + Q(4) + Q_TAIL), ==, 0);
    g_assert_cmphex(rd(d, b + Q(4) + Q_STATUS), ==, QS_PHASE);
    /* BASE, SIZE and CTRL are ignored while enabled; THRESHOLD is not */
    wr(d, b + Q(4) + Q_BASE_LO, 0x2000);
    wr(d, b + Q(4) + Q_SIZE, 0x1000);
    wr(d, b + Q(4) + Q_CTRL, 0);
    wr(d, b + Q(4) + Q_THRESHOLD, 3);
    g_assert_cmphex(rd(d, b + Q(4) + Q_BASE_LO), ==, 0xffffc0);
    g_assert_cmphex(rd(d, b + Q(4) + Q_SIZE), ==, 64);
    g_assert_cmphex(rd(d, b + Q(4) + Q_CTRL), ==, QC_DEVICE_MEM);
    g_assert_cmphex(rd(d, b + Q(4) + Q_THRESHOLD), ==, 3);
    /* an enabled queue keeps the core from QUIESCED */
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x1);
    g_assert_cmphex(rd(d, R_BUSY_CORES), ==, 0x1);
    wr(d, b + N_QUEUE_ENABLE, 0);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    dev_stop(d);
}

/*
 * One NOTIFY by engine ACT into a host-memory ring: the 16 bytes DMA'd into
 * guest memory, byte by byte (docs/hardware.md#rec-header, #rec-types: ACT
 * EXPLICIT is 0x0a; phase 1 on the first pass, #rec-phase).
 */
static void test_record_dma(void)
{
    Dev *d = dev_start(NULL);
    Insn p[2] = { notify(5, 0x1234), insn(OP_HALT, 0, 0, 0) };
    uint8_t r[16], want_head[8] = {
        0x00, 0x00, 0x50,       /* program_counter 0, debug_hint 5 (bits 23:20) */
        0x8a,                   /* phase | ACT_EXPLICIT */
        0x01, 0x00,             /* soft_reset_counter: first program */
        0x34, 0x12,             /* debug_hint_extended */
    };
    uint64_t ring = host_ring(d, 0, 1, 64, 0), ts;
    int64_t t0 = qtest_clock_step(d->qts, 0);

    run(d, 0, 1, p, 2);
    slot(d, ring, 0, r);
    g_assert_cmpmem(r, 8, want_head, 8);
    /* timestamp (bytes 8..15): picoseconds of the virtual clock at the write */
    ts = ldq_le_p(&r[8]);
    g_assert_cmpuint(ts, >=, (uint64_t)t0 * 1000);
    g_assert_cmpuint(ts, <=, (uint64_t)qtest_clock_step(d->qts, 0) * 1000);
    /* the next slot is untouched */
    slot(d, ring, 1, r);
    g_assert_cmphex(r[3], ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_TAIL), ==, 1);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_HEAD), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + ENG(1) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + ENG(1) + E_PC), ==, 2);
    g_assert_cmphex(rd(d, CORE(0) + ENG(1) + E_EXEC_COUNT), ==, 2);
    g_assert_cmphex(rd(d, CORE(0) + ENG(1) + E_SOFT_RESETS), ==, 1);
    /* nothing went wrong: no cause raised */
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS), ==, 0);
    dev_stop(d);
}

/*
 * Six records into a 4-entry ring under the default (lossless) policy: the
 * engine stalls after four, a doorbell HEAD write lets it finish, records
 * 4 and 5 land in slots 0 and 1 with phase 0 (the second pass).
 */
static void test_phase_wrap_backpressure(void)
{
    Dev *d = dev_start(NULL);
    Insn p[7];
    uint64_t ring = host_ring(d, 0, 1, 64, 0);
    uint8_t r[16];
    unsigned int i;
    static const uint8_t hdr[6] = { 0x8e, 0x8e, 0x8e, 0x8e, 0x0e, 0x0e };

    for (i = 0; i < 6; i++) {
        p[i] = notify(0, 0x100 + i);
    }
    p[6] = insn(OP_HALT, 0, 0, 0);
    run(d, 0, 2, p, 7);                 /* POOL: EXPLICIT is 0x0e */
    g_assert_cmphex(rd(d, CORE(0) + ENG(2) + E_STATUS), ==, ST_WAITING);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_TAIL), ==, 4);
    /* 4 records written, the next gets phase 0: FULL | STALLED, no PHASE */
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_STATUS), ==, QS_FULL | QS_STALLED);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS), ==, 1u << 5);
    for (i = 0; i < 4; i++) {
        slot(d, ring, i, r);
        g_assert_cmphex(r[3], ==, hdr[i]);
        g_assert_cmphex(lduw_le_p(&r[6]), ==, 0x100 + i);
    }
    /* the consumer read four: HEAD through the doorbell page */
    wr(d, CORE(0) + DOORBELL(1), 4);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_HEAD), ==, 4);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_TAIL), ==, 6);
    g_assert_cmphex(rd(d, CORE(0) + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_STATUS), ==, 0);
    for (i = 0; i < 2; i++) {
        slot(d, ring, i, r);
        g_assert_cmphex(r[3], ==, hdr[4 + i]);
        g_assert_cmphex(lduw_le_p(&r[6]), ==, 0x104 + i);
        g_assert_cmphex(ldl_le_p(r) & 0xfffff, ==, 4 + i);   /* PC */
    }
    /* slots 2, 3 still hold the first pass */
    slot(d, ring, 2, r);
    g_assert_cmphex(r[3], ==, 0x8e);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_DROP), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_OVERFLOW), ==, 0);
    dev_stop(d);
}

/*
 * IGNORE_FULL (lossy): the engine never stalls; records 4 and 5 overwrite
 * slots 0 and 1, marked software_queue_overflow (header bit 5) with phase 0.
 */
static void test_ignore_full(void)
{
    Dev *d = dev_start(NULL);
    Insn p[7];
    uint64_t ring = host_ring(d, 0, 1, 64, 0);
    uint8_t r[16];
    unsigned int i;

    wr(d, CORE(0) + N_IGNORE_FULL, 1u << 1);
    for (i = 0; i < 6; i++) {
        p[i] = notify(0, i);
    }
    p[6] = insn(OP_HALT, 0, 0, 0);
    run(d, 0, 0, p, 7);                 /* PE: EXPLICIT is 0x06 */
    g_assert_cmphex(rd(d, CORE(0) + ENG(0) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_TAIL), ==, 6);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_OVERFLOW), ==, 2);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_DROP), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS) & (1u << 2), ==, 1u << 2);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS) & (1u << 5), ==, 0);
    slot(d, ring, 0, r);
    g_assert_cmphex(r[3], ==, 0x26);
    g_assert_cmphex(lduw_le_p(&r[6]), ==, 4);
    slot(d, ring, 1, r);
    g_assert_cmphex(r[3], ==, 0x26);
    g_assert_cmphex(lduw_le_p(&r[6]), ==, 5);
    slot(d, ring, 2, r);
    g_assert_cmphex(r[3], ==, 0x86);
    g_assert_cmphex(lduw_le_p(&r[6]), ==, 2);
    dev_stop(d);
}

/*
 * Neither policy bit: the fifth record is lost as a software-queue overflow
 * (DROP_COUNT, intr_2: docs/decisions/0026-wrbuf.md).
 */
static void test_full_no_policy(void)
{
    Dev *d = dev_start(NULL);
    Insn p[6];
    unsigned int i;

    host_ring(d, 0, 1, 64, 0);
    wr(d, CORE(0) + N_SW_BACKPRESS, 0x3fd);
    for (i = 0; i < 5; i++) {
        p[i] = notify(0, i);
    }
    p[5] = insn(OP_HALT, 0, 0, 0);
    run(d, 0, 0, p, 6);
    g_assert_cmphex(rd(d, CORE(0) + ENG(0) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_TAIL), ==, 4);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_DROP), ==, 1);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_OVERFLOW), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS), ==, 1u << 2);
    dev_stop(d);
}

/* A record routed to a disabled queue: dropped, DROP_COUNT, intr_1, W1C. */
static void test_disabled_queue(void)
{
    Dev *d = dev_start(NULL);
    Insn p[2] = { notify(0, 1), insn(OP_HALT, 0, 0, 0) };

    wr(d, CORE(1) + N_ROUTE, 0x01543270);       /* EXPLICIT -> queue 7 */
    run(d, 1, 3, p, 2);
    g_assert_cmphex(rd(d, CORE(1) + ENG(3) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(1) + Q(7) + Q_DROP), ==, 1);
    g_assert_cmphex(rd(d, CORE(1) + Q(7) + Q_TAIL), ==, 0);
    g_assert_cmphex(rd(d, CORE(1) + N_INTR_STATUS), ==, 1u << 1);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS), ==, 0);
    wr(d, CORE(1) + N_INTR_STATUS, 1u << 1);
    g_assert_cmphex(rd(d, CORE(1) + N_INTR_STATUS), ==, 0);
    dev_stop(d);
}

/*
 * fault-stuck-disable=17: core 1's queue 7 ignores a QUEUE_ENABLE write
 * clearing its bit (queue 1 beside it goes off), keeps writing its ring and
 * keeps core 1 busy; the RESET register stops it, and the fault stays armed
 * for the next enable.
 */
static void test_stuck_disable(void)
{
    Dev *d = dev_start(",fault-stuck-disable=17");
    Insn p[2] = { notify(0, 0x77), insn(OP_HALT, 0, 0, 0) };
    uint64_t ring = host_ring(d, 1, 7, 64, 0);
    uint8_t r[16];

    host_ring(d, 1, 1, 64, 0);
    wr(d, CORE(1) + N_ROUTE, 0x01543270);       /* EXPLICIT -> queue 7 */
    wr(d, CORE(1) + N_QUEUE_ENABLE, 0);
    g_assert_cmphex(rd(d, CORE(1) + N_QUEUE_ENABLE), ==, 1u << 7);
    run(d, 1, 1, p, 2);
    slot(d, ring, 0, r);
    g_assert_cmphex(r[3], ==, 0x8a);            /* phase | ACT_EXPLICIT */
    g_assert_cmphex(lduw_le_p(&r[6]), ==, 0x77);
    g_assert_cmphex(rd(d, CORE(1) + Q(7) + Q_TAIL), ==, 1);
    g_assert_cmphex(rd(d, CORE(1) + Q(7) + Q_DROP), ==, 0);
    g_assert_cmphex(rd(d, R_BUSY_CORES), ==, 0x2);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x1);
    /* the other core and other faults are untouched */
    host_ring(d, 0, 7, 64, 0);
    wr(d, CORE(0) + N_QUEUE_ENABLE, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_QUEUE_ENABLE), ==, 0);

    wr(d, R_RESET, 1);
    g_assert_cmphex(rd(d, CORE(1) + N_QUEUE_ENABLE), ==, 0);
    step_us(d, 100);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    g_assert_cmphex(rd(d, R_BUSY_CORES), ==, 0);
    wr(d, CORE(1) + N_QUEUE_ENABLE, 1u << 7);
    wr(d, CORE(1) + N_QUEUE_ENABLE, 0);
    g_assert_cmphex(rd(d, CORE(1) + N_QUEUE_ENABLE), ==, 1u << 7);
    dev_stop(d);
}

/* THRESHOLD 2 fires once at 2 unread; a HEAD past TAIL is refused (intr_7). */
static void test_threshold_bad_head(void)
{
    Dev *d = dev_start(NULL);
    Insn p[4] = { notify(0, 0), notify(0, 1), notify(0, 2),
                  insn(OP_HALT, 0, 0, 0) };

    host_ring(d, 1, 1, 256, 2);         /* 16 entries */
    run(d, 1, 0, p, 4);
    g_assert_cmphex(rd(d, CORE(1) + Q(1) + Q_TAIL), ==, 3);
    g_assert_cmphex(rd(d, CORE(1) + N_THRESH_STATUS), ==, 1u << 1);
    g_assert_cmphex(rd(d, CORE(1) + N_INTR_STATUS), ==, 1u << 0);
    wr(d, CORE(1) + N_THRESH_STATUS, 1u << 1);
    wr(d, CORE(1) + N_INTR_STATUS, 0x1ff);
    g_assert_cmphex(rd(d, CORE(1) + N_THRESH_STATUS), ==, 0);
    /* HEAD 5 > TAIL 3: ignored */
    wr(d, CORE(1) + Q(1) + Q_HEAD, 5);
    g_assert_cmphex(rd(d, CORE(1) + Q(1) + Q_HEAD), ==, 0);
    g_assert_cmphex(rd(d, CORE(1) + N_INTR_STATUS), ==, 1u << 7);
    /* HEAD 3 == TAIL: accepted */
    wr(d, CORE(1) + Q(1) + Q_HEAD, 3);
    g_assert_cmphex(rd(d, CORE(1) + Q(1) + Q_HEAD), ==, 3);
    dev_stop(d);
}

/* ---- interrupt coalescing (docs/device-model.md#coalescing) -------------- */

/*
 * The cases below make records with host writes through the EVT_SEM INC
 * window while AXI_NOTIFY is on: each write is one AXI_EVT_SEM record into
 * the EVT_SEM class's queue 2, written before the MMIO write returns (the
 * input buffer's writer keeps up by default), so the virtual clock of each
 * record is exactly the one the case set.
 */
#define CQ              2               /* the EVT_SEM class's queue */
#define T_MAX           10000000u       /* 10 ms: NEURON_NQ_COALESCE_NS_MAX */

static void step_ns(Dev *d, int64_t ns)
{
    qtest_clock_step(d->qts, ns);
}

/* Core 0's queue 2: 16 records, THRESHOLD @threshold, COALESCE_NS @t_ns. */
static void coalesce_queue(Dev *d, uint32_t threshold, uint32_t t_ns)
{
    host_ring(d, 0, CQ, 256, threshold);
    wr(d, CORE(0) + N_COALESCE(CQ), t_ns);
    wr(d, CORE(0) + ES_AXI_NOTIFY, 1);
}

/* @n records into queue 2, at the current virtual time */
static void records(Dev *d, unsigned int n)
{
    while (n--) {
        wr(d, CORE(0) + ES_INC(0), 1);
    }
}

/* Whether queue 2's threshold interrupt was raised: THRESHOLD_STATUS bit 2 and cause 0, and nothing else. */
static bool fired(Dev *d)
{
    uint32_t thr = rd(d, CORE(0) + N_THRESH_STATUS);
    uint32_t st = rd(d, CORE(0) + N_INTR_STATUS);

    g_assert_cmphex(thr & ~(1u << CQ), ==, 0);
    g_assert_cmphex(st & ~1u, ==, 0);
    g_assert_cmphex(!!thr, ==, !!st);           /* both bits or neither */
    return thr == (1u << CQ) && st == 1u;
}

/* W1C of both status bits, as the driver's handler does */
static void clear(Dev *d)
{
    wr(d, CORE(0) + N_INTR_STATUS, 0x1ff);
    wr(d, CORE(0) + N_THRESH_STATUS, 0x3ff);
}

/* COALESCE_NS: reset value 0 on every queue, RW, clamped at 10 ms, 0 after FLR. */
static void test_coalesce_register(void)
{
    Dev *d = dev_start(NULL);
    unsigned int c, q;
    uint16_t ctl;

    for (c = 0; c < 2; c++) {
        for (q = 0; q < 10; q++) {
            g_assert_cmphex(rd(d, CORE(c) + N_COALESCE(q)), ==, 0);
        }
    }
    wr(d, CORE(1) + N_COALESCE(9), 1000);
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(9)), ==, 1000);
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(8)), ==, 0);   /* neighbours */
    g_assert_cmphex(rd(d, CORE(0) + N_COALESCE(9)), ==, 0);
    g_assert_cmphex(rd(d, CORE(1) + Q(9) + Q_THRESHOLD), ==, 0);
    wr(d, CORE(1) + N_COALESCE(0), 10000000);                 /* the maximum */
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(0)), ==, 10000000);
    wr(d, CORE(1) + N_COALESCE(0), 10000001);                 /* clamped */
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(0)), ==, 10000000);
    wr(d, CORE(1) + N_COALESCE(0), 0xffffffff);
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(0)), ==, 10000000);
    /* a function reset puts it back to 0 */
    ctl = qpci_config_readw(d->dev, 0x80 + PCI_EXP_DEVCTL);
    qpci_config_writew(d->dev, 0x80 + PCI_EXP_DEVCTL, ctl | PCI_EXP_DEVCTL_BCR_FLR);
    dev_map(d);
    step_us(d, 100);
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(9)), ==, 0);
    g_assert_cmphex(rd(d, CORE(1) + N_COALESCE(0)), ==, 0);
    dev_stop(d);
}

/*
 * The time limit: THRESHOLD 8 is never reached; the interrupt comes 50 us
 * after the first unread record (not after the last), not a nanosecond
 * earlier, and only once until HEAD moves.
 */
static void test_coalesce_time_limit(void)
{
    Dev *d = dev_start(NULL);

    coalesce_queue(d, 8, 50000);
    records(d, 1);
    g_assert_cmphex(rd(d, CORE(0) + Q(CQ) + Q_TAIL), ==, 1);
    step_ns(d, 20000);
    records(d, 2);
    step_ns(d, 29999);                  /* 49.999 us after the first */
    g_assert_false(fired(d));
    step_ns(d, 1);                      /* 50 us */
    g_assert_true(fired(d));
    clear(d);
    /* once: more records and more time raise nothing until HEAD moves */
    records(d, 2);
    step_ns(d, 200000);
    g_assert_false(fired(d));
    g_assert_cmphex(rd(d, CORE(0) + Q(CQ) + Q_TAIL), ==, 5);
    dev_stop(d);
}

/* The count limit comes first when it is reached: at once, and only once. */
static void test_coalesce_count_first(void)
{
    Dev *d = dev_start(NULL);

    coalesce_queue(d, 4, 50000);
    records(d, 3);
    g_assert_false(fired(d));
    step_ns(d, 10000);
    records(d, 1);                      /* the fourth: THRESHOLD reached */
    g_assert_true(fired(d));
    clear(d);
    step_ns(d, 200000);                 /* the time limit was stopped */
    g_assert_false(fired(d));
    dev_stop(d);
}

/*
 * HEAD writes: one that leaves records unread starts the time limit (they
 * are delivered T later though no record comes); one that leaves none
 * starts nothing; neither fires on the count.
 */
static void test_coalesce_head_write(void)
{
    Dev *d = dev_start(NULL);

    coalesce_queue(d, 8, 50000);
    records(d, 3);
    step_ns(d, 50000);
    g_assert_true(fired(d));
    clear(d);
    step_ns(d, 7000);
    wr(d, CORE(0) + DOORBELL(CQ), 1);   /* two left unread */
    g_assert_false(fired(d));
    step_ns(d, 49999);
    g_assert_false(fired(d));
    step_ns(d, 1);
    g_assert_true(fired(d));
    clear(d);
    wr(d, CORE(0) + Q(CQ) + Q_HEAD, 3); /* none left */
    step_ns(d, 200000);
    g_assert_false(fired(d));

    /* THRESHOLD 2, no time limit: 2 unread after a HEAD write do not fire */
    wr(d, CORE(0) + N_COALESCE(CQ), 0);
    wr(d, CORE(0) + Q(CQ) + Q_THRESHOLD, 2);
    records(d, 3);                      /* TAIL 6: fired at the second */
    g_assert_true(fired(d));
    clear(d);
    wr(d, CORE(0) + DOORBELL(CQ), 4);   /* 2 unread, THRESHOLD 2 */
    g_assert_false(fired(d));
    step_ns(d, 200000);
    g_assert_false(fired(d));
    records(d, 1);                      /* the next record finds the count */
    g_assert_true(fired(d));
    dev_stop(d);
}

/*
 * A live THRESHOLD or COALESCE_NS write counts the records already unread
 * at once: a THRESHOLD they reach fires; a COALESCE_NS starts the time
 * limit; a shorter one brings a running limit forward; 0 stops it.
 */
static void test_coalesce_live_write(void)
{
    Dev *d = dev_start(NULL);

    coalesce_queue(d, 8, 0);
    records(d, 5);
    step_ns(d, 1000000);
    g_assert_false(fired(d));
    wr(d, CORE(0) + Q(CQ) + Q_THRESHOLD, 5);    /* already 5 unread */
    g_assert_true(fired(d));
    clear(d);

    wr(d, CORE(0) + DOORBELL(CQ), 5);
    wr(d, CORE(0) + Q(CQ) + Q_THRESHOLD, 8);
    records(d, 3);
    step_ns(d, 1000000);
    g_assert_false(fired(d));
    wr(d, CORE(0) + N_COALESCE(CQ), 20000);     /* starts now */
    step_ns(d, 19999);
    g_assert_false(fired(d));
    step_ns(d, 1);
    g_assert_true(fired(d));
    clear(d);

    /* a running 1 ms limit, shortened to 20 us 100 us later */
    wr(d, CORE(0) + DOORBELL(CQ), 8);
    wr(d, CORE(0) + N_COALESCE(CQ), 1000000);
    records(d, 1);
    step_ns(d, 100000);
    wr(d, CORE(0) + N_COALESCE(CQ), 20000);
    step_ns(d, 19999);
    g_assert_false(fired(d));
    step_ns(d, 1);
    g_assert_true(fired(d));
    clear(d);

    /* a running limit stopped by COALESCE_NS 0 */
    wr(d, CORE(0) + DOORBELL(CQ), 9);
    records(d, 1);
    step_ns(d, 10000);
    wr(d, CORE(0) + N_COALESCE(CQ), 0);
    step_ns(d, 2000000);
    g_assert_false(fired(d));
    dev_stop(d);
}

/* Disabling the queue (or RESET) stops a running time limit; both limits 0: never. */
static void test_coalesce_disable(void)
{
    Dev *d = dev_start(NULL);

    coalesce_queue(d, 8, 50000);
    records(d, 2);
    step_ns(d, 10000);
    wr(d, CORE(0) + N_QUEUE_ENABLE, 0);
    step_ns(d, 10000);
    /*
     * enabled again (empty) 20 us after those records: a record 10 us later
     * starts its own 50 us; the old queue's limit (due 30 us after it) is gone
     */
    wr(d, CORE(0) + N_QUEUE_ENABLE, 1u << CQ);
    step_ns(d, 10000);
    records(d, 1);
    step_ns(d, 49999);
    g_assert_false(fired(d));
    step_ns(d, 1);
    g_assert_true(fired(d));
    clear(d);
    wr(d, CORE(0) + DOORBELL(CQ), 1);
    /* global RESET */
    records(d, 2);
    step_ns(d, 10000);
    wr(d, R_RESET, 1);
    step_ns(d, 200000);
    g_assert_false(fired(d));
    g_assert_cmphex(rd(d, CORE(0) + N_COALESCE(CQ)), ==, 50000);  /* kept */

    /* THRESHOLD 0 and COALESCE_NS 0: no threshold interrupt at all */
    coalesce_queue(d, 0, 0);
    records(d, 16);
    step_ns(d, 2 * (int64_t)T_MAX);
    g_assert_false(fired(d));
    g_assert_cmphex(rd(d, CORE(0) + Q(CQ) + Q_TAIL), ==, 16);
    dev_stop(d);
}

/* ---- MSI-X --------------------------------------------------------------- */

static void test_msix_table(void)
{
    Dev *d = dev_start(NULL);
    uint16_t v;

    /* cores + 2 vectors, table at BAR2 + 0, PBA at BAR2 + 0x800 */
    g_assert_cmphex(qpci_config_readw(d->dev, 0x40 + PCI_MSIX_FLAGS) & 0x7ff,
                    ==, 3);
    g_assert_cmphex(qpci_config_readl(d->dev, 0x40 + PCI_MSIX_TABLE), ==, 2);
    g_assert_cmphex(qpci_config_readl(d->dev, 0x40 + PCI_MSIX_PBA), ==, 0x802);
    qpci_msix_enable(d->dev);
    g_assert_cmpint(qpci_msix_table_size(d->dev), ==, 4);
    for (v = 0; v < 4; v++) {
        g_assert_true(qpci_msix_masked(d->dev, v));
        g_assert_false(qpci_msix_pending(d->dev, v));
    }
    dev_stop(d);
}

/* Points MSI-X vector @v at guest address @addr with data 0xc0de0000 | v. */
static void msix_entry(Dev *d, uint16_t v, uint64_t addr, bool masked)
{
    uint64_t off = d->dev->msix_table_off + v * 16;

    qpci_io_writel(d->dev, d->dev->msix_table_bar, off + 0, (uint32_t)addr);
    qpci_io_writel(d->dev, d->dev->msix_table_bar, off + 4, addr >> 32);
    qpci_io_writel(d->dev, d->dev->msix_table_bar, off + 8, 0xc0de0000 | v);
    qpci_io_writel(d->dev, d->dev->msix_table_bar, off + 12, masked);
}

/*
 * Core 0's vector (0) on an INTR_STATUS & INTR_MASK edge: pending in the PBA
 * while masked, the message sent on unmask; no second message without a new
 * edge; a new edge after the W1C.
 */
static void test_msix_core_vector(void)
{
    Dev *d = dev_start(NULL);
    Insn p[2] = { notify(0, 1), insn(OP_HALT, 0, 0, 0) };
    uint64_t msg = guest_alloc(&d->alloc, 64);
    uint16_t v;

    qtest_memset(d->qts, msg, 0, 64);
    qpci_msix_enable(d->dev);
    for (v = 0; v < 4; v++) {
        msix_entry(d, v, msg + v * 4, v == 0);
    }
    wr(d, CORE(0) + N_INTR_MASK, 1u << 1);
    wr(d, CORE(0) + N_ROUTE, 0x01543270);       /* to disabled queue 7 */
    run(d, 0, 0, p, 2);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS), ==, 1u << 1);
    g_assert_cmphex(qtest_readl(d->qts, msg), ==, 0);
    g_assert_true(qpci_msix_pending(d->dev, 0));
    g_assert_false(qpci_msix_pending(d->dev, 1));
    msix_entry(d, 0, msg, false);               /* unmask: sent now */
    g_assert_cmphex(qtest_readl(d->qts, msg), ==, 0xc0de0000);
    g_assert_false(qpci_msix_pending(d->dev, 0));
    /* status still set: no edge, no message */
    qtest_writel(d->qts, msg, 0);
    run(d, 0, 0, p, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg), ==, 0);
    /* W1C, then a new cause: a new edge */
    wr(d, CORE(0) + N_INTR_STATUS, 0x1ff);
    run(d, 0, 0, p, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg), ==, 0xc0de0000);
    /* a masked-out cause (INTR_MASK) sends nothing */
    qtest_writel(d->qts, msg, 0);
    wr(d, CORE(0) + N_INTR_STATUS, 0x1ff);
    wr(d, CORE(0) + N_INTR_MASK, 0);
    run(d, 0, 0, p, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg), ==, 0);
    /* ... until INTR_MASK lets it through: that is an edge too */
    wr(d, CORE(0) + N_INTR_MASK, 1u << 1);
    g_assert_cmphex(qtest_readl(d->qts, msg), ==, 0xc0de0000);
    /* no other vector fired */
    g_assert_cmphex(qtest_readl(d->qts, msg + 4), ==, 0);
    g_assert_cmphex(qtest_readl(d->qts, msg + 8), ==, 0);
    g_assert_cmphex(qtest_readl(d->qts, msg + 12), ==, 0);
    dev_stop(d);
}

/* Vector 1 for core 1, vector 2 = throttle, vector 3 = device fault. */
static void test_msix_other_vectors(void)
{
    Dev *d = dev_start(NULL);
    Insn drop[2] = { notify(0, 1), insn(OP_HALT, 0, 0, 0) };
    Insn thr[2] = { insn(OP_THROTTLE, 0, 0, 1), insn(OP_HALT, 0, 0, 0) };
    uint64_t msg = guest_alloc(&d->alloc, 64);
    uint16_t v;

    qtest_memset(d->qts, msg, 0, 64);
    qpci_msix_enable(d->dev);
    for (v = 0; v < 4; v++) {
        msix_entry(d, v, msg + v * 4, false);
    }
    /* core 1: a drop on a disabled queue with intr_1 unmasked */
    wr(d, CORE(1) + N_INTR_MASK, 1u << 1);
    wr(d, CORE(1) + N_ROUTE, 0x01543270);
    run(d, 1, 4, drop, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg + 4), ==, 0xc0de0001);
    g_assert_cmphex(qtest_readl(d->qts, msg + 0), ==, 0);
    /* throttle vector: every THROTTLE instruction; bit c = core c ran one */
    run(d, 0, 1, thr, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg + 8), ==, 0xc0de0002);
    g_assert_cmphex(rd(d, R_THROTTLE_STAT), ==, 0x1);
    qtest_writel(d->qts, msg + 8, 0);
    run(d, 1, 2, thr, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg + 8), ==, 0xc0de0002);
    g_assert_cmphex(rd(d, R_THROTTLE_STAT), ==, 0x3);
    /* W1C, one core at a time; another edge while latched fires again */
    wr(d, R_THROTTLE_STAT, 0x1);
    g_assert_cmphex(rd(d, R_THROTTLE_STAT), ==, 0x2);
    qtest_writel(d->qts, msg + 8, 0);
    run(d, 1, 2, thr, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg + 8), ==, 0xc0de0002);
    g_assert_cmphex(rd(d, R_THROTTLE_STAT), ==, 0x2);
    wr(d, R_THROTTLE_STAT, 0x2);
    g_assert_cmphex(rd(d, R_THROTTLE_STAT), ==, 0);
    /* fault vector: a ring write nothing decodes (2^48) with DMA_ERROR unmasked */
    wr(d, R_FAULT_MASK, 0x1);
    g_assert_cmphex(qtest_readl(d->qts, msg + 12), ==, 0);
    wr(d, CORE(1) + Q(1) + Q_BASE_LO, 0);
    wr(d, CORE(1) + Q(1) + Q_BASE_HI, 0x10000);
    wr(d, CORE(1) + Q(1) + Q_SIZE, 1024);
    wr(d, CORE(1) + N_ROUTE, 0x01543210);
    wr(d, CORE(1) + N_QUEUE_ENABLE, 1u << 1);
    run(d, 1, 4, drop, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg + 12), ==, 0xc0de0003);
    g_assert_cmphex(rd(d, R_FAULT_STATUS), ==, 0x1);
    /* FAULT_CORES names the core whose ring write failed: core 1 */
    g_assert_cmphex(rd(d, R_FAULT_CORES), ==, 0x2);
    g_assert_cmphex(rd(d, CORE(1) + Q(1) + Q_STATUS) & QS_DMA_ERROR, ==,
                    QS_DMA_ERROR);
    g_assert_cmphex(rd(d, CORE(1) + Q(1) + Q_DROP), ==, 1);
    g_assert_cmphex(rd(d, CORE(1) + N_INTR_STATUS) & (1u << 4), ==, 1u << 4);
    wr(d, R_FAULT_STATUS, 0x1);
    g_assert_cmphex(rd(d, R_FAULT_STATUS), ==, 0);
    g_assert_cmphex(rd(d, R_FAULT_CORES), ==, 0x2);     /* its own W1C */
    wr(d, R_FAULT_CORES, 0x1);
    g_assert_cmphex(rd(d, R_FAULT_CORES), ==, 0x2);
    wr(d, R_FAULT_CORES, 0x2);
    g_assert_cmphex(rd(d, R_FAULT_CORES), ==, 0);
    dev_stop(d);
}

/*
 * fault-dma-error-bits=0x81 with fault-dma-error-queue=11 (core 1, queue
 * 1): a failed ring write latches DMA_ERROR and bit 7, a bit the UAPI has
 * no name for; the vector fires through DMA_ERROR's mask bit alone
 * (FAULT_MASK keeps only the named bits), and W1C clears the bits one by one.
 */
static void test_fault_dma_error_bits(void)
{
    Dev *d = dev_start(",fault-dma-error-queue=11,fault-dma-error-bits=0x81");
    Insn drop[2] = { notify(0, 1), insn(OP_HALT, 0, 0, 0) };
    uint64_t msg = guest_alloc(&d->alloc, 64);
    uint64_t ring;
    uint8_t rec[16];
    uint16_t v;

    qtest_memset(d->qts, msg, 0, 64);
    qpci_msix_enable(d->dev);
    for (v = 0; v < 4; v++) {
        msix_entry(d, v, msg + v * 4, false);
    }
    wr(d, R_FAULT_MASK, 0x81);
    g_assert_cmphex(rd(d, R_FAULT_MASK), ==, 0x1);
    /* a zeroed ring in guest RAM: only the property makes its writes fail */
    ring = host_ring(d, 1, 1, 1024, 0);
    wr(d, CORE(1) + N_ROUTE, 0x01543210);
    run(d, 1, 4, drop, 2);
    g_assert_cmphex(qtest_readl(d->qts, msg + 12), ==, 0xc0de0003);
    g_assert_cmphex(rd(d, R_FAULT_STATUS), ==, 0x81);
    g_assert_cmphex(rd(d, R_FAULT_CORES), ==, 0x2);
    g_assert_cmphex(rd(d, CORE(1) + Q(1) + Q_DROP), ==, 1);
    slot(d, ring, 0, rec);
    g_assert_cmphex(rec[3], ==, 0);     /* no record, no phase bit */
    wr(d, R_FAULT_STATUS, 0x80);
    g_assert_cmphex(rd(d, R_FAULT_STATUS), ==, 0x1);
    wr(d, R_FAULT_STATUS, 0x1);
    g_assert_cmphex(rd(d, R_FAULT_STATUS), ==, 0);
    dev_stop(d);
}

/* ---- EVT_SEM ------------------------------------------------------------- */

/* Host writes to the windows: values, modulo 2^32, no record written. */
static void test_evtsem_windows(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);

    host_ring(d, 0, 2, 64, 0);          /* the EVT_SEM class's queue */
    wr(d, b + ES_SET(3), 10);
    g_assert_cmphex(rd(d, b + ES_READ(3)), ==, 10);
    wr(d, b + ES_INC(3), 5);
    g_assert_cmphex(rd(d, b + ES_READ(3)), ==, 15);
    wr(d, b + ES_DEC(3), 20);
    g_assert_cmphex(rd(d, b + ES_READ(3)), ==, 0xfffffffb);
    wr(d, b + ES_INC(3), 6);
    g_assert_cmphex(rd(d, b + ES_READ(3)), ==, 1);
    wr(d, b + ES_SET(255), 0xabcdef01);
    g_assert_cmphex(rd(d, b + ES_READ(255)), ==, 0xabcdef01);
    g_assert_cmphex(rd(d, b + ES_READ(254)), ==, 0);
    /* events store 1 for any nonzero value */
    wr(d, b + ES_EVENT(9), 7);
    g_assert_cmphex(rd(d, b + ES_EVENT(9)), ==, 1);
    wr(d, b + ES_EVENT(9), 0);
    g_assert_cmphex(rd(d, b + ES_EVENT(9)), ==, 0);
    /* per core */
    g_assert_cmphex(rd(d, CORE(1) + ES_READ(3)), ==, 0);
    /* host updates write no record */
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 0);
    dev_stop(d);
}

/*
 * An engine waits on a semaphore the host raises through INC; then its own
 * SEM_INC writes an EVT_SEM record: {id, mode SEM_INC (2), block_id, header
 * 0x8f (phase | POOL_EVT_SEM), value after the update}.
 */
static void test_evtsem_engine(void)
{
    Dev *d = dev_start(NULL);
    Insn p[3] = { insn(OP_WAIT_GE, 0, 4, 2), insn(OP_SEM_INC, 0, 7, 5),
                  insn(OP_HALT, 0, 0, 0) };
    uint64_t ring = host_ring(d, 0, 2, 64, 0);
    uint8_t r[16];
    static const uint8_t want[8] = { 0x07, 0x02, 0x02, 0x8f,
                                     0x0f, 0x00, 0x00, 0x00 };

    wr(d, CORE(0) + ES_SET(7), 10);
    run(d, 0, 2, p, 3);
    g_assert_cmphex(rd(d, CORE(0) + ENG(2) + E_STATUS), ==, ST_WAITING);
    g_assert_cmphex(rd(d, CORE(0) + ENG(2) + E_PC), ==, 0);
    wr(d, CORE(0) + ES_INC(4), 1);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, CORE(0) + ENG(2) + E_STATUS), ==, ST_WAITING);
    wr(d, CORE(0) + ES_INC(4), 1);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, CORE(0) + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + ES_READ(4)), ==, 2);   /* WAIT_GE keeps it */
    g_assert_cmphex(rd(d, CORE(0) + ES_READ(7)), ==, 15);
    g_assert_cmphex(rd(d, CORE(0) + Q(2) + Q_TAIL), ==, 1);
    slot(d, ring, 0, r);
    g_assert_cmpmem(r, 8, want, 8);
    dev_stop(d);
}

/*
 * AXI_NOTIFY on: each host write through a window writes one AXI_EVT_SEM
 * record {id, mode | is_event << 4, block_id 0xff, header 0x9b (phase |
 * 0x1b), value after the update} to the EVT_SEM queue; off again: none.
 */
static void test_evtsem_axi_record(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    uint64_t ring = host_ring(d, 0, 2, 128, 0);
    uint8_t r[16];
    static const uint8_t want[3][8] = {
        { 0x03, 0x01, 0xff, 0x9b, 0x0a, 0x00, 0x00, 0x00 },  /* SET 10 */
        { 0x03, 0x02, 0xff, 0x9b, 0x0f, 0x00, 0x00, 0x00 },  /* INC 5: 15 */
        { 0x09, 0x14, 0xff, 0x9b, 0x01, 0x00, 0x00, 0x00 },  /* EVENT_SET */
    };
    unsigned int i;

    g_assert_cmphex(rd(d, b + ES_AXI_NOTIFY), ==, 0);
    wr(d, b + ES_AXI_NOTIFY, 0x3);              /* only bit 0 is defined */
    g_assert_cmphex(rd(d, b + ES_AXI_NOTIFY), ==, 1);
    wr(d, b + ES_SET(3), 10);
    wr(d, b + ES_INC(3), 5);
    wr(d, b + ES_EVENT(9), 1);
    step_us(d, 1000);                   /* any write buffering drains */
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 3);
    for (i = 0; i < 3; i++) {
        slot(d, ring, i, r);
        g_assert_cmpmem(r, 8, want[i], 8);
    }
    g_assert_cmphex(rd(d, CORE(1) + ES_AXI_NOTIFY), ==, 0);  /* per core */
    wr(d, b + ES_AXI_NOTIFY, 0);
    wr(d, b + ES_INC(3), 1);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 3);
    g_assert_cmphex(rd(d, b + ES_AXI_DROPPED), ==, 0);
    dev_stop(d);
}

/*
 * A failed ring write loses its record and marks the queue's next one
 * (docs/decisions/0026-wrbuf.md). With bus mastering off every host write fails
 * (a transient fault: the queue stays enabled and configured); the three
 * AXI_EVT_SEM records of the first writes are dropped (DROP_COUNT 3, TAIL
 * 0, intr_4). Bus mastering back on, the next record lands in slot 0 with
 * header 0xdb (phase 0x80 | hardware_queue_overflow 0x40 | 0x1b), the one
 * after it with 0x9b: the mark is on the first only.
 */
static void test_ring_write_error_marks_next(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    uint64_t ring = host_ring(d, 0, 2, 128, 0);
    static const uint8_t want[2][8] = {
        { 0x03, 0x01, 0xff, 0xdb, 0x04, 0x00, 0x00, 0x00 },  /* SET 4, marked */
        { 0x03, 0x01, 0xff, 0x9b, 0x05, 0x00, 0x00, 0x00 },  /* SET 5 */
    };
    uint16_t cmd = qpci_config_readw(d->dev, PCI_COMMAND);
    uint8_t r[16];
    unsigned int i;

    wr(d, b + ES_AXI_NOTIFY, 1);
    qpci_config_writew(d->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    for (i = 1; i <= 3; i++) {
        wr(d, b + ES_SET(3), i);
    }
    step_us(d, 1000);
    g_assert_cmphex(rd(d, b + Q(2) + Q_DROP), ==, 3);
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 0);
    g_assert_cmphex(rd(d, b + N_INTR_STATUS) & (1u << 4), ==, 1u << 4);

    qpci_config_writew(d->dev, PCI_COMMAND, cmd);
    wr(d, b + ES_SET(3), 4);
    wr(d, b + ES_SET(3), 5);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 2);
    for (i = 0; i < 2; i++) {
        slot(d, ring, i, r);
        g_assert_cmpmem(r, 8, want[i], 8);
    }
    dev_stop(d);
}

/*
 * A full ring with neither policy drops the record (DROP_COUNT, intr_2) and
 * marks the next one written software_queue_overflow
 * (docs/hardware.md#nq-backpressure): queue 2 of 8 entries, backpressure
 * off, ten SETs: eight fill the ring, two are dropped. HEAD written to 8
 * (all read), the next record lands in slot 0 on the second pass with
 * header 0x3b (phase 0 | software_queue_overflow 0x20 | 0x1b), the one
 * after it with 0x1b.
 */
static void test_full_ring_drop_marks_next(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    uint64_t ring = host_ring(d, 0, 2, 128, 0);
    static const uint8_t want[2][8] = {
        { 0x03, 0x01, 0xff, 0x3b, 0x0b, 0x00, 0x00, 0x00 },  /* SET 11, marked */
        { 0x03, 0x01, 0xff, 0x1b, 0x0c, 0x00, 0x00, 0x00 },  /* SET 12 */
    };
    uint8_t r[16];
    unsigned int i;

    wr(d, b + ES_AXI_NOTIFY, 1);
    wr(d, b + N_SW_BACKPRESS, 0x3ff & ~(1u << 2));
    for (i = 1; i <= 10; i++) {
        wr(d, b + ES_SET(3), i);
    }
    step_us(d, 1000);
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 8);
    g_assert_cmphex(rd(d, b + Q(2) + Q_DROP), ==, 2);
    g_assert_cmphex(rd(d, b + N_INTR_STATUS) & (1u << 2), ==, 1u << 2);
    wr(d, b + Q(2) + Q_HEAD, 8);
    wr(d, b + ES_SET(3), 11);
    wr(d, b + ES_SET(3), 12);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, b + Q(2) + Q_TAIL), ==, 10);
    for (i = 0; i < 2; i++) {
        slot(d, ring, i, r);
        g_assert_cmpmem(r, 8, want[i], 8);
    }
    dev_stop(d);
}

/* ---- DMA engines ----------------------------------------------------------- */

static void test_dma_regs(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);

    g_assert_cmphex(rd(d, b + DMA_TRIGGER), ==, 0);
    g_assert_cmphex(rd(d, b + DMA_NUM_ENGINES), ==, 16);
    g_assert_cmphex(rd(d, b + DMA_PKT_BYTES), ==, 64);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(0)), ==, 0);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(15)), ==, 0);
    wr(d, b + DMA_TRIGGER, 0x1ffff);            /* 16 queues: bit 16 dropped */
    g_assert_cmphex(rd(d, b + DMA_TRIGGER), ==, 0xffff);
    wr(d, b + DMA_NUM_ENGINES, 3);              /* read-only */
    g_assert_cmphex(rd(d, b + DMA_NUM_ENGINES), ==, 16);
    g_assert_cmphex(rd(d, CORE(1) + DMA_TRIGGER), ==, 0);
    dev_stop(d);
}

/* DGE_COPY of @len bytes from 0 to 0x400000 on POOL (no bounds, backend POOL) */
static Insn dge(uint32_t len)
{
    Insn in = insn(OP_DGE_COPY, 0, 0, 0);

    stl_le_p(&in.b[16], 0);
    stl_le_p(&in.b[20], 0x400000);
    stl_le_p(&in.b[24], len);
    in.b[31] = 1;
    return in;
}

/*
 * 4097 packets of 64 bytes (262208 bytes): two DMA engines, 2049 + 2048
 * packets; DGE_METADATA {dma_map 0x0003, num_packets 2049 = 0x801}; with
 * M2S_TRIGGER 0x2 one DMA record, engine 1, 2048 = 0x800 descriptors. Then
 * 4096 packets (262144 bytes): one engine, num_packets 0 (4096); no DMA
 * record (engine 0 not armed).
 */
static void test_dma_split_records(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    uint64_t r1 = host_ring(d, 0, 1, 64, 0), r5 = host_ring(d, 0, 5, 64, 0);
    Insn p[3] = { dge(262208), dge(262144), insn(OP_HALT, 0, 0, 0) };
    uint8_t r[16];
    static const uint8_t meta[2][4] = {
        { 0x03, 0x00, 0x01, 0x08 }, { 0x01, 0x00, 0x00, 0x00 },
    };
    static const uint8_t dmarec[8] = { 0x01, 0x00, 0x00, 0x82,
                                       0x00, 0x08, 0x00, 0x00 };

    wr(d, b + ENG(2) + E_FEATURE_FLAGS, 0x2);  /* DGE packet notifications */
    wr(d, b + DMA_TRIGGER, 0x2);
    run(d, 0, 2, p, 3);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, b + Q(5) + Q_TAIL), ==, 2);
    slot(d, r5, 0, r);
    g_assert_cmpmem(r + 4, 4, meta[0], 4);
    slot(d, r5, 1, r);
    g_assert_cmpmem(r + 4, 4, meta[1], 4);
    g_assert_cmphex(rd(d, b + Q(1) + Q_TAIL), ==, 1);
    slot(d, r1, 0, r);
    g_assert_cmpmem(r, 8, dmarec, 8);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(0)), ==, 2049 + 4096);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(1)), ==, 2048);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(2)), ==, 0);
    dev_stop(d);
}

/*
 * A scatter (indirect mode 2) of @len bytes in elements of 1 << @shift bytes
 * from @src to @dst, its index table at @tab; no bounds checks, backend POOL.
 * Mode byte: element shift in bits 3..1; reserved0 (bytes 4..7): the table.
 */
static Insn dge_scatter(uint32_t src, uint32_t dst, uint32_t len,
                        unsigned int shift, uint32_t tab)
{
    Insn in = insn(OP_DGE_COPY, 0, 0, 0);

    in.b[1] = shift << 1;
    stl_le_p(&in.b[4], tab);
    stl_le_p(&in.b[16], src);
    stl_le_p(&in.b[20], dst);
    stl_le_p(&in.b[24], len);
    in.b[30] = 2;
    in.b[31] = 1;
    return in;
}

static void mem_wl(Dev *d, uint32_t off, uint32_t v)
{
    qpci_io_writel(d->dev, d->bar4, off, v);
}

static uint32_t mem_rl(Dev *d, uint32_t off)
{
    return qpci_io_readl(d->dev, d->bar4, off);
}

/*
 * A scatter whose destination window [0, 8) holds its own index table
 * {1, 0}, source {0x4000, 0x41414141}: element 0 writes 0x4000 over idx[1].
 * The indices are read once, so element 1 still goes to index 0: memory
 * ends {0x41414141, 0x4000}, and 0x10000 (= 0x4000 * 4, outside the window
 * the driver checked) keeps its 0x5eed5eed. A device that re-read idx[1]
 * would write 0x41414141 there.
 */
static void test_dge_scatter_rewrites_table(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    Insn p[2] = { dge_scatter(0x1000, 0, 8, 2, 0), insn(OP_HALT, 0, 0, 0) };

    mem_wl(d, 0x0, 1);
    mem_wl(d, 0x4, 0);
    mem_wl(d, 0x1000, 0x4000);
    mem_wl(d, 0x1004, 0x41414141);
    mem_wl(d, 0x10000, 0x5eed5eed);
    run(d, 0, 2, p, 2);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(mem_rl(d, 0x0), ==, 0x41414141);
    g_assert_cmphex(mem_rl(d, 0x4), ==, 0x4000);
    g_assert_cmphex(mem_rl(d, 0x10000), ==, 0x5eed5eed);
    dev_stop(d);
}

/*
 * The same with 128-byte elements: window [0, 256), table {0, 1} at 0,
 * element 0 copies [0x1000, 0x1080) over it, whose word 1 is 0xffffffff:
 * a device that re-read idx[1] would write 0xffffffff * 128 bytes (512 GiB)
 * past the window. Indices read once: element 1 lands at 128; the model
 * lives on and answers a register read.
 */
static void test_dge_scatter_table_far(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    Insn p[2] = { dge_scatter(0x1000, 0, 256, 7, 0), insn(OP_HALT, 0, 0, 0) };

    mem_wl(d, 0x0, 0);
    mem_wl(d, 0x4, 1);
    mem_wl(d, 0x1000, 0);
    mem_wl(d, 0x1004, 0xffffffff);
    mem_wl(d, 0x1080, 0xc0ffee00);
    run(d, 0, 2, p, 2);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(mem_rl(d, 0x4), ==, 0xffffffff);
    g_assert_cmphex(mem_rl(d, 0x80), ==, 0xc0ffee00);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    dev_stop(d);
}

/*
 * A copy that leaves device memory, FEATURE_FLAGS bit 1 clear (the reset
 * value): the flag gates DGE packet notifications, not this error, so a
 * TPB_ERROR still arrives on the error class's queue 3: error MEMORY_ERROR
 * 0x04, info_kind OTHER 0 (metadata_lo 0), phase | TPB_ERROR 0x9f, POOL
 * (block 2) at pc 0; nothing is copied and the engine goes on to HALT.
 */
static void test_dge_memory_error_flag_clear(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    uint64_t ring = host_ring(d, 0, 3, 64, 0);
    Insn p[2] = { dge(64), insn(OP_HALT, 0, 0, 0) };
    uint8_t r[16];

    stl_le_p(&p[0].b[16], MEM_SIZE - 16);       /* 48 bytes past the end */
    mem_wl(d, 0x400000, 0x5eed5eed);
    g_assert_cmphex(rd(d, b + ENG(2) + E_FEATURE_FLAGS), ==, 0);
    run(d, 0, 2, p, 2);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, b + Q(3) + Q_TAIL), ==, 1);
    slot(d, ring, 0, r);
    g_assert_cmphex(r[0], ==, 0x04);            /* MEMORY_ERROR */
    g_assert_cmphex(r[1], ==, 0x00);            /* info_kind OTHER */
    g_assert_cmphex(r[2], ==, 0x00);
    g_assert_cmphex(r[3], ==, 0x9f);            /* phase | TPB_ERROR */
    g_assert_cmphex(r[4], ==, 0x02);            /* POOL, pc 0 */
    g_assert_cmphex(mem_rl(d, 0x400000), ==, 0x5eed5eed);
    dev_stop(d);
}

/* ---- resets -------------------------------------------------------------- */

/*
 * RESET (0x028): engines stop and queues are disabled at once; DEV_STATUS
 * reads 0 and core writes are ignored for reset-latency-us (100); policy
 * registers and descriptors are kept.
 */
static void test_global_reset(void)
{
    Dev *d = dev_start(NULL);
    Insn p[2] = { insn(OP_WAIT_GE, 0, 0, 1), insn(OP_HALT, 0, 0, 0) };

    host_ring(d, 0, 1, 64, 0);
    wr(d, CORE(0) + N_SW_BACKPRESS, 0x155);
    run(d, 0, 3, p, 2);
    g_assert_cmphex(rd(d, CORE(0) + ENG(3) + E_STATUS), ==, ST_WAITING);
    g_assert_cmphex(rd(d, R_BUSY_CORES), ==, 0x1);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x1);
    wr(d, R_RESET, 1);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + ENG(3) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + N_QUEUE_ENABLE), ==, 0);
    wr(d, CORE(0) + N_ROUTE, 0);                /* ignored: not READY */
    g_assert_cmphex(rd(d, CORE(0) + N_ROUTE), ==, 0x01543210);
    step_us(d, 99);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0);
    step_us(d, 1);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    g_assert_cmphex(rd(d, R_BUSY_CORES), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_SW_BACKPRESS), ==, 0x155);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_SIZE), ==, 64);
    g_assert_cmphex(rd(d, CORE(0) + ENG(3) + E_SOFT_RESETS), ==, 1);
    wr(d, CORE(0) + N_ROUTE, 0);                /* READY: taken */
    g_assert_cmphex(rd(d, CORE(0) + N_ROUTE), ==, 0);
    /* RESET takes only 1 */
    wr(d, R_RESET, 2);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    dev_stop(d);
}

/*
 * FLR (PCIe DEVCTL bit 15): BAR0 back to its power-on values, the PCI side
 * reset by QEMU (BARs, command), BAR4's contents kept; READY 100 us later.
 */
static void test_flr(void)
{
    Dev *d = dev_start(NULL);
    Insn p[2] = { notify(0, 1), insn(OP_HALT, 0, 0, 0) };
    uint16_t ctl;

    host_ring(d, 0, 1, 64, 0);
    run(d, 0, 0, p, 2);
    wr(d, CORE(0) + N_ROUTE, 0x11111111);
    wr(d, CORE(0) + N_INTR_MASK, 0x1ff);
    wr(d, CORE(1) + ENG(2) + E_SREG(5), 0x55);
    wr(d, R_FAULT_MASK, 0x1);
    qpci_io_writel(d->dev, d->bar4, 0x10, 0xfeedf00d);
    g_assert_cmphex(rd(d, CORE(0) + ENG(0) + E_SOFT_RESETS), ==, 1);

    ctl = qpci_config_readw(d->dev, 0x80 + PCI_EXP_DEVCTL);
    qpci_config_writew(d->dev, 0x80 + PCI_EXP_DEVCTL, ctl | PCI_EXP_DEVCTL_BCR_FLR);
    g_assert_cmphex(qpci_config_readw(d->dev, PCI_COMMAND) &
                    (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER), ==, 0);
    dev_map(d);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0);
    step_us(d, 100);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    g_assert_cmphex(rd(d, R_FAULT_MASK), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_ROUTE), ==, 0x01543210);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_MASK), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_QUEUE_ENABLE), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_SIZE), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + Q(1) + Q_TAIL), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + ENG(0) + E_SOFT_RESETS), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + ENG(0) + E_LAST_ERROR), ==, 0xff);
    g_assert_cmphex(rd(d, CORE(1) + ENG(2) + E_SREG(5)), ==, 0);
    g_assert_cmphex(qpci_io_readl(d->dev, d->bar4, 0x10), ==, 0xfeedf00d);
    dev_stop(d);
}

/*
 * A fetch outside device memory: SEQUENCER_FATAL with info_kind EXCEPTION
 * (4, the low nibble of byte 1), HALTED at pc 1. SP's program is one NOP in
 * the last 32 bytes of device memory with PROG_COUNT 2, so pc 1 lies at
 * MEM_SIZE. The record: error_id 0x0a @0, byte 1 0x04, byte 2 0,
 * header 0x9f @3, metadata_hi {block 4 (SP), pc 1 << 4} = 0x14 @4,
 * info (metadata_hi bits 23..16: exception Type, Cause) 0 @6.
 */
static void test_fetch_exception(void)
{
    Dev *d = dev_start(NULL);
    Insn nop = insn(OP_NOP, 0, 0, 0);
    uint64_t ring = host_ring(d, 0, 3, 64, 0);  /* the error class's queue */
    uint32_t off = MEM_SIZE - sizeof(Insn);
    uint8_t r[16];

    qpci_memwrite(d->dev, d->bar4, off, &nop, sizeof(nop));
    wr(d, CORE(0) + ENG(4) + E_PROG_BASE_LO, off);
    wr(d, CORE(0) + ENG(4) + E_PROG_BASE_HI, 0);
    wr(d, CORE(0) + ENG(4) + E_PROG_COUNT, 2);
    wr(d, CORE(0) + ENG(4) + E_CTRL, CTRL_START);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_STATUS), ==, ST_HALTED);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_LAST_ERROR), ==, 0x0a);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_PC), ==, 1);
    g_assert_cmphex(rd(d, CORE(0) + Q(3) + Q_TAIL), ==, 1);
    slot(d, ring, 0, r);
    g_assert_cmphex(r[0], ==, 0x0a);            /* SEQUENCER_FATAL */
    g_assert_cmphex(r[1], ==, 0x04);            /* info_kind EXCEPTION */
    g_assert_cmphex(r[2], ==, 0x00);            /* metadata_lo high byte */
    g_assert_cmphex(r[3], ==, 0x9f);            /* phase | TPB_ERROR */
    g_assert_cmphex(r[4], ==, 0x14);            /* SP, pc 1 */
    g_assert_cmphex(r[6], ==, 0x00);            /* info: Type, Cause not made */
    dev_stop(d);
}

/* An unknown opcode: SEQUENCER_FATAL, HALTED, LAST_ERROR 0x0a, intr_6. */
static void test_bad_opcode(void)
{
    Dev *d = dev_start(NULL);
    Insn p[2] = { insn(0x7f, 0, 0, 0), insn(OP_HALT, 0, 0, 0) };
    uint64_t ring = host_ring(d, 0, 3, 64, 0);  /* the error class's queue */
    uint8_t r[16];

    run(d, 0, 4, p, 2);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_STATUS), ==, ST_HALTED);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_LAST_ERROR), ==, 0x0a);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_PC), ==, 0);
    g_assert_cmphex(rd(d, CORE(0) + N_INTR_STATUS) & (1u << 6), ==, 1u << 6);
    g_assert_cmphex(rd(d, CORE(0) + Q(3) + Q_TAIL), ==, 1);
    slot(d, ring, 0, r);
    g_assert_cmphex(r[3], ==, 0x9f);            /* phase | TPB_ERROR */
    g_assert_cmphex(r[0], ==, 0x0a);            /* SEQUENCER_FATAL */
    /* START is ignored while HALTED; CTRL.RESET leaves it */
    wr(d, CORE(0) + ENG(4) + E_CTRL, CTRL_START);
    step_us(d, 100);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_STATUS), ==, ST_HALTED);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_SOFT_RESETS), ==, 1);
    wr(d, CORE(0) + ENG(4) + E_CTRL, 0x2);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, CORE(0) + ENG(4) + E_LAST_ERROR), ==, 0x0a);
    dev_stop(d);
}

/* ---- issue 44: records in order, the bounds log, DMA packet counters ---- */

/*
 * Two engines hand a token back and forth through semaphores 0 and 1, so
 * the order in which their NOTIFYs are produced is fixed by the program:
 * PE's round k is NOTIFY 0xa0 + 2k (pc 3k), SEM_INC sem 0, WAIT_GE sem 1 >=
 * k + 1; ACT's is WAIT_GE sem 0 >= k + 1, NOTIFY 0xa1 + 2k (pc 3k + 1),
 * SEM_INC sem 1. Both EXPLICIT classes go to queue 1, here a ring in device
 * memory (CTRL.DEVICE_MEM, BAR4 0x800000) of 4 entries under backpressure,
 * drained by hand through BAR4 and the doorbell while the engines run. The
 * ten records must arrive in the order produced, with the phase of their
 * pass (docs/hardware.md#rec-phase: 1, 0, 1 over passes of 4). Expected
 * per record: header (phase | PE EXPLICIT 0x06 or ACT EXPLICIT 0x0a), the
 * NOTIFY's pc (bits 19..0 of word 0) and debug_hint_extended (bytes 6..7).
 */
static void test_device_ring_order(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0), head = 0, tail;
    Insn pe[16], act[16];
    uint8_t r[16];
    unsigned int k, n = 0, loops;
    static const struct {
        uint8_t hdr;
        uint32_t pc;
        uint16_t ext;
    } want[10] = {
        { 0x86, 0, 0xa0 }, { 0x8a, 1, 0xa1 }, { 0x86, 3, 0xa2 },
        { 0x8a, 4, 0xa3 }, { 0x06, 6, 0xa4 }, { 0x0a, 7, 0xa5 },
        { 0x06, 9, 0xa6 }, { 0x0a, 10, 0xa7 }, { 0x86, 12, 0xa8 },
        { 0x8a, 13, 0xa9 },
    };

    for (k = 0; k < 5; k++) {
        pe[3 * k] = notify(0, 0xa0 + 2 * k);
        pe[3 * k + 1] = insn(OP_SEM_INC, 0, 0, 1);
        pe[3 * k + 2] = insn(OP_WAIT_GE, 0, 1, k + 1);
        act[3 * k] = insn(OP_WAIT_GE, 0, 0, k + 1);
        act[3 * k + 1] = notify(0, 0xa1 + 2 * k);
        act[3 * k + 2] = insn(OP_SEM_INC, 0, 1, 1);
    }
    pe[15] = insn(OP_HALT, 0, 0, 0);
    act[15] = insn(OP_HALT, 0, 0, 0);

    wr(d, b + Q(1) + Q_BASE_LO, 0x800000);
    wr(d, b + Q(1) + Q_BASE_HI, 0);
    wr(d, b + Q(1) + Q_SIZE, 64);
    wr(d, b + Q(1) + Q_CTRL, QC_DEVICE_MEM);
    wr(d, b + N_QUEUE_ENABLE, 1u << 1);
    g_assert_cmphex(rd(d, b + N_QUEUE_ENABLE), ==, 1u << 1);

    load_start(d, 0, 1, act, 16);
    load_start(d, 0, 0, pe, 16);
    for (loops = 0; n < 10 && loops < 200; loops++) {
        step_us(d, 50);
        tail = rd(d, b + Q(1) + Q_TAIL);
        g_assert_cmpuint(tail - head, <=, 4);
        for (; head != tail && n < 10; head++, n++) {
            qpci_memread(d->dev, d->bar4, 0x800000 + (head & 3) * 16, r, 16);
            g_assert_cmphex(r[3], ==, want[n].hdr);
            g_assert_cmphex(ldl_le_p(r) & 0xfffff, ==, want[n].pc);
            g_assert_cmphex(lduw_le_p(&r[6]), ==, want[n].ext);
        }
        wr(d, b + DOORBELL(1), head);
    }
    g_assert_cmpuint(n, ==, 10);
    step_us(d, 1000);
    g_assert_cmphex(rd(d, b + Q(1) + Q_TAIL), ==, 10);
    g_assert_cmphex(rd(d, b + Q(1) + Q_HEAD), ==, 10);
    g_assert_cmphex(rd(d, b + Q(1) + Q_DROP), ==, 0);
    g_assert_cmphex(rd(d, b + Q(1) + Q_OVERFLOW), ==, 0);
    g_assert_cmphex(rd(d, b + ENG(0) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, b + ENG(1) + E_STATUS), ==, ST_IDLE);
    dev_stop(d);
}

/*
 * DGE_COPY of 8 bytes from 0x1000 to 0x2000 on POOL, backend POOL, with
 * the two BOUND_CHECK_REG bytes @bc_src, @bc_dst (bit 7 bc_enabled, bit 6
 * bc_disable_oob_error_notif, bits 5..0 bc_reg).
 */
static Insn dge_bc(uint8_t bc_src, uint8_t bc_dst)
{
    Insn in = insn(OP_DGE_COPY, 0, 0, 0);

    stl_le_p(&in.b[16], 0x1000);
    stl_le_p(&in.b[20], 0x2000);
    stl_le_p(&in.b[24], 8);
    in.b[28] = bc_src;
    in.b[29] = bc_dst;
    in.b[31] = 1;
    return in;
}

/* The lines of @path that hold "DGE:", in order, as one string. */
static char *dge_log_lines(const char *path)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    GString *out = g_string_new("");
    unsigned int i;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    for (i = 0; lines[i]; i++) {
        if (strstr(lines[i], "DGE:")) {
            g_string_append_printf(out, "%s\n", lines[i]);
        }
    }
    return g_string_free(out, false);
}

/*
 * The guest-error log of failed bounds checks, in the reference firmware's
 * words (docs/device-model.md#dge-log): "bounds:(" with, per direction,
 * bc_enabled, the last byte and the limit; "Failed bounds check.
 * $S[reg]+=overshoot." per failing direction; "Dispatched error
 * notification" when the record goes out. $S[10] = 0x1007 (src passes),
 * $S[11] = 0x1003 (src 4 over), $S[20] = 0x2005 (dst 2 over).
 * First program, FEATURE_FLAGS bit 1 set: pc 0 dst fails (reported); pc 1
 * src fails, dst check off; pc 2 both fail, src suppressed (dst reported);
 * pc 3 dst fails, suppressed (no record). Second program, bit 1 clear:
 * pc 0 dst fails, no record. Third, bit 1 still clear: a scatter of two
 * 4-byte elements, indices {0, 1} at 0x3000, dst bound $S[12] = 0: index 1
 * is 1 over, and an index overflow with bit 1 clear is SEQUENCER_FATAL
 * (the engine halts). Four records on queue 3.
 */
static void test_dge_bounds_log(void)
{
    g_autofree char *path = NULL;
    g_autofree char *props = NULL;
    g_autofree char *got = NULL;
    int fd = g_file_open_tmp("neuron-dge-log-XXXXXX", &path, NULL);
    Dev *d;
    uint32_t b = CORE(0);
    Insn p1[5] = {
        dge_bc(0x8a, 0x94), dge_bc(0x8b, 0x00), dge_bc(0xcb, 0x94),
        dge_bc(0x00, 0xd4), insn(OP_HALT, 0, 0, 0),
    };
    Insn p2[2] = { dge_bc(0x8a, 0x94), insn(OP_HALT, 0, 0, 0) };
    Insn p3[2] = { dge_scatter(0x1000, 0x2000, 8, 2, 0x3000),
                   insn(OP_HALT, 0, 0, 0) };
#define WHO "neuron-tpb: core 0 engine 2 (POOL) pc "
    static const char want[] =
        WHO "0: DGE: bounds:(1 0x1007<=0x1007, 1 0x2007<=0x2005)\n"
        WHO "0: DGE: Failed bounds check. $S[20]+=2.\n"
        WHO "0: DGE: Dispatched error notification\n"
        WHO "1: DGE: bounds:(1 0x1007<=0x1003, 0 0x0<=0x0)\n"
        WHO "1: DGE: Failed bounds check. $S[11]+=4.\n"
        WHO "1: DGE: Dispatched error notification\n"
        WHO "2: DGE: bounds:(1 0x1007<=0x1003, 1 0x2007<=0x2005)\n"
        WHO "2: DGE: Failed bounds check. $S[11]+=4.\n"
        WHO "2: DGE: Failed bounds check. $S[20]+=2.\n"
        WHO "2: DGE: Dispatched error notification\n"
        WHO "3: DGE: bounds:(0 0x0<=0x0, 1 0x2007<=0x2005)\n"
        WHO "3: DGE: Failed bounds check. $S[20]+=2.\n"
        WHO "3: DGE: error notification not dispatched "
            "(bc_disable_oob_error_notif): descriptor skipped\n"
        WHO "0: DGE: bounds:(1 0x1007<=0x1007, 1 0x2007<=0x2005)\n"
        WHO "0: DGE: Failed bounds check. $S[20]+=2.\n"
        WHO "0: DGE: error notification not dispatched (FEATURE_FLAGS bit 1 "
            "clear): descriptor skipped\n"
        WHO "0: DGE: bounds:(0 0x0<=0x0, 1 0x1<=0x0)\n"
        WHO "0: DGE: Failed bounds check. $S[12]+=1.\n"
        WHO "0: DGE: index out of bounds: SEQUENCER_FATAL, engine halted\n";
#undef WHO

    g_assert_cmpint(fd, >=, 0);
    close(fd);
    /* the rest of the command line after -device's properties */
    props = g_strdup_printf(" -d guest_errors -D %s", path);
    d = dev_start(props);
    host_ring(d, 0, 3, 64, 0);                  /* the error class's queue */
    wr(d, b + ENG(2) + E_SREG(10), 0x1007);
    wr(d, b + ENG(2) + E_SREG(11), 0x1003);
    wr(d, b + ENG(2) + E_SREG(20), 0x2005);
    wr(d, b + ENG(2) + E_FEATURE_FLAGS, 0x2);
    run(d, 0, 2, p1, 5);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    wr(d, b + ENG(2) + E_FEATURE_FLAGS, 0x0);
    run(d, 0, 2, p2, 2);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, b + Q(3) + Q_TAIL), ==, 3);
    p3[0].b[29] = 0x8c;                         /* bc_enabled, $S[12] */
    wr(d, b + ENG(2) + E_SREG(12), 0);
    mem_wl(d, 0x3000, 0);
    mem_wl(d, 0x3004, 1);
    run(d, 0, 2, p3, 2);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_HALTED);
    g_assert_cmphex(rd(d, b + Q(3) + Q_TAIL), ==, 4);
    got = dge_log_lines(path);
    g_assert_cmpstr(got, ==, want);
    dev_stop(d);
    unlink(path);
}

/*
 * PACKETS(i) (docs/device-model.md#dma-engines): packets DMA engine i of
 * the core carried, counted only for copies that were emitted, per core,
 * kept by the RESET register, cleared by a function reset. Copies (POOL,
 * 0 -> 0x400000): 65 bytes = 2 packets, engine 0; 262208 bytes = 4097
 * packets, 2049 on engine 0 and 2048 on engine 1; then a bounds failure
 * ($S[10] = 0, src checked, FEATURE_FLAGS 0: no record) and a copy with
 * backend NONE, neither of which reaches the DMA engines.
 */
static void test_dma_packets(void)
{
    Dev *d = dev_start(NULL);
    uint32_t b = CORE(0);
    Insn p[5] = { dge(65), dge(262208), dge(64), dge(64),
                  insn(OP_HALT, 0, 0, 0) };
    uint16_t ctl;

    p[2].b[28] = 0x8a;                          /* bc_enabled, $S[10] */
    p[3].b[31] = 0;                             /* backend NONE */
    wr(d, b + ENG(2) + E_SREG(10), 0);
    run(d, 0, 2, p, 5);
    g_assert_cmphex(rd(d, b + ENG(2) + E_STATUS), ==, ST_IDLE);
    g_assert_cmphex(rd(d, b + ENG(2) + E_PC), ==, 5);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(0)), ==, 2051);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(1)), ==, 2048);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(2)), ==, 0);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(15)), ==, 0);
    g_assert_cmphex(rd(d, CORE(1) + DMA_PACKETS(0)), ==, 0);
    /* read-only */
    wr(d, b + DMA_PACKETS(0), 7);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(0)), ==, 2051);
    /* the RESET register keeps them */
    wr(d, R_RESET, 1);
    step_us(d, 100);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(0)), ==, 2051);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(1)), ==, 2048);
    /* a function reset (FLR) clears them */
    ctl = qpci_config_readw(d->dev, 0x80 + PCI_EXP_DEVCTL);
    qpci_config_writew(d->dev, 0x80 + PCI_EXP_DEVCTL, ctl | PCI_EXP_DEVCTL_BCR_FLR);
    dev_map(d);
    step_us(d, 100);
    g_assert_cmphex(rd(d, R_DEV_STATUS), ==, 0x3);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(0)), ==, 0);
    g_assert_cmphex(rd(d, b + DMA_PACKETS(1)), ==, 0);
    dev_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    /* a failed check fails its case and the run goes on (-k) */
    g_test_set_nonfatal_assertions();

    qtest_add_func("/neuron-tpb/pci/identity", test_pci_identity);
    qtest_add_func("/neuron-tpb/pci/bar-sizes", test_bar_sizes);
    qtest_add_func("/neuron-tpb/regs/global", test_global_regs);
    qtest_add_func("/neuron-tpb/regs/gen-sunda", test_gen_sunda);
    qtest_add_func("/neuron-tpb/regs/core-reset-values", test_core_reset_values);
    qtest_add_func("/neuron-tpb/regs/read-write", test_register_rw);
    qtest_add_func("/neuron-tpb/regs/timestamp", test_timestamp);
    qtest_add_func("/neuron-tpb/queue/enable-checks", test_queue_enable_checks);
    qtest_add_func("/neuron-tpb/queue/record-dma", test_record_dma);
    qtest_add_func("/neuron-tpb/queue/phase-wrap-backpressure",
                   test_phase_wrap_backpressure);
    qtest_add_func("/neuron-tpb/queue/ignore-full", test_ignore_full);
    qtest_add_func("/neuron-tpb/queue/full-no-policy", test_full_no_policy);
    qtest_add_func("/neuron-tpb/queue/disabled-drop", test_disabled_queue);
    qtest_add_func("/neuron-tpb/queue/stuck-disable", test_stuck_disable);
    qtest_add_func("/neuron-tpb/queue/threshold-bad-head",
                   test_threshold_bad_head);
    qtest_add_func("/neuron-tpb/coalesce/register", test_coalesce_register);
    qtest_add_func("/neuron-tpb/coalesce/time-limit", test_coalesce_time_limit);
    qtest_add_func("/neuron-tpb/coalesce/count-first",
                   test_coalesce_count_first);
    qtest_add_func("/neuron-tpb/coalesce/head-write", test_coalesce_head_write);
    qtest_add_func("/neuron-tpb/coalesce/live-write", test_coalesce_live_write);
    qtest_add_func("/neuron-tpb/coalesce/disable", test_coalesce_disable);
    qtest_add_func("/neuron-tpb/msix/table", test_msix_table);
    qtest_add_func("/neuron-tpb/msix/core-vector", test_msix_core_vector);
    qtest_add_func("/neuron-tpb/msix/other-vectors", test_msix_other_vectors);
    qtest_add_func("/neuron-tpb/fault/dma-error-bits",
                   test_fault_dma_error_bits);
    qtest_add_func("/neuron-tpb/evtsem/windows", test_evtsem_windows);
    qtest_add_func("/neuron-tpb/evtsem/engine", test_evtsem_engine);
    qtest_add_func("/neuron-tpb/evtsem/axi-record", test_evtsem_axi_record);
    qtest_add_func("/neuron-tpb/notific/ring-write-error-marks-next",
                   test_ring_write_error_marks_next);
    qtest_add_func("/neuron-tpb/notific/full-ring-drop-marks-next",
                   test_full_ring_drop_marks_next);
    qtest_add_func("/neuron-tpb/dma/regs", test_dma_regs);
    qtest_add_func("/neuron-tpb/dma/split-records", test_dma_split_records);
    qtest_add_func("/neuron-tpb/dge/scatter-rewrites-own-table",
                   test_dge_scatter_rewrites_table);
    qtest_add_func("/neuron-tpb/dge/scatter-table-far",
                   test_dge_scatter_table_far);
    qtest_add_func("/neuron-tpb/dge/memory-error-flag-clear",
                   test_dge_memory_error_flag_clear);
    qtest_add_func("/neuron-tpb/reset/global", test_global_reset);
    qtest_add_func("/neuron-tpb/reset/flr", test_flr);
    qtest_add_func("/neuron-tpb/engine/bad-opcode", test_bad_opcode);
    qtest_add_func("/neuron-tpb/engine/fetch-exception", test_fetch_exception);
    qtest_add_func("/neuron-tpb/queue/device-ring-order",
                   test_device_ring_order);
    qtest_add_func("/neuron-tpb/dge/bounds-log", test_dge_bounds_log);
    qtest_add_func("/neuron-tpb/dma/packets", test_dma_packets);

    return g_test_run();
}
