#!/bin/sh
# Regenerates experiments/reconfig/results/ (the figures of docs/simulator.md,
# "Reconfiguration"): one_region.toml and several_regions.toml with each discard policy, and
# several_regions.toml with the static root (both policies).
# Usage: run.sh [UKAI]   (default build/src/cli/ukai)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ukai=${1:-build/src/cli/ukai}
mkdir -p "$here/results"
for cfg in one_region several_regions; do
  for discard in recovering all; do
    "$ukai" sim run "$here/$cfg.toml" --set reconfig.discard=$discard --format csv \
      --out "$here/results/${cfg}_$discard.csv"
  done
done
for discard in recovering all; do
  "$ukai" sim run "$here/several_regions.toml" --set reconfig.root=static \
    --set reconfig.discard=$discard --format csv --out "$here/results/several_regions_static_$discard.csv"
done
