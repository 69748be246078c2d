#include "pgas/state.hpp"

#include <cstdio>
#include <cstdlib>

#include "pgas/heap_mapping.hpp"
#include "pgas/one_sided_heap.hpp"
#include "pgas/options.hpp"
#include "rma/rank_state.hpp"
#include "runtime/layer_hooks.hpp"
#include "runtime/runtime_state.hpp"

namespace weft::pgas::detail {

namespace {
std::unique_ptr<process_pgas> g_pgas;
}

process_pgas& process() {
  if (!g_pgas) {
    std::fputs("weft: pgas call outside a running weft runtime\n", stderr);
    std::abort();
  }
  return *g_pgas;
}

rank_comm& current_comm() { return weft::detail::current_comm(); }

rank_pgas& current() {
  process_pgas& p = process();
  const int local = current_comm().rank - p.first_rank;
  return *p.local[static_cast<std::size_t>(local)];
}

rank_pgas* in_process(int r) noexcept {
  if (!g_pgas) return nullptr;
  const int local = r - g_pgas->first_rank;
  if (local < 0 || local >= static_cast<int>(g_pgas->local.size())) return nullptr;
  return g_pgas->local[static_cast<std::size_t>(local)].get();
}

rank_pgas* caller_state() noexcept {
  auto* s = static_cast<weft::detail::scheduler*>(weft::detail::current_scheduler());
  if (s == nullptr || s->comm == nullptr) return nullptr;
  return in_process(static_cast<rank_comm*>(s->comm)->rank);
}

void fail(const std::string& text) noexcept {
  const std::string line = "pgas " + text;
  weft::detail::fatal_handler(line.c_str());
  std::abort();
}

}  // namespace weft::pgas::detail

namespace weft::detail {

namespace {
/// Whether some ranks of this process are on different nodes.
bool splits_process(const process_runtime& rt) {
  for (std::size_t i = 0; i < rt.transports.size(); ++i)
    for (std::size_t j = 0; j < rt.local.size(); ++j)
      if (!rt.transports[i]->same_node(rt.first_rank + static_cast<int>(j))) return true;
  return false;
}

void pgas_start(process_runtime& rt) {
  using namespace weft::pgas::detail;
  auto p = std::make_unique<process_pgas>();
  const pgas_option_values& o = pgas_options();
  p->segment = o.segment;
  p->views_by_rank = splits_process(rt);
  p->cache = {o.cache_block, o.cache_sub_block, o.cache_size, o.cache == "always"};
  p->first_rank = rt.first_rank;
  p->nranks = rt.world_size;
  p->views.assign(static_cast<std::size_t>(rt.world_size), nullptr);
  for (std::size_t i = 0; i < rt.local.size(); ++i)
    p->local.push_back(std::make_unique<rank_pgas>(rt.first_rank + static_cast<int>(i), p->segment));
  for (auto& r : p->local) r->cache = std::make_unique<software_cache>(r->rank, p->cache, p->segment);
  if (p->views_by_rank)
    for (std::size_t i = 0; i < rt.local.size(); ++i) {
      rank_pgas& r = *p->local[i];
      r.on_node.resize(static_cast<std::size_t>(rt.world_size));
      for (int k = 0; k < rt.world_size; ++k) r.on_node[static_cast<std::size_t>(k)] = rt.transports[i]->same_node(k);
    }
  g_pgas = std::move(p);  // fail() below may name the rank
  check_cache_config(g_pgas->cache);
  // Ranks in other processes of this node map the heaps they share; in
  // one process every rank's heap is mapped, and view() shows it only to
  // the ranks on its node.
  const bool shared = rt.transports[0]->node_shared_memory();
  if (shared)
    map_own_shared_heap(*g_pgas, rt);
  else
    map_private_heaps(*g_pgas);
  // Reachable by messages before any other rank can know the heap exists.
  for (std::size_t i = 0; i < rt.local.size(); ++i) {
    rank_pgas& r = *g_pgas->local[i];
    r.base = g_pgas->views[static_cast<std::size_t>(r.rank)];
    weft::rma::detail::state_of(*rt.comms[i]).segments.set_heap(r.base, g_pgas->segment);
  }
  if (shared) map_node_peers(*g_pgas, rt);
  register_one_sided(*g_pgas, rt);  // collective, like the mapping
}
}  // namespace

namespace {
void pgas_stop(process_runtime&) {
  using namespace weft::pgas::detail;
  if (!g_pgas) return;
  for (auto& r : g_pgas->local) check_cache_at_end(*r);
  unmap_heaps(*g_pgas);
  g_pgas.reset();
}
}  // namespace

const bool pgas_hooks = register_layer_hooks("pgas", &pgas_start, &pgas_stop);

}  // namespace weft::detail
