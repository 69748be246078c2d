// SHA-1 of a message shorter than 56 bytes (one 64-byte block after
// padding): all the UTS benchmark's splittable random number generator needs
// (it hashes 20- and 24-byte messages). FIPS 180-4, section 6.1.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fj_bench {

using sha1_digest = std::array<std::uint8_t, 20>;

inline std::uint32_t rotl32(std::uint32_t x, int s) { return (x << s) | (x >> (32 - s)); }

/// SHA-1 of msg[0, n), n < 56.
inline sha1_digest sha1_short(const std::uint8_t* msg, std::size_t n) {
  std::uint8_t block[64] = {};
  std::memcpy(block, msg, n);
  block[n] = 0x80;
  const std::uint64_t bits = static_cast<std::uint64_t>(n) * 8;
  for (int i = 0; i < 8; ++i) block[63 - i] = static_cast<std::uint8_t>(bits >> (8 * i));

  std::uint32_t w[80];
  for (int i = 0; i < 16; ++i)
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 80; ++i) w[i] = rotl32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

  const std::uint32_t h0 = 0x67452301, h1 = 0xEFCDAB89, h2 = 0x98BADCFE, h3 = 0x10325476, h4 = 0xC3D2E1F0;
  std::uint32_t a = h0, b = h1, c = h2, d = h3, e = h4;
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const std::uint32_t t = rotl32(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl32(b, 30);
    b = a;
    a = t;
  }
  const std::uint32_t h[5] = {h0 + a, h1 + b, h2 + c, h3 + d, h4 + e};
  sha1_digest out;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

}  // namespace fj_bench
