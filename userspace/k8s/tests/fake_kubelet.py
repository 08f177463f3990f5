#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# A fake kubelet for neuron-device-plugin (docs/k8s.md#tests), written from
# the published device-plugin API v1beta1 in Python with Debian's grpcio and
# protobuf. Its message classes are generated here, at test time, from our
# .proto by protoc --python_out; the calls go through grpcio's generic
# handlers and multi-callables, so nothing generated is shared with the C++
# plugin.
#
# It builds a fake /sys, /dev and /proc tree, serves Registration on
# <kubelet>/device-plugins/kubelet.sock, starts the plugin, and checks:
# registration, ListAndWatch, health flips (state attribute, removal) within
# 1 s, GetPreferredAllocation, Allocate, PreStartContainer's reclaim and
# refusal, hostile requests refused with INVALID_ARGUMENT, and registration
# again after kubelet.sock is re-created. Prints a transcript; exit 0 when
# every check holds.
#
# Usage: fake_kubelet.py PLUGIN_BINARY PROTO_DIR
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import grpc

sys.dont_write_bytecode = True  # the tests run from the source tree, which stays clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet  # noqa: E402
from kubelet import Kubelet, Plugin, Watch, check, code_of, say, summary  # noqa: E402

PLUGIN, PROTO_DIR = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="nfk-")
pb = kubelet.load_messages(PROTO_DIR, tmp)

# ---------------------------------------------------------------- fake tree
# nnq0: NUMA 0, cores 0-3; nnq1: NUMA 0, cores 0-1; nnq2: NUMA 1, cores 0-3
SYS, DEV, PROC, KUBELET = (os.path.join(tmp, d) for d in ("sys", "dev", "proc", "kubelet"))
PLUGINS = os.path.join(KUBELET, "device-plugins")
for d in (DEV, PROC, PLUGINS):
    os.makedirs(d)
LAYOUT = {0: (0, 4), 1: (0, 2), 2: (1, 4)}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


for n, (numa, cores) in LAYOUT.items():
    write(f"{SYS}/class/nnq/nnq{n}/device/numa_node", f"{numa}\n")
    write(f"{SYS}/class/nnq/nnq{n}/state", "online\n")
    write(f"{SYS}/class/nnq/nnq{n}/core_owners", "".join(f"{c} - -\n" for c in range(cores)))
    write(f"{DEV}/nnq{n}", "")
    for c in range(cores):
        write(f"{SYS}/class/nnq/nnq{n}-core{c}/core", f"{c}\n")
        write(f"{DEV}/nnq{n}-core{c}", "")

ALL_CORES = [f"nnq{n}-core{c}" for n, (_, k) in LAYOUT.items() for c in range(k)]

kub = Kubelet(PLUGINS)
say(f"fake kubelet: serving Registration on {PLUGINS}/kubelet.sock")
proc = subprocess.Popen([PLUGIN, "--dev-root", DEV, "--sys-root", SYS, "--proc-root", PROC,
                         "--kubelet-dir", KUBELET, "--poll-ms", "100", "--no-uevents",
                         "--reclaim-grace", "1"],
                        stderr=(log := open(os.path.join(tmp, "plugin.log"), "w")))
try:
    say("== registration")
    regs = kub.take(2)
    for name, r in sorted(regs.items()):
        say(f"  <- Register version={r.version} endpoint={r.endpoint} resource_name={r.resource_name} "
            f"pre_start_required={r.options.pre_start_required} "
            f"get_preferred_allocation_available={r.options.get_preferred_allocation_available}")
        check(os.path.exists(os.path.join(PLUGINS, r.endpoint)), f"{r.endpoint} was served before Register")
    check(set(regs) == {"neuron.example/core", "neuron.example/device"}, "both resources registered")
    check(all(r.version == "v1beta1" for r in regs.values()), "version v1beta1")
    core = Plugin(PLUGINS, regs["neuron.example/core"].endpoint)
    dev = Plugin(PLUGINS, regs["neuron.example/device"].endpoint)
    o = core.options(pb.Empty(), timeout=5)
    say(f"  -> GetDevicePluginOptions: pre_start_required={o.pre_start_required} "
        f"get_preferred_allocation_available={o.get_preferred_allocation_available}")
    check(o.pre_start_required and o.get_preferred_allocation_available, "core options")

    say("== ListAndWatch")
    w = Watch(core)
    first = w.until(lambda h: True, 5)
    check(first is not None, "first list")
    _, h, r = first
    say(f"  <- {summary(h)}")
    for d in r.devices[:1] + r.devices[-1:]:
        say(f"     ID={d.ID} health={d.health} topology.nodes={[n.ID for n in d.topology.nodes]}")
    check(sorted(h) == sorted(ALL_CORES), "the 10 core IDs")
    check(all(v == "Healthy" for v in h.values()), "all Healthy")
    check([n.ID for d in r.devices if d.ID == "nnq2-core3" for n in d.topology.nodes] == [1],
          "nnq2-core3 on NUMA node 1")
    wd = Watch(dev)
    fd = wd.until(lambda h: True, 5)
    check(fd is not None and sorted(fd[1]) == ["nnq0", "nnq1", "nnq2"], "device resource lists nnq0-2")

    say("== health flips (fake sysfs)")
    for what, action, undo, ids in (
            ("nnq0 state offline (FLR/offline reset)", lambda: write(f"{SYS}/class/nnq/nnq0/state", "offline\n"),
             lambda: write(f"{SYS}/class/nnq/nnq0/state", "online\n"), [f"nnq0-core{c}" for c in range(4)]),
            ("nnq2 state pci_error (fatal AER)", lambda: write(f"{SYS}/class/nnq/nnq2/state", "pci_error\n"),
             lambda: write(f"{SYS}/class/nnq/nnq2/state", "online\n"), [f"nnq2-core{c}" for c in range(4)]),
            ("nnq1 removed (node and sysfs gone)",
             lambda: (os.rename(f"{DEV}/nnq1", f"{tmp}/nnq1.node"),
                      os.rename(f"{SYS}/class/nnq/nnq1", f"{tmp}/nnq1.sys")),
             lambda: (os.rename(f"{tmp}/nnq1.node", f"{DEV}/nnq1"),
                      os.rename(f"{tmp}/nnq1.sys", f"{SYS}/class/nnq/nnq1")), ["nnq1-core0", "nnq1-core1"])):
        t0 = time.monotonic()
        action()
        got = w.until(lambda h, ids=ids: all(h.get(i) == "Unhealthy" for i in ids), 1.0)
        check(got is not None, f"{what}: {','.join(ids)} Unhealthy within 1 s")
        if got:
            say(f"  <- {summary(got[1])}  [{(got[0] - t0) * 1000:.0f} ms]")
            check(sum(v != "Healthy" for v in got[1].values()) == len(ids), "only those")
        t0 = time.monotonic()
        undo()
        got = w.until(lambda h: all(v == "Healthy" for v in h.values()), 1.0)
        check(got is not None, f"{what}: recovery, all Healthy again within 1 s")
        if got:
            say(f"  <- {summary(got[1])}  [{(got[0] - t0) * 1000:.0f} ms]")

    say("== GetPreferredAllocation")
    # (available, must_include, size) -> expected, by hand from docs/k8s.md#preferred-allocation
    cases = [
        (ALL_CORES, [], 2, ["nnq1-core0", "nnq1-core1"]),            # the one device that fits best
        (ALL_CORES, [], 3, ["nnq0-core0", "nnq0-core1", "nnq0-core2"]),  # tie: lowest N
        (["nnq0-core0", "nnq0-core2", "nnq0-core3"] + [f"nnq2-core{c}" for c in range(4)], [], 2,
         ["nnq0-core2", "nnq0-core3"]),                             # contiguous run on nnq0
        (ALL_CORES, ["nnq2-core1"], 3, ["nnq2-core0", "nnq2-core1", "nnq2-core2"]),  # with must_include
        (ALL_CORES, [], 6, ["nnq0-core0", "nnq0-core1", "nnq0-core2", "nnq0-core3",
                            "nnq1-core0", "nnq1-core1"]),           # one NUMA node (0)
        (ALL_CORES, [], 9, ["nnq0-core0", "nnq0-core1", "nnq0-core2", "nnq0-core3", "nnq1-core0",
                            "nnq2-core0", "nnq2-core1", "nnq2-core2", "nnq2-core3"]),  # anywhere
    ]
    for avail, must, size, want in cases:
        req = pb.PreferredAllocationRequest(container_requests=[pb.ContainerPreferredAllocationRequest(
            available_deviceIDs=avail, must_include_deviceIDs=must, allocation_size=size)])
        got = list(core.preferred(req, timeout=5).container_responses[0].deviceIDs)
        say(f"  -> size {size} of {len(avail)} available, must {must} <- {got}")
        check(got == want, f"preferred {want}")

    say("== Allocate")
    a = core.allocate(pb.AllocateRequest(container_requests=[
        pb.ContainerAllocateRequest(devices_ids=["nnq0-core1", "nnq0-core2"])]), timeout=5)
    cr = a.container_responses[0]
    for d in cr.devices:
        say(f"  <- DeviceSpec container_path={d.container_path} host_path={d.host_path} permissions={d.permissions}")
    say(f"  <- envs {dict(sorted(cr.envs.items()))}")
    say(f"  <- cdi_devices {[c.name for c in cr.cdi_devices]}")
    check([(d.container_path, d.host_path, d.permissions) for d in cr.devices] ==
          [("/dev/nnq0-core1", DEV + "/nnq0-core1", "rw"), ("/dev/nnq0-core2", DEV + "/nnq0-core2", "rw")],
          "core nodes as DeviceSpecs, rw")
    check(cr.envs["NEURON_VISIBLE_CORES"] == "1-2", "NEURON_VISIBLE_CORES=1-2")
    check([c.name for c in cr.cdi_devices] == ["neuron.example/core=nnq0-core1", "neuron.example/core=nnq0-core2"],
          "CDI names")
    a = dev.allocate(pb.AllocateRequest(container_requests=[pb.ContainerAllocateRequest(devices_ids=["nnq1"])]),
                     timeout=5)
    check([(d.container_path, d.permissions) for d in a.container_responses[0].devices] == [("/dev/nnq1", "rw")]
          and [c.name for c in a.container_responses[0].cdi_devices] == ["neuron.example/device=nnq1"],
          "device resource: /dev/nnq1 rw, neuron.example/device=nnq1")

    say("== hostile requests")
    IA = grpc.StatusCode.INVALID_ARGUMENT
    hostile = [
        ("Allocate unknown ID", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq9-core0"])])),
        ("Allocate duplicate ID", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq0-core1", "nnq0-core1"])])),
        ("Allocate 11 cores of 10", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=ALL_CORES + ["nnq0-core0"])])),
        ("Allocate nothing", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=[])])),
        ("Allocate a device ID on the core resource", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq0"])])),
        ("Allocate a 1 MB ID", core.allocate, pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["x" * 1000000])])),
        ("Preferred size 11", core.preferred, pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=ALL_CORES, allocation_size=11)])),
        ("Preferred size -1", core.preferred, pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=ALL_CORES, allocation_size=-1)])),
        ("Preferred duplicate available", core.preferred, pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(available_deviceIDs=["nnq0-core0", "nnq0-core0"],
                                                   allocation_size=1)])),
        ("Preferred must_include not available", core.preferred, pb.PreferredAllocationRequest(
            container_requests=[pb.ContainerPreferredAllocationRequest(
                available_deviceIDs=["nnq0-core0"], must_include_deviceIDs=["nnq0-core1"], allocation_size=1)])),
        ("PreStartContainer unknown ID", core.prestart, pb.PreStartContainerRequest(devices_ids=["../../etc"])),
    ]
    for what, fn, req in hostile:
        c, det = code_of(fn, req)
        say(f"  -> {what} <- {c.name}: {det[:90]}")
        check(c == IA, f"{what}: INVALID_ARGUMENT")
    check(proc.poll() is None, "the plugin is still running")

    say("== PreStartContainer")
    # core 1 of nnq0 still owned by PID 4242, which has exited (no /proc/4242):
    # the driver frees it 300 ms later, when the last holder of the file closes it
    write(f"{SYS}/class/nnq/nnq0/core_owners", "0 - -\n1 4242 python3\n2 - -\n3 - -\n")
    threading.Timer(0.3, lambda: write(f"{SYS}/class/nnq/nnq0/core_owners",
                                       "0 - -\n1 - -\n2 - -\n3 - -\n")).start()
    t0 = time.monotonic()
    c, det = code_of(core.prestart, pb.PreStartContainerRequest(devices_ids=["nnq0-core1"]))
    say(f"  -> nnq0-core1 held by exited PID 4242, freed after 300 ms <- {c.name} "
        f"[{(time.monotonic() - t0) * 1000:.0f} ms]")
    check(c == grpc.StatusCode.OK, "reclaimed once the driver frees it")
    # core 2 owned by a live PID 4343 (/proc/4343 exists): refused after the grace
    os.makedirs(f"{PROC}/4343")
    write(f"{SYS}/class/nnq/nnq0/core_owners", "0 - -\n1 - -\n2 4343 train.py\n3 - -\n")
    c, det = code_of(core.prestart, pb.PreStartContainerRequest(devices_ids=["nnq0-core2"]))
    say(f"  -> nnq0-core2 held by live PID 4343 <- {c.name}: {det}")
    check(c == grpc.StatusCode.FAILED_PRECONDITION and "4343" in det, "live owner refused, named")
    write(f"{SYS}/class/nnq/nnq0/core_owners", "0 - -\n1 - -\n2 - -\n3 - -\n")

    say("== kubelet restart: kubelet.sock re-created, plugin sockets removed")
    kub.stop()
    for f in os.listdir(PLUGINS):
        os.unlink(os.path.join(PLUGINS, f))
    t0 = time.monotonic()
    kub = Kubelet(PLUGINS)
    regs = kub.take(2, 5)
    say(f"  <- Register again: {sorted(regs)} [{(time.monotonic() - t0) * 1000:.0f} ms]")
    check(set(regs) == {"neuron.example/core", "neuron.example/device"}, "both registered again")
    core = Plugin(PLUGINS, regs["neuron.example/core"].endpoint) if regs else core
    w = Watch(core)
    got = w.until(lambda h: True, 5)
    check(got is not None and len(got[1]) == 10, "ListAndWatch on the new socket")
    if got:
        say(f"  <- {summary(got[1])}")
    check(proc.poll() is None, "the plugin is still running")
finally:
    log.close()
    rc = kubelet.stop_plugin(proc, os.path.join(tmp, "plugin.log"))
    check(rc == 0, f"plugin exits 0 on SIGTERM (got {rc})")
    kub.stop()
    shutil.rmtree(tmp, ignore_errors=True)

say(f"fake kubelet: {'FAILED: ' + '; '.join(kubelet.failures) if kubelet.failures else 'all checks passed'}")
sys.exit(1 if kubelet.failures else 0)
