// libFuzzer target: the RSR wire frame decoder (and the startpoint / descriptor table
// decoders, which parse bytes from the network too). Must never crash, hang or read out of
// bounds; a successfully decoded header must re-encode to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "ukai/rt/startpoint.hpp"
#include "wire/rsr_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  ukai::Result<ukai::wire::FrameView> f = ukai::wire::DecodeFrame(in);
  ukai::Result<ukai::wire::FrameHeader> h = ukai::wire::DecodeHeader(in);
  if (f.ok() && !h.ok()) std::abort();  // a whole frame implies a good header
  if (h.ok() && h->header_len == ukai::wire::kHeaderSize) {
    uint8_t again[ukai::wire::kHeaderSize];
    ukai::wire::EncodeHeader(*h, again);
    if (std::memcmp(again, data, ukai::wire::kHeaderSize) != 0) std::abort();
  }
  size_t used = 0;
  ukai::Result<ukai::rt::Startpoint> sp = ukai::rt::Startpoint::Deserialize(in, &used);
  if (sp.ok()) {
    if (used > size) std::abort();
    // Serialising what was read gives back the bytes that were consumed.
    std::vector<uint8_t> back = sp->Serialize();
    if (back.size() != used || std::memcmp(back.data(), data, used) != 0) std::abort();
  }
  ukai::Result<ukai::rt::DescriptorTable> t = ukai::rt::DescriptorTable::Decode(in, &used);
  if (t.ok() && used > size) std::abort();
  return 0;
}
