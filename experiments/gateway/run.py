#!/usr/bin/env python3
"""Regenerates experiments/gateway/: results.csv and the PNG plots REPORT.md shows.

Usage (from the repository root, after `make build`):
    python3 experiments/gateway/run.py [--ukai build/src/cli/ukai]
Every run is `ukai sim run CONFIG --set ... --format json`; the sets are printed in
results.csv beside the figures. Deterministic: the same seed gives the same figures
(wall_seconds aside).
"""
import argparse
import csv
import json
import os
import subprocess

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = ["none", "learned", "managed", "preloaded"]
FIELDS = ["experiment", "config", "sets", "nic_detours", "frames_in", "frames_delivered",
          "frames_lost", "frames_retransmitted", "frames_owner_faulty", "frames_fcs_discarded",
          "broadcasts", "egress_frames", "egress_lost", "table_updates_sent",
          "avg_frame_latency_cycles", "p99_frame_latency_cycles", "nic_frames",
          "max_io_cpu_load", "avg_latency_cycles", "cycles", "saturated",
          "egress_retransmitted", "egress_updates_sent", "table_rows_cleared", "job_launches",
          "nic_commands_sent", "frames_dropped_disabled", "egress_dropped_disabled",
          "management_messages_lost"]
REPAIR = ('faults.events=[{cycle = 200000, fail_node = "4G1"}, '
          '{cycle = 400000, repair_node = "4G1"}]')
JOBS = {"expand": '[{cycle = 300000, enabled = ["3G0", "3G1", "3G2", "3G3"]}]',
        "move": '[{cycle = 300000, enabled = ["3G2", "3G3"]}]'}


def run(ukai, config, sets):
    cmd = [ukai, "sim", "run", os.path.join(HERE, config), "--format", "json"]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])


def sweep(ukai):
    rows = []

    def add(experiment, config, sets):
        d = run(ukai, config, sets)
        d.update(experiment=experiment, config=config, sets=" ".join(sets))
        rows.append(d)
        print(experiment, config, " ".join(sets), d["frames_delivered"], d["frames_lost"])

    for config in ["group24.toml", "mesh4.toml", "mesh8.toml"]:
        for retransmit in ["false", "true"]:
            for p in POLICIES:
                add("runtime_fault", config, [f"nic.detours=\"{p}\"",
                                              f"nic.retransmit={retransmit}"])
    for p in POLICIES:  # the fault present at boot (faults.nodes)
        add("boot_fault", "group24.toml", [f"nic.detours=\"{p}\"", "faults.events=[]",
                                           "faults.nodes=[\"4G1\"]"])
    spreads = {1: '["3G0"]', 2: '["3G0", "3G1"]', 4: '["3G0", "3G1", "3G2", "3G3"]'}
    for n, enabled in spreads.items():
        for rate in [0.002, 0.005, 0.01]:
            add("load_spread", "group24.toml", [f"nic.enabled={enabled}",
                                                f"nic.ingress_rate={rate}", "faults.events=[]"])
    for cost in [0, 100, 200, 300]:
        add("cpu_baseline", "group24.toml", [f"nic.cpu_cycles_per_frame={cost}",
                                             "faults.events=[]"])
    for p in POLICIES:  # 4G1 fails during the run and is repaired later
        add("fault_repair", "group24.toml", [f"nic.detours=\"{p}\"", REPAIR])
    for name, jobs in JOBS.items():  # a job launch changes the enable register
        for retransmit in ["false", "true"]:
            add("job_launch", "group24.toml", [f"nic.jobs={jobs}", "faults.events=[]",
                                               f"nic.retransmit={retransmit}"])
    return rows


def plot(rows):
    def pick(experiment, **kw):
        return [r for r in rows if r["experiment"] == experiment and
                all(str(r.get(k)) == str(v) for k, v in kw.items())]

    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, config in zip(axes, ["group24.toml", "mesh4.toml", "mesh8.toml"]):
        sel = [r for r in pick("runtime_fault", config=config) if "retransmit=false" in r["sets"]]
        sel_rt = [r for r in pick("runtime_fault", config=config) if "retransmit=true" in r["sets"]]
        x = range(len(POLICIES))
        ax.bar([i - 0.2 for i in x], [r["frames_lost"] for r in sel], 0.4, label="lost")
        ax.bar([i + 0.2 for i in x], [r["frames_lost"] for r in sel_rt], 0.4,
               label="lost with retransmission")
        ax.set_xticks(list(x), POLICIES)
        ax.set_title(config.replace(".toml", "") + ": node fails at cycle 200000")
        ax.set_ylabel("frames lost (of 3000)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "policies_lost.png"), dpi=90)

    fig, ax = plt.subplots(figsize=(7, 4))
    for config in ["group24.toml", "mesh4.toml", "mesh8.toml"]:
        sel = [r for r in pick("runtime_fault", config=config) if "retransmit=false" in r["sets"]]
        ax.plot(POLICIES, [r["avg_frame_latency_cycles"] for r in sel], "o-",
                label=config.replace(".toml", ""))
    ax.set_ylabel("mean frame latency (cycles)")
    ax.set_yscale("log")
    ax.set_title("delivered frames' latency by detour policy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "policies_latency.png"), dpi=90)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for n in [1, 2, 4]:
        sel = [r for r in pick("load_spread") if r["sets"].count("3G") == n]
        rates = [float(r["sets"].split("nic.ingress_rate=")[1].split(" ")[0]) for r in sel]
        axes[0].plot(rates, [r["avg_frame_latency_cycles"] for r in sel], "o-",
                     label=f"{n} I/O node(s)")
        axes[1].plot(rates, [max(r["nic_frames"]) for r in sel], "o-", label=f"{n} I/O node(s)")
    axes[0].set_xlabel("ingress frames per cycle")
    axes[0].set_ylabel("mean frame latency (cycles)")
    axes[0].set_yscale("log")
    axes[1].set_xlabel("ingress frames per cycle")
    axes[1].set_ylabel("frames through the busiest NIC")
    for ax in axes:
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "load_spread.png"), dpi=90)

    fig, ax = plt.subplots(figsize=(7, 4))
    sel = pick("cpu_baseline")
    costs = [int(r["sets"].split("nic.cpu_cycles_per_frame=")[1].split(" ")[0]) for r in sel]
    ax.plot(costs, [r["max_io_cpu_load"] for r in sel], "o-", label="busiest I/O CPU load")
    ax.set_xlabel("CPU cycles per frame at the I/O node (0 = the patent's NIC on the router)")
    ax.set_ylabel("busy share of the run")
    ax2 = ax.twinx()
    ax2.plot(costs, [r["avg_frame_latency_cycles"] for r in sel], "s--", color="C1",
             label="mean frame latency")
    ax2.set_ylabel("mean frame latency (cycles)")
    ax.legend(loc="upper left")
    ax2.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "cpu_baseline.png"), dpi=90)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    sel = pick("fault_repair")
    x = range(len(POLICIES))
    axes[0].bar([i - 0.2 for i in x], [r["frames_lost"] for r in sel], 0.4,
                label="ingress frames lost")
    axes[0].bar([i + 0.2 for i in x], [r["egress_lost"] for r in sel], 0.4,
                label="egress frames lost")
    axes[0].set_xticks(list(x), POLICIES)
    axes[0].set_ylabel("frames lost")
    axes[0].set_title("group24: 4G1 fails at 200000, repaired at 400000")
    axes[0].legend()
    sel = [r for r in pick("job_launch") if "retransmit=false" in r["sets"]]
    width = 0.4
    for j, r in enumerate(sel):
        name = "expand" if "3G0" in r["sets"].split("nic.jobs=")[1] else "move"
        axes[1].bar([i + (j - 0.5) * width for i in range(4)], r["nic_frames"], width,
                    label=name)
    axes[1].set_xticks(range(4), ["3G0", "3G1", "3G2", "3G3"])
    axes[1].set_ylabel("frames through the NIC (in + out)")
    axes[1].set_title("group24: job launch at 300000 (3G0, 3G1 before)")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "runtime_management.png"), dpi=90)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ukai", default="build/src/cli/ukai")
    args = ap.parse_args()
    rows = sweep(args.ukai)
    with open(os.path.join(HERE, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    plot(rows)


if __name__ == "__main__":
    main()
