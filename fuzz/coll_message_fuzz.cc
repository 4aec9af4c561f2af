// libFuzzer target: the collectives' message decoder (src/rt/coll/coll_wire.h) and the body
// decoders it leads to (abort, shrink rank lists). Must never crash or read out of bounds; a
// message it accepts re-encodes to the same header bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "rt/coll/coll_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace coll = ukai::rt::coll;
  const std::span<const uint8_t> bytes(data, size);
  auto h = coll::DecodeMessage(bytes);
  if (!h.ok()) return 0;
  uint8_t again[coll::kCollHeaderBytes];
  coll::EncodeHeader(*h, again);
  if (std::memcmp(again, data, coll::kCollHeaderBytes) != 0) std::abort();
  const auto body = bytes.subspan(coll::kCollHeaderBytes);
  if (h->kind == coll::MsgKind::kAbort) (void)coll::DecodeAbort(body);
  if (h->kind == coll::MsgKind::kShrinkState || h->kind == coll::MsgKind::kShrinkCommit) {
    (void)coll::DecodeRanks(body, 64);
  }
  return 0;
}
