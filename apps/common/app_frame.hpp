// What every parallel version of an application shares whatever moves its
// data (MPI, weft): the single-process rule of -serial, the refusal of bad
// input (every rank reaches the same verdict, rank 0 says it), and the
// median [min-max] summary of repeated timings. No MPI here, so versions on
// other layers include it without MPI headers.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace apps {

/// "" when a -serial run has the single process it needs, else the error.
inline std::string serial_needs_one_rank(bool serial, int nranks) {
  if (!serial || nranks == 1) return {};
  return "-serial runs as a single process, got " + std::to_string(nranks) + " ranks";
}

/// Every rank parsed the same arguments and found the same `error`; rank
/// 0 says so. Returns the exit status for bad input.
inline int refuse(int rank, const char* prog, const std::string& error, const char* usage) {
  if (rank == 0) std::fprintf(stderr, "%s: rank 0: %s\n%s", prog, error.c_str(), usage);
  return 2;
}

struct spread {
  double median = 0, min = 0, max = 0;
};

inline spread summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  if (m == 0) return {};
  return {m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2, v.front(), v.back()};
}

}  // namespace apps
