// The job secret and the message authentication codes of the peer handshakes
// (docs/runtime.md, "Authentication and confinement").
//
// Every runtime has a 32-byte job secret K. The runtimes of one job share it: `ukai launch`
// makes one from the OS random source and hands it to its children through an inherited,
// sealed memfd (UKAI_JOB_SECRET_FD names the descriptor, never the secret); under mpirun
// rank 0 makes one and broadcasts it over MPI at start-up; a runtime started alone makes its
// own. RuntimeOptions::job_secret (API) and --ukai-job-secret-file (an owner-only file)
// override the bootstrap's.
//
// The *join token* T = HMAC-SHA-256(K, "ukai join token v1") travels in every startpoint
// (the "auth" entry of the descriptor table): whoever holds a startpoint of a runtime may
// connect to the runtimes of its job, proving T instead of K (a startpoint is a
// capability, like Mercury's auth tokens). T cannot be turned back into K.
//
// Handshakes (tcp: tcp_hello.h; shm: shm_socket.h) prove a key with HMAC-SHA-256 (libsodium)
// over a label, both runtime ids and fresh nonces; MacEqual compares in constant time.
//
// Thread safety: immutable values after construction; share freely.
#ifndef UKAI_RT_CORE_JOB_SECRET_H_
#define UKAI_RT_CORE_JOB_SECRET_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace ukai::rt {

inline constexpr size_t kSecretBytes = 32;
inline constexpr size_t kMacBytes = 32;
inline constexpr size_t kNonceBytes = 32;
using SecretKey = std::array<uint8_t, kSecretBytes>;
using Mac = std::array<uint8_t, kMacBytes>;
using Nonce = std::array<uint8_t, kNonceBytes>;

// Which key a connecting runtime proves: the job secret (both runtimes are of one job), or
// the join token of the target's job (taken from the target's startpoint).
enum class KeyKind : uint8_t { kJob = 0, kJoin = 1 };

// The key a runtime proves when it connects to one peer.
struct PeerKey {
  KeyKind kind = KeyKind::kJob;
  SecretKey key{};
};

class JobSecret {
 public:
  // A fresh secret from the OS random source.
  static JobSecret Generate();
  static JobSecret FromKey(const SecretKey& key);
  // Reads exactly kSecretBytes from offset 0 of `fd` (pread: the descriptor stays usable by
  // a later runtime of the process). Errors name the descriptor, never the bytes.
  static Result<JobSecret> ReadFd(int fd);
  // Reads a file holding the secret as 64 hex digits (surrounding white space ignored). The
  // file must belong to this user and be unreadable by group and others (mode 0600 or
  // 0400), else an error naming the path and its mode.
  static Result<JobSecret> ReadFile(const std::string& path);

  const SecretKey& key() const { return key_; }
  const SecretKey& join_token() const { return token_; }
  // The key a listener checks a proof of `kind` against: K or T.
  const SecretKey& KeyFor(KeyKind kind) const { return kind == KeyKind::kJob ? key_ : token_; }
  // The key to prove towards a runtime whose startpoint carried `token` (nullptr: none, a
  // table from this job's bootstrap): the job secret when the token is ours, else the token.
  PeerKey KeyTowards(const SecretKey* token) const;

 private:
  explicit JobSecret(const SecretKey& key);
  SecretKey key_{};
  SecretKey token_{};
};

// HMAC-SHA-256 under `key` of `label` and then each part, every item preceded by its u32
// little-endian length (so that no two different part lists give the same input).
Mac ComputeMac(const SecretKey& key, std::string_view label,
               std::initializer_list<std::span<const uint8_t>> parts);
// Constant-time comparison of a MAC with `received` (false when the sizes differ).
bool MacEqual(const Mac& expected, std::span<const uint8_t> received);
// Fills `out` from the OS random source.
void RandomBytes(std::span<uint8_t> out);
Nonce NewNonce();
// The little-endian bytes of `v`, for MAC parts.
std::array<uint8_t, 8> LeBytes(uint64_t v);

// The "auth" entry of a descriptor table (kAuthDescriptor): u8 version (1), the join token.
inline constexpr std::string_view kAuthDescriptor = "auth";
std::vector<uint8_t> EncodeAuthDescriptor(const SecretKey& token);
Result<SecretKey> DecodeAuthDescriptor(std::span<const uint8_t> bytes);

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_JOB_SECRET_H_
