// Cilksort (Cilk's and Itoyori's): merge sort whose four quarter sorts and
// whose merges run in parallel; a merge splits the larger input at its
// middle and the smaller at the first element not less than that pivot, so
// both halves merge independently. Below --sort-cutoff elements a leaf runs
// std::sort, below --merge-cutoff output elements a merge runs std::merge.
// Written once over a `Mem` that says how data is reached (plain memory for
// the serial baseline, global memory through checkouts for weft) and the
// `Forks` policy (fork_policy.hpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <utility>

namespace fj_bench {

struct sort_cutoffs {
  std::size_t sort = 16 * 1024;
  std::size_t merge = 16 * 1024;
};

// Mem provides, for its span type S of elements:
//   S sub(S, first, count)        size(S)
//   void sort_leaf(S)             void merge_leaf(S in1, S in2, S out)
//   element at(S, i)              std::size_t lower_bound(S, element)

template <class Mem, class Forks, class S>
void cilkmerge(S in1, S in2, S out, sort_cutoffs cut) {
  if (Mem::size(in1) < Mem::size(in2)) std::swap(in1, in2);
  if (Mem::size(out) <= cut.merge || Mem::size(in2) == 0) return Mem::merge_leaf(in1, in2, out);
  const std::size_t h1 = Mem::size(in1) / 2;
  const std::size_t h2 = Mem::lower_bound(in2, Mem::at(in1, h1));
  const std::size_t r1 = Mem::size(in1) - h1, r2 = Mem::size(in2) - h2;
  Forks::all([=] { cilkmerge<Mem, Forks>(Mem::sub(in1, 0, h1), Mem::sub(in2, 0, h2), Mem::sub(out, 0, h1 + h2), cut); },
             [=] {
               cilkmerge<Mem, Forks>(Mem::sub(in1, h1, r1), Mem::sub(in2, h2, r2), Mem::sub(out, h1 + h2, r1 + r2),
                                     cut);
             });
}

/// Sorts `a`, using `tmp` (same size) as scratch.
template <class Mem, class Forks, class S>
void cilksort(S a, S tmp, sort_cutoffs cut) {
  const std::size_t n = Mem::size(a);
  if (n <= cut.sort) return Mem::sort_leaf(a);
  const std::size_t q = n / 4, last = n - 3 * q;
  auto part = [](S s, std::size_t i, std::size_t q4, std::size_t last4) { return Mem::sub(s, i * q4, i < 3 ? q4 : last4); };
  Forks::all([=] { cilksort<Mem, Forks>(part(a, 0, q, last), part(tmp, 0, q, last), cut); },
             [=] { cilksort<Mem, Forks>(part(a, 1, q, last), part(tmp, 1, q, last), cut); },
             [=] { cilksort<Mem, Forks>(part(a, 2, q, last), part(tmp, 2, q, last), cut); },
             [=] { cilksort<Mem, Forks>(part(a, 3, q, last), part(tmp, 3, q, last), cut); });
  Forks::all([=] { cilkmerge<Mem, Forks>(part(a, 0, q, last), part(a, 1, q, last), Mem::sub(tmp, 0, 2 * q), cut); },
             [=] { cilkmerge<Mem, Forks>(part(a, 2, q, last), part(a, 3, q, last), Mem::sub(tmp, 2 * q, q + last), cut); });
  cilkmerge<Mem, Forks>(Mem::sub(tmp, 0, 2 * q), Mem::sub(tmp, 2 * q, q + last), a, cut);
}

}  // namespace fj_bench
