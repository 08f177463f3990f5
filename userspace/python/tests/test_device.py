# SPDX-License-Identifier: MIT
"""The neuron module on the real driver (the VM, as uid 1000; run with
NEURON_TEST_DEVICE=/dev/nnq0, skipped without): run examples/hello.nq,
drain a queue into NumPy, events, and fork
(docs/decisions/0041-fork-in-libneuron.md) with Python multiprocessing."""
import errno
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import neuron

DEV = os.environ.get("NEURON_TEST_DEVICE")
HERE = os.path.dirname(os.path.abspath(__file__))
HELLO = os.environ.get("NEURON_HELLO_NQ", os.path.join(HERE, "..", "..", "..", "examples", "hello.nq"))
pytestmark = pytest.mark.skipif(not DEV, reason="NEURON_TEST_DEVICE not set (runs in the VM)")


def test_hello_runs_and_its_records_decode():
    with neuron.Device(DEV) as dev, neuron.Program.from_file(HELLO) as prog, dev.run(prog, timeout_ms=5000) as r:
        assert r.status_name == "OK", r.error
        # PE: 4 x (INST_START, INST_END) + 1 EXPLICIT; ACT: 2 x 2 + 1 (examples/hello.nq)
        assert len(r.records) == 14
        d = r.decoded()
        explicit = [x for x in d if x["kind"] == "EXPLICIT"]
        assert sorted(x["debug_hint"] for x in explicit) == [1, 3]
        assert [x["debug_hint_extended"] for x in explicit if x["debug_hint"] == 3] == [0x1234]
        assert (r.records["raw"]["header"] & 0x1f).tolist() == [x["notific_type"] for x in d]


def nops_then_halt(n):
    """n NOPs and a HALT, encoded: opcode byte 0 of each 32-byte
    struct neuron_emu_insn, NEURON_OP_NOP 0x00, NEURON_OP_HALT 0x02."""
    prog = bytearray(32 * (n + 1))
    prog[32 * n] = 0x02
    return bytes(prog)


def test_drain_into_a_preallocated_numpy_array():
    # traced, 3 NOPs and a HALT write 4 x (INST_START, INST_END) = 8 trace
    # records to queue 0 of core 0 (the default route's trace queue)
    with neuron.Device(DEV) as dev, dev.queue(0, 0, 4096) as q:
        dev.submit(0, 0, nops_then_halt(3))
        out = np.empty(256, dtype=neuron.RECORD_DTYPE)
        got = 0
        deadline = time.monotonic() + 5
        while got < 8 and time.monotonic() < deadline:
            n = q.drain_into(out[got:])  # a view of the same buffer: no copy per record
            if n == 0:
                time.sleep(0.01)
            got += n
        assert got == 8
        types = (out[:8]["header"] & 0x1f).tolist()
        # PE INST_START 0x04, INST_END 0x05 (docs/hardware.md#rec-header), alternating
        assert types == [0x04, 0x05] * 4
        assert q.decode(out[0])["kind"] == "TRACE"


def test_events_iterate_and_end():
    with neuron.Device(DEV) as dev:
        assert list(dev.events(timeout=0)) == [] or True  # whatever is queued, the iterator ends


FORK_PARENT = textwrap.dedent("""
    import multiprocessing, os, sys, time
    import neuron
    dev = neuron.Device(sys.argv[1])
    dev.acquire(0b10)  # core 1
    def worker(path):
        try:
            dev.acquire(0b10)
            res = "no error"
        except neuron.NeuronError as e:
            res = "%d %s" % (e.errno, e.strerror)
        with open(path, "w") as f:
            f.write(res)
        time.sleep(60)  # outlive the parent
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=worker, args=(sys.argv[2],))
    p.start()
    while not os.path.exists(sys.argv[2]) or os.path.getsize(sys.argv[2]) == 0:
        time.sleep(0.01)
    with open(sys.argv[3], "w") as f:
        f.write(str(p.pid))
    os._exit(0)  # the parent exits without joining its worker
""")


def test_a_forked_worker_neither_uses_nor_keeps_the_parents_cores(tmp_path):
    result, pidfile, log = tmp_path / "worker.txt", tmp_path / "worker.pid", tmp_path / "parent.log"
    # no pipes: the worker inherits the parent's stdout and stderr and lives
    # on, so a pipe would never see EOF; wait() needs only the parent's exit
    with open(log, "w") as out:
        parent = subprocess.Popen([sys.executable, "-c", FORK_PARENT, DEV, str(result), str(pidfile)],
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        assert parent.wait(timeout=60) == 0, log.read_text()
    worker = int(pidfile.read_text())
    try:
        os.kill(worker, 0)  # the worker still lives
        code, text = result.read_text().split(" ", 1)
        assert int(code) == errno.ECHILD, text
        assert "made by the parent process before fork()" in text
        # the parent's core is free: this third process takes it
        with neuron.Device(DEV) as dev:
            assert dev.acquire(0b10) & 0b10
            os.kill(worker, 0)  # and the worker is still alive
    finally:
        os.kill(worker, signal.SIGKILL)
