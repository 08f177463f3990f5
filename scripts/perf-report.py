#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""perf-report: docs/performance.md from the benchmarks' JSON.

Reads, from --data (default docs/performance/):
  machine.json      where the figures were taken (scripts/performance.sh)
  bench_drain.json  the host drain benchmark, Google Benchmark's JSON
                    (bench_drain --benchmark_out=... --benchmark_out_format=json)
  e2e.json          e2e_bench --json in the VM (userspace/bench/e2e_bench.cpp)
  scale.json        reaper_scale --json in the VM (userspace/bench/reaper_scale.cpp)
and writes
  the figures and targets into --doc (default docs/performance.md), between
  the lines "<!-- perf-report:begin -->" and "<!-- perf-report:end -->"
  (the rest of the file is prose and stays as it is), to --out-doc
  (default: --doc itself);
  cpu_per_record.png and latency_cdf.png into --png-dir (default --data).
The document links the plots and the JSON as performance/NAME, relative to
docs/. Nothing here measures or asserts: it only draws what the JSON holds.
Needs Debian's python3-matplotlib (scripts/setup-host.sh).

make check runs it on the committed JSON into build/ (a broken script fails
a counted test); make performance (scripts/performance.sh) regenerates the
JSON first.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BEGIN = "<!-- perf-report:begin -->"
END = "<!-- perf-report:end -->"

# bench_drain's targets, as its header states them (userspace/bench/bench_drain.cpp):
# ratios of the median records/s of two benchmarks
DRAIN_TARGETS = [
    ("drain_for_each", "BM_ForEach", "BM_Drain", 1.0, "for_each / drain"),
    ("drain_memcpy", "BM_Drain", "BM_Memcpy", 0.9, "drain / memcpy"),
    ("drain_reference", "BM_Drain", "BM_Reference", 2.0, "drain / reference"),
]
MODE_STYLE = {  # colour, marker: the three consumers of issue 14
    "busy-poll": ("tab:red", "o"),
    "eventfd": ("tab:blue", "s"),
    "coalesced": ("tab:green", "^"),
    "dim": ("tab:purple", "D"),  # the driver's adaptive moderation (issue 43)
}


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def fmt_ns(ns):
    if ns is None:
        return "n/a"
    if abs(ns) >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if abs(ns) >= 1e3:
        return f"{ns / 1e3:.1f} us"
    return f"{ns:.0f} ns"


def fmt_rate(r):
    if r is None:
        return "n/a"
    if r >= 1e9:
        return f"{r / 1e9:.2f} G/s"
    if r >= 1e6:
        return f"{r / 1e6:.2f} M/s"
    return f"{r / 1e3:.1f} k/s"


def fmt_num(x, digits=3):
    if x is None:
        return "n/a"
    if abs(x) >= 10 ** digits:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return out


# ---------------------------------------------------------------- bench_drain
def drain_rates(doc):
    """Median items_per_second per benchmark name (the aggregate if the run
    had repetitions, else the median of the iteration runs)."""
    agg, runs = {}, {}
    for b in doc.get("benchmarks", []):
        name = b.get("run_name", b["name"].split("_median")[0])
        ips = b.get("items_per_second")
        if ips is None or b.get("error_occurred"):
            continue
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                agg[name] = ips
        else:
            runs.setdefault(name, []).append(ips)
    out = {}
    for name, v in runs.items():
        v = sorted(v)
        out[name] = v[len(v) // 2]
    out.update(agg)
    return out


def drain_targets(rates):
    rows = []
    for key, num, den, want, label in DRAIN_TARGETS:
        if num == "BM_ForEach" and "BM_ForEachWide" in rates:
            num = "BM_ForEachWide"  # since 5 Dec: the consumer as wide as the drain (bench_drain.cpp)
        if num in rates and den in rates and rates[den] > 0:
            value = rates[num] / rates[den]
            rows.append({"name": key, "figure": f"{label} (median records/s)", "value": value,
                         "target": f">= {want:g}", "met": value >= want,
                         "detail": f"{fmt_rate(rates[num])} vs {fmt_rate(rates[den])}"})
    return rows


# ---------------------------------------------------------------- e2e runs
def mode_key(mode):
    return "coalesced" if mode.startswith("coalesced") else mode


def paced_runs(e2e):
    return [r for r in e2e["runs"] if r["pace_ns"] > 0]


def plot_cpu(e2e, path):
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    modes = []
    for r in paced_runs(e2e):
        if r["mode"] not in modes:
            modes.append(r["mode"])
    extra = iter([("tab:purple", "d"), ("tab:brown", "v"), ("tab:olive", "P"), ("tab:gray", "x")])
    for mode in modes:
        pts = sorted((r["records_per_s"], r["cpu"].get("process_ns_per_record"), r["cpu"].get("system_ns_per_record"))
                     for r in paced_runs(e2e) if r["mode"] == mode and r["records"] > 0)
        if not pts:
            continue
        colour, marker = MODE_STYLE[mode] if mode in MODE_STYLE else next(extra, ("black", "."))
        x = [p[0] for p in pts]
        if mode == "busy-poll":  # the paced CPU target: 1/20 of busy-poll's
            ax.plot(x, [p[1] / 20 for p in pts], color="black", linestyle=":", linewidth=1,
                    label="busy-poll (process) / 20: the target")
        ax.plot(x, [p[1] for p in pts], color=colour, marker=marker, label=f"{mode} (process)")
        sysp = [(p[0], p[2]) for p in pts if p[2] is not None and p[2] > 0]
        if sysp:
            ax.plot([p[0] for p in sysp], [p[1] for p in sysp], color=colour, marker=marker, linestyle="--",
                    alpha=0.6, label=f"{mode} (whole guest)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("records/s delivered (paced sweep)")
    ax.set_ylabel("CPU per record, ns")
    ax.set_title("CPU per record against record rate")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def cdf_points(edges, buckets):
    """(latency_ns, fraction <= it) at each bucket's upper edge; bucket 0 is
    below edges[0], the last one above edges[-1]."""
    total = sum(buckets)
    if total == 0:
        return [], []
    xs, ys, acc = [], [], 0
    for i, n in enumerate(buckets):
        acc += n
        if i < len(edges):
            xs.append(edges[i])
            ys.append(acc / total)
    return xs, ys


def plot_latency(e2e, target_workload, path):
    edges = e2e["latency_edges_ns"]
    panels = [w for w in (target_workload, "flood") if w]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), dpi=110, squeeze=False)
    # the x range: the buckets any run used, one bucket either side
    used = [i for r in e2e["runs"] if r.get("latency") for i, n in enumerate(r["latency"]["buckets"]) if n]
    lo = edges[max(min(used) - 2, 0)] / 1e3 if used else 1
    hi = edges[min(max(used) + 1, len(edges) - 1)] / 1e3 if used else 1e7
    extra_colour = {}
    for ax, workload in zip(axes[0], panels):
        ax.set_xlim(lo, hi)
        for r in e2e["runs"]:
            if r["workload"] != workload or not r.get("median", True) or not r.get("latency") \
                    or not r["latency"]["count"]:
                continue
            if r["mode"] in MODE_STYLE:
                colour = MODE_STYLE[r["mode"]][0]
            else:
                colour = extra_colour.setdefault(r["mode"], ["tab:purple", "tab:brown", "tab:olive",
                                                             "tab:gray"][len(extra_colour) % 4])
            xs, ys = cdf_points(edges, r["latency"]["buckets"])
            ax.step([x / 1e3 for x in xs], ys, where="post", color=colour,
                    linestyle="-" if r["mode"] in MODE_STYLE else ":", label=r["mode"])
        ax.set_xscale("log")
        ax.set_ylim(0, 1.005)
        ax.axvline(1000, color="black", linewidth=0.8, linestyle="--")
        ax.text(1000, 0.45, " 1 ms", fontsize=7)
        ax.set_xlabel("delivery latency, us (device timestamp to consumer)")
        ax.set_ylabel("fraction of records at or below")
        rate = next((r["records_per_s"] for r in e2e["runs"] if r["workload"] == workload
                     and r["mode"] == "coalesced" and r.get("median", True)), None)
        ax.set_title(f"{workload}" + (f" (~{fmt_rate(rate)})" if rate else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


# ---------------------------------------------------------------- the document
def machine_lines(m, e2e):
    host = m.get("host", {})
    load = m.get("load", {})
    rows = [
        ("date", m.get("date", "?")),
        ("host CPU", f"{host.get('cpu_model', '?')}, {host.get('cpus', '?')} cores"),
        ("host memory", f"{host.get('mem_gib', '?')} GiB"),
        ("host kernel", host.get("kernel", "?")),
        ("host OS", host.get("os", "?")),
        ("QEMU", f"{m.get('qemu', {}).get('version', '?')}, {m.get('qemu', {}).get('accel', 'TCG')}"
                 f" (no KVM), {m.get('guest', {}).get('vcpus', '?')} vCPU"),
        ("guest kernel", e2e.get("guest", {}).get("kernel", "?")),
        ("device", f"neuron-tpb x {m.get('guest', {}).get('devices', '?')}, "
                   f"{e2e['setup']['cores']} of its cores x {e2e['setup']['engines_per_core']} engines used "
                   f"by e2e_bench, {e2e['setup']['ring_bytes']}-byte rings"),
        ("load average (1 min) before / after",
         f"{fmt_num(load.get('before', [None])[0])} / {fmt_num(load.get('after', [None])[0])} "
         f"on {host.get('cpus', '?')} cores"),
        ("command", f"`{m.get('command', 'make performance')}`"),
    ]
    out = table(["", ""], rows)
    if m.get("note"):
        out += ["", m["note"]]
    return out


def target_rows(targets):
    return [[t["name"], t["figure"], fmt_num(t["value"]), t["target"], "met" if t["met"] else "**missed**",
             t.get("detail", "")] for t in targets]


def run_label(r, runs):
    """The workload, with the run's number and "median" when it was repeated."""
    n = sum(1 for x in runs if x["workload"] == r["workload"] and x["mode"] == r["mode"])
    if n < 2:
        return r["workload"]
    return f"{r['workload']} {r.get('repeat', 0) + 1}/{n}" + (" (median)" if r.get("median", True) else "")


def run_row(r, runs):
    lat = r.get("latency") or {}
    cpu = r["cpu"]
    per_wake = r.get("records_per_wake")
    return [run_label(r, runs), r["mode"], fmt_rate(r["records_per_s"]), fmt_ns(cpu.get("process_ns_per_record")),
            fmt_ns(cpu.get("system_ns_per_record")), fmt_num(per_wake) if per_wake is not None else "-",
            fmt_ns(lat.get("p50_ns")), fmt_ns(lat.get("p90_ns")), fmt_ns(lat.get("p99_ns")),
            fmt_ns(lat.get("p999_ns")), fmt_ns(lat.get("max_ns"))]


def drift_text(e2e):
    worst_ppm, worst_unc = 0.0, 0
    for r in e2e["runs"]:
        cal = r.get("calibration") or {}
        if abs(cal.get("drift_ppm", 0)) > abs(worst_ppm):
            worst_ppm = cal["drift_ppm"]
        for c in cal.get("cores", []):
            for k in ("before", "after"):
                worst_unc = max(worst_unc, c.get(k, {}).get("uncertainty_ns", 0))
    return worst_ppm, worst_unc


def render(m, drain, e2e, scale, files):
    rates = drain_rates(drain)
    target_workload = e2e["setup"].get("target_workload")
    targets = drain_targets(rates) + e2e.get("targets", []) + scale.get("targets", [])
    out = [BEGIN, "",
           "<!-- generated by scripts/perf-report.py from the JSON below; do not edit by hand -->", "",
           "<a id=\"machine\"></a>", "### Where these figures come from", ""]
    out += machine_lines(m, e2e)
    out += ["", "<a id=\"targets\"></a>", "### Targets", "",
            f"{sum(1 for t in targets if t['met'])} of {len(targets)} met. The paced targets are read at "
            f"`{target_workload}`, the sweep point whose coalesced rate is nearest "
            f"{fmt_rate(e2e['setup'].get('target_rate', 40000))}.", ""]
    out += table(["target", "figure", "measured", "target", "", "detail"], target_rows(targets))
    out += ["", "<a id=\"figures-drain\"></a>", "### Host drain (bench_drain)", ""]
    out += table(["benchmark", "median records/s"], [[k, fmt_rate(v)] for k, v in sorted(rates.items())])
    out += ["", "<a id=\"figures-e2e\"></a>", "### End to end in the VM (e2e_bench)", "",
            "CPU per record: the process (getrusage) and the whole guest (/proc/stat). Latency: device "
            "timestamp to the consumer holding the record ([method](#latency)).", ""]
    out += table(["workload", "mode", "records/s", "CPU/record process", "CPU/record guest", "records/wake",
                  "p50", "p90", "p99", "p99.9", "max"], [run_row(r, e2e["runs"]) for r in e2e["runs"]])
    ppm, unc = drift_text(e2e)
    out += ["", f"Clock calibration: worst drift between the before and after calibrations {ppm:.2f} ppm; "
                f"worst uncertainty of a calibration {fmt_ns(unc)}.", ""]
    dr = e2e.get("device_rate") or {}
    if dr.get("rounds"):
        out += [f"The device model's own rate, nobody draining: **{fmt_rate(dr['all_running_per_s'])}** with every "
                f"engine running ({fmt_rate(dr['overall_per_s'])} first to last record), median of "
                f"{len(dr['rounds'])} rounds. Flood as a share of it: "
                + ", ".join(f"{r['mode']} {r['records_per_s'] / dr['all_running_per_s'] * 100:.0f}%"
                            for r in e2e["runs"] if r["workload"] == "flood" and r.get("median", True)
                            and dr["all_running_per_s"] > 0)
                + ".", ""]
    lossy = e2e.get("lossy") or {}
    if lossy:
        out += [f"Lossy queue lapped by its producer: {lossy['written']} records written, {lossy['delivered']} "
                f"delivered, {lossy['lost']} counted lost ({lossy['resyncs']} lap recoveries); worst delay "
                f"{fmt_ns(lossy['worst_delay_ns'])} relative to the quickest record.", ""]
    out += ["<a id=\"figures-scale\"></a>", "### One Reaper over 320 queues (reaper_scale)", ""]
    s = scale["setup"]
    idle = scale["idle"]
    out += [f"{s['queues']} queues ({s['devices']} devices x {s['cores']} cores x {s['queues_per_core']}), one "
            f"Reaper with its defaults. Idle for {idle['seconds']:.1f} s: the Reaper thread used "
            f"{idle['reaper_core_percent']:.3f}% of a core ({idle['rescans']} rescans), the whole guest "
            f"{idle['system_core_percent']:.2f}%.", ""]
    out += table(["hot queues", "records/s", "Reaper CPU/record", "process CPU/record", "guest CPU/record",
                  "records/wake"],
                 [[p["hot_queues"], fmt_rate(p["records_per_s"]), fmt_ns(p["reaper_ns_per_record"]),
                   fmt_ns(p["cpu"].get("process_ns_per_record")), fmt_ns(p["cpu"].get("system_ns_per_record")),
                   fmt_num(p["records_per_wake"])] for p in scale["phases"]])
    out += ["", f"Median Reaper CPU per record: 1 hot queue {fmt_ns(scale['median_reaper_ns_per_record']['hot1'])}, "
                f"4 hot queues {fmt_ns(scale['median_reaper_ns_per_record']['hot4'])} "
                f"(4 / 1 = {scale['ratio_hot4_hot1']:.2f}).", ""]
    out += ["<a id=\"plots\"></a>", "### Plots", "",
            "![CPU per record against record rate](performance/cpu_per_record.png)", "",
            "![Delivery latency CDF per mode](performance/latency_cdf.png)", "",
            "<a id=\"raw\"></a>", "### Raw data", "",
            "The JSON these tables and plots were drawn from: "
            + ", ".join(f"[{f}](performance/{f})" for f in files) + ".", "", END]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="docs/performance")
    ap.add_argument("--doc", default="docs/performance.md")
    ap.add_argument("--out-doc")
    ap.add_argument("--png-dir")
    a = ap.parse_args()
    out_doc = a.out_doc or a.doc
    png_dir = a.png_dir or a.data
    files = ["machine.json", "bench_drain.json", "e2e.json", "scale.json"]
    try:
        m, drain, e2e, scale = (load(os.path.join(a.data, f)) for f in files)
        with open(a.doc, encoding="utf-8") as f:
            doc = f.read()
    except (OSError, ValueError) as e:
        print(f"perf-report: {e}", file=sys.stderr)
        return 1
    if BEGIN not in doc or END not in doc:
        print(f"perf-report: {a.doc} has no {BEGIN} ... {END} region", file=sys.stderr)
        return 1
    os.makedirs(png_dir, exist_ok=True)
    plot_cpu(e2e, os.path.join(png_dir, "cpu_per_record.png"))
    plot_latency(e2e, e2e["setup"].get("target_workload"), os.path.join(png_dir, "latency_cdf.png"))
    head, rest = doc.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    text = head + "\n".join(render(m, drain, e2e, scale, files)) + tail
    os.makedirs(os.path.dirname(os.path.abspath(out_doc)), exist_ok=True)
    with open(out_doc, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"perf-report: {out_doc}, {png_dir}/cpu_per_record.png, {png_dir}/latency_cdf.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
