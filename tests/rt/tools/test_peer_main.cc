// A peer process for the runtime's multi-process tests: prints its startpoint, answers
// "echo" RSRs and "inc" requests, holds "hold" requests unanswered (request/reply tests),
// exits on "quit" (or when its stdout pipe closes). With --rma-bytes=N (before the --ukai-*
// options) it also registers N bytes for RMA and prints their remote key (hex) on a second
// line.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

using ukai::rt::HandlerKind;
using ukai::rt::Rsr;

int main(int argc, char** argv) {
  size_t rma_bytes = 0;
  if (argc > 1 && std::strncmp(argv[1], "--rma-bytes=", 12) == 0) {
    rma_bytes = std::strtoull(argv[1] + 12, nullptr, 10);
    argv[1] = argv[0];
    --argc;
    ++argv;
  }
  auto rt = ukai::rt::Runtime::Init(argc, argv);
  if (!rt.ok()) {
    std::fprintf(stderr, "test_peer: %s\n", rt.status().ToString().c_str());
    return 2;
  }
  std::atomic<bool> quit{false};
  ukai::rt::Endpoint* ep = nullptr;
  auto ctx = (*rt)->CreateContext({.name = "peer", .init = [&](ukai::rt::Context& c) {
                                     auto e = c.CreateEndpoint();
                                     if (!e.ok()) return e.status();
                                     ep = *e;
                                     return ukai::Status::Ok();
                                   }});
  if (!ctx.ok()) return 3;
  ep->RegisterHandler("echo", HandlerKind::kNonThreaded, [](Rsr& m) {
    auto v = m.reader().GetU64();
    auto reply = m.reader().GetStartpoint();
    if (!v.ok() || !reply.ok()) return;
    ukai::rt::Buffer b;
    b.PutU64(*v + 1);
    m.runtime().SendRsr(std::move(b), *reply, ukai::rt::HandlerId::Of("echo_reply"));
  });
  ep->RegisterHandler("inc", HandlerKind::kNonThreaded, [](Rsr& m) {
    auto v = m.reader().GetU64();
    ukai::rt::Buffer b;
    b.PutU64(v.ok() ? *v + 1 : 0);
    (void)m.Reply(std::move(b));
  });
  std::vector<ukai::rt::Replier> held;  // progress thread only
  ep->RegisterHandler("hold", HandlerKind::kNonThreaded,
                      [&](Rsr& m) { held.push_back(m.TakeReplier()); });
  ep->RegisterHandler("quit", HandlerKind::kNonThreaded, [&](Rsr&) { quit.store(true); });
  // Flow-control tests: "sink" RSRs carry their sequence number; "report" prints the count.
  uint64_t sunk = 0, out_of_order = 0;
  ep->RegisterHandler("sink", HandlerKind::kNonThreaded, [&](Rsr& m) {
    auto seq = m.reader().GetU64();
    if (!seq.ok() || *seq != sunk) ++out_of_order;
    ++sunk;
  });
  ep->RegisterHandler("report", HandlerKind::kNonThreaded, [&](Rsr&) {
    std::printf("sink %llu bad %llu\n", static_cast<unsigned long long>(sunk),
                static_cast<unsigned long long>(out_of_order));
    std::fflush(stdout);
  });
  std::printf("%s\n", ep->MakeStartpoint().ToString().c_str());
  std::unique_ptr<ukai::rt::Rma> rma;
  std::vector<uint8_t> memory(rma_bytes);
  if (rma_bytes > 0) {
    for (size_t i = 0; i < memory.size(); ++i) memory[i] = static_cast<uint8_t>(i * 7);
    auto r = ukai::rt::Rma::Create(**ctx);
    auto key = r.ok() ? (*r)->Register(memory) : ukai::Result<ukai::rt::RemoteKey>(r.status());
    if (!key.ok()) return 4;
    rma = *std::move(r);
    for (uint8_t byte : key->Serialize()) std::printf("%02x", byte);
    std::printf("\n");
  }
  std::fflush(stdout);
  while (!quit.load()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  rma.reset();
  return (*rt)->Finalize().ok() ? 0 : 1;
}
