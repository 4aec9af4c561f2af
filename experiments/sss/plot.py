#!/usr/bin/env python3
"""Plots and tabulates the SSS-CORE network experiments (experiments/sss/run.sh).

Usage: plot.py OUT_DIR   (the directory of the CSVs run.sh wrote)
Writes into OUT_DIR: upper_bandwidth.png, completion.png, cut_through.png,
link_efficiency.png and tables.md (the tables REPORT.md quotes).
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = ["naive", "hierarchical", "chained"]
STYLE = {"naive": "s-", "hierarchical": "o-", "chained": "^-"}
COLOUR = {"naive": "C0", "hierarchical": "C1", "chained": "C2"}
CLOCK_MHZ = 53.125  # 1.0625 Gb/s x 8/10, 16 bits per cycle (the runs report it too)


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(row, key):
    v = row.get(key, "")
    return float(v) if v not in ("", None) else float("nan")


def upper_bandwidth(out, tables):
    rows = read(os.path.join(out, "upper_bandwidth.csv"))
    sizes = sorted({int(r["multicast_group_size"]) for r in rows})
    data = {}
    for r in rows:
        key = (r["multicast"], r["acks"] == "true", int(r["multicast_group_size"]))
        ops = num(r, "operations")
        data[key] = (num(r, "upper_link_bytes_per_operation"), num(r, "upper_link_packets") / ops)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    for row, (index, label) in enumerate([(0, "bytes on upper links per multicast"),
                                          (1, "packets over upper links per multicast")]):
        for col, acks in enumerate([False, True]):
            ax = axes[row][col]
            for mode in MODES:
                ax.plot(sizes, [data[(mode, acks, g)][index] for g in sizes], STYLE[mode],
                        color=COLOUR[mode], label=mode)
            ax.set_xscale("log", base=2)
            ax.grid(True, alpha=0.3)
            if row == 0:
                ax.set_title("with acks" if acks else "without acks")
            if row == 1:
                ax.set_xlabel("group size (members)")
            if col == 0:
                ax.set_ylabel(label)
    axes[0][0].legend()
    fig.suptitle("64-byte multicasts on a 4x4x4 tree (64 end nodes): links above the lowest "
                 "switch level")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "upper_bandwidth.png"), dpi=120)
    plt.close(fig)
    lines = ["## Upper-link traffic per multicast (upper_bandwidth.csv)", "",
             "Bytes / packets crossing links between switches per 64-byte multicast, mean of "
             "300 multicasts from random sources to random groups.", "",
             "| group | naive | hierarchical | chained | naive+acks | hier.+acks | chained+acks "
             "| chained / hier. (packets) | chained+acks / hier.+acks (packets) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for g in sizes:
        cells = []
        for acks in [False, True]:
            for mode in MODES:
                b, p = data[(mode, acks, g)]
                cells.append(f"{b:.0f} B / {p:.2f}")
        ratio = data[("chained", False, g)][1] / data[("hierarchical", False, g)][1]
        ratio_acks = data[("chained", True, g)][1] / data[("hierarchical", True, g)][1]
        lines.append(f"| {g} | " + " | ".join(cells) + f" | {ratio:.2f} | {ratio_acks:.2f} |")
    tables.append("\n".join(lines))


def completion(out, tables):
    rows = read(os.path.join(out, "completion.csv"))
    sizes = sorted({int(r["multicast_group_size"]) for r in rows})
    payloads = sorted({int(r["message_bytes"]) for r in rows})
    data = {}
    for r in rows:
        key = (int(r["message_bytes"]), r["multicast"], r["acks"] == "true",
               int(r["multicast_group_size"]))
        data[key] = num(r, "multicast_completion_cycles")
    fig, axes = plt.subplots(1, len(payloads), figsize=(11, 4.2))
    for ax, payload in zip(axes, payloads):
        for mode in MODES:
            for acks in [False, True]:
                ys = [data[(payload, mode, acks, g)] / CLOCK_MHZ for g in sizes]
                ax.plot(sizes, ys, STYLE[mode] if not acks else STYLE[mode][0] + "--",
                        color=COLOUR[mode], label=mode + (" + acks" if acks else ""))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("group size (members)")
        ax.set_ylabel("completion (us)")
        ax.set_title(f"{payload}-byte multicast from n0")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "completion.png"), dpi=120)
    plt.close(fig)
    lines = ["## Multicast completion time (completion.csv)", "",
             f"Mean of 60 multicasts from n0, one at a time, in microseconds at {CLOCK_MHZ} MHz "
             "(cycles / 53.125).", ""]
    for payload in payloads:
        lines += [f"{payload} bytes:", "",
                  "| group | naive | hierarchical | chained | naive+acks | hier.+acks "
                  "| chained+acks |", "|---|---|---|---|---|---|---|"]
        for g in sizes:
            cells = [f"{data[(payload, m, a, g)] / CLOCK_MHZ:.2f}" for a in [False, True]
                     for m in MODES]
            lines.append(f"| {g} | " + " | ".join(cells) + " |")
        lines.append("")
    tables.append("\n".join(lines))


def cut_through(out, tables):
    rows = read(os.path.join(out, "cut_through.csv"))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    lines = ["## Cut-through against store-and-forward (cut_through.csv)", "",
             "Remote writes of 256 bytes (288 to 296 bytes, 144 to 148 flits, on the wire through "
             "1 to 5 switches) between random end nodes; latency from the start of the write to "
             "its data in memory, cycles (mean of 4000 after 1000).", "",
             "| offered | vct-saf | saf | vct | saf / vct-saf | vct-saf stored per write | "
             "saturated (vct-saf / saf / vct) |", "|---|---|---|---|---|---|---|"]
    by = {}
    for r in rows:
        by.setdefault(r["switching"], []).append(r)
    for sw, marker in [("vct-saf", "o-"), ("saf", "s-"), ("vct", "^:")]:
        pts = sorted(by.get(sw, []), key=lambda r: num(r, "offered_flits_per_node_cycle"))
        xs = [num(r, "offered_flits_per_node_cycle") for r in pts]
        ys = [num(r, "avg_latency_cycles") for r in pts]
        ax.plot(xs, ys, marker, label=sw)
        sat = [(x, y) for x, y, r in zip(xs, ys, pts) if r["saturated"] == "true"]
        if sat:
            ax.plot([p[0] for p in sat], [p[1] for p in sat], "kx")
    rates = sorted({num(r, "offered_flits_per_node_cycle") for r in rows})
    for rate in rates:
        cell = {}
        for sw in ["vct-saf", "saf", "vct"]:
            for r in by.get(sw, []):
                if num(r, "offered_flits_per_node_cycle") == rate:
                    cell[sw] = r
        a, b, c = cell["vct-saf"], cell["saf"], cell["vct"]
        stored = num(a, "packets_stored") / max(1.0, num(a, "operations"))
        lines.append(
            f"| {rate:.3f} | {num(a, 'avg_latency_cycles'):.0f} | {num(b, 'avg_latency_cycles'):.0f}"
            f" | {num(c, 'avg_latency_cycles'):.0f} | "
            f"{num(b, 'avg_latency_cycles') / num(a, 'avg_latency_cycles'):.2f} | {stored:.3f} | "
            f"{a['saturated']} / {b['saturated']} / {c['saturated']} |")
    ax.set_yscale("log")
    ax.set_xlabel("offered load (wire flits / end node / cycle)")
    ax.set_ylabel("write latency (cycles)")
    ax.set_title("256-byte writes, 4x4x4 tree; x: saturated")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "cut_through.png"), dpi=120)
    plt.close(fig)
    lines.append("")
    lines.append("(\"stored per write\": store-and-forward fallbacks per measured write over the "
                 "whole run's writes, packets_stored / operations.)")
    tables.append("\n".join(lines))


def link_efficiency(out, tables):
    formula = [json.loads(line) for line in open(os.path.join(out, "link_formula.jsonl"))]
    rows = []
    for k in range(1, 5):
        r = read(os.path.join(out, f"link_efficiency_s{k}.csv"))[0]
        f = formula[k - 1]
        packets = num(r, "payload_bytes") / 4
        rows.append((k, num(r, "wire_bytes") / packets, num(r, "link_efficiency"),
                     num(r, "packets_per_second"), f["wire_bytes"], f["efficiency"],
                     f["packets_per_second"], 850e6 / f["wire_bytes"]))
    fig, ax1 = plt.subplots(figsize=(6.5, 4.2))
    ks = [r[0] for r in rows]
    ax1.plot(ks, [r[3] / 1e6 for r in rows], "o-", label="simulated packets/s")
    ax1.plot(ks, [r[6] / 1e6 for r in rows], "k+", markersize=12, label="850e6 / (wire bytes x 8)")
    ax1.set_xlabel("switches on the route")
    ax1.set_ylabel("4-byte writes per second (millions)")
    ax1.set_xticks(ks)
    ax1.grid(True, alpha=0.3)
    ax2 = ax1.twinx()
    ax2.plot(ks, [r[2] for r in rows], "s--", color="tab:red", label="link efficiency")
    ax2.set_ylabel("payload / wire bytes", color="tab:red")
    ax1.legend(loc="lower left")
    ax1.set_title("The paper's 4-byte remote write (the paper prints 1/9 and 24 M/s at 1)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "link_efficiency.png"), dpi=120)
    plt.close(fig)
    lines = ["## The 4-byte remote write (link_efficiency_s*.csv, link_formula.jsonl)", "",
             "| switches | wire bytes / packet (sim) | efficiency (sim) | packets/s (sim) | wire "
             "bytes (`ukai link`) | efficiency (`ukai link`) | packets/s (`ukai link`) | "
             "850e6 / wire bytes (bits taken for bytes) |", "|---|---|---|---|---|---|---|---|"]
    for k, wire, eff, pps, fw, feff, fpps, wrong in rows:
        lines.append(f"| {k} | {wire:.1f} | {eff:.4f} | {pps / 1e6:.4f} M | {fw} | {feff:.4f} | "
                     f"{fpps / 1e6:.4f} M | {wrong / 1e6:.2f} M |")
    tables.append("\n".join(lines))


def nic_rates(out, tables):
    lines = ["## The NIC's rates (nic_rates_*.csv)", "",
             "4 KiB writes streamed from n0 (and n1); payload into each receiver's memory per "
             "second.", "",
             "| case | MB/s per receiver | packets/s per sender | link efficiency | bus bytes |",
             "|---|---|---|---|---|"]
    for case, receivers_per_op in [("oneway", 1), ("twoway", 1), ("hierarchical", 8),
                                   ("chained", 8)]:
        path = os.path.join(out, f"nic_rates_{case}.csv")
        if not os.path.exists(path):
            continue
        r = read(path)[0]
        pps = num(r, "packets_per_second")
        mbps = pps / receivers_per_op * 4096 / 1e6
        lines.append(f"| {case} | {mbps:.1f} | {pps:.0f} | {num(r, 'link_efficiency'):.4f} | "
                     f"{num(r, 'dma_bytes'):.0f} |")
    tables.append("\n".join(lines))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    tables = []
    for part in [upper_bandwidth, completion, cut_through, link_efficiency, nic_rates]:
        part(out, tables)
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write("# Tables of experiments/sss (written by plot.py from the CSVs)\n\n")
        f.write("\n\n".join(tables) + "\n")
    print(f"plot.py: PNGs and tables.md in {out}")


if __name__ == "__main__":
    main()
