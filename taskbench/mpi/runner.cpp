#include "runner.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace taskbench_mpi {

options parse_options(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-warmup") == 0) o.warmup = true;
    if (std::strcmp(argv[i], "-mpi-aggregate") == 0) o.aggregate = true;
    if (std::strcmp(argv[i], "-mpi-inject-corruption") == 0) o.inject_corruption = true;
  }
  return o;
}

const char* const help =
    "\nOptions of taskbench_mpi:\n"
    "  -warmup                  run all graphs once, untimed, before the timed run\n"
    "  -mpi-aggregate           one message per (producer, consumer rank), and each point runs\n"
    "                           as soon as its inputs are in, instead of Task Bench's nonblock\n"
    "                           structure (one message per dependency edge, one MPI_Waitall\n"
    "                           per timestep)\n"
    "  -mpi-inject-corruption   (testing) flip a byte of one output; the run must fail\n"
    "Run with: mpiexec -n RANKS taskbench_mpi [flags] (one rank per core)\n";

void abort_job() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(1);
}

void die(MPI_Comm comm, const char* message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::fprintf(stderr, "rank %d: %s\n", rank, message);
  std::fflush(stderr);
  abort_job();
}

}  // namespace taskbench_mpi
