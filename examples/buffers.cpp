// Passing large arrays between ranks without copying them: weft::buffer.
// It runs unchanged on both backends:
//
//   ./example_buffers --weft:ranks=4        # 4 ranks in this process (smp)
//   mpiexec -n 4 ./example_buffers          # 4 processes (mpi)
//
// Every rank makes one block of samples, sends it around the ring of ranks
// (each rank forwards the buffer it received, as it received it), and every
// rank reduces every block it sees. In-process the elements are never
// copied; over MPI they travel once per hop, straight from the buffer the
// sender holds into the block the receiver's handler reads.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <span>

#include "weft/weft.hpp"

namespace {

constexpr std::size_t samples = 1 << 17;  // 512 KiB of 32-bit samples per rank

weft::buffer<std::uint32_t> make_block(int rank) {
  return weft::buffer<std::uint32_t>::make(samples, [rank](std::span<std::uint32_t> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint32_t>(rank * 1000 + i % 100);
  });
}

std::uint64_t sum(const weft::buffer<std::uint32_t>& b) { return std::accumulate(b.begin(), b.end(), std::uint64_t{0}); }

// Runs on the next rank: reduces the block and hands it on while hops remain.
std::uint64_t visit(weft::buffer<std::uint32_t> block, int hops_left) {
  const std::uint64_t here = sum(block);
  if (hops_left == 0) return here;
  const int next = (weft::rank() + 1) % weft::nranks();
  return here + weft::async_at(next, visit, block, hops_left - 1).get();  // forwarded as received, no copy
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int me = weft::rank(), n = weft::nranks();
    // Around the whole ring: every rank (this one last) reduces this rank's block.
    const std::uint64_t seen = weft::async_at((me + 1) % n, visit, make_block(me), n - 1).get();
    const bool right = seen == static_cast<std::uint64_t>(n) * sum(make_block(me));
    const std::uint64_t total = weft::allreduce(seen, std::plus<>{});
    const int agree = weft::allreduce(right ? 1 : 0, std::plus<>{});
    if (me == 0)
      std::printf("%d blocks of %zu samples around a ring of %d ranks: total %llu; every block reduced on every rank: %s\n",
                  n, samples, n, static_cast<unsigned long long>(total), agree == n ? "yes" : "no");
  });
}
