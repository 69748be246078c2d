// Where the workers of every rank run, checked from inside the job: each
// rank occupies all its workers at once (one spinning task per worker),
// each task reads its thread's affinity (sched_getaffinity), and rank 0
// prints every worker's cpus and three verdicts:
//   inside the inherited mask: yes   every worker's cpus lie in the mask
//                                    its process started with (taskset,
//                                    mpiexec -bind-to, srun --cpu-bind)
//   pinned to one cpu: N of M        workers bound to a single cpu
//   cpus shared by two ranks: none   no cpu has workers of two ranks bound
//                                    to it alone (or the list of such cpus)
// The ctest entries (tests/sched/CMakeLists.txt) match the verdicts.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace {

/// The calling thread's cpus as a bit mask (cpus 0-63; the test machines have fewer).
std::uint64_t thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  std::uint64_t m = 0;
  for (int c = 0; c < 64; ++c)
    if (CPU_ISSET(c, &set)) m |= std::uint64_t{1} << c;
  return m;
}

std::string cpu_list(std::uint64_t m) {
  std::string s;
  for (int c = 0; c < 64; ++c)
    if (m >> c & 1) {
      if (!s.empty()) s += ',';
      s += std::to_string(c);
    }
  return s.empty() ? "none" : s;
}

/// The affinity of each of this rank's workers: one task per worker, each
/// spinning until all have started, so no two run on one worker.
std::vector<std::uint64_t> worker_cpus() {
  const int n = weft::num_threads();
  std::atomic<int> started{0};
  std::vector<weft::future<std::uint64_t>> tasks;
  for (int i = 0; i < n; ++i)
    tasks.push_back(weft::async([&started, n] {
      started.fetch_add(1);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (started.load() < n && std::chrono::steady_clock::now() < give_up) {
      }
      return started.load() == n ? thread_cpus() : std::uint64_t{0};
    }));
  std::vector<std::uint64_t> cpus;
  for (auto& t : tasks) cpus.push_back(t.get());
  return cpus;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t inherited = thread_cpus();  // before weft starts any worker
  return weft::run(argc, argv, [inherited] {
    std::vector<std::uint64_t> mine = worker_cpus();
    mine.push_back(inherited);  // last: the process's starting mask
    const std::vector<std::vector<std::uint64_t>> all = weft::allgather(mine);
    if (weft::rank() != 0) return 0;
    bool inside = true;
    int workers = 0, single = 0;
    std::map<std::uint64_t, std::set<int>> ranks_on_cpu;  // single-cpu bindings
    for (int r = 0; r < static_cast<int>(all.size()); ++r) {
      const std::uint64_t mask = all[static_cast<std::size_t>(r)].back();
      std::printf("rank %d: inherited mask: cpus %s\n", r, cpu_list(mask).c_str());
      for (std::size_t w = 0; w + 1 < all[static_cast<std::size_t>(r)].size(); ++w) {
        const std::uint64_t cpus = all[static_cast<std::size_t>(r)][w];
        std::printf("rank %d worker %zu: cpus %s\n", r, w, cpu_list(cpus).c_str());
        ++workers;
        inside = inside && cpus != 0 && (cpus & ~mask) == 0;
        if (cpus != 0 && (cpus & (cpus - 1)) == 0) {
          ++single;
          ranks_on_cpu[cpus].insert(r);
        }
      }
    }
    std::string shared;
    for (const auto& [cpu, ranks] : ranks_on_cpu)
      if (ranks.size() > 1) {
        if (!shared.empty()) shared += ' ';
        shared += cpu_list(cpu);
      }
    std::printf("inside the inherited mask: %s\n", inside ? "yes" : "NO");
    std::printf("pinned to one cpu: %d of %d\n", single, workers);
    std::printf("cpus shared by two ranks: %s\n", shared.empty() ? "none" : shared.c_str());
    return 0;
  });
}
