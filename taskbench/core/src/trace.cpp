// TASKBENCH_TRACE=PREFIX: execute_point records when each task started and
// ended, and at exit every process writes PREFIX.PID. `metg gaps` reads the
// files and reports how long each timestep's tasks waited after the step
// before had ended: an implementation's per-step overhead, measured apart
// from the kernel's speed (which drifts between runs on a shared machine
// by more than the overheads being compared).
//
// File format, one task per line: "graph timestep point start_ns end_ns
// cpu", times from CLOCK_MONOTONIC (one clock for all processes of a
// machine), cpu the core the task ended on.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

#include <sched.h>
#include <unistd.h>

#include "internal.hpp"

namespace taskbench::detail {

namespace {

struct record {
  long graph, t, x;
  long long start, end;
  int cpu;
};

class tracer {
 public:
  tracer() {
    const char* prefix = std::getenv("TASKBENCH_TRACE");
    if (prefix == nullptr || *prefix == '\0') return;
    prefix_ = prefix;
    // Pages are touched only as records arrive.
    records_.reset(new record[capacity]);
    trace_on = true;
  }
  ~tracer() {
    if (!records_) return;
    char name[4096];
    std::snprintf(name, sizeof name, "%s.%d", prefix_, static_cast<int>(getpid()));
    std::FILE* f = std::fopen(name, "w");
    if (f == nullptr) {
      std::fprintf(stderr, "warning: TASKBENCH_TRACE: cannot write %s\n", name);
      return;
    }
    const long n = next_.load();
    const long kept = n < capacity ? n : capacity;
    if (n > kept) std::fprintf(f, "# dropped %ld tasks past the first %ld\n", n - kept, kept);
    for (long i = 0; i < kept; ++i) {
      const record& r = records_[static_cast<std::size_t>(i)];
      std::fprintf(f, "%ld %ld %ld %lld %lld %d\n", r.graph, r.t, r.x, r.start, r.end, r.cpu);
    }
    std::fclose(f);
  }
  void add(const record& r) noexcept {
    const long i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i < capacity) records_[static_cast<std::size_t>(i)] = r;
  }

 private:
  static constexpr long capacity = 1L << 22;
  const char* prefix_ = nullptr;
  std::unique_ptr<record[]> records_;
  std::atomic<long> next_{0};
};

tracer the_tracer;

}  // namespace

bool trace_on = false;

long long trace_clock() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void trace_task(long graph, long t, long x, long long start) noexcept {
  the_tracer.add({graph, t, x, start, trace_clock(), sched_getcpu()});
}

}  // namespace taskbench::detail
