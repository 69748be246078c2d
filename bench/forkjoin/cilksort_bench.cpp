// Cilksort (cilksort.hpp) of --n ints (default 10^7) in global memory on
// rank 0, reached through checkouts, with a scratch array of the same size;
// the serial baseline sorts std::vectors with the same algorithm.
//
//   bench_fj_cilksort --serial [--n=N]
//   bench_fj_cilksort --weft:ranks=1 --weft:threads=2 --weft:segment=2G [--n=N]
//   bench_fj_cilksort --weft:ranks=2 --weft:threads=1 --weft:segment=2G
//   WEFT_THREADS=1 WEFT_SEGMENT=2G mpiexec.mpich -n 2 -bind-to core bench_fj_cilksort
// Each rank's heap needs 8n bytes (--weft:segment, default 1G: enough up to
// n = 1.2 * 10^8 ... minus what else is there; pass 2G for 10^8).
// Options: --reps=R, --sort-cutoff=K, --merge-cutoff=K, --label, --csv.
// Records the sort's time (s; filling and checking are not timed) and
// checks that the result is sorted and has the input's checksum.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "cilksort.hpp"
#include "fork_policy.hpp"
#include "weft/checkout.hpp"
#include "weft/pgas.hpp"

namespace {

using namespace fj_bench;
using element = std::int32_t;

/// The serial baseline's memory: plain spans.
struct local_mem {
  using S = std::span<element>;
  static S sub(S s, std::size_t first, std::size_t count) { return s.subspan(first, count); }
  static std::size_t size(S s) { return s.size(); }
  static void sort_leaf(S s) { std::sort(s.begin(), s.end()); }
  static void merge_leaf(S a, S b, S out) { std::merge(a.begin(), a.end(), b.begin(), b.end(), out.begin()); }
  static element at(S s, std::size_t i) { return s[i]; }
  static std::size_t lower_bound(S s, element v) {
    return static_cast<std::size_t>(std::lower_bound(s.begin(), s.end(), v) - s.begin());
  }
};

/// weft's: global spans, touched only through checkouts held within one
/// task (none across a fork).
struct global_mem {
  using S = weft::global_span<element>;
  static S sub(S s, std::size_t first, std::size_t count) { return s.subspan(first, count); }
  static std::size_t size(S s) { return s.size; }
  static void sort_leaf(S s) {
    auto c = weft::make_checkout(s, weft::checkout_mode::read_write);
    std::sort(c.begin(), c.end());
  }
  static void merge_leaf(S a, S b, S out) {
    if (b.size == 0) std::swap(a, b);  // (a split may leave one input empty; it is not checked out)
    auto co = weft::make_checkout(out, weft::checkout_mode::write);
    auto cb = weft::make_checkout(b, weft::checkout_mode::read);
    if (a.size == 0) {
      std::copy(cb.begin(), cb.end(), co.begin());
      return;
    }
    auto ca = weft::make_checkout(a, weft::checkout_mode::read);
    std::merge(ca.begin(), ca.end(), cb.begin(), cb.end(), co.begin());
  }
  static element at(S s, std::size_t i) { return weft::make_checkout(s.data + static_cast<std::ptrdiff_t>(i), 1, weft::checkout_mode::read)[0]; }
  /// Binary search by one-element checkouts (as Itoyori's gets), so a
  /// merge never maps more than it reads.
  static std::size_t lower_bound(S s, element v) {
    std::size_t lo = 0, hi = s.size;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (at(s, mid) < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
};

/// Deterministic input: splitmix64 of the index.
element input_at(std::size_t i) {
  std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<element>(z ^ (z >> 31));
}

/// Order-independent checksum and sortedness.
struct verdict {
  std::uint64_t sum = 0, squares = 0;
  bool sorted = true;
};

verdict check(std::span<const element> s) {
  verdict v;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<std::uint64_t>(static_cast<std::int64_t>(s[i]));
    v.sum += u;
    v.squares += u * u;
    if (i > 0 && s[i - 1] > s[i]) v.sorted = false;
  }
  return v;
}

void fill(std::span<element> a, std::span<element> tmp) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = input_at(i);
  std::fill(tmp.begin(), tmp.end(), 0);  // touch the scratch pages before timing
}

void run(const options& o) {
  const auto n = static_cast<std::size_t>(o.number("n", 10'000'000));
  sort_cutoffs cut;
  cut.sort = static_cast<std::size_t>(o.number("sort-cutoff", static_cast<long>(cut.sort)));
  cut.merge = static_cast<std::size_t>(o.number("merge-cutoff", static_cast<long>(cut.merge)));
  const std::string param = "n=" + std::to_string(n);
  std::vector<element> va, vt;
  weft::global_span<element> ga, gt;
  if (o.serial()) {
    va.resize(n);
    vt.resize(n);
  } else {
    ga = {weft::allocate_symmetric<element>(n).on(0), n};
    gt = {weft::allocate_symmetric<element>(n).on(0), n};
  }
  for (long rep = 0; rep < o.number("reps", 1); ++rep) {
    verdict before, after;
    double seconds = 0;
    if (o.serial()) {
      fill(va, vt);
      before = check(va);
      const auto t0 = now_ns();
      cilksort<local_mem, serial_forks>(std::span<element>(va), std::span<element>(vt), cut);
      seconds = 1e-9 * static_cast<double>(now_ns() - t0);
      after = check(va);
    } else {
      before = weft::root_exec([ga, gt] {
        auto a = weft::make_checkout(ga, weft::checkout_mode::write);
        auto t = weft::make_checkout(gt, weft::checkout_mode::write);
        fill(a.span(), t.span());
        return check(a.span());
      });
      weft::barrier();
      weft::reset_steal_statistics();
      const auto t0 = now_ns();
      weft::root_exec([ga, gt, cut] { cilksort<global_mem, weft_forks>(ga, gt, cut); });
      seconds = 1e-9 * static_cast<double>(now_ns() - t0);
      after = weft::root_exec([ga] { return check(weft::make_checkout(ga, weft::checkout_mode::read).span()); });
    }
    if (!after.sorted || after.sum != before.sum || after.squares != before.squares) {
      std::fprintf(stderr, "cilksort: result %s, checksum %s\n", after.sorted ? "sorted" : "NOT sorted",
                   after.sum == before.sum && after.squares == before.squares ? "kept" : "CHANGED");
      std::exit(1);
    }
    if (o.serial() || weft::rank() == 0) record(o, "cilksort", param, "seconds", seconds);
    if (!o.serial()) record_steal_stats(o, "cilksort", param);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench_main(argc, argv, run); }
