#!/bin/sh
# Reproduces Figs. 7-12 of the Detour-UD paper and the ablation of Detour-UD's table read:
# runs every fig*.toml and ablation*.toml of this directory with `ukai sim run` (one CSV per
# config into OUT_DIR) and plots them (plot.py, PNGs into OUT_DIR). `make
# reproduce-detour-ud` runs it with the release build; the committed results/ are its output.
#
# Usage: run.sh [--quick] [UKAI [OUT_DIR]]
#   UKAI     the ukai executable (default: build/src/cli/ukai)
#   OUT_DIR  where CSVs and PNGs go (default: experiments/detour-ud/results)
#   --quick  a reduced run (warm-up 300, measure 600 messages) for smoke tests
# The interpreter for plot.py is the one tools/find_python.sh names (it needs matplotlib;
# PYTHON overrides it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
quick=""
if [ "${1:-}" = "--quick" ]; then
  quick="--set measure.warmup_messages=300 --set measure.measure_messages=600"
  shift
fi
ukai=${1:-build/src/cli/ukai}
out=${2:-$here/results}
python=$("$here/../../tools/find_python.sh")  # before the runs: fail early
mkdir -p "$out"
start=$(date +%s)
for cfg in "$here"/fig*.toml "$here"/ablation*.toml; do
  name=$(basename "$cfg" .toml)
  t0=$(date +%s)
  # shellcheck disable=SC2086  # $quick is a list of arguments
  "$ukai" sim run "$cfg" $quick --format csv --out "$out/$name.csv"
  echo "$name: $(($(date +%s) - t0)) s"
done
echo "all configs: $(($(date +%s) - start)) s"
"$python" "$here/plot.py" "$out"
