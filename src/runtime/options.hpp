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
  // mpi: messages (with their large segments) up to this size are copied
  // through the transport's reused buffers, larger ones go zero-copy.
  // Measured with MPICH/UCX: a rendezvous from an address UCX has not seen
  // (a freshly serialized argument) costs 3-4 us more than the copy at
  // 16 KiB and ~13 us at 64 KiB, where the copy costs ~1.5 us.
  std::size_t eager_threshold = std::size_t{16} << 10;
  // mpi: the frames queued for one rank in a progress pass share MPI
  // messages of up to this many bytes. 8K keeps a batch inside one of UCX's
  // shared-memory segments (8 KiB, UCX_MM_SEG_SIZE): one copy in, one out.
  // A 12 KiB or 64 KiB batch goes by rendezvous instead; with 64K, four
  // 4 KiB messages queued together took 2.2-2.4x raw MPI's latency, with
  // 8K 1.5x (BENCHMARKS.md, seventh session).
  std::size_t coalesce_limit = std::size_t{8} << 10;
  // mpi: frames between ranks on one node go through shared-memory rings
  // (am/node_rings.hpp) instead of MPI messages.
  bool node_rings = true;
  // Raise glibc's malloc trim/mmap thresholds (runtime/malloc_tuning.cpp).
  bool malloc_tuning = true;
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
