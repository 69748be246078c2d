// taskbench_mpi: the plain-MPI reference implementation of Task Bench, the
// baseline weft's implementations are compared against.
//
// Points are block-distributed over the ranks (rank r owns
// [r*W/n, (r+1)*W/n)), one rank per core. By default each graph runs with
// the structure of Task Bench's MPI "nonblock" implementation (nonblock.hpp);
// -mpi-aggregate selects a leaner MPI program (aggregate.hpp). Graphs given
// with -and run one after another. Every task's inputs are validated (always
// on).
//
// Timing: buffers and scratch are set up first (untimed); then MPI_Barrier,
// MPI_Wtime, all graphs, MPI_Barrier, MPI_Wtime; rank 0 prints the report.
// -warmup runs all graphs once more before, untimed.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "aggregate.hpp"
#include "nonblock.hpp"
#include "runner.hpp"
#include "taskbench/core.hpp"

int main(int argc, char** argv) {
  using namespace taskbench_mpi;
  taskbench::ensure_single_threaded_blas(argv);
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  // Every rank parses the same flags; only rank 0 speaks.
  taskbench::app app;
  try {
    app = taskbench::app::parse(argc, argv);
  } catch (const taskbench::usage_error& e) {
    if (rank == 0) std::fprintf(stderr, "%s\n", e.what());
    MPI_Finalize();
    return 1;
  }
  if (app.help) {
    if (rank == 0) {
      std::fputs(taskbench::app::help_text(argv[0]).c_str(), stdout);
      std::fputs(help, stdout);
    }
    MPI_Finalize();
    return 0;
  }
  const options opt = parse_options(argc, argv);

  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int* tag_ub_attr = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub_attr, &flag);
  const int tag_ub = flag && tag_ub_attr ? *tag_ub_attr : 32767;

  if (rank == 0) app.display();

  double elapsed = 0.0;
  try {
    std::vector<std::unique_ptr<graph_runner>> runners;
    for (const auto& g : app.graphs)
      runners.push_back(opt.aggregate ? make_aggregate_runner(g, comm, opt, tag_ub)
                                      : make_nonblock_runner(g, comm, opt, tag_ub));
    if (opt.warmup)
      for (auto& r : runners) r->run();
    MPI_Barrier(comm);
    const double start = MPI_Wtime();
    for (auto& r : runners) r->run();
    MPI_Barrier(comm);
    elapsed = MPI_Wtime() - start;
  } catch (const taskbench::validation_error&) {
    abort_job();  // the message is already on stderr
  }

  if (rank == 0) app.report_timing(elapsed);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
