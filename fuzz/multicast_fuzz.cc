// libFuzzer target: the multicast wire decoders (src/rt/multicast/mc_route.h). The input is
// read as a data message (header, ack list, bytes) and as an ack message; must never crash
// or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <span>

#include "rt/multicast/mc_route.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace in = ukai::rt::internal;
  const std::span<const uint8_t> bytes(data, size);
  {
    ukai::rt::Reader r(bytes);
    auto h = in::GetData(r);
    if (h.ok()) {
      if (h->flags & in::kMcLast) (void)in::GetAcks(r);
      (void)r.GetBytes();
    }
  }
  {
    ukai::rt::Reader r(bytes);
    (void)r.GetU64();
    (void)r.GetU32();
    (void)r.GetU64();
    (void)r.GetU32();
    (void)in::GetAcks(r);
  }
  return 0;
}
