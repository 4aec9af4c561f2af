#include "wire/code_8b10b.h"

#include <array>
#include <bit>
#include <string>

namespace ukai::wire {
namespace {

// 5b/6b sub-blocks, abcdei with `a` the most significant bit: {RD- form, RD+ form}.
constexpr uint8_t k6b[32][2] = {
    {0b100111, 0b011000}, {0b011101, 0b100010}, {0b101101, 0b010010}, {0b110001, 0b110001},
    {0b110101, 0b001010}, {0b101001, 0b101001}, {0b011001, 0b011001}, {0b111000, 0b000111},
    {0b111001, 0b000110}, {0b100101, 0b100101}, {0b010101, 0b010101}, {0b110100, 0b110100},
    {0b001101, 0b001101}, {0b101100, 0b101100}, {0b011100, 0b011100}, {0b010111, 0b101000},
    {0b011011, 0b100100}, {0b100011, 0b100011}, {0b010011, 0b010011}, {0b110010, 0b110010},
    {0b001011, 0b001011}, {0b101010, 0b101010}, {0b011010, 0b011010}, {0b111010, 0b000101},
    {0b110011, 0b001100}, {0b100110, 0b100110}, {0b010110, 0b010110}, {0b110110, 0b001001},
    {0b001110, 0b001110}, {0b101110, 0b010001}, {0b011110, 0b100001}, {0b101011, 0b010100}};
constexpr uint8_t k6bK28[2] = {0b001111, 0b110000};

// 3b/4b sub-blocks, fghj with `f` the most significant bit: {RD- form, RD+ form}. Index 8 is
// the alternate A7 (used for D.x.7 when the primary would make a run of five equal bits).
constexpr uint8_t k4bData[9][2] = {{0b1011, 0b0100}, {0b1001, 0b1001}, {0b0101, 0b0101},
                                   {0b1100, 0b0011}, {0b1101, 0b0010}, {0b1010, 0b1010},
                                   {0b0110, 0b0110}, {0b1110, 0b0001}, {0b0111, 0b1000}};
constexpr uint8_t k4bControl[8][2] = {{0b1011, 0b0100}, {0b0110, 0b1001}, {0b1010, 0b0101},
                                      {0b1100, 0b0011}, {0b1101, 0b0010}, {0b0101, 0b1010},
                                      {0b1001, 0b0110}, {0b0111, 0b1000}};

constexpr int Ones(uint16_t v) { return std::popcount(v); }

// Disparity after a sub-block of `width` bits, given the one before. Unbalanced blocks set it
// by their sign; the balanced blocks 000111 / 0011 leave `+` and 111000 / 1100 leave `-` (the
// standard rule, so the two forms of D.7 and D.x.3 are checked too); other balanced blocks
// keep it.
constexpr Disparity After(uint16_t block, int width, Disparity rd) {
  const int d = 2 * Ones(block) - width;
  if (d > 0) return Disparity::kPlus;
  if (d < 0) return Disparity::kMinus;
  if (width == 6 && block == 0b000111) return Disparity::kPlus;
  if (width == 6 && block == 0b111000) return Disparity::kMinus;
  if (width == 4 && block == 0b0011) return Disparity::kPlus;
  if (width == 4 && block == 0b1100) return Disparity::kMinus;
  return rd;
}

constexpr int Col(Disparity rd) { return rd == Disparity::kPlus ? 1 : 0; }

constexpr bool IsControlValueImpl(uint8_t value) {
  for (uint8_t k : kControlValues) {
    if (k == value) return true;
  }
  return false;
}

constexpr CodeGroup Encode6(uint8_t x, bool control, Disparity rd) {
  const uint8_t b = (control && x == 28) ? k6bK28[Col(rd)] : k6b[x & 31][Col(rd)];
  return {b, After(b, 6, rd)};
}

constexpr CodeGroup Encode4(uint8_t y, uint8_t x, bool control, Disparity rd) {
  uint8_t b;
  if (control) {
    b = k4bControl[y & 7][Col(rd)];
  } else {
    const bool alternate =
        y == 7 && ((rd == Disparity::kMinus && (x == 17 || x == 18 || x == 20)) ||
                   (rd == Disparity::kPlus && (x == 11 || x == 13 || x == 14)));
    b = k4bData[alternate ? 8 : (y & 7)][Col(rd)];
  }
  return {b, After(b, 4, rd)};
}

constexpr CodeGroup EncodeGroup(uint8_t value, bool control, Disparity rd) {
  const CodeGroup six = Encode6(value & 31, control, rd);
  const CodeGroup four = Encode4(value >> 5, value & 31, control, six.rd_after);
  return {static_cast<uint16_t>((six.bits << 4) | four.bits), four.rd_after};
}

// Decode table: for each input disparity and each 10-bit pattern, the byte it encodes in that
// column, or (when only the other column has it) a disparity error, or an invalid group.
struct Entry {
  uint8_t value = 0;
  bool control = false;
  CodeError error = CodeError::kInvalidCode;
  Disparity rd_after = Disparity::kMinus;
};
using DecodeTable = std::array<std::array<Entry, 1024>, 2>;

constexpr void AddGroup(DecodeTable& t, uint8_t value, bool control) {
  for (Disparity rd : {Disparity::kMinus, Disparity::kPlus}) {
    const CodeGroup g = EncodeGroup(value, control, rd);
    t[Col(rd)][g.bits] = {value, control, CodeError::kNone, g.rd_after};
  }
}

constexpr DecodeTable BuildDecodeTable() {
  DecodeTable t{};
  for (auto& column : t) column.fill(Entry{});  // explicit: not every compiler keeps the NSDMIs
  for (int v = 0; v < 256; ++v) AddGroup(t, static_cast<uint8_t>(v), false);
  for (uint8_t k : kControlValues) AddGroup(t, k, true);
  // A group valid only in the other column is a disparity error; the disparity then continues
  // from the group's own content, as if it had been received in its column.
  for (int col = 0; col < 2; ++col) {
    for (int bits = 0; bits < 1024; ++bits) {
      const Entry& other = t[1 - col][bits];
      if (t[col][bits].error == CodeError::kInvalidCode && other.error == CodeError::kNone) {
        t[col][bits] = other;
        t[col][bits].error = CodeError::kDisparity;
      }
    }
  }
  return t;
}

constexpr DecodeTable kDecodeTable = BuildDecodeTable();

}  // namespace

bool IsControlValue(uint8_t value) { return IsControlValueImpl(value); }

CodeGroup Encode5b6b(uint8_t x, bool control, Disparity rd) { return Encode6(x, control, rd); }

CodeGroup Encode3b4b(uint8_t y, uint8_t x, bool control, Disparity rd) {
  return Encode4(y, x, control, rd);
}

Result<CodeGroup> Encode8b10b(uint8_t value, bool control, Disparity rd) {
  if (control && !IsControlValue(value)) {
    return Status::InvalidArgument("8b/10b: " + CodeGroupName(value, true) + " (byte " +
                                   std::to_string(value) + ") is not one of the 12 K code groups");
  }
  return EncodeGroup(value, control, rd);
}

std::vector<uint16_t> EncodeDataWordParallel(std::span<const uint8_t> bytes, Disparity* rd) {
  // Stage 1 (parallel in hardware): both forms of every byte's 5b/6b and 3b/4b sub-blocks.
  struct Both {
    CodeGroup six[2];
  };
  std::vector<Both> six(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (Disparity d : {Disparity::kMinus, Disparity::kPlus}) {
      six[i].six[Col(d)] = Encode6(bytes[i] & 31, false, d);
    }
  }
  // Stage 2: carry the disparity through the 5b/3b/5b/3b... blocks, selecting one form each.
  std::vector<uint16_t> out(bytes.size());
  Disparity d = *rd;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const CodeGroup s = six[i].six[Col(d)];
    const CodeGroup f = Encode4(bytes[i] >> 5, bytes[i] & 31, false, s.rd_after);
    out[i] = static_cast<uint16_t>((s.bits << 4) | f.bits);
    d = f.rd_after;
  }
  *rd = d;
  return out;
}

Decoded Decode8b10b(uint16_t bits, Disparity rd) {
  if (bits >= 1024) return {0, false, CodeError::kInvalidCode, rd};
  const Entry& e = kDecodeTable[Col(rd)][bits];
  if (e.error == CodeError::kInvalidCode) {
    // Continue from the group's own disparity when it is unbalanced, else keep `rd`.
    const int d = BitDisparity(bits, 10);
    const Disparity next = d > 0 ? Disparity::kPlus : d < 0 ? Disparity::kMinus : rd;
    return {0, false, CodeError::kInvalidCode, next};
  }
  return {e.value, e.control, e.error, e.rd_after};
}

bool HasComma(uint16_t bits) {
  const uint16_t head = static_cast<uint16_t>((bits >> 3) & 0x7F);  // a..g
  return head == 0b0011111 || head == 0b1100000;
}

long FindComma(std::span<const uint8_t> stream) {
  constexpr uint8_t kPlusComma[7] = {0, 0, 1, 1, 1, 1, 1};
  for (size_t p = 0; p + 7 <= stream.size(); ++p) {
    bool plus = true, minus = true;
    for (size_t i = 0; i < 7; ++i) {
      plus = plus && stream[p + i] == kPlusComma[i];
      minus = minus && stream[p + i] == 1 - kPlusComma[i];
    }
    if (plus || minus) return static_cast<long>(p);
  }
  return -1;
}

std::string CodeGroupName(uint8_t value, bool control) {
  return std::string(control ? "K." : "D.") + std::to_string(value & 31) + "." +
         std::to_string(value >> 5);
}

std::string CodeGroupBitString(uint16_t bits) {
  std::string s(kCodeGroupBits, '0');
  for (int i = 0; i < kCodeGroupBits; ++i) {
    if ((bits >> (kCodeGroupBits - 1 - i)) & 1) s[i] = '1';
  }
  return s;
}

int BitDisparity(uint16_t bits, int width) {
  const uint16_t mask = static_cast<uint16_t>((1u << width) - 1);
  return 2 * Ones(bits & mask) - width;
}

}  // namespace ukai::wire
