// The Unbalanced Tree Search benchmark's trees (UTS, Olivier et al., LCPC
// 2006): a node is the 20-byte state of a splittable random number
// generator; child i's state is SHA-1(parent state, i as 4 big-endian
// bytes), the root's is SHA-1(16 zero bytes, seed as 4 big-endian bytes).
// A geometric tree with the fixed shape (UTS's -t 1 -a 3) gives a node of
// height < depth a geometrically distributed number of children with mean
// b0 (at most 100), and none at the last height. Published sizes:
// T1 (-d 10 -b 4 -r 19) has 4,130,071 nodes, T1L (-d 13 -b 4 -r 29)
// 102,181,082.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>

#include "sha1.hpp"

namespace fj_bench {

struct uts_node {
  sha1_digest state;
  std::int32_t height;
};

struct geometric_tree {
  double b0 = 4;
  std::int32_t depth = 13;

  static uts_node root(std::int32_t seed) {
    std::uint8_t msg[20] = {};
    for (int i = 0; i < 4; ++i) msg[16 + i] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(seed) >> (24 - 8 * i));
    return {sha1_short(msg, 20), 0};
  }

  static uts_node child(const uts_node& parent, std::int32_t i) {
    std::uint8_t msg[24];
    for (int k = 0; k < 20; ++k) msg[k] = parent.state[static_cast<std::size_t>(k)];
    for (int k = 0; k < 4; ++k) msg[20 + k] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(i) >> (24 - 8 * k));
    return {sha1_short(msg, 24), parent.height + 1};
  }

  std::int32_t children(const uts_node& n) const {
    const double b = n.height < depth ? b0 : 0.0;
    const double p = 1.0 / (1.0 + b);
    // The state's last 4 bytes, as a non-negative int, over 2^31: u in [0, 1).
    const std::uint32_t r = ((std::uint32_t{n.state[16]} << 24) | (std::uint32_t{n.state[17]} << 16) |
                             (std::uint32_t{n.state[18]} << 8) | std::uint32_t{n.state[19]}) &
                            0x7fffffffu;
    const double u = static_cast<double>(r) / 2147483648.0;
    const int k = static_cast<int>(std::floor(std::log(1.0 - u) / std::log(1.0 - p)));
    return k > 100 ? 100 : k;
  }
};

}  // namespace fj_bench
