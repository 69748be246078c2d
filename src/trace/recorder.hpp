// Internal: the timeline recorder behind --weft:trace. Each thread records
// into a buffer of its own (fixed-size records, no lock on the hot path);
// names and JSON are made only when the file is written (control.hpp).
//
// Every hook is an inline relaxed load of `enabled` and a call that is not
// inlined: with tracing off an event costs one predictable branch.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include "trace/clock.hpp"

namespace weft::trace {

/// True while the recorder runs. Set before the workers start, cleared after
/// they stopped (or on a failure path); atomic because a progress thread
/// may already run when it is set. Relaxed loads: a plain load on x86.
inline std::atomic<bool> enabled{false};
/// The test every hook makes first.
inline bool on() noexcept { return enabled.load(std::memory_order_relaxed); }

/// What a task interval ran, when no function names it.
enum class kind : std::uint8_t { task, remote_call, forked_task, stolen_task, target_kernel, collective };

/// What the running interval is: its kind and, where known, a code address
/// naming it (a function the writer resolves with dladdr).
struct label {
  const void* fn = nullptr;
  kind what = kind::task;
};

/// The type of a record.
enum class record_type : std::uint8_t { interval, send, receive, steal };

/// One event (40 bytes); times in ticks (clock.hpp). Interval: [t, t + dur), `a` = label fn, `what` =
/// label kind. Send / receive: the message's handler in `what`, `a` = its
/// content key (pairs sends with receives), `b` = bytes, `peer` = the other
/// rank, [t, t + dur) = time spent in the send call or in the dispatch.
/// Steal: `peer` = victim rank, `b` = victim worker.
struct record {
  std::uint64_t t;
  std::uint64_t dur;
  std::uint64_t a;
  std::uint64_t b;
  std::int32_t peer;
  record_type type;
  std::uint8_t what;
  std::uint16_t unused;
};
static_assert(sizeof(record) == 40);

/// Who the calling thread is: its rank and worker index (worker < 0: not a
/// worker). Installed by the scheduler; the recorder asks once per thread.
inline void (*identify_thread)(int& rank, int& worker) noexcept = nullptr;

/// Names of the message kinds (handler ids) other than calls and replies,
/// for the file (am fills it as layers register their handlers).
inline const char* message_kind_names[256] = {};

namespace impl {
void begin(label l) noexcept;
label end() noexcept;
void name_running(kind k, const void* fn) noexcept;
void name_this_interval(kind k) noexcept;
void comm(record_type type, int peer, std::uint8_t what, std::uint64_t key, std::uint64_t bytes, std::uint64_t t0) noexcept;
void steal(int victim_rank, int victim_worker) noexcept;
}  // namespace impl

/// A task interval starts on the calling thread (a fresh task: no label
/// yet; a resumed one: the label its suspension returned).
inline void interval_begin(label l = {}) noexcept {
  if (on()) [[unlikely]]
    impl::begin(l);
}
/// The calling thread's interval ends; returns its label, for a resumption.
inline label interval_end() noexcept {
  if (on()) [[unlikely]]
    return impl::end();
  return {};
}
/// Names the interval running on the calling thread (a layer's task says
/// what it is at its start).
inline void name_running(kind k, const void* fn = nullptr) noexcept {
  if (on()) [[unlikely]]
    impl::name_running(k, fn);
}
/// Names only the interval running on the calling thread: the task's next
/// interval (after a suspension) carries the label from before. For code a
/// task may or may not have been started for (a collective's steps run as
/// their own task, or inside the caller's).
inline void name_this_interval(kind k) noexcept {
  if (on()) [[unlikely]]
    impl::name_this_interval(k);
}
/// A steal of a task from worker `victim_worker` of rank `victim_rank`; the
/// next task interval of the calling thread is that task's.
inline void stolen_from(int victim_rank, int victim_worker) noexcept {
  if (on()) [[unlikely]]
    impl::steal(victim_rank, victim_worker);
}

/// What a message scope records: describe() returns {key, bytes, handler}.
struct message_info {
  std::uint64_t key;
  std::uint64_t bytes;
  std::uint8_t handler;
};

/// Times a send or a receive for as long as it lives. `describe` is called
/// only when tracing is on, before the message is moved.
class message_scope {
 public:
  template <class Describe>
  message_scope(record_type type, int peer, Describe&& describe) noexcept {
    if (on()) [[unlikely]] {
      info_ = describe();
      type_ = type;
      peer_ = peer;
      t0_ = ticks();
    }
  }
  ~message_scope() {
    if (t0_ != 0) [[unlikely]]
      impl::comm(type_, peer_, info_.handler, info_.key, info_.bytes, t0_);
  }
  message_scope(const message_scope&) = delete;
  message_scope& operator=(const message_scope&) = delete;

 private:
  std::uint64_t t0_ = 0;
  message_info info_{};
  record_type type_ = record_type::send;
  int peer_ = 0;
};

/// Mixes bytes into a 64-bit key (FNV-1a), for message keys.
inline std::uint64_t mix_bytes(std::uint64_t h, const void* p, std::size_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace weft::trace
