// Passing startpoints through a third context: A knows B; A sends C's startpoint to B;
// B, which never heard of C, picks a module from the descriptor table inside the
// startpoint, greets C and passes its own startpoint; C answers B. With --ukai-trace the
// runtime prints which module each peer got.
//
//   rt_example_forward_startpoint [--ukai-modules=tcp] [--ukai-trace]
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  rt::RuntimeOptions base;
  base.bootstrap = "single";
  base.params["tcp.listen"] = "127.0.0.1:0";
  auto first = rt::Runtime::Init(argc, argv, base);
  if (!first.ok()) return std::fprintf(stderr, "%s\n", first.status().ToString().c_str()), 1;
  std::vector<std::unique_ptr<rt::Runtime>> rts;
  rts.push_back(std::move(*first));
  rt::RuntimeOptions same = base;
  same.modules = rts[0]->modules();
  for (int i = 1; i < 3; ++i) rts.push_back(rt::Runtime::Init(same).value());
  std::vector<rt::Endpoint*> eps;
  const char* names[] = {"A", "B", "C"};
  for (int i = 0; i < 3; ++i) {
    auto ctx = rts[i]->CreateContext({.name = names[i]});
    eps.push_back(*(*ctx)->CreateEndpoint());
  }
  std::atomic<bool> done{false};
  eps[1]->RegisterHandler("meet", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
    rt::Startpoint c = *m.reader().GetStartpoint();
    std::printf("B: got a startpoint to runtime %016llx; greeting it\n",
                static_cast<unsigned long long>(c.runtime()));
    rt::Buffer b;
    b.PutString("hello from B");
    b.PutStartpoint(eps[1]->MakeStartpoint());
    m.runtime().SendRsr(std::move(b), c, rt::HandlerId::Of("greet"));
  });
  eps[2]->RegisterHandler("greet", rt::HandlerKind::kThreaded, [&](rt::Rsr& m) {
    std::string text = *m.reader().GetString();
    rt::Startpoint b = *m.reader().GetStartpoint();
    std::printf("C: '%s'; answering through the forwarded startpoint\n", text.c_str());
    rt::Buffer r;
    r.PutString("hello back from C");
    m.runtime().SendRsr(std::move(r), b, rt::HandlerId::Of("answer"));
  });
  eps[1]->RegisterHandler("answer", rt::HandlerKind::kNonThreaded, [&](rt::Rsr& m) {
    std::printf("B: '%s'\n", m.reader().GetString()->c_str());
    done = true;
  });
  rt::Buffer b;
  b.PutStartpoint(eps[2]->MakeStartpoint());
  if (!rts[0]->SendRsr(std::move(b), eps[1]->MakeStartpoint(), rt::HandlerId::Of("meet")).ok()) {
    return 1;
  }
  for (int i = 0; i < 20000 && !done.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& r : rts) r->Finalize();
  return done.load() ? 0 : 1;
}
