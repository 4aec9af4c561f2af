// Multicast routes and wire messages (internal to src/rt/multicast/).
//
// A route is the list of members downstream of a node, each with its position in the
// group. The shape (chain, k-ary tree, naive) is a parent function over positions: chain
// parent(i) = i - 1; tree: a k-ary heap whose root (heap index 0) is the sender and where
// position i is heap index i + 1, so parent(i) = i / k - 1 (-1 = the sender); naive: every
// parent is the sender. Split() cuts a route into the
// node's next hops (the entries with no ancestor in the route) and, for each hop, the route
// it forwards to (its descendants in the route). When a hop fails, Split() of its own route
// gives its replacements: the next member of a chain, the children of a tree node.
//
// Messages (payload of RSRs, packed with Buffer's typed items):
//  data  "ukai.mc.data": u8 flags (1 first chunk, 2 last chunk, 4 repair), u64 origin runtime,
//        u32 origin context, u64 sequence, u64 total bytes, u64 offset;
//        first: u8 kind, bool ack, u32 fanout, u32 chunk bytes, u32 receiver's position,
//        startpoint reply_to (sender or tree parent), route (u32 count, then u32 position +
//        startpoint each); last chunk of an acked chain: the ack list so far; then bytes.
//  ack   "ukai.mc.ack": u64 origin, u32 origin context, u64 sequence, u32 position of the
//        acking node, ack list.
//  ack list: u32 count, then per member u32 position, u8 status code (0 = delivered),
//        string message.
// Decoders return errors for malformed input (never read out of bounds: Reader checks).
#ifndef UKAI_RT_MULTICAST_MC_ROUTE_H_
#define UKAI_RT_MULTICAST_MC_ROUTE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.h"
#include "ukai/rt/buffer.hpp"
#include "ukai/rt/multicast.hpp"

namespace ukai::rt::internal {

inline constexpr HandlerId kMcDataHandler = HandlerId::Of("ukai.mc.data");
inline constexpr HandlerId kMcAckHandler = HandlerId::Of("ukai.mc.ack");
inline constexpr uint8_t kMcFirst = 1, kMcLast = 2, kMcRepair = 4;
inline constexpr uint64_t kMcMaxTotalBytes = uint64_t{1} << 32;
inline constexpr uint64_t kMcReserveBytes = uint64_t{64} << 20;  // reserved at the first chunk
inline constexpr uint32_t kMcMaxMembers = 1u << 16;

struct RouteEntry {
  uint32_t index = 0;
  Startpoint sp;
};
using Route = std::vector<RouteEntry>;

struct RouteHop {
  RouteEntry entry;
  Route route;  // what this hop forwards to
};

// Splits `route` (ascending positions) into next hops. `fanout` is used by kTree only.
std::vector<RouteHop> SplitRoute(MulticastKind kind, uint32_t fanout, const Route& route);

struct AckEntry {
  uint32_t index = 0;
  Status status;  // OK = delivered
};
void PutAcks(Buffer& b, const std::vector<AckEntry>& acks);
Result<std::vector<AckEntry>> GetAcks(Reader& r);

// Identifies one multicast message everywhere: (origin runtime, origin context, sequence).
struct McKey {
  RuntimeId origin = 0;
  uint32_t context = 0;
  uint64_t sequence = 0;
  bool repair = false;  // the sender's direct re-send after the timeout (a separate transfer)
  bool operator<(const McKey& o) const {
    if (origin != o.origin) return origin < o.origin;
    if (context != o.context) return context < o.context;
    if (sequence != o.sequence) return sequence < o.sequence;
    return repair < o.repair;
  }
};

// The header of a data message (fields of the first chunk set only when kMcFirst).
struct DataHeader {
  uint8_t flags = 0;
  McKey key;
  uint64_t total = 0, offset = 0;
  MulticastKind kind = MulticastKind::kChain;
  bool ack = false;
  uint32_t fanout = 0, chunk = 0, position = 0;
  Startpoint reply_to;
  Route route;
  std::vector<AckEntry> acks;
  std::span<const uint8_t> bytes;
};
void PutDataHeader(Buffer& b, const DataHeader& h);  // everything but `bytes`
Result<DataHeader> GetData(Reader& r);

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_MULTICAST_MC_ROUTE_H_
