// weft — starting and stopping the runtime.
//
// SPMD entry point (runs `body` once on every rank, smp or mpi):
//
// @code
//   int main(int argc, char** argv) {
//     return weft::run(argc, argv, [] {
//       std::printf("hello from rank %d of %d\n", weft::rank(), weft::nranks());
//     });
//   }
// @endcode
//
//   ./hello --weft:ranks=4 --weft:threads=2     # 4 ranks in one process
//   mpiexec -n 4 ./hello                        # 4 processes over MPI
//
// Explicit form: weft::init(argc, argv) ... weft::finalize(), or the RAII
// guard weft::runtime rt(argc, argv). Code between them runs on the calling
// thread (not a worker); futures block it while tasks run on the workers.
// With the smp backend and several ranks that thread acts as rank 0 and the
// other ranks only serve remote calls — use weft::run for SPMD programs.
//
// Options: --weft:NAME=VALUE on the command line (removed from argv before
// the program sees it) or WEFT_NAME=VALUE in the environment (the command
// line wins). --weft:help lists them. An unknown --weft: option is an error.
#pragma once
#include <functional>
#include <string>
#include <type_traits>

namespace weft {

/// Starts the runtime. Removes the --weft: options from argc/argv. Exits
/// the process with a message and status 2 on a bad option.
void init(int& argc, char** argv);

/// Waits until every task (and, across ranks, every message) is done, then
/// stops the workers. Tasks still queued are run first.
void finalize();

bool is_initialized() noexcept;

/// This rank's index in [0, nranks()), and the number of ranks.
int rank() noexcept;
int nranks() noexcept;

/// Worker threads of this rank; index of the calling worker (-1 off workers).
int num_threads() noexcept;
int thread_index() noexcept;

/// The backend the job runs on: "smp", "mpi" or "ucx" ("none" outside the runtime).
const char* backend_name() noexcept;

/// RAII form of init/finalize.
class runtime {
 public:
  runtime(int& argc, char** argv) { init(argc, argv); }
  ~runtime() { finalize(); }
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
};

namespace detail {
int run_spmd(int& argc, char** argv, std::function<int(int, char**)> body);
}

/// Starts the runtime, runs `body` as a task on every rank, waits for all of
/// them, finalizes and returns the exit status for main(): 0, or the first
/// non-zero value a rank's body returned. `body` takes () or (int argc,
/// char** argv) (argv without the --weft: options) and returns void or int.
/// An exception escaping `body` on any rank ends the whole job with a
/// message naming the rank and a non-zero status.
template <class F>
int run(int& argc, char** argv, F&& body) {
  std::function<int(int, char**)> fn = [&body](int ac, char** av) -> int {
    if constexpr (std::is_invocable_v<F&, int, char**>) {
      if constexpr (std::is_void_v<std::invoke_result_t<F&, int, char**>>) {
        body(ac, av);
        return 0;
      } else {
        return static_cast<int>(body(ac, av));
      }
    } else {
      if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
        body();
        return 0;
      } else {
        return static_cast<int>(body());
      }
    }
  };
  return detail::run_spmd(argc, argv, std::move(fn));
}

}  // namespace weft
