#include "am/handlers.hpp"

#include <cstdio>
#include <cstdlib>

#include "trace/recorder.hpp"

namespace weft::detail {

// Zero-initialized before any dynamic initialization, so registrations from
// any object file's initializers find them ready.
constinit am_handler_fn am_handler_table[256] = {};

namespace {
constinit const char* g_layer_of[256] = {};
}  // namespace

am_handler register_am_handler(unsigned id, const char* layer, am_handler_fn fn) noexcept {
  if (id < am_first_layer_id || id > 255 || fn == nullptr) {
    std::fprintf(stderr, "weft: layer %s: handler id %u is reserved or out of range (%u..255)\n", layer, id,
                 am_first_layer_id);
    std::abort();
  }
  if (am_handler_table[id] != nullptr) {
    std::fprintf(stderr, "weft: handler id %u registered twice (layers %s and %s)\n", id, g_layer_of[id], layer);
    std::abort();
  }
  am_handler_table[id] = fn;
  g_layer_of[id] = layer;
  trace::message_kind_names[id] = layer;
  return static_cast<am_handler>(id);
}

}  // namespace weft::detail
