#!/usr/bin/env bash
# Regenerates every result, plot and summary of experiments/fullmesh: `make reproduce-fullmesh`
# (or UKAI=path/to/ukai experiments/fullmesh/run.sh). Each figure's config is a size sweep;
# the variants below change one or two keys with --set. Results: results/<figure>_<variant>.csv
# (one row per size: operation, nodes, bytes, policy, relays, direct, relay_mode, time_us,
# baseline_us, speedup, ...), then plot.py draws figNN.png and writes summary.md and
# results/summary.csv. The CSVs are committed: REPORT.md cites them (experiments/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ukai=${UKAI:-$here/../../build/src/cli/ukai}
out=$here/results
rm -rf "$out"
mkdir -p "$out"

# run NAME CONFIG [KEY=VALUE...]
run() {
  local name=$1 cfg=$2
  shift 2
  local args=()
  for s in "$@"; do args+=(--set "$s"); done
  "$ukai" sim run "$here/$cfg.toml" --format csv --out "$out/$name.csv" "${args[@]}"
}
always='fullmesh.decision="always"'
for mode in pipelined store-and-forward; do
  m="fullmesh.relay_mode=\"$mode\""
  tag=${mode%%-*}  # pipelined | store
  for n in 4 8; do
    # Fig. 3: embodiment 1 (memory); the raw relay curve (always) shows the crossover.
    run "fig03_emb1-n$n-$tag" fig03_p2p_emb1 "$m" fullmesh.nodes=$n
    run "fig03_emb1-n$n-$tag-always" fig03_p2p_emb1 "$m" fullmesh.nodes=$n "$always"
    # Fig. 7: embodiment 2 (switch) beside embodiment 1.
    run "fig07_emb2-n$n-$tag-always" fig07_p2p_emb2 "$m" fullmesh.nodes=$n "$always"
    run "fig07_emb1-n$n-$tag-always" fig07_p2p_emb2 "$m" fullmesh.nodes=$n "$always" \
      'fullmesh.relay="memory"'
    # Figs 35 and 37: reduce through memory (emb 4) and in the switch (emb 5).
    run "fig35_emb4-reduce-n$n-$tag-always" fig35_reduce_emb4 "$m" fullmesh.nodes=$n "$always"
    run "fig35_emb4-allreduce-n$n-$tag-always" fig35_reduce_emb4 "$m" fullmesh.nodes=$n \
      "$always" 'workload.operation="allreduce"'
    run "fig37_emb5-n$n-$tag-always" fig37_reduce_emb5 "$m" fullmesh.nodes=$n "$always"
    run "fig37_emb4-n$n-$tag-always" fig37_reduce_emb5 "$m" fullmesh.nodes=$n "$always" \
      'fullmesh.relay="memory"'
  done
  # Fig. 3 with the main node's instruction sheet (embodiment 1 as written).
  run "fig03_emb1-mainnode-n4-$tag-always" fig03_p2p_emb1 "$m" fullmesh.nodes=4 "$always" \
    'fullmesh.tables="main-node"'
  # Fig. 16: embodiment 3 multicast, N = 8; and the memory-relayed curve the text mentions.
  run "fig16_emb3-n8-$tag" fig16_multicast_emb3 "$m"
  run "fig16_emb3-n8-$tag-always" fig16_multicast_emb3 "$m" "$always"
  run "fig16_emb1-memory-n8-$tag-always" fig16_multicast_emb3 "$m" "$always" \
    'fullmesh.relay="memory"'
  # Fig. 40: embodiment 6 (K = 7) against embodiment 3 (K = N = 8 with the sender).
  run "fig40_emb6-k7-n8-$tag-always" fig40_multicast_emb6 "$m" "$always"
  run "fig40_emb3-n8-$tag-always" fig40_multicast_emb6 "$m" "$always" 'fullmesh.policy="fixed-k"'
  # Fig. 29: a group's scatter relayed through the other group.
  run "fig29_group-relay-$tag" fig29_group_scatter "$m"
  run "fig29_group-relay-$tag-always" fig29_group_scatter "$m" "$always"
done
# Embodiment 6 against K: one 4 MiB operation per K (ratios 1/K, 1/(K+1), 2/K).
for mode in pipelined store-and-forward; do
  tag=${mode%%-*}
  for op in p2p multicast reduce; do
    # A p2p on N = 8 has at most N - 2 = 6 relays (a larger fullmesh.k_max is an error).
    ks="1 2 3 4 5 6 7"
    [ "$op" = p2p ] && ks="1 2 3 4 5 6"
    for k in $ks; do
      run "ksweep_$op-$tag-k$k" k_sweep_emb6 "fullmesh.relay_mode=\"$mode\"" \
        "workload.operation=\"$op\"" fullmesh.k_max=$k
    done
  done
done
# Embodiment 6's claim that variable K cuts the waiting of communications arriving together
# (E6.16-17): the same burst under both policies.
for policy in fixed-k variable-k; do
  run "e6burst_$policy" e6_burst "fullmesh.policy=\"$policy\""
done
# Embodiment 7 (E7.1): the same burst with two switch planes.
run "e6burst_fixed-k-planes2" e6_burst 'fullmesh.policy="fixed-k"' fullmesh.planes=2
# [0003] (BG2): scatter and gather of 125000-byte blocks on N = 8 take the same time.
for op in scatter gather; do
  run "bg2_$op" e6_burst "workload.ops=[\"op=$op root=0 bytes=125000\"]"
done
# The A/B/C walk-through of [0080]-[0086] as a config (REPORT.md quotes its rows).
run abc_walkthrough abc_walkthrough
# The Python with matplotlib that tools/find_python.sh names (PYTHON overrides it).
python=$("$here/../../tools/find_python.sh")
"$python" "$here/plot.py" "$out" "$here"
