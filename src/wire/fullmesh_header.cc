#include "wire/fullmesh_header.h"

#include <cstdio>
#include <string>

#include "wire/crc32.h"
#include "wire/rsr_frame.h"

namespace ukai::wire {
namespace {

size_t HeaderBits(int nodes) { return 10 + 1 + static_cast<size_t>(nodes - 1) + 32; }

void PutBits(std::vector<uint8_t>* out, size_t* bit, uint64_t value, int width) {
  for (int i = width - 1; i >= 0; --i, ++*bit) {
    if ((value >> i) & 1) (*out)[*bit / 8] |= static_cast<uint8_t>(0x80 >> (*bit % 8));
  }
}

uint64_t GetBits(std::span<const uint8_t> in, size_t* bit, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i, ++*bit) v = (v << 1) | ((in[*bit / 8] >> (7 - *bit % 8)) & 1);
  return v;
}

Status CheckNodes(int nodes) {
  if (nodes < 2 || nodes > kFullMeshMaxNodes) {
    return Status::InvalidArgument("control header: nodes " + std::to_string(nodes) +
                                   " out of range [2, " + std::to_string(kFullMeshMaxNodes) + "]");
  }
  return Status::Ok();
}

}  // namespace

size_t ControlHeaderBytes(int nodes) { return (HeaderBits(nodes) + 7) / 8; }

Result<std::vector<uint8_t>> EncodeControlFrame(const ControlHeader& h, int nodes,
                                                std::span<const uint8_t> payload) {
  UKAI_RETURN_IF_ERROR(CheckNodes(nodes));
  if (h.number > 1023) {
    return Status::InvalidArgument("control header: number " + std::to_string(h.number) +
                                   " does not fit 10 bits");
  }
  if (h.links.size() != static_cast<size_t>(nodes - 1)) {
    return Status::InvalidArgument(
        "control header: link bitmap has " + std::to_string(h.links.size()) + " bits, " +
        std::to_string(nodes) + " nodes need " + std::to_string(nodes - 1));
  }
  const size_t head = ControlHeaderBytes(nodes);
  std::vector<uint8_t> out(head + payload.size() + 4, 0);
  size_t bit = 0;
  PutBits(&out, &bit, h.number, 10);
  PutBits(&out, &bit, h.after_hop ? 1 : 0, 1);
  for (bool busy : h.links) PutBits(&out, &bit, busy ? 1 : 0, 1);
  PutBits(&out, &bit, h.process_id, 32);
  std::copy(payload.begin(), payload.end(), out.begin() + head);
  PutLe32(out.data() + head + payload.size(),
          Crc32(std::span<const uint8_t>(out.data(), head + payload.size())));
  return out;
}

Result<ControlFrameView> DecodeControlFrame(std::span<const uint8_t> in, int nodes) {
  UKAI_RETURN_IF_ERROR(CheckNodes(nodes));
  const size_t head = ControlHeaderBytes(nodes);
  if (in.size() < head + 4) {
    return Status::OutOfRange("control frame: " + std::to_string(in.size()) +
                              " bytes, shorter than the " + std::to_string(head) +
                              "-byte header plus the 4-byte FCS");
  }
  const size_t body = in.size() - 4;
  const uint32_t want = GetLe32(in.data() + body);
  const uint32_t got = Crc32(in.first(body));
  if (want != got) {
    return Status::ParseError("control frame: FCS " + Hex32(want) +
                              " does not match the contents (" + Hex32(got) + ")");
  }
  ControlFrameView v;
  size_t bit = 0;
  v.header.number = static_cast<uint16_t>(GetBits(in, &bit, 10));
  v.header.after_hop = GetBits(in, &bit, 1) != 0;
  v.header.links.resize(nodes - 1);
  for (int j = 0; j < nodes - 1; ++j) v.header.links[j] = GetBits(in, &bit, 1) != 0;
  v.header.process_id = static_cast<uint32_t>(GetBits(in, &bit, 32));
  if (GetBits(in, &bit, static_cast<int>(head * 8 - bit)) != 0) {
    return Status::ParseError("control frame: padding bits after the process ID must be 0");
  }
  v.payload = in.subspan(head, body - head);
  return v;
}

}  // namespace ukai::wire
