# Sourced by bench/gateway_bench.sh and bench/gateway_same_results.sh: the gateway
# benchmark's machine (docs/performance.md, "Gateway NIC path").
# gateway_bench_config PCAP FLIT_BYTES TRAFFIC_RATE FRAMES [BUFFER_FLITS [VCS]] prints the
# config: the 24-node group machine with NICs on 3G0 and 3G1 (the defaults of
# nic.enabled), preloaded detours, 1500-byte frames read from PCAP (or, with
# nic.ingress_pcap = "", 1500-byte messages generated internally at TRAFFIC_RATE flits per
# node and cycle), FRAMES measured,
# router.vc_buffer_flits = BUFFER_FLITS (default 16) and, when given, router.vcs = VCS.
gateway_bench_config() {
  cat <<TOML
routing.algorithm = "dor-detour"
[network]
topology = "group"
[router]
flit_bytes = $2
vc_buffer_flits = ${5:-16}
${6:+vcs = $6}
[traffic]
message_bytes = 1500
rate = $3
[measure]
warmup_messages = 0
measure_messages = $4
max_cycles = 100000000
[nic]
ingress_pcap = "$1"
detours = "preloaded"
TOML
}
