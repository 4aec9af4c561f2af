#!/usr/bin/env python3
"""Draws the results of `ukai sim run` (CSV or JSON Lines) as a PNG: `ukai sim plot`; and the
drawing functions every reproduction's figures use (experiments/*/plot.py,
experiments/gateway/run.py import this file from src/cli/plot/).

Usage: ukai_sim_plot.py RESULTS.(csv|json|jsonl) -o FILE.png [--title TEXT]

Flit-level results (k-ary n-cube, group, ...): two panels against the offered load
(offered_flits_per_node_cycle): mean latency (avg_latency_cycles) and accepted throughput
(accepted_flits_per_node_cycle), one line per combination of the fields that vary in the
sweep among routing, pattern, message_bytes, topology, k, switching, vcs; saturated points
are marked with a black X. Full-mesh results (network.topology = "fullmesh"): time_us against
bytes (log-log), one line per relay setting (policy, relay, relay_mode, decision, nodes,
operation where they vary), with the plain full mesh (baseline_us) dotted.

`ukai sim plot` runs this script with a Python 3 that has matplotlib; errors (unreadable
file, no rows, fields missing) go to stderr with exit status 2.

The drawing functions (import ukai_sim_plot; matplotlib is imported by pyplot()):
  Series(label, x, y, saturated=None, color=None, linestyle="-", marker=None)
      one line: y against x (points whose y is None are left out), saturated[i] true marks
      point i saturated
  line_plot(ax, series, xlog=False, ylog=False, markevery=None, xbase=10)
      one line per series, points sorted by x; every series has its own marker and the
      earlier ones are drawn wider and larger beneath the later ones, so that identical
      series stay visible; saturated points get a black X (one legend entry "saturated");
      a log axis with values <= 0 becomes symmetric-log (linear around 0), so that zeros
      and small counts never vanish
  category_plot(ax, categories, series, ylog=False, annotate=None)
      categories (policies, configs) on x: markers only, never joined by lines, the series
      side by side within a category; annotate = a format ("{:.0f}") writes each value
  bar_plot(ax, categories, series, annotate=True)
      grouped bars per category, each bar's value written above it
  reference_line(ax, xs, ys, label, style="k--", **kwargs)
      a reference curve drawn exactly as given (e.g. 2/K, never clipped to the data), above
      the series
  finish(ax, xlabel, ylabel, title, legend=True, fontsize=8)
      labels, grid and legend
  save(fig, path, dpi=90)
      tight layout, write, close
"""
import argparse
import csv
import json
import sys

FLIT_SERIES = ["routing", "pattern", "message_bytes", "topology", "k", "switching", "vcs"]
MESH_SERIES = ["operation", "nodes", "policy", "relay", "relay_mode", "decision", "k_max"]


class InputError(Exception):
    pass


def read_rows(path):
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{path}: empty: no results to plot")
    if stripped.startswith("{"):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{n}: not a JSON object: {e.msg}")
            if not isinstance(row, dict):
                raise InputError(f"{path}:{n}: not a JSON object")
            rows.append(row)
        return rows
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        raise InputError(f"{path}: no data rows under the CSV header")
    return rows


def number(row, field, path, index):
    value = row.get(field)
    if value is None or value == "":
        return None  # no value (e.g. no message measured)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{path}: row {index + 1}: field '{field}' is not a number: {value!r}")


def need(rows, fields, path, what):
    missing = [f for f in fields if f not in rows[0]]
    if missing:
        raise InputError(f"{path}: not {what} results of ukai sim run: no field "
                         + ", ".join(f"'{m}'" for m in missing))


def series_of(rows, candidates):
    """The candidate fields whose value differs between rows, and each row's label."""
    def text(v):
        return "x".join(str(i) for i in v) if isinstance(v, list) else str(v)
    varying = [f for f in candidates if f in rows[0] and len({text(r.get(f)) for r in rows}) > 1]
    labels = [", ".join(f"{f}={text(r.get(f))}" for f in varying) or "all points" for r in rows]
    return varying, labels


def flag(value):
    return value is True or str(value).lower() == "true"


MARKERS = "osD^vP*Xhp<>"
SATURATED = {"marker": "X", "color": "k", "markersize": 7, "linestyle": "none"}


def pyplot():
    """matplotlib.pyplot with the Agg backend (no display needed)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


class Series:
    """One line of a plot: y against x; saturated[i] marks point i (optional)."""

    def __init__(self, label, x, y, saturated=None, color=None, linestyle="-", marker=None):
        self.label = label
        self.x = list(x)
        self.y = list(y)
        self.saturated = list(saturated) if saturated is not None else [False] * len(self.x)
        self.color = color
        self.linestyle = linestyle
        self.marker = marker
        if not len(self.x) == len(self.y) == len(self.saturated):
            raise ValueError(f"series {label!r}: x, y and saturated differ in length")

    def points(self):
        """(x, y, saturated) sorted by x, without the points that have no y."""
        pts = [(x, y, bool(s)) for x, y, s in zip(self.x, self.y, self.saturated)
               if y is not None and x is not None]
        return sorted(pts, key=lambda p: p[0])


def _layer(i, n):
    """Line width and marker size of series i of n: the earlier, the wider (beneath)."""
    frac = (n - 1 - i) / (n - 1) if n > 1 else 0.0
    return 1.2 + 2.3 * frac, 4.0 + 4.0 * frac


def set_scale(ax, axis, log, values, base=10):
    """Log scale on `axis` ("x" or "y"); symmetric-log when a value is <= 0 (it would vanish
    on a log axis), linear below the smallest positive value."""
    if not log:
        return
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    values = [v for v in values if v is not None]
    if values and min(values) <= 0:
        positive = [v for v in values if v > 0]
        setter("symlog", base=base, linthresh=min(positive) if positive else 1.0)
    else:
        setter("log", base=base)


def line_plot(ax, series, xlog=False, ylog=False, markevery=None, xbase=10):
    """Draws every series on `ax` (see the module's doc); returns the Line2D per series."""
    n = len(series)
    lines, xs_all, ys_all, any_saturated = [], [], [], False
    for i, s in enumerate(series):
        pts = s.points()
        width, size = _layer(i, n)
        style = {"linestyle": s.linestyle, "marker": s.marker or MARKERS[i % len(MARKERS)],
                 "linewidth": width, "markersize": size, "label": s.label, "zorder": 2 + i,
                 "alpha": 0.85}
        if s.color is not None:
            style["color"] = s.color
        line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], markevery=markevery, **style)
        lines.append(line)
        sat = [p for p in pts if p[2]]
        if sat:
            any_saturated = True
            ax.plot([p[0] for p in sat], [p[1] for p in sat], zorder=2 + n + i, **SATURATED)
        xs_all += [p[0] for p in pts]
        ys_all += [p[1] for p in pts]
    if any_saturated:
        ax.plot([], [], label="saturated", **SATURATED)
    set_scale(ax, "x", xlog, xs_all, xbase)
    set_scale(ax, "y", ylog, ys_all)
    return lines


def category_plot(ax, categories, series, ylog=False, annotate=None):
    """Series over categories: markers only (categories are not a scale to join by lines)."""
    n = len(series)
    ys_all = []
    for j, s in enumerate(series):
        shift = (j - (n - 1) / 2) * (0.6 / max(n, 1))
        pts = [(i + shift, y, sat) for i, (y, sat) in enumerate(zip(s.y, s.saturated))
               if y is not None]
        style = {"marker": s.marker or MARKERS[j % len(MARKERS)], "linestyle": "none",
                 "label": s.label, "markersize": 7}
        if s.color is not None:
            style["color"] = s.color
        ax.plot([p[0] for p in pts], [p[1] for p in pts], **style)
        sat = [p for p in pts if p[2]]
        if sat:
            ax.plot([p[0] for p in sat], [p[1] for p in sat], **SATURATED)
        if annotate:
            for x, y, _ in pts:
                ax.annotate(annotate.format(y), (x, y), textcoords="offset points",
                            xytext=(0, 5), ha="center", fontsize=7)
        ys_all += [p[1] for p in pts]
    ax.set_xticks(range(len(categories)), categories)
    set_scale(ax, "y", ylog, ys_all)


def bar_plot(ax, categories, series, annotate=True):
    """Grouped bars: one bar per series in every category, its value written above it."""
    n = len(series)
    width = 0.8 / max(n, 1)
    for j, s in enumerate(series):
        xs = [i + (j - (n - 1) / 2) * width for i in range(len(categories))]
        ys = [0 if y is None else y for y in s.y]
        kw = {"label": s.label}
        if s.color is not None:
            kw["color"] = s.color
        bars = ax.bar(xs, ys, width, **kw)
        if annotate:
            for b in bars:
                ax.annotate(f"{b.get_height():g}", (b.get_x() + b.get_width() / 2,
                                                     b.get_height()),
                            ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(categories)), categories)


def reference_line(ax, xs, ys, label, style="k--", **kwargs):
    """A reference curve exactly as given (not clipped), thin and above the series so that it
    stays visible where a series follows it; kwargs go to matplotlib (markersize, ...)."""
    ax.plot(list(xs), list(ys), style, label=label, **{"linewidth": 1.2, "zorder": 1000, **kwargs})


def finish(ax, xlabel=None, ylabel=None, title=None, legend=True, fontsize=8):
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if legend:
        ax.legend(fontsize=fontsize)


def save(fig, path, dpi=90):
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)


def plot_flit(rows, path, out, title):
    need(rows, ["offered_flits_per_node_cycle", "avg_latency_cycles",
                "accepted_flits_per_node_cycle"], path, "flit-level")
    _, labels = series_of(rows, FLIT_SERIES)
    groups = {}
    for i, (row, label) in enumerate(zip(rows, labels)):
        g = groups.setdefault(label, ([], [], [], []))
        g[0].append(number(row, "offered_flits_per_node_cycle", path, i))
        g[1].append(number(row, "avg_latency_cycles", path, i))
        g[2].append(number(row, "accepted_flits_per_node_cycle", path, i))
        g[3].append(flag(row.get("saturated")))
    fig, (ax_lat, ax_acc) = pyplot().subplots(1, 2, figsize=(12, 4.5))
    line_plot(ax_lat, [Series(label, x, lat, sat) for label, (x, lat, _, sat) in groups.items()])
    line_plot(ax_acc, [Series(label, x, acc, sat) for label, (x, _, acc, sat) in groups.items()])
    finish(ax_lat, "offered load (flits/node/cycle)", "mean latency (cycles)", fontsize=7)
    finish(ax_acc, "offered load (flits/node/cycle)", "accepted (flits/node/cycle)",
           legend=False)
    fig.suptitle(title)
    save(fig, out)


def plot_mesh(rows, path, out, title):
    need(rows, ["bytes", "time_us", "baseline_us"], path, "full-mesh")
    _, labels = series_of(rows, MESH_SERIES)
    groups, base = {}, {}
    for i, (row, label) in enumerate(zip(rows, labels)):
        x = number(row, "bytes", path, i)
        groups.setdefault(label, ([], []))
        groups[label][0].append(x)
        groups[label][1].append(number(row, "time_us", path, i))
        key = (row.get("operation"), str(row.get("nodes")))
        base.setdefault(key, {})[x] = number(row, "baseline_us", path, i)
    fig, ax = pyplot().subplots(figsize=(7, 4.5))
    line_plot(ax, [Series(label, x, y) for label, (x, y) in groups.items()], xlog=True,
              ylog=True)
    for (op, nodes), pts in base.items():
        xs = sorted(pts)
        reference_line(ax, xs, [pts[x] for x in xs], f"plain full mesh ({op}, N={nodes})", "k:")
    finish(ax, "bytes", "time (us)", title, fontsize=7)
    save(fig, out)


def main(argv):
    parser = argparse.ArgumentParser(prog="ukai sim plot")
    parser.add_argument("results")
    parser.add_argument("-o", "--out", required=True)
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    try:
        rows = read_rows(args.results)
        title = args.title or args.results
        if "time_us" in rows[0] and "operation" in rows[0]:
            plot_mesh(rows, args.results, args.out, title)
        else:
            plot_flit(rows, args.results, args.out, title)
    except InputError as e:
        print(f"ukai sim plot: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"ukai sim plot: {args.out}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
