#!/usr/bin/env python3
"""Plots and tabulates the SSS-CORE network experiments (experiments/sss/run.sh).

Usage: plot.py OUT_DIR   (the directory of the CSVs run.sh wrote)
Writes into OUT_DIR: upper_bandwidth.png, completion.png, cut_through.png,
link_efficiency.png, flow_control.png and tables.md (the tables REPORT.md quotes). The drawing
is `ukai sim plot`'s (src/cli/plot/ukai_sim_plot.py: line_plot, reference_line, finish, save), imported
from the repository.
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src",
                                "cli", "plot"))
import ukai_sim_plot as usp  # noqa: E402

plt = usp.pyplot()

MODES = ["naive", "hierarchical", "chained"]
MARKER = {"naive": "s", "hierarchical": "o", "chained": "^"}
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
            usp.line_plot(ax, [usp.Series(mode, sizes, [data[(mode, acks, g)][index]
                                                        for g in sizes],
                                          color=COLOUR[mode], marker=MARKER[mode])
                               for mode in MODES], xlog=True, xbase=2)
            usp.finish(ax, "group size (members)" if row == 1 else None,
                       label if col == 0 else None,
                       ("with acks" if acks else "without acks") if row == 0 else None,
                       legend=row == 0 and col == 0, fontsize=None)
    fig.suptitle("64-byte multicasts on a 4x4x4 tree (64 end nodes): links above the lowest "
                 "switch level")
    usp.save(fig, os.path.join(out, "upper_bandwidth.png"), dpi=120)
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
    for i, (ax, payload) in enumerate(zip(axes, payloads)):
        usp.line_plot(ax, [usp.Series(mode + (" + acks" if acks else ""), sizes,
                                      [data[(payload, mode, acks, g)] / CLOCK_MHZ for g in sizes],
                                      color=COLOUR[mode], marker=MARKER[mode],
                                      linestyle="--" if acks else "-")
                           for mode in MODES for acks in [False, True]],
                      xlog=True, ylog=True, xbase=2)
        usp.finish(ax, "group size (members)", "completion (us)",
                   f"{payload}-byte multicast from n0", legend=i == 0)
    usp.save(fig, os.path.join(out, "completion.png"), dpi=120)
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
    series = []
    for sw, marker, style in [("vct-saf", "o", "-"), ("saf", "s", "-"), ("vct", "^", ":")]:
        pts = by.get(sw, [])
        series.append(usp.Series(sw, [num(r, "offered_flits_per_node_cycle") for r in pts],
                                 [num(r, "avg_latency_cycles") for r in pts],
                                 [r["saturated"] == "true" for r in pts], marker=marker,
                                 linestyle=style))
    usp.line_plot(ax, series, ylog=True)
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
    usp.finish(ax, "offered load (wire flits / end node / cycle)", "write latency (cycles)",
               "256-byte writes, 4x4x4 tree", fontsize=None)
    usp.save(fig, os.path.join(out, "cut_through.png"), dpi=120)
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
    usp.line_plot(ax1, [usp.Series("simulated packets/s", ks, [r[3] / 1e6 for r in rows])])
    usp.reference_line(ax1, ks, [r[6] / 1e6 for r in rows], "850e6 / (wire bytes x 8)", "k+",
                       markersize=12)
    ax1.set_xticks(ks)
    usp.finish(ax1, "switches on the route", "4-byte writes per second (millions)",
               "The paper's 4-byte remote write (the paper prints 1/9 and 24 M/s at 1)",
               legend=False)
    ax1.legend(loc="lower left")
    ax2 = ax1.twinx()
    usp.line_plot(ax2, [usp.Series("link efficiency", ks, [r[2] for r in rows], color="tab:red",
                                   marker="s", linestyle="--")])
    ax2.set_ylabel("payload / wire bytes", color="tab:red")
    usp.save(fig, os.path.join(out, "link_efficiency.png"), dpi=120)
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


def flow_control(out, tables):
    """Claim 30: room announced in advance against in-band flow control."""
    if not os.path.exists(os.path.join(out, "flow_advance_load.csv")):
        return
    lines = ["## Advance announcement against in-band flow control (flow_*.csv)", "",
             "4 KiB writes streamed through one switch; payload into each receiver's memory, "
             "MB/s.", "",
             "| case | advance | in-band | in-band / advance |", "|---|---|---|---|"]
    cases = [("oneway", "one way, the paper's NIC"), ("twoway", "both ways, the paper's NIC"),
             ("oneway_fast", "one way, unlimited bus and buffers"),
             ("twoway_fast", "both ways, unlimited bus and buffers")]
    bars = {}
    for case, label in cases:
        mb = {}
        for fc in ["advance", "in-band"]:
            r = read(os.path.join(out, f"flow_{fc}_{case}.csv"))[0]
            mb[fc] = num(r, "packets_per_second") * 4096 / 1e6
        bars[case] = mb
        lines.append(f"| {label} | {mb['advance']:.1f} | {mb['in-band']:.1f} | "
                     f"{mb['in-band'] / mb['advance']:.2f} |")
    lines += ["", "256-byte writes between random end nodes of the 4x4x4 tree (vct-saf): "
              "accepted load (flits / end node / cycle) and write latency (cycles).", "",
              "| offered | accepted, advance | accepted, in-band | latency, advance | "
              "latency, in-band | saturated (advance / in-band) |", "|---|---|---|---|---|---|"]
    load = {fc: read(os.path.join(out, f"flow_{fc}_load.csv")) for fc in ["advance", "in-band"]}
    for a, b in zip(load["advance"], load["in-band"]):
        lines.append(f"| {num(a, 'rate'):.3f} | {num(a, 'accepted_flits_per_node_cycle'):.4f} | "
                     f"{num(b, 'accepted_flits_per_node_cycle'):.4f} | "
                     f"{num(a, 'avg_latency_cycles'):.0f} | {num(b, 'avg_latency_cycles'):.0f} | "
                     f"{a['saturated']} / {b['saturated']} |")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = list(range(len(cases)))
    ax1.bar([x - 0.2 for x in xs], [bars[c]["advance"] for c, _ in cases], 0.4, label="advance")
    ax1.bar([x + 0.2 for x in xs], [bars[c]["in-band"] for c, _ in cases], 0.4, label="in-band")
    ax1.set_xticks(xs)
    ax1.set_xticklabels(["one way", "both ways", "one way\n(fast NIC)", "both ways\n(fast NIC)"])
    ax1.set_ylabel("MB/s into each receiver")
    ax1.set_title("4 KiB write streams through one switch")
    ax1.legend()
    series = []
    for fc, marker in [("advance", "o"), ("in-band", "s")]:
        pts = load[fc]
        series.append(usp.Series(fc, [num(r, "offered_flits_per_node_cycle") for r in pts],
                                 [num(r, "accepted_flits_per_node_cycle") for r in pts],
                                 [r["saturated"] == "true" for r in pts], marker=marker))
    usp.line_plot(ax2, series)
    usp.finish(ax2, "offered load (wire flits / end node / cycle)",
               "accepted load (flits / end node / cycle)", "256-byte writes, 4x4x4 tree",
               fontsize=None)
    usp.save(fig, os.path.join(out, "flow_control.png"), dpi=120)
    tables.append("\n".join(lines))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    tables = []
    for part in [upper_bandwidth, completion, cut_through, link_efficiency, nic_rates,
                 flow_control]:
        part(out, tables)
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write("# Tables of experiments/sss (written by plot.py from the CSVs)\n\n")
        f.write("\n\n".join(tables) + "\n")
    print(f"plot.py: PNGs and tables.md in {out}")


if __name__ == "__main__":
    main()
