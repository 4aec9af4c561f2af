#!/usr/bin/env python3
"""Regenerates experiments/gateway/: results.csv and the PNG plots REPORT.md shows.

Usage (from the repository root): `make reproduce-gateway`, or after `make build`
    $(tools/find_python.sh) experiments/gateway/run.py [--ukai build/src/cli/ukai]
Every run is `ukai sim run CONFIG --set ... --format json`. results.csv has one row per run:
the experiment, the config, every --set as a column of its own (named by its key, the value
without quotes; `sets` repeats them as given) and the figures of the run (docs/gateway.md).
Deterministic: the same seed gives the same figures (wall_seconds aside, which is left out).
"""
import argparse
import csv
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import matplotlib
except ImportError:  # the interpreter tools/find_python.sh names has it
    sys.exit(f"{sys.executable} cannot import matplotlib: run `make reproduce-gateway` or "
             f"`$(tools/find_python.sh) {os.path.relpath(__file__)}` (Debian: "
             f"python3-matplotlib, installed by `make deps`)")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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


def bar_labels(ax, bars):
    """Each bar's value above it, so that 0-4 lost frames stay readable beside hundreds."""
    for b in bars:
        ax.annotate(f"{int(b.get_height())}", (b.get_x() + b.get_width() / 2, b.get_height()),
                    ha="center", va="bottom", fontsize=8)


def save(fig, name):
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, name), dpi=90)
    plt.close(fig)
    print("wrote", name)


def plot_policies(rows):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, config in zip(axes, CONFIGS):
        x = range(len(POLICIES))
        for shift, rt, name in [(-0.2, "false", "lost"), (0.2, "true", "lost with retransmission")]:
            sel = [pick(rows, "runtime_fault", config=config, **{"nic.detours": p,
                                                                 "nic.retransmit": rt})[0]
                   for p in POLICIES]
            bar_labels(ax, ax.bar([i + shift for i in x], [r["frames_lost"] for r in sel], 0.4,
                                  label=name))
        ax.set_xticks(list(x), POLICIES)
        ax.set_title(config.replace(".toml", "") + ": node fails at cycle 200000")
        ax.set_ylabel("frames lost (of 3000)")
        ax.legend()
    save(fig, "policies_lost.png")

    # Policies are categories: markers per config, no lines between them; a log scale
    # (every latency is > 0).
    fig, ax = plt.subplots(figsize=(7, 4))
    for j, config in enumerate(CONFIGS):
        sel = [pick(rows, "runtime_fault", config=config, **{"nic.detours": p,
                                                             "nic.retransmit": "false"})[0]
               for p in POLICIES]
        xs = [i + (j - 1) * 0.2 for i in range(len(POLICIES))]
        ys = [r["avg_frame_latency_cycles"] for r in sel]
        ax.plot(xs, ys, "o", label=config.replace(".toml", ""))
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 5),
                        ha="center", fontsize=7)
    ax.set_xticks(range(len(POLICIES)), POLICIES)
    ax.set_ylabel("mean frame latency (cycles, log scale)")
    ax.set_yscale("log")
    ax.set_title("delivered frames' latency by detour policy")
    ax.legend()
    save(fig, "policies_latency.png")


def latency_line(ax, xs, rows, **style):
    """Mean frame latency against xs; saturated points hollow."""
    ys = [r["avg_frame_latency_cycles"] for r in rows]
    line, = ax.plot(xs, ys, "-", **style)
    color = line.get_color()
    for x, y, r in zip(xs, ys, rows):
        ax.plot([x], [y], "o", color=color, mfc="none" if r["saturated"] else color)


def plot_load_spread(rows):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for n in SPREADS:
        sel = sorted(pick(rows, "load_spread", nics=n), key=lambda r: float(r["nic.ingress_rate"]))
        rates = [float(r["nic.ingress_rate"]) for r in sel]
        latency_line(axes[0], rates, sel, label=f"{n} I/O node(s)")
        axes[1].plot(rates, [max(r["nic_frames"]) for r in sel], "o-", label=f"{n} I/O node(s)")
    axes[0].set_xlabel("ingress frames per cycle")
    axes[0].set_ylabel("mean frame latency (cycles, log scale)")
    axes[0].set_title("hollow: saturated (docs/gateway.md)")
    axes[0].set_yscale("log")
    axes[1].set_xlabel("ingress frames per cycle")
    axes[1].set_ylabel("frames through the busiest NIC (in + out)")
    for ax in axes:
        ax.legend()
    save(fig, "load_spread.png")


def plot_cpu(rows):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for directions, name in [("both", "both directions (Fig. 1)"), ("ingress", "inbound only")]:
        sel = sorted(pick(rows, "cpu_baseline", **{"nic.cpu_directions": directions}),
                     key=lambda r: int(r["nic.cpu_cycles_per_frame"]))
        costs = [int(r["nic.cpu_cycles_per_frame"]) for r in sel]
        axes[0].plot(costs, [r["max_io_cpu_load"] for r in sel], "o-", label=name)
        latency_line(axes[1], costs, sel, label=name)
    axes[0].set_ylabel("busiest I/O CPU: busy share of the run")
    axes[1].set_ylabel("mean frame latency (cycles, log scale)")
    axes[1].set_title("hollow: saturated (docs/gateway.md)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("CPU cycles per frame at the I/O node (0: the patent's NIC on the router)")
        ax.legend()
    save(fig, "cpu_baseline.png")


def plot_management(rows):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    sel = [pick(rows, "fault_repair", **{"nic.detours": p})[0] for p in POLICIES]
    x = range(len(POLICIES))
    bar_labels(axes[0], axes[0].bar([i - 0.2 for i in x], [r["frames_lost"] for r in sel], 0.4,
                                    label="ingress frames lost"))
    bar_labels(axes[0], axes[0].bar([i + 0.2 for i in x], [r["egress_lost"] for r in sel], 0.4,
                                    label="egress frames lost"))
    axes[0].set_xticks(list(x), POLICIES)
    axes[0].set_ylabel("frames lost")
    axes[0].set_title("group24: 4G1 fails at 200000, repaired at 400000")
    axes[0].legend()
    width = 0.4
    for j, name in enumerate(JOBS):
        r = pick(rows, "job_launch", launch=name, **{"nic.retransmit": "false"})[0]
        bar_labels(axes[1], axes[1].bar([i + (j - 0.5) * width for i in range(4)],
                                        r["nic_frames"], width, label=name))
    axes[1].set_xticks(range(4), ["3G0", "3G1", "3G2", "3G3"])
    axes[1].set_ylabel("frames through the NIC (in + out)")
    axes[1].set_title("group24: job launch at 300000 (3G0, 3G1 before)")
    axes[1].legend()
    save(fig, "runtime_management.png")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ukai", default="build/src/cli/ukai")
    args = ap.parse_args()
    rows = sweep(args.ukai)
    keys = sorted({k for r in rows for k in r if "." in k})  # the --set keys
    fields = ["experiment", "config", "sets"] + keys + ["nics", "launch"] + FIGURES
    with open(os.path.join(HERE, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (str(v).lower() if isinstance(v, bool) else v) for k, v in r.items()})
    plot_policies(rows)
    plot_load_spread(rows)
    plot_cpu(rows)
    plot_management(rows)


if __name__ == "__main__":
    main()
