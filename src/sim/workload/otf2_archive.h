// Otf2Archive: reads an OTF2 archive (libotf2) for replay: the global definitions that
// matter to communication -- the clock, MPI ranks, communicators and their groups, RMA
// windows, which regions are MPI calls -- and, per location, its events in order as compact
// records, streamed from the event files with a per-location look-ahead buffer (Peek).
//
// Ranks and locations: the members of the MPI locations group (OTF2_GROUP_TYPE_COMM_
// LOCATIONS, paradigm MPI) in order: rank i is its i-th location (the rank's main location).
// Every other CPU-thread location of the same location group (the rank's process) is one of
// rank i's threads -- e.g. the runtime's contexts, which receive and answer RSRs -- and is
// replayed too, as its own stream of events of rank i. Locations are numbered 0..
// locations()-1: the ranks' main locations first (location i = rank i's), then the other
// threads in the order of their definitions. Locations of no rank's process (another
// paradigm's, a metric or GPU location) are not read. An archive without an MPI locations
// group (not written by an MPI measurement) has one rank per CPU-thread location, in the
// order of their definitions.
// Communicators: a Comm's group of type COMM_GROUP lists world ranks (comm rank = index);
// COMM_LOCATIONS lists every rank; COMM_SELF is each rank alone. RMA windows name their
// communicator.
//
// Memory: the definitions, and per location the events between its replay position and the
// farthest look-ahead (an MPI_Irecv's request to its completion, a collective's begin to
// its end): the archive is not loaded.
//
// Errors (kIoError, kParseError, kUnsupported) name the anchor file and what is wrong: no
// such archive, a definition or event file libotf2 cannot read.
//
// Thread safety: none; one reader per archive.
#ifndef UKAI_SIM_WORKLOAD_OTF2_ARCHIVE_H_
#define UKAI_SIM_WORKLOAD_OTF2_ARCHIVE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace ukai::sim {

enum class Otf2EventKind : uint8_t {
  kEnter,
  kLeave,
  kSend,           // MpiSend: peer = receiver, comm, tag, bytes
  kIsend,          // MpiIsend: ... request
  kIsendComplete,  // request
  kIrecvRequest,   // request
  kRecv,           // MpiRecv: peer = sender, comm, tag, bytes
  kIrecv,          // MpiIrecv: ... request
  kRequestTest,    // request
  kRequestCancelled,
  kCollBegin,
  kCollEnd,  // op, comm, peer = root, bytes = sent, bytes2 = received
  kRmaPut,   // comm = window, peer = remote, bytes, request = matching id
  kRmaGet,
  kRmaAtomic,            // bytes = sent, bytes2 = received
  kRmaCompleteBlocking,  // comm = window, request = matching id
  kRmaCompleteNonBlocking,
  kRmaCompleteRemote,
  kRmaCollBegin,
  kRmaCollEnd,  // op, comm = window, peer = root, bytes, bytes2
  kRmaWinCreate,
  kRmaWinDestroy,
  kBufferFlush,  // request = the flush's stop time
  kTimeOnly,     // a marker without communication (program begin/end, metrics, ...)
  kUnmodelled,   // name = index into Otf2EventNames()
};

struct Otf2Event {
  Otf2EventKind kind = Otf2EventKind::kTimeOnly;
  uint8_t op = 0;     // OTF2_CollectiveOp
  uint16_t name = 0;  // kUnmodelled, kTimeOnly: the record's name
  uint32_t peer = 0;  // receiver / sender / remote / root
  uint32_t tag = 0;
  uint64_t time = 0;  // timer ticks
  uint64_t comm = 0;  // communicator or RMA window; kEnter/kLeave: the region
  uint64_t bytes = 0;
  uint64_t bytes2 = 0;
  uint64_t request = 0;  // request id / matching id / stop time
};

// The event record names of OTF2 3.0 (indices of Otf2Event::name).
std::span<const std::string_view> Otf2EventNames();

struct Otf2Comm {
  std::string name;
  std::vector<int> members;  // world ranks by communicator rank
  bool self = false;         // MPI_COMM_SELF: each rank alone
};

class Otf2Archive {
 public:
  static Result<std::unique_ptr<Otf2Archive>> Open(const std::string& anchor);
  ~Otf2Archive();
  Otf2Archive(const Otf2Archive&) = delete;
  Otf2Archive& operator=(const Otf2Archive&) = delete;

  const std::string& path() const { return path_; }
  int ranks() const { return ranks_; }
  // Locations replayed (>= ranks()), their rank and their OTF2 reference.
  int locations() const { return static_cast<int>(locations_.size()); }
  int rank_of(int location) const { return locations_[static_cast<size_t>(location)].rank; }
  uint64_t location_ref(int location) const {
    return locations_[static_cast<size_t>(location)].ref;
  }
  uint64_t timer_resolution() const { return timer_resolution_; }  // ticks per second
  uint64_t global_offset() const { return global_offset_; }        // the trace's first tick
  // nullptr when the archive defines no such communicator.
  const Otf2Comm* FindComm(uint64_t ref) const;
  // The communicator of an RMA window (kNotFound naming it).
  Result<uint64_t> WindowComm(uint64_t window) const;
  bool IsMpiRegion(uint64_t region) const;
  std::string CommName(uint64_t ref) const;

  // The event `ahead` places after `location`'s replay position (0: the next one); nullptr
  // at the end of its events. Errors: libotf2 cannot read the event file, or hands out more
  // events than the file can hold (a file without its end-of-file record).
  Result<const Otf2Event*> Peek(int location, size_t ahead = 0);
  // Moves `location`'s replay position past its next event (which Peek returned).
  void Pop(int location);
  // Events of `location` read from its file so far.
  int64_t events_read(int location) const;

  struct Impl;  // libotf2 state (otf2_archive.cc)
  // Called while the definitions are read.
  void SetClock(uint64_t resolution, uint64_t offset) {
    timer_resolution_ = resolution == 0 ? 1 : resolution;
    global_offset_ = offset;
  }
  void SetRegion(uint64_t region, bool mpi) { mpi_regions_[region] = mpi; }
  void SetWindow(uint64_t window, uint64_t comm) { windows_[window] = comm; }

 private:
  Otf2Archive() = default;
  Status ReadDefinitions();
  Status AssignLocations();
  Status OpenEvents();

  std::string path_;
  std::unique_ptr<Impl> impl_;
  uint64_t timer_resolution_ = 1;
  uint64_t global_offset_ = 0;
  struct Location {
    uint64_t ref = 0;
    int rank = 0;
  };
  int ranks_ = 0;
  std::vector<Location> locations_;
  std::unordered_map<uint64_t, Otf2Comm> comms_;
  std::unordered_map<uint64_t, uint64_t> windows_;  // window -> communicator
  std::unordered_map<uint64_t, bool> mpi_regions_;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_WORKLOAD_OTF2_ARCHIVE_H_
