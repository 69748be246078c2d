#include "rma/rank_state.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "runtime/runtime_state.hpp"

namespace weft::rma::detail {

namespace {

// --weft:ranks is at most 1024, and an mpi process has one rank.
constexpr int fast_slots = 1024;
std::atomic<rank_state*> g_fast[fast_slots];

// Handed down by the runtime before it starts the ranks (set_rma_settings).
rma_settings g_settings;

rma_settings read_settings() { return g_settings; }

}  // namespace

void set_rma_settings(const rma_settings& s) noexcept { g_settings = s; }

rank_state::rank_state(rank_comm& c, int local) : comm(c), local_index(local), settings(read_settings()) {}

rank_state::~rank_state() {
  // Unpublish, so a later runtime in this process never sees a freed state.
  if (local_index >= 0 && local_index < fast_slots) {
    rank_state* self = this;
    g_fast[local_index].compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
  }
}

rank_state& state_of(rank_comm& c) {
  const int local = c.rank - weft::detail::runtime_state()->first_rank;
  const bool fast = local >= 0 && local < fast_slots;
  if (fast) {
    rank_state* s = g_fast[local].load(std::memory_order_acquire);
    if (s != nullptr && &s->comm == &c) return *s;
  }
  std::lock_guard lock(c.rma_mutex);
  if (!c.rma) {
    auto s = std::make_shared<rank_state>(c, local);
    c.rma = s;
    if (fast) g_fast[local].store(s.get(), std::memory_order_release);
  }
  return *static_cast<rank_state*>(c.rma.get());
}

rank_comm* in_process_comm(int r) noexcept {
  auto* rt = weft::detail::runtime_state();
  const int local = r - rt->first_rank;
  if (local < 0 || local >= static_cast<int>(rt->comms.size())) return nullptr;
  return rt->comms[static_cast<std::size_t>(local)].get();
}

}  // namespace weft::rma::detail
