// The two ways the benchmarks' recursive algorithms fork: one code for the
// serial baseline (plain calls, one after the other) and for weft (tasks any
// rank may steal), so both run the same algorithm.
#pragma once
#include <utility>

#include "weft/forkjoin.hpp"

namespace fj_bench {

/// Plain recursion: the serial baseline.
struct serial_forks {
  /// f() and g(), as a pair of their results.
  template <class F, class G>
  static auto both(F f, G g) {
    auto a = f();
    return std::pair(a, g());
  }
  /// Every void f(), in order.
  template <class... F>
  static void all(F... f) {
    (f(), ...);
  }
};

/// weft::parallel_invoke: every function but the first may be stolen.
struct weft_forks {
  template <class F, class G>
  static auto both(F f, G g) {
    auto [a, b] = weft::parallel_invoke(f, g);
    return std::pair(a, b);
  }
  template <class... F>
  static void all(F... f) {
    weft::parallel_invoke(f...);
  }
};

}  // namespace fj_bench
