// Overhead of target tasks on cpu devices, against baselines measured in the
// same run: an empty weft::async_at round trip to the same rank, and MPP's
// published ~700 us per task.
//
//   bench_offload [--reps N] [--iters K] [--mib M] [--quick] [--weft:...]
//     smp:  bench_offload --weft:ranks=2 --weft:threads=2
//     mpi:  mpiexec -n 2 -bind-to core bench_offload
//
// Rank 0 measures; rank 1 (when there is one) owns the remote device. Every
// repetition runs every case once, in turn (interleaved); the table gives
// median [min-max] over the repetitions of the time per task (us), and the
// device-to-device bandwidth between ranks (GB/s) against a remote call
// carrying the same bytes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "weft/weft.hpp"
#include "weft/offload.hpp"

namespace {

constexpr double mpp_us_per_task = 700.0;  // MPP's published per-task cost

struct options {
  int reps = 11;
  int iters = 2000;
  std::size_t mib = 64;
};

void empty_kernel() {}
void empty_call() {}
void take_bytes(std::vector<std::byte> b) { (void)b; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// us per target task with `window` tasks in flight.
double targets_in_flight(const weft::device& d, int iters, int window) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<weft::future<void>> batch;
  for (int done = 0; done < iters; done += window) {
    for (int k = 0; k < window; ++k) batch.push_back(weft::target(d, empty_kernel));
    for (auto& f : batch) f.get();
    batch.clear();
  }
  return seconds_since(t0) * 1e6 / ((iters + window - 1) / window * window);
}

double async_at_round_trip(int rank, int iters) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) weft::async_at(rank, &empty_call).get();
  return seconds_since(t0) * 1e6 / iters;
}

struct row {
  std::string name;
  std::function<double()> run;
  std::vector<double> samples;
};

struct stats {
  double median, min, max;
};
stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

int bench(const options& o) {
  if (weft::rank() != 0) return 0;
  const int remote_rank = weft::nranks() > 1 ? 1 : 0;
  const weft::device local = weft::devices_of(0).front();
  const weft::device remote = weft::devices_of(remote_rank).front();
  const std::size_t bytes = o.mib << 20;
  auto src = weft::allocate<std::byte>(local, bytes).get();
  auto dst = weft::allocate<std::byte>(remote, bytes).get();
  const std::vector<std::byte> fill(bytes, std::byte{1});
  weft::copy(src, 0, std::span<const std::byte>(fill)).get();

  std::vector<row> latency = {
      {"async_at round trip, rank 0 -> " + std::to_string(remote_rank) + " (baseline)",
       [&] { return async_at_round_trip(remote_rank, o.iters); }, {}},
      {"target, local device, 1 in flight", [&] { return targets_in_flight(local, o.iters, 1); }, {}},
      {"target, remote device, 1 in flight", [&] { return targets_in_flight(remote, o.iters, 1); }, {}},
      {"target, remote device, 8 in flight", [&] { return targets_in_flight(remote, o.iters, 8); }, {}},
      {"target, remote device, 64 in flight", [&] { return targets_in_flight(remote, o.iters, 64); }, {}},
  };
  std::vector<row> bandwidth = {
      {"async_at with the bytes (baseline)", [&] {
         const auto t0 = std::chrono::steady_clock::now();
         weft::async_at(remote_rank, &take_bytes, fill).get();
         return static_cast<double>(bytes) / seconds_since(t0) / 1e9;
       }, {}},
      {"device to device copy, rank 0 -> " + std::to_string(remote_rank), [&] {
         const auto t0 = std::chrono::steady_clock::now();
         weft::copy(dst, 0, src, 0, bytes).get();
         return static_cast<double>(bytes) / seconds_since(t0) / 1e9;
       }, {}},
  };
  for (auto& r : latency) r.run();  // warm-up
  for (int rep = 0; rep < o.reps; ++rep) {
    for (auto& r : latency) r.samples.push_back(r.run());
    for (auto& r : bandwidth) r.samples.push_back(r.run());
  }
  std::printf("offload overhead on %s, %d ranks x %d threads; %d reps x %d tasks, median [min-max]\n\n",
              weft::backend_name(), weft::nranks(), weft::num_threads(), o.reps, o.iters);
  const stats base = summarize(latency[0].samples);
  std::printf("%-44s %22s %12s %12s\n", "case", "us per task", "/ baseline", "MPP / this");
  for (auto& r : latency) {
    const stats s = summarize(r.samples);
    std::printf("%-44s %8.2f [%5.2f-%6.2f] %11.2fx %11.0fx\n", r.name.c_str(), s.median, s.min, s.max,
                s.median / base.median, mpp_us_per_task / s.median);
  }
  const std::string bw_title = "bandwidth, " + std::to_string(o.mib) + " MiB";
  std::printf("\n%-44s %22s %12s\n", bw_title.c_str(), "GB/s", "/ baseline");
  const stats bw = summarize(bandwidth[0].samples);
  for (auto& r : bandwidth) {
    const stats s = summarize(r.samples);
    std::printf("%-44s %8.2f [%5.2f-%6.2f] %11.2fx\n", r.name.c_str(), s.median, s.min, s.max, s.median / bw.median);
  }
  std::vector<std::byte> back(bytes);
  weft::copy(std::span<std::byte>(back), dst, 0).get();
  const bool ok = back == fill;
  std::printf("\ncopied bytes verified: %s\n", ok ? "yes" : "NO");
  weft::deallocate(src).get();
  weft::deallocate(dst).get();
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) o.reps = std::atoi(argv[++i]);
    else if (a == "--iters" && i + 1 < argc) o.iters = std::atoi(argv[++i]);
    else if (a == "--mib" && i + 1 < argc) o.mib = static_cast<std::size_t>(std::atoi(argv[++i]));
    else if (a == "--quick") o = {3, 200, 4};
    else argv[out++] = argv[i];
  }
  argc = out;
  argv[argc] = nullptr;
  return weft::run(argc, argv, [&] { return bench(o); });
}
