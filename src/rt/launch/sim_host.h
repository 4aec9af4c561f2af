// SimHost: the launcher's side of `ukai launch --sim MACHINE.toml` (docs/sim-module.md). The
// launcher hosts the simulated machine (a SimFabric built by the CLI through
// rt/sim_machine/); each process it starts is a remote runtime of that fabric, reached over
// its own socketpair (the child's end inherited as UKAI_SIM_FD; messages: sim_wire.h). One
// poller thread reads every channel (epoll): it replays each process's calls on the fabric
// on behalf of the calling thread (SimCaller), answers them (now replies), and after each
// look at the channels steps the network itself as far as the conservative horizon lets it
// (SimFabric::StepOn: no hand-off to the driver thread).
// Whichever thread steps writes the arrivals and peer events of its step to their processes
// (SimMember::Kick), never waiting for a socket; with each write goes how much of what the
// process posted its peers took (flow control: the counts alone never make a write). A
// writer thread per process sends what did not fit into the socket and, while frames the
// process posted are not all taken, sends their counts when nothing else was written to
// the process since its last look (1 ms after its own write, up to 8 ms apart).
//
// Untrusted input: a message that does not decode, a hello that names another rank than
// the channel's or a runtime id already on the machine, more frames dispatched than were
// delivered: the process is refused or cut off (its peers see it fail) and the launcher
// stops it; the error names the rank (TakeStopped). A process that dies without leaving
// fails on the machine as a crashed process would. A node failure of the machine config
// stops its processes (TakeStopped: the launcher kills them).
//
// Ownership: owns the channels and threads; shares the fabric. Thread safety: the public
// methods are for the launcher's thread; the fabric calls in from its own.
#ifndef UKAI_RT_LAUNCH_SIM_HOST_H_
#define UKAI_RT_LAUNCH_SIM_HOST_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "rt/modules/sim/sim_fabric.h"

namespace ukai::rt {

class SimHost {
 public:
  // Channels for `ranks` processes on `fabric`.
  static Result<std::unique_ptr<SimHost>> Create(std::shared_ptr<SimFabric> fabric, int ranks);
  ~SimHost();
  SimHost(const SimHost&) = delete;
  SimHost& operator=(const SimHost&) = delete;

  // The descriptor rank `rank`'s process inherits (close-on-exec here); after the spawn
  // CloseChildEnd closes the launcher's copy.
  int child_fd(int rank) const;
  void CloseChildEnd(int rank);
  // Readable when TakeStopped has something (for the launcher's poll).
  int wake_fd() const;
  // Ranks to stop since the last call, each with why (a node failure, a lying process).
  struct Stop {
    int rank;
    std::string why;
    bool failure;  // the process broke the protocol (else: its node failed)
  };
  std::vector<Stop> TakeStopped();

 private:
  struct Conn;
  SimHost() = default;
  void PollLoop();
  // Replays what `c` sent so far; false when its channel ended (`why`: OK, or why it was
  // cut off), for EndConn.
  bool ReadConn(Conn& c, std::vector<uint8_t>& buf, Status* why);
  void EndConn(Conn& c, const Status& why);
  void WriteLoop(Conn& c);
  Status Handle(Conn& c, uint8_t type, std::span<const uint8_t> body);
  void StopRank(int rank, const std::string& why, bool failure);

  std::shared_ptr<SimFabric> fabric_;
  std::vector<std::unique_ptr<Conn>> conns_;
  int wake_[2] = {-1, -1};
  int epoll_fd_ = -1;
  std::thread poller_;  // reads every channel (PollLoop)
  struct Shared;
  std::unique_ptr<Shared> shared_;
};

}  // namespace ukai::rt

#endif  // UKAI_RT_LAUNCH_SIM_HOST_H_
