// taskbench_weft: Task Bench on weft.
//
//   taskbench_weft -impl dataflow|spmd|forkjoin|futures|offload [-weft-builders auto|one|per-worker]
//                  [-weft-offload-devices auto|cpu|cuda]
//                  [Task Bench flags] [--weft:options]
//
// Every rank parses the same flags; rank 0 prints the configuration and the
// report. The graphs run once untimed (warm-up: fiber pools, allocators and
// page faults), then once timed, as the specification allows.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "impl.hpp"
#include "weft/weft.hpp"

namespace {

struct options {
  std::string impl = "dataflow";
  bool warmup = true;
};

options take_own_flags(int& argc, char** argv) {
  options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-impl") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: -impl needs a value (dataflow, spmd, forkjoin or futures)\n");
        std::exit(1);
      }
      o.impl = argv[++i];
    } else if (std::strcmp(argv[i], "-weft-inject-corruption") == 0) {
      taskbench_weft::inject_corruption = true;
    } else if (std::strcmp(argv[i], "-weft-builders") == 0) {
      const char* v = i + 1 < argc ? argv[++i] : "";
      if (std::strcmp(v, "auto") == 0)
        taskbench_weft::builders_mode = taskbench_weft::builders::automatic;
      else if (std::strcmp(v, "one") == 0)
        taskbench_weft::builders_mode = taskbench_weft::builders::one;
      else if (std::strcmp(v, "per-worker") == 0)
        taskbench_weft::builders_mode = taskbench_weft::builders::per_worker;
      else {
        std::fprintf(stderr, "error: -weft-builders needs auto, one or per-worker (got '%s')\n", v);
        std::exit(1);
      }
    } else if (std::strcmp(argv[i], "-weft-offload-devices") == 0) {
      const char* v = i + 1 < argc ? argv[++i] : "";
      if (std::strcmp(v, "auto") == 0)
        taskbench_weft::offload_kind = taskbench_weft::offload_devices_kind::automatic;
      else if (std::strcmp(v, "cpu") == 0)
        taskbench_weft::offload_kind = taskbench_weft::offload_devices_kind::cpu;
      else if (std::strcmp(v, "cuda") == 0)
        taskbench_weft::offload_kind = taskbench_weft::offload_devices_kind::cuda;
      else {
        std::fprintf(stderr, "error: -weft-offload-devices needs auto, cpu or cuda (got '%s')\n", v);
        std::exit(1);
      }
    } else if (std::strcmp(argv[i], "-no-warmup") == 0) {
      o.warmup = false;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (o.impl != "dataflow" && o.impl != "spmd" && o.impl != "forkjoin" && o.impl != "futures" && o.impl != "offload") {
    std::fprintf(stderr, "error: unknown -impl '%s' (dataflow, spmd, forkjoin, futures or offload)\n", o.impl.c_str());
    std::exit(1);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  taskbench::ensure_single_threaded_blas(argv);
  options opts = take_own_flags(argc, argv);
  // Parse before the runtime starts, so a bad flag exits cleanly with Task
  // Bench's message (the --weft: options are ignored here, weft takes them).
  taskbench::app app(argc, argv);
  return weft::run(argc, argv, [&]() -> int {
    auto run_once = [&] {
      if (opts.impl == "dataflow")
        taskbench_weft::run_dataflow(app);
      else if (opts.impl == "offload")
        taskbench_weft::run_offload(app);
      else if (opts.impl == "spmd")
        taskbench_weft::run_spmd(app);
      else if (opts.impl == "forkjoin")
        taskbench_weft::run_forkjoin(app);
      else
        taskbench_weft::run_futures(app);
    };
    try {
      if (weft::rank() == 0) app.display();
      if (opts.warmup) run_once();
      auto t0 = std::chrono::steady_clock::now();
      run_once();
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (weft::rank() == 0) app.report_timing(elapsed);
    } catch (const taskbench::validation_error&) {
      // The message is already on stderr. Alone, just fail; with other
      // ranks waiting for this one, end the whole job (naming the rank).
      if (weft::nranks() == 1) return 1;
      throw;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 1;
    }
    return 0;
  });
}
