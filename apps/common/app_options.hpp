// Command-line options shared by the applications: `-name value` integer
// options and `-name` switches. Every rank parses the same argv, so every
// rank reaches the same verdict and they can all leave together without a
// hang; only the caller decides who prints.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

namespace apps {

struct int_option {
  const char* name;  // with the leading '-', e.g. "-n"
  long* value;
  long min;          // smallest accepted value
};

struct flag_option {
  const char* name;
  bool* value;
};

/// Parses argv into the given options. Returns "" when every argument was
/// understood, otherwise a message saying what is wrong.
inline std::string parse_options(int argc, char** argv, std::span<const int_option> ints,
                                 std::span<const flag_option> flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    bool known = false;
    for (const flag_option& f : flags)
      if (a == f.name) {
        *f.value = true;
        known = true;
      }
    for (const int_option& o : ints) {
      if (a != o.name) continue;
      known = true;
      if (i + 1 >= argc) return a + " needs a value";
      const char* text = argv[++i];
      char* end = nullptr;
      errno = 0;
      const long v = std::strtol(text, &end, 10);
      if (errno != 0 || end == text || *end != '\0') return a + " needs an integer, got '" + text + "'";
      if (v < o.min) return a + " must be at least " + std::to_string(o.min) + ", got " + text;
      *o.value = v;
    }
    if (!known) return "unknown argument '" + a + "'";
  }
  return {};
}

/// The result line the tests and the comparison script read.
inline void print_checksum(double value) { std::printf("checksum %.12e\n", value); }

}  // namespace apps
