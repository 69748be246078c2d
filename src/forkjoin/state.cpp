// The forkjoin layer's per-rank state, its settings, and making the deques.
#include "forkjoin/state.hpp"

#include "forkjoin/options.hpp"

#include <chrono>
#include <cstring>

#include "runtime/runtime_state.hpp"
#include "weft/coll.hpp"
#include "weft/forkjoin.hpp"
#include "weft/pgas.hpp"

namespace weft::detail::fj {

fj_rank::fj_rank(rank_comm& c) : comm(c), rank(c.rank) {}

fj_rank& current_rank() { return state_of(current_comm()); }

const settings& options() noexcept {
  static const settings s = [] {
    settings r;
    if (runtime_state() != nullptr) {
#ifdef NDEBUG
      r.checks = forkjoin_options().checks == "on";
#else
      r.checks = forkjoin_options().checks != "off";
#endif
    }
    return r;
  }();
  return s;
}

void fail(int rank, const std::string& text) noexcept {
  const std::string msg = "forkjoin: rank " + std::to_string(rank) + ": " + text;
  fatal_handler(msg.c_str());
  std::abort();
}

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void make_deques(fj_rank& me) {
  // Sized for the most workers of any rank: the block is symmetric.
  const int most = weft::allreduce(weft::num_threads(), [](int a, int b) { return a > b ? a : b; });
  me.deques_offset = detail::pgas::allocate_symmetric(deque_set::bytes_for(most));
  void* at = detail::pgas::address_of(me.rank, me.deques_offset, false);
  std::memset(at, 0, deque_set::bytes_for(most));
  me.mine = deque_set::make(at, weft::num_threads());
  // A rank whose deques this rank maps shares its node (the transport's
  // same_node, --weft:node-size included, decides what pgas maps): stolen
  // from in shared memory; every other rank by message.
  for (int r = 0; r < me.comm.nranks; ++r) {
    if (r == me.rank) continue;
    if (detail::pgas::address_of(r, me.deques_offset, false) != nullptr) me.node_victims.push_back(r);
    else me.remote_victims.push_back(r);
  }
  weft::barrier();  // every rank's deques exist before anyone steals
  me.ready.store(true, std::memory_order_release);
}

}  // namespace weft::detail::fj

namespace weft {

steal_statistics steal_stats() {
  const detail::fj::counters& c = detail::fj::current_rank().stats;
  steal_statistics s;
  s.from_node = c.from_node.load(std::memory_order_relaxed);
  s.from_remote = c.from_remote.load(std::memory_order_relaxed);
  s.from_siblings = c.from_siblings.load(std::memory_order_relaxed);
  s.failed = c.failed.load(std::memory_order_relaxed);
  // Timed samples scaled to all attempts.
  auto scaled = [](const std::atomic<std::uint64_t>& ns, const std::atomic<std::uint64_t>& timed, std::uint64_t all) {
    const std::uint64_t n = timed.load(std::memory_order_relaxed);
    return n == 0 ? 0 : static_cast<std::uint64_t>(static_cast<double>(ns.load(std::memory_order_relaxed)) / n * all);
  };
  s.node_steal_ns = scaled(c.node_ns, c.node_timed, s.from_node);
  s.failed_steal_ns = scaled(c.failed_ns, c.failed_timed, s.failed);
  s.remote_steal_ns = c.remote_ns.load(std::memory_order_relaxed);
  return s;
}

void reset_steal_statistics() {
  detail::fj::counters& c = detail::fj::current_rank().stats;
  for (auto* a : {&c.from_node, &c.from_remote, &c.from_siblings, &c.failed, &c.node_timed, &c.node_ns, &c.failed_timed,
                  &c.failed_ns, &c.remote_ns})
    a->store(0, std::memory_order_relaxed);
}

}  // namespace weft
