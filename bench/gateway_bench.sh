#!/bin/sh
# Gateway NIC path speed (docs/performance.md, "Gateway NIC path"): 1500-byte frames from a
# pcap capture through the NICs of the 24-node group machine (3G0, 3G1, preloaded detours),
# with and without internal traffic beside, and the same number of 1500-byte messages
# generated internally at the same aggregate load (no NIC path), in frames (messages) per
# second of wall time. Usage: bench/gateway_bench.sh [BUILD_DIR] [FRAMES] [FLIT_BYTES] [RATE]
# (defaults: build 50000 256 0.1; RATE = ingress frames per cycle).
set -e
BUILD=${1:-build}
FRAMES=${2:-50000}
FLIT=${3:-256}
RATE=${4:-0.1}
UKAI=$BUILD/src/cli/ukai
TMP=${TMPDIR:-/tmp}/ukai_gateway_bench_$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
"$UKAI" sim gen-pcap "$TMP/in.pcap" --frames "$FRAMES" --bytes 1500 --rate "$RATE"
cat > "$TMP/gw.toml" <<TOML
routing.algorithm = "dor-detour"
[network]
topology = "group"
[router]
flit_bytes = $FLIT
vc_buffer_flits = 16
[traffic]
message_bytes = 1500
rate = $(python3 -c "print($RATE / 24 * ((1500 + $FLIT - 1) // $FLIT))")
[measure]
warmup_messages = 0
measure_messages = $FRAMES
max_cycles = 100000000
[nic]
ingress_pcap = "$TMP/in.pcap"
detours = "preloaded"
TOML
field() { python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print(d['$1'], d['wall_seconds'], d['cycles'])"; }
printf '%-44s %10s %8s %10s %12s\n' case items wall_s cycles items_per_s
for it in false true; do
  "$UKAI" sim run "$TMP/gw.toml" --set nic.internal_traffic=$it --format json | field frames_delivered |
    while read n w c; do
      printf '%-44s %10s %8.3f %10s %12.0f\n' "pcap ingress, internal_traffic=$it" "$n" "$w" "$c" \
        "$(python3 -c "print($n/$w)")"
    done
done
# The same load generated internally: RATE frames/cycle = RATE/24 messages/node/cycle.
"$UKAI" sim run "$TMP/gw.toml" --set 'nic.ingress_pcap=""' --format json |
  field messages_measured | while read n w c; do
    printf '%-44s %10s %8.3f %10s %12.0f\n' "internal 1500-byte messages (no NIC)" "$n" "$w" "$c" \
      "$(python3 -c "print($n/$w)")"
  done
