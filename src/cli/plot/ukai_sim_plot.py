#!/usr/bin/env python3
"""Draws the results of `ukai sim run` (CSV or JSON Lines) as a PNG: `ukai sim plot`.

Usage: ukai_sim_plot.py RESULTS.(csv|json|jsonl) -o FILE.png [--title TEXT]

Flit-level results (k-ary n-cube, group, ...): two panels against the offered load
(offered_flits_per_node_cycle): mean latency (avg_latency_cycles) and accepted throughput
(accepted_flits_per_node_cycle), one line per combination of the fields that vary in the
sweep among routing, pattern, message_bytes, topology, k, switching, vcs; saturated points
are marked with an X. Full-mesh results (network.topology = "fullmesh"): time_us against
bytes (log-log), one line per relay setting (policy, relay, relay_mode, decision, nodes,
operation where they vary), with the plain full mesh (baseline_us) dotted.

`ukai sim plot` runs this script with a Python 3 that has matplotlib; errors (unreadable
file, no rows, fields missing) go to stderr with exit status 2.
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


def plot_flit(rows, path, out, title, plt):
    need(rows, ["offered_flits_per_node_cycle", "avg_latency_cycles",
                "accepted_flits_per_node_cycle"], path, "flit-level")
    _, labels = series_of(rows, FLIT_SERIES)
    groups = {}
    for i, (row, label) in enumerate(zip(rows, labels)):
        x = number(row, "offered_flits_per_node_cycle", path, i)
        lat = number(row, "avg_latency_cycles", path, i)
        acc = number(row, "accepted_flits_per_node_cycle", path, i)
        groups.setdefault(label, []).append((x, lat, acc, flag(row.get("saturated"))))
    fig, (ax_lat, ax_acc) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, pts in groups.items():
        pts.sort(key=lambda p: p[0])
        line, = ax_lat.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
        ax_acc.plot([p[0] for p in pts], [p[2] for p in pts], "o-", color=line.get_color(),
                    label=label)
        sat = [p for p in pts if p[3]]
        if sat:
            ax_lat.plot([p[0] for p in sat if p[1] is not None],
                        [p[1] for p in sat if p[1] is not None], "X", color="k", markersize=10)
            ax_acc.plot([p[0] for p in sat], [p[2] for p in sat], "X", color="k", markersize=10)
    ax_lat.plot([], [], "X", color="k", label="saturated")
    ax_lat.set_ylabel("mean latency (cycles)")
    ax_acc.set_ylabel("accepted (flits/node/cycle)")
    for ax in (ax_lat, ax_acc):
        ax.set_xlabel("offered load (flits/node/cycle)")
        ax.grid(True, alpha=0.3)
    ax_lat.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def plot_mesh(rows, path, out, title, plt):
    need(rows, ["bytes", "time_us", "baseline_us"], path, "full-mesh")
    _, labels = series_of(rows, MESH_SERIES)
    groups, base = {}, {}
    for i, (row, label) in enumerate(zip(rows, labels)):
        x = number(row, "bytes", path, i)
        groups.setdefault(label, []).append((x, number(row, "time_us", path, i)))
        key = (row.get("operation"), str(row.get("nodes")))
        base.setdefault(key, {})[x] = number(row, "baseline_us", path, i)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, pts in groups.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", markersize=3, label=label)
    for (op, nodes), pts in base.items():
        xs = sorted(pts)
        ax.plot(xs, [pts[x] for x in xs], "k:", label=f"plain full mesh ({op}, N={nodes})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_ylabel("time (us)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(prog="ukai sim plot")
    parser.add_argument("results")
    parser.add_argument("-o", "--out", required=True)
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    try:
        rows = read_rows(args.results)
        title = args.title or args.results
        if "time_us" in rows[0] and "operation" in rows[0]:
            plot_mesh(rows, args.results, args.out, title, plt)
        else:
            plot_flit(rows, args.results, args.out, title, plt)
    except InputError as e:
        print(f"ukai sim plot: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"ukai sim plot: {args.out}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
