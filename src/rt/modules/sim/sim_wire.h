// The channel between `ukai launch --sim` (the launcher hosts the simulated machine,
// rt/launch/sim_host.h) and the `sim` module of each process it starts (sim_remote.h): one
// Unix stream socket per process, inherited as the descriptor named by UKAI_SIM_FD (a
// socketpair: the connection itself says which rank speaks, nothing on it can claim another).
//
// Message: u32 length (of what follows, 1..kMaxSimMessage), u8 type, body; integers
// little-endian; `thread` is the process's own number for one of its threads (0: a thread
// that has not taken part in virtual time yet), `cpu` that thread's CPU time in ns.
//
//   process -> launcher
//   kHello       u32 rank, u64 runtime id, u32 thread, i64 cpu   (first message; once)
//   kCall        u32 thread, u8 kind (SimCallKind), u8 call (SimCallName index), i64 cpu
//   kNow         u32 thread, i64 cpu                 (answered by kNowIs)
//   kPost        u32 thread, i64 cpu, u64 peer runtime, frame bytes (1..max frame)
//   kDispatched  u32 thread, u32 frames              (frames taken from kArrive, dispatched)
//   kLeave       (empty) the runtime leaves the machine (Finalize)
//   launcher -> process
//   kWelcome     u64 machine id, u64 clock MHz (IEEE double bits), u32 process,
//                u8 cpu_time (0/1: the machine charges CPU time, sim.cpu_scale > 0; with 0
//                the process sends cpu 0 and makes no CLOCK_THREAD_CPUTIME_ID calls)
//   kRefused     text: why the process may not join (the run then fails)
//   kNowIs       u32 thread, i64 cycles
//   kArrive      frame bytes, as posted by the sender
//   kPeerGone    u64 peer, u8 orderly (0/1), text
//   kStopped     text: this runtime's node failed, or the run stopped
//   kTaken       u64 peer, u64 frames, u64 bytes: of what this process posted to `peer`,
//                so much has been taken by it (or lost); the sender's flow control
//
// Both ends decode with SimWireParser + Decode*(): untrusted input gets a kParseError naming
// the message and what is wrong. Thread safety: plain values; a parser is one thread's.
#ifndef UKAI_RT_MODULES_SIM_SIM_WIRE_H_
#define UKAI_RT_MODULES_SIM_SIM_WIRE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::rt::simwire {

enum class Type : uint8_t {
  kHello = 1,
  kCall = 2,
  kNow = 3,
  kPost = 4,
  kDispatched = 5,
  kLeave = 6,
  kWelcome = 16,
  kRefused = 17,
  kNowIs = 18,
  kArrive = 19,
  kPeerGone = 20,
  kStopped = 21,
  kTaken = 22,
};

// What a kCall reports (SimFabric's virtual-time methods).
enum class CallKind : uint8_t {
  kIdle = 0,
  kCall = 1,
  kHandlerQueued = 2,
  kHandlerBegin = 3,
  kHandlerEnd = 4,
  kThreadEnd = 5,
  // 6: retired (a thread parked outside the simulation; nothing parks any more): refused.
  // An idle round of a wait, and the process dispatched nothing since the thread's round
  // before it (told or not): the thread saw everything up to now (SimFabric's "settled").
  kIdleSettled = 7,
};
inline constexpr uint8_t kLastCallKind = 7;
inline constexpr uint8_t kRetiredCallKind = 6;

// The runtime calls a kCall can name (the fabric keeps the name of a process's last call
// for its stall message); an unknown name travels as the last entry.
const char* CallName(uint8_t index);  // nullptr when out of range
uint8_t CallIndex(const char* name);

// A frame is at most a header and the runtime's largest payload.
uint32_t MaxFrameBytes();
// Length field limit: the largest kPost / kArrive plus its fixed fields.
uint32_t MaxMessageBytes();

struct Message {
  Type type = Type::kHello;
  std::vector<uint8_t> body;
};

// Incremental parser: append bytes, take messages. Errors (bad length, unknown type) are
// final: the stream cannot be resynchronised.
class SimWireParser {
 public:
  void Append(const uint8_t* data, size_t n);
  // The next complete message; false when more bytes are needed.
  Result<bool> Next(Message* out);
  size_t buffered() const { return buf_.size() - at_; }

 private:
  std::vector<uint8_t> buf_;
  size_t at_ = 0;
  Status error_;
};

// Encoding (whole message with its length and type).
std::vector<uint8_t> Encode(Type type, std::span<const uint8_t> body);
std::vector<uint8_t> EncodeHello(uint32_t rank, uint64_t runtime, uint32_t thread = 1,
                                 int64_t cpu = 0);
std::vector<uint8_t> EncodeCall(uint32_t thread, CallKind kind, uint8_t call, int64_t cpu);
std::vector<uint8_t> EncodeNow(uint32_t thread, int64_t cpu);
// kPost's header (the frame's bytes follow it on the wire: length counts them).
std::vector<uint8_t> EncodePostHeader(uint32_t thread, int64_t cpu, uint64_t peer,
                                      size_t frame_bytes);
std::vector<uint8_t> EncodeDispatched(uint32_t thread, uint32_t frames);
std::vector<uint8_t> EncodeWelcome(uint64_t machine, double clock_mhz, uint32_t process,
                                   bool cpu_time = true);
std::vector<uint8_t> EncodeText(Type type, const std::string& text);  // kRefused, kStopped
std::vector<uint8_t> EncodeNowIs(uint32_t thread, int64_t cycles);
std::vector<uint8_t> EncodeArriveHeader(size_t frame_bytes);
std::vector<uint8_t> EncodePeerGone(uint64_t peer, bool orderly, const std::string& text);
std::vector<uint8_t> EncodeTaken(uint64_t peer, uint64_t frames, uint64_t bytes);

// Decoding of a message's body (type already known); errors name the message.
struct Hello {
  uint32_t rank;
  uint64_t runtime;
  uint32_t thread;  // the joining thread (it holds the runtime from then on)
  int64_t cpu;
};
struct Call {
  uint32_t thread;
  CallKind kind;
  const char* call;
  int64_t cpu;
};
struct Now {
  uint32_t thread;
  int64_t cpu;
};
struct Post {
  uint32_t thread;
  int64_t cpu;
  uint64_t peer;
  std::span<const uint8_t> frame;
};
struct Dispatched {
  uint32_t thread;
  uint32_t frames;
};
struct Welcome {
  uint64_t machine;
  double clock_mhz;
  uint32_t process;
  bool cpu_time;  // the machine charges CPU time (sim.cpu_scale > 0)
};
struct NowIs {
  uint32_t thread;
  int64_t cycles;
};
struct PeerGone {
  uint64_t peer;
  bool orderly;
  std::string text;
};
struct Taken {
  uint64_t peer;
  uint64_t frames;
  uint64_t bytes;
};
Result<Hello> DecodeHello(std::span<const uint8_t> body);
Result<Call> DecodeCall(std::span<const uint8_t> body);
Result<Now> DecodeNow(std::span<const uint8_t> body);
Result<Post> DecodePost(std::span<const uint8_t> body);
Result<Dispatched> DecodeDispatched(std::span<const uint8_t> body);
Result<Welcome> DecodeWelcome(std::span<const uint8_t> body);
Result<NowIs> DecodeNowIs(std::span<const uint8_t> body);
Result<std::span<const uint8_t>> DecodeArrive(std::span<const uint8_t> body);
Result<PeerGone> DecodePeerGone(std::span<const uint8_t> body);
Result<std::string> DecodeText(std::span<const uint8_t> body);
Result<Taken> DecodeTaken(std::span<const uint8_t> body);

}  // namespace ukai::rt::simwire

#endif  // UKAI_RT_MODULES_SIM_SIM_WIRE_H_
