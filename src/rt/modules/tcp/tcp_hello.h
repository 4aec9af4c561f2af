// The tcp module's connection handshake: a mutual challenge-response over fresh nonces and
// both runtime ids, HMAC-SHA-256 under the job secret or a join token (rt/core/job_secret.h).
// docs/runtime.md, "Authentication and confinement", has the reasoning.
//
// Four frames (wire/rsr_frame.h headers; source = sender's runtime id, target = receiver's):
//   1. kHello     dialer -> listener  u8 version (1), u8 flags, u16 0, nonce_d (32 bytes)
//   2. kChallenge listener -> dialer  nonce_l (32), mac_l (32)
//   3. kProof     dialer -> listener  u64 received, mac_d (32)
//   4. kWelcome   listener -> dialer  u8 status, 7 bytes 0, u64 received, mac_w (32)
// flags: bit 0 kResume (the dialer resumes an existing session after a lost connection;
// the MACs then use the session key), bit 1 kJoinKey (the dialer proves the listener's join
// token instead of the job secret); other bits must be 0. `received` is, on a resume, the
// count of the session's RSR frames its sender has received (the other side resends the
// rest); 0 for a new session.
//   mac_l = HMAC(k, "ukai tcp v1 listener" | dialer id | listener id | flags | nonce_d | nonce_l)
//   mac_d = HMAC(k, "ukai tcp v1 dialer"   | same | received_d)
//   mac_w = HMAC(k, "ukai tcp v1 welcome"  | same | status | received_l)
// The listener proves k first, so a dialer never sends an RSR to an impostor listener; the
// listener reads nothing of the dialer as a request before mac_d checks out, and a
// connection that never proves k never changes any state of the runtime it claimed to be.
// A fresh nonce from each side makes a recorded handshake useless on a new connection.
// The session key HMAC(k, "ukai tcp v1 session" | same) keys the resumes of that session,
// so only the two ends of a session can resume it.
//
// After the handshake the session's frames follow: kRsr (counted: the n-th RSR of a session
// has sequence number n), kAck (u64: RSRs received so far; the sender frees them), kBye
// (u64: RSRs received, then the orderly close).
//
// Thread safety: pure functions.
#ifndef UKAI_RT_MODULES_TCP_TCP_HELLO_H_
#define UKAI_RT_MODULES_TCP_TCP_HELLO_H_

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "rt/core/job_secret.h"
#include "ukai/rt/startpoint.hpp"
#include "wire/rsr_frame.h"

namespace ukai::rt::tcp {

inline constexpr uint8_t kHelloVersion = 1;
inline constexpr uint8_t kResume = 1;
inline constexpr uint8_t kJoinKey = 2;
inline constexpr size_t kHelloBytes = 36;
inline constexpr size_t kChallengeBytes = 64;
inline constexpr size_t kProofBytes = 40;
inline constexpr size_t kWelcomeBytes = 48;
inline constexpr size_t kCountBytes = 8;  // kAck and kBye payloads

// kWelcome status.
enum class WelcomeStatus : uint8_t {
  kAccepted = 0,
  kSuperseded = 1,  // both sides dialed at once: the listener's own connection wins
  kDuplicate = 2,   // the listener has a session with the dialer already (a new one is refused)
};

struct Hello {
  uint8_t flags = 0;
  Nonce nonce{};
};
struct Challenge {
  Nonce nonce{};
  Mac mac{};
};
struct Proof {
  uint64_t received = 0;
  Mac mac{};
};
struct Welcome {
  WelcomeStatus status = WelcomeStatus::kAccepted;
  uint64_t received = 0;
  Mac mac{};
};

// What both MACs of one handshake cover.
struct Transcript {
  RuntimeId dialer = 0;
  RuntimeId listener = 0;
  uint8_t flags = 0;
  Nonce nonce_d{};
  Nonce nonce_l{};
};

std::vector<uint8_t> EncodeHello(const Hello& h);
std::vector<uint8_t> EncodeChallenge(const Challenge& c);
std::vector<uint8_t> EncodeProof(const Proof& p);
std::vector<uint8_t> EncodeWelcome(const Welcome& w);
std::vector<uint8_t> EncodeCount(uint64_t count);
// Decoders: exact sizes, known version, flags and status; errors name the field.
Result<Hello> DecodeHello(std::span<const uint8_t> payload);
Result<Challenge> DecodeChallenge(std::span<const uint8_t> payload);
Result<Proof> DecodeProof(std::span<const uint8_t> payload);
Result<Welcome> DecodeWelcome(std::span<const uint8_t> payload);
Result<uint64_t> DecodeCount(std::span<const uint8_t> payload);

Mac ListenerMac(const SecretKey& k, const Transcript& t);
Mac DialerMac(const SecretKey& k, const Transcript& t, uint64_t received);
Mac WelcomeMac(const SecretKey& k, const Transcript& t, WelcomeStatus status, uint64_t received);
SecretKey SessionKey(const SecretKey& k, const Transcript& t);

// A whole frame (header + payload) of `kind` from `source` to `target`.
std::vector<uint8_t> Frame(wire::FrameKind kind, RuntimeId source, RuntimeId target,
                           std::span<const uint8_t> payload);

}  // namespace ukai::rt::tcp

#endif  // UKAI_RT_MODULES_TCP_TCP_HELLO_H_
