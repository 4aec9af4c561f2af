// Replays the fuzz/ entry points under gcc (and ASan/UBSan in CI): a corpus of edge cases
// plus a few thousand seeded random and mutated inputs. A target aborts on a broken
// invariant, so merely returning is the check.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "fuzz_mutate.h"
#include "rt/rma/rma_wire.h"
#include "ukai/ukai.hpp"
#include "wire/rsr_frame.h"

extern "C" int rsr_frame_fuzz_TestOneInput(const uint8_t* data, size_t size);
extern "C" int buffer_fuzz_TestOneInput(const uint8_t* data, size_t size);
extern "C" int rma_request_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::rt {
namespace {

// Encoded RMA requests (put with a reply route, get, atomic, the one-sided asks and their
// release), a reply and remote keys
// (version 1, and version 2 with the direct path's fields).
std::vector<std::vector<uint8_t>> RmaSeeds(const Startpoint& sp) {
  std::vector<std::vector<uint8_t>> out;
  const std::vector<uint8_t> route = sp.Serialize(), data = {1, 2, 3};
  internal::RmaRequest r;
  r.flags = internal::kReqHasReturn | internal::kReqHasFlag;
  r.return_route = route;
  r.length = 3;
  r.data = data;
  r.flag = 8;
  for (internal::RmaWireOp op :
       {internal::RmaWireOp::kPut, internal::RmaWireOp::kGet, internal::RmaWireOp::kAtomic}) {
    r.op = op;
    r.atomics.assign(2, AtomicOp{AtomicOpcode::kCas, 4, 8, 1, 2});
    std::vector<uint8_t> bytes(internal::RequestSize(r));
    internal::EncodeRequest(r, bytes.data());
    out.push_back(std::move(bytes));
  }
  // The one-sided asks and their release: no data, a length above the 4 KiB packet limit
  // (the whole transfer's).
  r.data = {};
  r.atomics.clear();
  r.length = 1 << 20;
  for (internal::RmaWireOp op :
       {internal::RmaWireOp::kOneSidedPut, internal::RmaWireOp::kOneSidedGet,
        internal::RmaWireOp::kOneSidedDone}) {
    r.op = op;
    std::vector<uint8_t> bytes(internal::RequestSize(r));
    internal::EncodeRequest(r, bytes.data());
    EXPECT_TRUE(internal::DecodeRequest(bytes).ok()) << "one-sided op " << int(op);
    out.push_back(std::move(bytes));
  }
  internal::RmaReply rep;
  rep.code = StatusCode::kOutOfRange;
  rep.message = "msg";
  rep.data = data;
  std::vector<uint8_t> bytes(internal::ReplySize(rep));
  internal::EncodeReply(rep, bytes.data());
  out.push_back(std::move(bytes));
  RemoteKey key;
  key.process = {77, 1};
  key.page_size = 4096;
  key.route = Startpoint(sp.shared_descriptors(), 1, kRmaEndpointId);
  out.push_back(key.Serialize());
  // A version 2 key (an Allocate'd segment: host, nonce, shm object names).
  key.host = 5;
  key.nonce = 6;
  key.control_name = "/ukai-shm-12-00000000000000aa";
  key.memory_name = "/ukai-shm-12-00000000000000bb";
  out.push_back(key.Serialize());
  return out;
}

std::vector<std::vector<uint8_t>> Seeds() {
  std::vector<std::vector<uint8_t>> out;
  wire::FrameHeader h;
  h.payload_len = 3;
  h.source = 1;
  h.target = 2;
  h.context = 3;
  h.endpoint = 4;
  h.handler = 5;
  h.flags = wire::kFlagHasAddress;
  h.address = 6;
  std::vector<uint8_t> frame(wire::kHeaderSize + 3, 9);
  wire::EncodeHeader(h, {frame.data(), wire::kHeaderSize});
  out.push_back(frame);
  auto table = std::make_shared<DescriptorTable>();
  table->runtime = 77;
  table->entries.push_back({"tcp", {1, 2, 3, 4}});
  table->entries.push_back({"inproc", {5}});
  Startpoint sp(table, 1, 2, 3);
  out.push_back(sp.Serialize());
  Buffer b;
  b.PutU8(1);
  b.PutI64(-2);
  b.PutF32(3.5f);
  b.PutBool(true);
  b.PutString("four");
  b.PutBytes(std::vector<uint8_t>{5, 6});
  b.PutStartpoint(sp);
  out.emplace_back(b.payload().begin(), b.payload().end());
  out.push_back({});
  out.push_back({0x55, 0x4b, 0x41, 0x49});
  out.push_back({12, 0xff, 0xff, 0xff, 0xff});  // string longer than everything
  out.push_back({14, 4, 0, 0, 0, 1, 0, 0, 0});  // startpoint truncated inside
  out.push_back({11, 7});                       // bool 7
  for (std::vector<uint8_t>& rma : RmaSeeds(sp)) out.push_back(std::move(rma));
  return out;
}

void Feed(const std::vector<uint8_t>& in) {
  rsr_frame_fuzz_TestOneInput(in.data(), in.size());
  buffer_fuzz_TestOneInput(in.data(), in.size());
  rma_request_fuzz_TestOneInput(in.data(), in.size());
}

TEST(FuzzReplay, EdgeCasesAndEveryTruncation) {
  for (const auto& seed : Seeds()) {
    for (size_t n = 0; n <= seed.size(); ++n) Feed({seed.begin(), seed.begin() + n});
  }
}

TEST(FuzzReplay, SeededRandomAndMutatedInputs) {
  std::mt19937_64 rng(20261121);
  const auto seeds = Seeds();
  for (int i = 0; i < 4000; ++i) {
    std::vector<uint8_t> in;
    if (i % 2 == 0) {  // mutate a seed: flip, overwrite, insert or delete bytes
      in = seeds[rng() % seeds.size()];
      ukai::testing::MutateBytes(rng, &in);
    } else {  // random bytes, biased towards valid tags and small lengths
      in.resize(rng() % 96);
      for (auto& x : in) x = static_cast<uint8_t>(rng() % 3 == 0 ? rng() % 16 : rng());
    }
    Feed(in);
  }
}

}  // namespace
}  // namespace ukai::rt
