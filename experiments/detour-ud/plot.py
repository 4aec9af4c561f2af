#!/usr/bin/env python3
"""Plots Figs. 7-12 of the Detour-UD paper from the CSV files run.sh writes.

Usage: plot.py RESULTS_DIR   (reads RESULTS_DIR/fig*.csv, writes RESULTS_DIR/fig*.png)

Each CSV is the `ukai sim run --format csv` output of the config of the same name
(experiments/detour-ud/fig*.toml); columns are read by name (docs/cli.md):
- bandwidth: bandwidth_mbytes_per_second (network-wide delivered payload, MB/s at the
  algorithm's Table 1 clock);
- latency: avg_latency_cycles / clock_mhz (microseconds), against the offered bandwidth
  offered_flits_per_node_cycle x flit_bytes x nodes x clock_mhz (MB/s); points the
  simulator marks saturated carry a black X;
- recovery: recovery_ratio (share of measured messages that entered deadlock recovery);
- ablation: Detour-UD's bandwidth with the 5-cycle table read (the figure's config), without
  it (ablation_*_lookup0) and without it and the read-port limit (ablation_*_lookup0_ports0),
  beside Detour-NF, in MB/s and in MB/s per MHz (bytes per cycle: the clock taken out).
A missing file or algorithm is skipped. The drawing is `ukai sim plot`'s
(src/cli/plot/ukai_sim_plot.py: line_plot, finish, save), imported from the repository.
"""
import csv
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src",
                                "cli", "plot"))
import ukai_sim_plot as usp  # noqa: E402

plt = usp.pyplot()

LABELS = {"dor": "DM-Order", "duato": "Duato", "detour-nf": "Detour-NF",
          "detour-ud": "Detour-UD"}
COLORS = {"dor": "tab:blue", "duato": "tab:green", "detour-nf": "tab:orange",
          "detour-ud": "tab:red"}
FAULT_STYLES = {0: "-", 2: "--", 4: ":"}
TIMEOUT_COLORS = {64: "tab:purple", 128: "tab:red", 256: "tab:gray"}


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def by_routing(rows):
    out = {}
    for r in rows:
        out.setdefault(r["routing"], []).append(r)
    return out


def nodes(row):
    n = 1
    for k in row["k"].split("x"):
        n *= int(k)
    return n


def offered_mbps(row):
    return (float(row["offered_flits_per_node_cycle"]) * int(row["flit_bytes"]) * nodes(row) *
            float(row["clock_mhz"]))


def latency_us(row):
    return float(row["avg_latency_cycles"]) / float(row["clock_mhz"])


def files(results, fig, kind):
    """{faults: rows} of results/figNN_<pattern>_<kind>_f<F>.csv."""
    out = {}
    for path in sorted(glob.glob(os.path.join(results, f"fig{fig:02d}_*_{kind}_f*.csv"))):
        m = re.search(r"_f(\d+)\.csv$", path)
        if m:
            out[int(m.group(1))] = read(path)
    return out


def save(fig, path):
    usp.save(fig, path, dpi=120)
    print("wrote", path)


def series(label, rows, x, y, color, faults, saturated=None):
    return usp.Series(label, [x(r) for r in rows], [y(r) for r in rows],
                      None if saturated is None else [saturated(r) for r in rows], color=color,
                      linestyle=FAULT_STYLES.get(faults, "-"))


def message_bytes(r):
    return int(r["message_bytes"])


def bandwidth_figure(results, fig_no, pattern):
    data = files(results, fig_no, "bandwidth")
    if not data:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for panel, ax in enumerate(axes):
        lines = []
        for faults, rows in sorted(data.items()):
            if (panel == 0) != (faults == 0):
                continue
            for routing, pts in by_routing(rows).items():
                lines.append(series(f"{LABELS.get(routing, routing)}, {faults} faulty", pts,
                                    message_bytes,
                                    lambda r: float(r["bandwidth_mbytes_per_second"]),
                                    COLORS.get(routing), faults))
        usp.line_plot(ax, lines)
        usp.finish(ax, "message size (bytes)",
                   "bandwidth (MB/s, network-wide)" if panel == 0 else None,
                   f"Fig. {fig_no}({'ab'[panel]}) {pattern}, "
                   f"{'fault-free' if panel == 0 else 'with faults'}")
    save(fig, os.path.join(results, f"fig{fig_no:02d}_{pattern}_bandwidth.png"))


def latency_figure(results, fig_no, pattern):
    data = files(results, fig_no, "latency")
    if not data:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lines = []
    for faults, rows in sorted(data.items()):
        for routing, pts in by_routing(rows).items():
            lines.append(series(f"{LABELS.get(routing, routing)}, {faults} faulty", pts,
                                offered_mbps, latency_us, COLORS.get(routing), faults,
                                lambda r: r["saturated"] == "true"))
    usp.line_plot(ax, lines)
    usp.finish(ax, "offered bandwidth (MB/s, network-wide)", "average latency (us)",
               f"Fig. {fig_no} {pattern}, 64-byte messages")
    save(fig, os.path.join(results, f"fig{fig_no:02d}_{pattern}_latency.png"))


def recovery_figure(results, fig_no, pattern):
    runs = []  # (faults, timeout, path), in numeric order
    for path in glob.glob(os.path.join(results, f"fig{fig_no:02d}_*_recovery_f*_t*.csv")):
        m = re.search(r"_f(\d+)_t(\d+)\.csv$", path)
        if m:
            runs.append((int(m.group(1)), int(m.group(2)), path))
    if not runs:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    lines = []
    for faults, timeout, path in sorted(runs):
        rows = [r for r in read(path) if r["routing"] == "detour-ud"]
        lines.append(series(f"timeout {timeout}, {faults} faulty", rows, message_bytes,
                            lambda r: 100.0 * float(r["recovery_ratio"]),
                            TIMEOUT_COLORS.get(timeout), faults))
    usp.line_plot(ax, lines)
    usp.finish(ax, "message size (bytes)", "deadlock-recovery messages (%)",
               f"Fig. {fig_no} Detour-UD, {pattern}")
    save(fig, os.path.join(results, f"fig{fig_no:02d}_{pattern}_recovery.png"))


ABLATION_STYLES = [  # (file suffix or None for the figure's own file, label, colour, style)
    (None, "Detour-UD (5-cycle table read, 2 read ports)", "tab:red", "-"),
    ("lookup0", "Detour-UD, table_lookup_cycles = 0", "tab:purple", "--"),
    ("lookup0_ports0", "Detour-UD, lookup 0 and no read-port limit", "tab:brown", ":"),
]


def ablation_figure(results):
    panels = []
    for path in sorted(glob.glob(os.path.join(results, "ablation_*_lookup0.csv"))):
        m = re.search(r"ablation_(\w+?)_bandwidth_f(\d+)_lookup0\.csv$", path)
        if m:
            panels.append((m.group(1), int(m.group(2))))
    if not panels:
        return
    panels.sort(key=lambda p: (p[0] != "transpose", p[1]))
    fig, axes = plt.subplots(2, len(panels), figsize=(5 * len(panels), 7.5), squeeze=False)
    for col, (pattern, faults) in enumerate(panels):
        fig_no = 7 if pattern == "transpose" else 9
        base = os.path.join(results, f"fig{fig_no:02d}_{pattern}_bandwidth_f{faults}.csv")
        if not os.path.exists(base):
            continue
        runs = [(LABELS["detour-nf"], COLORS["detour-nf"], "-",
                 [r for r in read(base) if r["routing"] == "detour-nf"])]
        for suffix, name, color, style in ABLATION_STYLES:
            path = base if suffix is None else os.path.join(
                results, f"ablation_{pattern}_bandwidth_f{faults}_{suffix}.csv")
            if os.path.exists(path):
                runs.append((name, color, style,
                             [r for r in read(path) if r["routing"] == "detour-ud"]))
        for row, per_mhz in enumerate((False, True)):
            ax = axes[row][col]
            usp.line_plot(ax, [usp.Series(
                name, [message_bytes(r) for r in rows],
                [float(r["bandwidth_mbytes_per_second"]) /
                 (float(r["clock_mhz"]) if per_mhz else 1.0) for r in rows],
                color=color, linestyle=style) for name, color, style, rows in runs])
            usp.finish(ax, "message size (bytes)",
                       "MB/s per MHz (bytes per cycle)" if per_mhz else "bandwidth (MB/s)",
                       f"{pattern}, {faults} faulty" + (", per MHz" if per_mhz else ""))
    save(fig, os.path.join(results, "ablation_bandwidth.png"))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py RESULTS_DIR")
    results = sys.argv[1]
    bandwidth_figure(results, 7, "transpose")
    latency_figure(results, 8, "transpose")
    bandwidth_figure(results, 9, "uniform")
    latency_figure(results, 10, "uniform")
    recovery_figure(results, 11, "transpose")
    recovery_figure(results, 12, "uniform")
    ablation_figure(results)


if __name__ == "__main__":
    main()
