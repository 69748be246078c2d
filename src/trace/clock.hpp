// The recorder's clock. The hot path reads ticks, which cost less than a
// CLOCK_MONOTONIC read; they become CLOCK_MONOTONIC nanoseconds only when
// the file is written, through two (ticks, ns) anchors taken when
// recording starts and stops.
//
// Ticks are the CPU's time-stamp counter when the kernel itself keeps
// CLOCK_MONOTONIC on it (clocksource "tsc": the kernel found it constant in
// rate and in step on every core), else CLOCK_MONOTONIC nanoseconds. On the
// 2-core AMD EPYC VM the counter read costs 15 ns against 36 ns for
// clock_gettime (docs/TRACING.md).
#pragma once
#include <atomic>
#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define WEFT_TRACE_HAVE_TSC 1
#else
#define WEFT_TRACE_HAVE_TSC 0
#endif

namespace weft::trace {

/// Nanoseconds of CLOCK_MONOTONIC (the file's time base; clock offsets
/// between processes are measured with it).
inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Whether ticks() reads the time-stamp counter (set by start_clock();
/// atomic because a progress thread may be running then; relaxed loads are
/// plain loads on x86).
inline std::atomic<bool> ticks_are_tsc{false};

/// The recorder's timestamp: cheap, monotonic, in units ticks_to_ns() maps.
inline std::uint64_t ticks() noexcept {
#if WEFT_TRACE_HAVE_TSC
  if (ticks_are_tsc.load(std::memory_order_relaxed)) [[likely]]
    return __rdtsc();
#endif
  return monotonic_ns();
}

/// Chooses the ticks and takes the first anchor (before recording starts).
void start_clock() noexcept;
/// Takes the second anchor (when recording stops; again if called again).
void stop_clock() noexcept;

/// Turns ticks into CLOCK_MONOTONIC nanoseconds: the line through the two
/// anchors.
struct tick_map {
  std::uint64_t base_tick = 0;
  std::int64_t base_ns = 0;
  double ns_per_tick = 1.0;
  /// CLOCK_MONOTONIC nanoseconds at tick `t`.
  std::int64_t ns(std::uint64_t t) const noexcept {
    return base_ns + static_cast<std::int64_t>(static_cast<double>(static_cast<std::int64_t>(t - base_tick)) * ns_per_tick);
  }
  /// The length of `d` ticks in nanoseconds.
  double span(std::uint64_t d) const noexcept { return static_cast<double>(d) * ns_per_tick; }
};
/// The map of this recording (its second anchor taken now if recording has
/// not stopped: a failure path writes mid-run).
tick_map current_tick_map() noexcept;

}  // namespace weft::trace
