// tcp: runtimes on any hosts. One listening socket per runtime (param tcp.listen, default
// 127.0.0.1:0 for a job on one host, else 0.0.0.0:0; the descriptor, tcp_dial.h, carries
// the port, the advertised address and the host identity). Connections are set up on first
// use (Connect) and authenticated by a mutual challenge-response over the job secret or the
// target's join token (tcp_hello.h); both directions then use one session per pair of
// runtimes (tcp_session.h), which survives a reset connection for tcp.reconnect_ms without
// losing or repeating an RSR. Non-blocking sockets, TCP_NODELAY, epoll; partial reads and
// writes are resumed by Progress(); frames up to wire::kMaxPayloadBytes. The class is in
// tcp_module_impl.h.
#ifndef UKAI_RT_MODULES_TCP_TCP_MODULE_H_
#define UKAI_RT_MODULES_TCP_TCP_MODULE_H_

#include <memory>

#include "rt/modules/registry.h"

namespace ukai::rt {

std::unique_ptr<Module> NewTcpModule(const ModuleEnv& env);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_TCP_TCP_MODULE_H_
