#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the hand-made seed inputs of the fuzz targets into
# corpus/<target>/seed-*: .nq programs (copies of examples/*.nq and
# userspace/tests/data/bad.nq, plus a few written here), records of every
# notific_type, the devcoredumps of userspace/tests/data/coredump, generic
# netlink messages of each kind libneuron parses, and owner names. The
# layouts are those of include/uapi/linux/neuron.h, neuron_record.h and
# neuron_isa.h, <linux/netlink.h> and <linux/genetlink.h>. Usage:
#   make-seeds.py [CORPUS_DIR]   (default: corpus/ beside this script)
# The committed corpus holds these and what the campaigns added
# (run-fuzz.sh --merge, README.md).
import glob
import os
import shutil
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.abspath(os.path.join(here, "..", ".."))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")


def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ------------------------------------------------------------ assembler
for p in sorted(glob.glob(os.path.join(top, "examples", "*.nq"))):
    put("assembler", os.path.basename(p), open(p, "rb").read())
put("assembler", "bad.nq", open(os.path.join(top, "userspace/tests/data/bad.nq"), "rb").read())
put("assembler", "events.nq", """# every EVENTS form
[pe]
nop @hint=3
notify hint=3 ext=0x1234
sem.inc 4 32 @wait=ge.dec:9 @value=7
wait.ge 200 1 @update=sem.set:2 @value=9
[core2.dve]
dge src=0x10 dst=0x20 len=4 bc_src=3 bc_dst=4,quiet indirect=raw:0x05 backend=2
event.set 1 @hint=2 @update=event.clear:5
event.clear 7 @wait=event:3
halt
""")
put("assembler", "data.nq", """features 0x2
[pool]
reg 3 0x1000
dge src=@table dst=0x2000 len=64 elem=4 offsets=wide idx=@idx indirect=raw:0x06
fp_error FP_NAN
throttle 3
delay 1000
data table u32 1, 2, 0xffffffff
data idx bytes 0x00 0x01 0x02
[core1.sp]
sem.set 0 1
sem.dec 0 1
wait.ge.dec 0 0
reg 63 7
""")

# ------------------------------------------------------------ record
# Input: hint, core, route (u32), then 16-byte records. A record: bytes
# 0..2 the type's fields, byte 3 the header (type:5, sw ovf, hw ovf,
# phase), bytes 4..7 more fields, 8..15 the timestamp in ps.
def record(t, w0_low, w1, ts, flags=0x80):
    return struct.pack("<IIQ", (w0_low & 0xffffff) | ((t | flags) << 24), w1, ts)


recs = [record(t, 0x123456 * (t + 1), 0x9abcdef0 ^ t * 0x01010101, 1000000 * t + t) for t in range(32)]
route_default = 0
for i in range(4):  # the harness reads 8 records an input
    for hint in (i, i + 4):
        put("record", "types-%d-%d-hint%d" % (8 * i, 8 * i + 7, hint),
            bytes([hint, hint % 4]) + struct.pack("<I", route_default) + b"".join(recs[8 * i:8 * i + 8]))
# flags: both overflows, no phase; the TPB_ERROR sequencer arms; DGE metadata
put("record", "overflow", bytes([0, 0, 0, 0, 0, 0]) + b"".join(record(t, 0xfffff, 0xffffffff, 2**64 - 1, 0x60)
                                                           for t in (0x04, 0x06, 0x1f, 0x03)))
for eid in (0x0a, 0x0b):
    seq = b"".join(record(0x1f, eid, blk | (pc << 4) | (info << 16) | (kind << 24), 5)
                   for kind in range(6) for (blk, pc, info) in ((0, 2, 1), (2, 3, 0x0f)) if kind < 4 or blk == 0)
    put("record", "tpb-sequencer-%02x" % eid, bytes([3, 0, 0, 0, 0, 0]) + seq)
put("record", "dge-metadata", bytes([6, 0, 0, 0, 0, 0]) +
    b"".join(record(0x06 + 4 * e, 0x100000 | 5, 0x0003ffff, 7) for e in range(5)))

# ------------------------------------------------------------ coredump
# Input: a mode byte (bit 0: the harness writes magic and total_size), then the dump
for p in sorted(glob.glob(os.path.join(top, "userspace/tests/data/coredump", "*.bin"))):
    put("coredump", os.path.basename(p), b"\x00" + open(p, "rb").read())
hang = open(os.path.join(top, "userspace/tests/data/coredump/hang.bin"), "rb").read()
put("coredump", "hang-fixed.bin", b"\x01" + hang)

# ------------------------------------------------------------ netlink
# Input: a mode byte (bit 0: nlmsg_len = size; bit 1: force the genl
# command), then one message: nlmsghdr (len, type, flags, seq, pid),
# genlmsghdr (cmd, version, reserved), attributes (len, type, payload, pad).
def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack("<HH", n, t) + payload + b"\0" * ((4 - n % 4) % 4)


def u16(t, v): return attr(t, struct.pack("<H", v))
def u32(t, v): return attr(t, struct.pack("<I", v))
def u64(t, v): return attr(t, struct.pack("<Q", v))
def nest(t, *a): return attr(t | 0x8000, b"".join(a))  # NLA_F_NESTED


def genl(cmd, attrs, family=0x20, flags=0):
    body = struct.pack("<BBH", cmd, 1, 0) + b"".join(attrs)
    return struct.pack("<IHHII", 16 + len(body), family, flags, 1, 0) + body


A = {n: i for i, n in enumerate(
    "UNSPEC PAD DEVICE PCI_VENDOR PCI_DEVICE NUM_CORES GEN MEM_SIZE CORE QUEUE HEAD TAIL PHASE SIZE FLAGS "
    "OVERFLOW_COUNT DROP_COUNT THRESHOLD_COUNT EDGE CAUSE QUEUES COUNT TIMESTAMP INTR_COUNTS THROTTLE_COUNT "
    "FAULT_COUNT WRBUF_FULL WRBUF_DROP SUPPRESSED PC".split())}
CMD_GET_DEVICE, CMD_GET_NQ, CMD_EVENT = 1, 2, 3
put("netlink", "event", b"\x00" + genl(CMD_EVENT, [
    u32(A["DEVICE"], 0), u32(A["CORE"], 1), u32(A["EDGE"], 0), u32(A["CAUSE"], 5), u32(A["QUEUES"], 3),
    u32(A["WRBUF_FULL"], 1), u32(A["WRBUF_DROP"], 2), u32(A["SUPPRESSED"], 4), u32(A["PC"], 9),
    attr(A["PAD"], b""), u64(A["COUNT"], 42), u64(A["TIMESTAMP"], 123456789), u32(99, 1)]))
put("netlink", "device", b"\x00" + genl(CMD_GET_DEVICE, [
    u32(A["DEVICE"], 0), u16(A["PCI_VENDOR"], 0x1d0f), u16(A["PCI_DEVICE"], 0x7064), u32(A["NUM_CORES"], 2),
    u32(A["GEN"], 2), u64(A["MEM_SIZE"], 1 << 30),
    nest(A["INTR_COUNTS"], u32(A["CORE"], 0), *[u64(A["COUNT"], i) for i in range(9)]),
    nest(A["INTR_COUNTS"], u32(A["CORE"], 1), attr(A["PAD"], b""), u64(A["COUNT"], 7)),
    u64(A["THROTTLE_COUNT"], 3), u64(A["FAULT_COUNT"], 4)]))
put("netlink", "nq", b"\x00" + genl(CMD_GET_NQ, [
    u32(A["DEVICE"], 0), u32(A["CORE"], 1), u32(A["QUEUE"], 2), u32(A["HEAD"], 10), u32(A["TAIL"], 12),
    attr(A["PHASE"], b"\x01"), u32(A["SIZE"], 4096), u32(A["FLAGS"], 1), u64(A["OVERFLOW_COUNT"], 0),
    u64(A["DROP_COUNT"], 1), u64(A["THRESHOLD_COUNT"], 2)]))
CTRL_CMD_NEWFAMILY = 1
put("netlink", "family", b"\x00" + genl(CTRL_CMD_NEWFAMILY, [
    u16(1, 0x20), attr(2, b"neuron\0"), u32(3, 1), u32(4, 0), u32(5, A["PC"]),
    nest(7, nest(1, u32(2, 5), attr(1, b"events\0")), nest(2, attr(1, b"other\0"), u32(2, 6)))], family=0x10))
# NLMSG_ERROR (type 2) with an extended ack: error, the echoed header, TLVs
echo = struct.pack("<IHHII", 20, 0x20, 1, 1, 0)
ext = attr(1, b"NEURON_A_DEVICE is required\0") + u32(2, 20)
err = struct.pack("<i", -22) + echo
put("netlink", "ack-error", b"\x00" + struct.pack("<IHHII", 16 + len(err) + len(ext), 2, 0x300, 1, 0) + err + ext)
put("netlink", "ack-ok", b"\x00" + struct.pack("<IHHII", 36, 2, 0x100, 1, 0) + struct.pack("<i", 0) + echo)
# NLMSG_DONE (type 3) of a failed dump: the error, then TLVs
done = struct.pack("<i", -1) + attr(1, b"dump failed\0")
put("netlink", "done-error", b"\x00" + struct.pack("<IHHII", 16 + len(done), 3, 0x200, 1, 0) + done)
put("netlink", "done-ok", b"\x00" + struct.pack("<IHHII", 20, 3, 0x2, 1, 0) + struct.pack("<i", 0))

# ------------------------------------------------------------ escape
# Input: an owner's command name, any bytes
for name, data in (("plain", b"python3"), ("quote-newline", b'evil"name\n0 1 9'),
                   ("invalid-utf8", b'\xff\xfe"x\n0 1 9'), ("utf8", "名前 ✓".encode()),
                   ("c1-control", b"a\xc2\x85b\x7f\x1b[31m"), ("backslash-hex", b"\\x41\\\\x\\"),
                   ("overlong-surrogate", b"\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80")):
    put("escape", name, data)
