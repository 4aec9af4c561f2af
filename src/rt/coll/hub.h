// Hub: the collectives' endpoint of one context (kGroupEndpointId) and the registry of the
// groups that context belongs to. Messages ("ukai.coll", non-threaded: they run on the
// progress engine) are decoded here and handed to their group; messages for a group not
// created here yet (another member finished Split first) wait, up to kUnknownLimitBytes,
// until it registers. Creation requests ("ukai.coll.hello") are answered OK once the named
// group is registered. Peer events (the runtime's listener) go to every group.
//
// One Hub per context, made on first use (Hub::For) and stored in the context's slot: it
// lives while the context or any of its groups does; when the context is destroyed its
// groups fail their operations and say goodbye. Thread safe.
#ifndef UKAI_RT_COLL_HUB_H_
#define UKAI_RT_COLL_HUB_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <vector>

#include "rt/coll/coll_wire.h"
#include "ukai/rt/group.hpp"

namespace ukai::rt::internal {

class GroupState;

class Hub : public std::enable_shared_from_this<Hub> {
 public:
  // Bytes of messages for unknown groups kept per hub (more are dropped and counted).
  static constexpr size_t kUnknownLimitBytes = size_t{64} << 20;

  // The hub of `ctx`, made (endpoint, handlers, peer listener) on first use.
  static Result<std::shared_ptr<Hub>> For(Context& ctx);
  Hub(Context* ctx, Endpoint* ep);
  ~Hub();

  Runtime& runtime() const { return *runtime_; }
  ContextId context_id() const { return context_id_; }
  // Null once the context is being destroyed.
  Context* context() const;
  RuntimeId runtime_id() const { return runtime_id_; }

  // Adds `g` (kAlreadyExists-like kInvalidArgument when its id is taken here) and hands it
  // the messages that waited for it.
  Status Register(const std::shared_ptr<GroupState>& g);
  void Unregister(uint64_t id);
  bool Has(uint64_t id);
  // Messages dropped: malformed, from a runtime other than the rank they claim, or over the
  // unknown-group limit.
  uint64_t rejected() const { return rejected_.load(); }
  void Reject(const Status& why);

  void OnMessage(RuntimeId from, std::span<const uint8_t> payload);
  void OnHello(Rsr& m);
  void OnPeerEvent(const PeerEvent& e);
  // The context is going away (its slot was dropped): groups fail and say goodbye.
  void ContextClosing();

 private:
  struct Unknown {
    RuntimeId from;
    std::vector<uint8_t> payload;
  };
  std::vector<std::shared_ptr<GroupState>> Groups();

  Runtime* runtime_;
  RuntimeId runtime_id_;
  ContextId context_id_;
  mutable std::mutex mu_;
  Context* context_;  // under mu_; null once closing
  uint64_t listener_ = 0;
  // The groups of this context (a handful: a flat list, found by id).
  std::vector<std::pair<uint64_t, std::weak_ptr<GroupState>>> groups_;
  std::weak_ptr<GroupState>* FindGroup(uint64_t id);
  std::map<uint64_t, std::vector<Unknown>> unknown_;
  size_t unknown_bytes_ = 0;
  std::set<uint64_t> closed_;  // ids of groups that were here: their late messages are dropped
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace ukai::rt::internal

#endif  // UKAI_RT_COLL_HUB_H_
