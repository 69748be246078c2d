// Runtime options: --weft:NAME=VALUE on the command line, WEFT_NAME in the
// environment, defaults otherwise. One table lists every option.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace weft::detail {

struct runtime_options {
  int threads = 0;                 // per rank; 0 = cores / ranks on this node
  bool pin = true;
  int ranks = 1;                   // smp backend only
  std::string backend = "auto";    // auto | smp | mpi
  std::string progress = "auto";   // auto | thread | worker
  std::size_t stack_size = 256 * 1024;
  std::size_t eager_threshold = 8192;
};

class option_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses and removes --weft: entries from argv (argc shrinks); reads
/// WEFT_* variables first. Throws option_error on anything invalid.
/// Sets `help` when --weft:help was given.
runtime_options parse_options(int& argc, char** argv, bool& help);

/// The option table as text, for --weft:help and error messages.
std::string options_help();

}  // namespace weft::detail
