// Internal: one active message as am and the layers above it see it. In-process (smp) it travels by move, so large arguments are never
// copied; over MPI it is flattened into one buffer and rebuilt on arrival.
//
// Layout: a small message (the common case: a remote call with a few scalar
// arguments, a reply, an ack) lives entirely inside the object — protocol
// header and body bytes inline, one cache line with the ring's sequence
// word — so sending and receiving it allocates nothing and moves one line
// between cores. Heap allocation on one thread
// and release on another (sender vs receiver) would be the largest single
// cost of the smp message path. Larger bodies, bulk segments and the owner that
// keeps their memory alive go to one out-of-line block.
#pragma once
#include <cstddef>
#include <cstdint>
#include <atomic>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "am/transport.hpp"  // users of messages see the transport contract too
#include "weft/serialize.hpp"
#include "weft/detail/task_alloc.hpp"

namespace weft::detail {

/// Which handler a message is for: am's own remote calls and replies, or a
/// layer's id registered in the handler table (am/handlers.hpp).
enum class am_handler : std::uint8_t { call = 1, reply = 2 };

struct am_out_of_line;

/// Where a message's out-of-line block goes when the receiver is done with
/// it: back to the thread that allocated it, which frees it (smp backend).
/// glibc's malloc locks the allocating thread's arena to free a chunk of
/// over 1 KiB from another thread; with messages flowing both ways the two
/// threads then fight over both arena locks and sleep in futex calls
/// (docs/DISTRIBUTED.md, "smp backend", has the cost). Lock-free: receivers
/// push, the owner takes the whole list at once.
class am_return_channel {
 public:
  am_return_channel() = default;
  am_return_channel(const am_return_channel&) = delete;
  am_return_channel& operator=(const am_return_channel&) = delete;
  ~am_return_channel() { free_all(); }
  void push(am_out_of_line* b) noexcept;
  /// Whether anything came back and is not freed yet.
  bool holding() const noexcept { return head_.load(std::memory_order_acquire) != nullptr; }
  /// Owner: frees what came back (one load when nothing did).
  void free_all() noexcept {
    if (head_.load(std::memory_order_relaxed) != nullptr) free_list(head_.exchange(nullptr, std::memory_order_acquire));
  }

 private:
  static void free_list(am_out_of_line* b) noexcept;
  std::atomic<am_out_of_line*> head_{nullptr};
};

/// What does not fit inline in a message. From weft's task allocator: it is
/// often freed on another thread than the one that made it, which that
/// allocator handles without locks.
///
/// A body of up to copied_body_limit bytes lives in the same block, right
/// after the object (its "tail"): one allocation per message instead of the
/// block plus a std::vector's heap buffer, on the sender and again on the
/// receiver: the vector's malloc and free were most of what a body just
/// past the inline area cost (docs/DISTRIBUTED.md, "Small bodies need no
/// allocation of their own"). Larger bodies,
/// and bodies received in pieces, use `bytes`.
struct am_out_of_line : pooled {
  std::vector<std::byte> bytes;                      // body bytes, unless in the tail
  std::vector<std::span<const std::byte>> bulk;      // zero-copy views of large payloads
  serialization::owner keep;                         // what `bulk` points into
  am_return_channel* home = nullptr;                 // set: freed by its allocating thread
  am_out_of_line* next_returned = nullptr;           // in `home`'s list
  std::uint32_t tail_size = 0;                       // non-zero: the body is the tail

  using pooled::operator new;
  using pooled::operator delete;
  /// `new (n) am_out_of_line`: a block with room for an n-byte tail.
  static void* operator new(std::size_t size, std::size_t tail) { return task_alloc(size + tail); }
  static void operator delete(void* p, std::size_t) noexcept { task_free(p); }

  /// A block whose body is a copy of [p, p + n), stored in its tail.
  static am_out_of_line* with_tail_copy(const std::byte* p, std::size_t n) {
    auto* b = new (n) am_out_of_line;
    if (n != 0) std::memcpy(b->tail(), p, n);
    b->tail_size = static_cast<std::uint32_t>(n);
    return b;
  }
  std::span<const std::byte> body() const noexcept {
    if (tail_size != 0) return {tail(), tail_size};
    return bytes;
  }

 private:
  std::byte* tail() noexcept { return reinterpret_cast<std::byte*>(this + 1); }
  const std::byte* tail() const noexcept { return reinterpret_cast<const std::byte*>(this + 1); }
};

/// Frees an out-of-line block, or sends it home to be freed there.
struct am_out_of_line_release {
  void operator()(am_out_of_line* b) const noexcept {
    if (b->home != nullptr)
      b->home->push(b);
    else
      delete b;
  }
};

inline void am_return_channel::push(am_out_of_line* b) noexcept {
  b->next_returned = head_.load(std::memory_order_relaxed);
  while (!head_.compare_exchange_weak(b->next_returned, b, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

inline void am_return_channel::free_list(am_out_of_line* b) noexcept {
  while (b != nullptr) {
    am_out_of_line* next = b->next_returned;
    delete b;
    b = next;
  }
}

/// Largest fixed protocol header a message carries.
inline constexpr std::size_t am_header_capacity = 32;
/// Inline room for header plus body: with the ring's sequence word a small
/// message fills exactly one cache line.
inline constexpr std::size_t am_inline_capacity = 40;
/// Out-of-line bodies up to this size are copied out of the serialization
/// buffer (which the sender then reuses) rather than taking it along.
inline constexpr std::size_t copied_body_limit = 1024;

class am_message {
 public:
  int source = -1;
  am_handler handler = am_handler::call;

 private:
  std::uint8_t header_size_ = 0;
  std::uint8_t body_size_ = 0;  // inline body bytes (when `large_` is null)

 public:
  using out_of_line = am_out_of_line;

  /// The message as plain bytes, for a ring slot: moving a message in and
  /// out of a slot through this form writes nothing back into the slot on
  /// the way out (a move would reset the slot's pointer), so a consumer only
  /// reads the lines it takes messages from.
  struct raw {
    int source;
    am_handler handler;
    std::uint8_t header_size, body_size;
    out_of_line* large;
    std::byte inline_bytes[am_inline_capacity];
  };
  /// Moves the contents out (this message is left empty).
  void release_to(raw& r) noexcept {
    r.source = source;
    r.handler = handler;
    r.header_size = header_size_;
    r.body_size = body_size_;
    r.large = large_.release();
    std::memcpy(r.inline_bytes, inline_, sizeof inline_);
  }
  /// Takes over what release_to stored in `r` (`r` is not changed).
  static am_message adopt(const raw& r) noexcept {
    am_message m;
    m.source = r.source;
    m.handler = r.handler;
    m.header_size_ = r.header_size;
    m.body_size_ = r.body_size;
    m.large_.reset(r.large);
    std::memcpy(m.inline_, r.inline_bytes, sizeof m.inline_);
    return m;
  }

  void set_header(const void* h, std::size_t n) noexcept {  // n <= am_header_capacity; before the body
    header_size_ = static_cast<std::uint8_t>(n);
    if (n != 0) std::memcpy(inline_, h, n);  // an empty header may come as a null pointer
  }
  std::span<const std::byte> header_bytes() const noexcept { return {inline_, header_size_}; }

  /// Stores a serialized body: small ones inline, up to copied_body_limit
  /// copied; either way the writer's buffer stays in `body` for the caller
  /// to reuse. Larger bodies take the buffer along.
  void set_body(serialization::message&& body, serialization::owner&& keep) {
    if (body.bulk.empty() && !keep && fits_inline(body.bytes.size())) [[likely]] {
      set_inline_body(body.bytes.data(), body.bytes.size());
      return;
    }
    set_large_body(std::move(body), std::move(keep));
  }
  [[gnu::noinline]] void set_large_body(serialization::message&& body, serialization::owner&& keep) {
    if (body.bytes.size() <= copied_body_limit) {
      // A copy in the block's tail; the writer's buffer stays with the
      // caller, who serializes the next call into it (taking it along cost
      // two allocations per message as the next writer grew a fresh buffer).
      large_.reset(out_of_line::with_tail_copy(body.bytes.data(), body.bytes.size()));
    } else {
      large_.reset(new out_of_line);
      large_->bytes = std::move(body.bytes);
    }
    large_->bulk = std::move(body.bulk);
    large_->keep = std::move(keep);
  }
  /// Stores received body bytes (copied inline when small).
  void set_body_bytes(const std::byte* p, std::size_t n) {
    if (fits_inline(n)) {
      set_inline_body(p, n);
      return;
    }
    large_.reset(n <= copied_body_limit ? out_of_line::with_tail_copy(p, n) : vector_body_copy(p, n));
  }
  /// The out-of-line block, created on first use (receivers of bulk data;
  /// one receiving a body apart fills `bytes` itself, its inline body is
  /// empty).
  out_of_line& spill() {
    if (!large_) {
      const auto inline_bytes = body_bytes();
      large_.reset(out_of_line::with_tail_copy(inline_bytes.data(), inline_bytes.size()));
      body_size_ = 0;
    }
    return *large_;
  }

  std::span<const std::byte> body_bytes() const noexcept {
    if (large_) return large_->body();
    return {inline_ + header_size_, body_size_};
  }
  /// Moves the body bytes out (collective payloads).
  std::vector<std::byte> take_body_bytes() {
    if (large_ && large_->tail_size == 0) return std::move(large_->bytes);
    const auto b = body_bytes();
    return std::vector<std::byte>(b.begin(), b.end());
  }

  /// Bulk segment i of the body: on the sender a view into the arguments,
  /// on the receiver into the transport's receive block (or, in-process,
  /// still into the sender's arguments); `keep` owns the memory either way.
  std::size_t bulk_count() const noexcept { return large_ ? large_->bulk.size() : 0; }
  std::span<const std::byte> bulk_segment(std::size_t i) const noexcept { return large_->bulk[i]; }

  bool has_out_of_line() const noexcept { return large_ != nullptr; }
  /// Has the out-of-line block freed by the thread owning `home` when the
  /// message is done with (see am_return_channel), if it holds memory of a
  /// size glibc frees under the arena lock. Small blocks are freed where
  /// they end (the thread cache takes them): sending those home costs a
  /// contended cache line per message (docs/DISTRIBUTED.md, "smp backend").
  void return_out_of_line_to(am_return_channel* home) noexcept {
    // Bodies up to copied_body_limit were copied at their size (set_body):
    // only a larger one holds a big buffer.
    if (large_ && (large_->keep || !large_->bulk.empty() || large_->body().size() > copied_body_limit))
      large_->home = home;
  }

  /// A reader over the body. Values that can alias the bulk memory
  /// (weft::buffer) take a share of `keep` rather than copying.
  serialization::reader reader() {
    if (!large_) return serialization::reader(body_bytes());
    serialization::reader r(large_->body(), large_->bulk);
    r.share_bulk_owner(&large_->keep);
    return r;
  }

 private:
  bool fits_inline(std::size_t n) const noexcept { return header_size_ + n <= am_inline_capacity; }
  static out_of_line* vector_body_copy(const std::byte* p, std::size_t n) {
    auto* b = new out_of_line;
    b->bytes.assign(p, p + n);
    return b;
  }
  void set_inline_body(const std::byte* p, std::size_t n) noexcept {
    body_size_ = static_cast<std::uint8_t>(n);
    copy_words(inline_ + header_size_, p, n);
  }
  // Copies n <= am_inline_capacity bytes in 8-byte words (the last one
  // overlapping the one before when n is not a multiple of 8). The writer
  // just stored these bytes 8 at a time, and a wider load across two of
  // those stores cannot be forwarded from the store buffer: it waits until
  // they reach the cache, behind the sender's stores to ring slots whose
  // lines are still on the receiver's core (memcpy's 16-byte load here was
  // the hottest instruction of the smp send path; docs/BENCHMARKS.md).
  static void copy_words(std::byte* d, const std::byte* p, std::size_t n) noexcept {
    if (n >= 8) {
      std::size_t i = 0;
      for (; i + 8 < n; i += 8) store_word(d + i, load_word(p + i));
      store_word(d + n - 8, load_word(p + n - 8));
    } else {
      for (std::size_t i = 0; i < n; ++i) d[i] = p[i];
    }
  }
  static std::uint64_t load_word(const std::byte* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static void store_word(std::byte* d, std::uint64_t v) noexcept { std::memcpy(d, &v, 8); }

  std::unique_ptr<out_of_line, am_out_of_line_release> large_;
  std::byte inline_[am_inline_capacity];  // header, then a small body
};
static_assert(sizeof(am_message) == 56, "a small message plus the ring's sequence word fills one cache line");
static_assert(sizeof(am_message::raw) == 56 && std::is_trivially_copyable_v<am_message::raw>);

}  // namespace weft::detail
