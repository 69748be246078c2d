// All-to-all traffic on many ranks: every rank sends every other rank a
// value through weft::alltoall and a remote call through weft::async_at,
// then 100 calls each to its neighbour and to rank 0 (pairs that keep
// sending, more of them towards rank 0 than get rings of their own),
// `rounds` times, and checks every answer. With the smp backend this is
// what made per-pair rings grow with the square of the ranks (4.2 GB at 256
// ranks): given a limit in MiB, the program also fails when its peak
// resident memory exceeded it. For measuring, run it under /usr/bin/time -v:
//
//   all_to_all_traffic [rounds [max_rss_mib]] --weft:ranks=1024 --weft:threads=1
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "weft/weft.hpp"

namespace {
long tag(int from, int to, int round) { return (static_cast<long>(from) * 1'000'003 + to) * 31 + round; }

long answer(long value) { return value + 1; }

/// The number of wrong answers this rank saw in one round.
long one_round(int round) {
  const int me = weft::rank();
  const int n = weft::nranks();
  long wrong = 0;
  std::vector<long> out(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) out[static_cast<std::size_t>(d)] = tag(me, d, round);
  const std::vector<long> in = weft::alltoall(std::move(out));
  for (int s = 0; s < n; ++s)
    if (in[static_cast<std::size_t>(s)] != tag(s, me, round)) ++wrong;
  std::vector<weft::future<long>> calls;
  calls.reserve(static_cast<std::size_t>(n));
  for (int k = 1; k < n; ++k) {
    const int d = (me + k) % n;  // staggered, so no rank is everybody's first
    calls.push_back(weft::async_at(d, answer, tag(me, d, round)));
  }
  for (int k = 1; k < n; ++k)
    if (calls[static_cast<std::size_t>(k - 1)].get() != tag(me, (me + k) % n, round) + 1) ++wrong;
  constexpr int hot_calls = 100;
  const int hot[2] = {(me + 1) % n, 0};
  calls.clear();
  for (int i = 0; i < hot_calls; ++i)
    for (int d : hot) calls.push_back(weft::async_at(d, answer, tag(me, d, round) + i));
  for (int i = 0; i < hot_calls; ++i)
    for (int j = 0; j < 2; ++j)
      if (calls[static_cast<std::size_t>(2 * i + j)].get() != tag(me, hot[j], round) + i + 1) ++wrong;
  return wrong;
}
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [](int args, char** argl) {
    const int rounds = args > 1 ? std::atoi(argl[1]) : 2;
    const long max_rss_mib = args > 2 ? std::atol(argl[2]) : 0;
    long wrong = 0;
    for (int r = 0; r < rounds; ++r) wrong += one_round(r);
    wrong = weft::allreduce(wrong, [](long a, long b) { return a + b; });
    if (weft::rank() != 0) return 0;
    std::printf("%d ranks, %d rounds of all-to-all: %ld wrong answers\n", weft::nranks(), rounds, wrong);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);  // ru_maxrss: KiB, the whole process
    const long rss_mib = usage.ru_maxrss / 1024;
    const bool rss_ok = max_rss_mib == 0 || rss_mib <= max_rss_mib;
    if (max_rss_mib != 0) std::printf("peak resident memory %ld MiB (limit %ld MiB)\n", rss_mib, max_rss_mib);
    return wrong == 0 && rss_ok ? 0 : 1;
  });
}
