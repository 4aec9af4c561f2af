// tcp: runtimes on any hosts. One listening socket per runtime (param tcp.listen, default
// 0.0.0.0:0 — any port; the descriptor carries tcp.host or the host's name and the port).
// Connections are set up on first use (Connect), both directions are used: the connecting
// side sends a kHello frame carrying its runtime id, and the accepting side adopts the
// socket for its own sends to that peer. Non-blocking sockets, TCP_NODELAY, epoll; partial
// reads and writes are resumed by Progress(); frames up to wire::kMaxPayloadBytes. EOF,
// reset or a malformed frame turn the connection into a failed object (kBye: orderly).
#ifndef UKAI_RT_MODULES_TCP_TCP_MODULE_H_
#define UKAI_RT_MODULES_TCP_TCP_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

std::unique_ptr<Module> NewTcpModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_TCP_TCP_MODULE_H_
