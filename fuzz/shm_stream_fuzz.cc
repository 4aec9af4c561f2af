// libFuzzer target: the shm module's record stream as the receiving channel sees it
// (ShmChannel::Poll on a ring a hostile peer writes). The input is a sequence of records
// [u8 flags][u16 length LE][length bytes] written raw into the ring of an in-process
// segment pair (64 KiB rings) and polled through as they fit: compact RSRs, whole frames,
// chunk sequences, pool records (no pool mapped), unknown flags. kCmaFrame records are
// turned into unknown flags: they make the receiver read the sender's memory by address,
// which a peer with ptrace rights over us may do anyway. Everything delivered must decode;
// bad records must be rejected and counted, never crash or loop.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "rt/modules/shm/shm_channel.h"
#include "wire/rsr_frame.h"

namespace {

using namespace ukai::rt;  // NOLINT: a fuzz entry point
using ukai::Status;

class CountingHost final : public ModuleHost {
 public:
  RuntimeId runtime_id() const override { return 2; }
  std::string Param(std::string_view) const override { return ""; }
  bool tracing() const override { return false; }
  void Trace(std::string_view) const override {}
  void Deliver(const ukai::wire::FrameHeader& h, std::span<const uint8_t> payload,
               ByteBlock*) override {
    if (payload.size() != h.payload_len) __builtin_trap();
    volatile uint8_t sum = 0;
    for (uint8_t b : payload) sum = static_cast<uint8_t>(sum + b);
    ++delivered;
  }
  Status DeliverFrame(std::span<const uint8_t> frame, ByteBlock* owned) override {
    auto v = ukai::wire::DecodeFrame(frame);
    if (!v.ok()) {
      RejectFrame(v.status());
      return v.status();
    }
    Deliver(v->header, v->payload, owned);
    return Status::Ok();
  }
  void RejectFrame(const Status&) override { ++rejected; }
  void AdoptIncoming(RuntimeId, std::shared_ptr<CommObject>) override {}
  void PeerFailed(RuntimeId, std::string_view, bool, const Status&) override {}
  void Wake() override {}
  uint64_t delivered = 0, rejected = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto seg = shm::ShmSegment::Create(1 << 16);
  if (!seg.ok()) return 0;
  auto att = shm::ShmSegment::Attach((*seg)->name());
  if (!att.ok()) return 0;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) return 0;
  CountingHost host;
  shm::RingProducer raw = (*seg)->MakeProducer();
  auto receiver = std::make_unique<shm::ShmChannel>(2, 1, std::move(*att), sv[1], dup(sv[0]),
                                                    1 << 12, 0, &host);
  const size_t max_record = shm::MaxRecordPayload(1 << 16);
  size_t at = 0, records = 0;
  while (at + 3 <= size) {
    uint32_t flags = data[at];
    if (flags == shm::kCmaFrame) flags = 0x7f;
    const size_t n = std::min<size_t>(data[at + 1] | (data[at + 2] << 8), size - at - 3);
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + at + 3),
                                           std::min(n, max_record));
    at += 3 + n;
    if (!raw.TryWrite(bytes, {}, flags)) {  // full: the receiver drains the ring
      while (receiver->Poll(&host, 1 << 20) > 0) {
      }
      receiver->ReleaseDelivered();
      if (!raw.TryWrite(bytes, {}, flags)) __builtin_trap();  // an empty ring takes it
    }
    ++records;
    if (records % 4 == 0) receiver->Poll(&host, 1 << 20);
  }
  while (receiver->Poll(&host, 1 << 20) > 0) {
  }
  receiver->ReleaseDelivered();
  if (host.delivered > records) __builtin_trap();
  receiver.reset();
  close(sv[0]);
  return 0;
}
