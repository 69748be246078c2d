// weft — a partitioned global address space: every rank owns a heap that
// all ranks can read, write and update atomically by global pointer.
//
// @code
//   // given: std::size_t n; std::vector<double> halo; weft::global_ptr<long> counter;
//   auto grid = weft::allocate_symmetric<double>(n);   // collective: same offset on every rank
//   auto right = grid.on((weft::rank() + 1) % weft::nranks());
//   weft::put(right, std::span<const double>(halo)).get();  // into the right neighbour's grid
//   double x = weft::get(right + 5).get();
//   long old = weft::atomic_fetch_add(counter.on(0), 1L).get();
//   weft::global_lock l = weft::global_lock::of_rank(0);
//   l.lock(); /* ... */ l.unlock();
//   weft::fence();                                      // every put/get of this rank has completed
// @endcode
//
// The heap (--weft:segment=SIZE, default 1G of address space per rank,
// backed page by page as it is used) holds two kinds of blocks: symmetric
// ones, allocated collectively (every rank calls allocate_symmetric with the
// same size, in the same order) at the same offset on every rank (DiOMP's
// aligned global memory), and rank-local ones (allocate), for data other
// ranks reach through a global_ptr they were given. Only trivially copyable
// types live there; no constructors run.
//
// Ranks in one process (smp backend) and ranks on one node (mpi backend,
// which maps the node's heaps into every process) are reached by loads,
// stores and CPU atomics on the calling thread: the target takes no part,
// even while it computes. Ranks on other nodes are reached by active
// messages that the target's workers (or its progress thread) serve.
// --weft:node-size=1 makes every other rank another node's (for testing
// that path in one process).
//
// Completion: a put's future is ready once the data is in the target heap
// (a get's once it is in `dst`); atomics' once the operation was applied,
// with the old value. No ordering between operations that are in flight at
// once. Buffers passed by pointer or span stay valid and untouched until the
// operation completes; values passed by value are copied at the call.
//
// Errors end the job with a message naming the ranks and the bytes: access
// outside a heap (any byte of [offset, offset + size) past its end, checked
// on the calling rank before anything moves, for every put, get, strided
// transfer, atomic and checkout, direct or by message), a rank that does not
// exist, a misaligned atomic, freeing what was not allocated, heap
// exhaustion (also for sizes whose byte count does not fit in 64 bits), lock
// misuse. See docs/PGAS.md "Errors".
#pragma once
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/am.hpp"
#include "weft/coll.hpp"
#include "weft/sched.hpp"

namespace weft {

namespace detail::pgas {

/// Address of heap byte `offset` of `rank` for the calling rank, or null
/// when that heap is not on its node (--weft:node-size decides, with the
/// transport) and is reached by messages. `for_access` no longer changes the
/// answer (it did for the removed --weft:pgas-direct). Checks only that
/// `offset` is inside the heap: accesses use checked_address.
std::byte* address_of(int rank, std::uint64_t offset, bool for_access) noexcept;
/// Checks that `rank` exists and heap bytes [offset, offset + bytes) lie in
/// its heap, or ends the job naming `op`, the ranks, the bytes and the heap
/// size; then the address to access them at, or null when they are reached
/// by messages.
std::byte* checked_address(const char* op, int rank, std::uint64_t offset, std::size_t bytes);
/// Ends the job: `count` elements of `element_bytes` at (rank, offset) are
/// more bytes than 64 bits hold.
[[noreturn]] void too_many_bytes(const char* op, int rank, std::uint64_t offset, std::size_t count,
                                 std::size_t element_bytes);
/// Checks, before any block moves, that the `count` blocks of `block`
/// elements, `stride` elements apart, from (rank, offset) all lie in the
/// heap; ends the job otherwise (also when the distances leave 64 bits).
void check_strided(const char* op, int rank, std::uint64_t offset, std::ptrdiff_t stride, std::size_t block,
                   std::size_t count, std::size_t element_bytes);
/// The bytes of `n` elements of T at (rank, offset), or the end of the job
/// when they do not fit in 64 bits (a compare with a constant).
template <class T>
std::size_t bytes_of(const char* op, int rank, std::uint64_t offset, std::size_t n) {
  if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) [[unlikely]]
    too_many_bytes(op, rank, offset, n, sizeof(T));
  return n * sizeof(T);
}
/// (rank, offset) of an address in a heap mapped here; false otherwise.
bool locate(const void* p, int& rank, std::uint64_t& offset) noexcept;
int this_rank() noexcept;

/// A block of `count` elements of `element_bytes`; a byte count that does
/// not fit in 64 bits is heap exhaustion like any other too large size.
std::uint64_t allocate_symmetric(std::size_t count, std::size_t element_bytes = 1);
void free_symmetric(std::uint64_t offset);
std::uint64_t allocate_local(std::size_t count, std::size_t element_bytes = 1);
void free_local(int rank, std::uint64_t offset);

/// copy_source: copy `src` at the call (it need not outlive the call).
future<void> put_bytes(int rank, std::uint64_t offset, const void* src, std::size_t bytes, bool copy_source);
future<void> get_bytes(int rank, std::uint64_t offset, void* dst, std::size_t bytes);

enum class atomic_type : std::uint8_t { i32, i64, u32, u64, f32, f64 };
enum class atomic_op : std::uint8_t { load, store, exchange, compare_exchange, fetch_add, fetch_min, fetch_max };
/// Applies `op` to the value at (rank, offset); the old value's bits.
future<std::uint64_t> atomic(int rank, std::uint64_t offset, atomic_type t, atomic_op op, std::uint64_t a,
                             std::uint64_t b);

enum class kind : int { put = 0, get = 1, atomic = 2 };
/// Ready when none of this rank's operations of that kind is in flight.
future<void> quiet(kind k);

/// dist_object's registry: ids in collective construction order.
std::uint64_t dist_register(void* object);
void* dist_lookup(std::uint64_t id, int from);
void dist_unregister(std::uint64_t id);

std::uint32_t lock_create();
void lock_destroy(int owner, std::uint32_t id);
future<bool> lock_acquire(int owner, std::uint32_t id, bool try_only);
void lock_release(int owner, std::uint32_t id);

template <class T>
constexpr atomic_type atomic_type_of() {
  static_assert(std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "weft atomics work on 32- and 64-bit integers, float and double");
  if constexpr (std::is_floating_point_v<T>) return sizeof(T) == 4 ? atomic_type::f32 : atomic_type::f64;
  else if constexpr (std::is_signed_v<T>) return sizeof(T) == 4 ? atomic_type::i32 : atomic_type::i64;
  else return sizeof(T) == 4 ? atomic_type::u32 : atomic_type::u64;
}
template <class T>
std::uint64_t to_bits(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

}  // namespace detail::pgas

/// A pointer into some rank's heap: (rank, byte offset). A plain value:
/// copy it, send it in remote calls, compare it. Arithmetic is in elements
/// and stays on the same rank.
template <class T>
class global_ptr {
 public:
  using element_type = T;
  global_ptr() = default;
  global_ptr(std::nullptr_t) {}
  /// The global pointer of `p`, which must point into a heap mapped in this
  /// process (e.g. from local() or ompx_alloc); null otherwise.
  static global_ptr from_local(T* p) noexcept {
    global_ptr g;
    if (!detail::pgas::locate(p, g.rank_, g.offset_)) g = global_ptr{};
    return g;
  }

  int rank() const noexcept { return rank_; }
  std::uint64_t offset() const noexcept { return offset_; }  // in bytes, from the start of the heap
  bool is_null() const noexcept { return rank_ < 0; }
  explicit operator bool() const noexcept { return !is_null(); }

  /// Whether the calling rank can address the memory directly (a rank on
  /// its node: of this process on smp, of this host on mpi, as cut by
  /// --weft:node-size).
  bool is_local() const noexcept { return local() != nullptr; }
  /// The memory's address in this process, or nullptr if it has none.
  T* local() const noexcept {
    return is_null() ? nullptr : reinterpret_cast<T*>(detail::pgas::address_of(rank_, offset_, false));
  }
  /// The same offset in `rank`'s heap: the matching symmetric block there.
  global_ptr on(int rank) const noexcept { return global_ptr(rank, offset_); }
  template <class U>
  global_ptr<U> reinterpret() const noexcept {
    return global_ptr<U>::at(rank_, offset_);
  }
  static global_ptr at(int rank, std::uint64_t offset) noexcept { return global_ptr(rank, offset); }

  global_ptr& operator+=(std::ptrdiff_t n) noexcept {
    offset_ += static_cast<std::uint64_t>(n * static_cast<std::ptrdiff_t>(sizeof(T)));
    return *this;
  }
  global_ptr& operator-=(std::ptrdiff_t n) noexcept { return *this += -n; }
  global_ptr& operator++() noexcept { return *this += 1; }
  global_ptr& operator--() noexcept { return *this -= 1; }
  global_ptr operator++(int) noexcept {
    global_ptr old = *this;
    *this += 1;
    return old;
  }
  friend global_ptr operator+(global_ptr p, std::ptrdiff_t n) noexcept { return p += n; }
  friend global_ptr operator+(std::ptrdiff_t n, global_ptr p) noexcept { return p += n; }
  friend global_ptr operator-(global_ptr p, std::ptrdiff_t n) noexcept { return p -= n; }
  /// Elements between two pointers into the same rank's heap.
  friend std::ptrdiff_t operator-(global_ptr a, global_ptr b) {
    if (a.rank_ != b.rank_) throw std::invalid_argument("weft::global_ptr: difference of pointers on different ranks");
    return (static_cast<std::ptrdiff_t>(a.offset_) - static_cast<std::ptrdiff_t>(b.offset_)) /
           static_cast<std::ptrdiff_t>(sizeof(T));
  }
  friend bool operator==(const global_ptr&, const global_ptr&) = default;
  friend auto operator<=>(const global_ptr&, const global_ptr&) = default;  // by rank, then offset

 private:
  global_ptr(int rank, std::uint64_t offset) noexcept : rank_(rank), offset_(offset) {}
  int rank_ = -1;
  std::uint64_t offset_ = 0;
};

/// `size` elements starting at `data`, on one rank.
template <class T>
struct global_span {
  global_ptr<T> data;
  std::size_t size = 0;
  global_ptr<T> operator[](std::size_t i) const noexcept { return data + static_cast<std::ptrdiff_t>(i); }
  global_span subspan(std::size_t first, std::size_t count) const {
    if (first > size || count > size - first) throw std::out_of_range("weft::global_span::subspan");
    return {data + static_cast<std::ptrdiff_t>(first), count};
  }
  global_span on(int rank) const noexcept { return {data.on(rank), size}; }
  std::span<T> local() const noexcept { return {data.local(), data.local() ? size : 0}; }
};

// ---- allocation ---------------------------------------------------------------

/// Collective: every rank calls it with the same n, in the same order of
/// collective calls; returns this rank's block, at the same offset as every
/// other rank's (`p.on(r)` is rank r's). Exhaustion ends the job (also when
/// n * sizeof(T) does not fit in 64 bits).
template <class T>
global_ptr<T> allocate_symmetric(std::size_t n = 1) {
  static_assert(std::is_trivially_copyable_v<T>, "the heap holds trivially copyable types");
  return global_ptr<T>::at(detail::pgas::this_rank(), detail::pgas::allocate_symmetric(n, sizeof(T)));
}
/// Collective: frees a block from allocate_symmetric on every rank.
template <class T>
void free_symmetric(global_ptr<T> p) {
  detail::pgas::free_symmetric(p.offset());
}
/// A block in this rank's heap that only this rank allocates (not
/// collective; any thread). Throws std::bad_alloc when the heap is full
/// (also when n * sizeof(T) does not fit in 64 bits).
template <class T>
global_ptr<T> allocate(std::size_t n = 1) {
  static_assert(std::is_trivially_copyable_v<T>, "the heap holds trivially copyable types");
  return global_ptr<T>::at(detail::pgas::this_rank(), detail::pgas::allocate_local(n, sizeof(T)));
}
/// Frees a block from allocate, on the rank that allocated it.
template <class T>
void deallocate(global_ptr<T> p) {
  detail::pgas::free_local(p.rank(), p.offset());
}

// ---- put and get --------------------------------------------------------------

template <class T>
future<void> put(global_ptr<T> dst, const T& value) {
  return detail::pgas::put_bytes(dst.rank(), dst.offset(), &value, sizeof(T), true);
}
/// `src` stays valid and unchanged until the future is ready.
template <class T>
future<void> put(global_ptr<T> dst, std::span<const T> src) {
  const std::size_t bytes = detail::pgas::bytes_of<T>("put", dst.rank(), dst.offset(), src.size());
  return detail::pgas::put_bytes(dst.rank(), dst.offset(), src.data(), bytes, false);
}
template <class T>
future<T> get(global_ptr<T> src) {
  if (const std::byte* p = detail::pgas::checked_address("get", src.rank(), src.offset(), sizeof(T))) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return make_ready_future(std::move(v));
  }
  auto box = std::make_shared<T>();
  return detail::pgas::get_bytes(src.rank(), src.offset(), box.get(), sizeof(T)).then([box](future<void> f) {
    f.get();
    return *box;
  });
}
/// `dst` stays valid and untouched until the future is ready.
template <class T>
future<void> get(global_ptr<T> src, std::span<T> dst) {
  const std::size_t bytes = detail::pgas::bytes_of<T>("get", src.rank(), src.offset(), dst.size());
  return detail::pgas::get_bytes(src.rank(), src.offset(), dst.data(), bytes);
}

/// Operations issued together, with one completion for all of them.
class transfer_batch {
 public:
  template <class T>
  transfer_batch& put(global_ptr<T> dst, std::span<const T> src) {
    return add(weft::put(dst, src));
  }
  template <class T>
  transfer_batch& put(global_ptr<T> dst, const T& value) {
    return add(weft::put(dst, value));
  }
  template <class T>
  transfer_batch& get(global_ptr<T> src, std::span<T> dst) {
    return add(weft::get(src, dst));
  }
  /// `count` blocks of `block` elements: block k goes from src + k *
  /// src_stride to dst + k * dst_stride (strides in elements), e.g. a plane
  /// of a 3-D array. Every block is checked to lie in the heap before any
  /// is issued.
  template <class T>
  transfer_batch& put_strided(global_ptr<T> dst, std::ptrdiff_t dst_stride, const T* src, std::ptrdiff_t src_stride,
                              std::size_t block, std::size_t count) {
    detail::pgas::check_strided("put_strided", dst.rank(), dst.offset(), dst_stride, block, count, sizeof(T));
    for (std::size_t k = 0; k < count; ++k) {
      const auto i = static_cast<std::ptrdiff_t>(k);
      put(dst + i * dst_stride, std::span<const T>(src + i * src_stride, block));
    }
    return *this;
  }
  template <class T>
  transfer_batch& get_strided(global_ptr<T> src, std::ptrdiff_t src_stride, T* dst, std::ptrdiff_t dst_stride,
                              std::size_t block, std::size_t count) {
    detail::pgas::check_strided("get_strided", src.rank(), src.offset(), src_stride, block, count, sizeof(T));
    for (std::size_t k = 0; k < count; ++k) {
      const auto i = static_cast<std::ptrdiff_t>(k);
      get(src + i * src_stride, std::span<T>(dst + i * dst_stride, block));
    }
    return *this;
  }
  /// Ready once every operation added so far completed. Empties the batch.
  future<void> submit() {
    if (pending_.empty()) return make_ready_future();
    return when_all(std::move(pending_)).then([](auto f) { f.get(); });
  }

 private:
  transfer_batch& add(future<void>&& f) {
    if (!f.is_ready()) pending_.push_back(std::move(f));
    return *this;
  }
  std::vector<future<void>> pending_;
};

/// Strided forms, each one completion (see transfer_batch::put_strided).
template <class T>
future<void> put_strided(global_ptr<T> dst, std::ptrdiff_t dst_stride, const T* src, std::ptrdiff_t src_stride,
                         std::size_t block, std::size_t count) {
  return transfer_batch{}.put_strided(dst, dst_stride, src, src_stride, block, count).submit();
}
template <class T>
future<void> get_strided(global_ptr<T> src, std::ptrdiff_t src_stride, T* dst, std::ptrdiff_t dst_stride,
                         std::size_t block, std::size_t count) {
  return transfer_batch{}.get_strided(src, src_stride, dst, dst_stride, block, count).submit();
}

/// Waits until none of this rank's puts (wait_puts), gets (wait_gets),
/// atomics (wait_atomics), or any of them (fence) is in flight: puts are
/// then in place at their targets. Operations other tasks of the rank start
/// meanwhile are waited for too.
void wait_puts();
void wait_gets();
void wait_atomics();
void fence();

// ---- atomics --------------------------------------------------------------------
// On 32- and 64-bit integers (all operations) and float/double (load, store,
// exchange, fetch_add). Atomic with respect to each other from every rank
// and thread, not with respect to puts to the same bytes.

namespace detail::pgas {
template <class T>
future<T> apply(global_ptr<T> p, atomic_op op, T a = T{}, T b = T{}) {
  future<std::uint64_t> old = atomic(p.rank(), p.offset(), atomic_type_of<T>(), op, to_bits(a), to_bits(b));
  if (old.is_ready()) return make_ready_future(from_bits<T>(old.get()));  // reached directly
  return old.then([](future<std::uint64_t> f) { return from_bits<T>(f.get()); });
}
}  // namespace detail::pgas
template <class T>
future<T> atomic_fetch_add(global_ptr<T> p, T v) {
  return detail::pgas::apply(p, detail::pgas::atomic_op::fetch_add, v);
}
template <class T>
future<T> atomic_fetch_min(global_ptr<T> p, T v) {
  static_assert(std::is_integral_v<T>, "fetch_min is for integers");
  return detail::pgas::apply(p, detail::pgas::atomic_op::fetch_min, v);
}
template <class T>
future<T> atomic_fetch_max(global_ptr<T> p, T v) {
  static_assert(std::is_integral_v<T>, "fetch_max is for integers");
  return detail::pgas::apply(p, detail::pgas::atomic_op::fetch_max, v);
}
template <class T>
future<T> atomic_exchange(global_ptr<T> p, T v) {
  return detail::pgas::apply(p, detail::pgas::atomic_op::exchange, v);
}
/// Stores `desired` if the value equals `expected`; returns the old value
/// either way (the exchange happened iff it equals `expected`).
template <class T>
future<T> atomic_compare_exchange(global_ptr<T> p, T expected, T desired) {
  static_assert(std::is_integral_v<T>, "compare_exchange is for integers");
  return detail::pgas::apply(p, detail::pgas::atomic_op::compare_exchange, expected, desired);
}
template <class T>
future<T> atomic_load(global_ptr<T> p) {
  return detail::pgas::apply(p, detail::pgas::atomic_op::load);
}
template <class T>
future<void> atomic_store(global_ptr<T> p, T v) {
  future<T> old = detail::pgas::apply(p, detail::pgas::atomic_op::store, v);
  if (old.is_ready()) return make_ready_future();
  return old.then([](future<T> f) { f.get(); });
}

// ---- locks ----------------------------------------------------------------------

/// A lock owned by one rank, whose queue grants it to requesters in the
/// order their requests arrive (FIFO). Held by a rank: any task or thread of
/// the holding rank may release it; a release by another rank, or a destroy
/// while held, ends the job. A plain value (send it in remote calls).
/// Releasing first waits for the releasing rank's puts and atomics, so the
/// next holder sees what was written under the lock.
class global_lock {
 public:
  global_lock() = default;
  /// A new lock owned by the calling rank.
  static global_lock create() { return global_lock(detail::pgas::this_rank(), detail::pgas::lock_create()); }
  /// Rank r's own lock (always exists; ompx_lock's).
  static global_lock of_rank(int r) noexcept { return global_lock(r, 0); }
  /// On the owner, while nobody holds it.
  void destroy() { detail::pgas::lock_destroy(owner_, id_); }

  future<void> lock_async() {
    future<bool> granted = detail::pgas::lock_acquire(owner_, id_, false);
    if (granted.is_ready()) return make_ready_future();
    return granted.then([](future<bool> f) { f.get(); });
  }
  void lock() { detail::pgas::lock_acquire(owner_, id_, false).get(); }
  /// Takes the lock if nobody holds it (asks the owner: one round trip).
  bool try_lock() { return detail::pgas::lock_acquire(owner_, id_, true).get(); }
  void unlock() { detail::pgas::lock_release(owner_, id_); }

  int owner() const noexcept { return owner_; }
  std::uint32_t id() const noexcept { return id_; }
  friend bool operator==(const global_lock&, const global_lock&) = default;

 private:
  global_lock(int owner, std::uint32_t id) noexcept : owner_(owner), id_(id) {}
  int owner_ = -1;
  std::uint32_t id_ = 0;
};

// ---- distributed containers ------------------------------------------------------

/// n elements of T over the heaps: block-distributed (element i on rank
/// i / block_size(), at the same offset of every rank's heap), or all on one
/// rank. A plain value handle like global_ptr (copy it, send it); destroy()
/// frees it (collective for a distributed vector, on the owner otherwise).
template <class T>
class global_vector {
 public:
  global_vector() = default;
  /// Collective: every rank passes the same n.
  static global_vector distributed(std::size_t n) {
    const int ranks = nranks();
    const std::size_t block = n == 0 ? 1 : (n + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
    return global_vector(allocate_symmetric<T>(block), n, block, true);
  }
  /// Not collective: all n elements in this rank's heap.
  static global_vector local(std::size_t n) { return global_vector(allocate<T>(n), n, n == 0 ? 1 : n, false); }
  void destroy() {
    if (distributed_)
      free_symmetric(base_);
    else
      deallocate(base_);
    *this = global_vector{};
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t block_size() const noexcept { return block_; }
  int owner(std::size_t i) const noexcept { return distributed_ ? static_cast<int>(i / block_) : base_.rank(); }
  /// Element i, wherever it lives.
  global_ptr<T> operator[](std::size_t i) const noexcept {
    return base_.on(owner(i)) + static_cast<std::ptrdiff_t>(distributed_ ? i % block_ : i);
  }
  /// The elements that live on this rank (empty if none).
  std::span<T> local_part() const noexcept {
    const int me = rank();
    if (!distributed_) return me == base_.rank() ? std::span<T>(base_.local(), size_) : std::span<T>{};
    const std::size_t first = static_cast<std::size_t>(me) * block_;
    if (first >= size_) return {};
    return {base_.local(), std::min(block_, size_ - first)};
  }
  /// Index of local_part()[0].
  std::size_t local_first() const noexcept { return distributed_ ? static_cast<std::size_t>(rank()) * block_ : 0; }

  /// Copies src to elements [first, first + src.size()), across owners; one
  /// completion. `src` stays valid until then.
  future<void> put(std::size_t first, std::span<const T> src) const {
    check(first, src.size());
    transfer_batch b;
    for_pieces(first, src.size(), [&](std::size_t at, std::size_t from, std::size_t n) {
      b.put((*this)[at], src.subspan(from, n));
    });
    return b.submit();
  }
  future<void> get(std::size_t first, std::span<T> dst) const {
    check(first, dst.size());
    transfer_batch b;
    for_pieces(first, dst.size(), [&](std::size_t at, std::size_t from, std::size_t n) {
      b.get((*this)[at], dst.subspan(from, n));
    });
    return b.submit();
  }

 private:
  global_vector(global_ptr<T> base, std::size_t n, std::size_t block, bool distributed)
      : base_(base), size_(n), block_(block), distributed_(distributed) {}
  void check(std::size_t first, std::size_t n) const {
    if (first > size_ || n > size_ - first)
      throw std::out_of_range("weft::global_vector: elements [" + std::to_string(first) + ", " +
                              std::to_string(first + n) + ") of " + std::to_string(size_));
  }
  /// Splits [first, first + n) at block boundaries: f(index, offset in the range, count).
  template <class F>
  void for_pieces(std::size_t first, std::size_t n, F&& f) const {
    std::size_t done = 0;
    while (done < n) {
      const std::size_t i = first + done;
      const std::size_t room = distributed_ ? block_ - i % block_ : n - done;
      const std::size_t k = std::min(room, n - done);
      f(i, done, k);
      done += k;
    }
  }
  global_ptr<T> base_;  // this rank's block (distributed) or the block
  std::size_t size_ = 0;
  std::size_t block_ = 1;
  bool distributed_ = false;
};

/// One T per rank, found by the other ranks: construct it collectively (the
/// same order of dist_object constructions on every rank); fetch(r) returns
/// a copy of rank r's. Destroyed collectively too (a barrier first, so no
/// fetch is still on its way). Not copyable or movable: peers find it by
/// the id it was given.
template <class T>
class dist_object {
 public:
  explicit dist_object(T value) : value_(std::move(value)), id_(detail::pgas::dist_register(&value_)) {
    weft::barrier();  // every rank's object exists before anyone fetches
  }
  ~dist_object() {
    weft::barrier();
    detail::pgas::dist_unregister(id_);
  }
  dist_object(const dist_object&) = delete;
  dist_object& operator=(const dist_object&) = delete;

  T& operator*() noexcept { return value_; }
  const T& operator*() const noexcept { return value_; }
  T* operator->() noexcept { return &value_; }
  const T* operator->() const noexcept { return &value_; }

  /// A copy of rank r's object (serialized; T must be serializable).
  future<T> fetch(int r) const {
    if (r == rank()) return make_ready_future(T(value_));
    return async_at(r, [](std::uint64_t id, int from) {
      return *static_cast<const T*>(detail::pgas::dist_lookup(id, from));
    }, id_, rank());
  }

 private:
  T value_;
  std::uint64_t id_;
};

}  // namespace weft
