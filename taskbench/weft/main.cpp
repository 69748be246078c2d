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
#include <initializer_list>
#include <string>
#include <utility>

#include "impl.hpp"
#include "weft/weft.hpp"

namespace {

struct options {
  std::string impl = "dataflow";
  bool warmup = true;
};

/// The value of `flag` named `given` among `values`; else exits saying which exist.
template <class E>
E choice(const char* flag, const char* given, std::initializer_list<std::pair<const char*, E>> values) {
  std::string names;
  for (const auto& [name, value] : values) {
    if (std::strcmp(given, name) == 0) return value;
    names += names.empty() ? name : std::string(", ") + name;
  }
  std::fprintf(stderr, "error: %s needs one of %s (got '%s')\n", flag, names.c_str(), given);
  std::exit(1);
}

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
      using enum taskbench_weft::builders;
      const char* v = i + 1 < argc ? argv[++i] : "";
      taskbench_weft::builders_mode =
          choice<taskbench_weft::builders>("-weft-builders", v, {{"auto", automatic}, {"one", one}, {"per-worker", per_worker}});
    } else if (std::strcmp(argv[i], "-weft-offload-devices") == 0) {
      using enum taskbench_weft::offload_devices_kind;
      const char* v = i + 1 < argc ? argv[++i] : "";
      taskbench_weft::offload_kind =
          choice<taskbench_weft::offload_devices_kind>("-weft-offload-devices", v, {{"auto", automatic}, {"cpu", cpu}, {"cuda", cuda}});
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
    } catch (const taskbench_weft::devices_absent& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 77;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 1;
    }
    return 0;
  });
}
