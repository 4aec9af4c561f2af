// A distributed key-value store on request/reply (Runtime::Request, Rsr::Reply): the same
// program runs as N processes; key k lives on rank hash(k) % N, whose context 1 / endpoint 1
// serves "kv.put" (key, value -> previous value count), "kv.get" (key -> value, or a
// kNotFound answer) and "kv.del". Every rank puts KEYS keys of its own (through the
// callback form, all in flight at once), reads them back and deletes half (futures), then
// checks that a deleted key is not found and that a request to a handler the servers do
// not have fails with kNotFound instead of hanging. No pending-request table by hand.
//
//   ukai launch -n 3 --modules shm rt_example_kv_store [KEYS]
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ukai/ukai.hpp"

namespace rt = ukai::rt;

namespace {

constexpr rt::ContextId kCtx = 1;
constexpr rt::EndpointId kEp = 1;

// The shard of one rank: a map under a mutex (the handlers are threaded).
struct Shard {
  std::mutex mu;
  std::map<std::string, std::string> data;
};

ukai::Status Serve(rt::Context& c, Shard* shard) {
  auto ep = c.CreateEndpoint({.id = kEp});
  if (!ep.ok()) return ep.status();
  auto put = (*ep)->RegisterHandler("kv.put", rt::HandlerKind::kThreaded, [shard](rt::Rsr& m) {
    std::string key = *m.reader().GetString();  // a malformed request fails alone
    std::string value = *m.reader().GetString();
    rt::Buffer reply;
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      reply.PutU32(static_cast<uint32_t>(shard->data.count(key)));
      shard->data[key] = std::move(value);
    }
    m.Reply(std::move(reply));
  });
  if (!put.ok()) return put.status();
  auto get = (*ep)->RegisterHandler("kv.get", rt::HandlerKind::kThreaded, [shard](rt::Rsr& m) {
    std::string key = *m.reader().GetString();
    std::lock_guard<std::mutex> lock(shard->mu);
    auto it = shard->data.find(key);
    if (it == shard->data.end()) {
      m.Fail(ukai::Status::NotFound("no key '" + key + "'"));
      return;
    }
    rt::Buffer reply;
    reply.PutString(it->second);
    m.Reply(std::move(reply));
  });
  if (!get.ok()) return get.status();
  return (*ep)
      ->RegisterHandler("kv.del", rt::HandlerKind::kThreaded,
                        [shard](rt::Rsr& m) {
                          std::string key = *m.reader().GetString();
                          rt::Buffer reply;
                          std::lock_guard<std::mutex> lock(shard->mu);
                          reply.PutU32(static_cast<uint32_t>(shard->data.erase(key)));
                          m.Reply(std::move(reply));
                        })
      .status();
}

class Client {
 public:
  Client(rt::Runtime& r, std::vector<rt::Startpoint> servers)
      : r_(r), servers_(std::move(servers)) {}

  const rt::Startpoint& Owner(const std::string& key) const {
    return servers_[std::hash<std::string>()(key) % servers_.size()];
  }
  rt::ReplyFuture Call(const char* op, const std::string& key, const std::string* value) {
    rt::Buffer b;
    b.PutString(key);
    if (value != nullptr) b.PutString(*value);
    return r_.Request(std::move(b), Owner(key), rt::HandlerId::Of(op),
                      {.timeout = std::chrono::seconds(30)});
  }

 private:
  rt::Runtime& r_;
  std::vector<rt::Startpoint> servers_;
};

// "v14" (prefix and number; built in two steps, which GCC 12's -Wrestrict accepts).
std::string Name(const char* prefix, int n) {
  std::string s(prefix);
  s += std::to_string(n);
  return s;
}

int Fail(const char* what, const ukai::Status& st) {
  std::fprintf(stderr, "kv_store: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

int RunClient(rt::Runtime& r, Client& kv, int keys) {
  const std::string me = Name("r", r.rank()) + ".";
  // Puts: the callback form, every put in flight at once.
  std::atomic<int> put_done{0}, put_failed{0};
  for (int i = 0; i < keys; ++i) {
    const std::string key = me + std::to_string(i), value = Name("v", i * 7);
    rt::Buffer b;
    b.PutString(key);
    b.PutString(value);
    ukai::Status st =
        r.Request(std::move(b), kv.Owner(key), rt::HandlerId::Of("kv.put"), [&](rt::Reply& reply) {
          if (!reply.ok()) ++put_failed;
          ++put_done;
        });
    if (!st.ok()) return Fail("put", st);
  }
  // Wait in the runtime (not a spin of our own): on a simulated machine (`ukai launch --sim`)
  // a wait outside the runtime would hold simulated time (docs/sim-module.md).
  while (put_done.load() < keys) r.Progress();
  if (put_failed.load() != 0) return Fail("put", ukai::Status::Internal("some puts failed"));
  // Gets: futures.
  for (int i = 0; i < keys; ++i) {
    const std::string key = me + std::to_string(i);
    rt::Reply got = kv.Call("kv.get", key, nullptr).Wait();
    if (!got.ok()) return Fail("get", got.status());
    if (*got.reader().GetString() != Name("v", i * 7)) {
      return Fail("get", ukai::Status::Internal("wrong value for " + key));
    }
  }
  for (int i = 0; i < keys; i += 2) {
    rt::Reply del = kv.Call("kv.del", me + std::to_string(i), nullptr).Wait();
    if (!del.ok() || *del.reader().GetU32() != 1) return Fail("del", del.status());
  }
  rt::Reply gone = kv.Call("kv.get", me + "0", nullptr).Wait();
  if (gone.status().code() != ukai::StatusCode::kNotFound)
    return Fail("get deleted", gone.status());
  rt::Reply typo = kv.Call("kv.gte", me + "1", nullptr).Wait();
  if (typo.status().code() != ukai::StatusCode::kNotFound) return Fail("typo", typo.status());
  if (r.rank() == 0) std::printf("kv.gte -> %s\n", typo.status().ToString().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto made = rt::Runtime::Init(argc, argv);  // bootstrap "auto": launcher or mpi
  if (!made.ok()) return Fail("init", made.status());
  rt::Runtime& r = **made;
  const int keys = argc > 1 ? std::atoi(argv[1]) : 1000;
  Shard shard;
  auto ctx = r.CreateContext(
      {.name = "kv", .id = kCtx, .init = [&](rt::Context& c) { return Serve(c, &shard); }});
  if (!ctx.ok()) return Fail("context", ctx.status());
  std::vector<rt::Startpoint> servers;
  for (int i = 0; i < r.size(); ++i) {
    auto sp = r.WorldStartpoint(i, kCtx, kEp);
    if (!sp.ok()) return Fail("startpoint", sp.status());
    servers.push_back(*sp);
  }
  if (!r.Barrier().ok()) return 1;  // every shard serves before the first request
  Client kv(r, servers);
  int rc = RunClient(r, kv, keys);
  if (!r.Barrier().ok()) return 1;  // nobody leaves while others still ask
  size_t held = 0;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    held = shard.data.size();
  }
  std::printf("rank %d of %d: %d keys put, read back, half deleted; shard holds %zu%s\n", r.rank(),
              r.size(), keys, held, rc == 0 ? "" : " (FAILED)");
  return r.Finalize().ok() ? rc : 1;
}
