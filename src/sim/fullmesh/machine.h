// Machine: the message-level discrete-event model of the optical full mesh. Events are the
// controller's two (an operation arrives; an operation finishes); at equal times finishes
// come first, then arrivals in workload order. When the controller starts an operation,
// its plan fixes how long it takes (PlanTimer: its links are its own until it finishes)
// and, with `data`, its bytes are moved and combined in real buffers and checked against the
// result computed directly (the buffers are freed at once). Streaming (a source and a sink),
// the machine's memory is the live rows, their links and the N(N-1) link table, nothing
// else; given a vector, it also keeps the workload and one result per operation.
//
// Main-node variant (embodiment 1, TableSite::kMainNode): the main node sends an
// instruction sheet of 2N entries to every node before the transfer; the operation starts
// T0 + 2N * sheet_entry_bytes / B later (its links are held meanwhile).
//
// Thread safety: none; one thread drives a Machine. Two Machines are independent.
#ifndef UKAI_SIM_FULLMESH_MACHINE_H_
#define UKAI_SIM_FULLMESH_MACHINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "sim/fullmesh/controller.h"
#include "sim/fullmesh/fullmesh_types.h"

namespace ukai::sim::fullmesh {

struct OpResult {
  int64_t op_index = -1;
  double arrival_us = 0, start_us = 0, finish_us = 0;
  int relays = 0;                // K used
  std::vector<int> relay_nodes;  // the K relay nodes, ascending
  int64_t transfers = 0;         // link segments of its plan (what its cost grows with)
  bool direct = false;           // the direct link carried data
  double baseline_us = 0;        // the same operation alone on the plain full mesh
  double tree_us = 0;            // binomial tree on the plain full mesh (0: not a tree operation)
  bool data_checked = false;
  bool data_ok = false;
  double time_us() const { return finish_us - arrival_us; }
};

// The event a Machine::Step processed (what `ukai sim tables` labels each snapshot with).
struct MachineEvent {
  bool finish = false;    // true: a communication finished; false: an operation arrived
  double at_us = 0;       // when
  int64_t op_index = -1;  // the workload's operation number (from 0)
  int16_t number = -1;    // finish: the communication number it held (new: -1)
};

// How errors about one operation name it: "{key}: {item} {i + 1}: ...", with `key` as
// Status::key(). A list workload: "workload.ops: operation 3: ..."; a size sweep names its
// own keys: "workload.operation: at workload.bytes item 3: ...".
struct OpNaming {
  std::string_view key = "workload.ops";
  std::string_view item = "operation";
};

// Checks a config and a workload; errors name the key ("fullmesh.k_min", "workload.ops")
// and, for an operation, its position (as `naming` says).
Status ValidateFullMesh(const FullMeshConfig& config, const std::vector<Operation>& ops,
                        const OpNaming& naming = {});

// The cyclic-AWG wavelength plan: node i reaches node j on wavelength (j - i) mod N (1..N-1)
// through its own fibre pair. Checks that every ordered pair has its own (input fibre,
// wavelength) and no two sources reach one output fibre on the same wavelength; returns the
// number of fibres (2N per plane).
Result<int64_t> CheckCyclicAwgPlan(int nodes, int planes);

// Closed-form binomial-tree time of `op` on the plain full mesh (0 when not a tree
// collective): what the simulated TreePlan takes when the member count is a power of two.
double TreeBaselineUs(const Operation& op, int members, double bytes_per_us, double t0_us);

// The next operation in arrival order (false when there is none), and where a finished
// operation's result goes (its number counts the source's operations from 0).
using OpSource = std::function<bool(Operation* op)>;
using OpSink = std::function<void(int64_t index, const Operation& op, const OpResult& r)>;

class Machine {
 public:
  // `config` and `ops` must pass ValidateFullMesh. Results: results(), in workload order.
  Machine(const FullMeshConfig& config, std::vector<Operation> ops);
  // Streaming: operations come from `source` in non-decreasing arrival time (one earlier
  // than the previous arrives with it) and must each pass ValidateFullMesh; each result
  // goes to `sink` when its operation finishes; results() stays empty.
  Machine(const FullMeshConfig& config, OpSource source, OpSink sink);

  // Processes the next event; false when none is left.
  bool Step();
  // Runs to the end; results in workload order.
  const std::vector<OpResult>& Run();

  double now() const { return now_; }
  const Controller& controller() const { return *controller_; }
  const std::vector<OpResult>& results() const { return results_; }
  int64_t completed() const { return completed_; }
  size_t max_rows() const { return max_rows_; }
  // The event the last Step processed (default-constructed before the first).
  const MachineEvent& last_event() const { return last_event_; }

 private:
  struct Finish {
    double at;
    int64_t seq;
    int16_t number;
    int64_t op_index;
    bool operator>(const Finish& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  struct Live {
    Operation op;
    OpResult result;
  };
  void Init();
  void Pull();  // fetches the next arrival into next_
  void Launch(std::vector<Started>* started);

  FullMeshConfig config_;
  OpSource source_;
  OpSink sink_;
  bool has_next_ = false;
  Operation next_;
  int64_t next_index_ = 0;
  std::unique_ptr<Controller> controller_;
  std::vector<Live> live_;  // by communication number: started, not finished
  std::priority_queue<Finish, std::vector<Finish>, std::greater<Finish>> finishes_;
  std::vector<OpResult> results_;
  std::vector<Started> started_;
  double now_ = 0;
  double sheet_us_ = 0;
  int64_t seq_ = 0;
  int64_t completed_ = 0;
  size_t max_rows_ = 0;
  MachineEvent last_event_;
};

}  // namespace ukai::sim::fullmesh

#endif  // UKAI_SIM_FULLMESH_MACHINE_H_
