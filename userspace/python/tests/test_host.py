# SPDX-License-Identifier: MIT
"""The neuron module on the host, without a device (ctest python.host): the
layouts it declares, decoding, errors as OSError with the library's errno,
context managers. The device paths run in the VM (test_device.py)."""
import errno
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import neuron
from neuron import _ffi

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

STRUCTS = ["libneuron_record", "libneuron_decoded", "libneuron_device_info", "libneuron_event",
           "libneuron_exec_record", "libneuron_exec_options", "libneuron_exec_summary", "libneuron_version_info"]


def test_struct_sizes_match_the_header():
    # ABI mode trusts _cdef.py: the C compiler's sizeof of each header struct must agree
    src = "#include <stdio.h>\n#include <libneuron/neuron.h>\nint main(void){\n" + "".join(
        'printf("%%zu\\n", sizeof(struct %s));\n' % s for s in STRUCTS) + "return 0;}\n"
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "s.c"), os.path.join(d, "s")
        with open(c, "w") as f:
            f.write(src)
        subprocess.run(["cc", "-I", os.path.join(TOP, "userspace", "include"), "-I", os.path.join(TOP, "include"),
                        c, "-o", exe], check=True)
        sizes = [int(x) for x in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split()]
    assert sizes == [_ffi.sizeof("struct " + s) for s in STRUCTS]


def test_record_dtype_is_the_16_byte_record():
    assert neuron.RECORD_DTYPE.itemsize == 16
    assert neuron.RECORD_DTYPE.fields["header"][1] == 3  # byte 3 is the header
    assert neuron.RECORD_DTYPE.fields["timestamp_ps"][1] == 8
    assert neuron.EXEC_RECORD_DTYPE.itemsize == _ffi.sizeof("struct libneuron_exec_record")


def test_version_is_1_1_or_later():
    major, minor, _ = neuron.version()
    assert major == 1


def test_decode_a_record_worked_out_by_hand():
    # PE EXPLICIT (notific_type 0x06), phase 1 -> header 0x86; word 0: pc 0x12345,
    # debug_hint 3 << 20 -> 0x00312345 -> 45 23 31 86; timestamp 1000 ps -> e8 03
    raw = bytes([0x45, 0x23, 0x31, 0x86, 0, 0, 0, 0, 0xe8, 0x03, 0, 0, 0, 0, 0, 0])
    rec = np.frombuffer(raw, dtype=neuron.RECORD_DTYPE)[0]
    assert rec["header"] == 0x86 and rec["timestamp_ps"] == 1000
    d = neuron.decode(rec, queue=1)
    assert d["kind"] == "EXPLICIT"
    assert d["engine"] == 0 and d["program_counter"] == 0x12345 and d["debug_hint"] == 3
    assert d["timestamp_ps"] == 1000
    assert neuron.decode(raw, queue=1) == d


def test_errors_are_oserrors_with_the_library_errno():
    with pytest.raises(neuron.NeuronError) as e:
        neuron.Device("/nonexistent/nnq9")
    assert isinstance(e.value, OSError)
    assert e.value.errno == errno.ENOENT
    assert "open /nonexistent/nnq9" in e.value.strerror
    with pytest.raises(neuron.NeuronError) as e:
        neuron.Device("/dev/null")
    assert e.value.errno == errno.ENOTTY
    with pytest.raises(neuron.NeuronError) as e:
        neuron.Program.from_text("[pe]\nnopp\n", "bad.nq")
    assert e.value.errno == errno.EINVAL
    assert "bad.nq:2: unknown opcode 'nopp'" in e.value.strerror
    with pytest.raises(neuron.NeuronError) as e:
        neuron.decode(b"short")
    assert e.value.errno == errno.EINVAL


def test_programs_are_context_managers():
    with neuron.Program.from_file(os.path.join(TOP, "examples", "hello.nq")) as p:
        assert not p.closed
    assert p.closed
    with pytest.raises(neuron.NeuronError) as e:
        p._p()
    assert e.value.errno == errno.EBADF
    p.close()  # twice is fine


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
