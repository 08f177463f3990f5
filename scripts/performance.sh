#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make performance`: regenerates docs/performance.md, its plots and the
# JSON they come from (docs/performance.md#regenerate), in one command:
#   1. builds the module and userspace, finds QEMU and the guest kernel;
#   2. the host drain benchmark -> docs/performance/bench_drain.json
#      (Google Benchmark's JSON);
#   3. one VM boot of selftests/vm/e2e-bench with the full sweep ->
#      docs/performance/e2e.json and scale.json (console:
#      build/vm/performance.log; the boot's checks must pass);
#   4. where it ran -> docs/performance/machine.json (CPU model, cores,
#      kernel, QEMU, date, the load average before and after);
#   5. scripts/perf-report.py -> docs/performance.md and the PNGs.
# The machine is often shared: PERF_NOTE="..." is printed under the machine
# table (say what else was running). Extra arguments go to e2e-bench (e.g.
# --paced-records 5000 for a quicker, noisier run).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
data=$top/docs/performance
mkdir -p "$data" "$top/build/vm"
. scripts/ccache-env.sh
make -s module userspace
qemu=$(emulator/qemu/build-qemu.sh | tail -1)
kernel=$(selftests/vm/fetch-kernel.sh | tail -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date -u +%Y-%m-%dT%H:%M:%SZ)

echo "performance: host drain benchmark" >&2
build/userspace/bench_drain --benchmark_color=false \
	--benchmark_out="$data/bench_drain.json" --benchmark_out_format=json >&2

echo "performance: VM (log: build/vm/performance.log)" >&2
e2e_args=(--coalesce 32:1000000,64:2000000 "$@")
NEURON_VM_LOG=$top/build/vm/performance.log selftests/vm/e2e-bench --qemu "$qemu" --kernel "$kernel" \
	--timeout 3600 --json "$data" "${e2e_args[@]}" >/dev/null
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

/usr/bin/python3 - "$data/machine.json" "$start" "$load_before" "$load_after" "$qemu" \
	"make performance ${e2e_args[*]}" "${PERF_NOTE:-}" <<'PY'
import json, os, platform, subprocess, sys
out, date, before, after, qemu, command, note = sys.argv[1:8]
cpu = "?"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
mem = 0
for line in open("/proc/meminfo"):
    if line.startswith("MemTotal:"):
        mem = int(line.split()[1]) / 1024 / 1024
os_name = "?"
if os.path.exists("/etc/os-release"):
    for line in open("/etc/os-release"):
        if line.startswith("PRETTY_NAME="):
            os_name = line.split("=", 1)[1].strip().strip('"')
version = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
doc = {
    "date": date,
    "host": {"cpu_model": cpu, "cpus": os.cpu_count(), "mem_gib": round(mem, 1),
             "kernel": platform.release(), "os": os_name},
    "qemu": {"version": version, "accel": "TCG"},
    "guest": {"vcpus": 1, "devices": 4, "memory_mib": 512},
    "load": {"before": [float(x) for x in before.split()], "after": [float(x) for x in after.split()]},
    "command": command,
    "note": note,
}
with open(out, "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
PY
/usr/bin/python3 scripts/perf-report.py --data "$data" --doc docs/performance.md
