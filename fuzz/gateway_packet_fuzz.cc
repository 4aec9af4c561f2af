// libFuzzer target: the gateway interconnect packet decoder (wire/gateway_packet.h) and the
// Ethernet FCS check. Must never crash, hang or read out of bounds; a decoded packet must
// re-encode to exactly the input bytes (the layout is canonical).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "wire/crc32.h"
#include "wire/gateway_packet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  ukai::Result<ukai::wire::GatewayPacket> p = ukai::wire::DecodePacket(in);
  if (p.ok()) {
    ukai::Result<std::vector<uint8_t>> again = ukai::wire::EncodePacket(*p);
    if (!again.ok() || again->size() != size || std::memcmp(again->data(), data, size) != 0) {
      std::abort();
    }
  } else if (p.status().message().empty()) {
    std::abort();  // every rejection says why
  }
  (void)ukai::wire::FcsOk(in);
  return 0;
}
