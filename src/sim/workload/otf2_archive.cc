#include "sim/workload/otf2_archive.h"

#include <fmt/format.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <unordered_set>

namespace ukai::sim {
namespace {

// Every event record of OTF2 3.0, in one list: the name table and the generic callbacks
// are generated from it.
// clang-format off
#define UKAI_OTF2_EVENTS(X) \
  X(Unknown) X(BufferFlush) X(MeasurementOnOff) X(Enter) X(Leave) X(MpiSend) X(MpiIsend) \
  X(MpiIsendComplete) X(MpiIrecvRequest) X(MpiRecv) X(MpiIrecv) X(MpiRequestTest) \
  X(MpiRequestCancelled) X(MpiCollectiveBegin) X(MpiCollectiveEnd) X(OmpFork) X(OmpJoin) \
  X(OmpAcquireLock) X(OmpReleaseLock) X(OmpTaskCreate) X(OmpTaskSwitch) \
  X(OmpTaskComplete) X(Metric) X(ParameterString) X(ParameterInt) X(ParameterUnsignedInt) \
  X(RmaWinCreate) X(RmaWinDestroy) X(RmaCollectiveBegin) X(RmaCollectiveEnd) \
  X(RmaGroupSync) X(RmaRequestLock) X(RmaAcquireLock) X(RmaTryLock) X(RmaReleaseLock) \
  X(RmaSync) X(RmaWaitChange) X(RmaPut) X(RmaGet) X(RmaAtomic) X(RmaOpCompleteBlocking) \
  X(RmaOpCompleteNonBlocking) X(RmaOpTest) X(RmaOpCompleteRemote) X(ThreadFork) \
  X(ThreadJoin) X(ThreadTeamBegin) X(ThreadTeamEnd) X(ThreadAcquireLock) \
  X(ThreadReleaseLock) X(ThreadTaskCreate) X(ThreadTaskSwitch) X(ThreadTaskComplete) \
  X(ThreadCreate) X(ThreadBegin) X(ThreadWait) X(ThreadEnd) X(CallingContextEnter) \
  X(CallingContextLeave) X(CallingContextSample) X(IoCreateHandle) X(IoDestroyHandle) \
  X(IoDuplicateHandle) X(IoSeek) X(IoChangeStatusFlags) X(IoDeleteFile) \
  X(IoOperationBegin) X(IoOperationTest) X(IoOperationIssued) X(IoOperationComplete) \
  X(IoOperationCancelled) X(IoAcquireLock) X(IoReleaseLock) X(IoTryLock) X(ProgramBegin) \
  X(ProgramEnd) X(NonBlockingCollectiveRequest) X(NonBlockingCollectiveComplete) \
  X(CommCreate) X(CommDestroy)
// clang-format on

#define UKAI_OTF2_NAME(name) #name,
constexpr std::string_view kNames[] = {UKAI_OTF2_EVENTS(UKAI_OTF2_NAME)};
#undef UKAI_OTF2_NAME
constexpr size_t kEventCount = std::size(kNames);

// Markers that carry no communication: their time counts like any other event's.
constexpr std::string_view kTimeOnly[] = {"MeasurementOnOff",     "Metric",
                                          "ParameterString",      "ParameterInt",
                                          "ParameterUnsignedInt", "CallingContextEnter",
                                          "CallingContextLeave",  "CallingContextSample",
                                          "ProgramBegin",         "ProgramEnd"};

constexpr uint16_t NameIndex(std::string_view name) {
  for (size_t i = 0; i < kEventCount; ++i) {
    if (kNames[i] == name) return static_cast<uint16_t>(i);
  }
  return 0;
}

std::string Otf2Error(OTF2_ErrorCode rc) {
  return fmt::format("{} ({})", OTF2_Error_GetName(rc), OTF2_Error_GetDescription(rc));
}

}  // namespace

std::span<const std::string_view> Otf2EventNames() { return kNames; }

// One location's event stream.
struct LocationStream {
  OTF2_EvtReader* reader = nullptr;
  std::deque<Otf2Event> events;  // read, not yet popped
  bool ended = false;
  int64_t read = 0;
  // The size of the location's event file (-1: not known); at most file_bytes /
  // kMinEventBytes + 1 events fit in it. A file that ends properly but is corrupt inside can
  // still send libotf2 3.0.2 past its end into chunk buffers it did not clear, where it may
  // hand out stale events again and again: the count ends such a stream. (A safety bound:
  // no test reaches it deterministically, since what libotf2 finds there is whatever the
  // allocator left.)
  int64_t file_bytes = -1;
};

// Every OTF2 event record takes at least its timestamp record (type and 8 bytes) and its own
// type and length bytes: 11 bytes. Less than half of that is a safe bound for any encoding.
constexpr int64_t kMinEventBytes = 5;

// `location`'s event file in the POSIX layout (ANCHOR_DIR/NAME/REF.evt).
std::filesystem::path EventFile(const std::string& anchor, uint64_t location) {
  const std::filesystem::path a(anchor);
  return a.parent_path() / a.stem() / (std::to_string(location) + ".evt");
}

// The size of `file` (-1 when it does not exist: another substrate), after checking that it
// ends as libotf2's writer ends every event file it closes: its end-of-file record (2) and
// the end of its buffer (1). libotf2 3.0.2 reads a file that stops short of them (a trace
// whose program died before closing it, a cut copy) past the bytes the file holds, into
// memory it did not clear, and can loop there for ever; such a file is refused first.
Result<int64_t> CheckEventFile(const std::string& anchor, const std::filesystem::path& file) {
  std::error_code ec;
  const uintmax_t n = std::filesystem::file_size(file, ec);
  if (ec) return int64_t{-1};
  std::array<char, 2> tail{};
  std::ifstream in(file, std::ios::binary);
  if (n >= 2) in.seekg(static_cast<std::streamoff>(n - 2)).read(tail.data(), 2);
  if (n < 2 || !in || tail[0] != 2 || tail[1] != 1) {
    return Status::ParseError(
        fmt::format("{}: event file {} does not end with OTF2's end-of-file record (a trace "
                    "cut short, or its program died before closing it): not read",
                    anchor, file.string()));
  }
  return static_cast<int64_t>(n);
}

struct Otf2Archive::Impl {
  OTF2_Reader* reader = nullptr;
  std::vector<LocationStream> streams;
  // Definitions while they are read.
  std::unordered_map<uint64_t, std::string> strings;
  struct LocationDef {
    uint64_t ref = 0, group = 0;
  };
  std::vector<LocationDef> cpu_locations;  // in definition order
  struct Group {
    OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
    OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
    OTF2_GroupFlag flags = OTF2_GROUP_FLAG_NONE;
    std::vector<uint64_t> members;
  };
  std::unordered_map<uint64_t, Group> groups;
  struct Comm {
    uint64_t name = 0, group = 0;
  };
  std::vector<std::pair<uint64_t, Comm>> comms;
  Otf2Archive* archive = nullptr;
};

namespace {

using Impl = Otf2Archive::Impl;

LocationStream& StreamOf(void* user) { return *static_cast<LocationStream*>(user); }

void Push(void* user, Otf2EventKind kind, const char* name, OTF2_TimeStamp time, Otf2Event e) {
  e.kind = kind;
  e.name = NameIndex(name);
  e.time = time;
  StreamOf(user).events.push_back(e);
}

// The generic callback of record I: counted by name (or a time marker).
template <uint16_t I, typename... Rest>
OTF2_CallbackCode Generic(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* user,
                          OTF2_AttributeList*, Rest...) {
  Otf2Event e;
  e.kind = std::find(std::begin(kTimeOnly), std::end(kTimeOnly), kNames[I]) != std::end(kTimeOnly)
               ? Otf2EventKind::kTimeOnly
               : Otf2EventKind::kUnmodelled;
  e.name = I;
  e.time = time;
  StreamOf(user).events.push_back(e);
  return OTF2_CALLBACK_SUCCESS;
}

template <uint16_t I, typename... Rest>
void SetGeneric(OTF2_EvtReaderCallbacks* cbs,
                OTF2_ErrorCode (*setter)(OTF2_EvtReaderCallbacks*,
                                         OTF2_CallbackCode (*)(OTF2_LocationRef, OTF2_TimeStamp,
                                                               uint64_t, void*, OTF2_AttributeList*,
                                                               Rest...))) {
  setter(cbs, &Generic<I, Rest...>);
}

#define UKAI_OTF2_SET_GENERIC(name) \
  SetGeneric<NameIndex(#name)>(cbs, &OTF2_EvtReaderCallbacks_Set##name##Callback);

// The RMA records the replay models.
void SetRma(OTF2_EvtReaderCallbacks* cbs) {
  using TS = OTF2_TimeStamp;
  using AL = OTF2_AttributeList;
  using LR = OTF2_LocationRef;
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w, uint32_t remote, uint64_t bytes,
              uint64_t id) {
        Push(u, Otf2EventKind::kRmaPut, "RmaPut", t,
             {.peer = remote, .comm = w, .bytes = bytes, .request = id});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w, uint32_t remote, uint64_t bytes,
              uint64_t id) {
        Push(u, Otf2EventKind::kRmaGet, "RmaGet", t,
             {.peer = remote, .comm = w, .bytes = bytes, .request = id});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w, uint32_t remote,
              OTF2_RmaAtomicType, uint64_t sent, uint64_t received, uint64_t id) {
        Push(u, Otf2EventKind::kRmaAtomic, "RmaAtomic", t,
             {.peer = remote, .comm = w, .bytes = sent, .bytes2 = received, .request = id});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w, uint64_t id) {
        Push(u, Otf2EventKind::kRmaCompleteBlocking, "RmaOpCompleteBlocking", t,
             {.comm = w, .request = id});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w, uint64_t id) {
        Push(u, Otf2EventKind::kRmaCompleteNonBlocking, "RmaOpCompleteNonBlocking", t,
             {.comm = w, .request = id});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w, uint64_t id) {
        Push(u, Otf2EventKind::kRmaCompleteRemote, "RmaOpCompleteRemote", t,
             {.comm = w, .request = id});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(cbs, [](LR, TS t, uint64_t, void* u, AL*) {
    Push(u, Otf2EventKind::kRmaCollBegin, "RmaCollectiveBegin", t, {});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_CollectiveOp op, OTF2_RmaSyncLevel,
              OTF2_RmaWinRef w, uint32_t root, uint64_t sent, uint64_t received) {
        Push(u, Otf2EventKind::kRmaCollEnd, "RmaCollectiveEnd", t,
             {.op = op, .peer = root, .comm = w, .bytes = sent, .bytes2 = received});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w) {
        Push(u, Otf2EventKind::kRmaWinCreate, "RmaWinCreate", t, {.comm = w});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RmaWinRef w) {
        Push(u, Otf2EventKind::kRmaWinDestroy, "RmaWinDestroy", t, {.comm = w});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetBufferFlushCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_TimeStamp stop) {
        Push(u, Otf2EventKind::kBufferFlush, "BufferFlush", t, {.request = stop});
        return OTF2_CALLBACK_SUCCESS;
      });
}

// The records the replay models, each into an Otf2Event.
void SetModelled(OTF2_EvtReaderCallbacks* cbs) {
  using TS = OTF2_TimeStamp;
  using AL = OTF2_AttributeList;
  using LR = OTF2_LocationRef;
  OTF2_EvtReaderCallbacks_SetEnterCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RegionRef region) {
        Push(u, Otf2EventKind::kEnter, "Enter", t, {.comm = region});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_RegionRef region) {
        Push(u, Otf2EventKind::kLeave, "Leave", t, {.comm = region});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, [](LR, TS t, uint64_t, void* u, AL*, uint32_t to,
                                                     OTF2_CommRef c, uint32_t tag, uint64_t len) {
    Push(u, Otf2EventKind::kSend, "MpiSend", t, {.peer = to, .tag = tag, .comm = c, .bytes = len});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint32_t to, OTF2_CommRef c, uint32_t tag,
              uint64_t len, uint64_t req) {
        Push(u, Otf2EventKind::kIsend, "MpiIsend", t,
             {.peer = to, .tag = tag, .comm = c, .bytes = len, .request = req});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint64_t req) {
        Push(u, Otf2EventKind::kIsendComplete, "MpiIsendComplete", t, {.request = req});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint64_t req) {
        Push(u, Otf2EventKind::kIrecvRequest, "MpiIrecvRequest", t, {.request = req});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint32_t from, OTF2_CommRef c, uint32_t tag,
              uint64_t len) {
        Push(u, Otf2EventKind::kRecv, "MpiRecv", t,
             {.peer = from, .tag = tag, .comm = c, .bytes = len});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint32_t from, OTF2_CommRef c, uint32_t tag,
              uint64_t len, uint64_t req) {
        Push(u, Otf2EventKind::kIrecv, "MpiIrecv", t,
             {.peer = from, .tag = tag, .comm = c, .bytes = len, .request = req});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint64_t req) {
        Push(u, Otf2EventKind::kRequestTest, "MpiRequestTest", t, {.request = req});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, uint64_t req) {
        Push(u, Otf2EventKind::kRequestCancelled, "MpiRequestCancelled", t, {.request = req});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, [](LR, TS t, uint64_t, void* u, AL*) {
    Push(u, Otf2EventKind::kCollBegin, "MpiCollectiveBegin", t, {});
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      cbs, [](LR, TS t, uint64_t, void* u, AL*, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root,
              uint64_t sent, uint64_t received) {
        Push(u, Otf2EventKind::kCollEnd, "MpiCollectiveEnd", t,
             {.op = op, .peer = root, .comm = c, .bytes = sent, .bytes2 = received});
        return OTF2_CALLBACK_SUCCESS;
      });
  SetRma(cbs);
}

OTF2_EvtReaderCallbacks* MakeEventCallbacks() {
  OTF2_EvtReaderCallbacks* cbs = OTF2_EvtReaderCallbacks_New();
  UKAI_OTF2_EVENTS(UKAI_OTF2_SET_GENERIC)
  SetModelled(cbs);
  return cbs;
}

// Definitions.
OTF2_CallbackCode OnClock(void* user, uint64_t resolution, uint64_t offset, uint64_t, uint64_t) {
  auto* impl = static_cast<Impl*>(user);
  impl->archive->SetClock(resolution, offset);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnString(void* user, OTF2_StringRef self, const char* text) {
  static_cast<Impl*>(user)->strings[self] = text ? text : "";
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnLocation(void* user, OTF2_LocationRef self, OTF2_StringRef,
                             OTF2_LocationType type, uint64_t, OTF2_LocationGroupRef group) {
  if (type == OTF2_LOCATION_TYPE_CPU_THREAD) {
    static_cast<Impl*>(user)->cpu_locations.push_back({self, group});
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnRegion(void* user, OTF2_RegionRef self, OTF2_StringRef, OTF2_StringRef,
                           OTF2_StringRef, OTF2_RegionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag,
                           OTF2_StringRef, uint32_t, uint32_t) {
  static_cast<Impl*>(user)->archive->SetRegion(self, paradigm == OTF2_PARADIGM_MPI);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnGroup(void* user, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type,
                          OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n,
                          const uint64_t* members) {
  Impl::Group& g = static_cast<Impl*>(user)->groups[self];
  g.type = type;
  g.paradigm = paradigm;
  g.flags = flags;
  g.members.assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnComm(void* user, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
                         OTF2_CommRef, OTF2_CommFlag) {
  static_cast<Impl*>(user)->comms.push_back({self, {name, group}});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode OnRmaWin(void* user, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm,
                           OTF2_RmaWinFlag) {
  static_cast<Impl*>(user)->archive->SetWindow(self, comm);
  return OTF2_CALLBACK_SUCCESS;
}

}  // namespace

Otf2Archive::~Otf2Archive() {
  if (impl_ == nullptr || impl_->reader == nullptr) return;
  for (LocationStream& s : impl_->streams) {
    if (s.reader != nullptr) OTF2_Reader_CloseEvtReader(impl_->reader, s.reader);
  }
  OTF2_Reader_CloseEvtFiles(impl_->reader);
  OTF2_Reader_Close(impl_->reader);
}

Result<std::unique_ptr<Otf2Archive>> Otf2Archive::Open(const std::string& anchor) {
  std::unique_ptr<Otf2Archive> a(new Otf2Archive());
  a->path_ = anchor;
  a->impl_ = std::make_unique<Impl>();
  a->impl_->archive = a.get();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(anchor, ec)) {
    return Status::IoError(anchor + ": no such OTF2 anchor file (the archive's traces.otf2)");
  }
  a->impl_->reader = OTF2_Reader_Open(anchor.c_str());
  if (a->impl_->reader == nullptr) {
    return Status::ParseError(anchor + ": libotf2 cannot open it as an OTF2 archive");
  }
  UKAI_RETURN_IF_ERROR(a->ReadDefinitions());
  UKAI_RETURN_IF_ERROR(a->OpenEvents());
  return a;
}

Status Otf2Archive::ReadDefinitions() {
  OTF2_Reader* r = impl_->reader;
  OTF2_ErrorCode rc = OTF2_Reader_SetSerialCollectiveCallbacks(r);
  if (rc != OTF2_SUCCESS) return Status::ParseError(path_ + ": " + Otf2Error(rc));
  OTF2_GlobalDefReader* defs = OTF2_Reader_GetGlobalDefReader(r);
  if (defs == nullptr) {
    return Status::ParseError(path_ + ": libotf2 cannot read the global definitions");
  }
  OTF2_GlobalDefReaderCallbacks* cbs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, &OnClock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, &OnString);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, &OnLocation);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, &OnRegion);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, &OnGroup);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, &OnComm);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cbs, &OnRmaWin);
  OTF2_Reader_RegisterGlobalDefCallbacks(r, defs, cbs, impl_.get());
  OTF2_GlobalDefReaderCallbacks_Delete(cbs);
  uint64_t read = 0;
  rc = OTF2_Reader_ReadAllGlobalDefinitions(r, defs, &read);
  OTF2_Reader_CloseGlobalDefReader(r, defs);
  if (rc != OTF2_SUCCESS) {
    return Status::ParseError(path_ + ": reading the global definitions: " + Otf2Error(rc));
  }
  UKAI_RETURN_IF_ERROR(AssignLocations());
  std::unordered_map<uint64_t, int> rank_of;  // a rank's main location -> the rank
  for (int i = 0; i < ranks_; ++i) rank_of[locations_[static_cast<size_t>(i)].ref] = i;
  for (const auto& [ref, c] : impl_->comms) {
    Otf2Comm comm;
    auto name = impl_->strings.find(c.name);
    comm.name = name != impl_->strings.end() ? name->second : "comm " + std::to_string(ref);
    auto g = impl_->groups.find(c.group);
    if (g == impl_->groups.end()) {
      return Status::ParseError(
          fmt::format("{}: communicator '{}' names group {}, which the "
                      "archive does not define",
                      path_, comm.name, c.group));
    }
    switch (g->second.type) {
      case OTF2_GROUP_TYPE_COMM_SELF:
        comm.self = true;
        break;
      case OTF2_GROUP_TYPE_COMM_LOCATIONS:
        for (int i = 0; i < ranks_; ++i) comm.members.push_back(i);
        break;
      case OTF2_GROUP_TYPE_LOCATIONS:
        for (uint64_t loc : g->second.members) {
          auto it = rank_of.find(loc);
          if (it == rank_of.end()) {
            return Status::ParseError(
                fmt::format("{}: communicator '{}' holds location {}, which is not a rank", path_,
                            comm.name, loc));
          }
          comm.members.push_back(it->second);
        }
        break;
      default:  // COMM_GROUP: indexes of the MPI locations group (world ranks)
        for (uint64_t m : g->second.members) {
          if (m >= static_cast<uint64_t>(ranks_)) {
            return Status::ParseError(fmt::format("{}: communicator '{}' lists rank {} of {}",
                                                  path_, comm.name, m, ranks_));
          }
          comm.members.push_back(static_cast<int>(m));
        }
    }
    comms_[ref] = std::move(comm);
  }
  return Status::Ok();
}

// Ranks: the MPI locations group's members; every other CPU thread of a rank's location
// group is one of its threads. Without that group, every CPU thread is a rank.
Status Otf2Archive::AssignLocations() {
  const Impl::Group* world = nullptr;
  for (const auto& [ref, g] : impl_->groups) {
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == OTF2_PARADIGM_MPI) world = &g;
  }
  const std::vector<Impl::LocationDef>& defs = impl_->cpu_locations;
  if (world == nullptr) {
    for (const Impl::LocationDef& d : defs) {
      locations_.push_back({d.ref, static_cast<int>(locations_.size())});
    }
    ranks_ = static_cast<int>(locations_.size());
  } else {
    std::unordered_map<uint64_t, uint64_t> group_of;  // location -> its location group
    for (const Impl::LocationDef& d : defs) group_of[d.ref] = d.group;
    std::unordered_map<uint64_t, int> rank_of_group;
    for (uint64_t ref : world->members) {
      auto g = group_of.find(ref);
      if (g == group_of.end()) {
        return Status::ParseError(fmt::format(
            "{}: the MPI locations group lists location {}, which is not a defined CPU thread",
            path_, ref));
      }
      const int rank = static_cast<int>(locations_.size());
      rank_of_group.emplace(g->second, rank);
      locations_.push_back({ref, rank});
    }
    ranks_ = static_cast<int>(locations_.size());
    const std::unordered_set<uint64_t> main(world->members.begin(), world->members.end());
    for (const Impl::LocationDef& d : defs) {
      auto r = rank_of_group.find(d.group);
      if (main.count(d.ref) == 0 && r != rank_of_group.end()) {
        locations_.push_back({d.ref, r->second});
      }
    }
  }
  if (ranks_ == 0) return Status::ParseError(path_ + ": the archive has no locations");
  return Status::Ok();
}

Status Otf2Archive::OpenEvents() {
  OTF2_Reader* r = impl_->reader;
  for (const Location& loc : locations_) OTF2_Reader_SelectLocation(r, loc.ref);
  // Local definitions carry the mapping tables of the event files.
  if (OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS) {
    for (const Location& loc : locations_) {
      OTF2_DefReader* d = OTF2_Reader_GetDefReader(r, loc.ref);
      if (d == nullptr) continue;
      uint64_t n = 0;
      OTF2_Reader_ReadAllLocalDefinitions(r, d, &n);
      OTF2_Reader_CloseDefReader(r, d);
    }
    OTF2_Reader_CloseDefFiles(r);
  }
  OTF2_ErrorCode rc = OTF2_Reader_OpenEvtFiles(r);
  if (rc != OTF2_SUCCESS) {
    return Status::ParseError(path_ + ": opening the event files: " + Otf2Error(rc));
  }
  OTF2_EvtReaderCallbacks* cbs = MakeEventCallbacks();
  impl_->streams.resize(locations_.size());
  for (size_t i = 0; i < locations_.size(); ++i) {
    LocationStream& s = impl_->streams[i];
    s.reader = OTF2_Reader_GetEvtReader(r, locations_[i].ref);
    if (s.reader == nullptr) {
      OTF2_EvtReaderCallbacks_Delete(cbs);
      return Status::ParseError(fmt::format("{}: no event reader for location {} (rank {})", path_,
                                            locations_[i].ref, locations_[i].rank));
    }
    OTF2_Reader_RegisterEvtCallbacks(r, s.reader, cbs, &s);
    Result<int64_t> bytes = CheckEventFile(path_, EventFile(path_, locations_[i].ref));
    if (!bytes.ok()) {
      OTF2_EvtReaderCallbacks_Delete(cbs);
      return bytes.status();
    }
    s.file_bytes = *bytes;
  }
  OTF2_EvtReaderCallbacks_Delete(cbs);
  return Status::Ok();
}

Result<const Otf2Event*> Otf2Archive::Peek(int location, size_t ahead) {
  LocationStream& s = impl_->streams[static_cast<size_t>(location)];
  while (s.events.size() <= ahead && !s.ended) {
    uint64_t got = 0;
    const OTF2_ErrorCode rc = OTF2_Reader_ReadLocalEvents(impl_->reader, s.reader, 1, &got);
    if (rc != OTF2_SUCCESS) {
      s.ended = true;
      return Status::ParseError(fmt::format("{}: location {} (rank {}): reading event {}: {}",
                                            path_, location_ref(location), rank_of(location),
                                            s.read, Otf2Error(rc)));
    }
    if (got == 0) s.ended = true;
    s.read += static_cast<int64_t>(got);
    if (s.file_bytes >= 0 && s.read > s.file_bytes / kMinEventBytes + 1) {
      s.ended = true;
      return Status::ParseError(fmt::format(
          "{}: location {} (rank {}): more than {} events read from an event file of {} bytes: "
          "the file is corrupt and libotf2 read past its end",
          path_, location_ref(location), rank_of(location), s.file_bytes / kMinEventBytes + 1,
          s.file_bytes));
    }
  }
  return s.events.size() > ahead ? &s.events[ahead] : nullptr;
}

void Otf2Archive::Pop(int location) {
  LocationStream& s = impl_->streams[static_cast<size_t>(location)];
  if (!s.events.empty()) s.events.pop_front();
}

int64_t Otf2Archive::events_read(int location) const {
  return impl_->streams[static_cast<size_t>(location)].read;
}

const Otf2Comm* Otf2Archive::FindComm(uint64_t ref) const {
  auto it = comms_.find(ref);
  return it == comms_.end() ? nullptr : &it->second;
}

std::string Otf2Archive::CommName(uint64_t ref) const {
  const Otf2Comm* c = FindComm(ref);
  return c ? c->name : fmt::format("undefined communicator {}", ref);
}

Result<uint64_t> Otf2Archive::WindowComm(uint64_t window) const {
  auto it = windows_.find(window);
  if (it == windows_.end()) {
    return Status::NotFound(fmt::format("{}: RMA window {} is not defined", path_, window));
  }
  return it->second;
}

bool Otf2Archive::IsMpiRegion(uint64_t region) const {
  auto it = mpi_regions_.find(region);
  return it != mpi_regions_.end() && it->second;
}

}  // namespace ukai::sim
