#include "pgas/one_sided_heap.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "pgas/mcs_lock.hpp"
#include "pgas/options.hpp"
#include "pgas/state.hpp"
#include "runtime/runtime_state.hpp"

namespace weft::pgas::detail {

namespace {

/// Zeroed memory for one rank's lock words, unmapped when dropped.
struct words_mapping {
  explicit words_mapping(std::size_t n) : bytes(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail("cannot map " + std::to_string(n) + " bytes of lock words: " + std::strerror(errno));
    base = static_cast<std::uint64_t*>(p);
  }
  ~words_mapping() { munmap(base, bytes); }
  words_mapping(const words_mapping&) = delete;
  words_mapping& operator=(const words_mapping&) = delete;
  std::uint64_t* base = nullptr;
  std::size_t bytes = 0;
};

/// This process's one-sided view of the job, rebuilt at every start.
struct one_sided_state {
  int first_rank = 0;
  std::vector<weft::detail::one_sided_ops*> ops;  // by local rank; empty: none
  std::uint64_t heap_key = 0;
  std::uint64_t words_key = 0;
  std::vector<std::unique_ptr<words_mapping>> words;  // by local rank
  bool locks = false;
};

one_sided_state g_state;
std::atomic<std::uint64_t> g_issued{0};

int local_index(int rank) noexcept {
  const int i = rank - g_state.first_rank;
  return i >= 0 && i < static_cast<int>(g_state.ops.size()) ? i : -1;
}

/// --weft:pgas-one-sided=0 keeps every unmapped access on messages (to
/// compare the paths); it must be the same on every process of the job.
bool wanted() noexcept { return pgas_options().one_sided; }

}  // namespace

one_sided_heap heap_one_sided(int rank) noexcept {
  if (g_state.ops.empty()) return {nullptr, 0};
  const int i = local_index(rank);
  return {g_state.ops[static_cast<std::size_t>(i < 0 ? 0 : i)], g_state.heap_key};
}

one_sided_heap my_heap_one_sided() noexcept {
  if (g_state.ops.empty()) return {nullptr, 0};
  return heap_one_sided(current_comm().rank);
}

one_sided_words my_lock_words() noexcept {
  if (g_state.ops.empty()) return {nullptr, 0};
  const int i = local_index(current_comm().rank);
  return {g_state.ops[static_cast<std::size_t>(i < 0 ? 0 : i)], g_state.words_key};
}

std::uint64_t* lock_words_of(int rank) noexcept {
  const int i = local_index(rank);
  return i < 0 || g_state.words.empty() ? nullptr : g_state.words[static_cast<std::size_t>(i)]->base;
}

bool one_sided_locks() noexcept { return g_state.locks; }

void count_one_sided(std::uint64_t n) noexcept { g_issued.fetch_add(n, std::memory_order_relaxed); }
std::uint64_t one_sided_issued() noexcept { return g_issued.load(std::memory_order_relaxed); }

void register_one_sided(process_pgas& p, weft::detail::process_runtime& rt) {
  g_state = one_sided_state{};
  g_state.first_rank = p.first_rank;
  if (!wanted()) return;
  std::vector<weft::detail::one_sided_ops*> ops;
  for (auto& t : rt.transports) ops.push_back(t->one_sided());
  // Every process runs the same backend: all of them have the operations,
  // or none has. Operations the target must serve are not taken
  // (one_sided_ops::target_passive).
  if (ops.empty() || ops[0] == nullptr || !ops[0]->target_passive()) return;
  // The ranks of this process register one after the other, in the same
  // order as every other rank: heap first, then lock words.
  mcs::reset(ops.size());
  std::vector<std::unique_ptr<words_mapping>> words;
  std::uint64_t heap_key = 0, words_key = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::uint64_t h = ops[i]->register_region(p.local[i]->base, p.segment);
    words.push_back(std::make_unique<words_mapping>(mcs::region_bytes));
    const std::uint64_t w = ops[i]->register_region(words.back()->base, mcs::region_bytes);
    if (i == 0) {
      heap_key = h;
      words_key = w;
    } else if (h != heap_key || w != words_key) {
      fail("the ranks of one process registered their heaps under different one-sided keys");
    }
  }
  bool all_mapped = !p.views_by_rank;  // with ranks of several nodes here, some views serve only their node
  for (int r = 0; r < p.nranks && all_mapped; ++r) all_mapped = p.views[static_cast<std::size_t>(r)] != nullptr;
  g_state.ops = std::move(ops);
  g_state.heap_key = heap_key;
  g_state.words_key = words_key;
  g_state.words = std::move(words);
  g_state.locks = !all_mapped;
}

}  // namespace weft::pgas::detail
