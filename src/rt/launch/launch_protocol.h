// The rendez-vous protocol between `ukai launch` (the launcher, a server on an abstract unix
// stream socket named by UKAI_LAUNCH_ADDR) and the processes it starts (the "launcher"
// bootstrap). Messages: u32 length (of what follows, <= kMaxLaunchMessage), u8 type, body;
// integers little-endian.
//
//   kHello    child -> launcher   u32 rank, HelloMac (32 bytes: the child holds the job secret)
//   kTable    child -> launcher   the child's encoded DescriptorTable
//   kTables   launcher -> child   u32 n, then n times (u32 length, encoded table); index = rank
//   kBarrier  child -> launcher   (empty); the launcher answers kRelease once all ranks sent it
//   kRelease  launcher -> child   (empty)
//   kFinish   child -> launcher   (empty) the child finalized in order
//
// Thread safety: plain functions on one socket; one thread per socket at a time.
#ifndef UKAI_RT_LAUNCH_LAUNCH_PROTOCOL_H_
#define UKAI_RT_LAUNCH_LAUNCH_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "rt/core/job_secret.h"
#include "ukai/rt/startpoint.hpp"

namespace ukai::rt::launch {

enum class MsgType : uint8_t {
  kHello = 1,
  kTable = 2,
  kTables = 3,
  kBarrier = 4,
  kRelease = 5,
  kFinish = 6,
};

inline constexpr uint32_t kMaxLaunchMessage = 16u << 20;

struct Message {
  MsgType type = MsgType::kHello;
  std::vector<uint8_t> body;
};

// The proof in a kHello: HMAC-SHA-256(job secret, "ukai launch v1 hello" | u64 rank). The
// launcher also accepts only connections of its own user (SO_PEERCRED).
Mac HelloMac(const SecretKey& secret, uint32_t rank);

// Blocking send of one whole message.
Status SendMsg(int fd, MsgType type, const std::vector<uint8_t>& body);
// Blocking receive of one message, waiting at most `timeout_ms` in total (-1: forever).
// kUnavailable on EOF, kOutOfRange on timeout, kParseError on a bad length or type.
Result<Message> ReceiveMsg(int fd, int timeout_ms);

// Incremental parser for the launcher's non-blocking sockets: append bytes, take messages.
class MsgParser {
 public:
  void Append(const uint8_t* data, size_t n) { buf_.insert(buf_.end(), data, data + n); }
  // The next complete message; false when more bytes are needed; an error for bad input.
  Result<bool> Next(Message* out);

 private:
  std::vector<uint8_t> buf_;
};

// Decodes a kTables body for a job of `size` ranks: u32 n (must equal size), then per rank
// u32 length + encoded DescriptorTable. Errors name what is wrong and the rank.
Result<std::vector<DescriptorTable>> DecodeTables(const std::vector<uint8_t>& body, int size);

// Abstract unix stream sockets (name without the leading NUL).
Result<int> ListenUnix(const std::string& name);
Result<int> ConnectUnix(const std::string& name);

}  // namespace ukai::rt::launch

#endif  // UKAI_RT_LAUNCH_LAUNCH_PROTOCOL_H_
