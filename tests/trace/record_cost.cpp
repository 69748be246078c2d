// What one traced task interval costs the thread that records it: a loop
// of interval_begin/interval_end pairs with the recorder off and on, timed
// in the thread's CPU time (other processes on the machine do not count).
// Not a test (tests never assert timings); docs/TRACING.md quotes it.
//
//   trace_record_cost [pairs]      default 2000000
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "trace/control.hpp"
#include "trace/recorder.hpp"

namespace {

double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double per_pair(long n) {
  const double t0 = cpu_ns();
  for (long i = 0; i < n; ++i) {
    weft::trace::interval_begin();
    weft::trace::interval_end();
  }
  return (cpu_ns() - t0) / static_cast<double>(n);
}

/// One read of the recorder's clock (call after start: it chooses the clock).
double per_clock_read(long n) {
  std::uint64_t sink = 0;
  const double t0 = cpu_ns();
  for (long i = 0; i < n; ++i) sink += weft::trace::ticks();
  const double t = (cpu_ns() - t0) / static_cast<double>(n);
  return sink == 1 ? 0 : t;
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2000000;
  const double off = per_pair(n);
  weft::trace::start(static_cast<std::size_t>(2 * n), 0);
  const double first = per_pair(n);   // fresh buffer pages: first touch
  const double again = per_pair(n);   // pages of the second half were touched by nobody either
  const double clock_read = per_clock_read(n);
  weft::trace::stop();
  std::printf("off: %.1f ns per interval\n", off);
  std::printf("on:  %.1f ns per interval (%.1f ns in a second run)\n", first, again);
  std::printf("one read of the recorder's clock (%s): %.1f ns (an interval reads it twice)\n",
              weft::trace::ticks_are_tsc.load() ? "time-stamp counter" : "CLOCK_MONOTONIC", clock_read);
  return 0;
}
