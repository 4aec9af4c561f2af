// The archive directory's checks and the merge of the processes' parts (archive.h).
#include "rt/trace/archive.h"

#include <sys/stat.h>
#include <unistd.h>

#include <otf2/otf2.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "rt/trace/recorder.h"

namespace ukai::rt::trace {
namespace fs = std::filesystem;
namespace {

std::string Otf2Error(OTF2_ErrorCode code) {
  return std::string(OTF2_Error_GetName(code)) + " (" + OTF2_Error_GetDescription(code) + ")";
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// ---- reading a part (what Recorder::Finish wrote) ----

struct PartLocation {
  uint64_t id = 0;
  std::string name;
  uint64_t events = 0;
  uint32_t group = 0;
};

struct Part {
  int rank = -1;
  std::string file;
  std::string host;
  uint64_t first = 0, length = 0;
  int64_t realtime_offset = 0;
  uint64_t unrecorded = 0;
  std::vector<PartLocation> locations;
  std::vector<uint32_t> groups;  // location group ids defined
  std::map<uint32_t, std::string> strings;
  uint32_t host_string = OTF2_UNDEFINED_STRING;
};

OTF2_CallbackCode OnClock(void* data, uint64_t, uint64_t offset, uint64_t length, uint64_t) {
  auto* p = static_cast<Part*>(data);
  p->first = offset;
  p->length = length;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnString(void* data, OTF2_StringRef self, const char* s) {
  static_cast<Part*>(data)->strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnNode(void* data, OTF2_SystemTreeNodeRef, OTF2_StringRef name, OTF2_StringRef,
                         OTF2_SystemTreeNodeRef) {
  static_cast<Part*>(data)->host_string = name;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnGroup(void* data, OTF2_LocationGroupRef self, OTF2_StringRef,
                          OTF2_LocationGroupType, OTF2_SystemTreeNodeRef, OTF2_LocationGroupRef) {
  static_cast<Part*>(data)->groups.push_back(self);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnLocation(void* data, OTF2_LocationRef self, OTF2_StringRef name,
                             OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef group) {
  auto* p = static_cast<Part*>(data);
  p->locations.push_back({self, p->strings.count(name) ? p->strings[name] : "", events, group});
  return OTF2_CALLBACK_SUCCESS;
}

Result<uint64_t> Property(OTF2_Reader* reader, const char* name, const std::string& file) {
  char* value = nullptr;
  if (OTF2_Reader_GetProperty(reader, name, &value) != OTF2_SUCCESS || value == nullptr) {
    return Status::ParseError(file + ": no property " + name + " (not a part ukai wrote)");
  }
  const std::string v = value;
  std::free(value);
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE) {
    return Status::ParseError(file + ": property " + name + " is '" + v + "', not an integer");
  }
  return static_cast<uint64_t>(x);
}

// Reads the definitions of rank `rank`'s part and checks them against what the recorder writes.
Result<Part> ReadPart(const std::string& dir, int rank) {
  Part p;
  p.rank = rank;
  p.file = PartAnchorPath(dir, rank);
  OTF2_Reader* reader = OTF2_Reader_Open(p.file.c_str());
  if (reader == nullptr) return Status::ParseError(p.file + ": not an OTF2 anchor file");
  Status st;
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  OTF2_GlobalDefReader* gr = OTF2_Reader_GetGlobalDefReader(reader);
  OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, OnClock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, OnString);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, OnNode);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, OnGroup);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, OnLocation);
  uint64_t read = 0;
  OTF2_ErrorCode e = gr == nullptr ? OTF2_ERROR_INVALID : OTF2_SUCCESS;
  if (e == OTF2_SUCCESS) e = OTF2_Reader_RegisterGlobalDefCallbacks(reader, gr, cb, &p);
  if (e == OTF2_SUCCESS) e = OTF2_Reader_ReadAllGlobalDefinitions(reader, gr, &read);
  if (e != OTF2_SUCCESS) st = Status::ParseError(p.file + ": definitions: " + Otf2Error(e));
  if (st.ok()) {
    Result<uint64_t> unrecorded = Property(reader, "UKAI::UNRECORDED", p.file);
    Result<uint64_t> offset = Property(reader, "UKAI::REALTIME_OFFSET_NS", p.file);
    if (!unrecorded.ok()) st = unrecorded.status();
    if (!offset.ok()) st = offset.status();
    if (st.ok()) {
      p.unrecorded = *unrecorded;
      p.realtime_offset = static_cast<int64_t>(*offset);
    }
  }
  if (gr != nullptr) OTF2_Reader_CloseGlobalDefReader(reader, gr);
  OTF2_GlobalDefReaderCallbacks_Delete(cb);
  OTF2_Reader_Close(reader);
  if (!st.ok()) return st;
  p.host = p.strings.count(p.host_string) ? p.strings[p.host_string] : "";
  const auto r = static_cast<uint32_t>(rank);
  if (p.groups != std::vector<uint32_t>{r} || p.locations.empty()) {
    return Status::ParseError(p.file + ": expected one location group " + std::to_string(rank) +
                              " and its locations (not a part ukai wrote for rank " +
                              std::to_string(rank) + ")");
  }
  for (const PartLocation& l : p.locations) {
    if (l.group != r || (l.id & 0xffffffffu) != r) {
      return Status::ParseError(p.file + ": location " + std::to_string(l.id) +
                                " does not belong to rank " + std::to_string(rank));
    }
  }
  return p;
}

// ---- writing the merged archive ----

OTF2_FlushType PreFlush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_FlushCallbacks kFlush = {PreFlush, nullptr};

class Strings {
 public:
  explicit Strings(OTF2_GlobalDefWriter* w) : w_(w) {}
  OTF2_StringRef Of(const std::string& s) {
    auto [it, added] = ids_.emplace(s, static_cast<OTF2_StringRef>(ids_.size()));
    if (added && error_ == OTF2_SUCCESS)
      error_ = OTF2_GlobalDefWriter_WriteString(w_, it->second, s.c_str());
    return it->second;
  }
  OTF2_ErrorCode error() const { return error_; }

 private:
  OTF2_GlobalDefWriter* w_;
  std::map<std::string, OTF2_StringRef> ids_;
  OTF2_ErrorCode error_ = OTF2_SUCCESS;
};

struct Job {
  int size = 0;
  std::vector<std::optional<Part>> parts;  // index = rank
  std::vector<std::string> hosts;          // distinct, in rank order
  std::vector<int64_t> clock_offset;       // per rank: ns to add to its timestamps
  uint64_t first = 0, last = 0;
};

// ClockOffset of each rank: 0 on one host; else each host's CLOCK_REALTIME - CLOCK_MONOTONIC
// against that of the first part's host (the processes' monotonic clocks differ per host).
void AlignClocks(Job* job) {
  std::map<std::string, int64_t> host_offset;
  int64_t reference = 0;
  bool have_reference = false;
  for (const auto& p : job->parts) {
    if (!p) continue;
    if (host_offset.emplace(p->host, p->realtime_offset).second) job->hosts.push_back(p->host);
    if (!have_reference) reference = p->realtime_offset, have_reference = true;
  }
  job->clock_offset.assign(job->size, 0);
  job->first = ~uint64_t{0};
  for (int r = 0; r < job->size; ++r) {
    const auto& p = job->parts[r];
    if (!p) continue;
    if (job->hosts.size() > 1) job->clock_offset[r] = host_offset[p->host] - reference;
    const uint64_t first = p->first + job->clock_offset[r];
    job->first = std::min(job->first, first);
    job->last = std::max(job->last, first + p->length);
  }
}

// Writes the unified global definitions; the first OTF2 error stops the writing.
class DefinitionWriter {
 public:
  DefinitionWriter(OTF2_GlobalDefWriter* g, const Job& job) : g_(g), s_(g), job_(job) {}
  void Write(OTF2_ErrorCode e) {
    if (error_ == OTF2_SUCCESS) error_ = e != OTF2_SUCCESS ? e : s_.error();
  }
  bool ok() const { return error_ == OTF2_SUCCESS && s_.error() == OTF2_SUCCESS; }
  OTF2_ErrorCode error() const { return error_ != OTF2_SUCCESS ? error_ : s_.error(); }

  void Clock(int64_t realtime_offset) {
    Write(OTF2_GlobalDefWriter_WriteClockProperties(
        g_, 1000000000, job_.first, job_.last - job_.first,
        static_cast<uint64_t>(static_cast<int64_t>(job_.first) + realtime_offset)));
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteParadigm(g_, OTF2_PARADIGM_MPI, s_.Of("MPI"),
                                               OTF2_PARADIGM_CLASS_PROCESS));
    }
  }
  // "ukai job" -> a node per host -> a location group per rank.
  void SystemTree() {
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteSystemTreeNode(g_, 0, s_.Of("ukai job"), s_.Of("machine"),
                                                     OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    }
    std::map<std::string, uint32_t> node;
    for (const std::string& h : job_.hosts) {
      node[h] = static_cast<uint32_t>(node.size() + 1);
      if (ok())
        Write(OTF2_GlobalDefWriter_WriteSystemTreeNode(g_, node[h], s_.Of(h), s_.Of("node"), 0));
    }
    for (int r = 0; r < job_.size && ok(); ++r) {
      const uint32_t parent = job_.parts[r] ? node[job_.parts[r]->host] : 0;
      Write(OTF2_GlobalDefWriter_WriteLocationGroup(
          g_, static_cast<uint32_t>(r), s_.Of("rank " + std::to_string(r)),
          OTF2_LOCATION_GROUP_TYPE_PROCESS, parent, OTF2_UNDEFINED_LOCATION_GROUP));
    }
  }
  void Locations() {
    for (int r = 0; r < job_.size && ok(); ++r) {
      const auto rank = static_cast<uint32_t>(r);
      if (!job_.parts[r]) {  // an empty main location keeps the rank in the communicator
        Write(OTF2_GlobalDefWriter_WriteLocation(
            g_, LocationId(rank, 0), s_.Of("rank " + std::to_string(r) + " main (no part)"),
            OTF2_LOCATION_TYPE_CPU_THREAD, 0, rank));
        continue;
      }
      for (const PartLocation& l : job_.parts[r]->locations) {
        if (ok()) {
          Write(OTF2_GlobalDefWriter_WriteLocation(g_, l.id, s_.Of(l.name),
                                                   OTF2_LOCATION_TYPE_CPU_THREAD, l.events, rank));
        }
      }
    }
  }
  // COMM_LOCATIONS (rank R = location R), COMM_GROUP (0..N-1), communicator 0, the answers'
  // communicator (a duplicate of 0), RMA window 0.
  void Communicator() {
    std::vector<uint64_t> members(job_.size), ranks(job_.size);
    for (int r = 0; r < job_.size; ++r) {
      members[r] = LocationId(static_cast<uint32_t>(r), 0);
      ranks[r] = static_cast<uint64_t>(r);
    }
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteGroup(g_, 0, s_.Of("ukai world locations"),
                                            OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, job_.size, members.data()));
    }
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteGroup(g_, 1, s_.Of("ukai world"), OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, job_.size,
                                            ranks.data()));
    }
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteComm(g_, kWorldComm, s_.Of("MPI_COMM_WORLD"), 1,
                                           OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    }
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteComm(g_, kAnswerComm, s_.Of("ukai answers"), 1, kWorldComm,
                                           OTF2_COMM_FLAG_NONE));
    }
    if (ok()) {
      Write(OTF2_GlobalDefWriter_WriteRmaWin(g_, kRmaWindow, s_.Of("ukai RMA"), kWorldComm,
                                             OTF2_RMA_WIN_FLAG_NONE));
    }
  }

 private:
  OTF2_GlobalDefWriter* g_;
  Strings s_;
  const Job& job_;
  OTF2_ErrorCode error_ = OTF2_SUCCESS;
};

Status WriteDefinitions(OTF2_Archive* archive, const Job& job, int64_t realtime_offset) {
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (g == nullptr) return Status::IoError("no global definition writer");
  DefinitionWriter w(g, job);
  w.Clock(realtime_offset);
  w.SystemTree();
  w.Locations();
  w.Communicator();
  w.Write(OTF2_Archive_CloseGlobalDefWriter(archive, g));
  if (!w.ok()) return Status::IoError("global definitions: " + Otf2Error(w.error()));
  return Status::Ok();
}

// Empty event files for ranks without a part; a local definition file per location with its
// ClockOffset record.
Status WriteLocalFiles(OTF2_Archive* archive, const Job& job) {
  OTF2_ErrorCode e = OTF2_Archive_OpenEvtFiles(archive);
  for (int r = 0; r < job.size && e == OTF2_SUCCESS; ++r) {
    if (job.parts[r]) continue;
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, LocationId(static_cast<uint32_t>(r), 0));
    e = w == nullptr ? OTF2_ERROR_INVALID : OTF2_Archive_CloseEvtWriter(archive, w);
  }
  if (e == OTF2_SUCCESS) e = OTF2_Archive_CloseEvtFiles(archive);
  // Every location gets its local definition file (readers such as otf2-print -G expect one
  // per location), holding its ClockOffset: 0 on one host.
  if (e == OTF2_SUCCESS) {
    e = OTF2_Archive_OpenDefFiles(archive);
    for (int r = 0; r < job.size && e == OTF2_SUCCESS; ++r) {
      std::vector<uint64_t> ids = {LocationId(static_cast<uint32_t>(r), 0)};
      if (job.parts[r]) {
        ids.clear();
        for (const PartLocation& l : job.parts[r]->locations) ids.push_back(l.id);
      }
      const uint64_t at = job.parts[r] ? job.parts[r]->first : job.first;
      for (uint64_t id : ids) {
        OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive, id);
        if (d == nullptr) {
          e = OTF2_ERROR_INVALID;
          break;
        }
        e = OTF2_DefWriter_WriteClockOffset(d, at, job.clock_offset[r], 0.0);
        const OTF2_ErrorCode c = OTF2_Archive_CloseDefWriter(archive, d);
        if (e == OTF2_SUCCESS) e = c;
        if (e != OTF2_SUCCESS) break;
      }
    }
    const OTF2_ErrorCode c = OTF2_Archive_CloseDefFiles(archive);
    if (e == OTF2_SUCCESS) e = c;
  }
  if (e != OTF2_SUCCESS) return Status::IoError("local files: " + Otf2Error(e));
  return Status::Ok();
}

// Moves every part's event files into DIR/traces/.
Status MoveEventFiles(const std::string& dir, const Job& job) {
  for (const auto& p : job.parts) {
    if (!p) continue;
    for (const PartLocation& l : p->locations) {
      const std::string name = std::to_string(l.id) + ".evt";
      const std::string from = PartsDir(dir) + "/" + PartName(p->rank) + "/" + name;
      const std::string to = dir + "/" + kArchiveName + "/" + name;
      std::error_code ec;
      fs::rename(from, to, ec);
      if (ec) return Status::IoError("cannot move " + from + " to " + to + ": " + ec.message());
    }
  }
  return Status::Ok();
}

Status WriteArchive(const std::string& dir, Job& job, const MergeReport& report) {
  OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), kArchiveName, OTF2_FILEMODE_WRITE,
                                            kChunkBytes, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT,
                                            OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (archive == nullptr) return Status::IoError("cannot open " + AnchorPath(dir) + " for writing");
  Status st;
  OTF2_ErrorCode e = OTF2_Archive_SetFlushCallbacks(archive, &kFlush, nullptr);
  if (e == OTF2_SUCCESS) e = OTF2_Archive_SetSerialCollectiveCallbacks(archive);  // makes traces/
  if (e != OTF2_SUCCESS) st = Status::IoError("creating " + dir + "/traces: " + Otf2Error(e));
  if (st.ok()) st = MoveEventFiles(dir, job);
  if (st.ok()) st = WriteLocalFiles(archive, job);
  int64_t realtime = 0;
  for (const auto& p : job.parts) {
    if (p) {
      realtime = p->realtime_offset;
      break;
    }
  }
  if (st.ok()) st = WriteDefinitions(archive, job, realtime);
  std::string missing;
  for (int r : report.missing_ranks) {
    if (!missing.empty()) missing += ',';
    missing += std::to_string(r);
  }
  OTF2_Archive_SetCreator(archive, "ukai runtime");
  OTF2_Archive_SetDescription(archive,
                              "communication of a ukai runtime job (docs/otf2-recording.md)");
  OTF2_Archive_SetProperty(archive, "UKAI::UNRECORDED", std::to_string(report.unrecorded).c_str(),
                           true);
  OTF2_Archive_SetProperty(archive, "UKAI::MISSING_RANKS", missing.c_str(), true);
  e = OTF2_Archive_Close(archive);
  if (st.ok() && e != OTF2_SUCCESS) st = Status::IoError("closing: " + Otf2Error(e));
  return st;
}

}  // namespace

std::string AnchorPath(const std::string& dir) { return dir + "/" + kArchiveName + ".otf2"; }
std::string PartsDir(const std::string& dir) { return dir + "/" + kArchiveName + ".parts"; }
std::string PartName(int rank) { return "rank-" + std::to_string(rank); }
std::string PartAnchorPath(const std::string& dir, int rank) {
  return PartsDir(dir) + "/" + PartName(rank) + ".otf2";
}

Status PrepareArchiveDir(const std::string& dir, bool no_parts) {
  const std::string what = "OTF2 archive directory " + dir;
  if (dir.empty()) return Status::InvalidArgument("OTF2 archive directory: empty name");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(what + ": cannot create it: " + ec.message());
  if (!fs::is_directory(dir, ec)) return Status::IoError(what + ": not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::IoError(what + ": not writable: " + std::strerror(errno));
  }
  const std::string base = dir + "/" + kArchiveName;
  for (const std::string& p : {base + ".otf2", base + ".def", base}) {
    if (Exists(p)) {
      return Status::InvalidArgument(what + " already holds an OTF2 archive (" + p +
                                     " exists): remove it or choose another directory");
    }
  }
  if (no_parts && Exists(PartsDir(dir))) {
    return Status::InvalidArgument(what + ": " + PartsDir(dir) +
                                   " exists (parts of a run that did not finish?): remove it or "
                                   "choose another directory");
  }
  // The real test of writability (root passes access(2)): create the parts' directory.
  if (::mkdir(PartsDir(dir).c_str(), 0777) != 0 && errno != EEXIST) {
    return Status::IoError(what + ": cannot create " + PartsDir(dir) + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<MergeReport> MergeArchive(const std::string& dir, int size) {
  MergeReport report;
  report.anchor = AnchorPath(dir);
  if (size < 1) return Status::InvalidArgument("MergeArchive: job size " + std::to_string(size));
  if (Exists(report.anchor) || Exists(dir + "/" + kArchiveName)) {
    return Status::InvalidArgument("OTF2 merge: " + dir + " already holds an archive");
  }
  Job job;
  job.size = size;
  job.parts.resize(size);
  for (int r = 0; r < size; ++r) {
    if (!Exists(PartAnchorPath(dir, r))) {
      report.missing_ranks.push_back(r);
      continue;
    }
    Result<Part> p = ReadPart(dir, r);
    if (!p.ok()) return p.status().WithContext("OTF2 merge");
    report.unrecorded += p->unrecorded;
    report.locations += p->locations.size();
    for (const PartLocation& l : p->locations) report.events += l.events;
    job.parts[r] = std::move(*p);
    ++report.ranks;
  }
  if (report.ranks == 0) {
    return Status::NotFound("OTF2 merge: no part in " + PartsDir(dir) +
                            " (did any process record and finalize?)");
  }
  report.locations += report.missing_ranks.size();
  AlignClocks(&job);
  report.hosts = static_cast<int>(job.hosts.size());
  Status st = WriteArchive(dir, job, report);
  if (!st.ok()) return st.WithContext("OTF2 merge into " + report.anchor);
  std::error_code ec;
  fs::remove_all(PartsDir(dir), ec);
  if (ec)
    return Status::IoError("OTF2 merge: cannot remove " + PartsDir(dir) + ": " + ec.message());
  return report;
}

std::string Describe(const MergeReport& r) {
  std::string s = "OTF2 archive " + r.anchor + ": " + std::to_string(r.ranks) + " ranks, " +
                  std::to_string(r.locations) + " locations, " + std::to_string(r.events) +
                  " events";
  if (r.hosts > 1) s += ", " + std::to_string(r.hosts) + " hosts (clock offsets recorded)";
  if (!r.missing_ranks.empty()) {
    s += "; no part from rank";
    for (int m : r.missing_ranks) {
      s += ' ';
      s += std::to_string(m);
    }
    s += " (it did not finalize: an empty location stands for it)";
  }
  if (r.unrecorded > 0) {
    s += "; " + std::to_string(r.unrecorded) +
         " messages with runtimes outside the job not recorded";
  }
  return s;
}

}  // namespace ukai::rt::trace
