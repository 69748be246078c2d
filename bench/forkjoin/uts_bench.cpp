// UTS (uts_tree.hpp): counts the nodes of a geometric tree; a node's
// children are visited by splitting their index range in halves, each
// half a fork. Default T1L (depth 13, b0 4, seed 29; 102,181,082 nodes);
// --depth/--b0/--seed choose another (the count is checked when the tree is
// T1 or T1L).
//
//   bench_fj_uts --serial [--depth=D]
//   bench_fj_uts --weft:ranks=2 --weft:threads=1
//   WEFT_THREADS=1 mpiexec.mpich -n 2 -bind-to core bench_fj_uts
// Options: --reps=R, --label, --csv. Records seconds, nodes/s and every
// rank's steal statistics.
#include <cstdint>
#include <cstdio>
#include <string>

#include "bench_common.hpp"
#include "fork_policy.hpp"
#include "uts_tree.hpp"

namespace {

using namespace fj_bench;

template <class Forks>
std::uint64_t visit(geometric_tree t, uts_node n);

/// Nodes under children [lo, hi) of `parent`.
template <class Forks>
std::uint64_t visit_children(geometric_tree t, uts_node parent, std::int32_t lo, std::int32_t hi) {
  if (hi - lo == 1) return visit<Forks>(t, geometric_tree::child(parent, lo));
  const std::int32_t mid = lo + (hi - lo) / 2;
  auto [a, b] = Forks::both([=] { return visit_children<Forks>(t, parent, lo, mid); },
                            [=] { return visit_children<Forks>(t, parent, mid, hi); });
  return a + b;
}

template <class Forks>
std::uint64_t visit(geometric_tree t, uts_node n) {
  const std::int32_t k = t.children(n);
  return 1 + (k == 0 ? 0 : visit_children<Forks>(t, n, 0, k));
}

/// The published count of this tree, or 0 when none is known.
std::uint64_t published_nodes(const geometric_tree& t, std::int32_t seed) {
  if (t.b0 != 4) return 0;
  if (t.depth == 10 && seed == 19) return 4'130'071;
  if (t.depth == 13 && seed == 29) return 102'181'082;
  return 0;
}

void run(const options& o) {
  geometric_tree t;
  t.depth = static_cast<std::int32_t>(o.number("depth", 13));
  t.b0 = static_cast<double>(o.number("b0", 4));
  const auto seed = static_cast<std::int32_t>(o.number("seed", 29));
  const std::string param = "d=" + std::to_string(t.depth) + " r=" + std::to_string(seed);
  const std::uint64_t expected = published_nodes(t, seed);
  const uts_node root = geometric_tree::root(seed);
  for (long rep = 0; rep < o.number("reps", 1); ++rep) {
    std::uint64_t nodes = 0;
    double seconds = 0;
    if (o.serial()) {
      const auto t0 = now_ns();
      nodes = visit<serial_forks>(t, root);
      seconds = 1e-9 * static_cast<double>(now_ns() - t0);
    } else {
      weft::barrier();
      weft::reset_steal_statistics();
      const auto t0 = now_ns();
      nodes = weft::root_exec([t, root] { return visit<weft_forks>(t, root); });
      seconds = 1e-9 * static_cast<double>(now_ns() - t0);
    }
    if (expected != 0 && nodes != expected) {
      std::fprintf(stderr, "uts: %llu nodes, published %llu\n", static_cast<unsigned long long>(nodes),
                   static_cast<unsigned long long>(expected));
      std::exit(1);
    }
    if (o.serial() || weft::rank() == 0) {
      record(o, "uts", param, "nodes", static_cast<double>(nodes));
      record(o, "uts", param, "seconds", seconds);
      record(o, "uts", param, "Mnodes_per_s", 1e-6 * static_cast<double>(nodes) / seconds);
    }
    if (!o.serial()) record_steal_stats(o, "uts", param);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench_main(argc, argv, run); }
