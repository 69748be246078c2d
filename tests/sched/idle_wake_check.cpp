// Messages to ranks whose workers all sleep are still handled: rank 0 lets
// the whole job fall idle (every worker of the other ranks goes to sleep,
// on the mpi backend in the node's shared sleep slot that senders ring),
// then calls every rank; repeated, with idle gaps of different lengths.
// Run oversubscribed (more ranks x threads than cores), where idle workers
// sleep soonest. Prints "every sleeping rank answered: yes".
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "weft/weft.hpp"

namespace {
int answer(int round) { return weft::rank() * 1000 + round; }
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    if (weft::rank() != 0) return 0;
    bool ok = true;
    for (int round = 0; round < 6; ++round) {
      // Idle long enough for every worker to pass spinning and yielding.
      std::this_thread::sleep_for(std::chrono::milliseconds(round % 3 == 0 ? 100 : 10));
      std::vector<weft::future<int>> replies;
      for (int r = 0; r < weft::nranks(); ++r) replies.push_back(weft::async_at(r, &answer, round));
      for (int r = 0; r < weft::nranks(); ++r) {
        const int got = replies[static_cast<std::size_t>(r)].get();
        if (got != r * 1000 + round) {
          std::printf("rank %d answered %d in round %d, expected %d\n", r, got, round, r * 1000 + round);
          ok = false;
        }
      }
    }
    std::printf("every sleeping rank answered: %s\n", ok ? "yes" : "NO");
    return ok ? 0 : 1;
  });
}
