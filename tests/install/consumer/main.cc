// A program built out of tree against the installed ukai package (tests/install/): only
// <ukai/ukai.hpp>, libukai and C++20. Every rank serves "double" (u64 -> 2 * u64) and asks
// its right neighbour (itself when alone) through request/reply; prints "ukai consumer: ok".
//
//   consumer                      # one process
//   ukai launch -n 2 consumer     # two, through the installed `ukai` tool
#include <chrono>
#include <cstdio>

#include <ukai/ukai.hpp>

namespace rt = ukai::rt;

int main(int argc, char** argv) {
  auto made = rt::Runtime::Init(argc, argv);
  if (!made.ok()) return std::fprintf(stderr, "%s\n", made.status().ToString().c_str()), 1;
  rt::Runtime& r = **made;
  auto ctx = r.CreateContext({.name = "consumer", .id = 1, .init = [](rt::Context& c) {
                                auto ep = c.CreateEndpoint({.id = 1});
                                if (!ep.ok()) return ep.status();
                                return (*ep)
                                    ->RegisterHandler("double", rt::HandlerKind::kNonThreaded,
                                                      [](rt::Rsr& m) {
                                                        rt::Buffer b;
                                                        b.PutU64(2 * *m.reader().GetU64());
                                                        m.Reply(std::move(b));
                                                      })
                                    .status();
                              }});
  if (!ctx.ok()) return std::fprintf(stderr, "%s\n", ctx.status().ToString().c_str()), 1;
  if (!r.Barrier().ok()) return 1;
  ukai::Result<rt::Startpoint> next = r.WorldStartpoint((r.rank() + 1) % r.size(), 1, 1);
  if (!next.ok()) return std::fprintf(stderr, "%s\n", next.status().ToString().c_str()), 1;
  rt::Buffer q;
  q.PutU64(21);
  rt::Reply reply = r.Request(std::move(q), *next, rt::HandlerId::Of("double"),
                              {.timeout = std::chrono::seconds(30)})
                        .Wait();
  const bool ok = reply.ok() && *reply.reader().GetU64() == 42;
  if (!r.Barrier().ok() || !r.Finalize().ok()) return 1;
  std::printf("ukai consumer (rank %d of %d): %s\n", r.rank(), r.size(),
              ok ? "ok" : reply.status().ToString().c_str());
  return ok ? 0 : 1;
}
