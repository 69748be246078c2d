// Flags, defaults, -and, error messages, and the exact printed text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "taskbench/core.hpp"

namespace {

using taskbench::app;
using taskbench::dependence_type;
using taskbench::kernel_type;

std::string error_of(const std::vector<std::string>& flags) {
  try {
    app::parse(flags);
  } catch (const taskbench::usage_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Flags, Defaults) {
  auto a = app::parse(std::vector<std::string>{});
  ASSERT_EQ(a.graphs.size(), 1u);
  const auto& g = a.graphs[0];
  EXPECT_EQ(g.steps, 4);
  EXPECT_EQ(g.max_width, 4);
  EXPECT_EQ(g.type, dependence_type::trivial);
  EXPECT_EQ(g.radix, 3);
  EXPECT_EQ(g.period, 0);
  EXPECT_DOUBLE_EQ(g.fraction, 0.25);
  EXPECT_EQ(g.kernel.type, kernel_type::empty);
  EXPECT_EQ(g.kernel.iterations, 0);
  EXPECT_EQ(g.kernel.samples, 16);
  EXPECT_DOUBLE_EQ(g.kernel.imbalance, 0.0);
  EXPECT_EQ(g.output_bytes_per_task, 16u);
  EXPECT_EQ(g.scratch_bytes_per_task, 0u);
  EXPECT_EQ(g.graph_index, 0);
  EXPECT_EQ(a.nodes, 0);
  EXPECT_EQ(a.verbose, 0);
  EXPECT_TRUE(a.enable_graph_validation);
  EXPECT_FALSE(a.help);
}

TEST(Flags, AllFlagsAndAndResetsDefaults) {
  auto a = app::parse({"-steps", "7", "-width", "9", "-type", "random_nearest", "-radix", "5", "-period",
                       "2", "-fraction", "0.5", "-kernel", "memory_bound", "-iter", "3", "-output", "64",
                       "-scratch", "128", "-sample", "4", "-imbalance", "0.5", "-field", "2", "-nodes", "3",
                       "-v", "-vv", "-and", "-type", "spread", "-and", "-skip-graph-validation"});
  ASSERT_EQ(a.graphs.size(), 3u);
  const auto& g = a.graphs[0];
  EXPECT_EQ(g.steps, 7);
  EXPECT_EQ(g.max_width, 9);
  EXPECT_EQ(g.type, dependence_type::random_nearest);
  EXPECT_EQ(g.radix, 5);
  EXPECT_EQ(g.period, 2);
  EXPECT_DOUBLE_EQ(g.fraction, 0.5);
  EXPECT_EQ(g.kernel.type, kernel_type::memory_bound);
  EXPECT_EQ(g.kernel.iterations, 3);
  EXPECT_EQ(g.output_bytes_per_task, 64u);
  EXPECT_EQ(g.scratch_bytes_per_task, 128u);
  EXPECT_EQ(g.kernel.samples, 4);
  EXPECT_DOUBLE_EQ(g.kernel.imbalance, 0.5);
  EXPECT_EQ(g.fields, 2);
  EXPECT_EQ(a.nodes, 3);
  EXPECT_EQ(a.verbose, 3);
  EXPECT_FALSE(a.enable_graph_validation);
  // Second graph: defaults again, period defaults to 3 for spread.
  const auto& s = a.graphs[1];
  EXPECT_EQ(s.graph_index, 1);
  EXPECT_EQ(s.steps, 4);
  EXPECT_EQ(s.type, dependence_type::spread);
  EXPECT_EQ(s.period, 3);
  EXPECT_EQ(s.radix, 3);
  EXPECT_EQ(s.kernel.type, kernel_type::empty);
  EXPECT_EQ(s.output_bytes_per_task, 16u);
  EXPECT_EQ(a.graphs[2].graph_index, 2);
  EXPECT_EQ(a.graphs[2].period, 0);
}

TEST(Flags, UnknownFlagsAreLeftAlone) {
  auto a = app::parse({"-impl", "dataflow", "--weft:threads=2", "-worker", "3", "-steps", "5", "-warmup"});
  EXPECT_EQ(a.graphs[0].steps, 5);
}

TEST(Flags, HelpStopsParsing) {
  auto a = app::parse({"-h", "-steps", "0"});
  EXPECT_TRUE(a.help);
  std::string h = app::help_text("prog");
  for (auto t : taskbench::all_dependence_types()) EXPECT_NE(h.find(taskbench::name_of(t)), std::string::npos);
  for (auto k : taskbench::all_kernel_types()) EXPECT_NE(h.find(taskbench::name_of(k)), std::string::npos);
  for (const char* f : {"-steps", "-width", "-type", "-radix", "-period", "-fraction", "-kernel", "-iter",
                        "-output", "-scratch", "-sample", "-imbalance", "-and", "-nodes", "-field",
                        "-skip-graph-validation", "-v", "-vv", "-h"})
    EXPECT_NE(h.find(f), std::string::npos) << f;
  EXPECT_NE(h.find("random_spread  (not supported"), std::string::npos);
  EXPECT_NE(h.find("io_bound  (not supported"), std::string::npos);
}

TEST(Flags, ErrorMessages) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-steps", "0"}, "error: Invalid flag \"-steps 0\" must be > 0"},
      {{"-width", "-1"}, "error: Invalid flag \"-width -1\" must be > 0"},
      {{"-type", "foo"}, "error: Invalid flag \"-type foo\""},
      {{"-radix", "-1"}, "error: Invalid flag \"-radix -1\" must be >= 0"},
      {{"-period", "0", "-type", "spread"}, "error: Invalid flag \"-period 0\" must be > 0"},
      {{"-period", "2"}, "error: Graph type \"trivial\" does not support user-configurable period"},
      {{"-type", "stencil_1d", "-period", "3"},
       "error: Graph type \"stencil_1d\" does not support user-configurable period"},
      {{"-type", "spread", "-width", "4", "-period", "3"},
       "error: Graph type \"spread\" requires a period that is at most 2"},
      {{"-fraction", "1.5"}, "error: Invalid flag \"-fraction 1.500000\" must be >= 0 and <= 1"},
      {{"-fraction", "-0.1"}, "error: Invalid flag \"-fraction -0.100000\" must be >= 0 and <= 1"},
      {{"-kernel", "nope"}, "error: Invalid flag \"-kernel nope\""},
      {{"-iter", "-1"}, "error: Invalid flag \"-iter -1\" must be >= 0"},
      {{"-output", "8"}, "error: Invalid flag \"-output 8\" must be >= 16"},
      {{"-scratch", "-8"}, "error: Invalid flag \"-scratch -8\" must be >= 0"},
      {{"-scratch", "12"}, "error: Invalid flag \"-scratch 12\" must be a multiple of 8"},
      {{"-sample", "-1"}, "error: Invalid flag \"-sample -1\" must be >= 0"},
      {{"-imbalance", "3"}, "error: Invalid flag \"-imbalance 3.000000\" must be >= 0 and <= 2"},
      {{"-nodes", "0"}, "error: Invalid flag \"-nodes 0\" must be > 0"},
      {{"-field", "0"}, "error: Invalid flag \"-field 0\" must be > 0"},
      {{"-steps"}, "error: Flag \"-steps\" requires an argument"},
      {{"-steps", "abc"}, "error: Invalid flag \"-steps abc\" must be an integer"},
      {{"-steps", "5x"}, "error: Invalid flag \"-steps 5x\" must be an integer"},
      {{"-fraction", "half"}, "error: Invalid flag \"-fraction half\" must be a number"},
      {{"-kernel", "memory_bound"},
       "error: Kernel \"memory_bound\" requires scratch memory (specify with -scratch)"},
      {{"-kernel", "memory_daxpy", "-scratch", "64", "-sample", "0"},
       "error: Kernel \"memory_daxpy\" requires -sample > 0"},
      {{"-kernel", "compute_dgemm", "-scratch", "16"},
       "error: Kernel \"compute_dgemm\" requires -scratch >= 24 (three 1x1 matrices)"},
      {{"-and", "-steps", "0"}, "error: Invalid flag \"-steps 0\" must be > 0"},
  };
  for (const auto& [flags, message] : cases) EXPECT_EQ(error_of(flags), message);

  std::string rs = error_of({"-type", "random_spread"});
  EXPECT_NE(rs.find("\"random_spread\" is not supported"), std::string::npos) << rs;
  std::string io = error_of({"-kernel", "io_bound"});
  EXPECT_NE(io.find("\"io_bound\" is not supported"), std::string::npos) << io;
  std::string dup = error_of({"-type", "stencil_1d_periodic", "-width", "2"});
  EXPECT_NE(dup.find("twice"), std::string::npos) << dup;
  // -skip-graph-validation skips the structural checks only.
  EXPECT_EQ(error_of({"-type", "stencil_1d_periodic", "-width", "2", "-skip-graph-validation"}), "(no error)");
  EXPECT_EQ(error_of({"-type", "spread", "-width", "4", "-period", "3", "-skip-graph-validation"}),
            "(no error)");
  EXPECT_EQ(error_of({"-steps", "0", "-skip-graph-validation"}),
            "error: Invalid flag \"-steps 0\" must be > 0");
}

TEST(FlagsDeathTest, ConstructorExitsWithStatusOneOnError) {
  const char* argv[] = {"prog", "-steps", "0", nullptr};
  EXPECT_EXIT(app(3, argv), ::testing::ExitedWithCode(1), "error: Invalid flag \"-steps 0\" must be > 0");
}

TEST(FlagsDeathTest, ConstructorExitsWithZeroOnHelp) {
  const char* argv[] = {"prog", "-h", nullptr};
  EXPECT_EXIT(app(2, argv), ::testing::ExitedWithCode(0), "");
}

// --- printed text ---------------------------------------------------------------------

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

TEST(Display, DefaultConfiguration) {
  auto a = app::parse(std::vector<std::string>{});
  const std::vector<std::string> expect = {
      "Running Task Benchmark",
      "  Configuration:",
      "    Task Graph 1:",
      "      Time Steps: 4",
      "      Max Width: 4",
      "      Dependence Type: trivial",
      "      Radix: 3",
      "      Period: 0",
      "      Fraction Connected: 0.250000",
      "      Kernel:",
      "        Type: empty",
      "        Iterations: 0",
      "        Samples: 16",
      "        Imbalance: 0.000000",
      "      Output Bytes: 16",
      "      Scratch Bytes: 0",
  };
  EXPECT_EQ(lines(a.display_text()), expect);
}

TEST(Display, VerboseListsDependenciesAndReverse) {
  auto a = app::parse({"-type", "dom", "-steps", "2", "-width", "3", "-vv", "-and", "-type", "spread",
                       "-width", "7", "-kernel", "compute_bound", "-iter", "5", "-steps", "1"});
  const std::vector<std::string> expect = {
      "Running Task Benchmark",
      "  Configuration:",
      "    Task Graph 1:",
      "      Time Steps: 2",
      "      Max Width: 3",
      "      Dependence Type: dom",
      "      Radix: 3",
      "      Period: 0",
      "      Fraction Connected: 0.250000",
      "      Kernel:",
      "        Type: empty",
      "        Iterations: 0",
      "        Samples: 16",
      "        Imbalance: 0.000000",
      "      Output Bytes: 16",
      "      Scratch Bytes: 0",
      "      Timestep 0 (offset 1, width 1, last offset 0, last width 0):",
      "        Points: 1",
      "        Dependencies:",
      "          Point 1:",
      "        Reverse Dependencies:",
      "      Timestep 1 (offset 2, width 1, last offset 1, last width 1):",
      "        Points: 2",
      "        Dependencies:",
      "          Point 2: 1",
      "        Reverse Dependencies:",
      "          Point 1: 2",
      "    Task Graph 2:",
      "      Time Steps: 1",
      "      Max Width: 7",
      "      Dependence Type: spread",
      "      Radix: 3",
      "      Period: 3",
      "      Fraction Connected: 0.250000",
      "      Kernel:",
      "        Type: compute_bound",
      "        Iterations: 5",
      "        Samples: 16",
      "        Imbalance: 0.000000",
      "      Output Bytes: 16",
      "      Scratch Bytes: 0",
      "      Timestep 0 (offset 0, width 7, last offset 0, last width 0):",
      "        Points: 0 1 2 3 4 5 6",
      "        Dependencies:",
      "          Point 0:",
      "          Point 1:",
      "          Point 2:",
      "          Point 3:",
      "          Point 4:",
      "          Point 5:",
      "          Point 6:",
      "        Reverse Dependencies:",
  };
  EXPECT_EQ(lines(a.display_text()), expect);
}

TEST(Display, VerboseStencil) {
  auto a = app::parse({"-type", "stencil_1d", "-steps", "2", "-width", "3", "-v"});
  auto l = lines(a.display_text());
  const std::vector<std::string> tail = {
      "      Timestep 1 (offset 0, width 3, last offset 0, last width 3):",
      "        Points: 0 1 2",
      "        Dependencies:",
      "          Point 0: 0 1",
      "          Point 1: 0 1 2",
      "          Point 2: 1 2",
  };
  ASSERT_GE(l.size(), tail.size());
  EXPECT_EQ(std::vector<std::string>(l.end() - static_cast<long>(tail.size()), l.end()), tail);
}

TEST(Report, WithoutNodes) {
  auto a = app::parse({"-type", "stencil_1d", "-kernel", "compute_bound", "-iter", "10"});
  const std::vector<std::string> expect = {
      "Total Tasks 16",
      "Total Dependencies 30",
      "  Unable to estimate local/nonlocal dependencies",
      "Total FLOPs 21504",
      "Total Bytes 0",
      "Elapsed Time 2.000000e+00 seconds",
      "FLOP/s 1.075200e+04",
      "B/s 0.000000e+00",
      "Transfer (estimated):",
      "  Unable to estimate local/nonlocal transfer",
  };
  EXPECT_EQ(lines(a.report_text(2.0)), expect);
}

TEST(Report, WithNodesAndTwoGraphs) {
  auto a = app::parse({"-type", "stencil_1d", "-kernel", "compute_bound", "-iter", "10", "-nodes", "2",
                       "-and", "-type", "no_comm", "-kernel", "memory_bound", "-scratch", "1600", "-iter",
                       "4", "-output", "32"});
  // Graph 1: per timestep 8 local + 2 nonlocal (nodes {0,1} and {2,3}), 3
  // timesteps; graph 2: 4 local per timestep, 32-byte outputs.
  const std::vector<std::string> expect = {
      "Total Tasks 32",
      "Total Dependencies 42",
      "  Local Dependencies 36 (estimated)",
      "  Nonlocal Dependencies 6 (estimated)",
      "  Number of Nodes (used for estimate) 2",
      "Total FLOPs 21504",
      "Total Bytes 6400",
      "Elapsed Time 5.000000e-01 seconds",
      "FLOP/s 4.300800e+04",
      "B/s 1.280000e+04",
      "Transfer (estimated):",
      "  Local Bytes 768",
      "  Nonlocal Bytes 96",
      "  Local Bandwidth 1.536000e+03 B/s",
      "  Nonlocal Bandwidth 1.920000e+02 B/s",
  };
  EXPECT_EQ(lines(a.report_text(0.5)), expect);
}

TEST(Report, NodesCountLocalAsTaskBenchDoes) {
  // W = 5, N = 2: consumer x is on node floor(2x/5) (0,1,2 on node 0; 3,4 on
  // node 1), and node n's local points are [floor(5n/2), floor(5(n+1)/2) - 1]:
  // {0,1} and {2,3,4}. Timestep 1: x=0 {0,1} 2 local; x=1 {0,1,2} 2 + 1;
  // x=2 {1,2,3} 1 + 2; x=3 {2,3,4} 3; x=4 {3,4} 2. Task Bench prints the same.
  auto a = app::parse({"-type", "stencil_1d", "-width", "5", "-steps", "2", "-nodes", "2"});
  auto l = lines(a.report_text(1.0));
  EXPECT_EQ(l[1], "Total Dependencies 13");
  EXPECT_EQ(l[2], "  Local Dependencies 10 (estimated)");
  EXPECT_EQ(l[3], "  Nonlocal Dependencies 3 (estimated)");
}

TEST(Report, PrintsToTheGivenStream) {
  auto a = app::parse(std::vector<std::string>{});
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  a.display(f);
  a.report_timing(1.0, f);
  std::rewind(f);
  std::string s;
  char buf[256];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  EXPECT_EQ(s, a.display_text() + a.report_text(1.0));
}

}  // namespace
