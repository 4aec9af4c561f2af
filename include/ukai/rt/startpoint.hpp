// Descriptor tables and startpoints (global pointers).
//
// A *communication descriptor* is what one module needs to reach a runtime (tcp: address and
// port; inproc: the fabric it lives in; shm: host and segment name). A runtime publishes one
// descriptor per loaded module: its *descriptor table*. All contexts of one Runtime share
// its table (they share its modules); frames name the context explicitly.
//
// A *startpoint* is a global pointer: it names a target endpoint (runtime id, context id,
// endpoint id), optionally an address in the target context, and carries the target's
// descriptor table, so whoever receives a startpoint knows every way to reach it and picks
// one (Runtime selects the best module both sides support). Startpoints are cheap to copy
// (the table is shared, immutable) and serialise into buffers and strings.
//
// Thread safety: immutable values; share freely between threads.
#ifndef UKAI_RT_STARTPOINT_HPP_
#define UKAI_RT_STARTPOINT_HPP_

#include "ukai/requires_cxx20.hpp"
#if __cplusplus >= 202002L

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ukai/status.hpp"

namespace ukai::rt {

using RuntimeId = uint64_t;   // random 64-bit id of one Runtime instance (never 0)
using ContextId = uint32_t;   // context id within its Runtime (never 0)
using EndpointId = uint32_t;  // endpoint id within its Context (never 0)

// A runtime id as every message and trace of the runtime prints it: "0x" and 16 lower-case
// hex digits ("0x4ed83e95083f2a0a").
std::string RuntimeIdString(RuntimeId id);

// One module's descriptor: the module name and its opaque bytes (module-defined format).
struct Descriptor {
  std::string module;
  std::vector<uint8_t> bytes;
};

// Limits enforced by DescriptorTable::Decode (and Encode's callers).
inline constexpr size_t kMaxDescriptors = 32;
inline constexpr size_t kMaxModuleNameLen = 32;
inline constexpr size_t kMaxDescriptorBytes = 1024;

struct DescriptorTable {
  RuntimeId runtime = 0;
  std::vector<Descriptor> entries;

  // The descriptor of `module`, or nullptr.
  const Descriptor* Find(std::string_view module) const;

  // Appends the little-endian encoding: u64 runtime, u8 count, then per entry
  // u8 name_len, name, u16 bytes_len, bytes.
  void EncodeTo(std::vector<uint8_t>* out) const;
  // Decodes a table from the start of `in`; sets *consumed to the bytes used. Errors name
  // the offset and field; limits above are enforced.
  static Result<DescriptorTable> Decode(std::span<const uint8_t> in, size_t* consumed);
};

class Startpoint {
 public:
  // A null startpoint (valid() == false); sending through it is an error.
  Startpoint() = default;
  Startpoint(std::shared_ptr<const DescriptorTable> table, ContextId context, EndpointId endpoint,
             std::optional<uint64_t> address = std::nullopt);

  bool valid() const { return table_ != nullptr; }
  RuntimeId runtime() const { return table_ ? table_->runtime : 0; }
  ContextId context() const { return context_; }
  EndpointId endpoint() const { return endpoint_; }
  // The address in the target context this startpoint is bound to, if any.
  std::optional<uint64_t> address() const { return address_; }
  // The target's descriptor table (empty table for a null startpoint).
  const DescriptorTable& descriptors() const;
  std::shared_ptr<const DescriptorTable> shared_descriptors() const { return table_; }

  // A copy bound to `address` in the same target endpoint.
  Startpoint WithAddress(uint64_t address) const;

  // Binary form: u8 version (1), u32 context, u32 endpoint, u8 has_address, u64 address,
  // then the descriptor table. Deserialize rejects truncated or malformed input.
  void SerializeTo(std::vector<uint8_t>* out) const;
  std::vector<uint8_t> Serialize() const;
  static Result<Startpoint> Deserialize(std::span<const uint8_t> in, size_t* consumed = nullptr);

  // Text form for command lines and files: "ukai-sp1:" followed by lower-case hex of
  // Serialize(). FromString ignores surrounding whitespace.
  std::string ToString() const;
  static Result<Startpoint> FromString(std::string_view text);

  // Same target (runtime, context, endpoint, address); tables are not compared.
  bool operator==(const Startpoint& o) const {
    return runtime() == o.runtime() && context_ == o.context_ && endpoint_ == o.endpoint_ &&
           address_ == o.address_;
  }

 private:
  std::shared_ptr<const DescriptorTable> table_;
  ContextId context_ = 0;
  EndpointId endpoint_ = 0;
  std::optional<uint64_t> address_;
};

}  // namespace ukai::rt

#endif  // __cplusplus >= 202002L

#endif  // UKAI_RT_STARTPOINT_HPP_
