// The -mpi-aggregate runner: fewer messages and no step-wide wait, an
// MPI program tuned beyond Task Bench's own.
#pragma once

#include <memory>

#include "runner.hpp"
#include "taskbench/core.hpp"

namespace taskbench_mpi {

// Per timestep each rank
//   1. posts an MPI_Irecv for every remote producer its active points read
//      (one message per (producer, consumer rank), shared by all consumers
//      on that rank),
//   2. posts an MPI_Isend of each of its outputs of the previous timestep to
//      every rank that consumes it,
//   3. runs the points whose inputs are all local (they read the producers'
//      output buffers directly, no copy), then each remaining point as soon as
//      MPI_Waitsome reports its last remote input,
//   4. waits for its sends (MPI_Waitall) before the next timestep.
// Outputs are double-buffered by timestep parity, so the sends of step t-1's
// outputs overlap the computation of step t. The tag is the producer's index
// inside its owner's block, plus (when MPI_TAG_UB allows) the graph and
// timestep parity; messages with the same (source, tag) always carry the same
// producer's output, and MPI does not let them overtake each other.
std::unique_ptr<graph_runner> make_aggregate_runner(const taskbench::task_graph& g, MPI_Comm comm,
                                                    const options& opt, int tag_ub);

}  // namespace taskbench_mpi
