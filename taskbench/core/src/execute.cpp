// execute_point: input validation, kernel, output; scratch preparation.
#include <cstdarg>
#include <cstring>

#include "internal.hpp"

namespace taskbench {

namespace detail {

namespace {
// Appends printf-style output to `out`; one vsnprintf when it fits in a
// small stack buffer, otherwise a second one straight into `out`.
void vappendf(std::string& out, const char* fmt, va_list ap) {
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(small, sizeof small, fmt, ap);
  if (n >= 0 && static_cast<std::size_t>(n) < sizeof small) {
    out.append(small, static_cast<std::size_t>(n));
  } else if (n >= 0) {
    std::size_t old = out.size();
    out.resize(old + static_cast<std::size_t>(n) + 1);
    std::vsnprintf(out.data() + old, static_cast<std::size_t>(n) + 1, fmt, ap2);
    out.resize(old + static_cast<std::size_t>(n));
  }
  va_end(ap2);
}
}  // namespace

std::string format(const char* fmt, ...) {
  std::string out;
  va_list ap;
  va_start(ap, fmt);
  vappendf(out, fmt, ap);
  va_end(ap);
  return out;
}

void appendf(std::string& out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vappendf(out, fmt, ap);
  va_end(ap);
}

}  // namespace detail

namespace {

[[noreturn]] void fail(const std::string& message, const task_graph& g, long t, long x, long input,
                       long position) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  throw validation_error(message, g.graph_index, t, x, input, position);
}

// Checks one input buffer: its size and that every (timestep, point) pair is
// (t-1, producer).
void check_input(const task_graph& g, long t, long x, std::size_t idx, long producer,
                 const char* data, std::size_t bytes) {
  if (bytes != g.output_bytes_per_task || (data == nullptr && bytes > 0))
    fail(detail::format("error: Task Bench detected a wrong input size in task (graph %ld timestep "
                        "%ld point %ld) input %zu (from point %ld): expected %zu bytes but got %zu",
                        g.graph_index, t, x, idx, producer, g.output_bytes_per_task, bytes),
         g, t, x, static_cast<long>(idx), -1);
  const std::int64_t want_t = t - 1, want_p = producer;
  const std::size_t pairs = bytes / 16;
  for (std::size_t i = 0; i < pairs; ++i) {
    std::int64_t got[2];
    std::memcpy(got, data + 16 * i, 16);
    if (got[0] != want_t || got[1] != want_p) [[unlikely]]
      fail(detail::format("error: Task Bench detected a corrupted value in task (graph %ld timestep "
                          "%ld point %ld) input %zu\n  At position %zu within the buffer, expected "
                          "value (timestep %ld point %ld) but got (timestep %lld point %lld)",
                          g.graph_index, t, x, idx, i, t - 1, producer,
                          static_cast<long long>(got[0]), static_cast<long long>(got[1])),
           g, t, x, static_cast<long>(idx), static_cast<long>(i));
  }
}

template <class Input>
void execute(const task_graph& g, long t, long x, char* output, std::size_t output_bytes,
             std::size_t n_inputs, Input&& input, char* scratch, std::size_t scratch_bytes) {
  const long long trace_start = detail::trace_on ? detail::trace_clock() : 0;
  if (!g.is_active(t, x))
    fail(detail::format("error: Task Bench was asked to run task (graph %ld timestep %ld point %ld), "
                        "which is not in the graph (%ld timesteps; points %ld..%ld active)",
                        g.graph_index, t, x, g.steps, g.offset_at(t), g.offset_at(t) + g.width_at(t) - 1),
         g, t, x, -1, -1);

  // Inputs, in the order of for_each_input; counted and checked in one pass.
  std::size_t idx = 0;
  bool too_many = false;
  detail::for_each_input_interval(g, t, x, [&](long first, long last) {
    for (long p = first; p <= last; ++p) {
      if (idx >= n_inputs) {
        too_many = true;
        ++idx;
        continue;
      }
      auto [data, bytes] = input(idx);
      check_input(g, t, x, idx, p, data, bytes);
      ++idx;
    }
  });
  if (too_many || idx != n_inputs)
    fail(detail::format("error: Task Bench detected a wrong number of inputs in task (graph %ld "
                        "timestep %ld point %ld): expected %zu but got %zu",
                        g.graph_index, t, x, idx, n_inputs),
         g, t, x, -1, -1);

  if (output_bytes != g.output_bytes_per_task || output == nullptr)
    fail(detail::format("error: Task Bench detected a wrong output size in task (graph %ld timestep "
                        "%ld point %ld): expected %zu bytes but got %zu",
                        g.graph_index, t, x, g.output_bytes_per_task, output_bytes),
         g, t, x, -1, -1);

  g.check_scratch(t, x, scratch, scratch_bytes);
  detail::run_kernel(g, t, x, scratch, scratch_bytes);

  const std::int64_t pair[2] = {t, x};
  const std::size_t pairs = output_bytes / 16;
  for (std::size_t i = 0; i < pairs; ++i) std::memcpy(output + 16 * i, pair, 16);
  if (output_bytes > pairs * 16) std::memset(output + pairs * 16, 0, output_bytes - pairs * 16);
  if (detail::trace_on) detail::trace_task(g.graph_index, t, x, trace_start);
}

}  // namespace

void task_graph::execute_point(long t, long x, char* output, std::size_t output_bytes,
                               const char* const* inputs, const std::size_t* input_bytes,
                               std::size_t n_inputs, char* scratch, std::size_t scratch_bytes) const {
  execute(*this, t, x, output, output_bytes, n_inputs,
          [&](std::size_t i) { return std::pair<const char*, std::size_t>(inputs[i], input_bytes[i]); },
          scratch, scratch_bytes);
}

void task_graph::execute_point(long t, long x, std::span<char> output,
                               std::span<const char* const> inputs, std::span<char> scratch) const {
  execute(*this, t, x, output.data(), output.size(), inputs.size(),
          [&](std::size_t i) {
            return std::pair<const char*, std::size_t>(inputs[i], output_bytes_per_task);
          },
          scratch.data(), scratch.size());
}

void task_graph::prepare_scratch(char* scratch, std::size_t bytes) {
  if (bytes % 8 != 0)
    throw std::invalid_argument(
        detail::format("taskbench::prepare_scratch: %zu bytes is not a multiple of 8", bytes));
  const std::uint64_t magic = scratch_magic;
  for (std::size_t i = 0; i < bytes; i += 8) std::memcpy(scratch + i, &magic, 8);
}

void task_graph::check_scratch(long t, long x, const char* scratch, std::size_t bytes) const {
  if (bytes != scratch_bytes_per_task || (bytes > 0 && scratch == nullptr))
    fail(detail::format("error: Task Bench detected a wrong scratch size in task (graph %ld timestep "
                        "%ld point %ld): expected %zu bytes but got %zu",
                        graph_index, t, x, scratch_bytes_per_task, bytes),
         *this, t, x, -1, -1);
  if (bytes >= 8) {
    std::uint64_t word;
    std::memcpy(&word, scratch, 8);
    if (word != scratch_magic)
      fail(detail::format("error: Task Bench detected corrupted scratch memory in task (graph %ld "
                          "timestep %ld point %ld): the first word is 0x%016llx, expected 0x%016llx "
                          "(was it filled with task_graph::prepare_scratch?)",
                          graph_index, t, x, static_cast<unsigned long long>(word),
                          static_cast<unsigned long long>(scratch_magic)),
           *this, t, x, -1, 0);
  }
}

}  // namespace taskbench
