// A DiOMP-style program whose rank 0 reaches past the end of its right
// neighbour's heap as argv[1] says, for the tests that check each such call
// ends the job with a message naming the ranks, the bytes and the heap size
// (run with --weft:segment=1M; alone, rank 0 is its own neighbour).
#include "weft/ompx.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "get_past_heap_end";
  auto mode_is = [mode](const char* m) { return std::strcmp(mode, m) == 0; };
  ompx_init(&argc, &argv);
  constexpr std::size_t heap_bytes = std::size_t{1} << 20;
  // The first block starts the heap, so the heap ends heap_bytes after it.
  auto* base = static_cast<char*>(ompx_alloc(64));
  char* last4 = base + heap_bytes - 4;  // the last 4 bytes, as this rank sees its own heap
  const int right = (ompx_rank() + 1) % ompx_nranks();
  ompx_barrier();
  if (ompx_rank() == 0) {
    std::int64_t v = 0;
    if (mode_is("get_past_heap_end")) ompx_get(&v, right, last4, sizeof v);
    if (mode_is("put_past_heap_end")) ompx_put(right, last4, &v, sizeof v);
    if (mode_is("get_wrapping_size")) ompx_get(&v, right, base + 64, std::numeric_limits<std::size_t>::max());
    if (mode_is("atomic_past_heap_end"))
      ompx_atomic_fetch_add_i64(right, reinterpret_cast<std::int64_t*>(last4), 1);
    ompx_waitALLRMA();
    std::printf("rank 0 read %lld\n", static_cast<long long>(v));
  }
  ompx_barrier();
  ompx_free(base);
  ompx_finalize();
  return 0;
}
