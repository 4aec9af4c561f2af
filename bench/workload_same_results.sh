#!/bin/sh
# The synthetic patterns' results do not change with the workload layer (docs/workloads.md,
# "Synthetic traffic unchanged"): runs experiments/quickstart.toml and every Detour-UD
# config (experiments/detour-ud/fig*.toml) with two builds of `ukai`, drops `wall_seconds`
# from each JSON row and compares the rows byte for byte. Prints the number of configs and
# rows compared; exits 1 on any difference.
# Usage: bench/workload_same_results.sh OLD_UKAI NEW_UKAI [--quick]
#   --quick: the Detour-UD configs with a shorter measurement (measure.warmup_messages=300,
#   measure.measure_messages=600), as experiments/detour-ud/run.sh --quick does. The whole
#   set takes a few minutes per binary on this machine.
set -e
OLD=$1
NEW=$2
QUICK=$3
[ -x "$OLD" ] && [ -x "$NEW" ] || { echo "usage: $0 OLD_UKAI NEW_UKAI [--quick]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")/.." && pwd)
TMP=${TMPDIR:-/tmp}/ukai_workload_same_$$
mkdir -p "$TMP/old" "$TMP/new"
trap 'rm -rf "$TMP"' EXIT
SHORT=""
[ "$QUICK" = "--quick" ] && SHORT="--set measure.warmup_messages=300 --set measure.measure_messages=600"
i=0
status=0
for config in "$HERE/experiments/quickstart.toml" "$HERE"/experiments/detour-ud/fig*.toml; do
  i=$((i + 1))
  extra=$SHORT
  [ "$config" = "$HERE/experiments/quickstart.toml" ] && extra=""
  for side in old new; do
    bin=$OLD
    [ $side = new ] && bin=$NEW
    # shellcheck disable=SC2086 # $extra is a list of arguments
    "$bin" sim run "$config" $extra --format json |
      sed 's/"wall_seconds":[0-9.e+-]*,//' > "$TMP/$side/run$i.json"
  done
  if ! cmp -s "$TMP/old/run$i.json" "$TMP/new/run$i.json"; then
    echo "DIFFERENT results: $config"
    status=1
  fi
done
rows=$(cat "$TMP"/new/run*.json | wc -l)
echo "$i configs, $rows result rows compared: $([ $status = 0 ] && echo identical || echo DIFFERENT)"
exit $status
