#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# neuron-device-plugin's options that the DaemonSet relies on
# (deploy/base/daemonset.yaml, docs/k8s.md#deploy):
#   --reclaim-grace: refused, naming the flag, at or above the kubelet's 30 s
#     PreStartContainer deadline (the bound is 25 s), and when not a number;
#   --resource-prefix: the one name of both resources it registers;
#   --probe (the liveness probe): 1 with no plugin, 0 while the plugin
#     serves, 1 while it is stopped (SIGSTOP: sockets there, nobody
#     answering), 1 on a socket file left by a dead server.
# The kubelet's Registration is kubelet.py's (the fake kubelets').
# Usage: plugin_options.py NEURON_DEVICE_PLUGIN PROTO_DIR
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # the tests run from the source tree, which stays clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet  # noqa: E402

plugin, proto_dir = sys.argv[1], sys.argv[2]
root = tempfile.mkdtemp(prefix="nplugopt-")
kubelet.load_messages(proto_dir, root)
failures = 0


def check(cond, what, detail=""):
    global failures
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else ": " + detail))
    if not cond:
        failures += 1


def run(*args):
    return subprocess.run([plugin, *args], capture_output=True, text=True, timeout=30)


# --reclaim-grace bounds
for bad in ("30", "25.5", "60", "-1", "abc"):
    r = run("--reclaim-grace", bad, "--probe", "--kubelet-dir", root)
    check(r.returncode != 0 and "--reclaim-grace" in r.stderr and "30 s PreStartContainer deadline" in r.stderr,
          f"--reclaim-grace {bad} refused naming the flag and the deadline", repr(r.stderr))

# the fake node: an empty sysfs class, /dev, /proc, the kubelet's directory
for d in ("sys/class/nnq", "dev", "proc", "kubelet/device-plugins"):
    os.makedirs(f"{root}/{d}")
kdir = f"{root}/kubelet"

r = run("--probe", "--kubelet-dir", kdir)
check(r.returncode == 1 and "neuron-core.sock" in r.stderr, "--probe with no plugin: 1, naming the socket",
      f"status {r.returncode}, {r.stderr!r}")

kub = kubelet.Kubelet(f"{kdir}/device-plugins")
log = open(f"{root}/plugin.log", "w")
p = subprocess.Popen([plugin, "--sys-root", f"{root}/sys", "--dev-root", f"{root}/dev", "--proc-root",
                      f"{root}/proc", "--kubelet-dir", kdir, "--cdi-dir", "", "--no-uevents",
                      "--reclaim-grace", "25", "--resource-prefix", "accel.example.org"], stderr=log)
try:
    regs = sorted(kub.take(2, timeout=20))
    check(regs == ["accel.example.org/core", "accel.example.org/device"],
          "--resource-prefix accel.example.org names both registered resources", repr(regs))
    socks = [f"{kdir}/device-plugins/neuron-{k}.sock" for k in ("core", "device")]
    end = time.monotonic() + 20
    while time.monotonic() < end and not all(os.path.exists(s) for s in socks):
        time.sleep(0.05)
    check(p.poll() is None and all(os.path.exists(s) for s in socks),
          "the plugin (--reclaim-grace 25) serves both sockets")
    r = run("--probe", "--kubelet-dir", kdir)
    check(r.returncode == 0, "--probe while it serves: 0", f"status {r.returncode}, {r.stderr!r}")
    p.send_signal(signal.SIGSTOP)
    r = run("--probe", "--kubelet-dir", kdir)
    p.send_signal(signal.SIGCONT)
    check(r.returncode == 1 and "no answer" in r.stderr, "--probe while it is stopped: 1, no answer",
          f"status {r.returncode}, {r.stderr!r}")
finally:
    p.terminate()
    p.wait(timeout=20)
    log.close()
    kub.stop()

# a socket file whose server is gone
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(f"{kdir}/device-plugins/neuron-core.sock")
s.close()
r = run("--probe", "--kubelet-dir", kdir)
check(r.returncode == 1 and "neuron-core.sock" in r.stderr, "--probe on a stale socket file: 1",
      f"status {r.returncode}, {r.stderr!r}")

if failures:
    sys.stdout.write(open(f"{root}/plugin.log").read())
shutil.rmtree(root, ignore_errors=True)
print(f"{failures} failed")
sys.exit(1 if failures else 0)
