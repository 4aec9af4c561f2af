#include "shm_ring_bench.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "rt/modules/shm/shm_segment.h"

namespace ukai::bench {
namespace {

using rt::shm::RecordView;
using rt::shm::RingConsumer;
using rt::shm::RingProducer;

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), &set);
  sched_setaffinity(0, sizeof set, &set);
}

void Send(RingProducer& out, const std::byte* src, size_t size, uint32_t flags) {
  while (!out.TryWrite({src, size}, {}, flags)) {
  }
}

uint32_t Receive(RingConsumer& in) {
  RecordView v;
  while (!in.Peek(&v)) {
  }
  const uint32_t flags = v.flags;
  in.Release();
  return flags;
}

// Commands from the parent to the echo child, in the record flags.
constexpr uint32_t kEcho = 1, kSink = 2, kSinkLast = 3, kQuit = 4;

int Child(const std::string& name) {
  PinTo(1);
  auto seg = rt::shm::ShmSegment::Attach(name);
  if (!seg.ok()) return 1;
  RingConsumer in = (*seg)->MakeConsumer();
  RingProducer out = (*seg)->MakeProducer();
  for (;;) {
    RecordView v;
    while (!in.Peek(&v)) {
    }
    const uint32_t cmd = v.flags;
    if (cmd == kEcho) {
      // Echo straight from the incoming record (read in place).
      Send(out, v.payload.data(), v.payload.size(), kEcho);
    }
    in.Release();
    if (cmd == kSinkLast) {
      const std::byte ack[8] = {};
      Send(out, ack, sizeof ack, kSinkLast);
    }
    if (cmd == kQuit) return 0;
  }
}

}  // namespace

Figures RunShmRing(const std::vector<size_t>& sizes, double seconds) {
  Figures f;
  auto seg = rt::shm::ShmSegment::Create(rt::shm::kDefaultRingCapacity);
  if (!seg.ok()) {
    f.note = seg.status().ToString();
    return f;
  }
  const pid_t pid = fork();
  if (pid == 0) _exit(Child((*seg)->name()));
  cpu_set_t saved;
  sched_getaffinity(0, sizeof saved, &saved);
  PinTo(0);
  RingProducer out = (*seg)->MakeProducer();
  RingConsumer in = (*seg)->MakeConsumer();
  size_t max = 0;
  for (size_t s : sizes) max = std::max(max, s);
  std::vector<std::byte> buf(max, std::byte{7});
  for (size_t s : sizes) {
    for (int i = 0; i < 100; ++i) {
      Send(out, buf.data(), s, kEcho);
      Receive(in);
    }
    std::vector<double> samples;
    const double end = NowSeconds() + seconds;
    while (NowSeconds() < end || samples.size() < 20) {
      const double t0 = NowSeconds();
      Send(out, buf.data(), s, kEcho);
      Receive(in);
      samples.push_back(NowSeconds() - t0);
    }
    f.latency_us[s] = Median(samples) / 2 * 1e6;
  }
  for (size_t s : sizes) {
    std::vector<double> rates;
    const double t0 = NowSeconds();
    while (NowSeconds() - t0 < seconds || rates.size() < 5) {
      const double w0 = NowSeconds();
      for (int i = 0; i < 63; ++i) Send(out, buf.data(), s, kSink);
      Send(out, buf.data(), s, kSinkLast);
      Receive(in);
      rates.push_back(static_cast<double>(s) * 64 / (NowSeconds() - w0) / 1e9);
    }
    f.bandwidth_gbs[s] = Median(rates);
  }
  Send(out, buf.data(), 8, kQuit);
  int status = 0;
  waitpid(pid, &status, 0);
  sched_setaffinity(0, sizeof saved, &saved);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) f.note = "ring echo child failed";
  return f;
}

}  // namespace ukai::bench
