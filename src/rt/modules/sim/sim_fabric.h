// SimFabric: runtimes (in one process) on one simulated machine -- the meeting point of
// `sim` modules, as InprocFabric is of inproc modules (docs/sim-module.md).
//
// Every frame a runtime sends becomes a message of its wire size from its process's node to
// the peer's node in a SimNetwork (the flit-level simulator behind rt/sim_machine/); the
// frame itself waits here and is handed to the peer, unchanged, when the network delivers
// the message. A driver thread advances the network conservatively: it steps cycle c only
// when every process that could still send has reached a later simulated time:
//   - a program thread holds its runtimes at its clock from a runtime call until it waits
//     (VirtualTime::ThreadIdle); after a delivery it holds them again until it looked;
//   - a runtime holds at its clock while frames delivered to it are not yet dispatched or
//     its threaded handlers run.
// Clocks: a runtime's clock moves to a delivery's cycle (when later), and a program
// thread's by the CPU time it used between runtime calls x cpu_scale; a send is stamped with
// the later of its runtime's and its thread's clock. Messages ready in one cycle enter the
// network ordered by (cycle, process, send order): with cpu_scale = 0 a program whose
// communication has no races gets the same simulated times on every run.
//
// Failures: a node failure of the config stops the runtimes on that node at its cycle (their
// peers are told, as of a crashed process); a process that holds the simulation for
// stall_ms of wall time stops the run with an error naming it and its last call (status()).
//
// Ownership: shared by the modules of its runtimes (RuntimeOptions::sim_fabric); owns the
// SimNetwork and the driver thread. Thread safety: every public method is thread safe.
#ifndef UKAI_RT_MODULES_SIM_SIM_FABRIC_H_
#define UKAI_RT_MODULES_SIM_SIM_FABRIC_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ukai/rt/byte_block.hpp"
#include "ukai/rt/startpoint.hpp"

namespace ukai::rt {

// A thread of a program in one process in a settled idle round (it lets the machine
// advance) sleeps until something happens that it may wait for, at most this long: its wait
// may also end by what another thread of the program does outside the runtime (a launched
// process has its own bound, sim_remote.cc).
inline constexpr auto kSimIdleSleep = std::chrono::milliseconds(1);

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), nanoseconds.
int64_t ThreadCpuNs();

// A message of the network that was delivered (or lost) in `cycle`; `user` as given to Add.
struct SimArrival {
  uint64_t user = 0;
  int64_t cycle = 0;
  bool lost = false;
};

// The simulated network as the fabric sees it (implemented over ukai_sim's RuntimeMachine by
// rt/sim_machine/sim_machine.h). Not thread safe: the fabric serialises its calls.
class SimNetwork {
 public:
  struct NodeFailure {
    int node;
    int64_t cycle;
  };
  virtual ~SimNetwork() = default;
  virtual int nodes() const = 0;
  virtual double clock_mhz() const = 0;
  virtual int64_t now() const = 0;
  virtual std::vector<NodeFailure> node_failures() const = 0;
  // A message of `bytes` from `src` to `dst` created at the first stepped cycle >= earliest.
  virtual void Add(int src, int dst, int64_t bytes, int64_t earliest, uint64_t user) = 0;
  // A message is pending (added, not yet delivered or lost).
  virtual bool Busy() const = 0;
  // With nothing pending: moves the clock to `to`. Errors stop the run (as Step's): what
  // else the machine simulates meanwhile (the gateway's traffic) may fail.
  virtual Status Skip(int64_t to) = 0;
  // One cycle; its arrivals appended.
  virtual Status Step(std::vector<SimArrival>* out) = 0;
};

// Who calls the fabric's virtual-time methods: by default (nullptr) the calling thread (its
// CPU time read here); or a thread of another process whose runtime the launcher serves
// (`ukai launch --sim`, rt/launch/sim_host.h): `key` != 0 names that thread (the process in
// its upper 32 bits, the thread in the lower), `cpu_ns` is its CPU time so far. Deliveries
// dispatched in such a process make only that process's threads look again.
struct SimCaller {
  uint64_t key = 0;
  int64_t cpu_ns = 0;
  uint64_t process() const { return key >> 32; }
};

struct SimFabricOptions {
  double cpu_scale = 1.0;     // sim.cpu_scale
  std::vector<int> node_map;  // sim.node_map (empty: process i on node i)
  std::string node_map_where;
  int64_t stall_ms = 10000;  // sim.stall_ms
  int processes = 0;         // processes expected (0: unknown); checked against the nodes
};

// Frames one sender posted to one peer that the peer has not taken yet (flow control).
struct SimInFlight {
  std::atomic<uint64_t> frames{0};
  std::atomic<uint64_t> bytes{0};
};

// What the fabric calls on a module (with the fabric's lock held: must not call back; but
// Kick, which is called without it).
class SimMember {
 public:
  virtual ~SimMember() = default;
  // A frame the network delivered (its bytes unchanged). Kick follows once the step's
  // arrivals are all handed over.
  virtual void Arrive(ByteBlock&& frame, std::shared_ptr<SimInFlight> in_flight) = 0;
  // Frames arrived (called by the driver after a step, the fabric's lock released): the
  // member dispatches them now on the calling thread if its runtime lets it
  // (ModuleHost::TryProgressPass), else wakes whoever will. The driver goes on only once
  // they are dispatched anyway (a delivery holds the runtime): running the non-threaded
  // handlers here saves the hand-off to the runtime's progress thread and back.
  virtual void Kick() = 0;
  // Peer `peer` left (orderly) or stopped (its node failed, or the run stopped).
  virtual void PeerGone(RuntimeId peer, bool orderly, const Status& why) = 0;
  // This runtime's own node failed, or the run stopped: every peer is gone.
  virtual void Stopped(const Status& why) = 0;
};

// Per-process figures at the end (or so far).
struct SimProcessTimes {
  int process = 0;
  int node = 0;
  RuntimeId runtime = 0;
  int64_t finish_cycle = 0;  // its clock when it left (or now)
  bool failed = false;
};

class SimFabric {
 public:
  // Checks the options against the network (nodes for `processes`, node_map in range:
  // errors name sim.node_map) and starts the driver.
  static Result<std::shared_ptr<SimFabric>> Create(std::unique_ptr<SimNetwork> net,
                                                   SimFabricOptions options);
  ~SimFabric();
  SimFabric(const SimFabric&) = delete;
  SimFabric& operator=(const SimFabric&) = delete;

  uint64_t id() const { return id_; }
  double clock_mhz() const { return clock_mhz_; }
  // sim.cpu_scale: 0 charges no CPU time (no CLOCK_THREAD_CPUTIME_ID calls are needed).
  double cpu_scale() const { return options_.cpu_scale; }

  // Membership. Join gives the runtime the next process number (or `process` >= 0) and its
  // node; kInvalidArgument when no node is left for it (naming sim.node_map). The joining
  // thread (`caller`) holds the runtime from then on, as after a runtime call "Init" (in the
  // same step: the machine cannot move on between the two).
  Result<int> Join(RuntimeId rt, SimMember* m, int process = -1, const SimCaller* caller = nullptr);
  void Leave(RuntimeId rt);
  bool Has(RuntimeId rt);

  // Sends `frame` from runtime `from` to runtime `to` (kUnavailable when `to` is not, or no
  // longer, reachable).
  Status Post(RuntimeId from, RuntimeId to, ByteBlock&& frame,
              std::shared_ptr<SimInFlight> in_flight, const SimCaller* caller = nullptr);
  // The member's progress dispatched `n` frames it had taken (VirtualTime's contract).
  void Dispatched(RuntimeId rt, int n, const SimCaller* caller = nullptr);

  // Virtual time (rt/core/virtual_time.h) on behalf of runtime `rt`.
  // `settled`: the caller vouches that nothing was dispatched in its process since the
  // thread's previous round (a remote thread whose unsettled rounds were not told).
  void ThreadIdle(RuntimeId rt, const char* call, const SimCaller* caller = nullptr,
                  bool settled = false);
  void ThreadCall(RuntimeId rt, const char* call, const SimCaller* caller = nullptr);
  int64_t NowCycles(RuntimeId rt, const SimCaller* caller = nullptr);
  void HandlerQueued(RuntimeId rt);
  void HandlerBegin(RuntimeId rt, const SimCaller* caller = nullptr);
  void HandlerEnd(RuntimeId rt, const SimCaller* caller = nullptr);

  // Remote threads and processes (the launcher's): a thread that ended; a runtime whose
  // process died without leaving (its peers see it fail, as with a crash; `why` says how).
  void ForgetRemoteThread(uint64_t key);
  // A remote process posted a frame to a runtime no longer on the machine (its Post had
  // already returned): counted in Counters()["frames_refused"].
  void CountRefused();
  // The machine's time starts when `n` runtimes have joined (the launcher's processes: none
  // may start late); AbandonJoin: one of them will never join (its process died first).
  void ExpectJoins(int n);
  void AbandonJoin();
  void FailRuntime(RuntimeId rt, const Status& why);
  // The launcher's side steps the network itself: after a reader thread replayed what a
  // process sent, it calls StepOn, which steps the network as far as the conservative
  // horizon allows and hands the arrivals over (SimMember::Kick) on the calling thread,
  // unless another thread is stepping (that one sees the change: nothing is lost). Only
  // for threads that are no program thread of this fabric and whose members' Kick does not
  // call back into it (rt/launch/sim_host.cc). SetSteppedByCallers: the driver thread then
  // only looks every 10 ms (the stall check, and a step nobody took), instead of being
  // woken by every call.
  void StepOn();
  void SetSteppedByCallers();
  // Member `rt`'s module goes away (its process ended; the launcher's channel closes): the
  // fabric calls it no more (after a Kick running now). Fails the runtime if it had not.
  void DetachMember(RuntimeId rt, const Status& why);

  // OK, or why the run stopped (a stalled process, the network's deadlock watchdog).
  Status status();
  // Nothing is in flight: no frame in the network or held for order, none delivered and not
  // yet dispatched, no threaded handler queued or running (a harness waits for this before
  // it starts its threads on a next step: no clock moves meanwhile).
  bool Quiet();
  // The network's current cycle, the processes' figures, counters.
  int64_t network_cycle();
  std::vector<SimProcessTimes> Processes();
  std::map<std::string, uint64_t> Counters();
  // Runs `fn` on the network with the fabric's lock held (results at the end).
  template <typename F>
  auto WithNetwork(F&& fn) {
    std::lock_guard<std::mutex> lock(mu_);
    return fn(*net_);
  }

 private:
  struct Member;
  struct Thread;
  struct InFlightFrame {
    RuntimeId from, to;
    int src_node;
    uint64_t pair_seq;  // its place among the frames `from` sent to `to`
    ByteBlock frame;
    std::shared_ptr<SimInFlight> in_flight;
  };
  // Frames from one runtime to another reach it in the order sent (packets may overtake
  // each other on other virtual channels): later ones wait here for the earlier ones.
  struct Channel {
    uint64_t next_send = 0, next_deliver = 0;
    std::map<uint64_t, std::unique_ptr<InFlightFrame>> held;  // null: lost
  };
  void Deliver(InFlightFrame& f, int64_t cycle);
  // A member got frames or peer events: the driver kicks it (SimMember::Kick).
  void NoteKick(Member& m);
  // Kicks the members noted (the lock released meanwhile).
  void KickMembers(std::unique_lock<std::mutex>& lock);
  // Wakes the driver (in one process) when it waits and could now step: a member to kick,
  // or something to simulate below the horizon. Under the lock, after the change.
  void WakeDriver();
  void Drop(InFlightFrame& f, bool lost);
  // (earliest, process, send order, user)
  using Ready = std::tuple<int64_t, int, uint64_t, uint64_t>;

  SimFabric(std::unique_ptr<SimNetwork> net, SimFabricOptions options);
  void Run();
  // Steps while the horizon allows, kicking members first (the lock released meanwhile);
  // the caller set stepping_.
  void Step(std::unique_lock<std::mutex>& lock);
  // A running process, every expected one joined, and something to simulate.
  bool Work() const;
  int64_t Horizon() const;
  Status Advance(std::unique_lock<std::mutex>& lock, int64_t horizon);
  void HandleArrivals(const std::vector<SimArrival>& arrivals);
  void FailNode(int node, int64_t cycle);
  void StopRun(const Status& why);
  std::string StallMessage(int64_t horizon) const;
  Thread* ThreadRecord(bool create);
  // The record of `caller` (nullptr: the calling thread's).
  Thread* Caller(const SimCaller* caller, bool create);
  void ChargeCpu(Thread* t, const SimCaller* caller);
  int64_t CpuOf(const Thread& t, const SimCaller* caller) const;
  // ThreadCall's work, the lock held.
  void CallLocked(RuntimeId rt, const char* call, const SimCaller* caller);
  uint64_t Epoch(const Thread& t) const;
  // A call of `t` (an idle round or not): records the epoch it saw (Thread::settled).
  void Looked(Thread* t, bool idle);
  // `t` lets the simulation advance: idle and settled with nothing new since.
  bool Waits(const Thread& t) const;
  // Launched processes (callers step) all wait in the runtime and nothing is in flight, due
  // or to hand over: only a wall-clock timeout of the program could still change anything.
  // mu_ held.
  bool EveryoneWaits() const;
  std::string EveryoneWaitsMessage() const;
  // Something happened every waiting thread must look at (as ++seq_ does for local ones).
  void BumpEpochs();
  // Something happened a thread of this process blocked in an idle round may wait for (a
  // step's arrivals, a dispatch, a handler's end, a peer event): wakes them.
  void Activity();
  void FailMembers(const std::vector<RuntimeId>& failed, const Status& why);
  Member* FindMember(RuntimeId rt);

 public:
  // A thread's record outlives neither the thread nor the fabric: the thread's slot holds
  // the anchor, and ForgetThread(record) runs when the thread ends (sim_fabric.cc).
  struct Anchor {
    std::mutex mu;
    SimFabric* fabric = nullptr;
  };
  void ForgetThread(void* record);
  // internal::ThreadWaitsOutsideRuntime for the calling thread's record.
  void ThreadIdleAll(const char* call);

 private:
  std::shared_ptr<Anchor> anchor_;
  std::unique_ptr<SimMember> detached_;  // the module of detached members (DetachMember)

  const uint64_t id_;
  std::unique_ptr<SimNetwork> net_;
  const SimFabricOptions options_;
  const double clock_mhz_;
  std::vector<SimNetwork::NodeFailure> failures_;
  size_t next_failure_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable driver_cv_;  // the driver's, when callers step (SetSteppedByCallers)
  bool stop_ = false;
  bool stepping_ = false;      // a thread is in Step()
  bool callers_step_ = false;  // SetSteppedByCallers
  Status status_;
  uint64_t seq_ = 0;       // dispatches finished: a waiting thread holds again until it looked
  uint64_t activity_ = 0;  // Activity() calls
  // The driver runs the members' kicks: their dispatches wake waiting threads once, after.
  int kicks_running_ = 0;
  std::condition_variable idle_cv_;  // local threads blocked in a settled idle round
  std::unordered_map<RuntimeId, std::unique_ptr<Member>> members_;
  int next_process_ = 0;
  int joins_ = 0, expected_joins_ = 0;
  std::vector<SimProcessTimes> departed_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::unordered_map<uint64_t, Thread*> remote_threads_;  // by SimCaller::key
  std::unordered_map<uint64_t, uint64_t> remote_epoch_;   // by SimCaller::process()
  std::unordered_map<uint64_t, InFlightFrame> frames_;
  std::map<std::pair<RuntimeId, RuntimeId>, Channel> channels_;
  uint64_t next_user_ = 1;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready_;
  std::vector<SimArrival> arrivals_;
  std::vector<RuntimeId> kick_;  // members that got frames in this step
  std::thread::id driver_id_;    // the driver's thread: never a program thread
  uint64_t frames_sent_ = 0, frames_delivered_ = 0, frames_lost_ = 0, frames_dropped_ = 0;
  uint64_t late_frames_ = 0, bytes_sent_ = 0, frames_refused_ = 0;
  std::thread driver_;
};

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SIM_SIM_FABRIC_H_
