// libFuzzer target: the tcp handshake (src/rt/modules/tcp/tcp_hello.h) and the tcp
// descriptor (tcp_dial.h), as a listener and a dialer decode what the other side sent
// before it proved anything. Byte 0 picks the message; the rest is its payload:
//   0 hello, 1 challenge, 2 proof, 3 welcome, 4 ack/bye count: a decoded message must
//     encode back to the same bytes;
//   5 a whole handshake frame (header + payload) as the listener's first read sees it:
//     decoded with the handshake's payload limit, then as the hello it must be;
//   6 a descriptor: decoded, encoded back, and the address chosen to dial it;
//   7 a challenge and a welcome checked as the dialer checks them against a transcript
//     (a random input never proves the key).
// Bad input must give an error naming the field, never a crash or an out-of-bounds read.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "rt/modules/tcp/tcp_dial.h"
#include "rt/modules/tcp/tcp_hello.h"
#include "wire/rsr_frame.h"

namespace {

namespace tcp = ukai::rt::tcp;

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "tcp_hello_fuzz: %s\n", what);
  __builtin_trap();
}

template <typename T, typename Decode, typename Encode>
void RoundTrip(std::span<const uint8_t> in, Decode decode, Encode encode) {
  ukai::Result<T> m = decode(in);
  if (!m.ok()) {
    Check(!m.status().message().empty(), "an error without a message");
    return;
  }
  const std::vector<uint8_t> again = encode(*m);
  Check(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()),
        "decode then encode changed the bytes");
}

void Frame(std::span<const uint8_t> in) {
  auto h = ukai::wire::DecodeHeader(in, 64);
  if (!h.ok()) return;
  Check(h->payload_len <= 64, "a handshake frame over the limit was accepted");
  if (in.size() < h->frame_size()) return;
  (void)tcp::DecodeHello(in.subspan(h->header_len, h->payload_len));
}

void Descriptor(std::span<const uint8_t> in) {
  ukai::Result<tcp::Target> t = tcp::DecodeTarget(in);
  if (!t.ok()) return;
  const std::vector<uint8_t> again = tcp::EncodeTarget(*t);
  Check(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()),
        "descriptor: decode then encode changed the bytes");
  ukai::Result<std::string> a = tcp::DialAddress(*t, "fuzz-host|net:[1]");
  Check(!a.ok() || !a->empty(), "an empty address to dial");
}

void DialerChecks(std::span<const uint8_t> in) {
  const ukai::rt::SecretKey key{};
  tcp::Transcript t{1, 2, 0, {}, {}};
  if (in.size() < tcp::kChallengeBytes) return;
  ukai::Result<tcp::Challenge> c = tcp::DecodeChallenge(in.first(tcp::kChallengeBytes));
  Check(c.ok(), "a challenge of the right size was refused");
  t.nonce_l = c->nonce;
  const bool proved = ukai::rt::MacEqual(tcp::ListenerMac(key, t), c->mac);
  ukai::Result<tcp::Welcome> w = tcp::DecodeWelcome(in.subspan(tcp::kChallengeBytes));
  if (w.ok()) (void)ukai::rt::MacEqual(tcp::WelcomeMac(key, t, w->status, w->received), w->mac);
  // A forged listener proof needs HMAC-SHA-256 under the key: a fuzzer does not find one.
  Check(!proved, "random bytes proved the key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      RoundTrip<tcp::Hello>(in, tcp::DecodeHello, tcp::EncodeHello);
      break;
    case 1:
      RoundTrip<tcp::Challenge>(in, tcp::DecodeChallenge, tcp::EncodeChallenge);
      break;
    case 2:
      RoundTrip<tcp::Proof>(in, tcp::DecodeProof, tcp::EncodeProof);
      break;
    case 3:
      RoundTrip<tcp::Welcome>(in, tcp::DecodeWelcome, tcp::EncodeWelcome);
      break;
    case 4:
      RoundTrip<uint64_t>(in, tcp::DecodeCount, tcp::EncodeCount);
      break;
    case 5:
      Frame(in);
      break;
    case 6:
      Descriptor(in);
      break;
    default:
      DialerChecks(in);
      break;
  }
  return 0;
}
