// Internal: MPI for the backends that need it (mpi, and ucx for its
// bootstrap): initialized once per process, finalized at exit.
#pragma once

namespace weft::detail {

/// Initializes MPI with MPI_THREAD_SERIALIZED unless the program already
/// did (then the program finalizes it). When weft initializes it, it also
/// finalizes it at exit, after a barrier, with a watchdog (mpi_init.cpp).
void init_mpi_once();

}  // namespace weft::detail
