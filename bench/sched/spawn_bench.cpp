// ns per task for spawn+join: fib-style recursion and a flat loop of
// independent tasks, for weft, OpenMP tasks (libgomp) and oneTBB task_group.
//
// Each measurement runs in a fresh child process (so only one runtime's
// thread pool exists), repetitions are interleaved across systems, and the
// table reports the median and min–max with the ratio weft / baseline.
//
//   bench_spawn [--reps N] [--fib N] [--flat N] [--threads 1,2] [--csv FILE]
#include <omp.h>
#include <sys/wait.h>
#include <tbb/global_control.h>
#include <tbb/task_group.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace {

using clk = std::chrono::steady_clock;

// ---- the work -------------------------------------------------------------

long fib_weft(int n) {
  if (n < 2) return n;
  auto a = weft::async(fib_weft, n - 1);
  long b = fib_weft(n - 2);
  return a.get() + b;
}

long fib_weft_group(int n) {
  if (n < 2) return n;
  long a = 0;
  weft::task_group g;
  g.run([&a, n] { a = fib_weft_group(n - 1); });
  long b = fib_weft_group(n - 2);
  g.wait();
  return a + b;
}

long fib_omp(int n) {
  if (n < 2) return n;
  long a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib_omp(n - 1);
  long b = fib_omp(n - 2);
#pragma omp taskwait
  return a + b;
}

long fib_tbb(int n) {
  if (n < 2) return n;
  long a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = fib_tbb(n - 1); });
  long b = fib_tbb(n - 2);
  g.wait();
  return a + b;
}

// Tasks spawned by fib(n): one per call with n >= 2.
long fib_tasks(int n) { return n < 2 ? 0 : 1 + fib_tasks(n - 1) + fib_tasks(n - 2); }

std::atomic<long> sink{0};
inline void tiny(long i) {
  if (i == -1) sink.fetch_add(1, std::memory_order_relaxed);  // never true; keeps the body
}

// ---- one measurement, in this (child) process ------------------------------

double measure(const std::string& sys, const std::string& pattern, int threads, int fib_n, long flat_n) {
  const long tasks = pattern == "fib" ? fib_tasks(fib_n) : flat_n;
  double best = 1e300;
  auto time_it = [&](auto&& body) {
    for (int warm = 0; warm < 2; ++warm) body();  // warm pools and allocators
    for (int r = 0; r < 3; ++r) {
      auto t0 = clk::now();
      body();
      double s = std::chrono::duration<double>(clk::now() - t0).count();
      best = std::min(best, s);
    }
  };
  if (sys == "weft" || sys == "weft-group") {
    std::string opt = "--weft:threads=" + std::to_string(threads);
    char a0[] = "bench";
    std::vector<char*> argv = {a0, opt.data(), nullptr};
    int argc = 2;
    weft::runtime rt(argc, argv.data());
    weft::async([&] {
      if (pattern == "fib") {
        time_it([&] { sink += sys == "weft" ? fib_weft(fib_n) : fib_weft_group(fib_n); });
      } else {
        time_it([&] {
          weft::task_group g;
          for (long i = 0; i < flat_n; ++i) g.run([i] { tiny(i); });
          g.wait();
        });
      }
    }).get();
  } else if (sys == "omp") {
    omp_set_num_threads(threads);
#pragma omp parallel
#pragma omp single
    {
      if (pattern == "fib") {
        time_it([&] { sink += fib_omp(fib_n); });
      } else {
        time_it([&] {
          for (long i = 0; i < flat_n; ++i) {
#pragma omp task firstprivate(i)
            tiny(i);
          }
#pragma omp taskwait
        });
      }
    }
  } else if (sys == "tbb") {
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    if (pattern == "fib") {
      time_it([&] { sink += fib_tbb(fib_n); });
    } else {
      time_it([&] {
        tbb::task_group g;
        for (long i = 0; i < flat_n; ++i) g.run([i] { tiny(i); });
        g.wait();
      });
    }
  } else {
    std::fprintf(stderr, "unknown system %s\n", sys.c_str());
    std::exit(2);
  }
  return best / static_cast<double>(tasks) * 1e9;
}

// ---- driver: child processes, interleaved ----------------------------------

double run_child(const char* self, const std::string& sys, const std::string& pattern, int threads, int fib_n,
                 long flat_n) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    std::string t = std::to_string(threads), f = std::to_string(fib_n), l = std::to_string(flat_n);
    setenv("OMP_WAIT_POLICY", "active", 1);
    execl(self, self, "--child", sys.c_str(), pattern.c_str(), t.c_str(), f.c_str(), l.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  char buf[128] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_spawn: child %s/%s/%d failed\n", sys.c_str(), pattern.c_str(), threads);
    std::exit(1);
  }
  return std::atof(buf);
}

struct stats {
  double med, lo, hi;
};
stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return {med, v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::strcmp(argv[1], "--child") == 0) {
    double ns = measure(argv[2], argv[3], std::atoi(argv[4]), std::atoi(argv[5]), std::atol(argv[6]));
    std::printf("%.4f\n", ns);
    return 0;
  }
  int reps = 5, fib_n = 27;
  long flat_n = 200000;
  std::vector<int> thread_counts = {1, 2};
  const char* csv = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_spawn: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--reps") reps = std::max(1, std::atoi(next()));
    else if (a == "--fib") fib_n = std::atoi(next());
    else if (a == "--flat") flat_n = std::atol(next());
    else if (a == "--csv") csv = next();
    else if (a == "--threads") {
      thread_counts.clear();
      std::string s = next();
      for (std::size_t p = 0; p < s.size();) {
        std::size_t q = s.find(',', p);
        thread_counts.push_back(std::atoi(s.substr(p, q - p).c_str()));
        p = q == std::string::npos ? s.size() : q + 1;
      }
    } else {
      std::fprintf(stderr, "usage: bench_spawn [--reps N] [--fib N] [--flat N] [--threads 1,2] [--csv FILE]\n");
      return 2;
    }
  }
  const std::array<const char*, 4> systems = {"weft", "weft-group", "omp", "tbb"};
  const std::array<const char*, 2> patterns = {"fib", "flat"};
  std::map<std::string, std::vector<double>> samples;
  auto key = [](const std::string& s, const std::string& p, int t) { return s + "/" + p + "/" + std::to_string(t); };
  for (int r = 0; r < reps; ++r) {
    std::fprintf(stderr, "\rbench_spawn: repetition %d/%d", r + 1, reps);
    for (int t : thread_counts)
      for (const char* p : patterns)
        for (const char* s : systems) {
          if (std::string(p) == "flat" && std::string(s) == "weft-group") continue;  // same as weft for flat
          samples[key(s, p, t)].push_back(run_child(argv[0], s, p, t, fib_n, flat_n));
        }
  }
  std::fprintf(stderr, "\n");
  FILE* out = csv ? std::fopen(csv, "w") : nullptr;
  if (out) std::fprintf(out, "system,pattern,threads,median_ns,min_ns,max_ns\n");
  std::printf("ns per task (spawn + join), median [min-max] of %d interleaved runs; fib(%d) = %ld tasks, flat = %ld tasks\n\n",
              reps, fib_n, fib_tasks(fib_n), flat_n);
  std::printf("| pattern | threads | weft | weft task_group | OpenMP tasks | oneTBB | OpenMP/weft | TBB/weft |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int t : thread_counts)
    for (const char* p : patterns) {
      auto cell = [&](const char* s) -> std::string {
        auto it = samples.find(key(s, p, t));
        if (it == samples.end()) return "–";
        stats st = summarize(it->second);
        if (out) std::fprintf(out, "%s,%s,%d,%.3f,%.3f,%.3f\n", s, p, t, st.med, st.lo, st.hi);
        char b[96];
        std::snprintf(b, sizeof b, "%.1f [%.1f–%.1f]", st.med, st.lo, st.hi);
        return b;
      };
      double w = summarize(samples[key("weft", p, t)]).med;
      double o = summarize(samples[key("omp", p, t)]).med;
      double b = summarize(samples[key("tbb", p, t)]).med;
      std::printf("| %s | %d | %s | %s | %s | %s | %.1fx | %.1fx |\n", p, t, cell("weft").c_str(), cell("weft-group").c_str(),
                  cell("omp").c_str(), cell("tbb").c_str(), o / w, b / w);
    }
  if (out) std::fclose(out);
  return 0;
}
