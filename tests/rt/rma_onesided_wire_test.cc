// The wire side of the MPI one-sided path (rma_wire.h ops 4-6) and what a target without a
// window makes of them (inproc: no module offers one): asks and releases decode with clear
// errors for bad input; an ask to a target that cannot grant is answered "use packets"
// after the usual checks (a revoked key is still refused and reported); a release that was
// never granted is counted malformed and changes nothing. The granting path itself runs
// under mpirun: rma_onesided_mpi_itest.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "rt/rma/rma_core.h"
#include "rt/rma/rma_wire.h"
#include "rt_test_util.h"
#include "ukai/ukai.hpp"

namespace ukai::rt::testing {
namespace {

using internal::RmaRequest;
using internal::RmaWireOp;

std::vector<uint8_t> Encode(const RmaRequest& r) {
  std::vector<uint8_t> out(internal::RequestSize(r));
  internal::EncodeRequest(r, out.data());
  return out;
}

RmaRequest Ask(RmaWireOp op, uint32_t length) {
  RmaRequest r;
  r.op = op;
  r.segment = 1;
  r.op_id = 7;
  r.length = length;
  return r;
}

TEST(RmaOneSidedWire, AsksAndReleasesDecodeAndBadOnesAreNamed) {
  for (RmaWireOp op :
       {RmaWireOp::kOneSidedPut, RmaWireOp::kOneSidedGet, RmaWireOp::kOneSidedDone}) {
    Result<RmaRequest> d = internal::DecodeRequest(Encode(Ask(op, 3u << 20)));
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->op, op);
    EXPECT_EQ(d->length, 3u << 20);  // the whole operation: no 4 KiB limit
    EXPECT_TRUE(d->data.empty());
  }
  std::vector<uint8_t> with_data = Encode(Ask(RmaWireOp::kOneSidedPut, 4096));
  with_data.push_back(1);
  Result<RmaRequest> d = internal::DecodeRequest(with_data);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("1 data bytes after a one-sided ask"), std::string::npos)
      << d.status().ToString();
  d = internal::DecodeRequest(Encode(Ask(RmaWireOp::kOneSidedGet, 0)));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("one-sided ask of 0 bytes"), std::string::npos);
  std::vector<uint8_t> bad_op = Encode(Ask(RmaWireOp::kOneSidedPut, 1));
  bad_op[0] = 7;
  d = internal::DecodeRequest(bad_op);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("op 7 is not"), std::string::npos);
  // Packets keep their limit.
  RmaRequest big = Ask(RmaWireOp::kGet, 4097);
  d = internal::DecodeRequest(Encode(big));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("over 4096 bytes"), std::string::npos);
  // Replies: ops 4 and 5 answer asks; a release has no reply.
  internal::RmaReply rep;
  rep.op = RmaWireOp::kOneSidedDone;
  std::vector<uint8_t> bytes(internal::ReplySize(rep));
  internal::EncodeReply(rep, bytes.data());
  EXPECT_FALSE(internal::DecodeReply(bytes).ok());
  rep.op = RmaWireOp::kOneSidedGet;
  internal::EncodeReply(rep, bytes.data());
  EXPECT_TRUE(internal::DecodeReply(bytes).ok());
}

// Two inproc runtimes: 0 initiates, 1 is the target (no window: inproc has none).
class RmaOneSidedTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fabric = NewInprocFabric();
    for (int i = 0; i < 2; ++i) {
      auto rt = Runtime::Init(ModuleOptions("inproc", fabric));
      ASSERT_TRUE(rt.ok()) << rt.status().ToString();
      rts_.push_back(std::move(*rt));
      auto ctx = rts_[i]->CreateContext({.name = i == 0 ? "initiator" : "target"});
      ASSERT_TRUE(ctx.ok());
      auto rma = Rma::Create(**ctx);
      ASSERT_TRUE(rma.ok()) << rma.status().ToString();
      rma_.push_back(std::move(*rma));
    }
  }
  void TearDown() override {
    rma_.clear();
    for (int i : {1, 0}) EXPECT_TRUE(rts_[i]->Finalize().ok());
  }
  // A hand-made ask / release from runtime 0 with its true identity and reply route.
  void Send(const RemoteKey& key, RmaWireOp op, uint32_t access_id) {
    RmaRequest r = Ask(op, 1u << 20);
    r.flags = internal::kReqHasReturn;
    route_ = rts_[0]
                 ->FindContext(rma_[0]->process_id().context)
                 ->FindEndpoint(kRmaEndpointId)
                 ->MakeStartpoint()
                 .Serialize();
    r.return_route = route_;
    r.segment = key.segment;
    r.dest = key.process;
    r.dest_access_id = access_id;
    r.init = rma_[0]->process_id();
    r.init_access_id = rma_[0]->access_id();
    Buffer b;
    const std::vector<uint8_t> bytes = Encode(r);
    b.block().Resize(Buffer::kHeadroom + bytes.size());
    std::memcpy(b.block().data() + Buffer::kHeadroom, bytes.data(), bytes.size());
    ASSERT_TRUE(rts_[0]->SendRsr(std::move(b), key.route, internal::kRmaRequestHandler).ok());
  }
  std::vector<std::unique_ptr<Runtime>> rts_;
  std::vector<std::unique_ptr<Rma>> rma_;
  std::vector<uint8_t> route_;
};

TEST_F(RmaOneSidedTarget, WithoutAWindowAsksAreCheckedThenSentToPackets) {
  std::vector<uint8_t> mem(2 << 20);
  const RemoteKey key = *rma_[1]->Register(mem);
  // A valid ask: nothing to grant (no window), so no grant is counted.
  Send(key, RmaWireOp::kOneSidedPut, key.access_id);
  // A revoked key: refused as a packet would be, the protection handler told.
  bool told = false;
  rma_[1]->SetProtectionHandler([&](const ProcessId&, uint32_t) { return told = true, false; });
  Send(key, RmaWireOp::kOneSidedPut, key.access_id + 1);
  ASSERT_TRUE(WaitFor([&] { return rma_[1]->stats().access_rejected == 1; }));
  EXPECT_TRUE(told);
  EXPECT_EQ(rma_[1]->stats().onesided_granted, 0u);
  // A release that was never granted: malformed, nothing released.
  const uint64_t malformed = rma_[1]->stats().malformed;
  Send(key, RmaWireOp::kOneSidedDone, key.access_id);
  ASSERT_TRUE(WaitFor([&] { return rma_[1]->stats().malformed == malformed + 1; }));
  EXPECT_EQ(rma_[1]->stats().onesided_released, 0u);
  // Large operations from the library itself never ask over inproc: all packets.
  std::vector<uint8_t> data(1 << 20, 3);
  ASSERT_TRUE(rma_[0]->PutSync(key, 0, data).ok());
  EXPECT_EQ(rma_[0]->stats().onesided_accesses + rma_[0]->stats().onesided_fallbacks, 0u);
  EXPECT_EQ(mem[(1 << 20) - 1], 3);
}

}  // namespace
}  // namespace ukai::rt::testing
