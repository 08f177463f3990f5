#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the hand-made devcoredumps the cli.golden.coredump_* tests decode
# (userspace/CMakeLists.txt). Every field is a literal picked by hand from
# the NNQCORE layout of docs/decisions/0013-coredump.md and
# include/uapi/linux/neuron.h (struct neuron_coredump_header, _engine,
# _queue), the record layouts of include/uapi/linux/neuron_record.h and the
# instruction layout of include/uapi/linux/neuron_isa.h; hang.txt and
# hang.json beside them are the expected output, written by hand.
# Usage: make-dumps.py DIR   (the .bin files are committed; rerun after a change)
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "."

# struct neuron_coredump_header, 72 bytes
header = struct.pack(
    "<8sIIIIIIIIQIIIIII",
    b"NNQCORE\0",
    1,            # version
    72,           # header_size
    384,          # total_size: 72 + 5*24 + (32 + 2*16) + 4*32
    0,            # device: nnq0
    1,            # core 1
    0,            # engine PE
    1,            # cause NEURON_COREDUMP_HANG
    2,            # pc: the wait.ge
    12345678901,  # timestamp_ns: 12.345678901 s
    500,          # timeout_ms
    5,            # num_engines
    1,            # num_queues
    0,            # insn_first
    4,            # insn_count
    0)            # reserved

# struct neuron_coredump_engine: state, pc, exec_count, soft_reset_counter,
# last_error, prog_count (states: 0 IDLE, 2 WAITING, 3 HALTED)
engines = b"".join(struct.pack("<6I", *e) for e in (
    (2, 2, 2, 3, 0xff, 4),   # PE: WAITING at pc 2, third program
    (0, 0, 0, 0, 0xff, 0),   # ACT
    (0, 0, 0, 0, 0xff, 0),   # POOL
    (0, 0, 0, 0, 0xff, 0),   # DVE
    (3, 5, 6, 1, 0x01, 7),   # SP: HALTED at pc 5 by FP_NAN (error id 0x01)
))

# struct neuron_coredump_queue: queue 1 (EXPLICIT's by default), host ring
queue = struct.pack("<6IQ", 1, 0, 4096, 3, 3, 2, 0)


def explicit(pc, hint, run, ext, ts_ps):
    """A PE EXPLICIT record (type 0x06), phase 1: header byte 0x86."""
    w0 = pc | (hint << 20) | (0x86 << 24)
    return struct.pack("<IHHQ", w0, run, ext, ts_ps)


records = explicit(1, 3, 2, 0x1234, 2000000) + explicit(1, 3, 3, 0x1234, 3000000)


def insn(opcode, hint=0, idx=0, value=0, ext=0):
    """struct neuron_emu_insn, 32 bytes, no EVENTS block."""
    return struct.pack("<BBHI8sIIHHI", opcode, 0, hint, 0, bytes(8), idx, value, ext, 0, 0)


program = (insn(0x00) +                       # nop
           insn(0x01, hint=3, ext=0x1234) +   # notify hint=3 ext=0x1234
           insn(0x06, idx=200, value=1) +     # wait.ge 200 1
           insn(0x02))                        # halt

dump = header + engines + queue + records + program
assert len(dump) == 384
with open(f"{out}/hang.bin", "wb") as f:
    f.write(dump)
# broken ones: each refused with its own message
with open(f"{out}/bad-magic.bin", "wb") as f:
    f.write(b"NNQCORX\0" + dump[8:])
with open(f"{out}/version2.bin", "wb") as f:
    f.write(dump[:8] + struct.pack("<I", 2) + dump[12:])
with open(f"{out}/truncated.bin", "wb") as f:
    f.write(dump[:200])
with open(f"{out}/records-past-end.bin", "wb") as f:
    # total_size and the file agree (240), but queue 1's 2 records do not fit
    f.write(dump[:16] + struct.pack("<I", 240) + dump[20:240])
