// The public Group and CollRequest: creation (World, FromStartpoints, Split, Shrink), the
// argument checks of every collective, and the forwards to GroupState.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "rt/coll/group_state.h"
#include "rt/coll/reduce_kernels.h"
#include "rt/core/runtime_impl.h"
#include "wire/rsr_frame.h"

namespace ukai::rt {

using internal::CollOp;
using internal::GroupState;
using internal::Hub;
using internal::PostArgs;

namespace {

uint64_t Mix(uint64_t h, uint64_t v) {  // splitmix64 of the combination
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t HashText(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return h;
}

std::string Api(Collective c) {
  static const char* const kNames[] = {
      "",       "Barrier",   "Broadcast",     "Scatter",  "Gather", "Allgather",
      "Reduce", "Allreduce", "ReduceScatter", "Alltoall", "Send"};
  return std::string("Group::") + kNames[static_cast<int>(c)];
}

bool Rooted(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kScatter || c == Collective::kGather ||
         c == Collective::kReduce;
}

bool Overlap(const void* a, uint64_t an, const void* b, uint64_t bn) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return an != 0 && bn != 0 && x < y + bn && y < x + an;
}

// The element count of the operation and the argument errors of this member's call.
Status CheckCall(const GroupState& g, Collective c, const ConstView& send, const MutView& recv,
                 int root, uint64_t* count) {
  const uint64_t n = static_cast<uint64_t>(g.size());
  const bool is_root = g.rank() == root;
  auto need = [&](const char* what, uint64_t have, uint64_t want, const std::string& why) {
    if (have >= want) return Status::Ok();
    return Status::InvalidArgument(std::string(what) + " has " + std::to_string(have) +
                                   " elements, needs at least " + std::to_string(want) + " (" +
                                   why + ")");
  };
  if (Rooted(c) && (root < 0 || root >= g.size())) {
    return Status::InvalidArgument("root " + std::to_string(root) +
                                   " is not a rank of this group of " + std::to_string(g.size()));
  }
  switch (c) {
    case Collective::kBarrier:
      *count = 0;
      return Status::Ok();
    case Collective::kBroadcast:
      *count = recv.count;
      return Status::Ok();
    case Collective::kScatter:
      *count = recv.count;
      return is_root ? need("send", send.count, n * recv.count,
                            std::to_string(n) + " ranks x recv's " + std::to_string(recv.count))
                     : Status::Ok();
    case Collective::kGather:
      *count = send.count;
      return is_root ? need("recv", recv.count, n * send.count,
                            std::to_string(n) + " ranks x send's " + std::to_string(send.count))
                     : Status::Ok();
    case Collective::kAllgather:
      *count = send.count;
      return need("recv", recv.count, n * send.count,
                  std::to_string(n) + " ranks x send's " + std::to_string(send.count));
    case Collective::kReduce:
      *count = send.count;
      return is_root ? need("recv", recv.count, send.count, "send's count") : Status::Ok();
    case Collective::kAllreduce:
      *count = send.count;
      return need("recv", recv.count, send.count, "send's count");
    case Collective::kReduceScatter:
      *count = recv.count;
      return need("send", send.count, n * recv.count,
                  std::to_string(n) + " ranks x recv's " + std::to_string(recv.count));
    case Collective::kAlltoall:
      if (send.count % n != 0) {
        return Status::InvalidArgument("send has " + std::to_string(send.count) +
                                       " elements, not a multiple of the group size " +
                                       std::to_string(n));
      }
      *count = send.count / n;
      return need("recv", recv.count, send.count, "send's count");
    case Collective::kSendRecv:
      break;
  }
  return Status::Ok();
}

// Builds the posting of collective `c`; argument errors end up in PostArgs::error (the
// operation still takes its sequence number so that the members stay in step, and the others
// are told).
PostArgs MakePost(GroupState& g, Collective c, ConstView send, MutView recv, const Reduction* op,
                  int root, const CollOptions& o) {
  PostArgs p;
  const bool uses_send = c != Collective::kBarrier && c != Collective::kBroadcast;
  const bool uses_recv = c != Collective::kBarrier;
  if (!uses_send) send = ConstView(nullptr, 0, recv.type);
  uint64_t count = 0;
  Status st = CheckCall(g, c, send, recv, root, &count);
  const DataType type = c == Collective::kBroadcast ? recv.type : send.type;
  if (st.ok() && uses_send && uses_recv && send.type != recv.type &&
      (recv.count != 0 || send.count != 0)) {
    const bool recv_used =
        !((c == Collective::kGather || c == Collective::kReduce) && g.rank() != root);
    const bool send_used = !(c == Collective::kScatter && g.rank() != root);
    if (recv_used && send_used) {
      st = Status::InvalidArgument("send holds " + std::string(DataTypeName(send.type)) +
                                   ", recv " + std::string(DataTypeName(recv.type)));
    }
  }
  if (st.ok() && op != nullptr) {
    auto comb = coll::Combiner::Make(*op, type);
    if (!comb.ok()) {
      st = comb.status();
    } else if (op->op() == ReduceOp::kUser) {  // the combiner points into this copy
      p.user = std::make_shared<const Reduction>(*op);
      p.combiner = *coll::Combiner::Make(*p.user, type);
    } else {
      p.combiner = *comb;
    }
  }
  p.args.coll = c;
  p.args.n = g.size();
  p.args.rank = g.rank();
  p.args.root = Rooted(c) ? root : 0;
  p.args.count = count;
  p.args.element = DataTypeSize(type);
  p.args.commutative = op == nullptr || op->commutative();
  p.args.relays = o.relays;
  p.args.chunk_bytes = o.chunk_bytes;
  p.args.algorithm = o.algorithm;
  // Small barriers and allreduces of the automatic choice go to the shared slots (every
  // member decides the same: the group's slots, the forced choices and the size agree).
  const auto forced = g.overrides().find(c);
  const bool auto_choice = o.algorithm == Algorithm::kAuto &&
                           (forced == g.overrides().end() || forced->second == Algorithm::kAuto);
  p.slot = g.shared_slots() && auto_choice &&
           (c == Collective::kBarrier ||
            (c == Collective::kAllreduce && count * p.args.element <= coll::kSlotDataBytes));
  if (p.slot) {
    p.args.algorithm = Algorithm::kDirect;  // the order it combines in
  } else if (p.args.algorithm == Algorithm::kAuto) {
    const coll::Choice choice = coll::SelectChoice(g.overrides(), c, g.module(), g.size(),
                                                   count * p.args.element, p.args.commutative);
    p.args.algorithm = choice.algorithm;
    if (p.args.chunk_bytes == 0) p.args.chunk_bytes = choice.chunk_bytes;
  }
  const uint64_t send_bytes = coll::SendBytesNeeded(p.args);
  const uint64_t recv_bytes = coll::RecvBytesNeeded(p.args);
  if (st.ok() &&
      ((send_bytes != 0 && send.data == nullptr) || (recv_bytes != 0 && recv.data == nullptr))) {
    st = Status::InvalidArgument(
        std::string(send_bytes != 0 && send.data == nullptr ? "send" : "recv") + " is null");
  }
  p.in_place = send_bytes != 0 && send.data == recv.data &&
               (c == Collective::kAllreduce || c == Collective::kReduce);
  if (st.ok() && !p.in_place && Overlap(send.data, send_bytes, recv.data, recv_bytes)) {
    st = Status::InvalidArgument(
        "send and recv overlap (in place works for Allreduce and "
        "Reduce only, with send.data == recv.data)");
  }
  p.send = send.data;
  p.recv = recv.data;
  p.send_bytes = send_bytes;
  p.sig.coll = c;
  p.sig.algorithm = p.args.algorithm;
  p.sig.type = type;
  p.sig.op = op == nullptr ? static_cast<ReduceOp>(0) : op->op();
  p.sig.root = p.args.root;
  p.sig.count = count;
  if (!st.ok()) p.error = st.WithContext(Api(c));
  return p;
}

CollRequest PostCollective(GroupState& g, Collective c, ConstView send, MutView recv,
                           const Reduction* op, int root, const CollOptions& o) {
  return g.Post(MakePost(g, c, send, recv, op, root, o));
}

constexpr std::string_view kModuleOrder[] = {"inproc", "shm", "mpi", "tcp"};
// What each member says of itself at creation (Introduce): the slowest module it uses, its
// proof (4 words), whether it asks for shared slots, the CPUs it may run on (count, mask of
// CPUs 0-63: coll::CpuSet).
constexpr size_t kIntro = 8;

// Every member on one host asked for shared slots (slots.h): rank 0 creates the area and
// tells the others its name, they attach, and all agree whether everyone could before rank 0
// removes the name. Creation does not fail when slots cannot be had: the group goes without.
Status SetUpSlots(GroupState& g) {
  CollOptions o;
  o.algorithm = Algorithm::kBinomial;
  std::unique_ptr<coll::SlotArea> area;
  char name[128] = {};
  if (g.rank() == 0) {
    std::string made;
    Result<std::unique_ptr<coll::SlotArea>> a = coll::SlotArea::Create(g.size(), &made);
    if (a.ok() && made.size() < sizeof name) {
      area = std::move(*a);
      std::memcpy(name, made.data(), made.size());
    }
  }
  UKAI_RETURN_IF_ERROR(PostCollective(g, Collective::kBroadcast, ConstView(),
                                      MutView(name, sizeof name, DataType::kByte), nullptr, 0, o)
                           .Wait()
                           .WithContext("group creation (shared slots)"));
  name[sizeof name - 1] = '\0';
  if (g.rank() != 0 && name[0] != '\0') {
    Result<std::unique_ptr<coll::SlotArea>> a = coll::SlotArea::Attach(name, g.size());
    if (a.ok()) area = std::move(*a);
  }
  // Before the allreduce below: every member sees it once that completed (set_slots).
  if (area != nullptr && g.sleeps_in_slots()) area->AllowSleep();
  int32_t ok = area != nullptr ? 1 : 0, all_ok = 0;
  const Reduction min(ReduceOp::kMin);
  const Status agreed =
      PostCollective(g, Collective::kAllreduce, ConstView(&ok, 1, DataType::kInt32),
                     MutView(&all_ok, 1, DataType::kInt32), &min, 0, o)
          .Wait();
  if (g.rank() == 0 && name[0] != '\0') shm_unlink(name);
  UKAI_RETURN_IF_ERROR(agreed.WithContext("group creation (shared slots)"));
  if (all_ok == 1) g.set_slots(std::move(area));
  return Status::Ok();
}

// The group's first operation (and a barrier of its creation): an allgather of what each
// member knows of itself — the slowest module it uses to reach another member, and its proof
// for single-copy reads (cross_memory.h). Every member then knows the group's module (the
// selection table's key: the slowest any member uses) and proves its peers on this host.
Status Introduce(GroupState& g) {
  uint64_t slowest = 0;
  std::vector<std::string> modules(static_cast<size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r) {
    if (r == g.rank()) continue;
    Result<std::string> m = g.runtime().SelectModule(g.member(r));
    if (!m.ok()) return m.status().WithContext("group creation: " + g.MemberName(r));
    modules[r] = *m;
    uint64_t idx = 3;
    for (uint64_t i = 0; i < 4; ++i) {
      if (kModuleOrder[i] == *m) idx = i;
    }
    slowest = std::max(slowest, idx);
  }
  const coll::MemberProof own = g.OwnProof();
  const coll::CpuSet cpus = coll::OwnCpus();
  const uint64_t mine[kIntro] = {slowest,    own.host,     own.pid,
                                 own.addr,   own.nonce,    g.options().shared_slots ? 1u : 0u,
                                 cpus.count, cpus.low_mask};
  std::vector<uint64_t> all(kIntro * static_cast<size_t>(g.size()));
  CollOptions o;
  o.algorithm = Algorithm::kRecursiveDoubling;
  UKAI_RETURN_IF_ERROR(
      PostCollective(g, Collective::kAllgather, ConstView(mine, kIntro, DataType::kUint64),
                     MutView(all.data(), all.size(), DataType::kUint64), nullptr, 0, o)
          .Wait()
          .WithContext("group creation"));
  // Members of this host (processes, or runtimes of one process) beyond its CPUs.
  int slots = 0;
  std::vector<coll::CpuSet> here;  // the CPUs of each member on this host
  for (int r = 0; r < g.size(); ++r) {
    const uint64_t* rec = &all[kIntro * static_cast<size_t>(r)];
    if (rec[1] == own.host) here.push_back({rec[7], rec[6]});
    slots += rec[5] == 1;
  }
  g.set_oversubscribed(here.size() > coll::UnionCpus(here));
  // Other processes' memory is read (and written) only where the members do not outnumber
  // the CPUs, unless asked (GroupOptions::single_copy_oversubscribed): there CPU time bounds
  // a collective, and two memcpy through the shm pool cost less of it than one cross-memory
  // copy (docs/collectives.md, "Large steps when processes outnumber the cores").
  const bool other_processes = !g.oversubscribed() || g.options().single_copy_oversubscribed;
  uint64_t agreed = 0;
  std::vector<coll::MemberProof> proofs(static_cast<size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r) {
    const uint64_t* rec = &all[kIntro * static_cast<size_t>(r)];
    agreed = std::max(agreed, rec[0]);
    const bool near = modules[r] == "shm" || modules[r] == "inproc";
    coll::MemberProof p{rec[1], rec[2], rec[3], rec[4]};
    const bool readable = p.pid == own.pid || other_processes;
    if (r != g.rank() && near && readable && g.options().single_copy && coll::Verify(p)) {
      proofs[r] = p;
    }
  }
  g.set_module(std::string(kModuleOrder[std::min<uint64_t>(agreed, 3)]));
  g.set_proofs(std::move(proofs));
  const bool near = g.module() == "shm" || g.module() == "inproc";
  if (g.size() > 1 && static_cast<int>(here.size()) == g.size() && slots == g.size() && near)
    return SetUpSlots(g);
  return Status::Ok();
}

// Waits until every other member registered the group (a "ukai.coll.hello" request each,
// repeated while the member answers kNotFound: no hub or no such group there yet).
Status Handshake(GroupState& g) {
  const auto deadline = std::chrono::steady_clock::now() + g.options().timeout;
  std::vector<int> waiting;
  for (int r = 0; r < g.size(); ++r) {
    if (r != g.rank()) waiting.push_back(r);
  }
  auto pause = std::chrono::microseconds(500);
  while (!waiting.empty()) {
    std::vector<std::pair<int, ReplyFuture>> asks;
    for (int r : waiting) {
      Buffer b;
      b.block().Resize(Buffer::kHeadroom + 8);
      wire::PutLe64(b.block().data() + Buffer::kHeadroom, g.id());
      asks.emplace_back(
          r, g.runtime().Request(std::move(b), g.member(r), HandlerId::Of(coll::kCollHelloHandler),
                                 {.timeout = g.options().timeout}));
    }
    waiting.clear();
    for (auto& [r, f] : asks) {
      const Reply reply = std::move(f).Wait();
      if (reply.ok()) continue;
      if (reply.status().code() != StatusCode::kNotFound) {
        return reply.status().WithContext("group creation: " + g.MemberName(r));
      }
      waiting.push_back(r);
    }
    if (waiting.empty()) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::string who;
      for (int r : waiting) who += (who.empty() ? "" : ", ") + std::to_string(r);
      return Status::Timeout("group creation: members " + who +
                             " did not create the group within " +
                             std::to_string(g.options().timeout.count()) +
                             " ms (do they pass the same members and tag?)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  return Status::Ok();
}

// Registers a new group's state in `hub` and finishes its creation (`handshake`: wait for
// the members first; Split and Shrink need not: their members are known to have hubs).
Result<std::unique_ptr<Group>> Finish(const std::shared_ptr<Hub>& hub, uint64_t id, int rank,
                                      std::vector<Startpoint> members, GroupOptions options,
                                      coll::Overrides overrides, bool handshake) {
  auto state = std::make_shared<GroupState>(hub, id, rank, std::move(members), std::move(options),
                                            std::move(overrides));
  UKAI_RETURN_IF_ERROR(hub->Register(state));
  Status st = handshake ? Handshake(*state) : Status::Ok();
  if (st.ok()) st = Introduce(*state);
  if (!st.ok()) {
    state->Close();  // the others' first operation then fails instead of waiting
    return st;
  }
  return std::make_unique<Group>(std::move(state));
}

Result<std::unique_ptr<Group>> Create(Context& ctx, std::vector<Startpoint> members, int rank,
                                      uint64_t id, GroupOptions options) {
  if (const char* env = std::getenv("UKAI_COLL_ALGORITHMS"); env != nullptr && *env != '\0') {
    options.algorithms += (options.algorithms.empty() ? "" : ",") + std::string(env);
  }
  Result<coll::Overrides> overrides = coll::ParseOverrides(options.algorithms);
  if (!overrides.ok()) return overrides.status().WithContext("GroupOptions::algorithms");
  if (options.timeout.count() <= 0) {
    return Status::InvalidArgument("GroupOptions::timeout must be > 0 ms");
  }
  Result<std::shared_ptr<Hub>> hub = Hub::For(ctx);
  if (!hub.ok()) return hub.status();
  return Finish(*hub, id, rank, std::move(members), std::move(options), std::move(*overrides),
                /*handshake=*/true);
}

}  // namespace

// ---- CollRequest ----

bool CollRequest::Test() const {
  if (op_ == nullptr) return true;
  op_->Poll();
  return op_->done();
}

Status CollRequest::Wait() const {
  if (op_ == nullptr) return Status::FailedPrecondition("CollRequest: no operation");
  return op_->Wait(std::chrono::milliseconds(-1));
}

Status CollRequest::WaitFor(std::chrono::milliseconds timeout) const {
  if (op_ == nullptr) return Status::FailedPrecondition("CollRequest: no operation");
  return op_->Wait(timeout);
}

Status CollRequest::status() const {
  if (op_ == nullptr) return Status::FailedPrecondition("CollRequest: no operation");
  return op_->status();
}

// ---- Group: creation ----

Group::Group(std::shared_ptr<GroupState> state) : state_(std::move(state)) {}

Group::~Group() {
  if (state_) state_->Close();
}

Result<std::unique_ptr<Group>> Group::World(Context& ctx, GroupOptions options) {
  Runtime& rt = ctx.runtime();
  std::vector<Startpoint> members;
  for (int r = 0; r < rt.size(); ++r) {
    Result<Startpoint> sp = rt.WorldStartpoint(r, ctx.id(), kGroupEndpointId);
    if (!sp.ok()) return sp.status().WithContext("Group::World");
    members.push_back(std::move(*sp));
  }
  const uint64_t id = Mix(Mix(HashText("ukai.world"), ctx.id()), options.tag);
  return Create(ctx, std::move(members), rt.rank(), id, std::move(options));
}

Result<std::unique_ptr<Group>> Group::FromStartpoints(Context& ctx,
                                                      std::span<const Startpoint> list,
                                                      GroupOptions options) {
  std::vector<Startpoint> members;
  int rank = -1;
  uint64_t id = HashText("ukai.group");
  for (size_t i = 0; i < list.size(); ++i) {
    const Startpoint& sp = list[i];
    if (!sp.valid()) {
      return Status::InvalidArgument("Group::FromStartpoints: member " + std::to_string(i) +
                                     " is a null startpoint");
    }
    for (size_t j = 0; j < i; ++j) {
      if (list[j].runtime() == sp.runtime() && list[j].context() == sp.context()) {
        return Status::InvalidArgument("Group::FromStartpoints: members " + std::to_string(j) +
                                       " and " + std::to_string(i) + " are the same context");
      }
    }
    if (sp.runtime() == ctx.runtime().id() && sp.context() == ctx.id()) {
      rank = static_cast<int>(i);
    }
    members.emplace_back(sp.shared_descriptors(), sp.context(), kGroupEndpointId);
    id = Mix(Mix(id, sp.runtime()), sp.context());
  }
  if (rank < 0) {
    return Status::InvalidArgument("Group::FromStartpoints: this context (runtime " +
                                   internal::Hex(ctx.runtime().id()) + ", context " +
                                   std::to_string(ctx.id()) + ") is not among the " +
                                   std::to_string(list.size()) + " members");
  }
  return Create(ctx, std::move(members), rank, Mix(id, options.tag), std::move(options));
}

Result<std::unique_ptr<Group>> Group::Split(int colour, int key) {
  GroupState& g = *state_;
  int32_t mine[2] = {colour < 0 ? -1 : colour, key};
  std::vector<int32_t> all(2 * static_cast<size_t>(g.size()));
  const uint32_t seq = g.next_seq();
  CollOptions o;
  o.algorithm = Algorithm::kRecursiveDoubling;
  UKAI_RETURN_IF_ERROR(
      PostCollective(g, Collective::kAllgather, ConstView(mine, 2, DataType::kInt32),
                     MutView(all.data(), all.size(), DataType::kInt32), nullptr, 0, o)
          .Wait()
          .WithContext("Group::Split"));
  if (colour < 0) return std::unique_ptr<Group>();
  std::vector<int> ranks;
  for (int r = 0; r < g.size(); ++r) {
    if (all[2 * r] == colour) ranks.push_back(r);
  }
  std::stable_sort(ranks.begin(), ranks.end(),
                   [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
  std::vector<Startpoint> members;
  int rank = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == g.rank()) rank = static_cast<int>(i);
    members.push_back(g.member(ranks[i]));
  }
  // The split's own sequence number: a later Split of the same group gets other ids.
  const uint64_t id = Mix(Mix(Mix(g.id(), HashText("split")), seq), static_cast<uint64_t>(colour));
  return Finish(g.hub(), id, rank, std::move(members), g.options(), g.overrides(), false);
}

Result<std::unique_ptr<Group>> Group::Shrink() {
  GroupState& g = *state_;
  uint32_t instance = 0;
  Result<std::vector<int>> failed = g.AgreeFailed(&instance);
  if (!failed.ok()) return failed.status();
  std::vector<Startpoint> members;
  int rank = -1;
  uint64_t id = Mix(Mix(g.id(), HashText("shrink")), instance);
  for (int r = 0; r < g.size(); ++r) {
    if (std::binary_search(failed->begin(), failed->end(), r)) {
      id = Mix(id, static_cast<uint64_t>(r));
      continue;
    }
    if (r == g.rank()) rank = static_cast<int>(members.size());
    members.push_back(g.member(r));
  }
  if (rank < 0) {
    return Status::Unavailable("Group::Shrink: the other members count this one as failed");
  }
  return Finish(g.hub(), id, rank, std::move(members), g.options(), g.overrides(), false);
}

// ---- Group: accessors ----

int Group::rank() const { return state_->rank(); }
int Group::size() const { return state_->size(); }
uint64_t Group::id() const { return state_->id(); }
const Startpoint& Group::member(int rank) const { return state_->member(rank); }
const std::string& Group::module() const { return state_->module(); }
bool Group::shared_slots() const { return state_->shared_slots(); }
std::vector<int> Group::FailedMembers() const { return state_->FailedMembers(); }
Context& Group::context() const {
  Context* c = state_->hub()->context();
  return *c;
}
Algorithm Group::Select(Collective c, size_t bytes) const {
  return coll::SelectAlgorithm(state_->overrides(), c, state_->module(), size(), bytes, true);
}

// ---- Group: collectives ----

CollRequest Group::IBarrier(const CollOptions& o) {
  if (state_->SlotBarrier(o)) return state_->PostSlotBarrier();
  return PostCollective(*state_, Collective::kBarrier, {}, {}, nullptr, 0, o);
}
CollRequest Group::IBroadcast(MutView buf, int root, const CollOptions& o) {
  return PostCollective(*state_, Collective::kBroadcast, {}, buf, nullptr, root, o);
}
CollRequest Group::IScatter(ConstView send, MutView recv, int root, const CollOptions& o) {
  return PostCollective(*state_, Collective::kScatter, send, recv, nullptr, root, o);
}
CollRequest Group::IGather(ConstView send, MutView recv, int root, const CollOptions& o) {
  return PostCollective(*state_, Collective::kGather, send, recv, nullptr, root, o);
}
CollRequest Group::IAllgather(ConstView send, MutView recv, const CollOptions& o) {
  return PostCollective(*state_, Collective::kAllgather, send, recv, nullptr, 0, o);
}
CollRequest Group::IReduce(ConstView send, MutView recv, const Reduction& op, int root,
                           const CollOptions& o) {
  return PostCollective(*state_, Collective::kReduce, send, recv, &op, root, o);
}
CollRequest Group::IAllreduce(ConstView send, MutView recv, const Reduction& op,
                              const CollOptions& o) {
  return PostCollective(*state_, Collective::kAllreduce, send, recv, &op, 0, o);
}
CollRequest Group::IReduceScatter(ConstView send, MutView recv, const Reduction& op,
                                  const CollOptions& o) {
  return PostCollective(*state_, Collective::kReduceScatter, send, recv, &op, 0, o);
}
CollRequest Group::IAlltoall(ConstView send, MutView recv, const CollOptions& o) {
  return PostCollective(*state_, Collective::kAlltoall, send, recv, nullptr, 0, o);
}

namespace {

PostArgs PointToPoint(GroupState& g, const char* api, const void* data, uint64_t count,
                      DataType type, int peer, int tag) {
  PostArgs p;
  p.sig.coll = Collective::kSendRecv;
  p.sig.type = type;
  p.sig.count = count;
  p.send = data;
  p.recv = const_cast<void*>(data);
  p.send_bytes = count * DataTypeSize(type);
  Status st;
  if (peer < 0 || peer >= g.size() || peer == g.rank()) {
    st = Status::InvalidArgument("peer " + std::to_string(peer) +
                                 " is not another rank of this group of " +
                                 std::to_string(g.size()));
  } else if (tag < 0) {
    st = Status::InvalidArgument("tag " + std::to_string(tag) + " is negative");
  } else if (count != 0 && data == nullptr) {
    st = Status::InvalidArgument("the buffer is null");
  }
  if (!st.ok()) p.error = st.WithContext(api);
  return p;
}

}  // namespace

CollRequest Group::ISend(ConstView data, int dest, int tag, const CollOptions& o) {
  PostArgs p = PointToPoint(*state_, "Group::Send", data.data, data.count, data.type, dest, tag);
  if (p.error.ok() && o.algorithm != Algorithm::kAuto && o.algorithm != Algorithm::kDirect &&
      o.algorithm != Algorithm::kRelay) {
    p.error = Status::InvalidArgument("Group::Send: algorithm " +
                                      std::string(AlgorithmName(o.algorithm)) +
                                      " is not one of direct, relay");
  }
  if (!p.error.ok()) return CollRequest(CollOp::Failed(&state_->runtime(), p.error));
  return state_->PostSend(p, dest, tag, o);
}

CollRequest Group::IRecv(MutView data, int source, int tag) {
  PostArgs p = PointToPoint(*state_, "Group::Recv", data.data, data.count, data.type, source, tag);
  if (!p.error.ok()) return CollRequest(CollOp::Failed(&state_->runtime(), p.error));
  return state_->PostRecv(p, source, tag);
}

}  // namespace ukai::rt
