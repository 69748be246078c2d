// Scheduler-level model of Task Bench's stencil_1d graph (width W, T steps,
// a compute kernel of `iter` rounds per task), to see how much of each task
// weft's dataflow and fork-join styles lose to overhead, next to a baseline
// of W plain threads synchronising per step with a spin barrier (what an MPI
// rank per core does, minus the messages).
//
//   bench_stencil [--width W] [--steps T] [--reps N]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.hpp"

namespace {
using clk = std::chrono::steady_clock;

double kernel(long iter, double seed) {
  double a[64];
  for (int j = 0; j < 64; ++j) a[j] = seed + j * 1e-3;
  for (long i = 0; i < iter; ++i)
    for (int j = 0; j < 64; ++j) a[j] = a[j] * 0.999999 + 1e-7;
  double s = 0;
  for (double v : a) s += v;
  return s;
}

double dataflow(int W, int T, long iter) {
  std::vector<weft::shared_future<double>> prev(W), cur(W);
  for (int x = 0; x < W; ++x) prev[x] = weft::make_ready_future(1.0).share();
  for (int t = 0; t < T; ++t) {
    for (int x = 0; x < W; ++x) {
      std::vector<weft::shared_future<double>> in;
      for (int d = std::max(0, x - 1); d <= std::min(W - 1, x + 1); ++d) in.push_back(prev[d]);
      cur[x] = weft::dataflow(
                   [iter](std::vector<weft::shared_future<double>>& in) {
                     double s = 0;
                     for (auto& v : in) s += v.get();
                     return kernel(iter, s * 1e-9);
                   },
                   std::move(in))
                   .share();
    }
    std::swap(prev, cur);
  }
  double s = 0;
  for (auto& f : prev) s += f.get();
  return s;
}

double forkjoin(int W, int T, long iter) {
  std::vector<double> a(W, 1.0), b(W);
  for (int t = 0; t < T; ++t) {
    weft::parallel_for(0, W, 1, [&](int x) {
      double s = 0;
      for (int d = std::max(0, x - 1); d <= std::min(W - 1, x + 1); ++d) s += a[d];
      b[x] = kernel(iter, s * 1e-9);
    });
    std::swap(a, b);
  }
  double s = 0;
  for (double v : a) s += v;
  return s;
}

double threads_baseline(int W, int T, long iter) {
  std::vector<double> a(W, 1.0), b(W);
  std::atomic<int> arrived{0};
  std::atomic<int> phase{0};
  auto body = [&](int x) {
    std::vector<double>* in = &a;
    std::vector<double>* out = &b;
    for (int t = 0; t < T; ++t) {
      double s = 0;
      for (int d = std::max(0, x - 1); d <= std::min(W - 1, x + 1); ++d) s += (*in)[d];
      (*out)[x] = kernel(iter, s * 1e-9);
      int p = phase.load();
      if (arrived.fetch_add(1) == W - 1) {
        arrived.store(0);
        phase.fetch_add(1);
      } else {
        while (phase.load() == p) {
        }
      }
      std::swap(in, out);
    }
  };
  std::vector<std::thread> th;
  for (int x = 1; x < W; ++x) th.emplace_back(body, x);
  body(0);
  for (auto& t : th) t.join();
  return a[0];
}

}  // namespace

int main(int argc, char** argv) {
  int W = 2, T = 1000, reps = 3;
  long only_iter = -1;
  std::string only;
  weft::init(argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--width" && i + 1 < argc) W = std::atoi(argv[++i]);
    else if (a == "--steps" && i + 1 < argc) T = std::atoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--profile" && i + 2 < argc) {  // --profile dataflow|forkjoin ITER: one style only
      only = argv[++i];
      only_iter = std::atol(argv[++i]);
    }
  }
  if (!only.empty()) {
    auto t0 = clk::now();
    double r = weft::async([&] { return only == "dataflow" ? dataflow(W, T, only_iter) : forkjoin(W, T, only_iter); }).get();
    double us = std::chrono::duration<double, std::micro>(clk::now() - t0).count();
    std::printf("%s iter=%ld: %.3f us per task (%g)\n", only.c_str(), only_iter, us * std::min(W, 2) / (double(W) * T), r);
    weft::finalize();
    return 0;
  }
  std::printf("stencil W=%d T=%d, %d weft threads; us per task (median of %d) and efficiency vs the kernel alone\n", W, T,
              weft::num_threads(), reps);
  std::printf("%8s %10s | %10s %6s | %10s %6s | %10s %6s\n", "iter", "kernel_us", "threads", "eff", "dataflow", "eff",
              "forkjoin", "eff");
  for (long iter = 1 << 14; iter >= 1; iter /= 4) {
    auto t0 = clk::now();
    volatile double sink = 0;
    for (int k = 0; k < 200; ++k) sink = sink + kernel(iter, 1.0);
    double kus = std::chrono::duration<double, std::micro>(clk::now() - t0).count() / 200;
    auto measure = [&](auto fn) {
      std::vector<double> v;
      for (int r = 0; r < reps; ++r) {
        auto s = clk::now();
        sink = sink + fn();
        v.push_back(std::chrono::duration<double, std::micro>(clk::now() - s).count());
      }
      std::sort(v.begin(), v.end());
      return v[v.size() / 2] * std::min(W, 2) / (double(W) * T);  // us per task per core
    };
    double th = measure([&] { return threads_baseline(W, T, iter); });
    double df = measure([&] { return weft::async([&] { return dataflow(W, T, iter); }).get(); });
    double fj = measure([&] { return weft::async([&] { return forkjoin(W, T, iter); }).get(); });
    std::printf("%8ld %10.2f | %10.2f %5.0f%% | %10.2f %5.0f%% | %10.2f %5.0f%%\n", iter, kus, th, 100 * kus / th, df,
                100 * kus / df, fj, 100 * kus / fj);
  }
  weft::finalize();
}
