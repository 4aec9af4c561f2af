// Test helper: reads an OTF2 archive with libotf2's reader (independently of the recorder's
// code) into plain structures — the global definitions, each location's local ClockOffset
// records and its events in file order — and matches its point-to-point messages.
#ifndef UKAI_TESTS_RT_OTF2_READ_H_
#define UKAI_TESTS_RT_OTF2_READ_H_

#include <otf2/otf2.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ukai::rt::testing {

struct Otf2Event {
  std::string kind;  // "MpiSend", "MpiIrecv", "RmaPut", ...
  uint64_t time = 0;
  uint32_t peer = 0;  // receiver/sender/remote rank
  uint32_t comm = 0;
  uint32_t tag = 0;
  uint64_t bytes = 0, bytes2 = 0;  // RmaAtomic: sent, received
  uint64_t request = 0;            // request id or RMA matching id
  uint32_t op = 0;                 // collective op / atomic type
  uint32_t root = 0;
};

struct Otf2Location {
  std::string name;
  uint32_t group = 0;
  uint64_t declared_events = 0;  // numberOfEvents of the definition
  int clock_offsets = 0;         // ClockOffset records in its local definitions
  std::vector<Otf2Event> events;
};

struct Otf2Trace {
  bool ok = false;
  std::string error;
  uint64_t resolution = 0, offset = 0, length = 0;
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, std::string> groups;  // location group id -> name
  std::map<uint64_t, Otf2Location> locations;
  std::vector<uint64_t> comm_locations;  // COMM_LOCATIONS (MPI) members
  std::vector<uint64_t> comm_group;      // COMM_GROUP (MPI) members
  std::map<uint32_t, std::string> comms;
  std::map<uint32_t, uint32_t> rma_windows;  // window -> comm
  std::map<std::string, int> unknown;
  std::map<std::string, std::string> properties;  // UKAI::* properties of the anchor file
  size_t Count(const std::string& kind) const {
    size_t n = 0;
    for (const auto& [id, l] : locations)
      for (const Otf2Event& e : l.events) n += e.kind == kind;
    return n;
  }
};

namespace otf2_read {

inline Otf2Trace* T(void* d) { return static_cast<Otf2Trace*>(d); }
inline std::string Property(OTF2_Reader* r, const char* name) {
  char* v = nullptr;
  if (OTF2_Reader_GetProperty(r, name, &v) != OTF2_SUCCESS || v == nullptr) return "";
  std::string s = v;
  std::free(v);
  return s;
}
inline void Add(void* d, OTF2_LocationRef loc, Otf2Event e) {
  T(d)->locations[loc].events.push_back(std::move(e));
}

inline OTF2_CallbackCode Clock(void* d, uint64_t res, uint64_t off, uint64_t len, uint64_t) {
  T(d)->resolution = res;
  T(d)->offset = off;
  T(d)->length = len;
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode String(void* d, OTF2_StringRef self, const char* s) {
  T(d)->strings[self] = s;
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode LocGroup(void* d, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                  OTF2_LocationGroupType, OTF2_SystemTreeNodeRef,
                                  OTF2_LocationGroupRef) {
  T(d)->groups[self] = T(d)->strings[name];
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Location(void* d, OTF2_LocationRef self, OTF2_StringRef name,
                                  OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef g) {
  Otf2Location& l = T(d)->locations[self];
  l.name = T(d)->strings[name];
  l.group = g;
  l.declared_events = events;
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Group(void* d, OTF2_GroupRef, OTF2_StringRef, OTF2_GroupType type,
                               OTF2_Paradigm paradigm, OTF2_GroupFlag, uint32_t n,
                               const uint64_t* members) {
  if (paradigm != OTF2_PARADIGM_MPI) return OTF2_CALLBACK_SUCCESS;
  if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) T(d)->comm_locations.assign(members, members + n);
  if (type == OTF2_GROUP_TYPE_COMM_GROUP) T(d)->comm_group.assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Comm(void* d, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef,
                              OTF2_CommRef, OTF2_CommFlag) {
  T(d)->comms[self] = T(d)->strings[name];
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode RmaWin(void* d, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm,
                                OTF2_RmaWinFlag) {
  T(d)->rma_windows[self] = comm;
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode ClockOffset(void* d, OTF2_TimeStamp, int64_t, double) {
  ++*static_cast<int*>(d);
  return OTF2_CALLBACK_SUCCESS;
}

inline OTF2_CallbackCode Send(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                              OTF2_AttributeList*, uint32_t to, OTF2_CommRef c, uint32_t tag,
                              uint64_t n) {
  Add(d, l, {"MpiSend", t, to, c, tag, n});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Isend(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                               OTF2_AttributeList*, uint32_t to, OTF2_CommRef c, uint32_t tag,
                               uint64_t n, uint64_t req) {
  Add(d, l, {"MpiIsend", t, to, c, tag, n, 0, req});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Recv(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                              OTF2_AttributeList*, uint32_t from, OTF2_CommRef c, uint32_t tag,
                              uint64_t n) {
  Add(d, l, {"MpiRecv", t, from, c, tag, n});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Irecv(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                               OTF2_AttributeList*, uint32_t from, OTF2_CommRef c, uint32_t tag,
                               uint64_t n, uint64_t req) {
  Add(d, l, {"MpiIrecv", t, from, c, tag, n, 0, req});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode Request(const char* kind, OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                 uint64_t req) {
  Otf2Event e;
  e.kind = kind;
  e.time = t;
  e.request = req;
  Add(d, l, e);
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode IrecvRequest(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                      OTF2_AttributeList*, uint64_t req) {
  return Request("MpiIrecvRequest", l, t, d, req);
}
inline OTF2_CallbackCode IsendComplete(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                       OTF2_AttributeList*, uint64_t req) {
  return Request("MpiIsendComplete", l, t, d, req);
}
inline OTF2_CallbackCode Cancelled(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                   OTF2_AttributeList*, uint64_t req) {
  return Request("MpiRequestCancelled", l, t, d, req);
}
inline OTF2_CallbackCode CollBegin(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                   OTF2_AttributeList*) {
  return Request("MpiCollectiveBegin", l, t, d, 0);
}
inline OTF2_CallbackCode CollEnd(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                 OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef c,
                                 uint32_t root, uint64_t sent, uint64_t received) {
  Otf2Event e{"MpiCollectiveEnd", t, 0, c, 0, sent, received};
  e.op = op;
  e.root = root;
  Add(d, l, e);
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode RmaPut(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                OTF2_AttributeList*, OTF2_RmaWinRef w, uint32_t remote,
                                uint64_t bytes, uint64_t match) {
  Add(d, l, {"RmaPut", t, remote, w, 0, bytes, 0, match});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode RmaGet(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                OTF2_AttributeList*, OTF2_RmaWinRef w, uint32_t remote,
                                uint64_t bytes, uint64_t match) {
  Add(d, l, {"RmaGet", t, remote, w, 0, bytes, 0, match});
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode RmaAtomic(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                   OTF2_AttributeList*, OTF2_RmaWinRef w, uint32_t remote,
                                   OTF2_RmaAtomicType type, uint64_t sent, uint64_t received,
                                   uint64_t match) {
  Otf2Event e{"RmaAtomic", t, remote, w, 0, sent, received, match};
  e.op = type;
  Add(d, l, e);
  return OTF2_CALLBACK_SUCCESS;
}
inline OTF2_CallbackCode RmaDone(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                 OTF2_AttributeList*, OTF2_RmaWinRef, uint64_t match) {
  return Request("RmaOpCompleteBlocking", l, t, d, match);
}
inline OTF2_CallbackCode RmaDoneNb(OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* d,
                                   OTF2_AttributeList*, OTF2_RmaWinRef, uint64_t match) {
  return Request("RmaOpCompleteNonBlocking", l, t, d, match);
}
inline OTF2_CallbackCode Unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* d,
                                 OTF2_AttributeList*) {
  ++T(d)->unknown["unknown"];
  return OTF2_CALLBACK_SUCCESS;
}

inline OTF2_EvtReaderCallbacks* EventCallbacks() {
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, Unknown);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, Send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, Isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, IsendComplete);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, Recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, Irecv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, IrecvRequest);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, Cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, CollBegin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, CollEnd);
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, RmaPut);
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, RmaGet);
  OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cb, RmaAtomic);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cb, RmaDone);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(cb, RmaDoneNb);
  return cb;
}

}  // namespace otf2_read

// Reads the archive whose anchor file is `anchor` (ok false and `error` set on failure).
inline Otf2Trace ReadOtf2(const std::string& anchor) {
  namespace rd = otf2_read;
  Otf2Trace t;
  OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
  if (r == nullptr) {
    t.error = "cannot open " + anchor;
    return t;
  }
  OTF2_Reader_SetSerialCollectiveCallbacks(r);
  for (const char* p : {"UKAI::UNRECORDED", "UKAI::MISSING_RANKS"})
    t.properties[p] = rd::Property(r, p);
  OTF2_GlobalDefReader* g = OTF2_Reader_GetGlobalDefReader(r);
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(gcb, rd::Clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, rd::String);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(gcb, rd::LocGroup);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, rd::Location);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(gcb, rd::Group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(gcb, rd::Comm);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(gcb, rd::RmaWin);
  OTF2_Reader_RegisterGlobalDefCallbacks(r, g, gcb, &t);
  uint64_t n = 0;
  OTF2_ErrorCode e = OTF2_Reader_ReadAllGlobalDefinitions(r, g, &n);
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  OTF2_Reader_CloseGlobalDefReader(r, g);
  if (e != OTF2_SUCCESS) {
    t.error = std::string("global definitions: ") + OTF2_Error_GetName(e);
    OTF2_Reader_Close(r);
    return t;
  }
  for (const auto& [id, l] : t.locations) OTF2_Reader_SelectLocation(r, id);
  const bool defs = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
  OTF2_Reader_OpenEvtFiles(r);
  for (auto& [id, l] : t.locations) {
    if (defs) {
      if (OTF2_DefReader* d = OTF2_Reader_GetDefReader(r, id); d != nullptr) {
        OTF2_DefReaderCallbacks* dcb = OTF2_DefReaderCallbacks_New();
        OTF2_DefReaderCallbacks_SetClockOffsetCallback(dcb, rd::ClockOffset);
        OTF2_Reader_RegisterDefCallbacks(r, d, dcb, &l.clock_offsets);
        uint64_t m = 0;
        OTF2_Reader_ReadAllLocalDefinitions(r, d, &m);
        OTF2_DefReaderCallbacks_Delete(dcb);
        OTF2_Reader_CloseDefReader(r, d);
      }
    }
  }
  if (defs) OTF2_Reader_CloseDefFiles(r);
  for (auto& [id, l] : t.locations) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, id);
    if (er == nullptr) {
      t.error = "no event reader for location " + std::to_string(id);
      break;
    }
    OTF2_EvtReaderCallbacks* ecb = rd::EventCallbacks();
    OTF2_Reader_RegisterEvtCallbacks(r, er, ecb, &t);
    uint64_t m = 0;
    e = OTF2_Reader_ReadAllLocalEvents(r, er, &m);
    OTF2_EvtReaderCallbacks_Delete(ecb);
    OTF2_Reader_CloseEvtReader(r, er);
    if (e != OTF2_SUCCESS) {
      t.error = "events of location " + std::to_string(id) + ": " + OTF2_Error_GetName(e);
      break;
    }
  }
  OTF2_Reader_CloseEvtFiles(r);
  OTF2_Reader_Close(r);
  t.ok = t.error.empty();
  return t;
}

// Point-to-point messages: (sender rank, receiver rank, communicator, tag, bytes) -> count,
// from MpiSend / MpiIsend on the sender's side and MpiRecv / MpiIrecv on the receiver's (a
// location's rank is its location group). Every message replayed once iff the two maps are
// equal.
using MessageKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>;
inline std::map<MessageKey, int> Messages(const Otf2Trace& t, bool sends) {
  std::map<MessageKey, int> m;
  for (const auto& [id, l] : t.locations) {
    for (const Otf2Event& e : l.events) {
      if (sends && (e.kind == "MpiSend" || e.kind == "MpiIsend"))
        ++m[{l.group, e.peer, e.comm, e.tag, e.bytes}];
      if (!sends && (e.kind == "MpiRecv" || e.kind == "MpiIrecv"))
        ++m[{e.peer, l.group, e.comm, e.tag, e.bytes}];
    }
  }
  return m;
}

// "" when every location's timestamps are non-decreasing, its event count is what its
// definition declares, and every timestamp lies in the clock properties' range; else what is
// wrong.
inline std::string CheckOrder(const Otf2Trace& t) {
  for (const auto& [id, l] : t.locations) {
    if (l.events.size() != l.declared_events) {
      return "location " + std::to_string(id) + ": " + std::to_string(l.events.size()) +
             " events, definition says " + std::to_string(l.declared_events);
    }
    for (size_t i = 0; i < l.events.size(); ++i) {
      const uint64_t time = l.events[i].time;
      if (i > 0 && time < l.events[i - 1].time) {
        return "location " + std::to_string(id) + ": event " + std::to_string(i) + " goes back";
      }
      if (time < t.offset || time > t.offset + t.length) {
        return "location " + std::to_string(id) + ": event " + std::to_string(i) +
               " outside the clock range";
      }
    }
  }
  return "";
}

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_OTF2_READ_H_
