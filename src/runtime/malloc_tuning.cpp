// glibc malloc settings for message-heavy runs (--weft:malloc-tuning).
//
// With glibc's defaults, every burst of freed message payloads pushes an
// arena's top chunk past the trim threshold (128 KiB), free() hands the
// pages back with madvise, the TLB shootdown interrupts the other core, and
// the next allocation faults the pages in again (what that costs:
// docs/DISTRIBUTED.md, option --weft:malloc-tuning). Setting the trim threshold
// also freezes glibc's adaptive mmap threshold at 128 KiB (every larger
// payload would be mmapped and unmapped, another shootdown each), so that
// one is raised too. The price: up to 64 MiB of freed memory per arena
// stays with the process instead of going back to the kernel.
//
// Left alone when the user tuned malloc already (MALLOC_TRIM_THRESHOLD_,
// MALLOC_MMAP_THRESHOLD_ or GLIBC_TUNABLES in the environment) or asked us
// to (--weft:malloc-tuning=0).
#include "runtime/malloc_tuning.hpp"

#include <cstdlib>
#include <initializer_list>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace weft::detail {

bool tune_malloc() noexcept {
#if defined(__GLIBC__)
  static bool done = false;  // once per process (init may run several times)
  if (done) return true;
  for (const char* v : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"})
    if (std::getenv(v) != nullptr) return false;
  done = mallopt(M_TRIM_THRESHOLD, 64 << 20) == 1 && mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
  return done;
#else
  return false;
#endif
}

}  // namespace weft::detail
