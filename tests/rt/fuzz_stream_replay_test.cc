// Replays the stream and protocol fuzz targets (fuzz/tcp_stream_fuzz.cc, shm_stream_fuzz.cc,
// handshake_fuzz.cc, tcp_hello_fuzz.cc, launch_protocol_fuzz.cc) under gcc (and ASan/UBSan in CI):
// a small corpus of well-formed and broken inputs per target, every truncation of it, and seeded
// mutations. A target traps on a broken invariant, so returning is the check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "fuzz_mutate.h"
#include "rt/launch/launch_protocol.h"
#include "rt/modules/shm/shm_channel.h"
#include "rt/modules/shm/shm_socket.h"
#include "rt/modules/tcp/tcp_dial.h"
#include "rt/modules/tcp/tcp_hello.h"
#include "ukai/ukai.hpp"
#include "wire/rsr_frame.h"

extern "C" int tcp_stream_fuzz_TestOneInput(const uint8_t* data, size_t size);
extern "C" int shm_stream_fuzz_TestOneInput(const uint8_t* data, size_t size);
extern "C" int handshake_fuzz_TestOneInput(const uint8_t* data, size_t size);
extern "C" int launch_protocol_fuzz_TestOneInput(const uint8_t* data, size_t size);
extern "C" int tcp_hello_fuzz_TestOneInput(const uint8_t* data, size_t size);

namespace ukai::rt {
namespace {

using Bytes = std::vector<uint8_t>;
using Target = int (*)(const uint8_t*, size_t);

void Append(Bytes* out, const Bytes& more) { out->insert(out->end(), more.begin(), more.end()); }

// An RSR frame to context 1, endpoint 1, handler `name`, target = the tcp target's
// placeholder (replaced by the runtime's id).
Bytes RsrFrameBytes(const char* name, size_t payload, uint32_t flags = 0) {
  wire::FrameHeader h;
  h.source = 0x77;
  h.context = 1;
  h.endpoint = 1;
  h.handler = HandlerId::Of(name).value;
  h.payload_len = static_cast<uint32_t>(payload);
  h.flags = flags;
  if (flags & wire::kFlagHasAddress) h.address = 9;
  Bytes b(wire::kHeaderSize + payload, 0x42);
  wire::EncodeHeader(h, {b.data(), wire::kHeaderSize});
  const uint8_t placeholder[8] = {'U', 'K', 'A', 'I', 'T', 'G', 'T', '!'};
  std::memcpy(b.data() + 24, placeholder, 8);  // the header's target field
  return b;
}

std::vector<Bytes> TcpCorpus() {
  std::vector<Bytes> out;
  Bytes two = {1};  // hello first, written byte by byte
  Append(&two, RsrFrameBytes("h", 5));
  Append(&two, RsrFrameBytes("t", 300, wire::kFlagHasAddress));
  out.push_back(two);
  Bytes big = {1 | (6 << 1)};  // a frame larger than the receive buffer, in 4 KiB chunks
  Append(&big, RsrFrameBytes("h", 300 << 10));
  out.push_back(big);
  out.push_back({0, 'G', 'E', 'T', ' ', '/'});  // no hello
  Bytes half = {1};
  Append(&half, RsrFrameBytes("h", 100));
  half.resize(half.size() - 40);  // ends mid-frame
  out.push_back(half);
  Bytes bye = {1};
  wire::FrameHeader b;
  b.kind = wire::FrameKind::kBye;
  b.source = 0x77;
  Bytes frame(wire::kHeaderSize);
  wire::EncodeHeader(b, {frame.data(), frame.size()});
  Append(&bye, frame);
  Append(&bye, RsrFrameBytes("h", 1));  // after the goodbye
  out.push_back(bye);
  return out;
}

std::vector<Bytes> ShmCorpus() {
  auto record = [](uint8_t flags, const Bytes& body) {
    Bytes r = {flags, static_cast<uint8_t>(body.size()), static_cast<uint8_t>(body.size() >> 8)};
    Append(&r, body);
    return r;
  };
  Bytes compact(shm::kCompactHeader + 8, 0);
  compact[0] = 1;  // context 1 ...
  Bytes whole = RsrFrameBytes("h", 20);
  std::vector<Bytes> out;
  Bytes s;
  Append(&s, record(shm::kCompactRsr, compact));
  Append(&s, record(shm::kWholeFrame, whole));
  Bytes first = RsrFrameBytes("h", 3000);
  Append(&s, record(shm::kFirstChunk, Bytes(first.begin(), first.begin() + 1000)));
  Append(&s, record(shm::kMiddleChunk, Bytes(first.begin() + 1000, first.begin() + 2000)));
  Append(&s, record(shm::kLastChunk, Bytes(first.begin() + 2000, first.end())));
  Append(&s, record(shm::kPoolFrame, Bytes(24, 1)));
  Append(&s, record(shm::kLastChunk, Bytes(10, 0)));  // out of sequence
  Append(&s, record(0x33, Bytes(5, 0)));              // unknown flags
  out.push_back(s);
  // A first chunk that is a whole frame is refused; the chunks after it, an empty one among
  // them, are out of sequence (they once went on into a fresh block: UBSan saw the empty
  // one's copy to a null block).
  Bytes refused;
  const Bytes small = RsrFrameBytes("h", 20);
  Append(&refused, record(shm::kFirstChunk, small));
  Append(&refused, record(shm::kMiddleChunk, {}));
  Append(&refused, record(shm::kMiddleChunk, Bytes(first.begin() + 1000, first.begin() + 2000)));
  Append(&refused, record(shm::kLastChunk, Bytes(first.begin() + 2000, first.end())));
  out.push_back(refused);
  Bytes many;  // more than the 64 KiB ring holds
  for (int i = 0; i < 200; ++i) Append(&many, record(shm::kWholeFrame, RsrFrameBytes("h", 900)));
  out.push_back(many);
  return out;
}

std::vector<Bytes> HandshakeCorpus() {
  std::vector<Bytes> out;
  Bytes h = {0};
  shm::Hello hello{1, 2, KeyKind::kJoin, {}, {}, "/ukai-shm-1-0123456789abcdef"};
  hello.nonce.fill(7);
  hello.mac.fill(9);
  Append(&h, shm::EncodeHello(hello));
  out.push_back(h);
  Bytes r = {1};
  Append(&r, shm::EncodeReply({0, 2, 1, {}}));
  out.push_back(r);
  Bytes t = {2};  // tcp: version, port, host, host identity, bind
  Append(&t, tcp::EncodeTarget({0x3039, "127.0.0.1", "boot|net:[1]", tcp::Bind::kLoopback}));
  out.push_back(t);
  out.push_back({3, 1, 3, 0, 'k', 'e', 'y', 2, 0, 's', 'n'});  // shm: version, key, name
  return out;
}

std::vector<Bytes> TcpHelloCorpus() {
  std::vector<Bytes> out;
  auto with = [&](uint8_t selector, const Bytes& body) {
    Bytes b = {selector};
    Append(&b, body);
    out.push_back(b);
  };
  tcp::Hello hello{tcp::kResume, {}};
  hello.nonce.fill(3);
  with(0, tcp::EncodeHello(hello));
  tcp::Challenge ch;
  ch.nonce.fill(4);
  ch.mac.fill(5);
  with(1, tcp::EncodeChallenge(ch));
  with(2, tcp::EncodeProof({77, ch.mac}));
  with(3, tcp::EncodeWelcome({tcp::WelcomeStatus::kSuperseded, 12, ch.mac}));
  with(4, tcp::EncodeCount(1234));
  with(5, tcp::Frame(wire::FrameKind::kHello, 1, 2, tcp::EncodeHello(hello)));
  with(6, tcp::EncodeTarget({4321, "10.0.0.1", "boot|net:[4026531840]", tcp::Bind::kSpecific}));
  Bytes both = tcp::EncodeChallenge(ch);
  Append(&both, tcp::EncodeWelcome({tcp::WelcomeStatus::kAccepted, 0, ch.mac}));
  with(7, both);
  return out;
}

std::vector<Bytes> LaunchCorpus() {
  auto msg = [](launch::MsgType type, const Bytes& body) {
    Bytes m(5);
    wire::PutLe32(m.data(), static_cast<uint32_t>(body.size() + 1));
    m[4] = static_cast<uint8_t>(type);
    Append(&m, body);
    return m;
  };
  DescriptorTable t;
  t.runtime = 5;
  t.entries.push_back({"tcp", {1, 2, 3, 4}});
  Bytes table;
  t.EncodeTo(&table);
  Bytes tables(4);
  wire::PutLe32(tables.data(), 2);  // two ranks
  for (int r = 0; r < 2; ++r) {
    Bytes len(4);
    wire::PutLe32(len.data(), static_cast<uint32_t>(table.size()));
    Append(&tables, len);
    Append(&tables, table);
  }
  Bytes s = {3, 1};  // chunks of 4 bytes, 2 ranks
  Bytes hello_body = {1, 0, 0, 0};
  const Mac proof = launch::HelloMac(SecretKey{}, 1);
  hello_body.insert(hello_body.end(), proof.begin(), proof.end());
  Append(&s, msg(launch::MsgType::kHello, hello_body));
  Append(&s, msg(launch::MsgType::kTable, table));
  Append(&s, msg(launch::MsgType::kTables, tables));
  Append(&s, msg(launch::MsgType::kBarrier, {}));
  Append(&s, msg(launch::MsgType::kFinish, {}));
  std::vector<Bytes> out = {s};
  Bytes bad = {0, 0, 0xff, 0xff, 0xff, 0x7f, 3};  // length far over the limit
  out.push_back(bad);
  Bytes overrun = {7, 1};
  Bytes lie(4);
  wire::PutLe32(lie.data(), 2);
  Append(&lie, {0xff, 0xff, 0xff, 0xff});  // a table "4 GiB long"
  Append(&overrun, msg(launch::MsgType::kTables, lie));
  out.push_back(overrun);
  return out;
}

// Every seed, up to `cuts` of its truncations (all of them when it is short), then
// `mutations` seeded random edits of seeds.
void Replay(Target target, const std::vector<Bytes>& corpus, int mutations, size_t cuts) {
  for (const Bytes& seed : corpus) {
    const size_t step = std::max<size_t>(1, seed.size() / cuts);
    for (size_t n = 0; n <= seed.size(); n += step) target(seed.data(), n);
    target(seed.data(), seed.size());
  }
  std::mt19937_64 rng(20261124);
  for (int i = 0; i < mutations; ++i) {
    Bytes in = corpus[rng() % corpus.size()];
    ukai::testing::MutateBytes(rng, &in);
    target(in.data(), in.size());
  }
}

TEST(FuzzStreamReplay, TcpStream) { Replay(tcp_stream_fuzz_TestOneInput, TcpCorpus(), 60, 40); }
TEST(FuzzStreamReplay, ShmStream) { Replay(shm_stream_fuzz_TestOneInput, ShmCorpus(), 150, 200); }
TEST(FuzzStreamReplay, Handshake) {
  Replay(handshake_fuzz_TestOneInput, HandshakeCorpus(), 4000, 1000);
}
TEST(FuzzStreamReplay, TcpHello) {
  Replay(tcp_hello_fuzz_TestOneInput, TcpHelloCorpus(), 20000, 1000);
}
TEST(FuzzStreamReplay, LaunchProtocol) {
  Replay(launch_protocol_fuzz_TestOneInput, LaunchCorpus(), 2000, 1000);
}

}  // namespace
}  // namespace ukai::rt
