// taskbench/core.hpp — the Task Bench compatible core of weft.
//
// This header is everything an implementation of Task Bench needs: the task
// graph (points, timesteps, dependencies), the kernels, input validation, the
// command line (the flags of Task Bench) and the printed report. It has no
// dependency on the weft runtime; what it follows of the original Task Bench
// (StanfordLegion/task-bench) is summed up in taskbench/README.md, "What the
// core follows".
//
// The usual shape of an implementation:
//
//   taskbench::app app(argc, argv);        // parses, validates, exits on error
//   app.display();                         // "Running Task Benchmark" block
//   ... set up buffers, taskbench::task_graph::prepare_scratch(...)
//   auto t0 = now();
//   for (const auto& g : app.graphs)
//     for (long t = 0; t < g.steps; ++t)
//       for (long x = g.offset_at(t); x < g.offset_at(t) + g.width_at(t); ++x)
//         // gather the outputs of g.for_each_input(t, x, ...) in order, then
//         g.execute_point(t, x, out, out_bytes, inputs, input_bytes, n, scratch, scratch_bytes);
//   app.report_timing(seconds since t0);
//
// Errors:
//  * taskbench::usage_error (from app::parse): a bad flag or an invalid graph.
//    what() is the whole message, e.g. `error: Invalid flag "-steps 0" must be > 0`.
//    The app(argc, argv) constructor prints it to stderr and exits with 1.
//  * taskbench::validation_error (from execute_point/check_scratch): a task got
//    a wrong input (size, count or content) or its scratch is corrupt. The
//    message has already been written to stderr when it is thrown; let it
//    terminate the program or catch it and exit non-zero (an MPI program should
//    MPI_Abort). The run must fail either way.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace taskbench {

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

enum class dependence_type {
  trivial,
  no_comm,
  stencil_1d,
  stencil_1d_periodic,
  dom,
  tree,
  fft,
  all_to_all,
  nearest,
  spread,
  random_nearest,
  random_spread,  // listed by -h, rejected by the parser
};

enum class kernel_type {
  empty,
  busy_wait,
  memory_bound,
  compute_dgemm,
  memory_daxpy,
  compute_bound,
  compute_bound2,
  io_bound,  // listed by -h, rejected by the parser
  load_imbalance,
};

std::string_view name_of(dependence_type type) noexcept;
std::string_view name_of(kernel_type type) noexcept;
std::optional<dependence_type> dependence_type_from_name(std::string_view name) noexcept;
std::optional<kernel_type> kernel_type_from_name(std::string_view name) noexcept;
// All types in -h order (alphabetical, as Task Bench lists them).
std::span<const dependence_type> all_dependence_types() noexcept;
std::span<const kernel_type> all_kernel_types() noexcept;
// false for random_spread / io_bound (they parse but are rejected).
bool is_supported(dependence_type type) noexcept;
bool is_supported(kernel_type type) noexcept;
// spread and random_nearest take -period (default 3); the others take none.
bool needs_period(dependence_type type) noexcept;
// memory_bound, memory_daxpy and compute_dgemm work on the scratch buffer.
bool needs_scratch(kernel_type type) noexcept;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

// A bad command line or an invalid graph. what() is the complete message
// ("error: ..."), without a trailing newline.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A task saw a wrong input or corrupt scratch memory. The fields say where;
// input and position are -1 where they do not apply (e.g. a wrong number of
// inputs, or a scratch check).
class validation_error : public std::runtime_error {
 public:
  validation_error(const std::string& message, long graph_index, long timestep, long point,
                   long input, long position);
  long graph_index() const noexcept { return graph_index_; }
  long timestep() const noexcept { return timestep_; }
  long point() const noexcept { return point_; }
  long input() const noexcept { return input_; }
  long position() const noexcept { return position_; }

 private:
  long graph_index_, timestep_, point_, input_, position_;
};

// ---------------------------------------------------------------------------
// Hashing (random_nearest, load_imbalance)
// ---------------------------------------------------------------------------

// SipHash-2-4 with a 64-bit result (Aumasson & Bernstein).
std::uint64_t siphash24(const void* data, std::size_t bytes,
                        const std::array<std::uint8_t, 16>& key) noexcept;
// The key of the specification: bytes 1, 2, ..., 15, 0.
const std::array<std::uint8_t, 16>& random_key() noexcept;
// u in [0, 1): SipHash-2-4 (random_key) over the little-endian bytes of the
// given 64-bit integers, times 2^-64.
double random_uniform(std::span<const std::int64_t> words) noexcept;

// ---------------------------------------------------------------------------
// Task graph
// ---------------------------------------------------------------------------

// An inclusive range of points [first, second].
using interval = std::pair<long, long>;

// Room for the intervals of one dependencies() call: on the stack, left
// uninitialised, for up to 64 (a zero-filled `interval[64]` cost ~650
// instructions per call, more than the walk itself), on the heap beyond.
class interval_buffer {
 public:
  explicit interval_buffer(std::size_t capacity) {
    if (capacity > on_stack) heap_.resize(capacity);
  }
  interval_buffer(const interval_buffer&) = delete;
  interval_buffer& operator=(const interval_buffer&) = delete;
  // std::pair<long, long> is an implicit-lifetime type: the byte array
  // provides its objects, and dependencies() assigns each before use.
  interval* data() noexcept {
    return heap_.empty() ? std::launder(reinterpret_cast<interval*>(stack_)) : heap_.data();
  }

 private:
  static constexpr std::size_t on_stack = 64;
  alignas(interval) std::byte stack_[on_stack * sizeof(interval)];
  std::vector<interval> heap_;
};

struct kernel_config {
  kernel_type type = kernel_type::empty;
  long iterations = 0;  // -iter
  int samples = 16;     // -sample
  double imbalance = 0.0;  // -imbalance
};

// The magic word scratch memory is filled with (prepare_scratch) and checked
// for (execute_point checks the first word before running the kernel; the
// memory kernels keep it intact). It is a normal double (~1.36), so
// compute_dgemm and memory_daxpy run on ordinary numbers, not denormals.
inline constexpr std::uint64_t scratch_magic = UINT64_C(0x3FF5C4A7C8B5C4A7);

struct task_graph {
  long graph_index = 0;  // position among the -and graphs, from 0
  long steps = 4;        // -steps: timesteps 0 .. steps-1
  long max_width = 4;    // -width
  dependence_type type = dependence_type::trivial;
  long radix = 3;        // -radix
  long period = 0;       // -period; 3 by default for spread/random_nearest, else 0
  double fraction = 0.25;  // -fraction
  kernel_config kernel{};
  std::size_t output_bytes_per_task = 16;  // -output
  std::size_t scratch_bytes_per_task = 0;  // -scratch
  int fields = 0;  // -field (a buffering hint for implementations; 0 = not given)

  // --- shape ---------------------------------------------------------------
  // Active points at timestep t: [offset_at(t), offset_at(t) + width_at(t)).
  // Both are 0 for t < 0.
  long offset_at(long t) const noexcept;
  long width_at(long t) const noexcept;
  bool is_active(long t, long x) const noexcept {
    long o = offset_at(t);
    return t >= 0 && t < steps && x >= o && x < o + width_at(t);
  }
  long dependence_set_at(long t) const noexcept;
  long max_dependence_sets() const noexcept;

  // --- dependencies (unclipped, as in the specification) ----------------------
  // dependencies(dset, x): the producers at t-1 of consumer x at t, where
  // dset = dependence_set_at(t). reverse_dependencies(dset, x): the consumers
  // at t of producer x at t-1. Inclusive intervals, in the specification's
  // order, NOT clipped to the active ranges.
  std::vector<interval> dependencies(long dset, long x) const;
  std::vector<interval> reverse_dependencies(long dset, long x) const;
  // Allocation-free forms: write at most max_intervals() entries to out and
  // return how many were written.
  std::size_t dependencies(long dset, long x, interval* out) const noexcept;
  std::size_t reverse_dependencies(long dset, long x, interval* out) const noexcept;
  std::size_t max_intervals() const noexcept;

  // --- clipped points of one task --------------------------------------------
  // f(long producer) for every input of task (t, x), in the order its inputs
  // must be passed to execute_point (dependencies of dset(t), clipped to the
  // active range of t-1). No allocation for graphs with radix <= 64.
  template <class F>
  void for_each_input(long t, long x, F&& f) const;
  // f(long consumer) for every task at t+1 that consumes the output of (t, x)
  // (reverse dependencies of dset(t+1), clipped to the active range of t+1).
  // Nothing when t+1 >= steps.
  template <class F>
  void for_each_output(long t, long x, F&& f) const;
  std::vector<long> input_points(long t, long x) const;   // the same as lists
  std::vector<long> output_points(long t, long x) const;
  std::size_t num_inputs(long t, long x) const noexcept;

  // --- execution --------------------------------------------------------------
  // Runs task (t, x): checks that n_inputs equals num_inputs(t, x), that every
  // input has exactly output_bytes_per_task bytes and holds (t-1, producer)
  // in every 16-byte pair, checks the scratch (size, magic word), runs the
  // kernel and fills the output with (t, x) pairs. inputs are in the order of
  // for_each_input. Throws validation_error (after printing it to stderr).
  // Thread-safe: a task_graph is only read.
  void execute_point(long t, long x, char* output, std::size_t output_bytes,
                     const char* const* inputs, const std::size_t* input_bytes,
                     std::size_t n_inputs, char* scratch, std::size_t scratch_bytes) const;
  // The same with spans (all inputs share output_bytes_per_task as size).
  void execute_point(long t, long x, std::span<char> output,
                     std::span<const char* const> inputs, std::span<char> scratch) const;

  // Fills a scratch buffer with scratch_magic (bytes must be a multiple of 8).
  static void prepare_scratch(char* scratch, std::size_t bytes);
  // Checks size and magic word of task (t, x)'s scratch (execute_point does it).
  void check_scratch(long t, long x, const char* scratch, std::size_t bytes) const;

  // --- counting (per the specification's table) ---------------------------------
  long iterations_at(long t, long x) const noexcept;  // load_imbalance's iter'
  long long flops_per_task(long t, long x) const noexcept;
  long long bytes_per_task(long t, long x) const noexcept;
  long long total_tasks() const noexcept;
  long long total_dependencies() const noexcept;  // edges after clipping
  long long total_flops() const noexcept;
  long long total_bytes() const noexcept;

  // --- checks ---------------------------------------------------------------------
  // Flag-level rules that always hold (radix >= 0, period only for spread and
  // random_nearest, kernel requirements on -scratch/-sample, ...). Throws
  // usage_error.
  void check_parameters() const;
  // Structural validation (what -skip-graph-validation skips): spread period
  // <= ceil(W/radix), every interval inside [0, W), no point listed twice,
  // reverse_dependencies mirror dependencies. Throws usage_error.
  void validate() const;

 private:
  template <class F>
  void for_each_clipped(bool reverse, long dset, long x, long lo, long hi, F& f) const;
};

// Block distribution of points over ranks: rank r owns [first, first_next).
inline long block_first(long rank, long nranks, long width) noexcept {
  return rank * width / nranks;
}
// The rank that owns point x under block_first.
inline long block_owner(long x, long nranks, long width) noexcept {
  return ((x + 1) * nranks - 1) / width;
}

// OpenBLAS starts a pool of threads when it is loaded (before main), sized
// by OPENBLAS_NUM_THREADS or the core count; they spin with sched_yield for
// a while and steal cycles from the benchmark's own threads. Task Bench
// calls BLAS from one thread per task, so the pool is never wanted: when the
// variable is unset, this sets it to 1 and re-executes the program (same
// argv, same pid, before MPI or weft start). Call first thing in main.
void ensure_single_threaded_blas(char** argv);

// ---------------------------------------------------------------------------
// Command line and report
// ---------------------------------------------------------------------------

struct app {
  std::vector<task_graph> graphs;
  long nodes = 0;    // -nodes (0: no local/nonlocal estimate)
  int verbose = 0;   // -v adds 1, -vv adds 2
  bool enable_graph_validation = true;  // false with -skip-graph-validation
  bool help = false;  // -h was given (parse() does not print or exit)

  app() = default;
  // Parses argv (argv[0] is the program), validates the graphs, and on error
  // prints the message to stderr and exits with status 1; with -h prints the
  // help to stdout and exits with 0. Unknown flags are ignored (they belong to
  // the implementation).
  app(int argc, const char* const* argv);

  // The same without printing or exiting: throws usage_error; -h sets help
  // and stops parsing. parse(args) takes the flags without a program name.
  static app parse(int argc, const char* const* argv);
  static app parse(const std::vector<std::string>& args);
  static std::string help_text(std::string_view program);

  // "Running Task Benchmark" / configuration (with -v/-vv the dependency
  // listing of every timestep).
  std::string display_text() const;
  void display(std::FILE* out = stdout) const;
  // The report after the run (Total Tasks ... Transfer).
  std::string report_text(double elapsed_seconds) const;
  void report_timing(double elapsed_seconds, std::FILE* out = stdout) const;

  long long total_tasks() const noexcept;
  long long total_dependencies() const noexcept;
  long long total_flops() const noexcept;
  long long total_bytes() const noexcept;
};

// ---------------------------------------------------------------------------
// Serial reference implementation
// ---------------------------------------------------------------------------

// Runs one graph timestep by timestep in the calling thread, validating
// every task. Throws validation_error.
void run_graph_serial(const task_graph& graph);
// Runs every graph of the app, one after another.
void run_serial(const app& app);

// ---------------------------------------------------------------------------
// Template definitions
// ---------------------------------------------------------------------------

template <class F>
void task_graph::for_each_clipped(bool reverse, long dset, long x, long lo, long hi, F& f) const {
  interval_buffer room(max_intervals());
  interval* buf = room.data();
  std::size_t n = reverse ? reverse_dependencies(dset, x, buf) : dependencies(dset, x, buf);
  for (std::size_t i = 0; i < n; ++i) {
    long first = buf[i].first < lo ? lo : buf[i].first;
    long last = buf[i].second >= hi ? hi - 1 : buf[i].second;
    for (long p = first; p <= last; ++p) f(p);
  }
}

template <class F>
void task_graph::for_each_input(long t, long x, F&& f) const {
  if (t <= 0 || t >= steps) return;
  long lo = offset_at(t - 1);
  for_each_clipped(false, dependence_set_at(t), x, lo, lo + width_at(t - 1), f);
}

template <class F>
void task_graph::for_each_output(long t, long x, F&& f) const {
  if (t < 0 || t + 1 >= steps) return;
  long lo = offset_at(t + 1);
  for_each_clipped(true, dependence_set_at(t + 1), x, lo, lo + width_at(t + 1), f);
}

}  // namespace taskbench
