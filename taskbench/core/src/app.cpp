// Command line (the flags of Task Bench), configuration display and report.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "internal.hpp"

namespace taskbench {

namespace {

using detail::format;

long parse_long(const char* flag, const char* text) {
  long value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec == std::errc::result_out_of_range)
    throw usage_error(format("error: Invalid flag \"%s %s\" is out of range", flag, text));
  if (ec != std::errc() || ptr != end || ptr == text)
    throw usage_error(format("error: Invalid flag \"%s %s\" must be an integer", flag, text));
  return value;
}

double parse_double(const char* flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !std::isfinite(value))
    throw usage_error(format("error: Invalid flag \"%s %s\" must be a number", flag, text));
  return value;
}

task_graph default_graph(long index) {
  task_graph g;
  g.graph_index = index;
  return g;
}

}  // namespace

app app::parse(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  argv.reserve(args.size() + 2);
  argv.push_back("taskbench");
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  return parse(static_cast<int>(args.size() + 1), argv.data());
}

app app::parse(int argc, const char* const* argv) {
  app a;
  task_graph g = default_graph(0);
  bool period_given = false;

  auto finish_graph = [&] {
    if (!period_given) g.period = needs_period(g.type) ? 3 : 0;
    g.check_parameters();
    a.graphs.push_back(g);
    g = default_graph(static_cast<long>(a.graphs.size()));
    period_given = false;
  };

  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (flag == nullptr) break;
    auto is = [&](const char* name) { return std::strcmp(flag, name) == 0; };
    auto value = [&]() -> const char* {
      if (i + 1 >= argc || argv[i + 1] == nullptr)
        throw usage_error(format("error: Flag \"%s\" requires an argument", flag));
      return argv[++i];
    };
    auto long_value = [&] { return parse_long(flag, value()); };
    auto double_value = [&] { return parse_double(flag, value()); };

    if (is("-h")) {
      a.help = true;
      return a;
    } else if (is("-nodes")) {
      long v = long_value();
      if (v <= 0) throw usage_error(format("error: Invalid flag \"-nodes %ld\" must be > 0", v));
      a.nodes = v;
    } else if (is("-v")) {
      a.verbose += 1;
    } else if (is("-vv")) {
      a.verbose += 2;
    } else if (is("-skip-graph-validation")) {
      a.enable_graph_validation = false;
    } else if (is("-steps")) {
      long v = long_value();
      if (v <= 0) throw usage_error(format("error: Invalid flag \"-steps %ld\" must be > 0", v));
      g.steps = v;
    } else if (is("-width")) {
      long v = long_value();
      if (v <= 0) throw usage_error(format("error: Invalid flag \"-width %ld\" must be > 0", v));
      g.max_width = v;
    } else if (is("-type")) {
      const char* name = value();
      auto type = dependence_type_from_name(name);
      if (!type) throw usage_error(format("error: Invalid flag \"-type %s\"", name));
      g.type = *type;
    } else if (is("-radix")) {
      long v = long_value();
      if (v < 0) throw usage_error(format("error: Invalid flag \"-radix %ld\" must be >= 0", v));
      g.radix = v;
    } else if (is("-period")) {
      long v = long_value();
      if (v <= 0) throw usage_error(format("error: Invalid flag \"-period %ld\" must be > 0", v));
      g.period = v;
      period_given = true;
    } else if (is("-fraction")) {
      double v = double_value();
      if (v < 0 || v > 1)
        throw usage_error(format("error: Invalid flag \"-fraction %f\" must be >= 0 and <= 1", v));
      g.fraction = v;
    } else if (is("-kernel")) {
      const char* name = value();
      auto type = kernel_type_from_name(name);
      if (!type) throw usage_error(format("error: Invalid flag \"-kernel %s\"", name));
      g.kernel.type = *type;
    } else if (is("-iter")) {
      long v = long_value();
      if (v < 0) throw usage_error(format("error: Invalid flag \"-iter %ld\" must be >= 0", v));
      g.kernel.iterations = v;
    } else if (is("-output")) {
      long v = long_value();
      if (v < 16) throw usage_error(format("error: Invalid flag \"-output %ld\" must be >= 16", v));
      g.output_bytes_per_task = static_cast<std::size_t>(v);
    } else if (is("-scratch")) {
      long v = long_value();
      if (v < 0) throw usage_error(format("error: Invalid flag \"-scratch %ld\" must be >= 0", v));
      if (v % 8 != 0)
        throw usage_error(format("error: Invalid flag \"-scratch %ld\" must be a multiple of 8", v));
      g.scratch_bytes_per_task = static_cast<std::size_t>(v);
    } else if (is("-sample")) {
      long v = long_value();
      if (v < 0 || v > 0x7fffffffL)
        throw usage_error(format("error: Invalid flag \"-sample %ld\" must be >= 0", v));
      g.kernel.samples = static_cast<int>(v);
    } else if (is("-imbalance")) {
      double v = double_value();
      if (v < 0 || v > 2)
        throw usage_error(format("error: Invalid flag \"-imbalance %f\" must be >= 0 and <= 2", v));
      g.kernel.imbalance = v;
    } else if (is("-field")) {
      long v = long_value();
      if (v <= 0 || v > 0x7fffffffL)
        throw usage_error(format("error: Invalid flag \"-field %ld\" must be > 0", v));
      g.fields = static_cast<int>(v);
    } else if (is("-and")) {
      finish_graph();
    }
    // Anything else belongs to the implementation.
  }
  finish_graph();

  if (a.enable_graph_validation)
    for (const auto& graph : a.graphs) graph.validate();
  return a;
}

app::app(int argc, const char* const* argv) {
  try {
    *this = parse(argc, argv);
  } catch (const usage_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(1);
  }
  if (help) {
    std::fputs(help_text(argc > 0 && argv[0] ? argv[0] : "taskbench").c_str(), stdout);
    std::fflush(stdout);
    std::exit(0);
  }
}

std::string app::help_text(std::string_view program) {
  std::string s;
  std::string prog(program);
  auto opt = [&](const char* flag, const char* text) { detail::appendf(s, "  %-24s %s\n", flag, text); };
  detail::appendf(s, "%s: A Task Benchmark (weft)\n", prog.c_str());
  s += "\nGeneral options:\n";
  opt("-h", "show this help message and exit");
  opt("-nodes [INT]", "number of nodes to use for estimating transfer statistics");
  opt("-v", "enable verbose output (dependencies of every timestep)");
  opt("-vv", "enable extra verbose output (also reverse dependencies)");
  s += "\nOptions for configuring the task graph:\n";
  opt("-steps [INT]", "height of task graph (default 4)");
  opt("-width [INT]", "width of task graph (default 4)");
  opt("-type [DEP]", "dependency pattern (see available list below; default trivial)");
  opt("-radix [INT]", "radix of dependency pattern (nearest, spread, random_nearest; default 3)");
  opt("-period [INT]", "period of dependency pattern (only spread and random_nearest; default 3)");
  opt("-fraction [FLOAT]", "fraction of connected dependencies (only random_nearest; default 0.25)");
  opt("-and", "start configuring the next task graph (defaults reset)");
  s += "\nOptions for configuring kernels:\n";
  opt("-kernel [KERNEL]", "kernel type (see available list below; default empty)");
  opt("-iter [INT]", "number of iterations (default 0)");
  opt("-output [INT]", "output bytes per task (default 16, at least 16)");
  opt("-scratch [INT]", "scratch bytes per task, a multiple of 8 (memory_bound, memory_daxpy, "
                        "compute_dgemm; default 0)");
  opt("-sample [INT]", "number of samples (chunks) of the memory kernels (default 16)");
  opt("-imbalance [FLOAT]", "amount of load imbalance, 0..2 (load_imbalance; default 0)");
  s += "\nSupported dependency patterns:\n";
  for (auto t : all_dependence_types()) {
    std::string name(name_of(t));
    detail::appendf(s, "  %s%s\n", name.c_str(), is_supported(t) ? "" : "  (not supported by weft: rejected)");
  }
  s += "\nSupported kernel types:\n";
  for (auto k : all_kernel_types()) {
    std::string name(name_of(k));
    const char* note = !is_supported(k) ? "  (not supported by weft: rejected)"
                       : (k == kernel_type::memory_daxpy || k == kernel_type::compute_dgemm) &&
                               !detail::have_blas()
                           ? "  (needs BLAS: not in this build)"
                           : "";
    detail::appendf(s, "  %s%s\n", name.c_str(), note);
  }
  s += "\nLess frequently used options:\n";
  opt("-field [INT]", "number of fields (a buffering hint for some implementations)");
  opt("-skip-graph-validation", "skip task graph validation");
  s += "\nFlags not listed here are left to the implementation.\n";
  return s;
}

// ---------------------------------------------------------------------------
// Display
// ---------------------------------------------------------------------------

std::string app::display_text() const {
  std::string s;
  s += "Running Task Benchmark\n";
  s += "  Configuration:\n";
  int i = 0;
  for (const auto& g : graphs) {
    ++i;
    std::string tname(name_of(g.type)), kname(name_of(g.kernel.type));
    detail::appendf(s, "    Task Graph %d:\n", i);
    detail::appendf(s, "      Time Steps: %ld\n", g.steps);
    detail::appendf(s, "      Max Width: %ld\n", g.max_width);
    detail::appendf(s, "      Dependence Type: %s\n", tname.c_str());
    detail::appendf(s, "      Radix: %ld\n", g.radix);
    detail::appendf(s, "      Period: %ld\n", g.period);
    detail::appendf(s, "      Fraction Connected: %f\n", g.fraction);
    s += "      Kernel:\n";
    detail::appendf(s, "        Type: %s\n", kname.c_str());
    detail::appendf(s, "        Iterations: %ld\n", g.kernel.iterations);
    detail::appendf(s, "        Samples: %d\n", g.kernel.samples);
    detail::appendf(s, "        Imbalance: %f\n", g.kernel.imbalance);
    detail::appendf(s, "      Output Bytes: %lu\n", static_cast<unsigned long>(g.output_bytes_per_task));
    detail::appendf(s, "      Scratch Bytes: %lu\n", static_cast<unsigned long>(g.scratch_bytes_per_task));
    if (verbose <= 0) continue;
    for (long t = 0; t < g.steps; ++t) {
      long offset = g.offset_at(t), width = g.width_at(t);
      long last_offset = g.offset_at(t - 1), last_width = g.width_at(t - 1);
      detail::appendf(s, "      Timestep %ld (offset %ld, width %ld, last offset %ld, last width %ld):\n",
                      t, offset, width, last_offset, last_width);
      s += "        Points:";
      for (long p = offset; p < offset + width; ++p) detail::appendf(s, " %ld", p);
      s += "\n        Dependencies:\n";
      for (long p = offset; p < offset + width; ++p) {
        detail::appendf(s, "          Point %ld:", p);
        g.for_each_input(t, p, [&](long d) { detail::appendf(s, " %ld", d); });
        s += "\n";
      }
      if (verbose > 1) {
        s += "        Reverse Dependencies:\n";
        for (long p = last_offset; p < last_offset + last_width; ++p) {
          detail::appendf(s, "          Point %ld:", p);
          g.for_each_output(t - 1, p, [&](long c) { detail::appendf(s, " %ld", c); });
          s += "\n";
        }
      }
    }
  }
  return s;
}

void app::display(std::FILE* out) const {
  std::string s = display_text();
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

namespace {

// The points counted as local to node n: [floor(n*W/N), floor((n+1)*W/N) - 1],
// the range Task Bench's own estimate uses (with a consumer's node
// n = floor(x*N/W)), so that the printed estimates compare directly. Where N
// does not divide W the two partitions differ at the edges (W = 1, N = 2
// counts the only point as nonlocal), as they do in Task Bench.
interval node_points(long node, long nodes, long width) {
  return {static_cast<long>(static_cast<long long>(node) * width / nodes),
          static_cast<long>(static_cast<long long>(node + 1) * width / nodes) - 1};
}

}  // namespace

std::string app::report_text(double elapsed_seconds) const {
  long long tasks = 0, deps = 0, local = 0, nonlocal = 0, flops = 0, bytes = 0;
  long long local_bytes = 0, nonlocal_bytes = 0;
  for (const auto& g : graphs) {
    long long g_deps = 0, g_local = 0, g_nonlocal = 0;
    for (long t = 0; t < g.steps; ++t) {
      long offset = g.offset_at(t), width = g.width_at(t);
      for (long x = offset; x < offset + width; ++x) {
        interval mine{0, -1};
        if (nodes > 0) {
          long node = static_cast<long>(static_cast<long long>(x) * nodes / g.max_width);
          mine = node_points(node, nodes, g.max_width);
        }
        detail::for_each_input_interval(g, t, x, [&](long first, long last) {
          long long n = last - first + 1;
          g_deps += n;
          if (nodes > 0) {
            long lo = std::max(first, mine.first), hi = std::min(last, mine.second);
            long long in = hi >= lo ? hi - lo + 1 : 0;
            g_local += in;
            g_nonlocal += n - in;
          }
        });
      }
    }
    tasks += g.total_tasks();
    deps += g_deps;
    local += g_local;
    nonlocal += g_nonlocal;
    flops += g.total_flops();
    bytes += g.total_bytes();
    local_bytes += g_local * static_cast<long long>(g.output_bytes_per_task);
    nonlocal_bytes += g_nonlocal * static_cast<long long>(g.output_bytes_per_task);
  }

  std::string s;
  detail::appendf(s, "Total Tasks %lld\n", tasks);
  detail::appendf(s, "Total Dependencies %lld\n", deps);
  if (nodes > 0) {
    detail::appendf(s, "  Local Dependencies %lld (estimated)\n", local);
    detail::appendf(s, "  Nonlocal Dependencies %lld (estimated)\n", nonlocal);
    detail::appendf(s, "  Number of Nodes (used for estimate) %ld\n", nodes);
  } else {
    s += "  Unable to estimate local/nonlocal dependencies\n";
  }
  detail::appendf(s, "Total FLOPs %lld\n", flops);
  detail::appendf(s, "Total Bytes %lld\n", bytes);
  detail::appendf(s, "Elapsed Time %e seconds\n", elapsed_seconds);
  detail::appendf(s, "FLOP/s %e\n", static_cast<double>(flops) / elapsed_seconds);
  detail::appendf(s, "B/s %e\n", static_cast<double>(bytes) / elapsed_seconds);
  s += "Transfer (estimated):\n";
  if (nodes > 0) {
    detail::appendf(s, "  Local Bytes %lld\n", local_bytes);
    detail::appendf(s, "  Nonlocal Bytes %lld\n", nonlocal_bytes);
    detail::appendf(s, "  Local Bandwidth %e B/s\n", static_cast<double>(local_bytes) / elapsed_seconds);
    detail::appendf(s, "  Nonlocal Bandwidth %e B/s\n",
                    static_cast<double>(nonlocal_bytes) / elapsed_seconds);
  } else {
    s += "  Unable to estimate local/nonlocal transfer\n";
  }
  return s;
}

void app::report_timing(double elapsed_seconds, std::FILE* out) const {
  std::string s = report_text(elapsed_seconds);
  std::fwrite(s.data(), 1, s.size(), out);
  std::fflush(out);
}

long long app::total_tasks() const noexcept {
  long long n = 0;
  for (const auto& g : graphs) n += g.total_tasks();
  return n;
}
long long app::total_dependencies() const noexcept {
  long long n = 0;
  for (const auto& g : graphs) n += g.total_dependencies();
  return n;
}
long long app::total_flops() const noexcept {
  long long n = 0;
  for (const auto& g : graphs) n += g.total_flops();
  return n;
}
long long app::total_bytes() const noexcept {
  long long n = 0;
  for (const auto& g : graphs) n += g.total_bytes();
  return n;
}

// ---------------------------------------------------------------------------
// Serial reference implementation
// ---------------------------------------------------------------------------

void run_graph_serial(const task_graph& g) {
  const std::size_t ob = g.output_bytes_per_task, sb = g.scratch_bytes_per_task;
  const auto W = static_cast<std::size_t>(g.max_width);
  std::vector<char> prev(W * ob), cur(W * ob), scratch(W * sb);
  task_graph::prepare_scratch(scratch.data(), scratch.size());
  std::vector<const char*> inputs;
  std::vector<std::size_t> sizes;
  for (long t = 0; t < g.steps; ++t) {
    long offset = g.offset_at(t), width = g.width_at(t);
    for (long x = offset; x < offset + width; ++x) {
      inputs.clear();
      g.for_each_input(t, x, [&](long p) { inputs.push_back(prev.data() + static_cast<std::size_t>(p) * ob); });
      sizes.assign(inputs.size(), ob);
      const auto ux = static_cast<std::size_t>(x);
      g.execute_point(t, x, cur.data() + ux * ob, ob, inputs.data(), sizes.data(), inputs.size(),
                      scratch.data() + ux * sb, sb);
    }
    std::swap(prev, cur);
  }
}

void run_serial(const app& a) {
  for (const auto& g : a.graphs) run_graph_serial(g);
}

}  // namespace taskbench
