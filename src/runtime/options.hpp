// Runtime options: --weft:NAME=VALUE on the command line, WEFT_NAME in the
// environment, defaults otherwise. The runtime's table (options.cpp) lists
// its own options and those of the layers below it, with their limits; the
// layers above it (pgas, forkjoin, offload) register tables of their own
// (option_registry.hpp). parse_options reads them all; --weft:help prints
// the runtime's, then each registered layer's under its name.
//
// The layers below the runtime (sched, am, rma) never read options or the
// environment themselves: the runtime parses their options here and hands
// each layer its values when it starts it (the mpi transport's settings in
// its constructor, rma's and the fences' through a setter of their own). A
// registry in the lowest layer would let any layer read any option; handing
// values down keeps each layer's inputs in its interface. The layers above
// the runtime may name it, so they register their options with it and read
// their own settings when they start: the runtime knows nothing of them.
#pragma once
#include <cstddef>
#include <string>

#include "runtime/option_registry.hpp"

namespace weft::detail {

struct runtime_options {
  int threads = 0;                 // per rank; 0 = cores / ranks on this node
  bool pin = true;
  int ranks = 1;                   // smp backend only
  std::string backend = "auto";    // auto | smp | mpi
  // --weft:backend=smp in a process one of several a launcher started:
  // refused unless set (each process would run a separate job).
  bool smp_per_process = false;
  std::string progress = "auto";   // auto | thread | worker
  std::size_t stack_size = 256 * 1024;
  // mpi: messages (with their large segments) up to this size are copied
  // through the transport's reused buffers, larger ones go zero-copy. Up to
  // about 16 KiB the copy is cheaper than MPICH/UCX's rendezvous from an
  // address it has not seen (a freshly serialized argument); the figures:
  // docs/DISTRIBUTED.md, "Eager up to 16 KiB, then zero-copy".
  std::size_t eager_threshold = std::size_t{16} << 10;
  // mpi: the frames queued for one rank in a progress pass share MPI
  // messages of up to this many bytes. 8K keeps a batch inside one of UCX's
  // shared-memory segments (8 KiB, UCX_MM_SEG_SIZE): one copy in, one out.
  // A larger batch goes by rendezvous instead, which costs latency
  // (docs/DISTRIBUTED.md, "Coalescing up to 8 KiB").
  std::size_t coalesce_limit = std::size_t{8} << 10;
  // Each node-size consecutive ranks form one node for every same-node path
  // (node rings, mapped heaps, shared-memory steals, in-process rma copies);
  // 0: the real node (the process on smp, the host on mpi). 1 makes every
  // other rank remote, so one process tests the paths between nodes.
  // Pinning is not affected: it follows the machine and the launcher.
  int node_size = 0;
  // mpi: frames between ranks on one node go through shared-memory rings
  // (am/mpi/node_rings.hpp) instead of MPI messages. Kept beside node-size:
  // 0 moves only the messages to MPI (whose own shared-memory path the
  // benchmarks compare with the rings), while memory and steals stay direct.
  bool node_rings = true;
  // mpi: the most bytes one MPI send or receive of a large segment moves;
  // longer segments travel in pieces (MPI counts are ints).
  std::size_t mpi_chunk = std::size_t{1} << 30;
  // mpi: one-sided operations over MPI-3 RMA windows (docs/PGAS.md).
  std::string mpi_rma = "auto";  // auto | on | off
  // ucx: one-sided operations over UCP (docs/DISTRIBUTED.md).
  std::string ucx_rma = "auto";  // auto | on | off
  // rma: the largest piece one RMA message carries.
  std::size_t rma_chunk = std::size_t{1} << 30;
  // sched: membarrier-based asymmetric fences where the kernel has them.
  bool asymmetric_fences = true;
  // Raise glibc's malloc trim/mmap thresholds (runtime/malloc_tuning.cpp).
  bool malloc_tuning = true;
  // trace: the file a timeline of the whole job is written to (empty: no
  // trace), and the most events each thread records (docs/TRACING.md).
  std::string trace;
  int trace_limit = 1 << 20;
};

/// Puts every option (the runtime's and the registered layers') back to its
/// default, reads WEFT_* variables, then parses and removes --weft: entries
/// from argv (argc shrinks). Returns the runtime's options; the layers'
/// are in their own settings. Throws option_error on anything invalid.
/// Sets `help` when --weft:help was given.
runtime_options parse_options(int& argc, char** argv, bool& help);

/// Every option as text, grouped by layer, for --weft:help and error
/// messages.
std::string options_help();

}  // namespace weft::detail
