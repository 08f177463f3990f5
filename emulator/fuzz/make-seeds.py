#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the hand-made seeds of the neuron-tpb-program target into
corpus/neuron-tpb-program/seed-* (the operation encoding of
neuron_tpb_fuzz.c, "Input"). Each seed is a program the driver could submit:
a libFuzzer run starts from working programs and mutates them, instead of
searching for a valid ring set-up and instruction by chance."""
import os
import struct

INSN, DATA, IDX, REG, NOTIFIC, QUEUE, START, SREG, FEATURE, EVTSEM, GLOBAL, DMA, STEP = range(13)
NOP, NOTIFY, HALT, SEM_SET, SEM_INC, SEM_DEC, WAIT_GE, WAIT_GE_AND_DEC = range(8)
EVENT_SET, EVENT_CLEAR, REG_WRITE, DGE_COPY, FP_ERROR, THROTTLE, DELAY = range(8, 15)
BC_ENABLED = 0x80
GATHER, SCATTER = 1, 2
ELEM_SHIFT = 1          # NEURON_DGE_F_ELEM_SHIFT: element 1 << n bytes
DATA_BASE = 0x15000     # neuron_tpb_fuzz.c DATA_BASE: DGE windows below it move up
POOL = 2                # the DGE runs on the POOL engine only (docs/hardware.md#dge)


def insn(slot, op, flags=0, hint=0, res0=0, events=(0, 0, 0, 0, 0), operand=b"\0" * 16):
    return bytes([INSN, slot]) + struct.pack("<BBHI", op, flags, hint, res0) + \
        struct.pack("<BBBBI", *events) + operand


def arg(idx, value, ext=0):
    return struct.pack("<IIHHI", idx, value, ext, 0, 0)


def dge(src, dst, length, bc_src=0, bc_dst=0, indirect=0, backend=1):
    return struct.pack("<IIIBBBB", src, dst, length, bc_src, bc_dst, indirect, backend)


def queue(core, q, dev=False, log2=10, enable=True):
    return bytes([QUEUE, core, q, (1 if dev else 0) | ((log2 - 6) << 1) | (0x10 if enable else 0)])


def start(core, eng, slot, count):
    return bytes([START, core, eng, slot, count - 1])


def data(off, payload):  # off: bytes above DATA_BASE, a multiple of 16
    return bytes([DATA]) + struct.pack("<HB", off // 16, len(payload)) + payload


def idx(off, entries):  # off: bytes above DATA_BASE, a multiple of 4
    return bytes([IDX]) + struct.pack("<HB", off // 4, len(entries)) + bytes(entries)


def sreg(core, eng, n, v):
    return bytes([SREG, core, eng, n]) + struct.pack("<I", v)


def feature(core, eng, v):
    return bytes([FEATURE, core, eng, v])


def step(ns):
    return bytes([STEP]) + struct.pack("<H", ns // 100)


def route_default(core):
    return bytes([NOTIFIC, core, 0x24 // 4]) + struct.pack("<I", 0x01543210)


def all_queues(core, dev=False):
    return route_default(core) + b"".join(queue(core, q, dev) for q in range(7))


seeds = {
    # NOTIFY and HALT on a traced engine: EXPLICIT and trace records in host rings
    "notify": all_queues(0) + bytes([NOTIFIC, 0, 0x28 // 4]) + struct.pack("<I", 0x1f) +
    insn(0, NOTIFY, hint=7, operand=arg(0, 0, 9)) + insn(1, HALT) + start(0, 0, 0, 2),
    # semaphores: one engine waits, another sets; EVENTS block update
    "semaphores": all_queues(1) + insn(0, WAIT_GE, operand=arg(3, 2)) + insn(1, HALT) +
    insn(2, SEM_INC, events=(0, 0, 1, 4, 5), operand=arg(3, 2)) + insn(3, HALT) +
    start(1, 0, 0, 2) + step(5000) + start(1, 1, 2, 2),
    # a direct DGE copy with packet notifications and a bound
    "dge-direct": all_queues(0) + feature(0, POOL, 2) + sreg(0, POOL, 4, DATA_BASE + 0x2000) +
    data(0, bytes(range(64))) +
    insn(0, DGE_COPY, operand=dge(DATA_BASE, DATA_BASE + 0x1000, 64, 0, BC_ENABLED | 4)) +
    insn(1, HALT) + start(0, POOL, 0, 2),
    # issue 40's scatter: the destination window holds its own index table
    "dge-scatter-own-table": all_queues(0) + feature(0, POOL, 2) +
    sreg(0, POOL, 10, 0x4000) + idx(0x100, [1, 0, 0, 0, 0, 0, 0, 0]) +
    data(0x200, struct.pack("<II", 0x40, 0x41414141)) +
    insn(0, DGE_COPY, flags=2 << ELEM_SHIFT, res0=DATA_BASE + 0x100,
         operand=dge(DATA_BASE + 0x200, DATA_BASE + 0x100, 32, 0, BC_ENABLED | 10, SCATTER)) +
    insn(1, HALT) + start(0, POOL, 0, 2),
    # a gather with an index out of its bound (non-fatal record)
    "dge-gather-oob": all_queues(0) + feature(0, POOL, 2) + sreg(0, POOL, 5, 3) +
    idx(0x300, [0, 1, 2, 9]) + data(0x400, bytes(range(16))) +
    insn(0, DGE_COPY, flags=0, res0=DATA_BASE + 0x300,
         operand=dge(DATA_BASE + 0x400, DATA_BASE + 0x800, 4, BC_ENABLED | 5, 0, GATHER)) +
    insn(1, HALT) + start(0, POOL, 0, 2),
    # device-memory rings, AXI_EVT_SEM records from host semaphore writes
    "devmem-rings-axi": all_queues(1, dev=True) +
    bytes([EVTSEM, 1, 4]) + struct.pack("<I", 1) +
    bytes([EVTSEM, 1, 1, 5]) + struct.pack("<I", 0x5eed) +
    bytes([EVTSEM, 1, 2, 5]) + struct.pack("<I", 1) +
    bytes([EVTSEM, 1, 0, 9]) + struct.pack("<I", 1),
    # a small ring filled past its size, backpressure, then HEAD moves
    "ring-full": route_default(0) + queue(0, 1, log2=6) +
    b"".join(insn(i, NOTIFY, hint=i) for i in range(8)) + insn(8, HALT) + start(0, 0, 0, 9) +
    step(20000) + bytes([NOTIFIC, 0, (0x100 + 0x28 + 0x0c) // 4]) + struct.pack("<I", 2),
    # fatal error, THROTTLE and DMA completions
    "fatal-throttle-dma": all_queues(0) + bytes([GLOBAL, 0x24 // 4]) + struct.pack("<I", 1) +
    bytes([DMA, 0, 0]) + struct.pack("<I", 0xffff) + feature(0, POOL, 2) +
    insn(0, THROTTLE, operand=arg(0, 3)) +
    insn(1, DGE_COPY, operand=dge(DATA_BASE, DATA_BASE + 0x8000, 0x2000)) +
    insn(2, FP_ERROR, operand=arg(0, 0x42)) + start(0, POOL, 0, 3),
}

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "neuron-tpb-program")
os.makedirs(out, exist_ok=True)
for name, blob in seeds.items():
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(blob)
print(f"{len(seeds)} seeds in {out}")
