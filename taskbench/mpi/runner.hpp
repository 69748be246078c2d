// What the two runners of taskbench_mpi share: the options, how a rank ends
// the job, and the interface main() drives.
#pragma once

#include <mpi.h>

namespace taskbench_mpi {

struct options {
  bool warmup = false;
  bool aggregate = false;          // one message per (producer, consumer rank)
  bool inject_corruption = false;  // testing aid: must make the run fail
};

options parse_options(int argc, char** argv);
extern const char* const help;

// Ends the whole job. Not MPI_Abort: every consumer of a corrupted output
// fails at once, and concurrent MPI_Abort calls can crash inside UCX and
// hang in its crash handler. A rank exiting non-zero before MPI_Finalize
// makes mpiexec kill the others and fail the job.
[[noreturn]] void abort_job();
// Prints `message` (naming the rank) to stderr, then abort_job().
[[noreturn]] void die(MPI_Comm comm, const char* message);

// Runs one task graph on this rank's block of points, every timestep.
class graph_runner {
 public:
  virtual ~graph_runner() = default;
  virtual void run() = 0;
};

}  // namespace taskbench_mpi
