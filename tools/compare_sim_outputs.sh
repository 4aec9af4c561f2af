#!/usr/bin/env bash
# Runs the same configs through two `ukai` executables and compares what they print, to show
# that a refactoring changed no result: every config of experiments/fullmesh as table, CSV and
# JSON (compared byte for byte), and experiments/quickstart.toml, experiments/detour-ud,
# experiments/gateway and experiments/reconfig as JSON (byte for byte once the one field that
# differs between two runs, wall_seconds, is removed); when both sides run serially, also
# experiments/sss, experiments/workloads and bench/booksim/configs (QUICK=1: fewer SSS
# operations, the *_long BookSim2 configs left out).
#
# Usage: tools/compare_sim_outputs.sh BEFORE_UKAI AFTER_UKAI [WORK_DIR]
#   BEFORE_UKAI may also be the WORK_DIR/before folder of an earlier comparison: its
#   recorded outputs are used instead of running the old executable again.
#   Exits 0 when every output is identical, 1 (listing the differences) otherwise.
#   QUICK=1 in the environment shortens the flit-level runs (fewer measured messages) for a
#   fast check; the comparison stays exact.
#   Parallel simulation (docs/simulator.md): AFTER_PREFIX is put before the after side's
#   executable and AFTER_ARGS after its arguments; their stderr is then not compared (it
#   says how the run was partitioned), their stdout and exit status are. FLIT_ONLY=1 leaves
#   out the full-mesh configs (that model takes no run.threads). E.g.
#     AFTER_ARGS="--threads 3 --set run.partition_min_nodes=1" \
#       FLIT_ONLY=1 tools/compare_sim_outputs.sh build/src/cli/ukai build/src/cli/ukai
#     AFTER_PREFIX="mpirun -n 2 --oversubscribe" AFTER_ARGS="--set run.partition_min_nodes=1" \
#       tools/compare_sim_outputs.sh build/src/cli/ukai build/src/cli/ukai
set -u
before=$1
after=$2
work=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work/after"
recorded=""
if [ -d "$before" ]; then
  recorded=$(cd "$before" && pwd)
else
  mkdir -p "$work/before"
fi
read -r -a after_prefix <<<"${AFTER_PREFIX:-}"
read -r -a after_args <<<"${AFTER_ARGS:-}"
compare_err=1
[ -n "${AFTER_PREFIX:-}${AFTER_ARGS:-}" ] && compare_err=0
quick=()
if [ "${QUICK:-0}" = 1 ]; then
  quick=(--set measure.warmup_messages=300 --set measure.measure_messages=600)
fi
fail=0
compared=0

# run TAG NAME FORMAT CONFIG [ARGS...]: runs both executables, compares their stdout and stderr.
run() {
  local name=$1 format=$2 cfg=$3
  shift 3
  local sides="before after" old="$work/before"
  if [ -n "$recorded" ]; then
    sides=after
    old=$recorded
  fi
  for side in $sides; do
    local cmd=("$before") extra=()
    if [ "$side" = after ]; then
      cmd=("${after_prefix[@]}" "$after")
      extra=("${after_args[@]}")
    fi
    "${cmd[@]}" sim run "$cfg" --format "$format" "$@" "${extra[@]}" >"$work/$side/$name.$format" \
      2>"$work/$side/$name.$format.err"
    echo "exit $?" >>"$work/$side/$name.$format.err"
    if [ "$format" = json ]; then
      sed -i -E 's/,"wall_seconds":[^,}]*//' "$work/$side/$name.$format"
    fi
  done
  compared=$((compared + 1))
  local err_old="$old/$name.$format.err" err_new="$work/after/$name.$format.err"
  if [ "$compare_err" = 0 ]; then  # the exit status only
    tail -n 1 "$err_old" >"$work/exit_old"
    tail -n 1 "$err_new" >"$work/exit_new"
    err_old=$work/exit_old
    err_new=$work/exit_new
  fi
  if ! cmp -s "$old/$name.$format" "$work/after/$name.$format" || ! cmp -s "$err_old" "$err_new"; then
    echo "DIFFERS: $cfg ($format)"
    diff "$old/$name.$format" "$work/after/$name.$format" | head -5
    diff "$err_old" "$err_new" | head -5
    fail=1
  fi
}

fullmesh=("$root"/experiments/fullmesh/*.toml)
[ "${FLIT_ONLY:-0}" = 1 ] && fullmesh=()
for cfg in "${fullmesh[@]}"; do
  name=fullmesh_$(basename "$cfg" .toml)
  for format in table csv json; do run "$name" "$format" "$cfg"; done
done
run quickstart json "$root/experiments/quickstart.toml" "${quick[@]}"
for cfg in "$root"/experiments/detour-ud/*.toml "$root"/experiments/reconfig/*.toml \
  "$root"/experiments/gateway/*.toml; do
  name=$(basename "$(dirname "$cfg")")_$(basename "$cfg" .toml)
  run "$name" json "$cfg" "${quick[@]}"
done
# The models main added around the engine (the SSS-CORE NIC, trace workloads, BookSim2
# configs) run on one partition only: compared serial against serial (a partitioned run
# refuses the first two, docs/simulator.md).
if [ "$compare_err" = 1 ] && [ "${FLIT_ONLY:-0}" != 1 ]; then
  sss_quick=()
  [ "${QUICK:-0}" = 1 ] && sss_quick=(--set measure.measure_messages=40)
  for cfg in "$root"/experiments/sss/*.toml; do
    run "sss_$(basename "$cfg" .toml)" json "$cfg" "${sss_quick[@]}"
  done
  for cfg in "$root"/experiments/workloads/*.toml; do
    run "workloads_$(basename "$cfg" .toml)" json "$cfg"
  done
  for cfg in "$root"/bench/booksim/configs/*.cfg; do
    case "$cfg" in *_long.cfg) [ "${QUICK:-0}" = 1 ] && continue ;; esac
    run "booksim_$(basename "$cfg" .cfg)" json "$cfg"
  done
fi
echo "compared $compared outputs in $work: $([ $fail = 0 ] && echo identical || echo DIFFERENT)"
exit $fail
