#!/bin/sh
# Gateway NIC path speed (docs/performance.md, "Gateway NIC path"): 1500-byte frames from a
# pcap capture through the NICs of the 24-node group machine (3G0, 3G1, preloaded detours),
# without and with internal traffic beside, and the same number of 1500-byte messages
# generated internally at the same aggregate load (no NIC path), in frames (messages) per
# second of wall time and of the process's CPU time.
# Four settings: "default" (router.flit_bytes = 256, a frame is a 6-flit packet, 0.1 frames
# per cycle) and "tuned" (512-byte flits: 3 flits, 0.15 frames per cycle), both with
# router.vc_buffer_flits = 16; "group24" (the router of experiments/gateway/group24.toml:
# 32-byte flits, a frame is a 47-flit packet, 64-flit VC buffers, 6 VCs; 0.03 frames per
# cycle); "sim-defaults" (the simulator's own router defaults: router.flit_bytes = 4, a frame
# is a 375-flit packet, 8-flit VC buffers, 4 VCs; 0.004 frames per cycle, below the two NICs'
# injection limit of 2 / 375 frames per cycle). Every other key at its default.
# Each case runs RUNS times (round robin over the cases, so a busy minute of the shared
# machine hits all of them); printed: the median wall time and its range, the median CPU
# time (user + system), and the frames per second of each median.
# Usage: bench/gateway_bench.sh [BUILD_DIR] [FRAMES] [RUNS]   (defaults: build 50000 3)
set -e
BUILD=${1:-build}
FRAMES=${2:-50000}
RUNS=${3:-3}
UKAI=$BUILD/src/cli/ukai
HERE=$(dirname "$0")
. "$HERE/gateway_config.sh"
TMP=${TMPDIR:-/tmp}/ukai_gateway_bench_$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
# settings name, flit bytes, ingress frames per cycle, VC buffer flits[, VCs]
for s in "default 256 0.1 16" "tuned 512 0.15 16" "group24 32 0.03 64 6" "sim-defaults 4 0.004 8 4"; do
  set -- $s
  "$UKAI" sim gen-pcap "$TMP/$1.pcap" --frames "$FRAMES" --bytes 1500 --rate "$3"
  # The same load generated internally: $3 frames/cycle = $3 / 24 messages/node/cycle.
  gateway_bench_config "$TMP/$1.pcap" "$2" \
    "$(python3 -c "print($3 / 24 * ((1500 + $2 - 1) // $2))")" "$FRAMES" $4 ${5:-} \
    > "$TMP/$1.toml"
  for it in false true; do
    echo "$1|pcap ingress, internal_traffic=$it|frames_delivered|$TMP/$1.toml|--set|nic.internal_traffic=$it"
  done
  echo "$1|internal 1500-byte messages (no NIC)|messages_measured|$TMP/$1.toml|--set|nic.ingress_pcap=\"\""
done > "$TMP/cases"
python3 - "$UKAI" "$RUNS" "$TMP/cases" <<'PY'
import json, resource, statistics, subprocess, sys, time

ukai, runs, cases_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cases = [line.rstrip("\n").split("|") for line in open(cases_file)]
got = {i: [] for i in range(len(cases))}
for _ in range(runs):
    for i, (_, _, field, config, *sets) in enumerate(cases):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([ukai, "sim", "run", config, *sets, "--format", "json"],
                             check=True, capture_output=True, text=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        d = json.loads(out.splitlines()[0])
        got[i].append((d["wall_seconds"], cpu, d[field], d["cycles"]))
print("%-12s %-38s %7s %8s %22s %7s %11s %11s" % ("settings", "case", "items", "cycles",
      "wall_s median (range)", "cpu_s", "items/wall_s", "items/cpu_s"))
for i, (settings, name, *_) in enumerate(cases):
    walls = [g[0] for g in got[i]]
    cpus = [g[1] for g in got[i]]
    items, cycles = got[i][0][2], got[i][0][3]
    w, c = statistics.median(walls), statistics.median(cpus)
    print("%-12s %-38s %7d %8d %7.3f (%6.3f-%6.3f) %7.3f %11.0f %11.0f" % (
        settings, name, items, cycles, w, min(walls), max(walls), c, items / w, items / c))
la = open("/proc/loadavg").read().split()[:3]
print("runs per case: %d; load average after the runs: %s" % (runs, " ".join(la)))
PY
