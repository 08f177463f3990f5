#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The fake kubelet against the real driver, in a VM with two Neuron devices
# of two cores each (selftests/vm/lane-monitor.sh --lane k8s;
# docs/k8s.md#tests). The kubelet side is kubelet.py's, the same as
# fake_kubelet.py's; here nothing is faked below the plugin: /dev, /sys,
# /proc and the uevents are the kernel's.
#
# Checks, each a TAP line: registration; ListAndWatch lists the 4 cores
# Healthy; Allocate gives the real core node; a container made from that
# answer alone (its own mount namespace, a /dev holding only the allocated
# node, uid 1000) runs a program on its core (core 1) and sees no other node;
# PreStartContainer refuses a core a live process holds and reclaims it once
# that process ends; an FLR, a fatal AER error and a surprise removal of
# nnq0 make nnq0's cores Unhealthy within 1 s of the driver's uevent (and
# only them), and recovery (or the device plugged back) makes them Healthy
# within 1 s; the CDI spec of the cores (/var/run/cdi) names nnq0's cores
# while it is there, not after its removal, and again once it is back;
# registration again after kubelet.sock is re-created.
#
# The FLR and the AER recovery are held offline at the driver's pause point
# 12 (enable: device ready, calls not yet let in;
# docs/decisions/0011-reset-and-recovery.md#pause-points)
# until the Unhealthy answer is in, so a reset shorter than the plugin's
# reaction cannot hide the flip. The QEMU monitor commands go out as
# "NEURON-HOTPLUG: <cmd> :END" console lines, relayed by the lane.
#
# Usage: vm_kubelet.py PLUGIN NEURON_NQ PROGRAM MESSAGES_DIR
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import grpc

sys.dont_write_bytecode = True  # the tests run from the source tree, which stays clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet  # noqa: E402
from kubelet import Kubelet, Plugin, Watch, check, code_of, say, summary  # noqa: E402

PLUGIN, NQ, PROGRAM, MESSAGES = sys.argv[1:5]
pb = kubelet.load_messages(None, MESSAGES)
KUBELET = "/var/lib/kubelet"
PLUGINS = KUBELET + "/device-plugins"
PAUSE = "/sys/module/nnq/parameters/pause_step"
PAUSE_ENABLE_READY = "12"
NNQ0 = ["nnq0-core0", "nnq0-core1"]
ALL = NNQ0 + ["nnq1-core0", "nnq1-core1"]
TENANT = 1000
tap = 1  # "ok 1" is k8s-guest.sh's insmod


def tap_line(ok, what):
    global tap
    tap += 1
    say(f"{'ok' if ok else 'not ok'} {tap} k8s: {what}")


def step(what, fn):
    """Run one group of checks; one TAP line for it."""
    before = len(kubelet.failures)
    say(f"== {what}")
    try:
        fn()
    except Exception as e:  # a crash is a failure of this group, not of the lane
        check(False, f"{what}: {type(e).__name__}: {e}")
    tap_line(len(kubelet.failures) == before, what)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def host_monitor(cmd):
    say(f"NEURON-HOTPLUG: {cmd} :END")


class Uevents:
    """The kernel's uevents of nnq0, with arrival times (an observer beside the
    plugin's own listener, to time its answers from)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)  # NETLINK_KOBJECT_UEVENT
        self.sock.bind((0, 1))
        self.seen = []
        self.lock = threading.Lock()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            msg = self.sock.recv(65536)
            keys = dict(kv.split("=", 1) for kv in msg.decode(errors="replace").split("\0") if "=" in kv)
            if keys.get("DEVNAME") == "nnq0":
                with self.lock:
                    self.seen.append((time.monotonic(), keys))

    def first(self, since, pred, timeout=30.0):
        """Arrival time of the first nnq0 uevent after SINCE whose keys satisfy PRED."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                for t, k in self.seen:
                    if t >= since and pred(k):
                        return t
            time.sleep(0.01)
        return None


CDI_CORE = "/var/run/cdi/neuron.example-core_device-plugin.cdi-0.5.0.json"


def spec_cores(want, timeout=5.0):
    """Wait for the plugin's core CDI spec to name exactly the cores WANT;
    the names it last held."""
    end = time.monotonic() + timeout
    names = None
    while True:
        try:
            names = [d["name"] for d in json.loads(read(CDI_CORE))["devices"]]
        except (OSError, ValueError, KeyError):
            names = None
        if names == want or time.monotonic() >= end:
            return names
        time.sleep(0.05)


def unhealthy_nnq0(h):
    return all(h.get(i) == "Unhealthy" for i in NNQ0)


def all_healthy(h):
    return sorted(h) == sorted(ALL) and all(v == "Healthy" for v in h.values())


def flip(w, uev, what, start, finish, bad_event):
    """START the loss; nnq0's cores Unhealthy within 1 s of the uevent BAD_EVENT
    names, nnq1's Healthy; FINISH it; all Healthy within 1 s of the online uevent."""
    t0 = time.monotonic()
    start()
    got = w.until(unhealthy_nnq0, 30)
    t_ev = uev.first(t0, bad_event, 30)
    check(got is not None and t_ev is not None, f"{what}: the uevent and nnq0's cores Unhealthy")
    if got and t_ev:
        lat = (got[0] - t_ev) * 1000
        say(f"  <- {summary(got[1])}  [{lat:.0f} ms after the uevent, {(got[0] - t0) * 1000:.0f} ms after the trigger]")
        check(lat < 1000, f"{what}: Unhealthy within 1 s of the uevent ({lat:.0f} ms)")
        check(got[1].get("nnq1-core0") == "Healthy" and got[1].get("nnq1-core1") == "Healthy",
              f"{what}: nnq1's cores stay Healthy")
    t1 = time.monotonic()
    finish()
    got = w.until(all_healthy, 60)
    t_ev = uev.first(t1, lambda k: k.get("NNQ_STATE") == "online" or k.get("ACTION") == "add", 5)
    check(got is not None and t_ev is not None, f"{what}: back online and all 4 cores Healthy")
    if got and t_ev:
        lat = (got[0] - t_ev) * 1000
        say(f"  <- {summary(got[1])}  [{lat:.0f} ms after the uevent]")
        check(lat < 1000, f"{what}: Healthy within 1 s of the uevent ({lat:.0f} ms)")


class Reset(threading.Thread):
    """A write that blocks until the reset it starts is done (sysfs reset)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.error = path, None
        self.start()

    def run(self):
        try:
            write(self.path, "1")
        except OSError as e:
            self.error = e


def holder(core):
    """neuron-nq monitor holding CORE of nnq0 (it takes the core and makes
    queues); returns the process once core_owners names it."""
    p = subprocess.Popen([NQ, "monitor", "-d", "/dev/nnq0", "--core", str(core), "--no-events",
                          "--duration", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 20
    while time.monotonic() < end:
        for line in read("/sys/class/nnq/nnq0/core_owners").splitlines():
            f = line.split()
            if len(f) >= 2 and f[0] == str(core) and f[1] == str(p.pid):
                return p
        time.sleep(0.05)
    p.kill()
    raise RuntimeError(f"core {core} never shown owned by PID {p.pid}")


def container(specs, argv):
    """Run ARGV as uid 1000 in a mount namespace whose /dev holds only the
    DeviceSpecs' nodes (made as a container runtime makes them: the host
    node's type and numbers at container_path). Returns (status, output)."""
    libc = ctypes.CDLL(None, use_errno=True)
    nodes = [(d.container_path, os.stat(d.host_path)) for d in specs]  # before /dev is replaced
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.dup2(w, 1)
            os.dup2(w, 2)
            if libc.unshare(0x00020000):  # CLONE_NEWNS
                raise OSError(ctypes.get_errno(), "unshare")
            if libc.mount(None, b"/", None, 0x4000 | 0x40000, None):  # MS_REC | MS_PRIVATE
                raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
            if libc.mount(b"tmpfs", b"/dev", b"tmpfs", 0, b"mode=755"):
                raise OSError(ctypes.get_errno(), "mount tmpfs /dev")
            for path, st in nodes:
                os.mknod(path, 0o600 | (st.st_mode & 0o170000), st.st_rdev)
                os.chown(path, TENANT, TENANT)
            os.setgroups([])
            os.setresgid(TENANT, TENANT, TENANT)
            os.setresuid(TENANT, TENANT, TENANT)
            print("container /dev:", " ".join(sorted(os.listdir("/dev"))), flush=True)
            os.execv(argv[0], argv)
        except BaseException as e:
            print(f"container setup: {e}", flush=True)
        os._exit(127)
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


os.makedirs(PLUGINS, exist_ok=True)
uev = Uevents()
kub = Kubelet(PLUGINS)
say(f"vm kubelet: serving Registration on {PLUGINS}/kubelet.sock")
log = open("/tmp/plugin.log", "w")
proc = subprocess.Popen([PLUGIN, "--reclaim-grace", "2", "--poll-ms", "100"], stderr=log)
state = {"kub": kub}
try:
    def registration():
        regs = kub.take(2, 30)
        for name, r in sorted(regs.items()):
            say(f"  <- Register version={r.version} endpoint={r.endpoint} resource_name={r.resource_name}")
        check(set(regs) == {"neuron.example/core", "neuron.example/device"}, "both resources registered")
        state["core"] = Plugin(PLUGINS, regs["neuron.example/core"].endpoint)

    def list_and_watch():
        state["w"] = w = Watch(state["core"])
        got = w.until(lambda h: True, 10)
        check(got is not None, "first list")
        say(f"  <- {summary(got[1])}")
        check(all_healthy(got[1]), "nnq0-core0..1 and nnq1-core0..1, all Healthy")

    def allocate():
        a = state["core"].allocate(pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["nnq0-core1"])]), timeout=10)
        cr = a.container_responses[0]
        for d in cr.devices:
            say(f"  <- DeviceSpec container_path={d.container_path} host_path={d.host_path} permissions={d.permissions}")
        say(f"  <- envs {dict(sorted(cr.envs.items()))} cdi_devices {[c.name for c in cr.cdi_devices]}")
        check([(d.container_path, d.host_path, d.permissions) for d in cr.devices] ==
              [("/dev/nnq0-core1", "/dev/nnq0-core1", "rw")], "the core node, rw")
        rdev = os.stat("/dev/nnq0-core1").st_rdev
        check(f"{os.major(rdev)}:{os.minor(rdev)}\n" == read("/sys/class/nnq/nnq0-core1/dev"),
              "host_path is the driver's node for nnq0's core 1")
        state["specs"] = list(cr.devices)

    def confined():
        st, out = container(state["specs"], [NQ, "run", "-d", "/dev/nnq0-core1", PROGRAM])
        for line in out.splitlines()[:12]:
            say("  | " + line)
        check(out.startswith("container /dev: nnq0-core1\n"), "the container's /dev holds only nnq0-core1")
        check(st == 0 and "EXPLICIT" in out, f"a program runs on the allocated core (exit {st})")
        st, out = container(state["specs"], [NQ, "info", "-d", "/dev/nnq0"])
        say(f"  | neuron-nq info -d /dev/nnq0: exit {st}: {out.splitlines()[-1] if out else ''}")
        check(st != 0, "the whole device is not there")

    def prestart():
        p = holder(1)
        c, det = code_of(state["core"].prestart, pb.PreStartContainerRequest(devices_ids=["nnq0-core1"]))
        say(f"  -> nnq0-core1 held by live PID {p.pid} <- {c.name}: {det}")
        check(c == grpc.StatusCode.FAILED_PRECONDITION and str(p.pid) in det, "a live holder refused, named")
        threading.Timer(0.3, p.send_signal, (signal.SIGTERM,)).start()
        t0 = time.monotonic()
        c, det = code_of(state["core"].prestart, pb.PreStartContainerRequest(devices_ids=["nnq0-core1"]))
        say(f"  -> nnq0-core1, its holder ended after 300 ms <- {c.name} [{(time.monotonic() - t0) * 1000:.0f} ms]")
        check(c == grpc.StatusCode.OK, "reclaimed once the driver frees it")
        p.wait(10)

    def flr():
        reset = {}

        def start():
            write(PAUSE, PAUSE_ENABLE_READY)
            reset["t"] = Reset("/sys/class/nnq/nnq0/device/reset")

        def finish():
            write(PAUSE, "0")
            reset["t"].join(30)
            check(reset["t"].error is None, f"the FLR write succeeded ({reset['t'].error})")
        flip(state["w"], uev, "FLR", start, finish, lambda k: k.get("NNQ_CAUSE") == "flr")

    def aer():
        def start():
            write(PAUSE, PAUSE_ENABLE_READY)
            host_monitor("pcie_aer_inject_error neuron0 MALF_TLP")
        flip(state["w"], uev, "fatal AER", start, lambda: write(PAUSE, "0"),
             lambda k: k.get("NNQ_CAUSE") == "pci_error")

    def surprise():
        def start():
            host_monitor("qom-set /machine/peripheral/neuron0 vanished true")
            host_monitor("device_del neuron0")

        def finish():
            # the kernel's remove uevent of nnq0 comes last; then plug it back
            uev.first(0, lambda k: k.get("ACTION") == "remove", 60)
            names = spec_cores(ALL[2:])
            say(f"  <- {CDI_CORE} after the removal: {names}")
            check(names == ALL[2:], "the CDI spec rewritten without nnq0's cores")
            host_monitor("device_add neuron-tpb,id=neuron0,bus=rp1")
        names = spec_cores(ALL)
        check(names == ALL, f"the CDI spec names the 4 cores before the removal ({names})")
        flip(state["w"], uev, "surprise removal", start, finish, lambda k: k.get("NNQ_STATE") == "removing")
        names = spec_cores(ALL)
        say(f"  <- {CDI_CORE} after the re-plug: {names}")
        check(names == ALL, "the CDI spec rewritten with nnq0's cores again")

    def reregister():
        state["kub"].stop()
        for f in os.listdir(PLUGINS):
            os.unlink(os.path.join(PLUGINS, f))
        t0 = time.monotonic()
        state["kub"] = k2 = Kubelet(PLUGINS)
        regs = k2.take(2, 10)
        say(f"  <- Register again: {sorted(regs)} [{(time.monotonic() - t0) * 1000:.0f} ms]")
        check(set(regs) == {"neuron.example/core", "neuron.example/device"}, "both registered again")
        if "neuron.example/core" in regs:
            got = Watch(Plugin(PLUGINS, regs["neuron.example/core"].endpoint)).until(lambda h: True, 10)
            check(got is not None and all_healthy(got[1]), "ListAndWatch on the new socket, all Healthy")

    step("registration (served before registered)", registration)
    step("ListAndWatch", list_and_watch)
    step("Allocate", allocate)
    step("a container given only the allocated node", confined)
    step("PreStartContainer", prestart)
    step("health: FLR", flr)
    step("health: fatal AER error", aer)
    step("health: surprise removal", surprise)
    step("kubelet restart", reregister)
    check(proc.poll() is None, "the plugin is still running")
finally:
    write(PAUSE, "0")
    log.close()
    rc = kubelet.stop_plugin(proc, "/tmp/plugin.log")
    tap_line(rc == 0, f"the plugin exits 0 on SIGTERM (got {rc})")
    state["kub"].stop()

say(f"vm kubelet: {'FAILED: ' + '; '.join(kubelet.failures) if kubelet.failures else 'all checks passed'}")
sys.exit(1 if kubelet.failures else 0)
