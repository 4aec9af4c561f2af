// The dialing side of the tcp module: the descriptor, the address to dial for a peer's
// descriptor, and the blocking connect + handshake (tcp_hello.h) that Connect() and the
// reconnecting thread run before a connection is handed to the progress thread.
//
// The descriptor (version 2): u8 version, u16 port, u8 length + advertised address, u8
// length + host identity, u8 bind (kBindAny, kBindLoopback, kBindSpecific: what the
// listener is bound to). The host identity is the boot id and the network namespace
// (/proc/sys/kernel/random/boot_id, /proc/self/ns/net): two containers or namespaces that
// share a host name differ, two clones of a machine differ. A peer with our identity is
// dialed at 127.0.0.1 when its listener takes loopback connections (bound to any or to
// loopback), else at its advertised address; a peer elsewhere at its advertised address,
// and never when it listens on loopback only (CanReach is false).
//
// Thread safety: pure functions, and blocking calls on the caller's own socket.
#ifndef UKAI_RT_MODULES_TCP_TCP_DIAL_H_
#define UKAI_RT_MODULES_TCP_TCP_DIAL_H_

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "rt/modules/tcp/tcp_hello.h"

namespace ukai::rt::tcp {

enum class Bind : uint8_t { kAny = 0, kLoopback = 1, kSpecific = 2 };

struct Target {
  uint16_t port = 0;
  std::string host;      // advertised address
  std::string identity;  // host identity (boot id | network namespace)
  Bind bind = Bind::kAny;
};

// This host's identity as above.
std::string HostIdentity();
std::vector<uint8_t> EncodeTarget(const Target& t);
Result<Target> DecodeTarget(std::span<const uint8_t> d);
// The address to dial `t` at from a host of identity `self_identity`, or kUnavailable when
// it cannot be reached from here (a loopback-only listener on another host).
Result<std::string> DialAddress(const Target& t, const std::string& self_identity);

using Clock = std::chrono::steady_clock;

// Sets TCP_NODELAY on `fd`.
void SetNoDelay(int fd);

// A connected socket to host:port (non-blocking, TCP_NODELAY, close-on-exec), or an error
// naming the address; the connect is given up at `deadline` (tcp.connect_timeout_ms).
// *refused is set when the host refused the connection (no listener on that port: the
// runtime is gone).
Result<int> ConnectTo(const std::string& host, uint16_t port, Clock::time_point deadline,
                      bool* refused);

// A connection dialed and greeted: the socket (non-blocking, TCP_NODELAY), the listener's
// welcome, and the session key (the proved key on a resume).
struct Dialed {
  int fd = -1;
  Welcome welcome;
  SecretKey session_key{};
};

// Connects to `t` and runs the dialer's side of the handshake as `self` towards `peer`,
// proving `key` with `flags` (kResume: `key` is the session key and `received` our count),
// all before `deadline`. The listener answers from its handshake thread, whatever its
// progress. On an error *refused is set when the peer's host refused the connection (no
// listener on that port: the runtime is gone). The Status names the address.
Result<Dialed> DialAndGreet(const Target& t, const std::string& self_identity, RuntimeId self,
                            RuntimeId peer, const SecretKey& key, uint8_t flags, uint64_t received,
                            Clock::time_point deadline, bool* refused);

}  // namespace ukai::rt::tcp

#endif  // UKAI_RT_MODULES_TCP_TCP_DIAL_H_
