#!/bin/sh
# Reproduces Figs. 7-12 of the Detour-UD paper: runs every fig*.toml of this directory
# with `ukai sim run` (CSV into OUT_DIR, one file per config) and plots them (plot.py,
# PNGs into OUT_DIR). `make reproduce-detour-ud` runs it with the release build.
#
# Usage: run.sh [--quick] [UKAI [OUT_DIR]]
#   UKAI     the ukai executable (default: build/src/cli/ukai)
#   OUT_DIR  where CSVs and PNGs go (default: experiments/detour-ud/results)
#   --quick  a reduced run (warm-up 300, measure 600 messages) for smoke tests
# PYTHON (environment) picks the interpreter for plot.py; it needs matplotlib
# (Debian: python3-matplotlib).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
quick=""
if [ "${1:-}" = "--quick" ]; then
  quick="--set measure.warmup_messages=300 --set measure.measure_messages=600"
  shift
fi
ukai=${1:-build/src/cli/ukai}
out=${2:-$here/results}
mkdir -p "$out"
start=$(date +%s)
for cfg in "$here"/fig*.toml; do
  name=$(basename "$cfg" .toml)
  t0=$(date +%s)
  # shellcheck disable=SC2086  # $quick is a list of arguments
  "$ukai" sim run "$cfg" $quick --format csv --out "$out/$name.csv"
  echo "$name: $(($(date +%s) - t0)) s"
done
echo "all configs: $(($(date +%s) - start)) s"
python=${PYTHON:-python3}
if ! "$python" -c "import matplotlib" 2>/dev/null && [ -x /usr/bin/python3 ]; then
  python=/usr/bin/python3  # the Debian interpreter that has python3-matplotlib
fi
"$python" "$here/plot.py" "$out"
