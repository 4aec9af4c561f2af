#include "wire/crc32.h"

#include <array>

namespace ukai::wire {
namespace {

// Slicing-by-8 tables: table[0] is the classic byte table.
constexpr std::array<std::array<uint32_t, 256>, 8> MakeTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

constexpr std::array<std::array<uint32_t, 256>, 8> kTables = MakeTables();

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

}  // namespace

uint32_t Crc32(std::span<const uint8_t> data, uint32_t crc) {
  uint32_t c = ~crc;
  const uint8_t* p = data.data();
  size_t n = data.size();
  while (n >= 8) {
    const uint32_t a = c ^ Le32(p);
    const uint32_t b = Le32(p + 4);
    c = kTables[7][a & 0xFF] ^ kTables[6][(a >> 8) & 0xFF] ^ kTables[5][(a >> 16) & 0xFF] ^
        kTables[4][a >> 24] ^ kTables[3][b & 0xFF] ^ kTables[2][(b >> 8) & 0xFF] ^
        kTables[1][(b >> 16) & 0xFF] ^ kTables[0][b >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
  return ~c;
}

void AppendFcs(std::vector<uint8_t>* frame) {
  const uint32_t fcs = Crc32(*frame);
  for (int i = 0; i < 4; ++i) frame->push_back(static_cast<uint8_t>(fcs >> (8 * i)));
}

uint32_t StoredFcs(std::span<const uint8_t> frame) {
  const uint8_t* p = frame.data() + frame.size() - kFcsBytes;
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

bool FcsOk(std::span<const uint8_t> frame) {
  if (frame.size() < kFcsBytes) return false;
  return Crc32(frame.first(frame.size() - kFcsBytes)) == StoredFcs(frame);
}

}  // namespace ukai::wire
