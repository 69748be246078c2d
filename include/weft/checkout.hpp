// weft — checkout/checkin: a local view of global memory (Itoyori's
// software cache).
//
// @code
//   // given: weft::global_ptr<double> grid, result; int r; std::size_t first, n;
//   {
//     auto in = weft::make_checkout(grid.on(r) + first, n, weft::checkout_mode::read);
//     auto out = weft::make_checkout(result.on(r), n, weft::checkout_mode::write);
//     for (std::size_t i = 0; i < n; ++i) out[i] = 2 * in[i];   // std::span<const double> / std::span<double>
//   }                                                          // checked in here
//   weft::cache_release();   // (or weft::fence()) the writes are in rank r's heap
//   weft::cache_acquire();   // later checkouts see what other ranks released
// @endcode
//
// Memory on the calling rank's node (on the smp backend every rank's heap,
// on the mpi backend the host's; --weft:node-size cuts both into smaller
// nodes) is handed out as is: the span points at the heap. Other memory
// (other nodes, or everything with --weft:cache=always) goes through a per-rank cache of
// blocks (--weft:cache-block, default 64K; --weft:cache-size, default 16M):
// a read fetches the missing parts of the blocks it touches, a write fetches
// nothing, and at check-in the checked-out bytes of write and read_write
// checkouts are marked dirty; only dirty bytes go back, at eviction or at
// cache_release(). A checkout spanning several blocks still sees one
// contiguous span (the blocks are mapped side by side for it).
//
// Rules (docs/PGAS.md "Software cache"): a data-race-free program that
// releases after writing and acquires before reading what another rank
// released sees sequentially consistent results. No checkout may be held
// across cache_release, cache_acquire, fence or the end of the program
// (each ends the job if one is). A checkout larger than the cache, or one
// for which live checkouts leave too few free blocks, ends the job.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "weft/pgas.hpp"

namespace weft {

namespace detail::pgas {

enum class access : std::uint8_t { read, write, read_write };

/// What check-in needs to know about one checkout.
struct checkout_token {
  void* owner = nullptr;  // the rank's pgas state; null when nothing is held
  int rank = -1;
  std::uint64_t offset = 0;
  std::size_t bytes = 0;
  access mode = access::read;
  bool cached = false;           // through the cache (else the heap itself)
  void* alias = nullptr;         // the blocks mapped side by side, if several
  std::size_t alias_bytes = 0;
};

/// The local address of heap bytes [offset, offset + bytes) of `rank`,
/// valid until checkin_bytes(token).
std::byte* checkout_bytes(int rank, std::uint64_t offset, std::size_t bytes, access mode, checkout_token& token);
void checkin_bytes(checkout_token& token);

/// Release and acquire at a task boundary (forkjoin): like cache_release and
/// cache_acquire, but other tasks of the rank may hold checkouts meanwhile.
void task_boundary_release();
void task_boundary_acquire();

}  // namespace detail::pgas

template <class T>
class checkout;
namespace detail::pgas {
template <class U>
checkout<U> open_checkout(global_ptr<std::remove_const_t<U>> p, std::size_t n, access mode);
}  // namespace detail::pgas

/// How a checkout uses the memory: read (nothing goes back), write (nothing
/// is fetched: the span's contents are unspecified until written, and every
/// byte of it goes back), read_write (fetched, and every byte goes back).
namespace checkout_mode {
struct read_t {};
struct write_t {};
struct read_write_t {};
inline constexpr read_t read{};
inline constexpr write_t write{};
inline constexpr read_write_t read_write{};
}  // namespace checkout_mode

/// A local span onto global memory, held until checkin() or destruction.
/// Move-only. T is const for read checkouts.
template <class T>
class checkout {
 public:
  checkout() = default;
  checkout(checkout&& o) noexcept : span_(std::exchange(o.span_, {})), token_(std::exchange(o.token_, {})) {}
  checkout& operator=(checkout&& o) noexcept {
    if (this != &o) {
      checkin();
      span_ = std::exchange(o.span_, {});
      token_ = std::exchange(o.token_, {});
    }
    return *this;
  }
  checkout(const checkout&) = delete;
  checkout& operator=(const checkout&) = delete;
  ~checkout() { checkin(); }

  /// Ends the checkout: written bytes become dirty in the cache (they reach
  /// the owner at the next release). The span is invalid afterwards.
  void checkin() {
    if (token_.owner == nullptr) return;
    detail::pgas::checkin_bytes(token_);
    token_ = {};
    span_ = {};
  }
  bool held() const noexcept { return token_.owner != nullptr; }

  std::span<T> span() const noexcept { return span_; }
  T* data() const noexcept { return span_.data(); }
  std::size_t size() const noexcept { return span_.size(); }
  T& operator[](std::size_t i) const noexcept { return span_[i]; }
  auto begin() const noexcept { return span_.begin(); }
  auto end() const noexcept { return span_.end(); }
  /// Whether the span is a copy in the cache (false: the heap itself).
  bool cached() const noexcept { return token_.cached; }

 private:
  template <class U>
  friend checkout<U> detail::pgas::open_checkout(global_ptr<std::remove_const_t<U>>, std::size_t,
                                                 detail::pgas::access);
  std::span<T> span_;
  detail::pgas::checkout_token token_;
};

template <class U>
checkout<U> detail::pgas::open_checkout(global_ptr<std::remove_const_t<U>> p, std::size_t n, access mode) {
  using E = std::remove_const_t<U>;
  static_assert(std::is_trivially_copyable_v<E>, "the heap holds trivially copyable types");
  checkout<U> c;
  const std::size_t bytes = bytes_of<E>("checkout", p.rank(), p.offset(), n);
  std::byte* at = checkout_bytes(p.rank(), p.offset(), bytes, mode, c.token_);
  c.span_ = std::span<U>(reinterpret_cast<U*>(at), n);
  return c;
}

/// n elements from p, or a global_span, in the given mode.
template <class T>
checkout<const T> make_checkout(global_ptr<T> p, std::size_t n, checkout_mode::read_t) {
  return detail::pgas::open_checkout<const T>(p, n, detail::pgas::access::read);
}
template <class T>
checkout<T> make_checkout(global_ptr<T> p, std::size_t n, checkout_mode::write_t) {
  return detail::pgas::open_checkout<T>(p, n, detail::pgas::access::write);
}
template <class T>
checkout<T> make_checkout(global_ptr<T> p, std::size_t n, checkout_mode::read_write_t) {
  return detail::pgas::open_checkout<T>(p, n, detail::pgas::access::read_write);
}
template <class T, class Mode>
auto make_checkout(global_span<T> s, Mode mode) {
  return make_checkout(s.data, s.size, mode);
}

/// Writes every dirty byte of the calling rank's cache back to its owner
/// and waits until all of it is there (fence() does this too).
void cache_release();
/// Drops the calling rank's clean cached data, so later checkouts fetch
/// what other ranks released since.
void cache_acquire();
/// Collective: cache_release(), barrier(), cache_acquire().
void cache_barrier();

/// The calling rank's cache counters (for tests and tuning).
struct cache_statistics {
  std::uint64_t direct_checkouts = 0;  // spans onto the heap itself
  std::uint64_t cached_checkouts = 0;
  std::uint64_t fetches = 0;           // gets issued to fill blocks
  std::uint64_t fetched_bytes = 0;
  std::uint64_t write_backs = 0;       // puts of dirty ranges
  std::uint64_t written_back_bytes = 0;
  std::uint64_t evictions = 0;
};
cache_statistics cache_stats();

}  // namespace weft
