// Multicast to a group of contexts over RSRs: chained (the paper's chained multicast with ack
// combining, seed 003 §2.2), a k-ary tree (ours: a runtime has no switches to copy in), and
// naive (one message per member, the paper's 1-to-1 baseline). docs/multicast.md is the
// guide.
//
// A context takes part by attaching a Multicaster (Multicaster::Attach): it creates one
// endpoint in the context with two non-threaded handlers ("ukai.mc.data", "ukai.mc.ack").
// A group is a list of the members' Multicaster startpoints. Multicast() splits the data
// into chunks of MulticastOptions::chunk_bytes; each member stores every chunk in its
// receive buffer and forwards it at once to its next hops (chain: the next member; tree: its
// children; naive: none), so a long message is pipelined through the group. When the last
// chunk has arrived the member's receiver callback gets the whole message.
//
// Acks (MulticastOptions::ack): chain: each member appends its own ack to the list that
// travels with the last chunk and the last member returns one combined ack to the sender;
// tree: each member acks its parent once its own data is complete and its children acked,
// with their acks combined into its own; naive: each member acks the sender.
//
// Failures (ours): a member to which a send fails (dead peer: kUnavailable, no module, ...)
// is skipped: its predecessor (or parent) records the failure in the combined ack and sends
// the data it stored so far to the members after it (chain) or to its children (tree), so
// the others still get the data. Members not heard of within MulticastOptions::timeout (one
// died after it was sent to and before it forwarded, or an ack path broke) get a repair
// round: the sender re-sends to them directly and waits up to timeout again (members
// deliver a message once); one still silent is reported failed with kUnavailable "no ack
// within N ms, nor within as long after a direct re-send".
//
// Ownership: the Multicaster owns no thread; its handlers keep its state alive until its
// context is destroyed. Thread safety: Multicast() may be called from several threads at
// once, never from a non-threaded handler (it blocks for the acks).
#ifndef UKAI_RT_MULTICAST_HPP_
#define UKAI_RT_MULTICAST_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "ukai/rt/runtime.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

enum class MulticastKind : uint8_t { kChain = 1, kTree = 2, kNaive = 3 };

// "chain", "tree", "naive"; an unknown name is kInvalidArgument listing the known ones.
Result<MulticastKind> ParseMulticastKind(std::string_view name);
std::string_view MulticastKindName(MulticastKind kind);

struct MulticastOptions {
  MulticastKind kind = MulticastKind::kChain;
  // Wait for the members' acks (combined as above). Without acks Multicast() returns once
  // every first-hop send was accepted, and members it did not send to itself are kUnconfirmed.
  bool ack = true;
  // Bytes of data per chunk (the pipelining unit), in [1, 16 MiB].
  size_t chunk_bytes = size_t{64} << 10;
  // Children per node of the tree (kTree), in [1, 64].
  int fanout = 2;
  // How long Multicast() waits for the acks (milliseconds, > 0); once more after a repair
  // round when some member is silent.
  std::chrono::milliseconds timeout{10000};
};

// What became of one member (by its position in the group).
struct MulticastMember {
  enum class State : uint8_t { kAcked, kFailed, kUnconfirmed };
  State state = State::kUnconfirmed;
  Status status;  // why it failed (kFailed only)
};

struct MulticastResult {
  std::vector<MulticastMember> members;  // same order as the group
  // Positions of the failed members, ascending.
  std::vector<size_t> Failed() const;
  bool all_acked() const;
};

// One complete message as a member receives it. `data` is valid during the callback only.
struct MulticastDelivery {
  RuntimeId origin = 0;   // the sending runtime
  uint64_t sequence = 0;  // per sending Multicaster, from 1
  std::span<const uint8_t> data;
};
// Runs on the progress thread (like a non-threaded handler): must not block.
using MulticastReceiver = std::function<void(const MulticastDelivery&)>;

// Counters of one Multicaster (monotonic).
struct MulticastStats {
  uint64_t delivered = 0;  // complete messages handed to the receiver
  uint64_t chunks_forwarded = 0;
  uint64_t forward_failures = 0;  // members skipped because a send to them failed
  uint64_t rejected = 0;          // malformed or unexpected multicast messages (dropped)
  uint64_t acks_received = 0;     // ack messages (combined or not) that reached this node
};

class Multicaster {
 public:
  // Creates the multicast endpoint in `context` and registers its handlers. `receiver` may
  // be empty (a member that only forwards and acks). Errors: those of CreateEndpoint and
  // RegisterHandler.
  static Result<std::unique_ptr<Multicaster>> Attach(Context& context, MulticastReceiver receiver);
  ~Multicaster();
  Multicaster(const Multicaster&) = delete;
  Multicaster& operator=(const Multicaster&) = delete;

  // The startpoint others put in their groups.
  Startpoint startpoint() const;

  // Sends `data` to every member of `group` (startpoints of Multicasters; distinct, valid,
  // not this one) and, with acks, waits up to options.timeout for them. Errors (nothing
  // sent): bad options, an invalid or repeated startpoint. Member failures are not errors:
  // they are in the result.
  Result<MulticastResult> Multicast(std::span<const Startpoint> group,
                                    std::span<const uint8_t> data, const MulticastOptions& options);

  MulticastStats stats() const;

  struct State;
  explicit Multicaster(std::shared_ptr<State> state);

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_MULTICAST_HPP_
