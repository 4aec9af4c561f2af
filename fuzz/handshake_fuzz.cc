// libFuzzer target: the connection set-up handshake. The shm module's hello (connector ->
// listener: runtime ids + segment name) and accept reply (status, id, flags), decoded as the
// listener and connector read them off the unix socket (a decoded message must encode back
// to the same bytes); and the peer descriptors both modules parse before they connect
// (Module::CanReach on the tcp and shm descriptor decoders; the tcp connection's first
// frame, the hello, is covered by tcp_stream_fuzz.cc). Byte 0 picks what the rest is.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rt/modules/registry.h"
#include "rt/modules/shm/shm_socket.h"
#include "ukai/rt/runtime.hpp"

namespace {

void Hello(const std::vector<uint8_t>& in) {
  auto h = ukai::rt::shm::DecodeHello(in);
  if (h.ok() && ukai::rt::shm::EncodeHello(*h) != in) __builtin_trap();
}

void Reply(const std::vector<uint8_t>& in) {
  auto r = ukai::rt::shm::DecodeReply(in);
  if (r.ok() && ukai::rt::shm::EncodeReply(*r) != in) __builtin_trap();
}

void Descriptor(const char* module, const std::vector<uint8_t>& in) {
  auto entry = ukai::rt::FindModule(module);
  if (!entry.ok()) return;
  ukai::rt::ModuleEnv env{ukai::rt::NewInprocFabric(), nullptr};
  auto m = (*entry)->create(env);  // not initialised: CanReach only decodes
  (void)m->CanReach(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::vector<uint8_t> in(data + 1, data + size);
  switch (data[0] % 4) {
    case 0:
      Hello(in);
      break;
    case 1:
      Reply(in);
      break;
    case 2:
      Descriptor("tcp", in);
      break;
    default:
      Descriptor("shm", in);
      break;
  }
  return 0;
}
