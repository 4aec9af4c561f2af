#include "rt/multicast/mc_route.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace ukai::rt::internal {
namespace {

// The parent position of `i`, or -1 for the sender.
int64_t Parent(MulticastKind kind, uint32_t fanout, uint32_t i) {
  switch (kind) {
    case MulticastKind::kChain:
      return static_cast<int64_t>(i) - 1;
    case MulticastKind::kTree:
      return static_cast<int64_t>(i / fanout) - 1;
    case MulticastKind::kNaive:
      break;
  }
  return -1;
}

Status Malformed(std::string_view what, const Status& why) {
  return Status::ParseError("multicast message: " + std::string(what) + ": " + why.message());
}

}  // namespace

std::vector<RouteHop> SplitRoute(MulticastKind kind, uint32_t fanout, const Route& route) {
  std::unordered_map<uint32_t, size_t> at;  // position -> index in route
  for (size_t i = 0; i < route.size(); ++i) at[route[i].index] = i;
  std::vector<RouteHop> hops;
  std::unordered_map<uint32_t, size_t> hop_of;  // top position -> index in hops
  // Ascending positions: an ancestor (smaller position in every shape) is seen first.
  for (const RouteEntry& e : route) {
    int64_t p = Parent(kind, fanout, e.index);
    while (p >= 0 && !at.count(static_cast<uint32_t>(p))) p = Parent(kind, fanout, uint32_t(p));
    if (p < 0) {
      hop_of[e.index] = hops.size();
      hops.push_back({e, {}});
      continue;
    }
    // Walk up to the top-level ancestor in the route.
    uint32_t top = static_cast<uint32_t>(p);
    while (!hop_of.count(top)) {
      int64_t q = Parent(kind, fanout, top);
      while (q >= 0 && !at.count(static_cast<uint32_t>(q))) q = Parent(kind, fanout, uint32_t(q));
      top = static_cast<uint32_t>(q);
    }
    hops[hop_of[top]].route.push_back(e);
  }
  return hops;
}

void PutAcks(Buffer& b, const std::vector<AckEntry>& acks) {
  b.PutU32(static_cast<uint32_t>(acks.size()));
  for (const AckEntry& a : acks) {
    b.PutU32(a.index);
    b.PutU8(static_cast<uint8_t>(a.status.code()));
    b.PutString(a.status.message());
  }
}

Result<std::vector<AckEntry>> GetAcks(Reader& r) {
  auto n = r.GetU32();
  if (!n.ok()) return Malformed("ack count", n.status());
  if (*n > kMcMaxMembers) return Status::ParseError("multicast message: too many acks");
  std::vector<AckEntry> acks;
  for (uint32_t i = 0; i < *n; ++i) {
    auto index = r.GetU32();
    auto code = r.GetU8();
    auto msg = r.GetString();
    if (!index.ok() || !code.ok() || !msg.ok()) {
      return Status::ParseError("multicast message: ack entry " + std::to_string(i) + " is bad");
    }
    if (*code > static_cast<uint8_t>(StatusCode::kInternal)) {
      return Status::ParseError("multicast message: ack status code " + std::to_string(*code));
    }
    AckEntry a{*index, {}};
    if (*code != 0) a.status = Status(static_cast<StatusCode>(*code), std::move(*msg));
    acks.push_back(std::move(a));
  }
  return acks;
}

void PutDataHeader(Buffer& b, const DataHeader& h) {
  b.PutU8(h.flags);
  b.PutU64(h.key.origin);
  b.PutU32(h.key.context);
  b.PutU64(h.key.sequence);
  b.PutU64(h.total);
  b.PutU64(h.offset);
  if (h.flags & kMcFirst) {
    b.PutU8(static_cast<uint8_t>(h.kind));
    b.PutBool(h.ack);
    b.PutU32(h.fanout);
    b.PutU32(h.chunk);
    b.PutU32(h.position);
    b.PutStartpoint(h.reply_to);
    b.PutU32(static_cast<uint32_t>(h.route.size()));
    for (const RouteEntry& e : h.route) {
      b.PutU32(e.index);
      b.PutStartpoint(e.sp);
    }
  }
  if ((h.flags & kMcLast) && h.kind == MulticastKind::kChain && h.ack) PutAcks(b, h.acks);
}

namespace {

Status GetFirst(Reader& r, DataHeader* h) {
  auto kind = r.GetU8();
  auto ack = r.GetBool();
  auto fanout = r.GetU32();
  auto chunk = r.GetU32();
  auto position = r.GetU32();
  if (!kind.ok() || !ack.ok() || !fanout.ok() || !chunk.ok() || !position.ok()) {
    return Status::ParseError("multicast message: truncated first-chunk header");
  }
  if (*kind < 1 || *kind > 3) {
    return Status::ParseError("multicast message: kind " + std::to_string(*kind));
  }
  if (*fanout < 1 || *fanout > 64 || *chunk < 1) {
    return Status::ParseError("multicast message: fanout or chunk size out of range");
  }
  h->kind = static_cast<MulticastKind>(*kind);
  h->ack = *ack;
  h->fanout = *fanout;
  h->chunk = *chunk;
  h->position = *position;
  auto reply = r.GetStartpoint();
  if (!reply.ok()) return Malformed("reply startpoint", reply.status());
  h->reply_to = *reply;
  auto n = r.GetU32();
  if (!n.ok()) return Malformed("route count", n.status());
  if (*n > kMcMaxMembers) return Status::ParseError("multicast message: route too long");
  for (uint32_t i = 0; i < *n; ++i) {
    auto index = r.GetU32();
    auto sp = r.GetStartpoint();
    if (!index.ok() || !sp.ok()) {
      return Status::ParseError("multicast message: route entry " + std::to_string(i) + " is bad");
    }
    if (*index <= h->position || (!h->route.empty() && *index <= h->route.back().index)) {
      return Status::ParseError("multicast message: route positions not ascending after " +
                                std::to_string(h->position));
    }
    h->route.push_back({*index, *sp});
  }
  return Status::Ok();
}

}  // namespace

Result<DataHeader> GetData(Reader& r) {
  DataHeader h;
  auto flags = r.GetU8();
  auto origin = r.GetU64();
  auto context = r.GetU32();
  auto sequence = r.GetU64();
  auto total = r.GetU64();
  auto offset = r.GetU64();
  if (!flags.ok() || !origin.ok() || !context.ok() || !sequence.ok() || !total.ok() ||
      !offset.ok()) {
    return Status::ParseError("multicast message: truncated data header");
  }
  if (*flags > (kMcFirst | kMcLast | kMcRepair)) {
    return Status::ParseError("multicast message: flags " + std::to_string(*flags));
  }
  h.flags = *flags;
  h.key = {*origin, *context, *sequence, (*flags & kMcRepair) != 0};
  h.total = *total;
  h.offset = *offset;
  if (h.total > kMcMaxTotalBytes) return Status::ParseError("multicast message: total too large");
  if (h.flags & kMcFirst) UKAI_RETURN_IF_ERROR(GetFirst(r, &h));
  return h;
}

}  // namespace ukai::rt::internal
