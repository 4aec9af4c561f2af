// One rank of an RMA test under mpirun (rma_mpi_itest.cc, rma_direct_mpi_itest.cc): a runtime
// on the mpi bootstrap and module, context kRankCtx whose endpoint kRankEp has a handler "key"
// that receives the other rank's serialised RemoteKey, and an Rma in that context.
#ifndef UKAI_TESTS_RT_RMA_MPI_UTIL_H_
#define UKAI_TESTS_RT_RMA_MPI_UTIL_H_

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt::testing {

inline constexpr ContextId kRankCtx = 1;
inline constexpr EndpointId kRankEp = 1;

struct RmaRank {
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Rma> rma;
  std::mutex mu;
  std::vector<uint8_t> peer_key;  // under mu

  Status Init(RmaOptions rma_options = {}) {
    RuntimeOptions o;
    o.bootstrap = "mpi";
    o.modules = {"mpi"};
    auto r = Runtime::Init(o);
    if (!r.ok()) return r.status();
    rt = std::move(*r);
    ContextOptions co;
    co.id = kRankCtx;
    co.init = [this](Context& c) -> Status {
      auto ep = c.CreateEndpoint({kRankEp});
      if (!ep.ok()) return ep.status();
      return (*ep)
          ->RegisterHandler("key", HandlerKind::kNonThreaded,
                            [this](Rsr& m) {
                              std::lock_guard<std::mutex> lock(mu);
                              peer_key.assign(m.payload().begin(), m.payload().end());
                            })
          .status();
    };
    Result<Context*> ctx = rt->CreateContext(co);
    if (!ctx.ok()) return ctx.status();
    auto m = Rma::Create(**ctx, rma_options);
    if (!m.ok()) return m.status();
    rma = std::move(*m);
    return Status::Ok();
  }

  // Sends `mine` to the other rank (of two) and returns the key it sent us. The barrier
  // first: an RSR that reaches a rank before it created kRankCtx is refused (dropped), so
  // both ranks must have the context before either sends.
  Result<RemoteKey> SwapKeys(const RemoteKey& mine) {
    if (Status s = rt->Barrier(); !s.ok()) return s;
    auto sp = rt->WorldStartpoint(1 - rt->rank(), kRankCtx, kRankEp);
    if (!sp.ok()) return sp.status();
    Buffer kb;
    const std::vector<uint8_t> bytes = mine.Serialize();
    kb.block().Resize(Buffer::kHeadroom + bytes.size());
    std::memcpy(kb.block().data() + Buffer::kHeadroom, bytes.data(), bytes.size());
    if (Status s = rt->SendRsr(std::move(kb), *sp, HandlerId::Of("key")); !s.ok()) return s;
    if (!WaitFor([&] {
          std::lock_guard<std::mutex> lock(mu);
          return !peer_key.empty();
        })) {
      return Status::Unavailable("no key from the other rank");
    }
    std::lock_guard<std::mutex> lock(mu);
    return RemoteKey::Parse(peer_key);
  }
};

}  // namespace ukai::rt::testing

#endif  // UKAI_TESTS_RT_RMA_MPI_UTIL_H_
