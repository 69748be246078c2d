// A remote call carrying 2.5 GiB (more than an MPI count can say) arrives
// intact, on both backends: the mpi transport sends it in pieces of at most
// --weft:mpi-chunk bytes. Exits 77 (a skip for ctest), saying why, when the
// machine has too little memory available for it.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "weft/weft.hpp"

namespace {

constexpr std::size_t payload_bytes = (std::size_t{5} << 30) / 2;  // 2.5 GiB
constexpr int skip_status = 77;

/// MemAvailable from /proc/meminfo, in bytes (0 if unknown).
std::size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

std::uint8_t byte_at(std::size_t i) { return static_cast<std::uint8_t>(i * 2654435761u >> 13); }

/// A checksum that notices a piece landing at the wrong offset.
std::uint64_t checksum(const std::uint8_t* p, std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; i += 4093) s = s * 31 + p[i] + i;
  return s + p[n - 1];
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    // mpi, ucx: the sender's payload and the receiver's copy on this node; smp:
    // the payload moves. A margin of 1 GiB for everything else. Rank 0's
    // view decides for all, so no rank waits for one that skipped.
    const std::size_t copies = std::strcmp(weft::backend_name(), "smp") != 0 ? 2 : 1;
    const std::size_t need = copies * payload_bytes + (std::size_t{1} << 30);
    const std::size_t have = weft::broadcast(available_memory(), 0);
    if (have < need) {
      if (weft::rank() == 0)
        std::printf("skipped: a 2.5 GiB remote call needs %.1f GiB of memory available, this machine has %.1f GiB\n",
                    double(need) / double(1 << 30), double(have) / double(1 << 30));
      return skip_status;
    }
    if (weft::rank() != 0) return 0;
    const int peer = weft::nranks() - 1;
    auto payload = weft::buffer<std::uint8_t>::make(payload_bytes, [](std::span<std::uint8_t> out) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = byte_at(i);
    });
    const std::uint64_t expect = checksum(payload.data(), payload.size());
    const auto [size, sum] = weft::async_at(peer, [](weft::buffer<std::uint8_t> in) {
                               return std::pair{in.size(), checksum(in.data(), in.size())};
                             },
                                            std::move(payload))
                                 .get();
    const bool ok = size == payload_bytes && sum == expect;
    std::printf("rank 0: 2.5 GiB remote call to rank %d: %zu bytes arrived, checksum %s\n", peer, size,
                ok ? "matches" : "DIFFERS");
    return ok ? 0 : 1;
  });
}
