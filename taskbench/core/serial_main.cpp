// taskbench_serial: the simplest Task Bench implementation, one thread,
// timestep by timestep (taskbench::run_serial). Same flags and report as the
// others.
#include <chrono>
#include <cstdio>

#include "taskbench/core.hpp"

int main(int argc, char** argv) {
  taskbench::ensure_single_threaded_blas(argv);
  taskbench::app app(argc, argv);
  app.display();
  auto start = std::chrono::steady_clock::now();
  try {
    taskbench::run_serial(app);
  } catch (const taskbench::validation_error&) {
    return 1;  // the message is already on stderr
  }
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  app.report_timing(elapsed.count());
  return 0;
}
