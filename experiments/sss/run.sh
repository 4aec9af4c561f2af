#!/bin/sh
# Reproduces the SSS-CORE network experiments (experiments/sss/REPORT.md): runs every config
# of this directory with `ukai sim run` (CSV into OUT_DIR), the link-rate calculation of
# `ukai link` beside the 4-byte write, and plots them (plot.py: PNGs and tables.md into
# OUT_DIR). `make reproduce-sss` runs it with the release build.
#
# Usage: run.sh [--quick] [UKAI [OUT_DIR]]
#   UKAI     the ukai executable (default: build/src/cli/ukai)
#   OUT_DIR  where CSVs, PNGs and tables.md go (default: experiments/sss/results)
#   --quick  fewer operations per point (smoke tests)
# The interpreter for plot.py is the one tools/find_python.sh names (it needs matplotlib;
# PYTHON overrides it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
python=$("$here/../../tools/find_python.sh")  # before the runs: fail early
quick=""
if [ "${1:-}" = "--quick" ]; then
  quick="--set measure.measure_messages=40"
  shift
fi
ukai=${1:-build/src/cli/ukai}
out=${2:-$here/results}
mkdir -p "$out"
start=$(date +%s)
run() {  # run NAME CONFIG [--set ...]
  name=$1
  cfg=$2
  shift 2
  t0=$(date +%s)
  "$ukai" sim run "$here/$cfg" "$@" --format csv --out "$out/$name.csv"
  echo "$name: $(($(date +%s) - t0)) s"
}
# shellcheck disable=SC2086  # $quick is a list of arguments
run upper_bandwidth upper_bandwidth.toml $quick
# shellcheck disable=SC2086
run completion completion.toml $quick
# shellcheck disable=SC2086
run cut_through cut_through.toml $quick
# The 4-byte write through 1..4 switches, and the paper's arithmetic from `ukai link`.
: > "$out/link_formula.jsonl"
for k in 1 2 3 4; do
  run "link_efficiency_s$k" link_efficiency.toml --set "traffic.hotspot_nodes=[$k]"
  "$ukai" link --switches "$k" --payload-bytes 4 --format json >> "$out/link_formula.jsonl"
done
run nic_rates_oneway nic_rates.toml
run nic_rates_twoway nic_rates.toml --set 'traffic.sources=["n0","n1"]' \
  --set 'traffic.hotspot_nodes=[0,1]'
run nic_rates_hierarchical nic_rates.toml --set traffic.multicast=hierarchical
run nic_rates_chained nic_rates.toml --set traffic.multicast=chained
# Claim 30: room announced in advance against in-band flow control, on streams one way and
# both ways (the paper's NIC, and one whose bus and buffers never limit) and at rising load.
twoway="--set traffic.sources=[\"n0\",\"n1\"] --set traffic.hotspot_nodes=[0,1]"
fast="--set nic.bus_mbytes_per_s=1000000 --set nic.buffer_mbytes_per_s=1000000"
for fc in advance in-band; do
  run "flow_${fc}_oneway" flow_control.toml --set "router.flow_control=$fc"
  # shellcheck disable=SC2086  # $twoway and $fast are lists of arguments
  run "flow_${fc}_twoway" flow_control.toml --set "router.flow_control=$fc" $twoway
  # shellcheck disable=SC2086
  run "flow_${fc}_oneway_fast" flow_control.toml --set "router.flow_control=$fc" $fast
  # shellcheck disable=SC2086
  run "flow_${fc}_twoway_fast" flow_control.toml --set "router.flow_control=$fc" $twoway $fast
  # shellcheck disable=SC2086
  run "flow_${fc}_load" flow_control_load.toml --set "router.flow_control=$fc" $quick
done
echo "all configs: $(($(date +%s) - start)) s"
"$python" "$here/plot.py" "$out"
