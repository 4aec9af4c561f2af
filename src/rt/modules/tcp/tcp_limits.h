// Limits of the tcp module against idle, slow or too many incoming connections (module
// parameters, docs/runtime.md "tcp limits"):
//   tcp.handshake_timeout_ms  an accepted connection must deliver its whole hello frame
//                             within this time (default 10000), else it is closed;
//   tcp.frame_timeout_ms      a frame the peer began to send must be complete within this
//                             time of the last bytes received (default 60000), else the
//                             connection fails (a peer that half-sent a frame and stalled);
//   tcp.max_connections       accepted connections per listener at a time (default 1024):
//                             further ones are closed at once;
//   tcp.reconnect_ms          how long a session whose connection was reset or closed
//                             without a goodbye waits for a new one (default 2000; 0 = the
//                             peer fails at once) before the peer is declared failed.
// Units: milliseconds, connections. Plain values.
#ifndef UKAI_RT_MODULES_TCP_TCP_LIMITS_H_
#define UKAI_RT_MODULES_TCP_TCP_LIMITS_H_

#include <atomic>
#include <cstdint>

#include "rt/core/module.h"

namespace ukai::rt {

struct TcpLimits {
  int connect_timeout_ms = 10000;  // tcp.connect_timeout_ms (outgoing connects)
  int handshake_timeout_ms = 10000;
  int frame_timeout_ms = 60000;
  int max_connections = 1024;
  int reconnect_ms = 2000;
};

// Reads the parameters above (and tcp.connect_timeout_ms) from `host`; an error names the
// parameter and its range.
Result<TcpLimits> ReadTcpLimits(ModuleHost* host);

// Counters of the limits and of authentication (Module::Counters: "connections_refused",
// "handshake_timeouts", "frame_timeouts", "auth_failures" (handshakes refused: no valid
// hello, or a proof that did not check out), "connections_lost" (connections of sessions
// lost without a goodbye), "reconnects" (sessions resumed on a new connection)). Module
// threads write, any thread reads.
struct TcpLimitCounters {
  std::atomic<uint64_t> connections_refused{0};
  std::atomic<uint64_t> handshake_timeouts{0};
  std::atomic<uint64_t> frame_timeouts{0};
  std::atomic<uint64_t> auth_failures{0};
  std::atomic<uint64_t> connections_lost{0};
  std::atomic<uint64_t> reconnects{0};
};

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_TCP_TCP_LIMITS_H_
