// weft — collectives where every rank gets something from every rank:
// allgather, alltoall, alltoallv. Internal to <weft/coll.hpp>.
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/coll/detail.hpp"

namespace weft {

/// What alltoallv delivers: the values every rank sent here, concatenated
/// in source rank order; counts[s] of them came from rank s.
template <class T>
struct alltoallv_result {
  std::vector<T> values;
  std::vector<std::size_t> counts;
};

namespace detail {

/// Bruck's allgather: a rank's block holds the values of ranks me, me+1,
/// ... (mod n); at step d it sends the first min(d, n - d) of them to
/// me - d and appends as many from me + d. ceil(log2 n) steps for any n.
template <class T>
std::vector<T> allgather_steps(std::uint64_t seq, T value) {
  const int me = rank(), n = nranks();
  std::vector<std::byte> block;
  append_value(block, value);
  for (int d = 1, k = 0; d < n; d <<= 1, ++k) {
    const int count = std::min(d, n - d);
    std::vector<std::byte> out =
        count == d ? block : sub_block(split_parts(block, static_cast<std::size_t>(d)), 0, static_cast<std::size_t>(count));
    collective_send((me - d + n) % n, seq, phase_step + k, std::move(out));
    const std::vector<std::byte> in = collective_recv(seq, phase_step + k, (me + d) % n);
    block.insert(block.end(), in.begin(), in.end());
  }
  const auto parts = split_parts(block, static_cast<std::size_t>(n));
  std::vector<T> all(static_cast<std::size_t>(n));
  all[static_cast<std::size_t>(me)] = std::move(value);
  for (int i = 1; i < n; ++i) all[static_cast<std::size_t>((me + i) % n)] = from_bytes<T>(parts[static_cast<std::size_t>(i)]);
  return all;
}

/// Every message at once, rank me + 1 first (so that not everybody sends
/// to rank 0 first).
template <class T>
std::vector<T> alltoall_steps(std::uint64_t seq, std::vector<T> values) {
  const int me = rank(), n = nranks();
  for (int i = 1; i < n; ++i) {
    const int dest = (me + i) % n;
    collective_send(dest, seq, phase_step, to_bytes(values[static_cast<std::size_t>(dest)]));
  }
  std::vector<T> out(static_cast<std::size_t>(n));
  out[static_cast<std::size_t>(me)] = std::move(values[static_cast<std::size_t>(me)]);
  if (n == 1) return out;
  const auto in = collective_expect(seq, phase_step, n - 1).get();
  for (int s = 0; s < n; ++s)
    if (s != me) out[static_cast<std::size_t>(s)] = from_bytes<T>(in[static_cast<std::size_t>(s)]);
  return out;
}

/// Elements [first, first + count) as a message: their count, then the
/// elements (raw bytes when trivially copyable, else serialized one by one).
template <class T>
std::vector<std::byte> slice_bytes(const T* first, std::size_t count) {
  serialization::writer w(serialization::writer_options{~std::size_t{0}, 0});
  w & static_cast<std::uint64_t>(count);
  std::vector<std::byte> b;
  if constexpr (std::is_trivially_copyable_v<T>) {
    b = std::move(w).finish().bytes;
    const auto* p = reinterpret_cast<const std::byte*>(first);
    b.insert(b.end(), p, p + count * sizeof(T));
  } else {
    for (std::size_t i = 0; i < count; ++i) w & first[i];
    b = std::move(w).finish().bytes;
  }
  return b;
}
/// Appends the elements of a slice_bytes message to `out`; returns their count.
template <class T>
std::size_t append_slice(std::vector<T>& out, std::span<const std::byte> b) {
  serialization::reader r(b);
  const auto count = r.template read<std::uint64_t>();
  const std::size_t at = sizeof(std::uint64_t);
  if constexpr (std::is_trivially_copyable_v<T>) {
    if ((b.size() - at) / sizeof(T) != count || (b.size() - at) % sizeof(T) != 0)
      collective_error("an alltoallv message of " + std::to_string(b.size()) + " bytes does not hold " +
                       std::to_string(count) + " elements");
    const std::size_t old = out.size();
    out.resize(old + static_cast<std::size_t>(count));
    if (count != 0) std::memcpy(static_cast<void*>(out.data() + old), b.data() + at, b.size() - at);
  } else {
    for (std::uint64_t i = 0; i < count; ++i) out.push_back(r.template read<T>());
    r.expect_end();
  }
  return static_cast<std::size_t>(count);
}

template <class T>
alltoallv_result<T> alltoallv_steps(std::uint64_t seq, std::vector<T> values, std::vector<std::size_t> counts) {
  const int me = rank(), n = nranks();
  std::vector<std::size_t> offset(static_cast<std::size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r) offset[static_cast<std::size_t>(r) + 1] = offset[static_cast<std::size_t>(r)] + counts[static_cast<std::size_t>(r)];
  for (int i = 1; i < n; ++i) {
    const auto dest = static_cast<std::size_t>((me + i) % n);
    collective_send(static_cast<int>(dest), seq, phase_step, slice_bytes(values.data() + offset[dest], counts[dest]));
  }
  const auto in = n > 1 ? collective_expect(seq, phase_step, n - 1).get() : std::vector<std::vector<std::byte>>{};
  alltoallv_result<T> out;
  out.counts.resize(static_cast<std::size_t>(n));
  for (int s = 0; s < n; ++s) {
    const auto src = static_cast<std::size_t>(s);
    if (s == me) {
      out.values.insert(out.values.end(), std::make_move_iterator(values.begin() + static_cast<std::ptrdiff_t>(offset[src])),
                        std::make_move_iterator(values.begin() + static_cast<std::ptrdiff_t>(offset[src + 1])));
      out.counts[src] = counts[src];
    } else {
      out.counts[src] = append_slice(out.values, in[src]);
    }
  }
  return out;
}

inline void check_alltoall_values(std::size_t count) {
  if (count != static_cast<std::size_t>(nranks()))
    collective_error("alltoall needs one value per rank (" + std::to_string(nranks()) + "), got " + std::to_string(count));
}
inline void check_alltoallv_counts(std::size_t values, const std::vector<std::size_t>& counts) {
  std::size_t total = 0;
  for (auto c : counts) total += c;
  if (counts.size() != static_cast<std::size_t>(nranks()) || total != values)
    collective_error("alltoallv needs one count per rank (" + std::to_string(nranks()) + ", got " +
                     std::to_string(counts.size()) + ") adding up to the " + std::to_string(values) +
                     " values (they add up to " + std::to_string(total) + ")");
}

}  // namespace detail

/// Every rank's value on every rank, in rank order.
template <class T>
std::vector<T> allgather(const T& value) {
  return detail::allgather_steps<T>(detail::collective_begin(), value);
}
template <class T>
future<std::vector<T>> allgather_async(const T& value) {
  return async(detail::allgather_steps<T>, detail::collective_begin(), value);
}

/// values[d] goes to rank d; returns what every rank s sent here, at [s].
/// Every rank passes one value per rank.
template <class T>
std::vector<T> alltoall(std::vector<T> values) {
  detail::check_alltoall_values(values.size());
  return detail::alltoall_steps<T>(detail::collective_begin(), std::move(values));
}
template <class T>
future<std::vector<T>> alltoall_async(std::vector<T> values) {
  detail::check_alltoall_values(values.size());
  return async(detail::alltoall_steps<T>, detail::collective_begin(), std::move(values));
}

/// `values` holds counts[0] elements for rank 0, then counts[1] for rank 1,
/// and so on; returns what every rank sent here (alltoallv_result).
template <class T>
alltoallv_result<T> alltoallv(std::vector<T> values, std::vector<std::size_t> counts) {
  detail::check_alltoallv_counts(values.size(), counts);
  return detail::alltoallv_steps<T>(detail::collective_begin(), std::move(values), std::move(counts));
}
template <class T>
future<alltoallv_result<T>> alltoallv_async(std::vector<T> values, std::vector<std::size_t> counts) {
  detail::check_alltoallv_counts(values.size(), counts);
  return async(detail::alltoallv_steps<T>, detail::collective_begin(), std::move(values), std::move(counts));
}

}  // namespace weft
