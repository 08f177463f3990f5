#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# neuron-nq cdi generate on a fake tree: every spec it writes validated
# against the CDI project's JSON schema from Debian's package, and the
# rules that project's loader adds (cdi_schema.py), then compared with the
# expected specs for the tree, written out by hand (docs/k8s.md#cdi).
# Usage: cdi_check.py NEURON_NQ
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # the tests run from the source tree, which stays clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdi_schema  # noqa: E402

nq = sys.argv[1]
root = tempfile.mkdtemp(prefix="ncdi-")
# nnq0: cores 0-1; nnq3: cores 0-2, core 2's node gone (no spec names a
# node that is not there); a stray entry that is neither
for d, cores in ((0, 2), (3, 3)):
    os.makedirs(f"{root}/sys/class/nnq/nnq{d}")
    os.makedirs(f"{root}/dev", exist_ok=True)
    open(f"{root}/dev/nnq{d}", "w").close()
    for c in range(cores):
        os.makedirs(f"{root}/sys/class/nnq/nnq{d}-core{c}")
        with open(f"{root}/sys/class/nnq/nnq{d}-core{c}/core", "w") as f:
            f.write(f"{c}\n")
        if (d, c) != (3, 2):
            open(f"{root}/dev/nnq{d}-core{c}", "w").close()
os.makedirs(f"{root}/sys/class/nnq/other")
out = f"{root}/cdi"
r = subprocess.run([nq, "cdi", "generate", "--root", root, "--output", out], capture_output=True, text=True)
print(r.stdout, end="")
print(r.stderr, end="", file=sys.stderr)
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


check(r.returncode == 0, "cdi generate exits 0")
for what, accepted in cdi_schema.selftest():
    check(accepted == ("/good/" in what),
          f"the validator {'accepts' if accepted else 'refuses'} the CDI package's {what}")


# and it refuses a spec of our shape that the CDI library would not load
bad_node = {"cdiVersion": "0.5.0", "kind": "neuron.example/core", "devices": [
    {"name": "nnq0-core0", "containerEdits": {"deviceNodes": [{"hostPath": "/dev/nnq0-core0"}]}}]}
for what, spec in (("a device node without path", bad_node),
                   ("cdiVersion 0.6.0", dict(bad_node, cdiVersion="0.6.0", devices=[])),
                   ("class with a '.'", dict(bad_node, kind="neuron.example/core.x", devices=[])),
                   ("a device name ending in '-'", dict(bad_node, devices=[
                       {"name": "nnq0-", "containerEdits": {"deviceNodes": [{"path": "/dev/nnq0"}]}}]))):
    errs = cdi_schema.errors(spec, "x.json")
    check(bool(errs), f"the validator refuses {what}: {errs[0] if errs else 'accepted'}")


def valid(spec, fname):
    errs = cdi_schema.errors(spec, fname)
    for e in errs:
        print(f"     {fname}: {e}")
    check(not errs, f"{fname}: valid against the CDI schema ({cdi_schema.SCHEMA_DIR}/schema.json) "
          "and the CDI library's loading rules")


def node(name):
    return {"name": name, "containerEdits": {"deviceNodes": [
        {"path": f"/dev/{name}", "hostPath": f"{root}/dev/{name}", "type": "c", "permissions": "rw"}]}}


expect = {
    "neuron.example-core.json": {"cdiVersion": "0.5.0", "kind": "neuron.example/core", "devices": [
        node("nnq0-core0"), node("nnq0-core1"), node("nnq3-core0"), node("nnq3-core1")]},
    "neuron.example-device.json": {"cdiVersion": "0.5.0", "kind": "neuron.example/device", "devices": [
        node("nnq0"), node("nnq3")]},
}
for fname, want in expect.items():
    with open(f"{out}/{fname}") as f:
        spec = json.load(f)
    valid(spec, fname)
    check(spec == want, f"{fname} is the expected spec")
check(sorted(os.listdir(out)) == sorted(expect), "no other file (no .tmp left)")
check(all(os.stat(f"{out}/{n}").st_mode & 0o777 == 0o644 for n in expect), "mode 0644")
r = subprocess.run([nq, "cdi", "generate", "--root", root + "/none", "--output", out], capture_output=True, text=True)
check(r.returncode == 2 and "no Neuron device" in r.stderr, "no device: exit 2 with a message")
shutil.rmtree(root, ignore_errors=True)
print("cdi: " + ("FAILED: " + "; ".join(fails) if fails else "all checks passed"))
sys.exit(1 if fails else 0)
