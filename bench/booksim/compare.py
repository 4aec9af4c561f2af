#!/usr/bin/env python3
"""ukai beside BookSim2 on the BookSim configs of bench/booksim/configs (docs/booksim.md).

BookSim2 is never vendored: with BOOKSIM_SRC naming a BookSim2 source folder (the
repository, or its src/), it is built (g++, flex, bison) into a scratch folder
(BOOKSIM_BUILD, default $TMPDIR/ukai-booksim-build) and used; with BOOKSIM naming a built
binary it is used as it is. Without either, the script says so and exits 0 (nothing to
compare).

For every config both run the file unchanged (ukai: `ukai booksim FILE`); printed per config:
zero-load check (the least packet latency: 7 + (4 + L) D + (P - 1) at the smallest D both
saw), average packet latency and accepted flit rate of both and their differences, both
verdicts (stable / unstable), simulated cycles per second of wall time of both and their
ratio, the same ratio in CPU time (user + system: less sensitive to other load on the
machine), and the peak resident memory of both (from /usr/bin/time). REPEAT=N runs each pair
N times alternately and keeps the least times and the largest RSS; the load average is
printed before and after. Checks: least latency
equal, average latency within 5 % and accepted rate within 5 % where both are stable, the same
verdict. Exit status 1 when a check fails.

Usage: bench/booksim/compare.py [UKAI] [CONFIG ...]   (default: build/src/cli/ukai, every
config). Figures taken on a shared machine vary with its load: run it on an idle one.
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def build_booksim(src):
    """Builds BookSim2 from `src` in a scratch folder; returns the binary's path."""
    if os.path.isdir(os.path.join(src, "src")) and not os.path.exists(os.path.join(src, "Makefile")):
        src = os.path.join(src, "src")
    scratch = os.environ.get("BOOKSIM_BUILD",
                             os.path.join(tempfile.gettempdir(), "ukai-booksim-build"))
    binary = os.path.join(scratch, "booksim")
    if os.path.exists(binary):
        return binary
    if os.path.exists(scratch):
        shutil.rmtree(scratch)
    shutil.copytree(src, scratch)
    subprocess.run(["make", "-C", scratch, "-j2"], check=True, stdout=subprocess.DEVNULL)
    return binary


def run(cmd, cwd=None):
    """Runs `cmd` under /usr/bin/time -v in `cwd`; returns (stdout, peak RSS in KiB, wall
    seconds, CPU seconds: user + system)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(["/usr/bin/time", "-v", "-o", t.name] + cmd, capture_output=True,
                           text=True, cwd=cwd)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        timing = open(t.name).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", timing).group(1)
    seconds = 0.0
    for part in wall.split(":"):
        seconds = seconds * 60 + float(part)
    # getrusage's microseconds, not /usr/bin/time's hundredths (a short run takes 20 ms).
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout + p.stderr, rss, seconds, cpu


def best_of(cmd_a, cmd_b, repeat, cwd=None):
    """Runs a and b alternately `repeat` times in `cwd`; per command: (its first output, the
    largest peak RSS, the least wall time, the least CPU time)."""
    runs_a, runs_b = [], []
    for _ in range(repeat):
        runs_a.append(run(cmd_a, cwd))
        runs_b.append(run(cmd_b, cwd))
    pick = lambda runs: (runs[0][0], max(r[1] for r in runs), min(r[2] for r in runs),
                         min(r[3] for r in runs))
    return pick(runs_a), pick(runs_b)


def figures(text):
    """BookSim2's summary lines -> dict (the overall block; unstable when it says so)."""
    out = {"unstable": "Simulation unstable" in text}
    tail = text[text.rfind("Time taken is"):] if "Time taken is" in text else ""
    m = re.search(r"Time taken is (\d+) cycles", tail)
    out["cycles"] = int(m.group(1)) if m else None
    for key, label in (("latency", "Packet latency average"),
                       ("accepted", "Accepted flit rate average"), ("hops", "Hops average")):
        m = re.search(re.escape(label) + r" ?= ?([-\d.e+]+)", tail)
        out[key] = float(m.group(1)) if m else None
    m = re.search(r"Packet latency average = [^\n]*\n\tminimum = ([-\d.e+]+)", tail)
    out["min_latency"] = float(m.group(1)) if m else None
    return out


def pct(a, b):
    return 100.0 * (a - b) / b if a is not None and b else float("nan")


def main():
    ukai = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/src/cli/ukai")
    configs = sys.argv[2:] or sorted(
        os.path.join(HERE, "configs", f) for f in os.listdir(os.path.join(HERE, "configs"))
        if f.endswith(".cfg"))
    booksim = os.environ.get("BOOKSIM")
    if not booksim and os.environ.get("BOOKSIM_SRC"):
        booksim = build_booksim(os.environ["BOOKSIM_SRC"])
    if booksim:
        booksim = os.path.abspath(booksim)
    if not booksim:
        print("bench/booksim/compare.py: set BOOKSIM (a built booksim) or BOOKSIM_SRC (its "
              "source folder) to compare; nothing to do")
        return 0
    repeat = int(os.environ.get("REPEAT", "1"))
    print(f"load average at the start: {os.getloadavg()[0]:.2f} (1 min); each pair run "
          f"{repeat}x alternately, least wall and CPU time, largest RSS")
    print("| config | min lat bs/ukai | avg lat bs | avg lat ukai | diff % | accepted bs | "
          "accepted ukai | diff % | verdict bs/ukai | cycles/s bs | cycles/s ukai | speed-up | "
          "speed-up CPU | RSS KiB bs/ukai | checks |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    for cfg in configs:
        # Both run in the config's folder: BookSim2 opens an anynet network_file from there.
        cfg = os.path.abspath(cfg)
        (bs_text, bs_rss, bs_wall, bs_cpu), (uk_text, uk_rss, uk_wall, uk_cpu) = best_of(
            [booksim, cfg], [ukai, "booksim", cfg], repeat, os.path.dirname(cfg))
        bs, uk = figures(bs_text), figures(uk_text)
        checks = []
        if bs["unstable"] != uk["unstable"]:
            checks.append("verdict differs")
        if not bs["unstable"] and not uk["unstable"]:
            if bs["min_latency"] != uk["min_latency"]:
                checks.append("least latency differs")
            if abs(pct(uk["latency"], bs["latency"])) > 5:
                checks.append("latency > 5 %")
            if abs(pct(uk["accepted"], bs["accepted"])) > 5:
                checks.append("accepted > 5 %")
        failed = failed or bool(checks)
        speed = lambda f, w: f["cycles"] / w if f["cycles"] and w > 0 else float("nan")
        s_bs, s_uk = speed(bs, bs_wall), speed(uk, uk_wall)
        c_bs, c_uk = speed(bs, bs_cpu), speed(uk, uk_cpu)
        verdict = lambda f: "unstable" if f["unstable"] else "stable"
        fmt = lambda x: "-" if x is None else f"{x:.4g}"
        print(f"| {os.path.basename(cfg)} | {fmt(bs['min_latency'])}/{fmt(uk['min_latency'])} | "
              f"{fmt(bs['latency'])} | {fmt(uk['latency'])} | {pct(uk['latency'], bs['latency']):+.1f} | "
              f"{fmt(bs['accepted'])} | {fmt(uk['accepted'])} | "
              f"{pct(uk['accepted'], bs['accepted']):+.1f} | {verdict(bs)}/{verdict(uk)} | "
              f"{s_bs:.3g} | {s_uk:.3g} | {s_uk / s_bs:.1f}x | {c_uk / c_bs:.1f}x | "
              f"{bs_rss}/{uk_rss} | "
              f"{'; '.join(checks) or 'ok'} |")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
