// offload: rank 0 builds every graph as weft target tasks spread over all
// devices of one kind of all ranks (blocks of points per device; GPUs when
// the job has them and the kernel runs there, see offload_devices). Each
// task's output stays in its device's arena; a task's inputs are handles to
// its producers' output slots: read in place on the same device, fetched by
// the consumer's rank straight from the producer's rank otherwise. Rank 0
// only sends the launches, ahead of time: each device's rank waits for a
// task's producers itself. The other ranks only own devices: their workers
// (or GPUs) run the kernels and the copies.
//
// Arena of a device (one allocation): failure words (GPU points), then for
// each of its points an output slot per timestep and the point's scratch.
// Every slot is written once per run, so no task waits for another to be
// done reading.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "impl.hpp"
#include "weft/offload.hpp"
#include "weft/weft.hpp"
#if defined(TASKBENCH_WEFT_CUDA)
#include "offload_cuda.hpp"
#endif

namespace taskbench_weft {

offload_devices_kind offload_kind = offload_devices_kind::automatic;

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

#if defined(TASKBENCH_WEFT_CUDA)
/// run_point on a GPU (offload_cuda.hpp); the arena starts with the failure words.
void run_point_gpu(weft::cuda_stream s, std::span<char> arena, std::vector<std::span<char>> inputs, const point_task& task) {
  const taskbench::task_graph& g = wait_for_app().graphs[static_cast<std::size_t>(task.graph)];
  gpu_point p;
  p.t = task.t, p.x = task.x;
  p.iterations = g.kernel.type == taskbench::kernel_type::empty ? 0 : g.iterations_at(task.t, task.x);
  p.output = arena.data() + task.output;
  p.output_bytes = g.output_bytes_per_task;
  g.for_each_input(task.t, task.x, [&](long producer) {
    if (p.n_inputs == gpu_point::max_inputs) throw std::length_error("offload: more than 64 inputs for a GPU point");
    p.inputs[p.n_inputs] = inputs[static_cast<std::size_t>(p.n_inputs)].data();
    p.producers[p.n_inputs++] = producer;
  });
  p.failure = reinterpret_cast<unsigned long long*>(arena.data());
  launch_gpu_point(s, p);
}
#endif

/// The devices the graphs run on: -weft-offload-devices, where auto means
/// the GPUs when the job has some and every graph's kernel runs there
/// (empty, compute_bound, load_imbalance; no scratch), else cpu devices.
std::vector<weft::device> offload_devices(const taskbench::app& app) {
  bool gpu_kernels = true;
  for (const auto& g : app.graphs) {
    const auto k = g.kernel.type;
    gpu_kernels &= g.scratch_bytes_per_task == 0 &&
                   (k == taskbench::kernel_type::empty || k == taskbench::kernel_type::compute_bound ||
                    k == taskbench::kernel_type::load_imbalance);
  }
  const auto gpus = weft::devices(weft::device_kind::cuda);
  if (offload_kind == offload_devices_kind::cuda) {
    if (gpus.empty()) throw devices_absent("-weft-offload-devices cuda: this job has no cuda device");
    if (!gpu_kernels) throw std::runtime_error("-weft-offload-devices cuda: the GPU kernel runs only empty, compute_bound and load_imbalance without scratch");
    return gpus;
  }
  if (offload_kind == offload_devices_kind::automatic && !gpus.empty() && gpu_kernels) return gpus;
  return weft::devices(weft::device_kind::cpu);
}

void fill_scratch(std::span<char> arena, std::uint64_t at, std::uint64_t bytes) {
  taskbench::task_graph::prepare_scratch(arena.data() + at, bytes);
}

std::uint64_t round_up(std::uint64_t n) { return (n + 63) / 64 * 64; }

/// Where everything of one graph lives.
struct layout {
  static constexpr std::uint64_t failure_words = 64;  // bytes, at the start of every arena

  layout(const taskbench::task_graph& g, int ndev) : sizes(static_cast<std::size_t>(ndev), failure_words) {
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

/// A point's task on its device: the host kernel on cpu devices, the CUDA
/// one on GPUs.
weft::future<void> launch_point(const weft::device& d, const weft::device_buffer<char>& arena,
                                std::vector<weft::device_buffer<char>>&& inputs, const point_task& task,
                                std::vector<weft::shared_future<void>>&& deps) {
#if defined(TASKBENCH_WEFT_CUDA)
  if (d.kind() == weft::device_kind::cuda) return weft::target(d, run_point_gpu, arena, std::move(inputs), task, std::move(deps));
#endif
  return weft::target(d, run_point, arena, std::move(inputs), task, std::move(deps));
}

/// A GPU point notes a bad input in its arena's failure words (a cpu point
/// throws at once): fails the run as execute_point would.
void check_failure_words(const taskbench::task_graph& g, const weft::device& d, const weft::device_buffer<char>& arena) {
  if (d.kind() != weft::device_kind::cuda) return;
  std::vector<std::uint64_t> words(4);
  weft::copy(std::span<char>(reinterpret_cast<char*>(words.data()), 32), arena, 0).get();
  if (words[0] == 0) return;
  throw taskbench::validation_error(
      "error: Task Bench detected a corrupted value in task (graph " + std::to_string(g.graph_index) + " timestep " +
          std::to_string(words[1]) + " point " + std::to_string(words[2]) + ") input " + std::to_string(words[3]) +
          " on " + weft::detail::describe_device(d.id()),
      g.graph_index, static_cast<long>(words[1]), static_cast<long>(words[2]), static_cast<long>(words[3]), -1);
}

/// Steps whose tasks may be in flight before the builder waits for the
/// oldest (bounds the futures held; errors surface while building).
constexpr long steps_ahead = 8;

void run_graph(const taskbench::task_graph& g, long index, const std::vector<weft::device>& devs) {
  const layout lay(g, static_cast<int>(devs.size()));
  std::vector<weft::future<weft::device_buffer<char>>> allocating;
  for (std::size_t d = 0; d < devs.size(); ++d) allocating.push_back(weft::allocate<char>(devs[d], std::max<std::uint64_t>(lay.sizes[d], 1)));
  std::vector<weft::device_buffer<char>> arena;
  for (auto& a : allocating) arena.push_back(a.get());
  const std::vector<char> zeros(layout::failure_words, 0);
  for (std::size_t d = 0; d < devs.size(); ++d)
    if (devs[d].kind() == weft::device_kind::cuda) weft::copy(arena[d], 0, std::span<const char>(zeros)).get();
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
        if (inject_corruption && t == 2 && device_of(p).rank() == weft::nranks() - 1 && device_of(x).kind() == weft::device_kind::cpu &&
            device_of(x).rank() != device_of(p).rank() && !corrupted.exchange(true))
          task.corrupt_input = static_cast<long>(inputs.size()) - 1;
      });
      auto f = launch_point(device_of(x), arena_of(x), std::move(inputs), task, std::move(deps)).share();
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
  for (std::size_t d = 0; d < devs.size(); ++d) check_failure_words(g, devs[d], arena[d]);
  for (auto& a : arena) weft::deallocate(a).get();
}

}  // namespace

void run_offload(const taskbench::app& app) {
  known_app& k = current_app();
  if (k.app.exchange(&app, std::memory_order_acq_rel) == nullptr) k.set.set_value();
  if (weft::rank() != 0) return;
  const std::vector<weft::device> devs = offload_devices(app);
  for (std::size_t i = 0; i < app.graphs.size(); ++i) run_graph(app.graphs[i], static_cast<long>(i), devs);
}

}  // namespace taskbench_weft
