#!/usr/bin/python3
"""Draws figNN.png and writes summary.md from the CSVs of run.sh.

Usage: plot.py RESULTS_DIR OUT_DIR. Each CSV is one variant (results/figNN_<variant>.csv, one
row per data size). summary.md lists, per variant, the large-size ratio time_us/baseline_us at
the largest size and the crossover: for an "always" variant (relays at every size) the size
where its time falls below the plain full mesh (interpolated between the two sweep points
around it, log size), otherwise the smallest size at which the controller chose relays.
Sizes are also given in kbit (1 kbit = 1000 bits), the document's unit. The same figures, at
full precision, go to RESULTS_DIR/summary.csv (one row per variant: figure, variant, operation,
nodes, relay_mode, decision, relays_at_max, bytes_at_max, ratio_at_max, crossover_bytes,
crossover_kbit; "none" where the curve never crosses), which REPORT.md cites. The drawing
is `ukai sim plot`'s (src/cli/plot/ukai_sim_plot.py: line_plot, reference_line, finish, save),
imported from the repository.
"""
import csv
import glob
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src",
                                "cli", "plot"))
import ukai_sim_plot as usp  # noqa: E402

plt = usp.pyplot()


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def crossover(rows, always):
    if not always:
        for r in rows:
            if int(r["relays"]) > 0:
                return float(r["bytes"])
        return None
    prev = None
    for r in rows:
        d = float(r["time_us"]) - float(r["baseline_us"])
        if d < 0:
            if prev is None:
                return float(r["bytes"])
            (s0, d0) = prev
            s1 = float(r["bytes"])
            t = d0 / (d0 - d)
            return math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
        prev = (float(r["bytes"]), d)
    return None


def KSweep(results, out):
    """ksweep_<op>-<mode>-k<K>.csv: ratio against K -> ksweep.png and a summary table."""
    points = {}
    for path in sorted(glob.glob(os.path.join(results, "ksweep_*.csv"))):
        label = os.path.basename(path)[len("ksweep_"):-4]
        series, k = label.rsplit("-k", 1)
        row = load(path)[-1]
        ratio = float(row["time_us"]) / float(row["baseline_us"])
        points.setdefault(series, []).append((int(k), int(row["relays"]), ratio))
    if not points:
        return []
    f, ax = plt.subplots(figsize=(7, 4.5))
    lines = ["", "## Embodiment 6 against K (4 MiB, N = 8)", "",
             "| operation-mode | K=1 | K=2 | K=3 | K=4 | K=5 | K=6 | K=7 |",
             "|---|---|---|---|---|---|---|---|"]
    series = []
    for series_name, pts in sorted(points.items()):
        pts.sort()
        # Series that coincide (multicast and reduce) stay visible: line_plot gives each its
        # own marker and draws the earlier ones wider beneath the later ones.
        series.append(usp.Series(series_name, [p[0] for p in pts], [p[2] for p in pts]))
        by_k = {p[0]: p for p in pts}
        cells = [f"{by_k[k][2]:.4f} (K={by_k[k][1]})" if k in by_k else "–" for k in range(1, 8)]
        lines.append(f"| {series_name} | " + " | ".join(cells) + " |")
    usp.line_plot(ax, series)
    ks = list(range(1, 8))
    usp.reference_line(ax, ks, [1 / k for k in ks], "1/K", "k:")
    usp.reference_line(ax, ks, [2 / k for k in ks], "2/K", "k--")
    usp.finish(ax, "K (fullmesh.k_max)", "time / plain full mesh", "embodiment 6, 4 MiB, N = 8",
               fontsize=7)
    usp.save(f, os.path.join(out, "ksweep.png"))
    return lines


def E6Burst(results):
    """e6burst_<policy>.csv: the burst of eight p2p and the lone allreduce -> a summary table."""
    lines = []
    for path in sorted(glob.glob(os.path.join(results, "e6burst_*.csv"))):
        variant = os.path.basename(path)[len("e6burst_"):-4]
        rows = load(path)
        burst = [r for r in rows if r["operation"] == "p2p"]
        other = [r for r in rows if r["operation"] != "p2p"]
        waits = [float(r["wait_us"]) for r in burst]
        times = [float(r["time_us"]) for r in burst]
        finish = max(float(r["start_us"]) + float(r["time_us"]) - float(r["wait_us"])
                     for r in burst)
        lines.append(f"| {variant} | {sum(waits) / len(waits):.2f} | {max(waits):.2f} | "
                     f"{sum(times) / len(times):.2f} | {finish:.2f} | "
                     + " ".join(r["relays"] for r in burst) + " | "
                     + " ".join(f"{float(r['time_us']):.2f}" for r in other) + " |")
    if not lines:
        return []
    return ["", "## Embodiment 6: a burst of eight 1 MB p2p on N = 8, then a lone allreduce",
            "", "| variant | mean wait (us) | max wait (us) | mean time (us) | last finish (us) | "
            "K per p2p | allreduce time (us) |", "|---|---|---|---|---|---|---|"] + lines


def main():
    results, out = sys.argv[1], sys.argv[2]
    variants = {}
    for path in sorted(glob.glob(os.path.join(results, "fig*.csv"))):
        name = os.path.basename(path)[:-4]
        fig, label = name.split("_", 1)
        variants.setdefault(fig, []).append((label, load(path)))
    lines = [
        "# Full-mesh reproduction: measured ratios and crossovers",
        "",
        "Generated by `make reproduce-fullmesh` (experiments/fullmesh/run.sh + plot.py);",
        "B = 25 Gb/s, T0 = 2 us. ratio = time_us / baseline_us at the largest size;",
        "crossover: see plot.py.",
        "",
        "| figure | variant | op | N | relay_mode | K at max | ratio at max size | "
        "crossover (bytes) | crossover (kbit) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    summary = [["figure", "variant", "operation", "nodes", "relay_mode", "decision",
                "relays_at_max", "bytes_at_max", "ratio_at_max", "crossover_bytes",
                "crossover_kbit"]]
    for fig, vs in sorted(variants.items()):
        fig_path = os.path.join(out, fig + ".png")
        modes = sorted({rows[0]["relay_mode"] for _, rows in vs})
        f, axes = plt.subplots(1, len(modes), figsize=(6 * len(modes), 4.5), squeeze=False)
        for ax, mode in zip(axes[0], modes):
            baselines = {}
            series = []
            for label, rows in vs:
                if rows[0]["relay_mode"] != mode:
                    continue
                x = [float(r["bytes"]) * 8 / 1000 for r in rows]
                # Curves that coincide stay visible (line_plot: own marker, earlier wider).
                series.append(usp.Series(label, x, [float(r["time_us"]) for r in rows],
                                         linestyle="--" if label.endswith("always") else "-"))
                baselines.setdefault(rows[0]["nodes"] + rows[0]["operation"], (x, rows))
            usp.line_plot(ax, series, xlog=True, ylog=True, markevery=6)
            for key, (x, rows) in baselines.items():
                usp.reference_line(ax, x, [float(r["baseline_us"]) for r in rows],
                                   f"plain full mesh N={rows[0]['nodes']} {rows[0]['operation']}",
                                   "k:")
            usp.finish(ax, "data size (kbit)", "time (us)", f"{fig}: {mode}", fontsize=7)
        usp.save(f, fig_path)
        for label, rows in vs:
            last = rows[-1]
            ratio = float(last["time_us"]) / float(last["baseline_us"])
            c = crossover(rows, label.endswith("always"))
            cb = "none" if c is None else f"{c:.0f}"
            ck = "none" if c is None else f"{c * 8 / 1000:.1f}"
            lines.append(
                f"| {fig} | {label} | {last['operation']} | {last['nodes']} | "
                f"{last['relay_mode']} | {last['relays']} | {ratio:.4f} | {cb} | {ck} |")
            summary.append([fig, label, last["operation"], last["nodes"], last["relay_mode"],
                            last["decision"], last["relays"], last["bytes"], repr(ratio),
                            "none" if c is None else repr(c),
                            "none" if c is None else repr(c * 8 / 1000)])
    with open(os.path.join(results, "summary.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(summary)
    lines += KSweep(results, out)
    lines += E6Burst(results)
    bg2 = [(os.path.basename(p)[len("bg2_"):-4], load(p)[0])
           for p in sorted(glob.glob(os.path.join(results, "bg2_*.csv")))]
    if bg2:
        lines += ["", "## [0003]: scatter and gather, 125000-byte blocks, N = 8", "",
                  "| operation | time (us) |", "|---|---|"]
        lines += [f"| {op} | {float(r['time_us']):.2f} |" for op, r in bg2]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
