// ompx.h compiles as C++ too, and its calls link from C++ code: an atomic
// from every rank, ompx_allreduce over every data type and operation, the
// aliases DiOMP's own code uses.
#include "weft/ompx.h"

#include <cstdint>
#include <cstdio>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (ok) return;
  std::printf("check failed on rank %d: %s\n", ompx_rank(), what);
  ++failures;
}

/// Rank r contributes {r + 1, 2}: sum, product, min and max over n ranks
/// are known in closed form for every type.
template <class T>
void allreduce_every_op(ompx_dt_t dt, const char* name) {
  const int n = ompx_nranks();
  const T mine[2] = {static_cast<T>(ompx_rank() + 1), static_cast<T>(2)};
  T out[2] = {};
  T factorial = 1, power = 1;
  for (int r = 1; r <= n; ++r) {
    factorial = static_cast<T>(factorial * static_cast<T>(r));
    power = static_cast<T>(power * static_cast<T>(2));
  }
  ompx_allreduce(mine, out, 2, dt, OMPX_SUM);
  check(out[0] == static_cast<T>(n * (n + 1) / 2) && out[1] == static_cast<T>(2 * n), name);
  ompx_allreduce(mine, out, 2, dt, OMPX_PROD);
  check(out[0] == factorial && out[1] == power, name);
  ompx_allreduce(mine, out, 2, dt, OMPX_MIN);
  check(out[0] == static_cast<T>(1) && out[1] == static_cast<T>(2), name);
  ompx_allreduce(mine, out, 2, dt, OMPX_MAX);
  check(out[0] == static_cast<T>(n) && out[1] == static_cast<T>(2), name);
}

}  // namespace

int main(int argc, char** argv) {
  ompx_init(&argc, &argv);
  check(omp_get_rank_num() == ompx_rank() && omp_get_num_ranks() == ompx_nranks(), "rank aliases");
  auto* x = static_cast<std::int64_t*>(llvm_omp_distributed_alloc(sizeof(std::int64_t)));
  *x = 0;
  diomp_barrier();
  const std::int64_t old = ompx_atomic_fetch_add_i64(0, x, 1);
  ompx_fence();
  diomp_waitALLRMA();
  ompx_barrier();
  check(old >= 0 && old < ompx_nranks(), "fetch_add returns a count below nranks");
  check(ompx_rank() != 0 || *x == ompx_nranks(), "fetch_add from every rank");
  allreduce_every_op<std::int32_t>(OMPX_INT32, "allreduce int32");
  allreduce_every_op<std::int64_t>(OMPX_INT64, "allreduce int64");
  allreduce_every_op<std::uint32_t>(OMPX_UINT32, "allreduce uint32");
  allreduce_every_op<std::uint64_t>(OMPX_UINT64, "allreduce uint64");
  allreduce_every_op<float>(OMPX_FLOAT, "allreduce float");
  allreduce_every_op<double>(OMPX_DOUBLE, "allreduce double");
  ompx_free(x);
  ompx_finalize();
  std::printf("ompx_cxx_test: %s\n", failures == 0 ? "all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
