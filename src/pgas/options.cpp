// pgas's --weft: options (options.hpp).
#include "pgas/options.hpp"

#include "runtime/option_registry.hpp"

namespace weft::pgas::detail {

namespace {
pgas_option_values g_values;  // the defaults until a parse; before the registration below

bool register_options() {
  using namespace weft::detail;
  auto& s = g_values;
  return register_layer_options(
      "pgas",
      {size_option("segment", &s.segment, 64 * KiB, std::size_t{1} << 40,
                   "address space reserved for each rank's symmetric heap, committed as used"),
       size_option("cache-block", &s.cache_block, 4 * KiB, GiB,
                   "block of the software cache behind checkouts (a multiple of the page size)"),
       size_option("cache-sub-block", &s.cache_sub_block, 64, GiB,
                   "a read checkout's miss fetches the missing bytes of the sub-blocks of this size it touches, "
                   "not of its whole block (cache-block or more: whole blocks)"),
       size_option("cache-size", &s.cache_size, 4 * KiB, 64 * GiB,
                   "bytes of software cache per rank (at least one block; a checkout may span at most this much)"),
       choice_option("cache", &s.cache, {"auto", "always"},
                     "checkouts go through the software cache only for memory this rank does not map (auto), or "
                     "always, also of its own heap and its node's (for testing the cache; --weft:node-size=1 sends "
                     "only other ranks' memory through it)"),
       bool_option("pgas-one-sided", &s.one_sided,
                   "memory this rank does not map is reached by the transport's one-sided operations where they "
                   "need no action of the target (0: by messages, to compare the paths; the same on every rank; "
                   "docs/PGAS.md)")});
}

}  // namespace

const pgas_option_values& pgas_options() noexcept { return g_values; }

}  // namespace weft::pgas::detail

// Named in src/pgas/CMakeLists.txt so that every program links this file.
extern "C" const bool weft_pgas_options = weft::pgas::detail::register_options();
