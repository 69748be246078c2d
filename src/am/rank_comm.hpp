// Internal: one rank's communication context — its transport, its scheduler,
// the message counters that finalize uses to detect global quiescence, and
// the per-rank state of the layers above am (layer_state.hpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "am/handlers.hpp"
#include "am/layer_state.hpp"
#include "am/message.hpp"
#include "sched/scheduler.hpp"
#include "trace/recorder.hpp"

namespace weft::detail {

/// What the trace records of a message: its size, and a key of its content
/// that the receiver computes alike (the trace pairs sends with receives by
/// it; trace/writer.cpp says how). The header holds what tells messages
/// apart (reply tokens, addresses); the first body bytes, the arguments.
inline trace::message_info trace_info(const am_message& m) noexcept {
  const auto header = m.header_bytes();
  const auto body = m.body_bytes();
  std::uint64_t bytes = header.size() + body.size();
  for (std::size_t i = 0; i < m.bulk_count(); ++i) bytes += m.bulk_segment(i).size();
  std::uint64_t key = trace::mix_bytes(0xcbf29ce484222325ull, &m.handler, 1);
  key = trace::mix_bytes(key, header.data(), header.size());
  key = trace::mix_bytes(key, &bytes, sizeof bytes);
  key = trace::mix_bytes(key, body.data(), body.size() < 32 ? body.size() : 32);
  return {key, bytes, static_cast<std::uint8_t>(m.handler)};
}

struct rank_comm {
  /// Also makes the context findable by in_process_comm(r) while it lives.
  rank_comm(int r, int n, scheduler* s);
  ~rank_comm();
  rank_comm(const rank_comm&) = delete;
  rank_comm& operator=(const rank_comm&) = delete;
  int rank;
  int nranks;
  scheduler* sched;
  am_transport* transport = nullptr;
  // Messages sent by threads that are not this rank's workers (its workers
  // count theirs in worker::messages_sent); the handled side is counted by
  // the transport per delivered batch (am_transport::handled).
  std::atomic<std::uint64_t> sent_off_worker{0};

  /// Hands `m` to the transport, counted for quiescence (inline: it is on
  /// every message's path).
  void send(int dest, am_message&& m) {
    if (dest < 0 || dest >= nranks) [[unlikely]]
      no_such_rank(dest);
    m.source = rank;
    const trace::message_scope traced(trace::record_type::send, dest, [&] { return trace_info(m); });
    if (worker* w = current_worker(); w != nullptr && w->sched == sched)
      w->messages_sent.inc();
    else
      sent_off_worker.fetch_add(1, std::memory_order_release);
    transport->send(dest, std::move(m));
  }
  [[noreturn, gnu::cold]] void no_such_rank(int dest) const;
  /// Messages this rank has sent so far (for the quiescence check; read
  /// after the handled counts, so a message counted there is counted here).
  std::uint64_t sent() const noexcept {
    return sent_off_worker.load(std::memory_order_acquire) + sched->messages_sent_by_workers();
  }
  std::uint64_t handled() const noexcept { return transport->handled.load(std::memory_order_acquire); }

  /// The layers' per-rank state (use layer_state<S>).
  layer_state_slots layers;
};

/// The state of type S that a layer keeps for rank `c`, made by S(c) on
/// first use. One acquire load once it exists.
template <class S>
S& layer_state(rank_comm& c) {
  static_assert(std::is_constructible_v<S, rank_comm&>, "a layer's state is constructed from its rank_comm");
  static const std::size_t slot = layer_state_slots::new_slot();
  if (void* s = c.layers.find(slot)) [[likely]]
    return *static_cast<S*>(s);
  void* s = c.layers.create(
      slot, c, [](rank_comm& rc) -> void* { return new S(rc); }, [](void* p) { delete static_cast<S*>(p); });
  return *static_cast<S*>(s);
}

/// The context of global rank `r` if that rank lives in this process, else
/// nullptr (`r` must be a valid rank). Lock-free; for the layers that reach
/// in-process ranks directly (rma).
rank_comm* in_process_comm(int r) noexcept;

/// The calling thread's rank context; ends the job with a clear message if
/// there is none (no runtime).
rank_comm& current_comm();

/// Entry point for every message arriving at a rank (runs inside progress).
void am_dispatch(void* rank_ctx, am_message&& m);

/// Sends a message for handler `h` to `dest`: a fixed, trivially copyable
/// protocol header plus an optional serialized body (whose bulk views point
/// into what `keep` owns until the transport is done with them).
template <class H>
[[gnu::always_inline]] inline void send_am(rank_comm& c, int dest, am_handler h, const H& header,
                                           serialization::message&& body = {}, serialization::owner&& keep = {}) {
  static_assert(std::is_trivially_copyable_v<H> && sizeof(H) <= am_header_capacity);
  am_message m;
  m.handler = h;
  m.set_header(&header, sizeof(H));
  m.set_body(std::move(body), std::move(keep));
  c.send(dest, std::move(m));
}

/// The protocol header of `m` as H. A header of the wrong size (a truncated
/// or foreign message) ends the job naming the sender.
template <class H>
H am_header(const am_message& m, const char* what) {
  static_assert(std::is_trivially_copyable_v<H> && sizeof(H) <= am_header_capacity);
  const auto bytes = m.header_bytes();
  if (bytes.size() != sizeof(H)) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "truncated %s message from rank %d (%zu header bytes, expected %zu)", what,
                  m.source, bytes.size(), sizeof(H));
    fatal_handler(msg);
    std::abort();
  }
  H h;
  std::memcpy(&h, bytes.data(), sizeof(H));
  return h;
}

}  // namespace weft::detail
