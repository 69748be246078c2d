#include "runtime/layer_hooks.hpp"

#include <cstdio>
#include <cstdlib>

namespace weft::detail {

namespace {

struct layer_hooks {
  const char* layer;
  layer_hook start;
  layer_hook stop;
};

// Filled by static initializers only, so constinit keeps it zeroed before
// any of them runs, whatever the link order.
constexpr int max_layers = 8;
constinit layer_hooks g_hooks[max_layers]{};
constinit int g_count = 0;

}  // namespace

bool register_layer_hooks(const char* layer, layer_hook start, layer_hook stop) noexcept {
  if (g_count == max_layers) {
    std::fprintf(stderr, "weft: too many layers register start hooks (%s is number %d)\n", layer, max_layers + 1);
    std::abort();
  }
  g_hooks[g_count++] = {layer, start, stop};
  return true;
}

void start_layers(process_runtime& rt) {
  for (int i = 0; i < g_count; ++i)
    if (g_hooks[i].start != nullptr) g_hooks[i].start(rt);
}

void stop_layers(process_runtime& rt) {
  for (int i = g_count - 1; i >= 0; --i)
    if (g_hooks[i].stop != nullptr) g_hooks[i].stop(rt);
}

}  // namespace weft::detail
