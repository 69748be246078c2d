#include "pgas/heap_space.hpp"

namespace weft::pgas::detail {

namespace {
/// `n` rounded up to the alignment; callers pass at most the heap's size,
/// so the sum cannot wrap.
std::size_t rounded(std::size_t n) {
  const std::size_t a = heap_space::alignment;
  return n == 0 ? a : (n + a - 1) / a * a;
}
}  // namespace

std::optional<std::uint64_t> heap_space::take_hole(region& r, std::size_t n) {
  for (auto it = r.free.begin(); it != r.free.end(); ++it) {  // first fit: deterministic
    if (it->second < n) continue;
    const std::uint64_t at = it->first;
    const std::size_t left = it->second - n;
    r.free.erase(it);
    if (left != 0) r.free.emplace(at + n, left);
    return at;
  }
  return std::nullopt;
}

void heap_space::add_hole(region& r, std::uint64_t at, std::size_t n) {
  auto next = r.free.lower_bound(at);
  if (next != r.free.end() && at + n == next->first) {
    n += next->second;
    next = r.free.erase(next);
  }
  if (next != r.free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {
      prev->second += n;
      return;
    }
  }
  r.free.emplace(at, n);
}

std::optional<std::uint64_t> heap_space::allocate_symmetric(std::size_t bytes) {
  if (bytes > size_) return std::nullopt;  // never fits (and rounding near 2^64 would wrap to 0)
  const std::size_t n = rounded(bytes);
  std::lock_guard lock(mutex_);
  std::optional<std::uint64_t> at = take_hole(sym_, n);
  if (!at) {
    if (n > local_bottom_ - sym_top_) return std::nullopt;
    at = sym_top_;
    sym_top_ += n;
  }
  sym_.live.emplace(*at, n);
  sym_.in_use += n;
  return at;
}

std::optional<std::uint64_t> heap_space::allocate_local(std::size_t bytes) {
  if (bytes > size_) return std::nullopt;  // never fits (and rounding near 2^64 would wrap to 0)
  const std::size_t n = rounded(bytes);
  std::lock_guard lock(mutex_);
  std::optional<std::uint64_t> at = take_hole(local_, n);
  if (!at) {
    if (n > local_bottom_ - sym_top_) return std::nullopt;
    local_bottom_ -= n;
    at = local_bottom_;
  }
  local_.live.emplace(*at, n);
  local_.in_use += n;
  return at;
}

std::optional<std::size_t> heap_space::release(region& r, std::uint64_t offset) {
  auto it = r.live.find(offset);
  if (it == r.live.end()) return std::nullopt;
  const std::size_t n = it->second;
  r.live.erase(it);
  r.in_use -= n;
  add_hole(r, offset, n);
  return n;
}

std::optional<std::size_t> heap_space::free_symmetric(std::uint64_t offset) {
  std::lock_guard lock(mutex_);
  const auto n = release(sym_, offset);
  // A hole that reaches the frontier gives the space back to both kinds.
  if (n && !sym_.free.empty()) {
    auto last = std::prev(sym_.free.end());
    if (last->first + last->second == sym_top_) {
      sym_top_ = last->first;
      sym_.free.erase(last);
    }
  }
  return n;
}

std::optional<std::size_t> heap_space::free_local(std::uint64_t offset) {
  std::lock_guard lock(mutex_);
  const auto n = release(local_, offset);
  if (n && !local_.free.empty() && local_.free.begin()->first == local_bottom_) {
    local_bottom_ += local_.free.begin()->second;
    local_.free.erase(local_.free.begin());
  }
  return n;
}

std::size_t heap_space::symmetric_in_use() const {
  std::lock_guard lock(mutex_);
  return sym_.in_use;
}

std::size_t heap_space::local_in_use() const {
  std::lock_guard lock(mutex_);
  return local_.in_use;
}

}  // namespace weft::pgas::detail
