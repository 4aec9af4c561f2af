// The 8b/10b line code (Widmer & Franaszek; the code of Fibre Channel and of the SSS-CORE
// optical link in spec/rma-nic.md): each byte becomes a 10-bit code group built from a 5b/6b
// sub-block (bits EDCBA -> abcdei) and a 3b/4b sub-block (bits HGF -> fghj). A running
// disparity (RD, `-` or `+`) chooses between the two forms of unbalanced sub-blocks so the
// line stays DC-balanced; runs of equal bits are at most 5 long. Besides the 256 data groups
// D.x.y (byte = y << 5 | x) there are 12 control groups K.28.0..7, K.23.7, K.27.7, K.29.7 and
// K.30.7; K.28.1, K.28.5 and K.28.7 contain the comma 0011111 / 1100000 used for alignment.
//
// Bit order: a code group is a uint16_t whose bit 9 is `a` (sent first) and bit 0 is `j`
// (sent last), so printing bits 9..0 gives the transmission order abcdei fghj.
//
// The decoder reports an invalid code group (not one of the 268 groups in either column) and
// a disparity error (a valid group of the other column, e.g. an RD+ form received at RD-).
// After either error the running disparity continues from the received group's own
// disparity (as receivers do), so one error is reported once.
//
// Thread safety: pure functions over constant tables.
#ifndef UKAI_WIRE_CODE_8B10B_H_
#define UKAI_WIRE_CODE_8B10B_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace ukai::wire {

enum class Disparity : uint8_t { kMinus = 0, kPlus = 1 };

inline constexpr int kCodeGroupBits = 10;
inline constexpr int kControlGroupCount = 12;
// The byte values of the 12 K code groups, in the order of the standard table.
inline constexpr uint8_t kControlValues[kControlGroupCount] = {0x1C, 0x3C, 0x5C, 0x7C, 0x9C, 0xBC,
                                                               0xDC, 0xFC, 0xF7, 0xFB, 0xFD, 0xFE};
inline constexpr uint8_t kK28_5 = 0xBC;  // the usual comma character

// Whether (value, K) names one of the 12 control groups.
bool IsControlValue(uint8_t value);

struct CodeGroup {
  uint16_t bits = 0;  // bit 9 = a ... bit 0 = j
  Disparity rd_after = Disparity::kMinus;
};

// The 5b/6b and 3b/4b sub-block encoders: `x` is EDCBA (0..31), `y` is HGF (0..7). `rd` is the
// disparity before the sub-block; the 3b/4b encoder also needs `x` for the A7 rule.
CodeGroup Encode5b6b(uint8_t x, bool control, Disparity rd);
CodeGroup Encode3b4b(uint8_t y, uint8_t x, bool control, Disparity rd);

// Encodes one byte. kInvalidArgument when `control` and the value is not one of the 12 K codes.
Result<CodeGroup> Encode8b10b(uint8_t value, bool control, Disparity rd);

// Encodes a word given as bytes (first byte sent first) with the two-encoder scheme of the
// paper's link (16 data bits per clock): every byte's code group is computed for both input
// disparities independently (the encoders work in parallel), then the disparity is carried
// through the bytes to select one form each. Equal to encoding byte after byte.
std::vector<uint16_t> EncodeDataWordParallel(std::span<const uint8_t> bytes, Disparity* rd);

enum class CodeError : uint8_t { kNone = 0, kInvalidCode, kDisparity };

struct Decoded {
  uint8_t value = 0;
  bool control = false;
  CodeError error = CodeError::kNone;
  Disparity rd_after = Disparity::kMinus;
};

// Decodes one code group (bits 9..0 = abcdei fghj; higher bits must be 0, else kInvalidCode).
Decoded Decode8b10b(uint16_t bits, Disparity rd);

// Whether the group holds a comma (0011111 or 1100000 in bits a..g).
bool HasComma(uint16_t bits);

// The first bit position p (0 = first bit sent) at which `stream` (one 0/1 per element, in
// transmission order) holds a comma, or -1. Aligning code groups on p finds group boundaries.
long FindComma(std::span<const uint8_t> stream);

// "D.x.y" or "K.x.y".
std::string CodeGroupName(uint8_t value, bool control);

// The ten bits in transmission order as '0'/'1' characters.
std::string CodeGroupBitString(uint16_t bits);

// Disparity of a group or sub-block: (number of ones) - (number of zeros) over `width` bits.
int BitDisparity(uint16_t bits, int width);

}  // namespace ukai::wire

#endif  // UKAI_WIRE_CODE_8B10B_H_
