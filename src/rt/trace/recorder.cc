// The recorder: one serial OTF2 archive per process (its part of the job's archive).
#include "rt/trace/recorder.h"

#include <sys/stat.h>
#include <time.h>

#include <otf2/OTF2_Pthread_Locks.h>
#include <otf2/otf2.h>
#include <algorithm>
#include <cstdlib>  // OTF2_Pthread_Locks.h uses malloc/free without including it

#include "rt/trace/archive.h"

namespace ukai::rt::trace {
namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

std::string Otf2Error(int code) {
  const auto c = static_cast<OTF2_ErrorCode>(code);
  return std::string(OTF2_Error_GetName(c)) + " (" + OTF2_Error_GetDescription(c) + ")";
}

// OTF2 writes a full buffer to its file only when the pre-flush callback says so.
OTF2_FlushType PreFlush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_FlushCallbacks kFlush = {PreFlush, nullptr};  // no post-flush: no BufferFlush records

// Chunk memory of one OTF2 buffer: event buffers get at most kChunksPerLocation chunks (a
// refused chunk makes OTF2 write the buffer to its file and start over), other buffers
// (definitions) are not capped. Chunks are kept for the buffer's next round instead of going
// back to the system (a 256 KiB block is an mmap of its own: page faults every round).
struct Chunks {
  std::vector<void*> blocks;
  size_t used = 0;
};
void* AllocateChunk(void*, OTF2_FileType type, OTF2_LocationRef, void** per_buffer, uint64_t size) {
  auto* c = static_cast<Chunks*>(*per_buffer);
  if (c == nullptr) *per_buffer = c = new Chunks;
  if (c->used < c->blocks.size()) return c->blocks[c->used++];
  if (type == OTF2_FILETYPE_EVENTS && c->blocks.size() >= kChunksPerLocation) return nullptr;
  void* block = std::malloc(size);  // OTF2 asks for one chunk size per buffer
  if (block == nullptr) return nullptr;
  c->blocks.push_back(block);
  ++c->used;
  return block;
}
void FreeChunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* c = static_cast<Chunks*>(*per_buffer);
  if (c == nullptr) return;
  c->used = 0;
  if (!final) return;
  for (void* b : c->blocks) std::free(b);
  delete c;
  *per_buffer = nullptr;
}
OTF2_MemoryCallbacks kMemory = {AllocateChunk, FreeChunks};

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

uint64_t Now() { return ClockNs(CLOCK_MONOTONIC); }

Recorder::Recorder(RecorderOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<Recorder>> Recorder::Open(RecorderOptions options) {
  if (options.dir.empty()) return Status::InvalidArgument("OTF2 recording: empty directory name");
  if (options.rank < 0 || options.rank >= options.size ||
      options.world.size() != static_cast<size_t>(options.size)) {
    return Status::InvalidArgument("OTF2 recording: rank " + std::to_string(options.rank) +
                                   " outside a job of " + std::to_string(options.size));
  }
  UKAI_RETURN_IF_ERROR(PrepareArchiveDir(options.dir, /*no_parts=*/false));
  const std::string part = PartAnchorPath(options.dir, options.rank);
  const std::string part_dir = PartsDir(options.dir) + "/" + PartName(options.rank);
  for (const std::string& p : {part, part_dir}) {
    if (Exists(p)) {
      return Status::InvalidArgument("OTF2 recording: " + p +
                                     " exists (a previous run's leftover part?): remove " +
                                     PartsDir(options.dir) + " or choose another directory");
    }
  }
  std::unique_ptr<Recorder> r(new Recorder(std::move(options)));
  UKAI_RETURN_IF_ERROR(r->OpenArchive());
  return r;
}

Status Recorder::OpenArchive() {
  for (int i = 0; i < options_.size; ++i) ranks_[options_.world[i]] = static_cast<uint32_t>(i);
  realtime_offset_ = static_cast<int64_t>(ClockNs(CLOCK_REALTIME) - Now());
  const std::string name = PartName(options_.rank);
  archive_ = OTF2_Archive_Open(PartsDir(options_.dir).c_str(), name.c_str(), OTF2_FILEMODE_WRITE,
                               kChunkBytes, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT,
                               OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (archive_ == nullptr) {
    return Status::IoError("OTF2 recording: cannot open " + PartAnchorPath(options_.dir, rank()));
  }
  const auto fail = [&](int code, const char* what) {
    return Status::IoError("OTF2 recording: " + std::string(what) + " for " +
                           PartAnchorPath(options_.dir, rank()) + ": " + Otf2Error(code));
  };
  if (int e = OTF2_Archive_SetFlushCallbacks(archive_, &kFlush, nullptr); e != OTF2_SUCCESS)
    return fail(e, "flush callbacks");
  if (int e = OTF2_Archive_SetMemoryCallbacks(archive_, &kMemory, nullptr); e != OTF2_SUCCESS)
    return fail(e, "memory callbacks");
  if (int e = OTF2_Pthread_Archive_SetLockingCallbacks(archive_, nullptr); e != OTF2_SUCCESS)
    return fail(e, "locking callbacks");
  // Creates the part's directory (the serial "collective" context of one process).
  if (int e = OTF2_Archive_SetSerialCollectiveCallbacks(archive_); e != OTF2_SUCCESS)
    return fail(e, "create the part");
  if (int e = OTF2_Archive_OpenEvtFiles(archive_); e != OTF2_SUCCESS)
    return fail(e, "open the event files");
  OTF2_Archive_SetCreator(archive_, "ukai runtime");
  std::lock_guard<std::mutex> lock(mu_);
  main_ = AddLocation(0, "rank " + std::to_string(rank()) + " main");
  if (main_ == nullptr) return Status::IoError("OTF2 recording: " + error_);
  return Status::Ok();
}

Recorder::~Recorder() { Finish(); }

Location* Recorder::AddLocation(uint32_t slot, std::string name) {
  auto loc = std::unique_ptr<Location>(
      new Location(this, LocationId(static_cast<uint32_t>(rank()), slot), std::move(name)));
  loc->writer_ = OTF2_Archive_GetEvtWriter(archive_, loc->id_);
  if (loc->writer_ == nullptr) {
    Check(OTF2_ERROR_INVALID, "event writer");
    return nullptr;
  }
  locations_.push_back(std::move(loc));
  return locations_.back().get();
}

Location* Recorder::progress() {
  std::lock_guard<std::mutex> lock(mu_);
  if (progress_ == nullptr && !finished_) {
    progress_ = AddLocation(next_slot_++, "rank " + std::to_string(rank()) + " progress");
  }
  return progress_;
}

Location* Recorder::OpenContext(uint32_t context, std::string_view name) {
  Location* loc;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return nullptr;
    const uint32_t slot = next_slot_++;
    loc = AddLocation(slot, "rank " + std::to_string(rank()) + " context " +
                                std::to_string(context) + " '" + std::string(name) + "'");
  }
  if (loc != nullptr) HandlerEnd(loc);  // ready: the first receive is posted
  return loc;
}

void Recorder::CloseContext(Location* loc) {
  if (loc == nullptr) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ != nullptr) CloseLocationLocked(loc);
}

void Recorder::CloseLocationLocked(Location* loc) {
  // Receives still posted end cancelled (the context is gone, the answer never came).
  std::vector<uint64_t> open(loc->posted_.begin(), loc->posted_.end());
  open.insert(open.end(), loc->answers_.begin(), loc->answers_.end());
  std::sort(open.begin(), open.end());
  for (uint64_t id : open) {
    Check(OTF2_EvtWriter_MpiRequestCancelled(loc->writer_, nullptr, Stamp(loc), id),
          "MpiRequestCancelled");
  }
  loc->posted_.clear();
  loc->answers_.clear();
  uint64_t n = 0;
  OTF2_EvtWriter_GetNumberOfEvents(loc->writer_, &n);
  loc->events_ = n;
  Check(OTF2_Archive_CloseEvtWriter(archive_, loc->writer_), "close an event writer");
  loc->writer_ = nullptr;
}

int64_t Recorder::RankOf(RuntimeId id) {
  auto it = ranks_.find(id);
  if (it != ranks_.end()) return it->second;
  unrecorded_.fetch_add(1, std::memory_order_relaxed);
  return -1;
}

uint64_t Recorder::Stamp(Location* loc) {
  const uint64_t t = std::max(Now(), loc->last_);
  if (loc->first_ == 0) loc->first_ = t;
  loc->last_ = t;
  return t;
}

void Recorder::Check(int otf2_error, const char* what) {
  if (otf2_error == OTF2_SUCCESS) return;
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_.empty()) error_ = std::string(what) + ": " + Otf2Error(otf2_error);
}

// ---- events ----

void Recorder::RecordSentLocked(Location* loc, RuntimeId to, uint32_t comm, uint32_t tag,
                                uint64_t bytes, uint64_t answer_request) {
  if (loc->writer_ == nullptr) return;
  const int64_t rank = RankOf(to);
  if (rank < 0) return;
  const uint64_t t = Stamp(loc);
  Check(OTF2_EvtWriter_MpiSend(loc->writer_, nullptr, t, static_cast<uint32_t>(rank), comm, tag,
                               bytes),
        "MpiSend");
  if (answer_request == 0) return;
  loc->answers_.insert(answer_request);
  Check(OTF2_EvtWriter_MpiIrecvRequest(loc->writer_, nullptr, t, answer_request),
        "MpiIrecvRequest");
}

void Recorder::HandlerStart(Location* loc, RuntimeId from, uint32_t tag, uint64_t bytes) {
  if (loc == nullptr) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  const int64_t rank = RankOf(from);
  if (rank < 0) return;
  const uint64_t t = Stamp(loc);
  uint64_t id;
  if (!loc->posted_.empty()) {
    id = loc->posted_.front();
    loc->posted_.pop_front();
  } else {  // handlers overlap (threaded): a receive posted for this one
    id = loc->next_request_++;
    Check(OTF2_EvtWriter_MpiIrecvRequest(loc->writer_, nullptr, t, id), "MpiIrecvRequest");
  }
  Check(OTF2_EvtWriter_MpiIrecv(loc->writer_, nullptr, t, static_cast<uint32_t>(rank), kWorldComm,
                                tag, bytes, id),
        "MpiIrecv");
}

void Recorder::HandlerEnd(Location* loc) {
  if (loc == nullptr) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  const uint64_t id = loc->next_request_++;
  Check(OTF2_EvtWriter_MpiIrecvRequest(loc->writer_, nullptr, Stamp(loc), id), "MpiIrecvRequest");
  loc->posted_.push_back(id);
}

void Recorder::PostAnswer(Location* loc, uint64_t request, RuntimeId from) {
  if (loc == nullptr || request == 0 || ranks_.count(from) == 0) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  loc->answers_.insert(request);
  Check(OTF2_EvtWriter_MpiIrecvRequest(loc->writer_, nullptr, Stamp(loc), request),
        "MpiIrecvRequest");
}

void Recorder::CompleteReceive(Location* loc, uint64_t request, RuntimeId from, uint32_t comm,
                               uint32_t tag, uint64_t bytes) {
  if (loc == nullptr || request == 0) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr || loc->answers_.erase(request) == 0) return;
  const int64_t rank = RankOf(from);
  if (rank < 0) return;
  Check(OTF2_EvtWriter_MpiIrecv(loc->writer_, nullptr, Stamp(loc), static_cast<uint32_t>(rank),
                                comm, tag, bytes, request),
        "MpiIrecv");
}

void Recorder::CancelReceive(Location* loc, uint64_t request) {
  if (loc == nullptr || request == 0) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr || loc->answers_.erase(request) == 0) return;
  Check(OTF2_EvtWriter_MpiRequestCancelled(loc->writer_, nullptr, Stamp(loc), request),
        "MpiRequestCancelled");
}

void Recorder::Arrival(Location* loc, RuntimeId from, uint32_t comm, uint32_t tag, uint64_t bytes) {
  if (loc == nullptr) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  const int64_t rank = RankOf(from);
  if (rank < 0) return;
  const uint64_t t = Stamp(loc);
  const uint64_t id = loc->next_request_++;
  Check(OTF2_EvtWriter_MpiIrecvRequest(loc->writer_, nullptr, t, id), "MpiIrecvRequest");
  Check(OTF2_EvtWriter_MpiIrecv(loc->writer_, nullptr, t, static_cast<uint32_t>(rank), comm, tag,
                                bytes, id),
        "MpiIrecv");
}

void Recorder::BarrierBegin(Location* loc) {
  if (loc == nullptr) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  Check(OTF2_EvtWriter_MpiCollectiveBegin(loc->writer_, nullptr, Stamp(loc)), "MpiCollectiveBegin");
}

void Recorder::BarrierEnd(Location* loc) {
  if (loc == nullptr) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  Check(
      OTF2_EvtWriter_MpiCollectiveEnd(loc->writer_, nullptr, Stamp(loc), OTF2_COLLECTIVE_OP_BARRIER,
                                      kWorldComm, OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
      "MpiCollectiveEnd");
}

uint64_t Recorder::RmaIssue(Location* loc, RmaKind kind, RuntimeId target, uint64_t bytes_sent,
                            uint64_t bytes_received, uint8_t atomic_type) {
  if (loc == nullptr) return 0;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return 0;
  const int64_t rank = RankOf(target);
  if (rank < 0) return 0;
  const uint32_t remote = static_cast<uint32_t>(rank);
  const uint64_t match = next_match_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t t = Stamp(loc);
  switch (kind) {
    case RmaKind::kPut:
      Check(OTF2_EvtWriter_RmaPut(loc->writer_, nullptr, t, kRmaWindow, remote, bytes_sent, match),
            "RmaPut");
      break;
    case RmaKind::kGet:
      Check(OTF2_EvtWriter_RmaGet(loc->writer_, nullptr, t, kRmaWindow, remote, bytes_received,
                                  match),
            "RmaGet");
      break;
    case RmaKind::kAtomic:
      Check(OTF2_EvtWriter_RmaAtomic(loc->writer_, nullptr, t, kRmaWindow, remote,
                                     static_cast<OTF2_RmaAtomicType>(atomic_type), bytes_sent,
                                     bytes_received, match),
            "RmaAtomic");
      break;
  }
  return match;
}

void Recorder::RmaComplete(Location* loc, uint64_t matching, bool blocking) {
  if (loc == nullptr || matching == 0) return;
  std::lock_guard<std::mutex> lock(loc->mu_);
  if (loc->writer_ == nullptr) return;
  const uint64_t t = Stamp(loc);
  Check(
      blocking
          ? OTF2_EvtWriter_RmaOpCompleteBlocking(loc->writer_, nullptr, t, kRmaWindow, matching)
          : OTF2_EvtWriter_RmaOpCompleteNonBlocking(loc->writer_, nullptr, t, kRmaWindow, matching),
      "RmaOpComplete");
}

// ---- the end ----

RecorderStats Recorder::stats() const {
  RecorderStats s;
  s.unrecorded = unrecorded_.load();
  std::lock_guard<std::mutex> lock(mu_);
  s.locations = locations_.size();
  for (const auto& l : locations_) s.events += l->events_;
  return s;
}

Status Recorder::Finish() {
  std::vector<Location*> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || archive_ == nullptr) {
      finished_ = true;
      return Status::Ok();
    }
    finished_ = true;
    for (const auto& l : locations_) all.push_back(l.get());
  }
  for (Location* l : all) {
    std::lock_guard<std::mutex> lock(l->mu_);
    if (l->writer_ != nullptr) CloseLocationLocked(l);
  }
  Check(OTF2_Archive_CloseEvtFiles(archive_), "close the event files");
  Status defs = WritePartDefinitions();
  const int closed = OTF2_Archive_Close(archive_);
  archive_ = nullptr;
  const std::string part = PartAnchorPath(options_.dir, rank());
  if (!defs.ok()) return defs;
  if (closed != OTF2_SUCCESS) {
    return Status::IoError("OTF2 recording: closing " + part + ": " + Otf2Error(closed));
  }
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!error_.empty()) return Status::IoError("OTF2 recording into " + part + ": " + error_);
  return Status::Ok();
}

Status Recorder::WritePartDefinitions() {
  // Properties travel in the anchor file; the merge reads them back (archive.cc).
  OTF2_Archive_SetProperty(archive_, "UKAI::UNRECORDED", std::to_string(unrecorded_.load()).c_str(),
                           true);
  OTF2_Archive_SetProperty(archive_, "UKAI::REALTIME_OFFSET_NS",
                           std::to_string(realtime_offset_).c_str(), true);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
  if (g == nullptr) return Status::IoError("OTF2 recording: no definition writer");
  uint64_t first = ~uint64_t{0}, last = 0;
  for (const auto& l : locations_) {
    if (l->first_ == 0) continue;
    first = std::min(first, l->first_);
    last = std::max(last, l->last_);
  }
  if (last == 0) first = last = Now();
  int e = OTF2_GlobalDefWriter_WriteClockProperties(
      g, 1000000000, first, last - first, static_cast<uint64_t>(first + realtime_offset_));
  e = e != OTF2_SUCCESS ? e : OTF2_GlobalDefWriter_WriteString(g, 0, options_.host.c_str());
  e = e != OTF2_SUCCESS ? e : OTF2_GlobalDefWriter_WriteString(g, 1, "node");
  const std::string group = "rank " + std::to_string(rank());
  e = e != OTF2_SUCCESS ? e : OTF2_GlobalDefWriter_WriteString(g, 2, group.c_str());
  e = e != OTF2_SUCCESS
          ? e
          : OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  e = e != OTF2_SUCCESS ? e
                        : OTF2_GlobalDefWriter_WriteLocationGroup(
                              g, static_cast<uint32_t>(rank()), 2, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                              0, OTF2_UNDEFINED_LOCATION_GROUP);
  uint32_t string = 3;
  for (const auto& l : locations_) {
    e = e != OTF2_SUCCESS ? e : OTF2_GlobalDefWriter_WriteString(g, string, l->name_.c_str());
    e = e != OTF2_SUCCESS
            ? e
            : OTF2_GlobalDefWriter_WriteLocation(g, l->id_, string, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                 l->events_, static_cast<uint32_t>(rank()));
    ++string;
  }
  const int closed = OTF2_Archive_CloseGlobalDefWriter(archive_, g);
  if (e == OTF2_SUCCESS) e = closed;
  if (e != OTF2_SUCCESS) {
    return Status::IoError("OTF2 recording: definitions of " +
                           PartAnchorPath(options_.dir, rank()) + ": " + Otf2Error(e));
  }
  return Status::Ok();
}

}  // namespace ukai::rt::trace
