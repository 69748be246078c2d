// The global address space (weft/pgas.hpp): a block-distributed array in
// the symmetric heap, filled by dynamic load balancing — ranks take work
// items from a counter on rank 0 with remote fetch_add and put each result
// into the rank that owns its slot — then a histogram merged into rank 0's
// copy under a distributed lock, and a check against a serial run. Runs
// unchanged on both backends:
//
//   ./example_pgas --weft:ranks=4          # 4 ranks in this process (smp)
//   mpiexec -n 4 ./example_pgas            # 4 processes (mpi; ranks on a node share their heaps)
#include <cstdint>
#include <cstdio>
#include <vector>

#include "weft/weft.hpp"

namespace {

constexpr std::int64_t items = 10000;
constexpr int bins = 16;

std::int64_t work(std::int64_t i) {  // stands in for an uneven computation
  std::int64_t x = i;
  for (std::int64_t k = 0; k < i % 97; ++k) x = (x * 1103515245 + 12345) % 1000003;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int me = weft::rank(), n = weft::nranks();
    const std::int64_t per_rank = (items + n - 1) / n;  // block distribution: item i lives on rank i / per_rank
    auto results = weft::allocate_symmetric<std::int64_t>(static_cast<std::size_t>(per_rank));
    auto next = weft::allocate_symmetric<std::int64_t>();     // rank 0's copy is the work counter
    auto histogram = weft::allocate_symmetric<std::int64_t>(bins);  // rank 0's copy is the total
    *next.local() = 0;
    for (int b = 0; b < bins; ++b) histogram.local()[b] = 0;
    weft::barrier();

    // Dynamic load balancing: whoever is free takes the next item.
    std::int64_t local_hist[bins] = {};
    weft::transfer_batch puts;
    std::vector<std::int64_t> values;
    values.reserve(static_cast<std::size_t>(items));  // the puts read from here until they complete
    for (;;) {
      const std::int64_t i = weft::atomic_fetch_add(next.on(0), std::int64_t{1}).get();
      if (i >= items) break;
      values.push_back(work(i));
      ++local_hist[values.back() % bins];
      const int owner = static_cast<int>(i / per_rank);
      puts.put(results.on(owner) + (i % per_rank), std::span<const std::int64_t>(&values.back(), 1));
    }
    puts.submit().get();

    // Merge into rank 0's histogram: a get-add-put made safe by rank 0's lock.
    weft::global_lock lock = weft::global_lock::of_rank(0);
    lock.lock();
    std::vector<std::int64_t> h(bins);
    weft::get(histogram.on(0), std::span<std::int64_t>(h)).get();
    for (int b = 0; b < bins; ++b) h[static_cast<std::size_t>(b)] += local_hist[b];
    weft::put(histogram.on(0), std::span<const std::int64_t>(h)).get();
    lock.unlock();
    weft::barrier();

    if (me == 0) {
      bool ok = true;
      std::int64_t sum = 0, counted = 0;
      std::vector<std::int64_t> block(static_cast<std::size_t>(per_rank));
      for (int r = 0; r < n; ++r) {
        weft::get(results.on(r), std::span<std::int64_t>(block)).get();
        for (std::int64_t k = 0; k < per_rank && r * per_rank + k < items; ++k) {
          ok = ok && block[static_cast<std::size_t>(k)] == work(r * per_rank + k);
          sum += block[static_cast<std::size_t>(k)];
        }
      }
      for (int b = 0; b < bins; ++b) counted += histogram.local()[b];
      std::printf("%lld items over %d ranks, handed out by remote fetch_add: sum %lld, matches serial: %s\n",
                  static_cast<long long>(items), n, static_cast<long long>(sum), ok ? "yes" : "no");
      std::printf("histogram merged under rank 0's lock: %lld entries (all counted: %s)\n",
                  static_cast<long long>(counted), counted == items ? "yes" : "no");
    }
    weft::barrier();
    weft::free_symmetric(histogram);
    weft::free_symmetric(next);
    weft::free_symmetric(results);
  });
}
