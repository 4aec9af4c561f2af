#!/bin/sh
# `ukai launch --sim` gives the same simulated results with two builds (docs/sim-module.md):
# runs the examples as separate processes on simulated machines with both builds and
# compares each job's --sim-out record (without `wall_seconds`, the one field that differs
# between runs) and its printed lines, byte for byte:
#   - spmd_ring (20 laps) with 8 and 16 processes on a 4x4 torus (dor, 1 GHz, 16-byte flits);
#   - spmd_ping_pong and spmd_rma on the Detour-UD 10x10 torus, fault-free and with the
#     paper's four faults (examples/rt/sim/torus10_detour_ud*.toml, as docs/sim-module.md);
#   - collectives with 4 and 16 processes on the 4x4 torus.
# Every machine has sim.cpu_scale = 0 and no program races, so the simulated times are the
# same on every run (the LaunchSim tests): any difference is a change of the results.
# Usage: bench/rt/sim/launch_sim_same_results.sh OLD_BUILD NEW_BUILD
#   OLD_BUILD, NEW_BUILD: build directories (their src/cli/ukai and examples/rt/rt_example_*).
# Prints one line per job and the number compared; exits 1 on any difference.
set -u
OLD=$1
NEW=$2
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
TMP=${TMPDIR:-/tmp}/ukai_launch_sim_same_$$
mkdir -p "$TMP/old" "$TMP/new"
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/torus4.toml" <<'EOF'
[network]
topology = "torus"
k = 4
n = 2
[router]
flit_bytes = 16
clock_mhz = 1000
[routing]
algorithm = "dor"
[sim]
cpu_scale = 0.0
EOF
T10=$HERE/examples/rt/sim/torus10_detour_ud.toml
F10=$HERE/examples/rt/sim/torus10_detour_ud_f4.toml
status=0
jobs=0
# job NAME PROCESSES MACHINE EXAMPLE ARGS...
job() {
  name=$1 n=$2 machine=$3 example=$4
  shift 4
  for side in old new; do
    build=$OLD
    [ $side = new ] && build=$NEW
    "$build/src/cli/ukai" launch -n "$n" --timeout 600 --sim "$machine" --format json \
      --sim-out "$TMP/$side/$name.json" "$build/examples/rt/rt_example_$example" "$@" \
      >"$TMP/$side/$name.out" 2>"$TMP/$side/$name.err"
    echo "exit $?" >>"$TMP/$side/$name.out"
    sed 's/"wall_seconds":[0-9.e+-]*,//' "$TMP/$side/$name.json" >"$TMP/$side/$name.rec"
    # What the program printed and the summary (as JSON), sorted: the ranks' lines may come
    # in any order.
    sed 's/"wall_seconds":[0-9.e+-]*,//' "$TMP/$side/$name.out" | sort >"$TMP/$side/$name.lines"
  done
  jobs=$((jobs + 1))
  if cmp -s "$TMP/old/$name.rec" "$TMP/new/$name.rec" &&
    cmp -s "$TMP/old/$name.lines" "$TMP/new/$name.lines" && [ -s "$TMP/new/$name.rec" ]; then
    echo "same: $name"
  else
    echo "DIFFERENT: $name"
    diff "$TMP/old/$name.rec" "$TMP/new/$name.rec" | head -5
    diff "$TMP/old/$name.lines" "$TMP/new/$name.lines" | head -10
    status=1
  fi
}
job ring8 8 "$TMP/torus4.toml" spmd_ring 20
job ring16 16 "$TMP/torus4.toml" spmd_ring 20
job ping_pong 2 "$T10" spmd_ping_pong 10 0 1000 65536
job ping_pong_f4 2 "$F10" spmd_ping_pong 10 0 1000 65536
job rma 2 "$T10" spmd_rma 8 4096 65536
job rma_f4 2 "$F10" spmd_rma 8 4096 65536
job coll4 4 "$TMP/torus4.toml" collectives
job coll16 16 "$TMP/torus4.toml" collectives
echo "$jobs jobs compared ($([ $status = 0 ] && echo identical || echo DIFFERENT))"
exit $status
