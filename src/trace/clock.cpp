#include "trace/clock.hpp"

#include <fstream>
#include <string>

namespace weft::trace {

namespace {

/// A tick and the CLOCK_MONOTONIC time read at the same instant.
struct anchor {
  std::uint64_t tick = 0;
  std::uint64_t ns = 0;
};

anchor first, last;
bool stopped = false;

/// The kernel keeps CLOCK_MONOTONIC on the time-stamp counter only when it
/// trusts it on every core; the recorder trusts it on the same terms.
bool kernel_clock_is_tsc() {
  std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(f >> source) && source == "tsc";
}

/// The tick halfway between two counter reads around one clock read, from
/// the tightest of a few tries (an interrupt in between widens one).
anchor take_anchor() noexcept {
  anchor best;
  std::uint64_t best_width = ~std::uint64_t{0};
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t a = ticks();
    const std::uint64_t ns = monotonic_ns();
    const std::uint64_t b = ticks();
    if (b - a < best_width) {
      best_width = b - a;
      best = {a + (b - a) / 2, ns};
    }
  }
  return best;
}

}  // namespace

void start_clock() noexcept {
#if WEFT_TRACE_HAVE_TSC
  bool tsc = false;
  try {
    tsc = kernel_clock_is_tsc();
  } catch (...) {
  }
  ticks_are_tsc.store(tsc, std::memory_order_relaxed);
#endif
  first = take_anchor();
  stopped = false;
}

void stop_clock() noexcept {
  last = take_anchor();
  stopped = true;
}

tick_map current_tick_map() noexcept {
  if (!ticks_are_tsc.load(std::memory_order_relaxed)) return {};  // ticks are nanoseconds already
  tick_map m{first.tick, static_cast<std::int64_t>(first.ns), 1.0};
  const anchor end = stopped ? last : take_anchor();
  if (end.tick > first.tick)
    m.ns_per_tick = static_cast<double>(end.ns - first.ns) / static_cast<double>(end.tick - first.tick);
  return m;
}

}  // namespace weft::trace
