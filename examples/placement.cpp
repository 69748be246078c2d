// Placement hints: a 1-D three-point stencil over blocks of cells, one
// dataflow node per (step, block), with every block kept on one worker
// (weft::on_thread) so its cells stay in that core's cache. Idle workers
// still take placed nodes from busy ones, so the hint never idles a core.
//
//   ./example_placement --weft:threads=2
#include <cstdio>
#include <vector>

#include "weft/weft.hpp"

namespace {

using block = std::vector<double>;
using block_future = weft::shared_future<block>;

constexpr int blocks = 8, cells = 256, steps = 100;

/// One step of one block: each cell becomes the mean of itself and its two
/// neighbours; the neighbour blocks' edge cells come from their inputs.
block relax(const block* left, const block& mid, const block* right) {
  block out(mid.size());
  for (std::size_t i = 0; i < mid.size(); ++i) {
    double l = i > 0 ? mid[i - 1] : (left ? left->back() : mid[i]);
    double r = i + 1 < mid.size() ? mid[i + 1] : (right ? right->front() : mid[i]);
    out[i] = (l + mid[i] + r) / 3.0;
  }
  return out;
}

block initial(int b) {
  block v(cells);
  for (int i = 0; i < cells; ++i) v[static_cast<std::size_t>(i)] = (b * cells + i) % 17;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int threads = weft::num_threads();
    std::vector<block_future> cur;
    for (int b = 0; b < blocks; ++b) cur.push_back(weft::make_ready_future(initial(b)).share());
    for (int t = 0; t < steps; ++t) {
      std::vector<block_future> next;
      for (int b = 0; b < blocks; ++b) {
        std::vector<block_future> in{cur[static_cast<std::size_t>(b)]};
        if (b > 0) in.push_back(cur[static_cast<std::size_t>(b - 1)]);
        if (b + 1 < blocks) in.push_back(cur[static_cast<std::size_t>(b + 1)]);
        // Blocks 0..3 on worker 0, 4..7 on worker 1 (with two workers).
        weft::on_thread where{b * threads / blocks};
        next.push_back(weft::dataflow(where, [b](std::vector<block_future>& v) {
          const block* left = b > 0 ? &v[1].get() : nullptr;
          const block* right = b + 1 < blocks ? &v.back().get() : nullptr;
          return relax(left, v[0].get(), right);
        }, std::move(in)).share());
        // This loop is a task too: let nodes that are ready run first, and
        // build the rest of the graph while the worker would be idle.
        weft::this_task::yield_if_others_ready();
      }
      cur = std::move(next);
    }
    // The same computation serially, to check the result.
    std::vector<block> ref;
    for (int b = 0; b < blocks; ++b) ref.push_back(initial(b));
    for (int t = 0; t < steps; ++t) {
      std::vector<block> nxt;
      for (int b = 0; b < blocks; ++b)
        nxt.push_back(relax(b > 0 ? &ref[static_cast<std::size_t>(b - 1)] : nullptr, ref[static_cast<std::size_t>(b)],
                            b + 1 < blocks ? &ref[static_cast<std::size_t>(b + 1)] : nullptr));
      ref = std::move(nxt);
    }
    bool same = true;
    for (int b = 0; b < blocks; ++b) same = same && cur[static_cast<std::size_t>(b)].get() == ref[static_cast<std::size_t>(b)];
    std::printf("stencil of %d blocks x %d cells, %d steps, blocks placed on %d workers: matches serial: %s\n",
                blocks, cells, steps, threads, same ? "yes" : "no");
    return same ? 0 : 1;
  });
}
