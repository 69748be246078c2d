// The MPI frame every application's MPI version shares: MPI started and
// stopped around main, bad input refused on every rank alike with one
// message from rank 0, and one exit status for all ranks.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>

namespace apps {

/// MPI_COMM_WORLD for the lifetime of the object.
class mpi_environment {
 public:
  mpi_environment(int& argc, char**& argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  ~mpi_environment() { MPI_Finalize(); }
  mpi_environment(const mpi_environment&) = delete;
  mpi_environment& operator=(const mpi_environment&) = delete;

  int rank = 0, size = 1;
};

/// "" when a -serial run has the single process it needs, else the error.
inline std::string serial_needs_one_rank(bool serial, int nranks) {
  if (!serial || nranks == 1) return {};
  return "-serial runs as a single process, got " + std::to_string(nranks) + " ranks";
}

/// Every rank parsed the same arguments and found the same `error`; rank
/// 0 says so. Returns the exit status for bad input.
inline int refuse(const mpi_environment& mpi, const char* prog, const std::string& error, const char* usage) {
  if (mpi.rank == 0) std::fprintf(stderr, "%s: rank 0: %s\n%s", prog, error.c_str(), usage);
  return 2;
}

/// Rank 0's exit status, on every rank.
inline int rank0_status(int rc) {
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

}  // namespace apps
