// The default runner: the message and loop structure of Task Bench's MPI
// "nonblock" implementation, so that taskbench_mpi is a faithful baseline.
#pragma once

#include <memory>

#include "runner.hpp"
#include "taskbench/core.hpp"

namespace taskbench_mpi {

// Per timestep, for each of this rank's points in order: post an MPI_Irecv
// per remote dependency edge into the point's own input buffer (a local
// producer's output is copied there), then an MPI_Isend per remote consumer
// of the point's previous output. One MPI_Waitall over all of them, then the
// rank's points run one after another. One message per edge: a producer with
// two consumers on a rank sends it twice.
std::unique_ptr<graph_runner> make_nonblock_runner(const taskbench::task_graph& g, MPI_Comm comm,
                                                   const options& opt, int tag_ub);

}  // namespace taskbench_mpi
