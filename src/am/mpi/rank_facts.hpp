// Internal: what each rank of the mpi backend tells every other at start-up,
// in one MPI_Allgather (mpi_transport's constructor): which node it runs on
// and the settings the ranks must agree on.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft::detail {

struct mpi_transport_settings;

struct rank_facts {
  /// The node: its host name and the kernel's boot id, compared whole (a
  /// hash could make two nodes one). The boot id tells apart hosts given
  /// the same name, such as containers on different machines.
  char host[72];
  char boot_id[40];
  std::uint64_t longest_eager;  // the longest eager message this rank sends
  std::uint64_t chunk;          // the most bytes per MPI message of a segment
  std::uint64_t wants_rings;    // 1: this rank asks for node rings
  std::uint64_t job;            // random; rank 0's names the job's shared-memory segments
  std::uint64_t wants_one_sided;  // 1: this rank asks for MPI RMA windows; 2: passive ones (--weft:mpi-rma=on)
};

/// This rank's facts (zero-filled where a name is shorter).
rank_facts my_facts(const mpi_transport_settings& settings, std::size_t longest_eager);
bool same_host(const rank_facts& a, const rank_facts& b) noexcept;

}  // namespace weft::detail
