// CRC-32 as IEEE 802.3 uses it for the Ethernet frame check sequence (FCS): polynomial
// 0x04C11DB7 (reflected 0xEDB88320), initial value 0xFFFFFFFF, input and output
// reflected, final XOR 0xFFFFFFFF ("123456789" -> 0xCBF43926, the same value as zlib's
// crc32). The FCS goes on the wire least significant byte first, so a frame followed by
// its FCS; FcsOk() recomputes the CRC over the frame and compares.
//
// Speed: on x86-64 CPUs with PCLMULQDQ (checked at run time) Crc32() folds 64 bytes at a
// time with carry-less multiplication (Intel's "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ Instruction", 2009), about 10x the table's speed on a
// 1500-byte frame; the rest, and every other CPU, use slicing-by-8 tables. Both give the
// same value (tests/wire/crc32_test.cc checks them against the bitwise definition).
//
// Thread safety: pure functions; the lookup tables (slicing-by-8) are compile-time
// constants.
#ifndef UKAI_WIRE_CRC32_H_
#define UKAI_WIRE_CRC32_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ukai::wire {

inline constexpr size_t kFcsBytes = 4;

// CRC-32 of `data`; `crc` continues an earlier call (pass the previous result).
uint32_t Crc32(std::span<const uint8_t> data, uint32_t crc = 0);

// Crc32() without the carry-less multiply path (slicing-by-8 tables only), for tests.
uint32_t Crc32Tables(std::span<const uint8_t> data, uint32_t crc = 0);

// True when Crc32() uses the carry-less multiply path on this CPU.
bool Crc32UsesClmul();

// Appends the FCS of `*frame` (least significant byte first).
void AppendFcs(std::vector<uint8_t>* frame);

// True when `frame` is at least kFcsBytes long and ends in the FCS of the bytes before it.
bool FcsOk(std::span<const uint8_t> frame);

// The FCS stored in the last 4 bytes of `frame` (size >= 4).
uint32_t StoredFcs(std::span<const uint8_t> frame);

}  // namespace ukai::wire

#endif  // UKAI_WIRE_CRC32_H_
