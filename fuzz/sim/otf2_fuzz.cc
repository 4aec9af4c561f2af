// libFuzzer target: the OTF2 reader (sim/workload/otf2_archive.h, on libotf2) and the MPI
// replay (otf2_replay.h) on untrusted archives. The first input byte picks the form of the
// rest:
//   even: a program. Byte 1 chooses the ranks (1-4), the collective algorithm and the eager
//         limit; then every 6 bytes are one event (location, record kind, four operands)
//         written with libotf2's writer in time order: sends, receives, requests,
//         cancellations, collectives on the world, a sub-communicator, MPI_COMM_SELF or an
//         undefined one, RMA operations and their completions, regions, a record the replay
//         does not model. Peers, tags, sizes and request ids come from the operands, so
//         traces that match, that never match, that reuse ids, that name ranks outside
//         their communicator or whose collectives differ between ranks all occur.
//   odd:  the raw bytes of rank 0's event file in an otherwise valid 2-rank archive
//         (libotf2's decoder and the reader's handling of its errors).
// The archive is written to a scratch directory and replayed on a 4 x 4 mesh for at most
// 200000 cycles. Must never crash, hang, abort or throw; an error is a Status (never
// kInternal) naming the archive; the network never carries more messages than were added.
// Corpus: fuzz/corpus/otf2/; replayed by tests/sim/workload/otf2_fuzz_replay_test.cc under
// gcc, ASan and UBSan.
#include <otf2/otf2.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

// The test code's archive writer (header-only, libotf2).
#include "../../tests/sim/workload/otf2_writer.h"
#include "sim/engine/network.h"
#include "sim/workload/otf2_replay.h"
#include "sim/workload/run_workload.h"
#include "sim/workload/workload.h"

namespace {

using ukai::testing::Otf2TestArchive;
constexpr int64_t kMaxCycles = 200000;

std::string ScratchDir() {
  return (std::filesystem::temp_directory_path() / ("ukai_otf2_fuzz_" + std::to_string(::getpid())))
      .string();
}

void CheckError(const ukai::Status& st, const std::string& anchor) {
  if (st.ok() || st.code() == ukai::StatusCode::kInternal) std::abort();
  if (st.message().find(anchor) == std::string::npos &&
      st.message().find("workload.") == std::string::npos) {
    std::abort();  // every error names the archive (or the key)
  }
}

// One event from 6 bytes: b[0] location, b[1] kind, b[2..5] operands.
void WriteEvent(Otf2TestArchive& a, int locations, uint64_t* clock, const uint8_t* b,
                OTF2_CommRef sub, OTF2_CommRef self, OTF2_RmaWinRef win) {
  OTF2_EvtWriter* w = a.Events(b[0] % locations);
  const uint64_t t = clock[b[0] % locations] += 1 + b[5] % 64;
  const uint32_t peer = b[2] % 5;  // 4 is outside every communicator
  const uint32_t tag = b[3] % 4;
  const uint64_t bytes = b[4] < 200 ? b[4] * 8u : 70000u + b[4];  // some above eager
  const uint64_t req = b[5] % 4;
  const OTF2_CommRef comms[] = {Otf2TestArchive::kWorld, sub, self, 7};
  const OTF2_CommRef comm = comms[(b[3] >> 4) % 4];
  switch (b[1] % 20) {
    case 0:
      OTF2_EvtWriter_MpiSend(w, nullptr, t, peer, comm, tag, bytes);
      break;
    case 1:
      OTF2_EvtWriter_MpiRecv(w, nullptr, t, peer, comm, tag, bytes);
      break;
    case 2:
      OTF2_EvtWriter_MpiIsend(w, nullptr, t, peer, comm, tag, bytes, req);
      break;
    case 3:
      OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, req);
      break;
    case 4:
      OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, req);
      break;
    case 5:
      OTF2_EvtWriter_MpiIrecv(w, nullptr, t, peer, comm, tag, bytes, req);
      break;
    case 6:
      OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, t, req);
      break;
    case 7:
      OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
      break;
    case 8:
    case 9:
      OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, static_cast<OTF2_CollectiveOp>(b[2] % 24),
                                      comm, b[3] % 3, bytes * (b[5] % 5), bytes * (b[3] % 5));
      break;
    case 10:
      OTF2_EvtWriter_RmaPut(w, nullptr, t, b[4] % 2 ? win : 9, peer, bytes, req);
      break;
    case 11:
      OTF2_EvtWriter_RmaGet(w, nullptr, t, win, peer, bytes, req);
      break;
    case 12:
      OTF2_EvtWriter_RmaAtomic(w, nullptr, t, win, peer, OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ADD, 8,
                               bytes, req);
      break;
    case 13:
      OTF2_EvtWriter_RmaOpCompleteBlocking(w, nullptr, t, win, req);
      break;
    case 14:
      OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, nullptr, t, win, req);
      break;
    case 15:
      OTF2_EvtWriter_RmaCollectiveBegin(w, nullptr, t);
      break;
    case 16:
      OTF2_EvtWriter_RmaCollectiveEnd(w, nullptr, t, static_cast<OTF2_CollectiveOp>(b[2] % 23),
                                      OTF2_RMA_SYNC_LEVEL_NONE, b[4] % 2 ? win : 9, 0, bytes,
                                      bytes);
      break;
    case 17:
      OTF2_EvtWriter_Enter(w, nullptr, t, b[2] % 5);
      break;
    case 18:
      OTF2_EvtWriter_Leave(w, nullptr, t, b[2] % 5);
      break;
    default:
      OTF2_EvtWriter_ThreadFork(w, nullptr, t, OTF2_PARADIGM_OPENMP, 2);
  }
}

std::string WriteProgram(const std::string& dir, const uint8_t* data, size_t size) {
  const int ranks = 1 + data[0] % 4;
  Otf2TestArchive a(dir, ranks);
  const OTF2_CommRef sub =
      a.AddComm("sub", ranks > 1 ? std::vector<int>{1, 0} : std::vector<int>{0});
  const OTF2_CommRef self = a.AddSelfComm("MPI_COMM_SELF");
  const OTF2_RmaWinRef win = a.AddWindow(Otf2TestArchive::kWorld);
  int locations = ranks;
  if ((data[0] >> 6) & 1) locations = a.AddThread(0) + 1;  // rank 0's second thread
  uint64_t clock[8] = {};
  for (size_t at = 1; at + 6 <= size; at += 6) {
    WriteEvent(a, locations, clock, data + at, sub, self, win);
  }
  return a.Close();
}

std::string WriteRaw(const std::string& dir, const uint8_t* data, size_t size) {
  Otf2TestArchive a(dir, 2);
  OTF2_EvtWriter_MpiSend(a.Events(0), nullptr, 1, 1, Otf2TestArchive::kWorld, 0, 8);
  OTF2_EvtWriter_MpiRecv(a.Events(1), nullptr, 2, 0, Otf2TestArchive::kWorld, 0, 8);
  const std::string anchor = a.Close();
  std::ofstream(dir + "/traces/0.evt", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return anchor;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ukai::sim;
  if (size < 2) return 0;
  const std::string dir = ScratchDir();
  const bool raw = (data[0] & 1) != 0;
  const std::string anchor =
      raw ? WriteRaw(dir, data + 1, size - 1) : WriteProgram(dir, data + 1, size - 1);
  SimConfig config;
  config.network.topology = TopologyKind::kMesh;
  config.network.n = 2;
  config.network.k = {4, 4};
  config.router.clock_mhz = 1000;
  config.measure.max_cycles = kMaxCycles;
  config.workload.kind = WorkloadKind::kOtf2;
  config.workload.file = anchor;
  config.workload.collective_algorithm = static_cast<CollectiveAlgorithm>((data[0] >> 1) % 4);
  config.workload.eager_bytes = (data[0] & 8) ? 65536 : 64;
  config.workload.compute = (data[0] & 16) ? ComputeMode::kNone : ComputeMode::kTrace;
  ukai::Result<std::unique_ptr<Network>> net = Network::Create(config, {}, false);
  if (!net.ok()) std::abort();
  ukai::Result<std::unique_ptr<TraceSource>> source =
      OpenTraceSource(config, (*net)->topology(), 1000);
  if (!source.ok()) {
    CheckError(source.status(), anchor);
    std::filesystem::remove_all(dir);
    return 0;
  }
  Workload w(WorkloadOptionsFor(config));
  w.AddSource(source->get());
  (*net)->SetMessageSource(&w);
  while ((*net)->now() < kMaxCycles && !w.Done() && !w.Stuck((*net)->now())) {
    if ((*net)->SkipIdle(kMaxCycles) && (*net)->now() >= kMaxCycles) break;
    (*net)->Step();
    if (!w.status().ok()) {
      CheckError(w.status(), anchor);
      break;
    }
  }
  (*net)->SetMessageSource(nullptr);
  if (w.stats().messages_delivered + w.stats().messages_lost > w.stats().messages_added) {
    std::abort();
  }
  WorkloadFigures f;
  std::vector<std::string> notes;
  (*source)->Report(w, {(*net)->now(), 1000, w.Done()}, &f, &notes);
  if (f.replayed_messages != w.stats().messages_delivered) std::abort();
  std::filesystem::remove_all(dir);
  return 0;
}
