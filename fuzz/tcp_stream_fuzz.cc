// libFuzzer target: the tcp module's stream handling (connection set-up included) as a
// runtime's listener sees it: the input is written on a raw connection to a real runtime
// (tcp only, progress driven here), then the connection is half-closed and the runtime
// progresses until it dropped it. Byte 0: bit 0 = first complete the handshake
// (src/rt/modules/tcp/tcp_hello.h) as a fresh runtime id proving the job secret, so inputs
// reach the frame parser of an authenticated session; bits 1-3 = write chunk size class;
// every 8-byte "UKAITGT!" in the rest is replaced by the runtime's id (frames can target
// it), and a frame's source 0x77 by the id the handshake claimed. One runtime serves
// kInputsPerRuntime inputs, each on a new connection. Handlers "h" (non-threaded) and "t"
// (threaded) of context 1, endpoint 1 read their payload. Bad bytes must be rejected or fail the
// connection: never a crash or a hang.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "rt/modules/tcp/tcp_hello.h"
#include "ukai/ukai.hpp"
#include "wire/rsr_frame.h"

namespace {

using ukai::rt::Runtime;

// A broken invariant: say which, then stop (libFuzzer records the input).
void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "tcp_stream_fuzz: %s\n", what);
  __builtin_trap();
}

constexpr uint8_t kPlaceholder[8] = {'U', 'K', 'A', 'I', 'T', 'G', 'T', '!'};
// The runtime serves this many inputs, each on its own connection (and, past the
// handshake, its own session), before it is replaced (its tables stay small).
constexpr int kInputsPerRuntime = 256;

ukai::rt::SecretKey Secret() {
  ukai::rt::SecretKey k;
  k.fill(0x5a);
  return k;
}

std::unique_ptr<Runtime> Start() {
  ukai::rt::RuntimeOptions o;
  o.bootstrap = "single";
  o.modules = {"tcp"};
  o.progress_thread = false;
  o.handler_threads = 1;
  o.flush_timeout_ms = 0;
  o.params["tcp.listen"] = "127.0.0.1:0";
  // A session whose connection ends fails at once. (emplace: gcc 12's -Wrestrict misfires
  // on assigning a one-character literal to a std::string at -O3.)
  o.params.emplace("tcp.reconnect_ms", "0");
  // The campaign runs at nice 19 on a machine that may be busy (or is paused for a quiet
  // measurement): a wall-time limit on a handshake would fail inputs that did nothing
  // wrong (a run under SCHED_IDLE with both cores busy stopped at 256,425 executions on a
  // failed handshake whose input passes alone, 2026-11-29). tests/rt/tcp_limits_test.cc
  // tests the limit itself.
  o.params.emplace("tcp.handshake_timeout_ms", "3600000");
  o.job_secret = Secret();
  auto rt = Runtime::Init(o);
  if (!rt.ok()) return nullptr;
  auto ctx = (*rt)->CreateContext({.name = "fuzz", .id = 1});
  if (!ctx.ok()) return nullptr;
  auto ep = (*ctx)->CreateEndpoint({.id = 1});
  if (!ep.ok()) return nullptr;
  auto read_all = [](ukai::rt::Rsr& m) {
    volatile uint8_t sum = 0;
    for (uint8_t b : m.payload()) sum = static_cast<uint8_t>(sum + b);
  };
  if (!(*ep)->RegisterHandler("h", ukai::rt::HandlerKind::kNonThreaded, read_all).ok() ||
      !(*ep)->RegisterHandler("t", ukai::rt::HandlerKind::kThreaded, read_all).ok()) {
    return nullptr;
  }
  return std::move(*rt);
}

int Dial(const Runtime& rt) {
  const ukai::rt::Descriptor* d = rt.descriptors().Find("tcp");
  if (d == nullptr) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (d->bytes.size() < 3) return -1;
  addr.sin_port = htons(ukai::wire::GetLe16(d->bytes.data() + 1));  // u8 version, u16 port
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The bound of the waits below, in CPU time of this process, not wall time: the campaign
// runs at nice 19 (and may be paused), so a busy machine stretches a wait's wall time
// without limit, while a connection the runtime keeps for ever burns CPU here (the waits
// spin). A wait that burns none (a deadlock) ends at libFuzzer's -timeout, in wall time.
class CpuDeadline {
 public:
  explicit CpuDeadline(double seconds) : end_(Now() + seconds) {}
  bool passed() const { return Now() >= end_; }

 private:
  static double Now() {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  double end_;
};

// Reads one whole frame of `kind` from `fd`, progressing `rt` meanwhile; its payload or
// nothing (5 CPU seconds passed, close, another frame).
bool ReadFrame(Runtime& rt, int fd, ukai::wire::FrameKind kind, std::vector<uint8_t>* payload) {
  std::vector<uint8_t> got;
  const CpuDeadline deadline(5);
  while (!deadline.passed()) {
    rt.Progress();
    uint8_t buf[256];
    const ssize_t r = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN)) return false;
    if (r > 0) got.insert(got.end(), buf, buf + r);
    if (got.size() < ukai::wire::kHeaderSize) continue;
    auto h = ukai::wire::DecodeHeader(got);
    if (!h.ok() || h->kind != kind) return false;
    if (got.size() < h->frame_size()) continue;
    payload->assign(got.begin() + ukai::wire::kHeaderSize, got.begin() + h->frame_size());
    return true;
  }
  return false;
}

bool SendAll(int fd, const std::vector<uint8_t>& b) {
  size_t off = 0;
  while (off < b.size()) {
    const ssize_t n = ::send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINPROGRESS || errno == ENOTCONN)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
      continue;
    }
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The dialer's side of the handshake, as runtime `claimed` proving Secret().
bool Handshake(Runtime& rt, int fd, ukai::rt::RuntimeId claimed) {
  namespace tcp = ukai::rt::tcp;
  using ukai::wire::FrameKind;
  const ukai::rt::RuntimeId kClaimed = claimed;
  tcp::Transcript t{kClaimed, rt.id(), 0, ukai::rt::NewNonce(), {}};
  if (!SendAll(
          fd, tcp::Frame(FrameKind::kHello, kClaimed, rt.id(), tcp::EncodeHello({0, t.nonce_d})))) {
    return false;
  }
  std::vector<uint8_t> payload;
  if (!ReadFrame(rt, fd, FrameKind::kChallenge, &payload)) return false;
  auto ch = tcp::DecodeChallenge(payload);
  if (!ch.ok()) return false;
  t.nonce_l = ch->nonce;
  Check(ukai::rt::MacEqual(tcp::ListenerMac(Secret(), t), ch->mac), "the listener's proof fails");
  if (!SendAll(fd, tcp::Frame(FrameKind::kProof, kClaimed, rt.id(),
                              tcp::EncodeProof({0, tcp::DialerMac(Secret(), t, 0)})))) {
    return false;
  }
  return ReadFrame(rt, fd, FrameKind::kWelcome, &payload);
}

// The input after byte 0, with every placeholder replaced by the runtime's id and every
// source id 0x77 of a frame header by `claimed` (the corpus's frames come from 0x77).
std::vector<uint8_t> Stream(const uint8_t* data, size_t size, ukai::rt::RuntimeId id,
                            ukai::rt::RuntimeId claimed) {
  std::vector<uint8_t> out(data + 1, data + size);
  for (size_t i = 0; i + 8 <= out.size(); ++i) {
    if (std::memcmp(out.data() + i, kPlaceholder, 8) == 0) ukai::wire::PutLe64(out.data() + i, id);
    if (i >= 16 && ukai::wire::GetLe32(out.data() + i - 16) == ukai::wire::kMagic &&
        ukai::wire::GetLe64(out.data() + i) == 0x77) {
      ukai::wire::PutLe64(out.data() + i, claimed);
    }
  }
  return out;
}

// The runtime under test, replaced every kInputsPerRuntime inputs.
Runtime& Current(ukai::rt::RuntimeId* claimed) {
  static std::unique_ptr<Runtime> rt;
  static int served = 0;
  static ukai::rt::RuntimeId next_claim = 0x1000;
  if (rt == nullptr || served == kInputsPerRuntime) {
    if (rt != nullptr) (void)rt->Finalize();
    rt = Start();
    Check(rt != nullptr, "runtime did not start");
    served = 0;
  }
  ++served;
  *claimed = next_claim++;  // a fresh peer per input: no session of an earlier input is hit
  return *rt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (1 << 20)) return 0;
  ukai::rt::RuntimeId claimed = 0;
  Runtime& rt = Current(&claimed);
  const ukai::rt::RuntimeStats before = rt.stats();
  const int fd = Dial(rt);
  Check(fd >= 0, "cannot connect to the runtime");
  Check((data[0] & 1) == 0 || Handshake(rt, fd, claimed), "the handshake with a valid key failed");
  const std::vector<uint8_t> bytes = Stream(data, size, rt.id(), claimed);
  const size_t chunk = size_t{1} << (2 * ((data[0] >> 1) & 7));  // 1 B .. 16 KiB
  const CpuDeadline deadline(5);
  size_t sent = 0;
  bool closed = false, half_closed = false;
  while (!closed && !deadline.passed()) {
    if (sent < bytes.size()) {
      const ssize_t n =
          ::send(fd, bytes.data() + sent, std::min(chunk, bytes.size() - sent), MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINPROGRESS && errno != ENOTCONN) break;
    }
    if (sent == bytes.size() && !half_closed) half_closed = ::shutdown(fd, SHUT_WR) == 0;
    rt.Progress();
    char c[64];
    const ssize_t r = ::recv(fd, c, sizeof c, MSG_DONTWAIT);
    closed = r == 0 || (r < 0 && errno != EAGAIN);  // the runtime dropped the connection
  }
  ::close(fd);
  // A stream that ended or broke must not hang: the runtime saw EOF and closed its side.
  Check(closed || sent < bytes.size(), "the runtime kept a connection that ended");
  const uint64_t delivered = rt.stats().rsr_delivered - before.rsr_delivered;
  Check(delivered <= bytes.size() / ukai::wire::kHeaderSize, "more RSRs than frames");
  return 0;
}
