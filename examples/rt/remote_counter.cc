// Remote counter: a server context holds a counter; clients in another runtime increment it
// with RSRs handled by *threaded* handlers (they take a mutex and may block), and each
// increment is acknowledged with an RSR back to the client's startpoint.
//
//   rt_example_remote_counter [--ukai-modules=tcp]
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  rt::RuntimeOptions base;
  base.bootstrap = "single";
  base.params["tcp.listen"] = "127.0.0.1:0";
  auto server = rt::Runtime::Init(argc, argv, base);
  if (!server.ok()) return std::fprintf(stderr, "%s\n", server.status().ToString().c_str()), 1;
  rt::RuntimeOptions client_opts = base;
  client_opts.modules = (*server)->modules();
  auto client = rt::Runtime::Init(client_opts);
  if (!client.ok()) return 1;

  std::mutex mu;
  int64_t counter = 0;
  rt::Endpoint* counter_ep = nullptr;
  auto sctx = (*server)->CreateContext(
      {.name = "counter", .init = [&](rt::Context& c) {
         auto ep = c.CreateEndpoint();
         if (!ep.ok()) return ep.status();
         counter_ep = *ep;
         // Threaded: may block on the mutex without stalling the progress thread.
         auto h = counter_ep->RegisterHandler("add", rt::HandlerKind::kThreaded, [&](rt::Rsr& m) {
           int64_t by = *m.reader().GetI64();
           rt::Startpoint reply = *m.reader().GetStartpoint();
           int64_t now;
           {
             std::lock_guard<std::mutex> lock(mu);
             now = counter += by;
           }
           rt::Buffer ack;
           ack.PutI64(now);
           m.runtime().SendRsr(std::move(ack), reply, rt::HandlerId::Of("ack"));
         });
         return h.ok() ? ukai::Status::Ok() : h.status();
       }});
  if (!sctx.ok()) return 1;
  const rt::Startpoint counter_sp = counter_ep->MakeStartpoint();

  constexpr int kClients = 4, kAdds = 250;
  std::atomic<int> acks{0};
  auto cctx = (*client)->CreateContext({.name = "clients"});
  rt::Endpoint* client_ep = *(*cctx)->CreateEndpoint();
  client_ep->RegisterHandler("ack", rt::HandlerKind::kNonThreaded, [&](rt::Rsr&) { ++acks; });
  const rt::Startpoint me = client_ep->MakeStartpoint();
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAdds; ++i) {
        rt::Buffer b;
        b.PutI64(2);
        b.PutStartpoint(me);
        (*client)->SendRsr(std::move(b), counter_sp, rt::HandlerId::Of("add"));
      }
    });
  }
  for (auto& th : threads) th.join();
  while (acks.load() < kClients * kAdds) std::this_thread::yield();
  std::printf("counter = %lld after %d adds of 2 (module %s)\n", static_cast<long long>(counter),
              kClients * kAdds, (*client)->SelectModule(counter_sp)->c_str());
  (*client)->Finalize();
  (*server)->Finalize();
  return counter == 2 * kClients * kAdds ? 0 : 1;
}
