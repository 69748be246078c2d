#include "am/mpi/mpi_init.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace weft::detail {

namespace {

/// How long MPI_Finalize may take before the process leaves without it.
constexpr auto finalize_patience = std::chrono::seconds(10);

void finalize_mpi_at_exit(int status, void*) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // MPICH 4.0's MPI_Finalize closes its UCX endpoints first, with no
  // barrier before; over TCP a rank's close waits for its peer's answer.
  // A rank still polling MPI (its workers, the transport's teardown) when
  // a peer starts finalizing answers that peer's close, the peer then
  // leaves, and this rank's own close is never answered: the job printed
  // everything and hung (UCX_TLS=tcp,self). Here every rank stops polling
  // before any of them starts finalizing.
  MPI_Barrier(MPI_COMM_WORLD);
  // The barrier leaves a narrower window for the same race inside MPICH
  // (a plain MPI program with Barrier + Finalize hung in 4 of 42 runs over
  // TCP). Every rank has finished its work and passed the barrier here, so
  // a finalize that does not return is not waiting for anything this job
  // needs: the process then ends with the status the program chose.
  std::thread([status] {
    std::this_thread::sleep_for(finalize_patience);
    std::fprintf(stderr, "weft: MPI_Finalize did not return in %lld s; exiting without it\n",
                 static_cast<long long>(finalize_patience.count()));
    std::_Exit(status);
  }).detach();
  MPI_Finalize();
}

}  // namespace

void init_mpi_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;  // the program's: it finalizes it too
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) {
      std::fprintf(stderr, "weft: MPI does not provide MPI_THREAD_SERIALIZED\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    on_exit(finalize_mpi_at_exit, nullptr);  // glibc: the handler learns the exit status
  });
}

}  // namespace weft::detail
