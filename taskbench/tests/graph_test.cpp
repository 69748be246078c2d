// Dependencies of every type against hand-derived lists, active ranges,
// dependence sets, and the mirror property of dependencies/reverse.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "taskbench/core.hpp"

namespace {

using taskbench::dependence_type;
using taskbench::task_graph;
using I = std::vector<taskbench::interval>;
using P = std::vector<long>;
using dt = dependence_type;

task_graph make(dt type, long width, long radix = 3, long period = 0, long steps = 10) {
  task_graph g;
  g.type = type;
  g.max_width = width;
  g.radix = radix;
  g.period = period != 0 ? period : (taskbench::needs_period(type) ? 3 : 0);
  g.steps = steps;
  return g;
}

TEST(Dependencies, Trivial) {
  for (long w : {1L, 2L, 5L}) {
    auto g = make(dt::trivial, w);
    for (long x = 0; x < w; ++x) {
      EXPECT_EQ(g.dependencies(0, x), I{});
      EXPECT_EQ(g.reverse_dependencies(0, x), I{});
    }
  }
}

TEST(Dependencies, NoComm) {
  auto g1 = make(dt::no_comm, 1);
  EXPECT_EQ(g1.dependencies(0, 0), (I{{0, 0}}));
  auto g = make(dt::no_comm, 5);
  EXPECT_EQ(g.dependencies(0, 3), (I{{3, 3}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), (I{{3, 3}}));
}

TEST(Dependencies, Stencil1d) {
  auto g1 = make(dt::stencil_1d, 1);
  EXPECT_EQ(g1.dependencies(0, 0), (I{{0, 0}}));
  auto g2 = make(dt::stencil_1d, 2);
  EXPECT_EQ(g2.dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(g2.dependencies(0, 1), (I{{0, 1}}));
  auto g = make(dt::stencil_1d, 5);
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(g.dependencies(0, 2), (I{{1, 3}}));
  EXPECT_EQ(g.dependencies(0, 4), (I{{3, 4}}));
  EXPECT_EQ(g.reverse_dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(g.reverse_dependencies(0, 4), (I{{3, 4}}));
}

TEST(Dependencies, Stencil1dPeriodic) {
  auto g1 = make(dt::stencil_1d_periodic, 1);
  EXPECT_EQ(g1.dependencies(0, 0), (I{{0, 0}, {0, 0}, {0, 0}}));
  auto g2 = make(dt::stencil_1d_periodic, 2);
  EXPECT_EQ(g2.dependencies(0, 0), (I{{0, 1}, {1, 1}}));
  EXPECT_EQ(g2.dependencies(0, 1), (I{{0, 1}, {0, 0}}));
  auto g = make(dt::stencil_1d_periodic, 5);
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 1}, {4, 4}}));
  EXPECT_EQ(g.dependencies(0, 2), (I{{1, 3}}));
  EXPECT_EQ(g.dependencies(0, 4), (I{{3, 4}, {0, 0}}));
  EXPECT_EQ(g.reverse_dependencies(0, 4), (I{{3, 4}, {0, 0}}));
  auto g7 = make(dt::stencil_1d_periodic, 7);
  EXPECT_EQ(g7.dependencies(0, 6), (I{{5, 6}, {0, 0}}));
  EXPECT_EQ(g7.input_points(1, 0), (P{0, 1, 6}));
}

TEST(Dependencies, Dom) {
  auto g = make(dt::dom, 5);
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 0}}));
  EXPECT_EQ(g.dependencies(0, 3), (I{{2, 3}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), (I{{3, 4}}));
  EXPECT_EQ(g.reverse_dependencies(0, 4), (I{{4, 4}}));
  auto g1 = make(dt::dom, 1);
  EXPECT_EQ(g1.dependencies(0, 0), (I{{0, 0}}));
  EXPECT_EQ(g1.reverse_dependencies(0, 0), (I{{0, 0}}));
}

TEST(ActiveRange, Dom) {
  // steps 9, width 6: offset max(0, t+W-T), width min(W, t+1, T-t).
  auto g = make(dt::dom, 6, 3, 0, 9);
  const long offsets[] = {0, 0, 0, 0, 1, 2, 3, 4, 5};
  const long widths[] = {1, 2, 3, 4, 5, 4, 3, 2, 1};
  for (long t = 0; t < 9; ++t) {
    EXPECT_EQ(g.offset_at(t), offsets[t]) << t;
    EXPECT_EQ(g.width_at(t), widths[t]) << t;
  }
  EXPECT_EQ(g.offset_at(-1), 0);
  EXPECT_EQ(g.width_at(-1), 0);
  EXPECT_EQ(g.total_tasks(), 25);
  // Clipping against the previous range: (4, 5) depends on [4, 5], but only
  // 0..3 ran at t = 3; (6, 3) on [2, 3], both active at t = 5.
  EXPECT_EQ(g.input_points(4, 5), P{});
  EXPECT_EQ(g.input_points(4, 4), (P{3}));
  EXPECT_EQ(g.input_points(6, 3), (P{2, 3}));
  EXPECT_EQ(g.input_points(5, 2), (P{1, 2}));
  EXPECT_EQ(g.output_points(3, 3), (P{3, 4}));
  EXPECT_EQ(g.output_points(8, 5), P{});  // last timestep: no consumers

  auto sq = make(dt::dom, 3, 3, 0, 5);
  const long o5[] = {0, 0, 0, 1, 2}, w5[] = {1, 2, 3, 2, 1};
  for (long t = 0; t < 5; ++t) {
    EXPECT_EQ(sq.offset_at(t), o5[t]);
    EXPECT_EQ(sq.width_at(t), w5[t]);
  }
}

TEST(Dependencies, Tree) {
  auto g = make(dt::tree, 5);
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 0}}));
  EXPECT_EQ(g.dependencies(0, 3), (I{{1, 1}}));
  EXPECT_EQ(g.dependencies(0, 4), (I{{2, 2}}));
  EXPECT_EQ(g.reverse_dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(g.reverse_dependencies(0, 1), (I{{2, 3}}));
  EXPECT_EQ(g.reverse_dependencies(0, 2), (I{{4, 4}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), I{});
  EXPECT_EQ(g.reverse_dependencies(0, 4), I{});
  auto g2 = make(dt::tree, 2);
  EXPECT_EQ(g2.reverse_dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(g2.reverse_dependencies(0, 1), I{});
}

TEST(ActiveRange, Tree) {
  auto g = make(dt::tree, 5);
  const long widths[] = {1, 2, 4, 5, 5, 5};
  for (long t = 0; t < 6; ++t) {
    EXPECT_EQ(g.offset_at(t), 0);
    EXPECT_EQ(g.width_at(t), widths[t]);
  }
  EXPECT_EQ(g.width_at(100), 5);  // 2^min(t, 62): no overflow
  auto g1 = make(dt::tree, 1);
  for (long t = 0; t < 4; ++t) EXPECT_EQ(g1.width_at(t), 1);
  // Timestep 2 has points 0..3; point 1 of t=1 feeds 2 and 3.
  EXPECT_EQ(g.output_points(1, 1), (P{2, 3}));
  EXPECT_EQ(g.output_points(2, 2), (P{4}));
  EXPECT_EQ(g.output_points(0, 0), (P{0, 1}));
}

TEST(Dependencies, FftSets) {
  EXPECT_EQ(make(dt::fft, 1).max_dependence_sets(), 1);
  EXPECT_EQ(make(dt::fft, 2).max_dependence_sets(), 1);
  EXPECT_EQ(make(dt::fft, 5).max_dependence_sets(), 3);
  EXPECT_EQ(make(dt::fft, 7).max_dependence_sets(), 3);
  EXPECT_EQ(make(dt::fft, 8).max_dependence_sets(), 3);
  EXPECT_EQ(make(dt::fft, 9).max_dependence_sets(), 4);
  auto g = make(dt::fft, 5);
  // dset(t) = (t + m - 1) mod m, m = 3.
  const long sets[] = {2, 0, 1, 2, 0, 1};
  for (long t = 0; t < 6; ++t) EXPECT_EQ(g.dependence_set_at(t), sets[t]);
  EXPECT_EQ(g.dependencies(0, 2), (I{{1, 1}, {2, 2}, {3, 3}}));
  EXPECT_EQ(g.dependencies(1, 2), (I{{0, 0}, {2, 2}, {4, 4}}));
  EXPECT_EQ(g.dependencies(2, 2), (I{{2, 2}}));
  EXPECT_EQ(g.dependencies(2, 4), (I{{0, 0}, {4, 4}}));
  EXPECT_EQ(g.dependencies(2, 0), (I{{0, 0}, {4, 4}}));
  EXPECT_EQ(g.dependencies(0, 4), (I{{3, 3}, {4, 4}}));
  EXPECT_EQ(g.reverse_dependencies(1, 2), (I{{0, 0}, {2, 2}, {4, 4}}));
  auto g1 = make(dt::fft, 1);
  EXPECT_EQ(g1.dependence_set_at(3), 0);
  EXPECT_EQ(g1.dependencies(0, 0), (I{{0, 0}}));
  auto g2 = make(dt::fft, 2);
  EXPECT_EQ(g2.dependencies(0, 0), (I{{0, 0}, {1, 1}}));
  EXPECT_EQ(g2.dependencies(0, 1), (I{{0, 0}, {1, 1}}));
}

TEST(Dependencies, AllToAll) {
  auto g = make(dt::all_to_all, 5);
  for (long x = 0; x < 5; ++x) {
    EXPECT_EQ(g.dependencies(0, x), (I{{0, 4}}));
    EXPECT_EQ(g.reverse_dependencies(0, x), (I{{0, 4}}));
  }
  EXPECT_EQ(make(dt::all_to_all, 1).dependencies(0, 0), (I{{0, 0}}));
}

TEST(Dependencies, NearestRadii) {
  auto g = make(dt::nearest, 7, 0);
  EXPECT_EQ(g.dependencies(0, 3), I{});
  EXPECT_EQ(g.reverse_dependencies(0, 3), I{});
  g.radix = 1;
  EXPECT_EQ(g.dependencies(0, 3), (I{{3, 3}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), (I{{3, 3}}));
  g.radix = 2;
  EXPECT_EQ(g.dependencies(0, 3), (I{{2, 3}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), (I{{3, 4}}));
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 0}}));
  EXPECT_EQ(g.reverse_dependencies(0, 6), (I{{6, 6}}));
  g.radix = 3;
  EXPECT_EQ(g.dependencies(0, 3), (I{{2, 4}}));
  g.radix = 4;
  EXPECT_EQ(g.dependencies(0, 3), (I{{1, 4}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), (I{{2, 5}}));
  g.radix = 5;
  EXPECT_EQ(g.dependencies(0, 3), (I{{1, 5}}));
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 2}}));
  EXPECT_EQ(g.dependencies(0, 6), (I{{4, 6}}));
  EXPECT_EQ(g.reverse_dependencies(0, 1), (I{{0, 3}}));
  auto g1 = make(dt::nearest, 1, 5);
  EXPECT_EQ(g1.dependencies(0, 0), (I{{0, 0}}));
}

TEST(Dependencies, SpreadPeriods) {
  // W = 7, r = 3: offsets 0, 7/3 = 2, 14/3 = 4, plus dset for i > 0.
  auto g = make(dt::spread, 7, 3, 3);
  EXPECT_EQ(g.max_dependence_sets(), 3);
  EXPECT_EQ(g.dependence_set_at(4), 1);
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 0}, {2, 2}, {4, 4}}));
  EXPECT_EQ(g.dependencies(1, 0), (I{{0, 0}, {3, 3}, {5, 5}}));
  EXPECT_EQ(g.dependencies(2, 5), (I{{5, 5}, {2, 2}, {4, 4}}));
  EXPECT_EQ(g.reverse_dependencies(1, 0), (I{{0, 0}, {4, 4}, {2, 2}}));
  EXPECT_EQ(g.reverse_dependencies(0, 1), (I{{1, 1}, {6, 6}, {4, 4}}));
  // period 1 and 2 of the same graph.
  auto g1 = make(dt::spread, 7, 3, 1);
  EXPECT_EQ(g1.max_dependence_sets(), 1);
  EXPECT_EQ(g1.dependence_set_at(5), 0);
  auto g2 = make(dt::spread, 7, 3, 2);
  EXPECT_EQ(g2.dependence_set_at(5), 1);
  EXPECT_EQ(g2.dependencies(1, 6), (I{{6, 6}, {2, 2}, {4, 4}}));
  // W = 5, r = 2.
  auto g5 = make(dt::spread, 5, 2, 3);
  EXPECT_EQ(g5.dependencies(2, 4), (I{{4, 4}, {3, 3}}));
  EXPECT_EQ(g5.reverse_dependencies(2, 3), (I{{3, 3}, {4, 4}}));
  // W = 2, r = 2, period 1.
  auto w2 = make(dt::spread, 2, 2, 1);
  EXPECT_EQ(w2.dependencies(0, 0), (I{{0, 0}, {1, 1}}));
  EXPECT_EQ(w2.dependencies(0, 1), (I{{1, 1}, {0, 0}}));
  EXPECT_NO_THROW(w2.validate());
  // W = 1 with the default period 3 is rejected (at most ceil(1/3) = 1).
  EXPECT_THROW(make(dt::spread, 1, 3, 3).validate(), taskbench::usage_error);
  EXPECT_NO_THROW(make(dt::spread, 7, 3, 3).validate());
  EXPECT_THROW(make(dt::spread, 7, 3, 4).validate(), taskbench::usage_error);
}

TEST(Dependencies, RandomNearestMatchesTheHash) {
  // Independent recomputation of the rule of the specification.
  for (long gi : {0L, 1L}) {
    for (long r : {1L, 3L, 4L, 5L}) {
      auto g = make(dt::random_nearest, 7, r, 3);
      g.graph_index = gi;
      g.fraction = 0.5;
      for (long dset = 0; dset < 3; ++dset) {
        for (long x = 0; x < 7; ++x) {
          std::vector<long> expect, got;
          // Candidates are nearest's window; the hash names the producer j first.
          for (long j = std::max(0L, x - r / 2); j <= std::min(6L, x + (r - 1) / 2); ++j) {
            const std::int64_t words[5] = {gi, r, dset, j, x};
            if (j == x || taskbench::random_uniform(words) < 0.5) expect.push_back(j);
          }
          for (auto [a, b] : g.dependencies(dset, x))
            for (long p = a; p <= b; ++p) got.push_back(p);
          EXPECT_EQ(got, expect) << "r " << r << " dset " << dset << " x " << x;
          // Runs are merged: consecutive intervals never touch.
          auto iv = g.dependencies(dset, x);
          for (std::size_t k = 1; k < iv.size(); ++k) EXPECT_GT(iv[k].first, iv[k - 1].second + 1);
        }
      }
    }
  }
}

TEST(Dependencies, RandomNearestDeterministicAndFractions) {
  auto g = make(dt::random_nearest, 16, 5, 3);
  g.fraction = 0.5;
  auto h = g;
  bool differs = false;
  auto other = g;
  other.graph_index = 1;
  for (long dset = 0; dset < 3; ++dset)
    for (long x = 0; x < 16; ++x) {
      EXPECT_EQ(g.dependencies(dset, x), h.dependencies(dset, x));
      EXPECT_EQ(g.dependencies(dset, x), g.dependencies(dset, x));
      EXPECT_EQ(g.reverse_dependencies(dset, x), h.reverse_dependencies(dset, x));
      differs |= g.dependencies(dset, x) != other.dependencies(dset, x);
    }
  EXPECT_TRUE(differs) << "graph_index should change the random graph";

  g.fraction = 0.0;  // only the point itself
  for (long x = 0; x < 16; ++x) {
    EXPECT_EQ(g.dependencies(1, x), (I{{x, x}}));
    EXPECT_EQ(g.reverse_dependencies(1, x), (I{{x, x}}));
  }
  g.fraction = 1.0;  // every candidate, one merged range
  EXPECT_EQ(g.dependencies(0, 5), (I{{3, 7}}));
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 2}}));
  EXPECT_EQ(g.dependencies(0, 15), (I{{13, 15}}));
  g.radix = 4;  // candidates [x - r/2, x + (r-1)/2] as nearest, reverse [x - (r-1)/2, x + r/2]
  EXPECT_EQ(g.dependencies(0, 5), (I{{3, 6}}));
  EXPECT_EQ(g.reverse_dependencies(0, 5), (I{{4, 7}}));
  EXPECT_EQ(g.dependencies(0, 5), make(dt::nearest, 16, 4).dependencies(0, 5));
  g.radix = 0;
  EXPECT_EQ(g.dependencies(0, 5), I{});
  EXPECT_EQ(g.reverse_dependencies(0, 5), I{});
}

// Known answers: width 10, fraction 0.5. Each u below is SipHash-2-4 of
// (graph_index, radix, dset, producer, consumer) scaled to [0, 1), computed
// outside the project; they are the lists the original Task Bench prints
// with -vv for the same flags. An edge p -> c is kept when u < 0.5 or p == c.
TEST(Dependencies, RandomNearestKnownAnswers) {
  // Two of the hashes (radix 5, dset 0): producer 2 -> consumer 4 has
  // u = 0.5624 (dropped), while the transposed edge 4 -> 2 has u = 0.0519.
  const std::int64_t drop[5] = {0, 5, 0, 2, 4}, keep[5] = {0, 5, 0, 4, 2};
  EXPECT_GT(taskbench::random_uniform(drop), 0.5);
  EXPECT_LT(taskbench::random_uniform(keep), 0.5);

  auto g = make(dt::random_nearest, 10, 5, 3);
  g.fraction = 0.5;
  EXPECT_EQ(g.dependencies(0, 0), (I{{0, 0}}));
  EXPECT_EQ(g.dependencies(0, 3), (I{{1, 1}, {3, 5}}));
  EXPECT_EQ(g.dependencies(0, 4), (I{{3, 4}}));  // 2 -> 4 dropped
  EXPECT_EQ(g.dependencies(0, 9), (I{{7, 9}}));
  EXPECT_EQ(g.reverse_dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(g.reverse_dependencies(0, 3), (I{{3, 4}}));
  EXPECT_EQ(g.reverse_dependencies(0, 4), (I{{2, 4}, {6, 6}}));  // 4 -> 2 kept
  EXPECT_EQ(g.reverse_dependencies(0, 9), (I{{8, 9}}));
  EXPECT_EQ(g.dependencies(1, 0), (I{{0, 2}}));
  EXPECT_EQ(g.dependencies(1, 4), (I{{3, 4}, {6, 6}}));
  EXPECT_EQ(g.reverse_dependencies(1, 3), (I{{1, 5}}));
  EXPECT_EQ(g.reverse_dependencies(1, 9), (I{{7, 7}, {9, 9}}));

  // The second graph of an -and list (graph_index 1), radix 4.
  auto h = make(dt::random_nearest, 10, 4, 3);
  h.fraction = 0.5;
  h.graph_index = 1;
  EXPECT_EQ(h.dependencies(0, 0), (I{{0, 1}}));
  EXPECT_EQ(h.dependencies(0, 4), (I{{2, 4}}));
  EXPECT_EQ(h.reverse_dependencies(0, 0), (I{{0, 2}}));
  EXPECT_EQ(h.reverse_dependencies(0, 4), (I{{3, 4}, {6, 6}}));
  EXPECT_EQ(h.dependencies(1, 9), (I{{9, 9}}));
  EXPECT_EQ(h.reverse_dependencies(1, 4), (I{{3, 6}}));
}

TEST(DependenceSets, Counts) {
  EXPECT_EQ(make(dt::stencil_1d, 5).max_dependence_sets(), 1);
  EXPECT_EQ(make(dt::random_nearest, 5, 3, 4).max_dependence_sets(), 4);
  EXPECT_EQ(make(dt::random_nearest, 5, 3, 4).dependence_set_at(6), 2);
  EXPECT_EQ(make(dt::all_to_all, 5).dependence_set_at(6), 0);
}

// For every type: p in dependencies(x) <=> x in reverse_dependencies(p), as
// multisets, for every dependence set; and the same for the clipped lists
// of every task.
struct mirror_case {
  dt type;
  long radix, period;
  double fraction;
};

class Mirror : public ::testing::TestWithParam<mirror_case> {};

TEST_P(Mirror, DependenciesAndReverseAgree) {
  const auto c = GetParam();
  for (long w : {1L, 2L, 3L, 5L, 7L, 8L, 16L}) {
    auto g = make(c.type, w, c.radix, c.period, 9);
    g.fraction = c.fraction;
    for (long dset = 0; dset < g.max_dependence_sets(); ++dset) {
      std::map<std::pair<long, long>, int> fwd, rev;  // (producer, consumer) -> count
      for (long x = 0; x < w; ++x) {
        for (auto [a, b] : g.dependencies(dset, x)) {
          ASSERT_LE(0, a);
          ASSERT_LE(a, b);
          ASSERT_LT(b, w);
          for (long p = a; p <= b; ++p) ++fwd[{p, x}];
        }
        for (auto [a, b] : g.reverse_dependencies(dset, x)) {
          ASSERT_LE(0, a);
          ASSERT_LE(a, b);
          ASSERT_LT(b, w);
          for (long q = a; q <= b; ++q) ++rev[{x, q}];
        }
      }
      EXPECT_EQ(fwd, rev) << taskbench::name_of(c.type) << " width " << w << " dset " << dset;
    }
    for (long t = 0; t < g.steps; ++t) {
      for (long x = g.offset_at(t); x < g.offset_at(t) + g.width_at(t); ++x) {
        auto in = g.input_points(t, x);
        EXPECT_EQ(in.size(), g.num_inputs(t, x));
        for (long p : in) {
          EXPECT_TRUE(g.is_active(t - 1, p));
          auto out = g.output_points(t - 1, p);
          EXPECT_NE(std::find(out.begin(), out.end(), x), out.end())
              << taskbench::name_of(c.type) << " w " << w << " t " << t << " x " << x << " p " << p;
        }
        for (long q : g.output_points(t, x)) {
          EXPECT_TRUE(g.is_active(t + 1, q));
          auto in2 = g.input_points(t + 1, q);
          EXPECT_NE(std::find(in2.begin(), in2.end(), x), in2.end());
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllTypes, Mirror,
    ::testing::Values(mirror_case{dt::trivial, 3, 0, 0.25}, mirror_case{dt::no_comm, 3, 0, 0.25},
                      mirror_case{dt::stencil_1d, 3, 0, 0.25},
                      mirror_case{dt::stencil_1d_periodic, 3, 0, 0.25},
                      mirror_case{dt::dom, 3, 0, 0.25}, mirror_case{dt::tree, 3, 0, 0.25},
                      mirror_case{dt::fft, 3, 0, 0.25}, mirror_case{dt::all_to_all, 3, 0, 0.25},
                      mirror_case{dt::nearest, 0, 0, 0.25}, mirror_case{dt::nearest, 1, 0, 0.25},
                      mirror_case{dt::nearest, 2, 0, 0.25}, mirror_case{dt::nearest, 5, 0, 0.25},
                      mirror_case{dt::spread, 3, 1, 0.25}, mirror_case{dt::spread, 2, 2, 0.25},
                      mirror_case{dt::spread, 3, 3, 0.25},
                      mirror_case{dt::random_nearest, 3, 3, 0.25},
                      mirror_case{dt::random_nearest, 4, 2, 0.5},
                      mirror_case{dt::random_nearest, 5, 3, 0.0},
                      mirror_case{dt::random_nearest, 5, 3, 1.0}),
    [](const ::testing::TestParamInfo<mirror_case>& info) {
      return std::string(taskbench::name_of(info.param.type)) + "_r" + std::to_string(info.param.radix) +
             "_p" + std::to_string(info.param.period) + "_f" +
             std::to_string(static_cast<int>(info.param.fraction * 100));
    });

TEST(Validate, AcceptsEveryTypeAtUsualSizes) {
  for (auto type : taskbench::all_dependence_types()) {
    if (!taskbench::is_supported(type)) continue;
    for (long w : {3L, 5L, 7L, 64L}) {
      // spread: period at most ceil(W / radix).
      auto g = make(type, w, 3, type == dt::spread ? std::min(3L, (w + 2) / 3) : 0);
      EXPECT_NO_THROW(g.validate()) << taskbench::name_of(type) << " " << w;
      EXPECT_NO_THROW(g.check_parameters());
    }
  }
}

TEST(Validate, RejectsDuplicateDependencies) {
  // Periodic stencil on 2 points lists the other point twice.
  EXPECT_THROW(make(dt::stencil_1d_periodic, 2).validate(), taskbench::usage_error);
  EXPECT_THROW(make(dt::spread, 2, 3, 1).validate(), taskbench::usage_error);
}

TEST(BlockDistribution, OwnerMatchesRanges) {
  for (long w : {1L, 3L, 6L, 7L, 100L})
    for (long n : {1L, 2L, 3L, 4L, 8L})
      for (long r = 0; r < n; ++r)
        for (long x = taskbench::block_first(r, n, w); x < taskbench::block_first(r + 1, n, w); ++x)
          EXPECT_EQ(taskbench::block_owner(x, n, w), r) << w << " " << n << " " << x;
}

}  // namespace
