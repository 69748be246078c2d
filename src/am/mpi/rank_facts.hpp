// Internal: what each rank of the mpi backend tells every other at start-up,
// in one MPI_Allgather (mpi_transport's constructor): which node it runs on
// and the settings the ranks must agree on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

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
  std::uint64_t node_size;      // --weft:node-size (0: the host); must agree on every rank
};

/// This rank's facts (zero-filled where a name is shorter).
rank_facts my_facts(const mpi_transport_settings& settings, std::size_t longest_eager);
bool same_host(const rank_facts& a, const rank_facts& b) noexcept;
/// Ends the job (status 2) unless every rank in `all` (by world rank) was
/// given the same --weft:node-size; a rank that differs from rank 0 says so.
void require_one_node_size(std::span<const rank_facts> all, int me);
/// World ranks `a` and `b`, on hosts `fa` and `fb`, share a node: one host,
/// and the same group of node_size consecutive ranks when that is set.
bool on_one_node(int a, const rank_facts& fa, int b, const rank_facts& fb) noexcept;

}  // namespace weft::detail
