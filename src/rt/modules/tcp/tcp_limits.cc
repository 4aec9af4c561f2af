#include "rt/modules/tcp/tcp_limits.h"

#include <cstdlib>
#include <string>

namespace ukai::rt {
namespace {

// Parameter `key` as an integer in [lo, hi], or `*out` left as it is when unset.
Status ReadInt(ModuleHost* host, const char* key, long lo, long hi, const char* unit, int* out) {
  const std::string v = host->Param(key);
  if (v.empty()) return Status::Ok();
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || n < lo || n > hi) {
    return Status::InvalidArgument(std::string(key) + "=" + v + ": expected " + unit + " in " +
                                   std::to_string(lo) + ".." + std::to_string(hi));
  }
  *out = static_cast<int>(n);
  return Status::Ok();
}

}  // namespace

Result<TcpLimits> ReadTcpLimits(ModuleHost* host) {
  TcpLimits l;
  UKAI_RETURN_IF_ERROR(
      ReadInt(host, "tcp.connect_timeout_ms", 1, 3600000, "milliseconds", &l.connect_timeout_ms));
  UKAI_RETURN_IF_ERROR(ReadInt(host, "tcp.handshake_timeout_ms", 1, 3600000, "milliseconds",
                               &l.handshake_timeout_ms));
  UKAI_RETURN_IF_ERROR(
      ReadInt(host, "tcp.frame_timeout_ms", 1, 3600000, "milliseconds", &l.frame_timeout_ms));
  UKAI_RETURN_IF_ERROR(
      ReadInt(host, "tcp.max_connections", 1, 1000000, "connections", &l.max_connections));
  UKAI_RETURN_IF_ERROR(
      ReadInt(host, "tcp.reconnect_ms", 0, 3600000, "milliseconds", &l.reconnect_ms));
  return l;
}

}  // namespace ukai::rt
