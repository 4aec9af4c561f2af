#!/usr/bin/env python3
"""Regenerates experiments/gateway/: results.csv and the PNG plots REPORT.md shows.

Usage (from the repository root): `make reproduce-gateway`, or after `make build`
    $(tools/find_python.sh) experiments/gateway/run.py [--ukai build/src/cli/ukai]
    $(tools/find_python.sh) experiments/gateway/run.py --plot-only [--results FILE] [--out DIR]
Every run is `ukai sim run CONFIG --set ... --format json`. results.csv has one row per run:
the experiment, the config, every --set as a column of its own (named by its key, the value
without quotes; `sets` repeats them as given) and the figures of the run (docs/gateway.md).
Deterministic: the same seed gives the same figures (wall_seconds aside, which is left out).
--plot-only draws the PNGs from an existing results.csv (default: the committed one) without
running anything. The drawing is `ukai sim plot`'s (src/cli/plot/ukai_sim_plot.py: line_plot,
category_plot, bar_plot, finish, save), imported from the repository.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "cli", "plot"))
import ukai_sim_plot as usp  # noqa: E402

try:
    plt = usp.pyplot()
except ImportError:  # the interpreter tools/find_python.sh names has it
    sys.exit(f"{sys.executable} cannot import matplotlib: run `make reproduce-gateway` or "
             f"`$(tools/find_python.sh) {os.path.relpath(__file__)}` (Debian: "
             f"python3-matplotlib, installed by `make deps`)")

POLICIES = ["none", "learned", "managed", "preloaded"]
CONFIGS = ["group24.toml", "mesh4.toml", "mesh8.toml"]
FIGURES = ["nic_detours", "frames_in", "frames_delivered", "frames_lost",
           "frames_retransmitted", "frames_owner_faulty", "frames_no_owner",
           "frames_fcs_discarded", "broadcasts", "egress_frames", "egress_lost",
           "table_updates_sent", "avg_frame_latency_cycles", "p99_frame_latency_cycles",
           "max_io_cpu_load", "avg_latency_cycles", "avg_network_latency_cycles", "avg_hops",
           "bandwidth_mbytes_per_second", "messages_measured", "undeliverable_messages",
           "cycles", "saturated", "reconfiguration_cycles", "egress_retransmitted",
           "egress_updates_sent", "table_rows_cleared", "job_launches", "nic_commands_sent",
           "frames_dropped_disabled", "egress_dropped_disabled", "management_messages_lost",
           "nic_frames_0", "nic_frames_1", "nic_frames_2", "nic_frames_3", "note"]
REPAIR = ('faults.events=[{cycle = 200000, fail_node = "4G1"}, '
          '{cycle = 400000, repair_node = "4G1"}]')
JOBS = {"expand": '[{cycle = 300000, enabled = ["3G0", "3G1", "3G2", "3G3"]}]',
        "move": '[{cycle = 300000, enabled = ["3G2", "3G3"]}]'}
SPREADS = {1: '["3G0"]', 2: '["3G0", "3G1"]', 4: '["3G0", "3G1", "3G2", "3G3"]'}
CPU_COSTS = [0, 50, 100, 150, 200, 250, 300]


def run(ukai, config, sets):
    cmd = [ukai, "sim", "run", os.path.join(HERE, config), "--format", "json"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])


def unquote(value):
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def sweep(ukai):
    rows = []

    def add(experiment, config, sets, **labels):
        d = run(ukai, config, sets)
        for i, frames in enumerate(d.get("nic_frames", [])):
            d[f"nic_frames_{i}"] = frames
        d.update(experiment=experiment, config=config, sets=" ".join(sets))
        for s in sets:
            key, value = s.split("=", 1)
            d[key] = unquote(value)
        d.update(labels)
        rows.append(d)
        print(experiment, config, " ".join(sets), "delivered", d["frames_delivered"], "lost",
              d["frames_lost"], "egress lost", d["egress_lost"])

    # 1. A node fails during the run (each config's faults.events), every policy.
    for config in CONFIGS:
        for retransmit in ["false", "true"]:
            for p in POLICIES:
                add("runtime_fault", config, [f"nic.detours={p}", f"nic.retransmit={retransmit}"])
    for p in POLICIES:  # the fault present at boot (faults.nodes)
        add("boot_fault", "group24.toml", [f"nic.detours={p}", "faults.events=[]",
                                           "faults.nodes=[\"4G1\"]"])
    # 2. Load spread over 1, 2 and 4 NICs.
    for n, enabled in SPREADS.items():
        for rate in [0.002, 0.005, 0.01]:
            add("load_spread", "group24.toml", [f"nic.enabled={enabled}",
                                                f"nic.ingress_rate={rate}", "faults.events=[]"],
                nics=n)
    # 3. The Fig. 1 baseline: the I/O node's CPU in both directions, and inbound only.
    for directions in ["both", "ingress"]:
        for cost in CPU_COSTS:
            add("cpu_baseline", "group24.toml", [f"nic.cpu_cycles_per_frame={cost}",
                                                 f"nic.cpu_directions={directions}",
                                                 "faults.events=[]"])
    # 4. A fault repaired during the run; 5. job launches.
    for p in POLICIES:
        add("fault_repair", "group24.toml", [f"nic.detours={p}", REPAIR])
    for name, jobs in JOBS.items():
        for retransmit in ["false", "true"]:
            add("job_launch", "group24.toml", [f"nic.jobs={jobs}", "faults.events=[]",
                                               f"nic.retransmit={retransmit}"], launch=name)
    # 7. Frames with a bad FCS (the NIC's S31-S33): discarded and counted, never delivered.
    for fraction in [0, 0.01, 0.1]:
        add("bad_fcs", "group24.toml", [f"nic.bad_fcs_fraction={fraction}", "faults.events=[]"])
    # 8. Egress across a fault (docs/gateway.md, "Egress lost across a fault"): mesh8,
    # egress only, 200 frames at 0.001 per node per cycle, (3,2) failing at cycle 1000. The
    # management node hears of the fault nic.notify_delay_cycles after the network applies
    # it: at the end of the reconfiguration (reconfig.mode = protocol, the config's) or at
    # once (instant). Frames sent until the nodes' updated detours arrive are lost.
    for mode in ["protocol", "instant"]:
        for delay in [0, 500, 2000]:
            add("egress_window", "mesh8.toml", [
                "nic.frames=0", "nic.egress_rate=0.001", "nic.egress_frames=200",
                "faults.events=[{cycle = 1000, fail_node = [3, 2]}]",
                f"reconfig.mode={mode}", f"nic.notify_delay_cycles={delay}",
                "nic.retransmit=false"])
    add("egress_window", "mesh8.toml", [
        "nic.frames=0", "nic.egress_rate=0.001", "nic.egress_frames=200",
        "faults.events=[{cycle = 1000, fail_node = [3, 2]}]", "reconfig.mode=protocol",
        "nic.notify_delay_cycles=500", "nic.retransmit=true"])
    return rows


def pick(rows, experiment, **kw):
    return [r for r in rows if r["experiment"] == experiment and
            all(str(r.get(k)) == str(v) for k, v in kw.items())]


def save(fig, out_dir, name):
    usp.save(fig, os.path.join(out_dir, name), dpi=90)
    print("wrote", name)


def runtime_fault(rows, config, retransmit):
    return [pick(rows, "runtime_fault", config=config, **{"nic.detours": p,
                                                          "nic.retransmit": retransmit})[0]
            for p in POLICIES]


def plot_policies(rows, out_dir):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, config in zip(axes, CONFIGS):
        usp.bar_plot(ax, POLICIES, [
            usp.Series(name, POLICIES, [r["frames_lost"] for r in runtime_fault(rows, config, rt)])
            for rt, name in [("false", "lost"), ("true", "lost with retransmission")]])
        usp.finish(ax, None, "frames lost (of 3000)",
                   config.replace(".toml", "") + ": node fails at cycle 200000", fontsize=None)
    save(fig, out_dir, "policies_lost.png")

    # Policies are categories: markers per config, no lines between them; a log scale
    # (every latency is > 0).
    fig, ax = plt.subplots(figsize=(7, 4))
    usp.category_plot(ax, POLICIES, [
        usp.Series(config.replace(".toml", ""), POLICIES,
                   [r["avg_frame_latency_cycles"] for r in runtime_fault(rows, config, "false")])
        for config in CONFIGS], ylog=True, annotate="{:.0f}")
    usp.finish(ax, None, "mean frame latency (cycles, log scale)",
               "delivered frames' latency by detour policy", fontsize=None)
    save(fig, out_dir, "policies_latency.png")


def latency_series(label, xs, rows):
    """Mean frame latency against xs; saturated points marked."""
    return usp.Series(label, xs, [r["avg_frame_latency_cycles"] for r in rows],
                      [r["saturated"] for r in rows])


def plot_load_spread(rows, out_dir):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    latency, busiest = [], []
    for n in SPREADS:
        sel = sorted(pick(rows, "load_spread", nics=n), key=lambda r: float(r["nic.ingress_rate"]))
        rates = [float(r["nic.ingress_rate"]) for r in sel]
        latency.append(latency_series(f"{n} I/O node(s)", rates, sel))
        busiest.append(usp.Series(f"{n} I/O node(s)", rates, [max(r["nic_frames"]) for r in sel]))
    usp.line_plot(axes[0], latency, ylog=True)
    usp.line_plot(axes[1], busiest)
    usp.finish(axes[0], "ingress frames per cycle", "mean frame latency (cycles, log scale)",
               "X: saturated (docs/gateway.md)", fontsize=None)
    usp.finish(axes[1], "ingress frames per cycle", "frames through the busiest NIC (in + out)",
               fontsize=None)
    save(fig, out_dir, "load_spread.png")


def plot_cpu(rows, out_dir):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    load, latency = [], []
    for directions, name in [("both", "both directions (Fig. 1)"), ("ingress", "inbound only")]:
        sel = sorted(pick(rows, "cpu_baseline", **{"nic.cpu_directions": directions}),
                     key=lambda r: int(r["nic.cpu_cycles_per_frame"]))
        costs = [int(r["nic.cpu_cycles_per_frame"]) for r in sel]
        load.append(usp.Series(name, costs, [r["max_io_cpu_load"] for r in sel]))
        latency.append(latency_series(name, costs, sel))
    usp.line_plot(axes[0], load)
    usp.line_plot(axes[1], latency, ylog=True)
    xlabel = "CPU cycles per frame at the I/O node (0: the patent's NIC on the router)"
    usp.finish(axes[0], xlabel, "busiest I/O CPU: busy share of the run", fontsize=None)
    usp.finish(axes[1], xlabel, "mean frame latency (cycles, log scale)",
               "X: saturated (docs/gateway.md)", fontsize=None)
    save(fig, out_dir, "cpu_baseline.png")


def plot_management(rows, out_dir):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    sel = [pick(rows, "fault_repair", **{"nic.detours": p})[0] for p in POLICIES]
    usp.bar_plot(axes[0], POLICIES, [
        usp.Series("ingress frames lost", POLICIES, [r["frames_lost"] for r in sel]),
        usp.Series("egress frames lost", POLICIES, [r["egress_lost"] for r in sel])])
    usp.finish(axes[0], None, "frames lost", "group24: 4G1 fails at 200000, repaired at 400000",
               fontsize=None)
    nics = ["3G0", "3G1", "3G2", "3G3"]
    usp.bar_plot(axes[1], nics, [
        usp.Series(name, nics, pick(rows, "job_launch", launch=name,
                                    **{"nic.retransmit": "false"})[0]["nic_frames"])
        for name in JOBS])
    usp.finish(axes[1], None, "frames through the NIC (in + out)",
               "group24: job launch at 300000 (3G0, 3G1 before)", fontsize=None)
    save(fig, out_dir, "runtime_management.png")


def figure_value(text):
    """A figure read back from results.csv: bool, int, float, None (empty) or the text."""
    if text in ("true", "false"):
        return text == "true"
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_results(path):
    """The rows of results.csv as sweep() returns them: --set columns and labels as text, the
    figures as values, nic_frames as a list."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in FIGURES:
            if k in r:
                r[k] = figure_value(r[k])
        r["nic_frames"] = [r[f"nic_frames_{i}"] for i in range(4)
                           if r.get(f"nic_frames_{i}") is not None]
    return rows


def plot_all(rows, out_dir):
    plot_policies(rows, out_dir)
    plot_load_spread(rows, out_dir)
    plot_cpu(rows, out_dir)
    plot_management(rows, out_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ukai", default="build/src/cli/ukai")
    ap.add_argument("--plot-only", action="store_true",
                    help="draw the PNGs from --results without running anything")
    ap.add_argument("--results", default=os.path.join(HERE, "results.csv"),
                    help="results.csv to write (or, with --plot-only, to read)")
    ap.add_argument("--out", default=HERE, help="directory of the PNGs")
    args = ap.parse_args()
    if args.plot_only:
        plot_all(read_results(args.results), args.out)
        return
    rows = sweep(args.ukai)
    keys = sorted({k for r in rows for k in r if "." in k})  # the --set keys
    fields = ["experiment", "config", "sets"] + keys + ["nics", "launch"] + FIGURES
    with open(args.results, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (str(v).lower() if isinstance(v, bool) else v) for k, v in r.items()})
    plot_all(rows, args.out)


if __name__ == "__main__":
    main()
