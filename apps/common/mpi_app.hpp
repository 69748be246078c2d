// The MPI frame every application's MPI version shares: MPI started and
// stopped around main, bad input refused on every rank alike with one
// message from rank 0 (app_frame.hpp), and one exit status for all ranks.
#pragma once

#include <mpi.h>

#include <string>

#include "app_frame.hpp"

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

inline int refuse(const mpi_environment& mpi, const char* prog, const std::string& error, const char* usage) {
  return refuse(mpi.rank, prog, error, usage);
}

/// Rank 0's exit status, on every rank.
inline int rank0_status(int rc) {
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

}  // namespace apps
