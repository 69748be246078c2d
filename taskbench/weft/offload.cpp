// offload: rank 0 builds every graph as weft target tasks spread over all
// cpu devices of all ranks (blocks of points per device). Each task's output
// stays in its device's arena; a task's inputs are handles to its
// producers' output slots: read in place on the same device, fetched by the
// consumer's rank straight from the producer's rank otherwise (rank 0 only
// sends the launch). The other ranks only own devices: their workers run
// the kernels and the copies.
//
// Arena of a device (one allocation): for each of its points, an output slot
// per timestep and the point's scratch. Every slot is written once per run,
// so no task waits for another to be done reading.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "impl.hpp"
#include "weft/offload.hpp"
#include "weft/weft.hpp"

namespace taskbench_weft {

namespace {

/// The graphs, the same on every rank (every rank parsed the same flags).
/// A kernel may arrive before its rank's main task has run run_offload: it
/// waits for the graphs to be known in its process.
struct known_app {
  std::atomic<const taskbench::app*> app{nullptr};
  weft::promise<void> set;
  weft::shared_future<void> ready = set.get_future().share();
};
known_app& current_app() {
  static known_app k;
  return k;
}
const taskbench::app& wait_for_app() {
  known_app& k = current_app();
  if (const taskbench::app* a = k.app.load(std::memory_order_acquire)) return *a;
  k.ready.get();
  return *k.app.load(std::memory_order_acquire);
}

struct point_task {
  long graph = 0, t = 0, x = 0;
  std::uint64_t output = 0, scratch = 0;
  long corrupt_input = -1;  // -weft-inject-corruption: flip a byte of this input
};

/// `inputs`: the producers' outputs, in for_each_input order.
void run_point(std::span<char> arena, std::vector<std::span<char>> inputs, const point_task& task) {
  const taskbench::task_graph& g = wait_for_app().graphs[static_cast<std::size_t>(task.graph)];
  const std::size_t ob = g.output_bytes_per_task;
  if (task.corrupt_input >= 0) inputs[static_cast<std::size_t>(task.corrupt_input)].back() ^= 0x10;  // a fetched copy
  std::vector<const char*> ptrs;
  ptrs.reserve(inputs.size());
  for (const auto& in : inputs) ptrs.push_back(in.data());
  const std::vector<std::size_t> sizes(inputs.size(), ob);
  const std::size_t sb = g.scratch_bytes_per_task;
  g.execute_point(task.t, task.x, arena.data() + task.output, ob, ptrs.data(), sizes.data(), ptrs.size(),
                  sb == 0 ? nullptr : arena.data() + task.scratch, sb);
}

void fill_scratch(std::span<char> arena, std::uint64_t at, std::uint64_t bytes) {
  taskbench::task_graph::prepare_scratch(arena.data() + at, bytes);
}

std::uint64_t round_up(std::uint64_t n) { return (n + 63) / 64 * 64; }

/// Where everything of one graph lives.
struct layout {
  layout(const taskbench::task_graph& g, int ndev) : sizes(static_cast<std::size_t>(ndev), 0) {
    stride = round_up(std::max<std::size_t>(g.output_bytes_per_task, 1));
    const auto w = static_cast<std::size_t>(g.max_width);
    device.resize(w), output.resize(w), scratch.resize(w);
    for (long x = 0; x < g.max_width; ++x) {
      const auto i = static_cast<std::size_t>(x);
      device[i] = static_cast<int>(x * ndev / g.max_width);
      std::uint64_t& size = sizes[static_cast<std::size_t>(device[i])];
      output[i] = size, size += stride * static_cast<std::uint64_t>(g.steps);
      scratch[i] = size, size += round_up(g.scratch_bytes_per_task);
    }
  }
  std::uint64_t out(long t, long x) const { return output[static_cast<std::size_t>(x)] + stride * static_cast<std::uint64_t>(t); }
  int dev(long x) const { return device[static_cast<std::size_t>(x)]; }

  std::uint64_t stride = 64;
  std::vector<int> device;
  std::vector<std::uint64_t> output, scratch, sizes;
};

/// Steps whose tasks may be in flight before the builder waits for the
/// oldest (bounds the futures held; errors surface while building).
constexpr long steps_ahead = 8;

void run_graph(const taskbench::task_graph& g, long index, const std::vector<weft::device>& devs) {
  const layout lay(g, static_cast<int>(devs.size()));
  std::vector<weft::future<weft::device_buffer<char>>> allocating;
  for (std::size_t d = 0; d < devs.size(); ++d) allocating.push_back(weft::allocate<char>(devs[d], std::max<std::uint64_t>(lay.sizes[d], 1)));
  std::vector<weft::device_buffer<char>> arena;
  for (auto& a : allocating) arena.push_back(a.get());
  auto arena_of = [&](long x) { return arena[static_cast<std::size_t>(lay.dev(x))]; };
  auto device_of = [&](long x) { return devs[static_cast<std::size_t>(lay.dev(x))]; };

  const auto w = static_cast<std::size_t>(g.max_width);
  std::vector<weft::shared_future<void>> done(w), before(w);
  const std::size_t sb = g.scratch_bytes_per_task;
  if (sb != 0)
    for (long x = 0; x < g.max_width; ++x)
      done[static_cast<std::size_t>(x)] = weft::target(device_of(x), fill_scratch, arena_of(x), lay.scratch[static_cast<std::size_t>(x)], std::uint64_t{sb}).share();
  static std::atomic<bool> corrupted{false};
  std::deque<std::vector<weft::shared_future<void>>> in_flight;
  for (long t = 0; t < g.steps; ++t) {
    before.swap(done);
    std::vector<weft::shared_future<void>> step;
    for (long x = g.offset_at(t); x < g.offset_at(t) + g.width_at(t); ++x) {
      point_task task{index, t, x, lay.out(t, x), lay.scratch[static_cast<std::size_t>(x)], -1};
      std::vector<weft::device_buffer<char>> inputs;
      std::vector<weft::shared_future<void>> deps;
      // Tasks of one point share its scratch: one at a time.
      if (sb != 0 && before[static_cast<std::size_t>(x)].valid()) deps.push_back(before[static_cast<std::size_t>(x)]);
      g.for_each_input(t, x, [&](long p) {
        inputs.push_back(arena_of(p).subspan(lay.out(t - 1, p), g.output_bytes_per_task));
        deps.push_back(before[static_cast<std::size_t>(p)]);
        if (inject_corruption && t == 2 && device_of(p).rank() == weft::nranks() - 1 &&
            device_of(x).rank() != device_of(p).rank() && !corrupted.exchange(true))
          task.corrupt_input = static_cast<long>(inputs.size()) - 1;
      });
      auto f = weft::target(device_of(x), run_point, arena_of(x), std::move(inputs), task, std::move(deps)).share();
      done[static_cast<std::size_t>(x)] = f;
      step.push_back(std::move(f));
    }
    in_flight.push_back(std::move(step));
    if (static_cast<long>(in_flight.size()) > steps_ahead) {
      for (auto& f : in_flight.front()) f.get();
      in_flight.pop_front();
    }
  }
  for (auto& s : in_flight)
    for (auto& f : s) f.get();
  for (auto& a : arena) weft::deallocate(a).get();
}

}  // namespace

void run_offload(const taskbench::app& app) {
  known_app& k = current_app();
  if (k.app.exchange(&app, std::memory_order_acq_rel) == nullptr) k.set.set_value();
  if (weft::rank() != 0) return;
  // The kernels are Task Bench's host code: cpu devices only.
  const std::vector<weft::device> devs = weft::devices(weft::device_kind::cpu);
  for (std::size_t i = 0; i < app.graphs.size(); ++i) run_graph(app.graphs[i], static_cast<long>(i), devs);
}

}  // namespace taskbench_weft
