// --weft:progress=auto: the last rank's only worker computes without making
// any weft call while rank 0 puts, gets and adds into its heap. Where those
// operations travel as messages the target must answer (mpi and ucx with
// every rank its own node: their one-sided operations need the target's
// progress), auto gave every rank a progress thread, which answers them;
// where they need no action of the target (the real node maps the heap,
// smp's one-sided operations are plain memory), no thread was started.
// Each rank prints how many progress threads its process runs; the tests
// expect the count for their configuration.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>

#include "compute_until_flag.hpp"
#include "runtime/runtime_state.hpp"
#include "weft/pgas.hpp"
#include "weft/weft.hpp"

namespace {

struct mailbox {
  std::int64_t flag;        // set by rank 0 once its operations completed
  std::int64_t counter;     // the atomic's target
  std::int64_t data[16];    // the put's target
  std::int64_t source[16];  // the get's source
};

template <class T>
weft::global_ptr<T> field(int rank, std::uint64_t box, std::size_t offset) {
  return weft::global_ptr<T>::at(rank, box + offset);
}

/// Rank 0's side: put, get and fetch-add on the busy target, then the flag
/// that lets it stop. True when every result is right.
bool operate_on(int target, std::uint64_t box) {
  std::int64_t out[16], in[16];
  for (int i = 0; i < 16; ++i) out[i] = 7000 + i;
  auto p = weft::put(field<std::int64_t>(target, box, offsetof(mailbox, data)), std::span<const std::int64_t>(out));
  auto g = weft::get(field<std::int64_t>(target, box, offsetof(mailbox, source)), std::span<std::int64_t>(in));
  auto a = weft::atomic_fetch_add(field<std::int64_t>(target, box, offsetof(mailbox, counter)), std::int64_t{5});
  p.get();
  g.get();
  bool ok = a.get() == 0;
  for (int i = 0; i < 16; ++i) ok = ok && in[i] == 100 * target + i;
  weft::atomic_store(field<std::int64_t>(target, box, offsetof(mailbox, flag)), std::int64_t{1}).get();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, []() -> int {
    const int me = weft::rank(), n = weft::nranks(), target = n - 1;
    std::printf("rank %d: %zu progress threads in its process\n", me,
                weft::detail::runtime_state()->progress_threads.size());
    auto box = weft::allocate_symmetric<mailbox>();
    std::memset(box.local(), 0, sizeof(mailbox));
    for (int i = 0; i < 16; ++i) box.local()->source[i] = 100 * me + i;
    weft::barrier();
    int status = 0;
    if (me == target) {
      // The long computation: no weft call until rank 0's flag shows up.
      const mailbox& m = *box.local();
      if (!weft::test::compute_until_flag(box.local()->flag)) {
        std::printf("rank %d: rank 0's operations did not complete while it computed\n", me);
        status = 1;
      } else if (m.counter != 5 || m.data[0] != 7000 || m.data[15] != 7015) {
        std::printf("rank %d: wrong contents after rank 0's operations\n", me);
        status = 1;
      } else {
        std::printf("busy target answered\n");
      }
    } else if (me == 0 && !operate_on(target, box.on(target).offset())) {
      std::printf("rank 0: wrong results from the busy target\n");
      status = 1;
    }
    weft::barrier();
    weft::free_symmetric(box);
    return status;
  });
}
