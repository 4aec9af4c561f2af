// libFuzzer target: the channel between `ukai launch --sim` and its processes
// (src/rt/modules/sim/sim_wire.h), read by both ends. Input: byte 0 picks the chunk size in
// which the rest is fed to the incremental SimWireParser; every message it yields is decoded
// as its type says, and what decodes is encoded again and must decode to the same values.
// Bad input must give an error, never a crash, hang or overflow.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "rt/modules/sim/sim_wire.h"

namespace sw = ukai::rt::simwire;

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void DecodeBody(const sw::Message& m) {
  const std::span<const uint8_t> b(m.body);
  switch (m.type) {
    case sw::Type::kHello:
      if (auto h = sw::DecodeHello(b); h.ok()) {
        const std::vector<uint8_t> e = sw::EncodeHello(h->rank, h->runtime, h->thread, h->cpu);
        auto again = sw::DecodeHello(std::span<const uint8_t>(e).subspan(5));
        Check(again.ok() && again->rank == h->rank && again->runtime == h->runtime &&
              again->thread == h->thread && again->cpu == h->cpu);
      }
      break;
    case sw::Type::kCall:
      if (auto c = sw::DecodeCall(b); c.ok()) {
        Check(c->call != nullptr && c->cpu >= 0);
        const std::vector<uint8_t> e =
            sw::EncodeCall(c->thread, c->kind, sw::CallIndex(c->call), c->cpu);
        auto again = sw::DecodeCall(std::span<const uint8_t>(e).subspan(5));
        Check(again.ok() && again->thread == c->thread && again->kind == c->kind &&
              std::strcmp(again->call, c->call) == 0 && again->cpu == c->cpu);
      }
      break;
    case sw::Type::kNow:
      if (auto n = sw::DecodeNow(b); n.ok()) Check(n->cpu >= 0);
      break;
    case sw::Type::kPost:
      if (auto p = sw::DecodePost(b); p.ok()) {
        Check(!p->frame.empty() && p->frame.size() <= sw::MaxFrameBytes());
        Check(p->frame.data() + p->frame.size() == b.data() + b.size());
      }
      break;
    case sw::Type::kDispatched:
      (void)sw::DecodeDispatched(b);
      break;
    case sw::Type::kWelcome:
      if (auto w = sw::DecodeWelcome(b); w.ok()) Check(w->clock_mhz > 0);
      break;
    case sw::Type::kNowIs:
      if (auto n = sw::DecodeNowIs(b); n.ok()) Check(n->cycles >= 0);
      break;
    case sw::Type::kArrive:
      if (auto f = sw::DecodeArrive(b); f.ok()) Check(f->size() == b.size());
      break;
    case sw::Type::kPeerGone:
      if (auto g = sw::DecodePeerGone(b); g.ok()) Check(g->text.size() + 9 == b.size());
      break;
    case sw::Type::kRefused:
    case sw::Type::kStopped:
      (void)sw::DecodeText(b);
      break;
    case sw::Type::kTaken:
      (void)sw::DecodeTaken(b);
      break;
    case sw::Type::kLeave:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t chunk = 1 + data[0] % 64;
  sw::SimWireParser parser;
  for (size_t at = 1; at < size; at += chunk) {
    parser.Append(data + at, std::min(chunk, size - at));
    for (;;) {
      sw::Message m;
      auto more = parser.Next(&m);
      if (!more.ok()) return 0;  // the connection is dropped
      if (!*more) break;
      Check(m.body.size() + 1 <= sw::MaxMessageBytes());
      DecodeBody(m);
    }
  }
  return 0;
}
