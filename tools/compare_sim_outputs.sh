#!/usr/bin/env bash
# Runs the same configs through two `ukai` executables and compares what they print, to show
# that a refactoring changed no result: every config of experiments/fullmesh as table, CSV and
# JSON (compared byte for byte), and experiments/quickstart.toml, experiments/detour-ud,
# experiments/gateway and experiments/reconfig as JSON (byte for byte once the one field that
# differs between two runs, wall_seconds, is removed).
#
# Usage: tools/compare_sim_outputs.sh BEFORE_UKAI AFTER_UKAI [WORK_DIR]
#   BEFORE_UKAI may also be the WORK_DIR/before folder of an earlier comparison: its
#   recorded outputs are used instead of running the old executable again.
#   Exits 0 when every output is identical, 1 (listing the differences) otherwise.
#   QUICK=1 in the environment shortens the flit-level runs (fewer measured messages) for a
#   fast check; the comparison stays exact.
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
    local bin=$before
    [ "$side" = after ] && bin=$after
    "$bin" sim run "$cfg" --format "$format" "$@" >"$work/$side/$name.$format" \
      2>"$work/$side/$name.$format.err"
    echo "exit $?" >>"$work/$side/$name.$format.err"
    if [ "$format" = json ]; then
      sed -i -E 's/,"wall_seconds":[^,}]*//' "$work/$side/$name.$format"
    fi
  done
  compared=$((compared + 1))
  if ! cmp -s "$old/$name.$format" "$work/after/$name.$format" ||
    ! cmp -s "$old/$name.$format.err" "$work/after/$name.$format.err"; then
    echo "DIFFERS: $cfg ($format)"
    diff "$old/$name.$format" "$work/after/$name.$format" | head -5
    diff "$old/$name.$format.err" "$work/after/$name.$format.err" | head -5
    fail=1
  fi
}

for cfg in "$root"/experiments/fullmesh/*.toml; do
  name=fullmesh_$(basename "$cfg" .toml)
  for format in table csv json; do run "$name" "$format" "$cfg"; done
done
run quickstart json "$root/experiments/quickstart.toml" "${quick[@]}"
for cfg in "$root"/experiments/detour-ud/*.toml "$root"/experiments/reconfig/*.toml \
  "$root"/experiments/gateway/*.toml; do
  name=$(basename "$(dirname "$cfg")")_$(basename "$cfg" .toml)
  run "$name" json "$cfg" "${quick[@]}"
done
echo "compared $compared outputs in $work: $([ $fail = 0 ] && echo identical || echo DIFFERENT)"
exit $fail
