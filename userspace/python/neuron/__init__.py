# SPDX-License-Identifier: MIT
"""neuron: the Neuron notification-queue driver (nnq) from Python, over
libneuron's C API (libneuron.so.1, man libneuron(3)) with cffi in ABI mode
(docs/decisions/0045-python-cffi.md).

    import neuron
    with neuron.Device("/dev/nnq0") as dev, neuron.Program.from_file("hello.nq") as prog:
        result = dev.run(prog)
        print(result.status_name, result.records["timestamp_ps"])

Errors raise NeuronError, an OSError whose errno is the driver's (or the
library's) and whose strerror is libneuron_last_error(). Every handle is a
context manager and is also freed when collected. After fork() the
child's calls on the parent's handles raise NeuronError(ECHILD)
(docs/decisions/0041-fork-in-libneuron.md): a worker opens the device
itself.
"""
import errno as _errno
import os as _os

import numpy as np
from cffi import FFI

from ._cdef import CDEF

__all__ = ["Device", "Program", "Queue", "Result", "NeuronError", "RECORD_DTYPE", "EXEC_RECORD_DTYPE",
           "version", "decode"]

_ffi = FFI()
_ffi.cdef(CDEF)
# NEURON_LIBNEURON: another libneuron.so (a build tree's); else the loader's search
_lib = _ffi.dlopen(_os.environ.get("NEURON_LIBNEURON", "libneuron.so.1"))

#: One 16-byte notification record as the device writes it
#: (include/uapi/linux/neuron_record.h): a le32 first word whose byte 3 is
#: the header (notific_type bits 4:0, sw_overflow 5, hw_overflow 6, phase 7)
#: and whose bits 23:0 depend on the kind, a le32 second word, and the
#: le64 device timestamp in picoseconds.
RECORD_DTYPE = np.dtype([("body", "<u2"), ("body2", "u1"), ("header", "u1"), ("word1", "<u4"),
                         ("timestamp_ps", "<u8")])
assert RECORD_DTYPE.itemsize == 16
#: struct libneuron_exec_record: the core and queue a run's record came from.
EXEC_RECORD_DTYPE = np.dtype([("core", "<u4"), ("queue", "<u4"), ("raw", RECORD_DTYPE)])
assert EXEC_RECORD_DTYPE.itemsize == 24

_KINDS = ("TRACE", "EXPLICIT", "DGE_METADATA", "EVT_SEM", "DMA", "INTERRUPT", "TPB_ERROR", "UNKNOWN")


class NeuronError(OSError):
    """A failed libneuron call: errno as the C API returned it (negated),
    strerror the library's text naming the call and the bad argument."""


def _check(rc):
    if rc < 0:
        raise NeuronError(-rc, _ffi.string(_lib.libneuron_last_error()).decode("utf-8", "replace"))
    return rc


def version():
    """The loaded libneuron's (major, minor, patch)."""
    v = _lib.libneuron_version()
    return (v.major, v.minor, v.patch)


def _decoded(d):
    return {"kind": _KINDS[d.kind] if d.kind < len(_KINDS) else "UNKNOWN", "notific_type": d.notific_type,
            "engine": d.engine, "program_counter": d.program_counter, "debug_hint": d.debug_hint,
            "debug_hint_extended": d.debug_hint_extended, "error_id": d.error_id, "value": d.value,
            "timestamp_ps": d.timestamp_ps, "sw_overflow": bool(d.sw_overflow),
            "hw_overflow": bool(d.hw_overflow), "text": _ffi.string(d.text).decode("utf-8", "replace")}


def decode(record, queue=-1):
    """Decode one record (a RECORD_DTYPE element or 16 bytes) as from
    `queue` with the default route; a dict with "kind", "text", ..."""
    raw = bytes(np.asarray(record, dtype=RECORD_DTYPE).tobytes()) if not isinstance(record, (bytes, bytearray)) \
        else bytes(record)
    if len(raw) != 16:
        raise NeuronError(_errno.EINVAL, "decode: a record is 16 bytes, got %d" % len(raw))
    rec = _ffi.new("struct libneuron_record *")
    _ffi.memmove(rec.bytes, raw, 16)
    out = _ffi.new("struct libneuron_decoded *")
    _check(_lib.libneuron_record_decode(rec, queue, out))
    return _decoded(out)


class _Handle:
    """A C handle freed by close(), the with-block's end or collection."""
    _free = None

    def __init__(self, ptr):
        self._ptr = _ffi.gc(ptr, type(self)._free)

    @property
    def closed(self):
        return self._ptr is None

    def _p(self):
        if self._ptr is None:
            raise NeuronError(_errno.EBADF, "%s is closed" % type(self).__name__)
        return self._ptr

    def close(self):
        if self._ptr is not None:
            ptr, self._ptr = self._ptr, None
            _ffi.release(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Program(_Handle):
    """Instructions for the engines, assembled from `.nq` text
    (docs/program-syntax.md). Errors name the line."""
    _free = _lib.libneuron_program_free

    @classmethod
    def from_text(cls, text, name="<input>"):
        data = text.encode() if isinstance(text, str) else bytes(text)
        out = _ffi.new("libneuron_program **")
        _check(_lib.libneuron_program_assemble(data, len(data), name.encode(), out))
        return cls(out[0])

    @classmethod
    def from_file(cls, path):
        out = _ffi.new("libneuron_program **")
        _check(_lib.libneuron_program_assemble_file(_os.fsencode(path), out))
        return cls(out[0])


class Result(_Handle):
    """What Device.run() did: status, records (EXEC_RECORD_DTYPE), events."""
    _free = _lib.libneuron_result_free

    def __init__(self, ptr):
        super().__init__(ptr)
        s = _ffi.new("struct libneuron_exec_summary *")
        s.size = _ffi.sizeof("struct libneuron_exec_summary")
        _check(_lib.libneuron_result_summary(self._p(), s))
        self.status = s.status
        self.status_name = _ffi.string(_lib.libneuron_exec_status_name(s.status)).decode()
        self.completed = bool(s.completed)
        self.errno = s.error
        self.error = _ffi.string(_lib.libneuron_result_error(self._p())).decode("utf-8", "replace")
        self.lost = s.lost + s.device_lost
        self.elapsed_ns = s.elapsed_ns
        # one copy of every record into a NumPy array, straight from the library
        self.records = np.empty(s.records, dtype=EXEC_RECORD_DTYPE)
        if s.records:
            buf = _ffi.from_buffer("struct libneuron_exec_record[]", self.records, require_writable=True)
            _check(_lib.libneuron_result_records(self._p(), 0, buf, s.records))
        self._events = s.events

    def decoded(self):
        """Every record decoded with its queue and route: a list of dicts."""
        out = _ffi.new("struct libneuron_decoded *")
        res = []
        for i in range(len(self.records)):
            _check(_lib.libneuron_result_decode(self._p(), i, out))
            res.append(_decoded(out))
        return res

    def events(self):
        """The interrupt edges seen during the run, as dicts."""
        if not self._events:
            return []
        ev = _ffi.new("struct libneuron_event[]", self._events)
        n = _check(_lib.libneuron_result_events(self._p(), 0, ev, self._events))
        return [_event(ev[i]) for i in range(n)]


def _event(e):
    return {f: getattr(e, f) for f in ("timestamp_ns", "device", "core", "edge", "cause", "queues", "lost",
                                       "count", "wrbuf_full", "wrbuf_drop", "suppressed", "pc")}


class Queue(_Handle):
    """One notification queue (threshold 1, an eventfd). drain() and wait()
    copy records once, from the ring into a NumPy array (RECORD_DTYPE)."""
    _free = _lib.libneuron_queue_destroy

    def __init__(self, ptr, size):
        super().__init__(ptr)
        self.entries = size // 16

    def drain_into(self, out):
        """Drain into `out`, a C-contiguous RECORD_DTYPE array (e.g. a
        preallocated np.empty(n, RECORD_DTYPE)); returns the count."""
        if out.dtype != RECORD_DTYPE or not out.flags.c_contiguous:
            raise NeuronError(_errno.EINVAL, "drain_into: out must be a C-contiguous RECORD_DTYPE array")
        buf = _ffi.from_buffer("struct libneuron_record[]", out, require_writable=True)
        return _check(_lib.libneuron_queue_drain(self._p(), buf, len(out), _ffi.NULL))

    def drain(self, max_records=None):
        """The records waiting now (a new array, maybe empty)."""
        out = np.empty(max_records or self.entries, dtype=RECORD_DTYPE)
        return out[:self.drain_into(out)]

    def wait(self, timeout=None, max_records=None):
        """Records, sleeping up to `timeout` seconds (None: no limit) for
        the first; an empty array if none came."""
        out = np.empty(max_records or self.entries, dtype=RECORD_DTYPE)
        buf = _ffi.from_buffer("struct libneuron_record[]", out, require_writable=True)
        ns = -1 if timeout is None else int(timeout * 1e9)
        return out[:_check(_lib.libneuron_queue_wait(self._p(), buf, len(out), ns, _ffi.NULL))]

    def decode(self, record):
        rec = _ffi.new("struct libneuron_record *")
        _ffi.memmove(rec.bytes, np.asarray(record, dtype=RECORD_DTYPE).tobytes(), 16)
        out = _ffi.new("struct libneuron_decoded *")
        _check(_lib.libneuron_queue_decode(self._p(), rec, out))
        return _decoded(out)


class Device(_Handle):
    """An open /dev/nnqN (default /dev/nnq0)."""
    _free = _lib.libneuron_device_close

    def __init__(self, path=None, read_only=False):
        out = _ffi.new("libneuron_device **")
        cpath = _os.fsencode(path) if path is not None else _ffi.NULL
        opener = _lib.libneuron_device_open_read_only if read_only else _lib.libneuron_device_open
        _check(opener(cpath, out))
        super().__init__(out[0])

    def info(self):
        i = _ffi.new("struct libneuron_device_info *")
        _check(_lib.libneuron_device_get_info(self._p(), i))
        return {f: getattr(i, f) for f in ("num_cores", "engines_per_core", "queues_per_core", "generation",
                                           "capabilities", "mem_size", "mem_alloc_limit", "nq_size_min",
                                           "nq_size_max", "max_program_insns", "timestamp_inc_ps",
                                           "page_size", "doorbell_size")}

    def state(self):
        return _check(_lib.libneuron_device_state(self._p()))

    def acquire(self, cores):
        """Own every core of the mask `cores`, or none; the cores owned."""
        owned = _ffi.new("uint64_t *")
        _check(_lib.libneuron_core_acquire(self._p(), cores, owned))
        return owned[0]

    def release(self, cores):
        owned = _ffi.new("uint64_t *")
        _check(_lib.libneuron_core_release(self._p(), cores, owned))
        return owned[0]

    def submit(self, core, engine, insns, trace=True):
        """Start encoded instructions (bytes, 32 a struct neuron_emu_insn,
        include/uapi/linux/neuron_isa.h) on one engine; returns at once."""
        data = bytes(insns)
        if not data or len(data) % 32:
            raise NeuronError(_errno.EINVAL, "submit: insns must be a nonzero multiple of 32 bytes, got %d"
                              % len(data))
        _check(_lib.libneuron_device_submit(self._p(), core, engine, data, len(data) // 32, 1 if trace else 0))

    def engine_reset(self, core, engine):
        _check(_lib.libneuron_engine_reset(self._p(), core, engine))

    def mem_alloc(self, size, fixed_offset=None):
        off = _ffi.new("uint64_t *")
        _check(_lib.libneuron_mem_alloc(self._p(), size, fixed_offset or 0, 0 if fixed_offset is None else 1, off))
        return off[0]

    def mem_free(self, offset):
        _check(_lib.libneuron_mem_free(self._p(), offset))

    def queue(self, core, queue, size=4096, flags=0):
        out = _ffi.new("libneuron_queue **")
        _check(_lib.libneuron_queue_create(self._p(), core, queue, size, flags, out))
        return Queue(out[0], size)

    def events(self, timeout=0.0, max_events=64):
        """Iterate the file's interrupt edges (dicts) that come within
        `timeout` seconds of each other (None: wait for ever)."""
        ev = _ffi.new("struct libneuron_event[]", max_events)
        ns = -1 if timeout is None else int(timeout * 1e9)
        while True:
            n = _check(_lib.libneuron_device_read_events(self._p(), ev, max_events, ns))
            if n == 0:
                return
            for i in range(n):
                yield _event(ev[i])

    def run(self, program, timeout_ms=0, trace=True, cores=None):
        """Run `program` (a Program or `.nq` text) to completion; a Result
        whatever its status (check result.status, 0 is OK)."""
        if not isinstance(program, Program):
            with Program.from_text(program) as p:
                return self.run(p, timeout_ms, trace, cores)
        opt = _ffi.new("struct libneuron_exec_options *")
        opt.size = _ffi.sizeof("struct libneuron_exec_options")
        opt.timeout_ms = timeout_ms
        opt.flags = 0 if trace else 1
        keep = _ffi.new("char[]", cores.encode()) if cores else _ffi.NULL
        opt.cores = keep
        out = _ffi.new("libneuron_result **")
        _check(_lib.libneuron_execute(self._p(), program._p(), opt, out))
        return Result(out[0])
