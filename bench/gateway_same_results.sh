#!/bin/sh
# Same simulated results from two builds of `ukai` (docs/performance.md, "Gateway NIC
# path"): runs the gateway benchmark's configs (256- and 512-byte flits, and the "group24"
# settings: 32-byte flits, 64-flit buffers, 6 VCs; with and without internal traffic, with and without FCS in the capture, an egress capture written), every
# run of experiments/gateway/run.py's sweep and experiments/quickstart.toml with both
# binaries, drops `wall_seconds` from each JSON row and compares the rows and the egress
# captures byte for byte. Prints the number of rows compared; exits 1 on any difference.
# Usage: bench/gateway_same_results.sh OLD_UKAI NEW_UKAI [FRAMES]   (default 5000 frames;
# about a minute with 5000 on this machine).
set -e
OLD=$1
NEW=$2
FRAMES=${3:-5000}
[ -x "$OLD" ] && [ -x "$NEW" ] || { echo "usage: $0 OLD_UKAI NEW_UKAI [FRAMES]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/bench/gateway_config.sh"
GW=$HERE/experiments/gateway
TMP=${TMPDIR:-/tmp}/ukai_same_results_$$
mkdir -p "$TMP/old" "$TMP/new"
trap 'rm -rf "$TMP"' EXIT
"$NEW" sim gen-pcap "$TMP/in.pcap" --frames "$FRAMES" --bytes 1500 --rate 0.1
"$NEW" sim gen-pcap "$TMP/fcs.pcap" --frames "$FRAMES" --bytes 1500 --rate 0.05 --fcs \
  --bad-fcs 0.01
gateway_bench_config "$TMP/in.pcap" 256 0.025 "$FRAMES" > "$TMP/gw.toml"
"$NEW" sim gen-pcap "$TMP/in24.pcap" --frames "$FRAMES" --bytes 1500 --rate 0.03
gateway_bench_config "$TMP/in24.pcap" 32 0.05875 "$FRAMES" 64 6 > "$TMP/gw24.toml"
# One case per line: CONFIG then --set arguments (EGRESS stands for this side's egress
# capture).
cat > "$TMP/cases" <<CASES
$TMP/gw.toml --set nic.internal_traffic=false
$TMP/gw.toml --set nic.internal_traffic=true
$TMP/gw.toml --set 'nic.ingress_pcap=""'
$TMP/gw.toml --set router.flit_bytes=512 --set nic.internal_traffic=false
$TMP/gw.toml --set router.flit_bytes=512 --set traffic.rate=0.0125
$TMP/gw.toml --set 'nic.ingress_pcap="$TMP/fcs.pcap"' --set nic.ingress_fcs=true --set nic.egress_rate=0.001 --set nic.egress_frames=500 --set 'nic.egress_pcap="EGRESS"'
$TMP/gw24.toml --set nic.internal_traffic=false
$TMP/gw24.toml --set nic.internal_traffic=true
$TMP/gw24.toml --set 'nic.ingress_pcap=""'
$HERE/experiments/quickstart.toml
CASES
for config in group24 mesh4 mesh8; do
  for retransmit in false true; do
    for p in none learned managed preloaded; do
      echo "$GW/$config.toml --set 'nic.detours=\"$p\"' --set nic.retransmit=$retransmit" \
        "--set 'nic.egress_pcap=\"EGRESS\"'" >> "$TMP/cases"
    done
  done
done
for p in none learned managed preloaded; do
  echo "$GW/group24.toml --set 'nic.detours=\"$p\"' --set 'faults.events=[]' --set 'faults.nodes=[\"4G1\"]'" \
    >> "$TMP/cases"
done
for enabled in '["3G0"]' '["3G0","3G1"]' '["3G0","3G1","3G2","3G3"]'; do
  for rate in 0.002 0.005 0.01; do
    echo "$GW/group24.toml --set 'nic.enabled=$enabled' --set nic.ingress_rate=$rate --set 'faults.events=[]'" \
      >> "$TMP/cases"
  done
done
for cost in 0 100 200 300; do
  echo "$GW/group24.toml --set nic.cpu_cycles_per_frame=$cost --set 'faults.events=[]'" >> "$TMP/cases"
done
i=0
status=0
while read -r line; do
  i=$((i + 1))
  for side in old new; do
    bin=$OLD
    [ $side = new ] && bin=$NEW
    args=$(echo "$line" | sed "s|EGRESS|$TMP/$side/egress$i.pcap|")
    # shellcheck disable=SC2086 # the case line is a list of arguments
    eval "\"$bin\" sim run $args --format json" |
      sed 's/"wall_seconds":[0-9.e+-]*,//' > "$TMP/$side/run$i.json"
  done
  if ! cmp -s "$TMP/old/run$i.json" "$TMP/new/run$i.json"; then
    echo "DIFFERENT results: $line"
    status=1
  fi
  if [ -f "$TMP/old/egress$i.pcap" ] && ! cmp -s "$TMP/old/egress$i.pcap" "$TMP/new/egress$i.pcap"; then
    echo "DIFFERENT egress capture: $line"
    status=1
  fi
done < "$TMP/cases"
rows=$(cat "$TMP"/new/run*.json | wc -l)
pcaps=$(ls "$TMP"/new/egress*.pcap 2>/dev/null | wc -l)
echo "$i cases, $rows result rows, $pcaps egress captures compared: $([ $status = 0 ] && echo identical || echo DIFFERENT)"
exit $status
