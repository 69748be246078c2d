// Kernels (FLOP and byte counts, scratch handling), execute_point validation,
// and the serial reference runner.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "internal.hpp"  // compute_bound
#include "taskbench/core.hpp"

namespace {

using taskbench::app;
using taskbench::task_graph;

task_graph graph_of(const std::vector<std::string>& flags) { return app::parse(flags).graphs.at(0); }

struct count_case {
  std::vector<std::string> flags;
  long long flops, bytes;
};

TEST(Counting, FlopsAndBytesPerKernel) {
  // Trivial 4 x 4 graph: 16 tasks.
  const std::vector<count_case> cases = {
      {{"-kernel", "empty", "-iter", "10"}, 0, 0},
      {{"-kernel", "busy_wait", "-iter", "10"}, 0, 0},
      {{"-kernel", "compute_bound", "-iter", "10"}, 16 * (128 * 10 + 64), 0},
      {{"-kernel", "compute_bound", "-iter", "0"}, 16 * 64, 0},
      {{"-kernel", "compute_bound2", "-iter", "10"}, 16 * 64 * 10, 0},
      {{"-kernel", "load_imbalance", "-iter", "10"}, 16 * (128 * 10 + 64), 0},
      // N = floor(sqrt(2400 / 24)) = 10; 2376 / 24 = 99 gives N = 9.
      {{"-kernel", "compute_dgemm", "-iter", "3", "-scratch", "2400"}, 16 * 2 * 1000 * 3, 0},
      {{"-kernel", "compute_dgemm", "-iter", "3", "-scratch", "2376"}, 16 * 2 * 729 * 3, 0},
      {{"-kernel", "memory_bound", "-iter", "10", "-scratch", "4096"}, 0, 16 * 4096 * 10 / 16},
      {{"-kernel", "memory_bound", "-iter", "3", "-scratch", "4096", "-sample", "5"}, 0,
       16 * (4096 * 3 / 5)},
      {{"-kernel", "memory_daxpy", "-iter", "10", "-scratch", "4096", "-sample", "4"}, 0,
       16 * 4096 * 10 / 4},
  };
  for (const auto& c : cases) {
    auto a = app::parse(c.flags);
    EXPECT_EQ(a.total_flops(), c.flops) << c.flags[1];
    EXPECT_EQ(a.total_bytes(), c.bytes) << c.flags[1];
    EXPECT_EQ(a.total_tasks(), 16);
  }
}

TEST(Counting, LoadImbalanceIterationsFromTheHash) {
  auto g = graph_of({"-kernel", "load_imbalance", "-iter", "1000", "-imbalance", "1.5", "-width", "7",
                     "-steps", "5", "-and", "-kernel", "load_imbalance", "-iter", "1000", "-imbalance",
                     "1.5", "-width", "7", "-steps", "5"});
  long long expect = 0;
  bool varies = false;
  for (long t = 0; t < 5; ++t)
    for (long x = 0; x < 7; ++x) {
      const std::int64_t words[3] = {0, t, x};
      double u = taskbench::random_uniform(words);
      long it = std::lround((1 + (u - 0.5) * 1.5) * 1000);
      EXPECT_EQ(g.iterations_at(t, x), it);
      EXPECT_GE(it, 0);
      varies |= it != 1000;
      expect += 128LL * it + 64;
    }
  EXPECT_TRUE(varies);
  EXPECT_EQ(g.total_flops(), expect);
  // The second graph (graph_index 1) draws different numbers.
  auto a = app::parse({"-kernel", "load_imbalance", "-iter", "1000", "-imbalance", "1.5", "-and",
                       "-kernel", "load_imbalance", "-iter", "1000", "-imbalance", "1.5"});
  EXPECT_NE(a.graphs[0].total_flops(), a.graphs[1].total_flops());
}

TEST(Counting, DependenciesAfterClipping) {
  EXPECT_EQ(graph_of({"-type", "stencil_1d", "-steps", "9", "-width", "6"}).total_dependencies(), 128);
  EXPECT_EQ(graph_of({"-type", "all_to_all", "-steps", "3", "-width", "5"}).total_dependencies(), 50);
  // tree, width 5, 4 steps: widths 1 2 4 5, each point one parent.
  EXPECT_EQ(graph_of({"-type", "tree", "-steps", "4", "-width", "5"}).total_dependencies(), 2 + 4 + 5);
  // dom, 9 x 6: as listed by -v (see graph_test): 1+2+3+... computed directly.
  auto dom = graph_of({"-type", "dom", "-steps", "9", "-width", "6"});
  long long n = 0;
  for (long t = 0; t < 9; ++t)
    for (long x = dom.offset_at(t); x < dom.offset_at(t) + dom.width_at(t); ++x) n += dom.input_points(t, x).size();
  EXPECT_EQ(dom.total_dependencies(), n);
}

// --- execute_point -----------------------------------------------------------------

struct harness {
  task_graph g;
  std::vector<std::vector<char>> prev, cur;
  std::vector<std::vector<char>> scratch;

  explicit harness(task_graph graph) : g(std::move(graph)) {
    const auto w = static_cast<std::size_t>(g.max_width);
    prev.assign(w, std::vector<char>(g.output_bytes_per_task));
    cur = prev;
    scratch.assign(w, std::vector<char>(g.scratch_bytes_per_task));
    for (auto& s : scratch) task_graph::prepare_scratch(s.data(), s.size());
  }
  void run(long t, long x) {
    std::vector<const char*> in;
    for (long p : g.input_points(t, x)) in.push_back(prev[static_cast<std::size_t>(p)].data());
    auto& s = scratch[static_cast<std::size_t>(x)];
    g.execute_point(t, x, cur[static_cast<std::size_t>(x)], in, s);
  }
  void run_step(long t) {
    for (long x = g.offset_at(t); x < g.offset_at(t) + g.width_at(t); ++x) run(t, x);
    std::swap(prev, cur);
  }
};

TEST(ExecutePoint, FillsOutputWithTimestepAndPoint) {
  harness h(graph_of({"-type", "stencil_1d", "-width", "5", "-output", "40"}));
  h.run_step(0);
  h.run_step(1);
  for (long x = 0; x < 5; ++x) {
    const auto& out = h.prev[static_cast<std::size_t>(x)];
    for (int i = 0; i < 2; ++i) {
      std::int64_t pair[2];
      std::memcpy(pair, out.data() + 16 * i, 16);
      EXPECT_EQ(pair[0], 1);
      EXPECT_EQ(pair[1], x);
    }
    for (int b = 32; b < 40; ++b) EXPECT_EQ(out[static_cast<std::size_t>(b)], 0);  // tail zeroed
  }
}

TEST(ExecutePoint, DetectsOneCorruptByte) {
  harness h(graph_of({"-type", "stencil_1d", "-width", "5", "-output", "64"}));
  h.run_step(0);
  // Point 2's output, pair 3, point field.
  h.prev[2][16 * 3 + 8] ^= 0x01;
  h.run(1, 0);  // does not read point 2
  try {
    h.run(1, 2);  // inputs 1, 2, 3: point 2 is input 1
    FAIL() << "no validation_error";
  } catch (const taskbench::validation_error& e) {
    EXPECT_EQ(e.graph_index(), 0);
    EXPECT_EQ(e.timestep(), 1);
    EXPECT_EQ(e.point(), 2);
    EXPECT_EQ(e.input(), 1);
    EXPECT_EQ(e.position(), 3);
    std::string what = e.what();
    EXPECT_NE(what.find("graph 0 timestep 1 point 2) input 1"), std::string::npos) << what;
    EXPECT_NE(what.find("At position 3 within the buffer, expected value (timestep 0 point 2) but got "
                        "(timestep 0 point 3)"),
              std::string::npos)
        << what;
  }
  try {
    h.run(1, 3);  // inputs 2, 3, 4: point 2 is input 0
    FAIL() << "no validation_error";
  } catch (const taskbench::validation_error& e) {
    EXPECT_EQ(e.point(), 3);
    EXPECT_EQ(e.input(), 0);
  }
}

TEST(ExecutePoint, DetectsCorruptTimestepInSecondGraph) {
  auto a = app::parse({"-and", "-type", "no_comm", "-width", "3", "-steps", "3"});
  harness h(a.graphs[1]);
  h.run_step(0);
  h.run_step(1);
  h.prev[1][0] ^= 0x40;  // timestep field of pair 0 of point 1
  try {
    h.run(2, 1);
    FAIL();
  } catch (const taskbench::validation_error& e) {
    EXPECT_EQ(e.graph_index(), 1);
    EXPECT_EQ(e.timestep(), 2);
    EXPECT_EQ(e.point(), 1);
    EXPECT_EQ(e.input(), 0);
    EXPECT_EQ(e.position(), 0);
  }
}

TEST(ExecutePoint, RejectsWrongSizesCountsAndTasks) {
  auto g = graph_of({"-type", "stencil_1d", "-width", "4", "-output", "32"});
  std::vector<char> out(32), a(32), b(32), c(32), small(16);
  harness h(g);
  h.run_step(0);
  const char* ok[3] = {h.prev[0].data(), h.prev[1].data(), h.prev[2].data()};
  std::size_t sizes[3] = {32, 32, 32};
  EXPECT_NO_THROW(g.execute_point(1, 1, out.data(), 32, ok, sizes, 3, nullptr, 0));
  // Too few / too many inputs.
  EXPECT_THROW(g.execute_point(1, 1, out.data(), 32, ok, sizes, 2, nullptr, 0), taskbench::validation_error);
  EXPECT_THROW(g.execute_point(1, 0, out.data(), 32, ok, sizes, 3, nullptr, 0), taskbench::validation_error);
  // Wrong input size.
  std::size_t bad_sizes[3] = {32, 16, 32};
  EXPECT_THROW(g.execute_point(1, 1, out.data(), 32, ok, bad_sizes, 3, nullptr, 0),
               taskbench::validation_error);
  // Wrong output size.
  EXPECT_THROW(g.execute_point(1, 1, out.data(), 16, ok, sizes, 3, nullptr, 0), taskbench::validation_error);
  // Inputs in the wrong order.
  const char* swapped[3] = {h.prev[1].data(), h.prev[0].data(), h.prev[2].data()};
  EXPECT_THROW(g.execute_point(1, 1, out.data(), 32, swapped, sizes, 3, nullptr, 0),
               taskbench::validation_error);
  // Not a task of the graph.
  EXPECT_THROW(g.execute_point(4, 0, out.data(), 32, nullptr, nullptr, 0, nullptr, 0),
               taskbench::validation_error);
  EXPECT_THROW(g.execute_point(0, 4, out.data(), 32, nullptr, nullptr, 0, nullptr, 0),
               taskbench::validation_error);
}

TEST(Scratch, PrepareFillsMagicAndUnpreparedScratchFails) {
  auto g = graph_of({"-kernel", "memory_bound", "-scratch", "256", "-iter", "4"});
  std::vector<char> scratch(256, 0), out(16);
  EXPECT_THROW(g.execute_point(0, 0, out.data(), 16, nullptr, nullptr, 0, scratch.data(), 256),
               taskbench::validation_error);
  task_graph::prepare_scratch(scratch.data(), scratch.size());
  for (std::size_t i = 0; i < 256; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, scratch.data() + i, 8);
    EXPECT_EQ(w, taskbench::scratch_magic);
  }
  EXPECT_NO_THROW(g.execute_point(0, 0, out.data(), 16, nullptr, nullptr, 0, scratch.data(), 256));
  EXPECT_THROW(g.execute_point(0, 1, out.data(), 16, nullptr, nullptr, 0, scratch.data(), 128),
               taskbench::validation_error);
  EXPECT_THROW(task_graph::prepare_scratch(scratch.data(), 12), std::invalid_argument);
}

TEST(Scratch, MemoryBoundKeepsEveryWordMagic) {
  auto g = graph_of({"-kernel", "memory_bound", "-scratch", "4096", "-sample", "3", "-iter", "7", "-steps", "6"});
  harness h(g);
  for (long t = 0; t < 6; ++t) h.run_step(t);
  for (const auto& s : h.scratch)
    for (std::size_t i = 0; i < s.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      ASSERT_EQ(w, taskbench::scratch_magic);
    }
}

TEST(Serial, EveryTypeAndKernelValidates) {
  const std::vector<std::vector<std::string>> kernels = {
      {"-kernel", "empty"},
      {"-kernel", "busy_wait", "-iter", "50"},
      {"-kernel", "compute_bound", "-iter", "50"},
      {"-kernel", "compute_bound2", "-iter", "50"},
      {"-kernel", "load_imbalance", "-iter", "50", "-imbalance", "2"},
      {"-kernel", "memory_bound", "-iter", "5", "-scratch", "1024"},
      {"-kernel", "memory_daxpy", "-iter", "5", "-scratch", "1024"},
      {"-kernel", "compute_dgemm", "-iter", "2", "-scratch", "2400"},
  };
  for (auto type : taskbench::all_dependence_types()) {
    if (!taskbench::is_supported(type)) continue;
    for (const auto& k : kernels) {
      std::vector<std::string> flags = {"-type", std::string(taskbench::name_of(type)), "-steps", "7",
                                        "-width", "7", "-output", "48"};
      flags.insert(flags.end(), k.begin(), k.end());
      auto a = app::parse(flags);
      EXPECT_NO_THROW(taskbench::run_serial(a)) << flags[1] << " " << k[1];
    }
  }
}

TEST(Serial, DgemmAndDaxpyKeepTheFirstWord) {
  for (std::vector<std::string> flags :
       {std::vector<std::string>{"-kernel", "compute_dgemm", "-iter", "3", "-scratch", "24000"},
        std::vector<std::string>{"-kernel", "memory_daxpy", "-iter", "40", "-scratch", "800", "-sample", "5"}}) {
    flags.insert(flags.end(), {"-steps", "5", "-width", "2"});
    harness h(graph_of(flags));
    for (long t = 0; t < 5; ++t) h.run_step(t);
    for (const auto& s : h.scratch) {
      std::uint64_t w;
      std::memcpy(&w, s.data(), 8);
      EXPECT_EQ(w, taskbench::scratch_magic);
    }
  }
}

TEST(Kernels, ComputeBoundRunsEveryIteration) {
  // The arithmetic, not its duration: every count of rounds gives its own
  // sum, so a kernel that skipped or cut short its rounds would show here.
  // (execute_point keeps the result, so the call cannot be dropped there.)
  auto reference = [](long iterations) {
    double sum = 0.0;
    for (int k = 0; k < 64; ++k) {
      double a = -0.5 + 0.004 * k;
      for (long it = 0; it < iterations; ++it) a = std::fma(a, a, a);
      sum += a;
    }
    return sum;
  };
  for (long n : {0L, 1L, 7L, 1000L, 100000L}) {
    const double want = reference(n);
    // The portable variant rounds a*a + a twice, the vector ones once.
    EXPECT_NEAR(taskbench::detail::compute_bound(n), want, 1e-9 * std::fabs(want)) << n << " rounds";
  }
  EXPECT_NE(reference(100000), reference(100001));
}

}  // namespace
