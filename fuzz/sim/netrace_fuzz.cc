// libFuzzer target: the netrace reader (sim/workload/netrace_format.h) and its replay
// (netrace_source.h) on untrusted bytes. The first input byte picks the form of the rest:
// even = the decompressed trace itself (so that mutations reach the header and packet
// parser), odd = a bzip2 stream (the decompressor's error paths). The second byte's low
// bits choose workload.dependencies and the start region.
//
// A trace that opens is replayed on a 16 x 16 mesh (any netrace node count fits) for at
// most 20000 cycles. Must never crash, hang, abort or throw; a trace error is a Status
// (never kInternal) whose message names the trace; a replay never delivers a packet it
// did not read, nor more packets than it read.
// Corpus: fuzz/corpus/netrace/; replayed by tests/sim/workload/netrace_fuzz_replay_test.cc
// under gcc, ASan and UBSan.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>

#include "sim/engine/network.h"
#include "sim/workload/netrace_source.h"
#include "sim/workload/workload.h"

namespace {

constexpr int64_t kMaxCycles = 20000;

void CheckError(const ukai::Status& st) {
  if (st.ok() || st.code() == ukai::StatusCode::kInternal) std::abort();
  if (st.message().find("fuzz.tra") == std::string::npos &&
      st.message().find("workload.") == std::string::npos) {
    std::abort();  // every error names the trace (or the key)
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ukai::sim;
  if (size < 2) return 0;
  const bool compressed = (data[0] & 1) != 0;
  const std::span<const uint8_t> rest(data + 2, size - 2);
  std::unique_ptr<ByteStream> stream;
  if (compressed) {
    stream = Bz2Stream::FromMemory(rest);
  } else {
    stream = std::make_unique<MemoryStream>(rest);
  }
  ukai::Result<std::unique_ptr<NetraceReader>> reader =
      NetraceReader::FromStream(std::move(stream), "fuzz.tra");
  if (!reader.ok()) {
    CheckError(reader.status());
    return 0;
  }
  SimConfig config;
  config.network.topology = TopologyKind::kMesh;
  config.network.n = 2;
  config.network.k = {16, 16};
  config.measure.max_cycles = kMaxCycles;
  config.workload.kind = WorkloadKind::kNetrace;
  config.workload.dependencies = (data[1] & 1) == 0;
  config.workload.region = (data[1] >> 1) & 3;
  ukai::Result<std::unique_ptr<Network>> net = Network::Create(config, {}, false);
  if (!net.ok()) std::abort();
  ukai::Result<std::unique_ptr<NetraceSource>> source =
      NetraceSource::FromReader(std::move(*reader), config.workload, (*net)->topology());
  if (!source.ok()) {
    CheckError(source.status());
    return 0;
  }
  Workload w(WorkloadOptions{config.router.flit_bytes, 32767, false});
  w.AddSource(source->get());
  (*net)->SetMessageSource(&w);
  while ((*net)->now() < kMaxCycles && !w.Done() && !w.Stuck((*net)->now())) {
    if ((*net)->SkipIdle(kMaxCycles) && (*net)->now() >= kMaxCycles) break;
    (*net)->Step();
    if (!w.status().ok()) {
      CheckError(w.status());
      break;
    }
  }
  (*net)->SetMessageSource(nullptr);
  if (w.stats().messages_delivered > (*source)->packets_read()) std::abort();
  if (w.stats().messages_added > (*source)->packets_read()) std::abort();
  return 0;
}
