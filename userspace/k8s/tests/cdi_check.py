#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# neuron-nq cdi generate on a fake tree, checked against the CDI
# specification's rules as we read them from its published SPEC.md
# (docs/k8s.md#cdi), written out here by hand:
#   - cdiVersion: a released spec version ("0.3.0" .. "0.6.0" here; hostPath
#     in deviceNodes needs 0.5.0 or later);
#   - kind: "<vendor>/<class>"; vendor a DNS-like name of [A-Za-z0-9] with
#     inner '-', '_', '.'; class [A-Za-z0-9] with inner '-', '_', '.';
#   - devices: non-empty, each with a unique name of [A-Za-z0-9] then
#     [A-Za-z0-9_.:-]*, and containerEdits with at least one edit;
#   - deviceNodes: path absolute (required); type one of b, c, u, p;
#     permissions a non-empty subset of "rwm"; hostPath absolute if given.
# And against the expected specs for the tree, written out by hand.
# Usage: cdi_check.py NEURON_NQ
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

nq = sys.argv[1]
root = tempfile.mkdtemp(prefix="ncdi-")
# nnq0: cores 0-1; nnq3: cores 0-2; a stray entry that is neither
for d, cores in ((0, 2), (3, 3)):
    os.makedirs(f"{root}/sys/class/nnq/nnq{d}")
    os.makedirs(f"{root}/dev", exist_ok=True)
    open(f"{root}/dev/nnq{d}", "w").close()
    for c in range(cores):
        os.makedirs(f"{root}/sys/class/nnq/nnq{d}-core{c}")
        with open(f"{root}/sys/class/nnq/nnq{d}-core{c}/core", "w") as f:
            f.write(f"{c}\n")
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
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
VENDOR = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
CLASS = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")


def valid(spec, what):
    check(spec.get("cdiVersion") in ("0.5.0", "0.6.0"), f"{what}: cdiVersion {spec.get('cdiVersion')}")
    vendor, _, cls = spec.get("kind", "").partition("/")
    check(bool(VENDOR.match(vendor)) and bool(CLASS.match(cls)), f"{what}: kind {spec.get('kind')}")
    devs = spec.get("devices", [])
    names = [d.get("name", "") for d in devs]
    check(len(devs) > 0 and len(set(names)) == len(names), f"{what}: devices present, names unique")
    for d in devs:
        check(bool(NAME.match(d["name"])), f"{what}: device name {d['name']}")
        nodes = d.get("containerEdits", {}).get("deviceNodes", [])
        check(len(nodes) == 1, f"{what}: {d['name']} has one device node")
        for n in nodes:
            check(n["path"].startswith("/") and n.get("hostPath", "/").startswith("/")
                  and n.get("type") in ("b", "c", "u", "p")
                  and n.get("permissions") and set(n["permissions"]) <= set("rwm"),
                  f"{what}: {d['name']} node {n['path']} type {n.get('type')} permissions {n.get('permissions')}")


def node(name):
    return {"name": name, "containerEdits": {"deviceNodes": [
        {"path": f"/dev/{name}", "hostPath": f"{root}/dev/{name}", "type": "c", "permissions": "rw"}]}}


expect = {
    "neuron.example-core.json": {"cdiVersion": "0.5.0", "kind": "neuron.example/core", "devices": [
        node("nnq0-core0"), node("nnq0-core1"), node("nnq3-core0"), node("nnq3-core1"), node("nnq3-core2")]},
    "neuron.example-device.json": {"cdiVersion": "0.5.0", "kind": "neuron.example/device", "devices": [
        node("nnq0"), node("nnq3")]},
}
for fname, want in expect.items():
    with open(f"{out}/{fname}") as f:
        spec = json.load(f)
    valid(spec, fname)
    check(spec == want, f"{fname} is the expected spec")
check(sorted(os.listdir(out)) == sorted(expect), "no other file (no .tmp left)")
r = subprocess.run([nq, "cdi", "generate", "--root", root + "/none", "--output", out], capture_output=True, text=True)
check(r.returncode == 2 and "no Neuron device" in r.stderr, "no device: exit 2 with a message")
shutil.rmtree(root, ignore_errors=True)
print("cdi: " + ("FAILED: " + "; ".join(fails) if fails else "all checks passed"))
sys.exit(1 if fails else 0)
