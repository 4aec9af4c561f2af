#include "wire/crc32.h"

#include <array>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define UKAI_CRC32_CLMUL 1
#endif

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

// The CRC register (not inverted) `c` after the `n` bytes at `p`, by the tables.
uint32_t UpdateTables(uint32_t c, const uint8_t* p, size_t n) {
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
  return c;
}

#ifdef UKAI_CRC32_CLMUL
#define UKAI_CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

// Folding constants of the reflected polynomial (Intel's paper, each reflected and shifted
// left by one): x^(4*128+32), x^(4*128-32), x^(128+32), x^(128-32) and x^64 mod P; the
// polynomial P and mu = floor(x^64 / P) for the Barrett reduction.
constexpr int64_t kK1 = 0x154442bd4, kK2 = 0x1c6e41596, kK3 = 0x1751997d0, kK4 = 0x0ccaa009e;
constexpr int64_t kK5 = 0x163cd6124, kPoly = 0x1db710641, kMu = 0x1f7011641;

UKAI_CLMUL_TARGET inline __m128i Load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Moves the 128 bits `x` forward by the distance the constants `k` (low, high) stand for
// and adds (xors) `next`.
UKAI_CLMUL_TARGET inline __m128i Fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

// The CRC register (not inverted) `c` after the `n` bytes at `p`; n >= 64, a multiple of 16.
UKAI_CLMUL_TARGET uint32_t UpdateClmul(uint32_t c, const uint8_t* p, size_t n) {
  // Four 128-bit lanes over 64-byte blocks.
  __m128i x0 = _mm_xor_si128(Load(p), _mm_cvtsi32_si128(static_cast<int>(c)));
  __m128i x1 = Load(p + 16), x2 = Load(p + 32), x3 = Load(p + 48);
  const __m128i k12 = _mm_set_epi64x(kK2, kK1);
  for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
    x0 = Fold(x0, k12, Load(p));
    x1 = Fold(x1, k12, Load(p + 16));
    x2 = Fold(x2, k12, Load(p + 32));
    x3 = Fold(x3, k12, Load(p + 48));
  }
  // The lanes into one, then the 16-byte blocks left.
  const __m128i k34 = _mm_set_epi64x(kK4, kK3);
  x0 = Fold(Fold(Fold(x0, k34, x1), k34, x2), k34, x3);
  for (; n >= 16; p += 16, n -= 16) x0 = Fold(x0, k34, Load(p));
  // 128 bits to 64, then to 32 by Barrett reduction.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), _mm_clmulepi64_si128(x0, k34, 0x10));
  __m128i t = _mm_srli_si128(x0, 4);
  x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), _mm_set_epi64x(0, kK5), 0x00),
                     t);
  const __m128i barrett = _mm_set_epi64x(kMu, kPoly);
  t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), barrett, 0x10), low32);
  x0 = _mm_xor_si128(x0, _mm_clmulepi64_si128(t, barrett, 0x00));
  return static_cast<uint32_t>(_mm_extract_epi32(x0, 1));
}
#endif

}  // namespace

bool Crc32UsesClmul() {
#ifdef UKAI_CRC32_CLMUL
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#else
  return false;
#endif
}

uint32_t Crc32Tables(std::span<const uint8_t> data, uint32_t crc) {
  return ~UpdateTables(~crc, data.data(), data.size());
}

uint32_t Crc32(std::span<const uint8_t> data, uint32_t crc) {
#ifdef UKAI_CRC32_CLMUL
  if (data.size() >= 64 && Crc32UsesClmul()) {
    const size_t bulk = data.size() & ~size_t{15};
    return ~UpdateTables(UpdateClmul(~crc, data.data(), bulk), data.data() + bulk,
                         data.size() - bulk);
  }
#endif
  return Crc32Tables(data, crc);
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
