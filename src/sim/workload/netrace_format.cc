#include "sim/workload/netrace_format.h"

#include <fmt/format.h>

#include <cstring>

namespace ukai::sim {

// The netrace reader's packet table (netrace.c: nt_packet_types, nt_packet_sizes).
const NetracePacketType kNetracePacketTypes[kNetracePacketTypeCount] = {
    {"InvalidCmd", -1},    {"ReadReq", 8},
    {"ReadResp", 72},      {"ReadRespWithInvalidate", 72},
    {"WriteReq", 72},      {"WriteResp", 8},
    {"Writeback", 72},     {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"UpgradeReq", 8},
    {"UpgradeResp", 8},    {"ReadExReq", 8},
    {"ReadExResp", 72},    {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"InvalidCmd", -1},
    {"InvalidCmd", -1},    {"BadAddressError", 8},
    {"InvalidCmd", -1},    {"InvalidateReq", 8},
    {"InvalidateResp", 8}, {"DowngradeReq", 8},
    {"DowngradeResp", 72},
};

namespace {

// The most notes and regions a header may declare (the netrace reader refuses more than
// 100 regions; notes are a few lines of text).
constexpr uint32_t kMaxNotes = 1 << 20;
constexpr uint32_t kMaxRegions = 100000;

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // the format is little-endian, as is every host we build on
  return v;
}

}  // namespace

Result<std::unique_ptr<NetraceReader>> NetraceReader::Open(const std::string& path) {
  Result<std::unique_ptr<Bz2Stream>> s = Bz2Stream::OpenFile(path);
  if (!s.ok()) return Status(s.status().code(), path + ": " + s.status().message());
  return FromStream(std::move(*s), path);
}

Result<std::unique_ptr<NetraceReader>> NetraceReader::FromStream(std::unique_ptr<ByteStream> stream,
                                                                 const std::string& name) {
  std::unique_ptr<NetraceReader> r(new NetraceReader());
  r->stream_ = std::move(stream);
  r->name_ = name;
  UKAI_RETURN_IF_ERROR(r->ReadHeader());
  return r;
}

Status NetraceReader::ReadExact(void* out, size_t n, const std::string& what) {
  Result<size_t> got = stream_->Read(out, n);
  if (!got.ok()) {
    return Status(got.status().code(),
                  fmt::format("{}: {} ({})", name_, got.status().message(), what));
  }
  if (*got != n) {
    return Status::ParseError(fmt::format("{}: truncated: the stream ends inside {} (byte {})",
                                          name_, what, stream_->offset()));
  }
  return Status::Ok();
}

Status NetraceReader::ReadHeader() {
  unsigned char h[kNetraceHeaderBytes];
  UKAI_RETURN_IF_ERROR(ReadExact(h, sizeof(h), "the 72-byte header"));
  const uint32_t magic = Load<uint32_t>(h);
  if (magic != kNetraceMagic) {
    return Status::ParseError(fmt::format(
        "{}: not a netrace trace: magic 0x{:08X}, expected 0x{:08X}", name_, magic, kNetraceMagic));
  }
  header_.version = Load<float>(h + 4);
  if (header_.version != 1.0f) {
    return Status::Unsupported(
        fmt::format("{}: netrace version {} is not supported (only 1.0)", name_, header_.version));
  }
  header_.benchmark.assign(reinterpret_cast<const char*>(h + 8), 30);
  header_.benchmark.resize(std::strlen(header_.benchmark.c_str()));
  header_.nodes = h[38];
  header_.cycles = Load<uint64_t>(h + 40);
  header_.packets = Load<uint64_t>(h + 48);
  const uint32_t notes = Load<uint32_t>(h + 56);
  const uint32_t regions = Load<uint32_t>(h + 60);
  if (header_.nodes == 0) return Status::ParseError(name_ + ": the header says 0 nodes");
  if (notes > kMaxNotes) {
    return Status::ParseError(
        fmt::format("{}: the header's notes length {} is implausible "
                    "(more than {} bytes): corrupt header?",
                    name_, notes, kMaxNotes));
  }
  if (regions > kMaxRegions) {
    return Status::ParseError(
        fmt::format("{}: the header lists {} regions (more than {}): "
                    "corrupt header?",
                    name_, regions, kMaxRegions));
  }
  header_.notes.resize(notes);
  UKAI_RETURN_IF_ERROR(ReadExact(header_.notes.data(), notes, "the header's notes"));
  header_.notes.resize(std::strlen(header_.notes.c_str()));
  for (uint32_t i = 0; i < regions; ++i) {
    unsigned char r[kNetraceRegionBytes];
    UKAI_RETURN_IF_ERROR(ReadExact(r, sizeof(r), fmt::format("region record {}", i)));
    header_.regions.push_back({Load<uint64_t>(r), Load<uint64_t>(r + 8), Load<uint64_t>(r + 16)});
  }
  packets_offset_ = stream_->offset();
  expected_ = header_.packets;
  return Status::Ok();
}

Status NetraceReader::SeekRegion(int region) {
  if (started_) return Status::FailedPrecondition(name_ + ": SeekRegion after the first packet");
  const int count = static_cast<int>(header_.regions.size());
  if (region == 0 && count == 0) return Status::Ok();
  if (region < 0 || region >= count) {
    return Status::InvalidArgument(
               fmt::format("workload.region: {} has no region {} (it has {}: 0..{})", name_, region,
                           count, count - 1))
        .WithKey("workload.region");
  }
  uint64_t skip_packets = 0;
  for (int i = 0; i < region; ++i) {
    start_cycle_ += header_.regions[i].cycles;
    skip_packets += header_.regions[i].packets;
  }
  uint64_t skip = header_.regions[region].seek_offset;
  char buf[4096];
  while (skip > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(skip, sizeof(buf)));
    UKAI_RETURN_IF_ERROR(ReadExact(buf, n, fmt::format("the packets before region {}", region)));
    skip -= n;
  }
  index_ = skip_packets;
  last_cycle_ = start_cycle_;
  return Status::Ok();
}

std::string NetraceReader::Where() const {
  return fmt::format("{}: packet {} (byte {})", name_, index_, stream_->offset());
}

Result<bool> NetraceReader::Next(NetracePacket* p) {
  started_ = true;
  unsigned char b[kNetracePacketBytes];
  Result<size_t> got = stream_->Read(b, sizeof(b));
  if (!got.ok()) {
    return Status(got.status().code(), fmt::format("{}: {}", Where(), got.status().message()));
  }
  if (*got == 0) {
    if (index_ != expected_) {
      return Status::ParseError(fmt::format(
          "{}: truncated: the stream ends after packet {} but the header lists {} packets", name_,
          index_, expected_));
    }
    return false;
  }
  if (*got != sizeof(b)) {
    return Status::ParseError(
        fmt::format("{}: truncated: the stream ends inside the packet's 21-byte record", Where()));
  }
  p->cycle = Load<uint64_t>(b);
  p->id = Load<uint32_t>(b + 8);
  p->address = Load<uint32_t>(b + 12);
  p->type = b[16];
  p->src = b[17];
  p->dst = b[18];
  p->node_types = b[19];
  p->deps.resize(b[20]);
  if (!p->deps.empty()) {
    UKAI_RETURN_IF_ERROR(ReadExact(p->deps.data(), 4 * p->deps.size(),
                                   fmt::format("the dependency ids of packet {}", index_)));
  }
  const std::string at = Where();
  if (p->type >= kNetracePacketTypeCount || kNetracePacketTypes[p->type].bytes < 0) {
    return Status::ParseError(
        fmt::format("{}: packet id {} has type {}, which is not a packet "
                    "type of the format (corrupt stream?)",
                    at, p->id, p->type));
  }
  if (p->src >= header_.nodes || p->dst >= header_.nodes) {
    return Status::ParseError(
        fmt::format("{}: packet id {} goes from node {} to node {}, but "
                    "the header says {} nodes (corrupt stream?)",
                    at, p->id, p->src, p->dst, header_.nodes));
  }
  if (p->cycle < last_cycle_) {
    return Status::ParseError(
        fmt::format("{}: packet id {} has cycle {}, before the previous "
                    "packet's cycle {} (packets must be in cycle order)",
                    at, p->id, p->cycle, last_cycle_));
  }
  last_cycle_ = p->cycle;
  ++index_;
  return true;
}

}  // namespace ukai::sim
