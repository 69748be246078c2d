#include "runtime/option_registry.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace weft::detail {

namespace {

std::string format_size(std::size_t n) {
  if (n != 0 && n % GiB == 0) return std::to_string(n / GiB) + "G";
  if (n != 0 && n % MiB == 0) return std::to_string(n / MiB) + "M";
  if (n != 0 && n % KiB == 0) return std::to_string(n / KiB) + "K";
  return std::to_string(n);
}

long parse_int(std::string_view name, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
    throw option_error("invalid value '" + v + "' for " + std::string(name) + " (expected an integer in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return x;
}

std::size_t parse_size(std::string_view name, const std::string& v, std::size_t lo, std::size_t hi) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  std::string_view suffix(end);
  unsigned long long mult = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = KiB;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") mult = MiB;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") mult = GiB;
  else if (!suffix.empty()) x = 0, errno = EINVAL;
  if (v.empty() || errno != 0 || end == v.c_str() || v[0] == '-' || x > ~0ull / mult)
    throw option_error("invalid size '" + v + "' for " + std::string(name) + " (e.g. 65536, 64K, 1M)");
  const auto n = static_cast<std::size_t>(x * mult);
  if (n < lo) throw option_error(std::string(name) + " must be at least " + format_size(lo));
  if (n > hi) throw option_error(std::string(name) + " must be at most " + format_size(hi));
  return n;
}

std::string parse_choice(std::string_view name, const std::string& v, const std::vector<const char*>& allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += list.empty() ? "" : ", ";
    list += a;
  }
  throw option_error("invalid value '" + v + "' for " + std::string(name) + " (one of: " + list + ")");
}

bool parse_bool(std::string_view name, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw option_error("invalid value '" + v + "' for " + std::string(name) + " (expected 0 or 1)");
}

/// Puts `*setting` back to the value it holds now.
template <class T>
std::function<void()> reset_to_current(T* setting) {
  return [setting, initial = *setting] { *setting = initial; };
}

std::vector<layer_options>& registry() {
  static std::vector<layer_options> r;  // made by the first registration, whatever the load order
  return r;
}

}  // namespace

option_def int_option(const char* name, int* setting, long lo, long hi, const char* default_text, const char* help) {
  return {name, "N: " + std::to_string(lo) + " to " + std::to_string(hi) + "; default " + default_text, help,
          [=](const std::string& v) { *setting = static_cast<int>(parse_int(name, v, lo, hi)); },
          reset_to_current(setting)};
}

option_def size_option(const char* name, std::size_t* setting, std::size_t lo, std::size_t hi, const char* help) {
  return {name,
          "SIZE (bytes, or with K, M, G): " + format_size(lo) + " to " + format_size(hi) + "; default " +
              format_size(*setting),
          help, [=](const std::string& v) { *setting = parse_size(name, v, lo, hi); }, reset_to_current(setting)};
}

option_def bool_option(const char* name, bool* setting, const char* help) {
  return {name, std::string("0 or 1; default ") + (*setting ? "1" : "0"), help,
          [=](const std::string& v) { *setting = parse_bool(name, v); }, reset_to_current(setting)};
}

option_def choice_option(const char* name, std::string* setting, std::vector<const char*> allowed, const char* help) {
  std::string value;
  for (const char* a : allowed) value += (value.empty() ? "" : " | ") + std::string(a);
  return {name, value + "; default " + *setting, help,
          [=](const std::string& v) { *setting = parse_choice(name, v, allowed); }, reset_to_current(setting)};
}

option_def text_option(const char* name, std::string* setting, const char* value, const char* help) {
  return {name, value, help, [=](const std::string& v) { *setting = v; }, reset_to_current(setting)};
}

bool register_layer_options(const char* layer, std::vector<option_def> options) {
  auto& r = registry();
  // By name, so --weft:help lists the layers in the same order whatever
  // order the linker ran their initializers in.
  const auto at = std::find_if(r.begin(), r.end(),
                               [&](const layer_options& l) { return std::strcmp(layer, l.layer) < 0; });
  r.insert(at, layer_options{layer, std::move(options)});
  return true;
}

const std::vector<layer_options>& registered_layer_options() { return registry(); }

}  // namespace weft::detail
