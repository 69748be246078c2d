#include "am/mpi/rank_facts.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

#include "am/mpi/mpi_transport.hpp"

namespace weft::detail {

rank_facts my_facts(const mpi_transport_settings& settings, std::size_t longest_eager) {
  rank_facts f{};
  gethostname(f.host, sizeof f.host - 1);
  if (std::FILE* id = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    if (std::fgets(f.boot_id, sizeof f.boot_id, id) == nullptr) f.boot_id[0] = '\0';
    std::fclose(id);
  }
  f.longest_eager = longest_eager;
  f.chunk = std::clamp(settings.chunk, mpi_transport_settings::min_chunk, mpi_transport_settings::max_chunk);
  f.wants_rings = settings.node_rings ? 1 : 0;
  f.wants_one_sided = !settings.one_sided ? 0 : settings.one_sided_passive ? 2 : 1;
  f.node_size = static_cast<std::uint64_t>(std::max(settings.node_size, 0));
  std::random_device random;
  f.job = (std::uint64_t{random()} << 32 | random()) ^ static_cast<std::uint64_t>(getpid());
  return f;
}

bool same_host(const rank_facts& a, const rank_facts& b) noexcept {
  return std::memcmp(a.host, b.host, sizeof a.host) == 0 && std::memcmp(a.boot_id, b.boot_id, sizeof a.boot_id) == 0;
}

void require_one_node_size(std::span<const rank_facts> all, int me) {
  const std::uint64_t first = all[0].node_size;
  const bool agree = std::all_of(all.begin(), all.end(), [&](const rank_facts& f) { return f.node_size == first; });
  if (agree) return;
  const std::uint64_t mine = all[static_cast<std::size_t>(me)].node_size;
  if (mine != first)
    std::fprintf(stderr,
                 "weft: rank %d was started with --weft:node-size=%llu and rank 0 with %llu; every rank needs the "
                 "same node size\n",
                 me, static_cast<unsigned long long>(mine), static_cast<unsigned long long>(first));
  mpi_transport::abort_world(2);  // a rank that agrees with rank 0 ends too: the nodes cannot be formed
}

bool on_one_node(int a, const rank_facts& fa, int b, const rank_facts& fb) noexcept {
  const auto k = static_cast<int>(fa.node_size);
  return same_host(fa, fb) && (k == 0 || a / k == b / k);
}

}  // namespace weft::detail
