// --weft: options as table entries, and the registry of the options of the
// layers above the runtime (pgas, forkjoin, offload).
//
// Each entry parses a VALUE into a setting it points to and can put that
// setting back to its default; the runtime's own table (options.cpp) and
// every layer's are made of the same typed entries, so limits, help text and
// error messages read the same for all. A layer above the runtime keeps its
// settings in a file of its own and registers their entries from the
// initializer of a namespace-scope constant there, like its start hooks
// (runtime/layer_hooks.hpp):
//
//   pgas_settings g_settings;  // its defaults
//   const bool registered = register_layer_options("pgas", {
//       size_option("segment", &g_settings.segment, 64 * KiB, TiB, "pgas: ...")});
//
// parse_options (options.hpp) then puts every setting back to its default,
// reads WEFT_NAME from the environment and --weft:NAME=VALUE from the
// command line into them, and --weft:help lists them under the layer's
// name. The layer reads its settings when it starts (each weft::init parses
// again). So that every program accepts and lists the same options, whatever
// it uses, the layer's CMakeLists makes programs link the file (a
// --undefined of an extern "C" symbol in it).
#pragma once
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft::detail {

class option_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr std::size_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

struct option_def {
  const char* name;
  std::string value;  // what VALUE may be, with its limits and default, for --weft:help
  const char* help;
  std::function<void(const std::string&)> set;  // throws option_error naming the option
  std::function<void()> reset;                  // back to the default
};

// Entries for a setting of each type. Made while the setting holds its
// default: the entry keeps that value for reset (and, but for int and text
// entries, whose default text is given, for --weft:help).

/// An integer in [lo, hi].
option_def int_option(const char* name, int* setting, long lo, long hi, const char* default_text, const char* help);
/// Bytes, with an optional K, M or G, in [lo, hi].
option_def size_option(const char* name, std::size_t* setting, std::size_t lo, std::size_t hi, const char* help);
/// 0/1, false/true, no/yes, off/on.
option_def bool_option(const char* name, bool* setting, const char* help);
/// One of `allowed`.
option_def choice_option(const char* name, std::string* setting, std::vector<const char*> allowed, const char* help);
/// Any text (a path); `value` describes it for --weft:help.
option_def text_option(const char* name, std::string* setting, const char* value, const char* help);

/// The options of one layer above the runtime.
struct layer_options {
  const char* layer;
  std::vector<option_def> options;
};

/// Adds `layer`'s options to those parse_options reads and --weft:help
/// lists. Call at load time (from a namespace-scope initializer). Returns
/// true.
bool register_layer_options(const char* layer, std::vector<option_def> options);

/// Every layer's registered options, by layer name.
const std::vector<layer_options>& registered_layer_options();

}  // namespace weft::detail
