// ompx.h compiles as C++ too, and its calls link from C++ code.
#include "weft/ompx.h"

#include <cstdint>
#include <cstdio>

int main(int argc, char** argv) {
  ompx_init(&argc, &argv);
  auto* x = static_cast<std::int64_t*>(ompx_alloc(sizeof(std::int64_t)));
  *x = 0;
  ompx_barrier();
  const std::int64_t old = ompx_atomic_fetch_add_i64(0, x, 1);
  ompx_barrier();
  const bool ok = old >= 0 && old < ompx_nranks() && (ompx_rank() != 0 || *x == ompx_nranks());
  ompx_free(x);
  ompx_finalize();
  std::printf("ompx_cxx_test: %s\n", ok ? "all checks passed" : "FAILED");
  return ok ? 0 : 1;
}
