// Misuse of fork-join that must end the job with a clear message (run by
// expect_failure.sh, with --weft:forkjoin-checks=on in every build type).
//   forkjoin_failing_job checkout_held_at_fork | checkout_held_at_join |
//                        captured_local_address | spawn_not_awaited
#include <cstdio>
#include <cstring>
#include <string>

#include "weft/forkjoin.hpp"
#include "weft/weft.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  return weft::run(argc, argv, [&mode] {
    auto data = weft::allocate_symmetric<long>(64);
    weft::root_exec([data, m = mode == "checkout_held_at_fork"    ? 1
                              : mode == "checkout_held_at_join"   ? 2
                              : mode == "captured_local_address"  ? 3
                              : mode == "spawn_not_awaited"       ? 4
                                                                  : 0] {
      if (m == 1) {
        auto held = weft::make_checkout(data, 8, weft::checkout_mode::read);
        weft::parallel_invoke([] { return 1; }, [] { return 2; });
      } else if (m == 2) {
        auto f = weft::spawn([] { return 1; });
        auto held = weft::make_checkout(data, 8, weft::checkout_mode::read);
        (void)f.get();
      } else if (m == 3) {
        long local = 7;
        long* p = &local;
        weft::parallel_invoke([] { return 1L; }, [p] { return *p; });
      } else if (m == 4) {
        (void)weft::spawn([] {
          volatile long x = 0;
          for (long i = 0; i < 2000000000L; ++i) x = x + 1;
        });
      } else {
        std::fprintf(stderr, "unknown mode\n");
        std::abort();
      }
    });
  });
}
