#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drain throughput of the neuron module into NumPy, beside the C API's
drain on the same ring (issue 41): a program of N NOTIFYs fills queue 1 of
core 0; each side drains the whole run into a preallocated buffer. Prints
records/s, asserts nothing (figures, not checks).

    bench_drain.py DEVICE [NOTIFIES] [ROUNDS]
"""
import errno
import sys
import time

import numpy as np

import neuron
from neuron import _ffi, _lib


def notifies(n):
    """n NOTIFY (opcode 0x01) and a HALT (0x02), 32 bytes an instruction."""
    prog = bytearray(32 * (n + 1))
    for i in range(n):
        prog[32 * i] = 0x01
    prog[32 * n] = 0x02
    return bytes(prog)


def submit_when_idle(dev, prog):
    """The previous round's HALT may still be running: EBUSY, try again."""
    for _ in range(500):
        try:
            return dev.submit(0, 0, prog, trace=False)
        except neuron.NeuronError as e:
            if e.errno != errno.EBUSY:
                raise
            time.sleep(0.01)
    raise neuron.NeuronError(errno.EBUSY, "engine 0 of core 0 stayed busy for 5 s")


def one_round(dev, q, n, drain):
    submit_when_idle(dev, notifies(n))
    got, t0 = 0, time.perf_counter()
    deadline = t0 + 10
    while got < n and time.perf_counter() < deadline:
        got += drain(got)
    return got, time.perf_counter() - t0


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "/dev/nnq0"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with neuron.Device(path) as dev, dev.queue(0, 1, 65536) as q:
        out = np.empty(n, dtype=neuron.RECORD_DTYPE)
        craw = _ffi.new("struct libneuron_record[]", n)
        sides = {
            "numpy drain_into": lambda got: q.drain_into(out[got:]),
            "C libneuron_queue_drain": lambda got: _lib.libneuron_queue_drain(q._p(), craw + got, n - got, _ffi.NULL),
        }
        for name, drain in sides.items():
            best = 0.0
            for _ in range(rounds):
                got, secs = one_round(dev, q, n, drain)
                best = max(best, got / secs if secs else 0.0)
            print("# %-24s %d records/round, best %.0f records/s (submit to the last record drained; "
                  "the C side called through cffi)" % (name, n, best))


if __name__ == "__main__":
    main()
