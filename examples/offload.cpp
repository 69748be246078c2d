// Kernels on the devices of every rank (weft/offload.hpp). It runs
// unchanged on both backends, with one or more cpu devices per rank:
//
//   ./example_offload --weft:ranks=4                      # 4 ranks, 1 device each
//   WEFT_CPU_DEVICES=2 mpiexec -n 2 ./example_offload     # 2 ranks, 2 devices each
//
// Rank 0 drives everything: a saxpy split over all devices, a chain of
// kernels on data kept on the last device (OpenMP's target data), and an
// output handed from one device to another without passing through rank 0.
#include <cstdio>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "weft/weft.hpp"  // every layer, offload included

namespace {

// Kernels: plain functions. Mapped data arrives as spans of the device's copy.
void saxpy(float a, std::span<const float> x, std::span<float> y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += a * x[i];
}

void scale(std::span<double> v, double by) {
  for (auto& e : v) e *= by;
}

void squares(std::span<long> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<long>(i * i);
}

void sum(std::span<const long> in, std::span<long> total) { total[0] = std::accumulate(in.begin(), in.end(), 0L); }

int drive() {
  // Host kernels: cpu devices (a cuda device runs launchers, docs/OFFLOAD.md).
  const std::vector<weft::device> devs = weft::devices(weft::device_kind::cpu);
  std::printf("%zu devices on %d ranks\n", devs.size(), weft::nranks());

  // 1. saxpy, one block per device, all in flight at once.
  const std::size_t n = 4096, block = n / devs.size();
  std::vector<float> x(n), y(n, 1.0f);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<weft::future<void>> running;
  for (std::size_t d = 0; d < devs.size(); ++d) {
    const std::size_t first = d * block, count = d + 1 == devs.size() ? n - first : block;
    running.push_back(weft::target(devs[d], saxpy, 2.0f, weft::map_to(std::span(x).subspan(first, count)),
                                   weft::map_tofrom(std::span(y).subspan(first, count))));
  }
  for (auto& f : running) f.get();
  double total = std::accumulate(y.begin(), y.end(), 0.0);
  std::printf("saxpy over %zu devices: sum %.0f (expected %.0f)\n", devs.size(), total,
              double(n) + 2.0 * double(n) * double(n - 1) / 2.0);

  // 2. Data that stays on a device between kernels: enter once, run ten
  // kernels that copy nothing, bring the result back once.
  const weft::device last = devs.back();
  std::vector<double> v(1000, 1.0);
  weft::target_enter_data(last, weft::map_to(v)).get();
  weft::future<void> chain = weft::make_ready_future();
  for (int k = 0; k < 10; ++k) chain = weft::target(last, scale, weft::map_tofrom(v), 2.0, std::move(chain));
  chain.get();
  weft::target_exit_data(last, weft::map_from(v)).get();
  std::printf("10 kernels on device %d (rank %d) with the data present: v[0] = %.0f\n", last.id(), last.rank(), v[0]);

  // 3. Device to device: the producer's output goes from its rank to the
  // consumer's rank directly.
  const weft::device first = devs.front();
  auto produced = weft::allocate<long>(first, 100).get();
  auto received = weft::allocate<long>(last, 100).get();
  weft::target(first, squares, produced).get();
  weft::copy(received, 0, produced, 0, 100).get();
  std::vector<long> result(1);
  weft::target(last, sum, received, weft::map_from(result)).get();
  std::printf("sum of squares below 100, made on device %d, summed on device %d: %ld\n", first.id(), last.id(),
              result[0]);
  // The same without waiting for the producer: the consumer names the
  // producer's buffer and future and is launched at once; the consumer's
  // rank waits for the producer and gets its bytes from the producer's rank.
  auto made = weft::target(first, squares, produced);
  weft::target(last, sum, produced, weft::map_from(result), std::move(made)).get();
  std::printf("the same, launched before the producer ended: %ld\n", result[0]);
  weft::deallocate(produced).get();
  weft::deallocate(received).get();

  // 4. Errors reach the future, naming the device and its rank.
  try {
    weft::target(last, [](int k) { if (k < 0) throw std::invalid_argument("negative"); }, -1).get();
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", e.what());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] { return weft::rank() == 0 ? drive() : 0; });
}
