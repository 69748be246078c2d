// Names of dependence types and kernels, error types, SipHash-2-4.
#include <cstring>

#include "taskbench/core.hpp"

namespace taskbench {

namespace {

struct dtype_name {
  dependence_type type;
  std::string_view name;
};
struct ktype_name {
  kernel_type type;
  std::string_view name;
};

// Alphabetical, which is the order -h lists them in.
constexpr dtype_name dtype_names[] = {
    {dependence_type::all_to_all, "all_to_all"},
    {dependence_type::dom, "dom"},
    {dependence_type::fft, "fft"},
    {dependence_type::nearest, "nearest"},
    {dependence_type::no_comm, "no_comm"},
    {dependence_type::random_nearest, "random_nearest"},
    {dependence_type::random_spread, "random_spread"},
    {dependence_type::spread, "spread"},
    {dependence_type::stencil_1d, "stencil_1d"},
    {dependence_type::stencil_1d_periodic, "stencil_1d_periodic"},
    {dependence_type::tree, "tree"},
    {dependence_type::trivial, "trivial"},
};

constexpr ktype_name ktype_names[] = {
    {kernel_type::busy_wait, "busy_wait"},
    {kernel_type::compute_bound, "compute_bound"},
    {kernel_type::compute_bound2, "compute_bound2"},
    {kernel_type::compute_dgemm, "compute_dgemm"},
    {kernel_type::empty, "empty"},
    {kernel_type::io_bound, "io_bound"},
    {kernel_type::load_imbalance, "load_imbalance"},
    {kernel_type::memory_bound, "memory_bound"},
    {kernel_type::memory_daxpy, "memory_daxpy"},
};

constexpr auto dtype_list = [] {
  std::array<dependence_type, std::size(dtype_names)> list{};
  for (std::size_t i = 0; i < list.size(); ++i) list[i] = dtype_names[i].type;
  return list;
}();

constexpr auto ktype_list = [] {
  std::array<kernel_type, std::size(ktype_names)> list{};
  for (std::size_t i = 0; i < list.size(); ++i) list[i] = ktype_names[i].type;
  return list;
}();

}  // namespace

std::string_view name_of(dependence_type type) noexcept {
  for (const auto& n : dtype_names)
    if (n.type == type) return n.name;
  return "unknown";
}

std::string_view name_of(kernel_type type) noexcept {
  for (const auto& n : ktype_names)
    if (n.type == type) return n.name;
  return "unknown";
}

std::optional<dependence_type> dependence_type_from_name(std::string_view name) noexcept {
  for (const auto& n : dtype_names)
    if (n.name == name) return n.type;
  return std::nullopt;
}

std::optional<kernel_type> kernel_type_from_name(std::string_view name) noexcept {
  for (const auto& n : ktype_names)
    if (n.name == name) return n.type;
  return std::nullopt;
}

std::span<const dependence_type> all_dependence_types() noexcept { return dtype_list; }
std::span<const kernel_type> all_kernel_types() noexcept { return ktype_list; }

bool is_supported(dependence_type type) noexcept {
  return type != dependence_type::random_spread;
}
bool is_supported(kernel_type type) noexcept { return type != kernel_type::io_bound; }

bool needs_period(dependence_type type) noexcept {
  return type == dependence_type::spread || type == dependence_type::random_nearest;
}

bool needs_scratch(kernel_type type) noexcept {
  return type == kernel_type::memory_bound || type == kernel_type::memory_daxpy ||
         type == kernel_type::compute_dgemm;
}

validation_error::validation_error(const std::string& message, long graph_index, long timestep,
                                   long point, long input, long position)
    : std::runtime_error(message),
      graph_index_(graph_index),
      timestep_(timestep),
      point_(point),
      input_(input),
      position_(position) {}

// ---------------------------------------------------------------------------
// SipHash-2-4, written from the definition in Aumasson & Bernstein,
// "SipHash: a fast short-input PRF" (2012).
// ---------------------------------------------------------------------------

namespace {

constexpr std::uint64_t rotl(std::uint64_t v, int b) noexcept { return (v << b) | (v >> (64 - b)); }

std::uint64_t load_le64(const unsigned char* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct sip_state {
  std::uint64_t v0, v1, v2, v3;
  void round() noexcept {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void compress(std::uint64_t m) noexcept {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

std::uint64_t siphash24(const void* data, std::size_t bytes,
                        const std::array<std::uint8_t, 16>& key) noexcept {
  const std::uint64_t k0 = load_le64(key.data());
  const std::uint64_t k1 = load_le64(key.data() + 8);
  sip_state s{k0 ^ UINT64_C(0x736f6d6570736575), k1 ^ UINT64_C(0x646f72616e646f6d),
              k0 ^ UINT64_C(0x6c7967656e657261), k1 ^ UINT64_C(0x7465646279746573)};
  const auto* in = static_cast<const unsigned char*>(data);
  std::size_t full = bytes / 8 * 8;
  for (std::size_t i = 0; i < full; i += 8) s.compress(load_le64(in + i));
  // Last block: remaining bytes, zero padded, length mod 256 in the top byte.
  std::uint64_t last = static_cast<std::uint64_t>(bytes & 0xff) << 56;
  for (std::size_t i = 0; i < bytes - full; ++i)
    last |= static_cast<std::uint64_t>(in[full + i]) << (8 * i);
  s.compress(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

const std::array<std::uint8_t, 16>& random_key() noexcept {
  static constexpr std::array<std::uint8_t, 16> key = {1, 2,  3,  4,  5,  6,  7,  8,
                                                       9, 10, 11, 12, 13, 14, 15, 0};
  return key;
}

double random_uniform(std::span<const std::int64_t> words) noexcept {
  // Little-endian bytes of each word, whatever the host byte order.
  constexpr std::size_t small = 8;
  unsigned char stack_bytes[small * 8] = {};
  std::vector<unsigned char> heap_bytes;
  unsigned char* bytes = stack_bytes;
  if (words.size() > small) {
    heap_bytes.resize(words.size() * 8);
    bytes = heap_bytes.data();
  }
  std::size_t n = words.size();
  for (std::size_t w = 0; w < n; ++w) {
    auto v = static_cast<std::uint64_t>(words[w]);
    for (int b = 0; b < 8; ++b) bytes[w * 8 + b] = static_cast<unsigned char>(v >> (8 * b));
  }
  std::uint64_t h = siphash24(bytes, n * 8, random_key());
  double u = static_cast<double>(h) * 0x1p-64;
  // Rounding to double can reach 1.0 for the largest hashes; keep [0, 1).
  return u < 1.0 ? u : 0x1.fffffffffffffp-1;
}

}  // namespace taskbench
