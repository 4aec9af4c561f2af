// Unix-domain SOCK_SEQPACKET helpers of the shm module's connection set-up: an abstract
// socket name per runtime (no file to clean up), messages that carry one file descriptor
// (SCM_RIGHTS: the eventfd doorbells), and the two set-up messages.
//
//   hello  (connector -> listener): u32 kHelloMagic, u32 version, u64 connector runtime id,
//          u64 expected listener runtime id, u8 key kind (KeyKind: job secret or join token),
//          nonce (32 bytes), mac (32), u16 name length, segment name; fds = connector's
//          eventfd, then its pool's memfd when it has a pool (shm_pool.h).
//   reply  (listener -> connector): u32 kReplyMagic, u32 status (0 = accepted), u64 listener
//          runtime id, u32 flags (kReplyMappedYourPool: the listener mapped the connector's
//          pool; a listener that cannot map it refuses the connection, since the connector
//          sends pool records from the start), mac (32; zero in a refusal); fds (only when
//          accepted) = listener's eventfd, then its pool's memfd when it has one.
// Authentication (docs/runtime.md, "Authentication and confinement"): both ends check that
// the other end of the socket runs as the same user (SO_PEERCRED; abstract sockets have no
// file permissions). The hello's mac is HMAC-SHA-256 under the key of its kind over both
// ids, the kind, the connector's fresh nonce and the segment name (HelloMac): the listener
// attaches the segment only when it checks out, and only a segment of this user, mode
// 0600, whose header carries the job tag (SegmentTag) of that hello. The reply's mac
// (ReplyMac, over both ids, status, flags and the nonce) proves the listener holds the key
// too; the connector checks it when it reads the reply, before it maps the listener's pool
// or waits on its doorbell.
// Version 2 added the pool fds and the reply flags; version 3 the authentication.
// All integers little-endian. Thread safety: plain functions.
#ifndef UKAI_RT_MODULES_SHM_SHM_SOCKET_H_
#define UKAI_RT_MODULES_SHM_SHM_SOCKET_H_

#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/status.h"
#include "rt/core/job_secret.h"

namespace ukai::rt::shm {

inline constexpr uint32_t kHelloMagic = 0x4c454853;  // "SHEL"
inline constexpr uint32_t kReplyMagic = 0x50455253;  // "SREP"
inline constexpr uint32_t kHandshakeVersion = 3;
inline constexpr uint32_t kReplyMappedYourPool = 1;
inline constexpr size_t kMaxFds = 4;  // file descriptors one set-up message may carry

// Listens on the abstract unix name `name` (without the leading NUL). Non-blocking, CLOEXEC.
Result<int> ListenAbstract(const std::string& name);
// Connects to the abstract name. Blocking connect (local, immediate), then CLOEXEC.
Result<int> ConnectAbstract(const std::string& name);

// Sends `bytes` as one message with `fds` (at most kMaxFds) or `fd` (< 0: none) attached.
Status SendMessage(int sock, const std::vector<uint8_t>& bytes, const std::vector<int>& fds);
Status SendMessage(int sock, const std::vector<uint8_t>& bytes, int fd);
// Receives one message (at most 512 bytes) and its attached fds (now owned by the caller),
// waiting at most `timeout_ms` (0: only what is there). kUnavailable on hang-up,
// kOutOfRange on timeout.
Status ReceiveMessage(int sock, int timeout_ms, std::vector<uint8_t>* bytes, std::vector<int>* fds);

// A runtime id as the runtime's traces print it (RuntimeIdString: 0x and 16 hex digits).
std::string IdString(uint64_t id);

// The user id of the process at the other end of the unix socket `sock` (SO_PEERCRED).
Result<uid_t> PeerUid(int sock);

struct Hello {
  uint64_t from = 0;
  uint64_t to = 0;
  KeyKind key_kind = KeyKind::kJob;
  Nonce nonce{};
  Mac mac{};
  std::string segment;
};
std::vector<uint8_t> EncodeHello(const Hello& h);
Result<Hello> DecodeHello(const std::vector<uint8_t>& bytes);

struct Reply {
  uint32_t status = 0;
  uint64_t from = 0;
  uint32_t flags = 0;
  Mac mac{};
};
std::vector<uint8_t> EncodeReply(const Reply& r);
Result<Reply> DecodeReply(const std::vector<uint8_t>& bytes);

// The MACs above, and the tag the connector writes into the segment's header.
Mac HelloMac(const SecretKey& key, const Hello& h);
Mac ReplyMac(const SecretKey& key, const Reply& r, uint64_t connector, const Nonce& nonce);
Mac SegmentTag(const SecretKey& key, uint64_t creator, uint64_t attacher,
               const std::string& segment);

}  // namespace ukai::rt::shm

#endif  // UKAI_RT_MODULES_SHM_SHM_SOCKET_H_
