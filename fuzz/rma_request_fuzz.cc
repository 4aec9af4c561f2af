// libFuzzer target: the RMA request and reply decoders and the remote key parser
// (src/rt/rma/rma_wire.h, include/ukai/rt/rma.hpp), which parse bytes from the network. Must
// never crash, hang or read out of bounds; a decoded request or reply re-encodes to the same
// bytes, and a parsed key serialises back to its input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "rt/rma/rma_wire.h"
#include "ukai/rt/rma.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ukai::rt::internal;
  std::span<const uint8_t> in(data, size);
  ukai::Result<RmaRequest> r = DecodeRequest(in);
  if (r.ok()) {
    if (RequestSize(*r) != size) std::abort();
    std::vector<uint8_t> again(size);
    EncodeRequest(*r, again.data());
    if (std::memcmp(again.data(), data, size) != 0) std::abort();
    // Puts and gets carry at most one 4 KiB packet; atomics count ops, and the one-sided
    // asks and their release name a whole transfer (no data follows them).
    const bool packet = r->op == RmaWireOp::kPut || r->op == RmaWireOp::kGet;
    if (packet && r->length > ukai::rt::kRmaMaxPacketBytes) std::abort();
  }
  ukai::Result<RmaReply> rep = DecodeReply(in);
  if (rep.ok()) {
    if (ReplySize(*rep) != size) std::abort();
    std::vector<uint8_t> again(size);
    EncodeReply(*rep, again.data());
    if (std::memcmp(again.data(), data, size) != 0) std::abort();
  }
  ukai::Result<ukai::rt::RemoteKey> k = ukai::rt::RemoteKey::Parse(in);
  if (k.ok()) {
    std::vector<uint8_t> back = k->Serialize();
    if (back.size() != size || std::memcmp(back.data(), data, size) != 0) std::abort();
  }
  return 0;
}
