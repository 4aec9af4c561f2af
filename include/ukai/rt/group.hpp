// Groups of contexts and their collective operations (docs/collectives.md is the guide).
//
// A Group is an ordered set of members — (runtime, context) pairs — with a rank 0..n-1 for
// each, as MPI's communicators: the world of a `ukai launch` / `mpirun` job (World), a list of
// startpoints (FromStartpoints), a split of a group by colour and key (Split, as
// MPI_Comm_split), or the survivors of a group after failures (Shrink, as ULFM's
// MPI_Comm_shrink). Every member holds its own Group object for the same group.
//
// Collectives: Barrier, Broadcast, Scatter, Gather, Allgather, Reduce, Allreduce,
// ReduceScatter, Alltoall on contiguous typed buffers (ConstView / MutView, made from any
// std::vector, std::array, std::span or C array of a supported element type), and point-to-
// point Send/Recv. Each is blocking (returns a Status) and non-blocking (the I* form returns a
// CollRequest with Test/Wait); several may be in flight on one group. Every member must call
// the collectives of a group in the same order (each call takes the group's next sequence
// number); their arguments must agree (counts, types, operation, root, algorithm): a mismatch
// that a member can see is reported (kInvalidArgument naming the field, the ranks and the
// values) to that member and, through an abort message, to the others, never a hang.
//
// Algorithms (CollOptions::algorithm; kAuto picks from a table the benchmark produced, by
// collective, group size, message size and module): direct (every member sends straight to
// its peers: the plain full mesh), binomial tree, pipelined chain, ring, recursive doubling,
// recursive halving, pairwise exchange, and the relay algorithms of the full-mesh patent
// (JP 2020-046713): point-to-point split over the direct path and K relays (embodiments 1-2),
// relay broadcast where each of K members relays one 1/K part (embodiment 3, 6), relay reduce
// and allreduce with the parts reduced at the relays (embodiment 4, 6).
//
// Reductions: sum, prod, min, max, band, bor, bxor on int32/int64/uint32/uint64/float/double
// (the bitwise ones on integers only) and user functions (Reduction::User). Contributions are
// combined in an order fixed by the algorithm and the group size, never by arrival order, so
// every member gets bitwise the same result and every run the same bits. Floating-point
// results equal the serial sum x0 + x1 + ... + x(n-1) (left to right) for direct and relay;
// the others use their own fixed bracketing (docs/collectives.md has the table).
//
// Failures: a member whose runtime fails or leaves (the runtime's PeerEvent), or whose Group
// was destroyed, makes every pending and later collective of the group complete with
// kUnavailable naming the member ("group member 2 (runtime ..., context 1) failed: ...");
// Shrink() then builds the group of the survivors (every survivor calls it).
//
// Progress: messages are handled by the runtime's progress engine (a non-threaded handler of
// one endpoint per context, kGroupEndpointId); Wait() drives progress itself, so the calling
// thread does the work while it waits. Large messages (CollOptions / GroupOptions::
// rendezvous_bytes and more) wait until the receiver is ready for them; between processes on
// one host they are read straight from the sender's memory (one copy) when the shm module
// offers it, else sent from the shm module's registered pool.
//
// Thread safety: a Group may be used by several threads at once; the order of collectives
// is then the order in which the calls took their sequence numbers. Do not call blocking
// operations or Wait() from a non-threaded handler (they wait for the progress engine that
// runs it). Buffers passed to a non-blocking call must stay valid, and a send buffer
// unchanged, until its request completed. A Group must be destroyed before its Context.
#ifndef UKAI_RT_GROUP_HPP_
#define UKAI_RT_GROUP_HPP_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ukai/rt/runtime.hpp"
#include "ukai/rt/startpoint.hpp"
#include "ukai/status.hpp"

namespace ukai::rt {

namespace internal {
class CollOp;
class GroupState;
}  // namespace internal

// The endpoint id of the collectives' endpoint in a member context ("GRP\0").
inline constexpr EndpointId kGroupEndpointId = 0x00505247;

// Element types of collective buffers. kByte: raw bytes (no reductions but user functions).
enum class DataType : uint8_t { kByte = 1, kInt32, kInt64, kUint32, kUint64, kFloat, kDouble };
// Bytes per element (kByte: 1).
size_t DataTypeSize(DataType type);
// "byte", "int32", "int64", "uint32", "uint64", "float", "double".
std::string_view DataTypeName(DataType type);
// The name above; an unknown one is kInvalidArgument listing the known ones.
Result<DataType> ParseDataType(std::string_view name);

// The DataType of element type T (std::byte, char, int8/uint8 are kByte).
template <class T>
struct DataTypeOf;
template <>
struct DataTypeOf<std::byte> : std::integral_constant<DataType, DataType::kByte> {};
template <>
struct DataTypeOf<char> : std::integral_constant<DataType, DataType::kByte> {};
template <>
struct DataTypeOf<int8_t> : std::integral_constant<DataType, DataType::kByte> {};
template <>
struct DataTypeOf<uint8_t> : std::integral_constant<DataType, DataType::kByte> {};
template <>
struct DataTypeOf<int32_t> : std::integral_constant<DataType, DataType::kInt32> {};
template <>
struct DataTypeOf<int64_t> : std::integral_constant<DataType, DataType::kInt64> {};
template <>
struct DataTypeOf<uint32_t> : std::integral_constant<DataType, DataType::kUint32> {};
template <>
struct DataTypeOf<uint64_t> : std::integral_constant<DataType, DataType::kUint64> {};
template <>
struct DataTypeOf<float> : std::integral_constant<DataType, DataType::kFloat> {};
template <>
struct DataTypeOf<double> : std::integral_constant<DataType, DataType::kDouble> {};

template <class R>
concept CollRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> && requires {
  DataTypeOf<std::remove_cv_t<std::ranges::range_value_t<R>>>::value;
};

// A read-only typed buffer: `count` elements of `type` at `data`.
struct ConstView {
  const void* data = nullptr;
  size_t count = 0;
  DataType type = DataType::kByte;
  ConstView() = default;
  ConstView(const void* d, size_t n, DataType t) : data(d), count(n), type(t) {}
  template <CollRange R>
  ConstView(const R& r)  // NOLINT(google-explicit-constructor): vectors, arrays, spans
      : data(std::ranges::data(r)),
        count(std::ranges::size(r)),
        type(DataTypeOf<std::remove_cv_t<std::ranges::range_value_t<R>>>::value) {}
};

// A writable typed buffer.
struct MutView {
  void* data = nullptr;
  size_t count = 0;
  DataType type = DataType::kByte;
  MutView() = default;
  MutView(void* d, size_t n, DataType t) : data(d), count(n), type(t) {}
  template <class R>
  requires CollRange<std::remove_cvref_t<R>> &&
      (!std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R>>>)
          MutView(R&& r)  // NOLINT(google-explicit-constructor): vectors, arrays, spans of T
      : data(std::ranges::data(r)),
        count(std::ranges::size(r)),
        type(DataTypeOf<std::remove_cv_t<std::ranges::range_value_t<R>>>::value) {}
};

enum class ReduceOp : uint8_t { kSum = 1, kProd, kMin, kMax, kBand, kBor, kBxor, kUser };
// "sum", "prod", "min", "max", "band", "bor", "bxor", "user".
std::string_view ReduceOpName(ReduceOp op);
Result<ReduceOp> ParseReduceOp(std::string_view name);

// A user reduction: out[i] = lhs[i] (op) rhs[i] for i < count, where lhs holds the combined
// contributions of lower ranks than rhs's. `out` is always `lhs` or `rhs` (in place). Runs on
// the progress engine (any thread); must not block or call the runtime.
using ReduceFunction =
    std::function<void(const void* lhs, const void* rhs, void* out, size_t count, DataType type)>;

// A reduction operation: a built-in ReduceOp (implicitly: Allreduce(in, out, ReduceOp::kSum))
// or a user function. Min and max of floats return the lower rank's operand when either is
// NaN (a < b is false), so results are deterministic.
class Reduction {
 public:
  Reduction(ReduceOp op) : op_(op) {}  // NOLINT(google-explicit-constructor)
  // `commutative` false: contributions are combined in rank order only (algorithms that
  // cannot keep the order — ring, recursive halving, pairwise — are then refused, and kAuto
  // avoids them).
  static Reduction User(ReduceFunction fn, bool commutative, std::string name = "user");
  ReduceOp op() const { return op_; }
  bool commutative() const { return commutative_; }
  const std::string& name() const { return name_; }
  const ReduceFunction& function() const { return fn_; }

 private:
  ReduceOp op_;
  bool commutative_ = true;
  std::string name_;
  ReduceFunction fn_;
};

enum class Collective : uint8_t {
  kBarrier = 1,
  kBroadcast,
  kScatter,
  kGather,
  kAllgather,
  kReduce,
  kAllreduce,
  kReduceScatter,
  kAlltoall,
  kSendRecv,  // point-to-point Send/Recv
};
inline constexpr int kCollectiveCount = 10;
// "barrier", "broadcast", "scatter", "gather", "allgather", "reduce", "allreduce",
// "reduce_scatter", "alltoall", "sendrecv".
std::string_view CollectiveName(Collective c);
Result<Collective> ParseCollective(std::string_view name);

enum class Algorithm : uint8_t {
  kAuto = 0,
  kDirect,             // every member straight to its peers (the plain full mesh, no relays)
  kBinomial,           // binomial tree (log2 n steps)
  kChain,              // pipelined chain (chunks of CollOptions::chunk_bytes)
  kRing,               // ring (reduce-scatter + allgather for allreduce)
  kRecursiveDoubling,  // recursive doubling (allgather: Bruck's variant; barrier: dissemination)
  kRecursiveHalving,   // recursive halving (allreduce: Rabenseifner's reduce-scatter+allgather)
  kPairwise,           // pairwise exchange, one peer per step
  kRelay,              // the full-mesh patent's relay algorithms (K = CollOptions::relays)
};
// "auto", "direct", "binomial", "chain", "ring", "recursive_doubling", "recursive_halving",
// "pairwise", "relay".
std::string_view AlgorithmName(Algorithm a);
Result<Algorithm> ParseAlgorithm(std::string_view name);
// The algorithms implemented for `c` (kAuto not included).
std::vector<Algorithm> AlgorithmsFor(Collective c);

// Per call.
struct CollOptions {
  Algorithm algorithm = Algorithm::kAuto;
  // Relays K of kRelay (0 = the most: broadcast K = n with the root, reduce K = n, allreduce
  // K = n, Send K = n - 2). Ranges: broadcast 1..n (K < n: the root does not relay), reduce
  // 1..n, allreduce 1..n, Send 1..n-2; relays are the lowest ranks that qualify.
  int relays = 0;
  // Pipeline unit of kChain (0 = 64 KiB); rounded to whole elements.
  size_t chunk_bytes = 0;
};

// Per group (creation).
// How a member waits for the others in the group's shared slots (GroupOptions::slot_wait).
enum class SlotWait {
  // Polls the slots and the runtime; where the group's members on this host outnumber the
  // CPUs they may run on, it gives the CPU away (sched_yield) after every idle pass, as Open
  // MPI does when oversubscribed.
  kPoll,
  // As kPoll for 50 us, then sleeps (a futex in the slot area) until a member completes the
  // operation (that member wakes the sleepers) or 1 ms passed, and polls again. Not the
  // default: at 4 processes on 2 cores of a VM the wake-ups cost more than the turns of the
  // CPU they save (docs/collectives.md, "Waiting").
  kSleep,
};

struct GroupOptions {
  // Tells apart groups with the same members in one context (World and FromStartpoints).
  uint64_t tag = 0;
  // How long creation waits for every member to create the group too, and Shrink for the
  // survivors' answers (milliseconds).
  std::chrono::milliseconds timeout{30000};
  // Forced algorithm choices, "allreduce=ring,broadcast=relay" (CollectiveName=AlgorithmName);
  // they beat the table (not CollOptions::algorithm). The environment variable
  // UKAI_COLL_ALGORITHMS adds to it (World, FromStartpoints; Split and Shrink inherit).
  std::string algorithms;
  // Messages of at least this many bytes are sent only once the receiver is ready for them
  // (rendezvous; on one host it then reads them from the sender's memory). 0 = never.
  size_t rendezvous_bytes = size_t{32} << 10;
  // Blocks of an Alltoall smaller than this go at once even from rendezvous_bytes on: in an
  // exchange every member sends and receives one block per peer, so a member that goes
  // ahead is ahead by at most one operation's blocks, and the announcement's round trip
  // would be most of a block's time (64 KiB per pair over shm, 2 members: 11.3 us with it,
  // 6.9 us without; docs/collectives.md). 0 = as every other collective.
  size_t exchange_eager_bytes = size_t{128} << 10;
  // Large messages between members on one host are read straight from the sender's memory
  // (process_vm_readv; memcpy inside one process) once the member's pid is proven at
  // creation; else (or false) the sender sends them, from the shm pool where there is one.
  bool single_copy = true;
  // ... also from other processes when the group's members on this host outnumber the CPUs
  // they may run on. By default not: there CPU time bounds a collective, and the sender's
  // copy into the shm pool plus the receiver's copy out of it (memcpy, ~20 us per MiB on the
  // development machine) cost less of it than one process_vm_readv (~79 us per MiB);
  // docs/collectives.md, "Large steps when processes outnumber the cores".
  bool single_copy_oversubscribed = false;
  // Data messages are cut into segments of at most this many bytes (whole elements), 0 = the
  // default 4 MiB.
  size_t segment_bytes = size_t{4} << 20;
  // Steps of Broadcast, Scatter and Gather of at least this many bytes between members whose
  // memory is readable (single_copy) are copied by both sides at once: the receiver asks the
  // sender to write the first half into its buffer (process_vm_writev; memcpy inside one
  // process) while it reads the second half. 0 = never.
  size_t shared_copy_bytes = size_t{256} << 10;
  // When every member is on one host (and asks for them), barriers and allreduces of at
  // most 512 bytes per member that take the automatic choice (CollOptions::algorithm kAuto,
  // no forced choice) are done in shared-memory slots instead of messages: each member
  // publishes its contribution and combines everyone's in rank order (bitwise as `direct`).
  // A slot operation completes when its caller waits for or tests it.
  bool shared_slots = true;
  // How a member waits in the shared slots (SlotWait above). Members may differ.
  SlotWait slot_wait = SlotWait::kPoll;
};

// The handle of a non-blocking collective. Copyable (copies share the operation).
class CollRequest {
 public:
  CollRequest() = default;
  bool valid() const { return op_ != nullptr; }
  // True once the operation completed (successfully or not). Never blocks; without a
  // progress thread it runs one progress pass first.
  bool Test() const;
  // Blocks until the operation completed and returns its status. Drives progress itself.
  Status Wait() const;
  // As Wait, but returns kTimeout after `timeout` (the operation stays in flight).
  Status WaitFor(std::chrono::milliseconds timeout) const;
  // The outcome once complete; kFailedPrecondition before.
  Status status() const;

  explicit CollRequest(std::shared_ptr<internal::CollOp> op) : op_(std::move(op)) {}

 private:
  std::shared_ptr<internal::CollOp> op_;
};

class Group {
 public:
  // The world of the job (`ukai launch` or `mpirun`): rank r of the group is process r of
  // the bootstrap, context `ctx.id()` (every process must call World with a context of the
  // same id). Waits until every member did (GroupOptions::timeout).
  static Result<std::unique_ptr<Group>> World(Context& ctx, GroupOptions options = {});
  // The group of the contexts `members` name (startpoints to any endpoint of each member
  // context; rank = position). `ctx` must be one of them; every member passes the same list
  // (and tag). Waits until every member created it.
  static Result<std::unique_ptr<Group>> FromStartpoints(Context& ctx,
                                                        std::span<const Startpoint> members,
                                                        GroupOptions options = {});
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  // Collective over this group: members with the same `colour` (>= 0) form a new group,
  // ranked by (key, rank in this group). A negative colour (kUndefinedColour) gives nullptr.
  static constexpr int kUndefinedColour = -1;
  Result<std::unique_ptr<Group>> Split(int colour, int key);
  // Called by every survivor after members failed: agrees on the failed set and returns the
  // group of the others (ranks in the old order). Members failing meanwhile are left out too.
  Result<std::unique_ptr<Group>> Shrink();

  int rank() const;
  int size() const;
  uint64_t id() const;
  Context& context() const;
  // A startpoint to the member's collective endpoint.
  const Startpoint& member(int rank) const;
  // The module whose figures select the algorithms (the slowest any member uses to reach
  // another, agreed at creation): "inproc", "shm", "mpi", "tcp".
  const std::string& module() const;
  // Whether this group does its small barriers and allreduces in shared slots
  // (GroupOptions::shared_slots; agreed at creation).
  bool shared_slots() const;
  // Ranks known failed or departed, ascending.
  std::vector<int> FailedMembers() const;
  // The algorithm kAuto takes for `c` with `bytes` per member (the table, then forced
  // choices of GroupOptions::algorithms).
  Algorithm Select(Collective c, size_t bytes) const;

  // ---- non-blocking (argument errors give an already-failed request) ----
  CollRequest IBarrier(const CollOptions& o = {});
  CollRequest IBroadcast(MutView buf, int root, const CollOptions& o = {});
  // recv.count elements go to each rank; root's send holds size() * recv.count.
  CollRequest IScatter(ConstView send, MutView recv, int root, const CollOptions& o = {});
  // send.count elements from each rank; root's recv holds size() * send.count.
  CollRequest IGather(ConstView send, MutView recv, int root, const CollOptions& o = {});
  CollRequest IAllgather(ConstView send, MutView recv, const CollOptions& o = {});
  // send.count elements; root's recv holds as many. send == recv at the root: in place.
  CollRequest IReduce(ConstView send, MutView recv, const Reduction& op, int root,
                      const CollOptions& o = {});
  // send.data == recv.data: in place.
  CollRequest IAllreduce(ConstView send, MutView recv, const Reduction& op,
                         const CollOptions& o = {});
  // send holds size() * recv.count elements; rank r gets the reduction of block r.
  CollRequest IReduceScatter(ConstView send, MutView recv, const Reduction& op,
                             const CollOptions& o = {});
  // send and recv hold size() blocks of send.count / size() elements; block j goes to rank j.
  CollRequest IAlltoall(ConstView send, MutView recv, const CollOptions& o = {});
  // Point-to-point: `data` to rank `dest` with `tag` (>= 0); matched in order with the
  // receiver's Recv(source = this rank, same tag), whose buffer must have the same size.
  // kRelay splits it over the direct path and K relays (the relays forward in their
  // progress engines, no call of theirs). Completes once every part was sent.
  CollRequest ISend(ConstView data, int dest, int tag, const CollOptions& o = {});
  CollRequest IRecv(MutView data, int source, int tag);

  // ---- blocking ----
  Status Barrier(const CollOptions& o = {}) { return IBarrier(o).Wait(); }
  Status Broadcast(MutView buf, int root, const CollOptions& o = {}) {
    return IBroadcast(buf, root, o).Wait();
  }
  Status Scatter(ConstView send, MutView recv, int root, const CollOptions& o = {}) {
    return IScatter(send, recv, root, o).Wait();
  }
  Status Gather(ConstView send, MutView recv, int root, const CollOptions& o = {}) {
    return IGather(send, recv, root, o).Wait();
  }
  Status Allgather(ConstView send, MutView recv, const CollOptions& o = {}) {
    return IAllgather(send, recv, o).Wait();
  }
  Status Reduce(ConstView send, MutView recv, const Reduction& op, int root,
                const CollOptions& o = {}) {
    return IReduce(send, recv, op, root, o).Wait();
  }
  Status Allreduce(ConstView send, MutView recv, const Reduction& op, const CollOptions& o = {}) {
    return IAllreduce(send, recv, op, o).Wait();
  }
  Status ReduceScatter(ConstView send, MutView recv, const Reduction& op,
                       const CollOptions& o = {}) {
    return IReduceScatter(send, recv, op, o).Wait();
  }
  Status Alltoall(ConstView send, MutView recv, const CollOptions& o = {}) {
    return IAlltoall(send, recv, o).Wait();
  }
  Status Send(ConstView data, int dest, int tag, const CollOptions& o = {}) {
    return ISend(data, dest, tag, o).Wait();
  }
  Status Recv(MutView data, int source, int tag) { return IRecv(data, source, tag).Wait(); }

  explicit Group(std::shared_ptr<internal::GroupState> state);
  internal::GroupState* state() const { return state_.get(); }

 private:
  std::shared_ptr<internal::GroupState> state_;
};

}  // namespace ukai::rt

#endif  // UKAI_RT_GROUP_HPP_
