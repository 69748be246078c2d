/* DiOMP's C API from C, with OpenMP threads making the calls: puts and
 * gets between ranks, atomics, rank- and thread-level locks, collectives.
 * Exits non-zero (with a line naming the check) when something is wrong. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/ompx.h"

#define N 256
#define ROUNDS 50

static int failures = 0;
#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "ompx_test: rank %d: check failed: %s (line %d)\n", ompx_rank(), \
              #cond, __LINE__);                                                       \
      _Pragma("omp atomic") failures++;                                               \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  CHECK(ompx_init(&argc, &argv) == 0);
  const int me = ompx_rank(), n = ompx_nranks();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  CHECK(omp_get_rank_num() == me && omp_get_num_ranks() == n);

  double* a = (double*)ompx_alloc(N * sizeof(double));
  int64_t* counters = (int64_t*)llvm_omp_distributed_alloc(4 * sizeof(int64_t));
  double mine[N];
  for (int i = 0; i < N; ++i) mine[i] = 1000.0 * me + i;
  if (me == 0)
    for (int i = 0; i < 4; ++i) counters[i] = 0;
  ompx_barrier();

  /* Every OpenMP thread puts part of the array into the right neighbour's copy. */
#pragma omp parallel for num_threads(3)
  for (int i = 0; i < N; ++i) {
    CHECK(ompx_rank() == me);
    ompx_put(right, &a[i], &mine[i], sizeof(double));
    if (i % 64 == 0) ompx_waitRMA(OMPX_EV_PUT);
  }
  ompx_barrier();
  for (int i = 0; i < N; ++i) CHECK(a[i] == 1000.0 * left + i);

  /* And gets it back from there (the right neighbour holds this rank's values). */
  double back[N];
#pragma omp parallel for num_threads(3)
  for (int i = 0; i < N; ++i) ompx_get(&back[i], right, &a[i], sizeof(double));
  ompx_waitRMA(OMPX_EV_GET);
  for (int i = 0; i < N; ++i) CHECK(back[i] == mine[i]);

  /* Atomics on rank 0 from every thread of every rank. */
#pragma omp parallel num_threads(3)
  {
    for (int r = 0; r < ROUNDS; ++r) ompx_atomic_fetch_add_i64(0, &counters[0], 2);
    ompx_atomic_cas_i64(0, &counters[1], 0, me + 1); /* one rank's thread wins */
  }
  ompx_barrier();
  if (me == 0) {
    CHECK(counters[0] == 2LL * ROUNDS * 3 * n);
    CHECK(counters[1] >= 1 && counters[1] <= n);
  }

  /* A read-modify-write by get and put, made safe by rank 0's lock: with
   * thread-level locking from threads, and rank-level from the main thread. */
#pragma omp parallel num_threads(3)
  {
    for (int r = 0; r < ROUNDS; ++r) {
      int64_t v = 0;
      ompx_lockt(0);
      ompx_get(&v, 0, &counters[2], sizeof v);
      ompx_waitRMA(OMPX_EV_GET);
      v += 1;
      ompx_put(0, &counters[2], &v, sizeof v);
      ompx_waitRMA(OMPX_EV_PUT);
      ompx_unlockt(0);
    }
  }
  for (int r = 0; r < ROUNDS; ++r) {
    int64_t v = 0;
    ompx_lock(0);
    ompx_get(&v, 0, &counters[3], sizeof v);
    ompx_fence();
    v += 1;
    ompx_put(0, &counters[3], &v, sizeof v);
    diomp_waitALLRMA();
    ompx_unlock(0);
  }
  diomp_barrier();
  if (me == 0) {
    CHECK(counters[2] == 3LL * ROUNDS * n);
    CHECK(counters[3] == (int64_t)ROUNDS * n);
  }

  /* Collectives. */
  int token[2] = {me == n - 1 ? 42 : -1, me == n - 1 ? 7 : -1};
  ompx_bcast(token, sizeof token, n - 1);
  CHECK(token[0] == 42 && token[1] == 7);
  double contrib[2] = {(double)me, 1.0};
  double sum[2];
  ompx_allreduce(contrib, sum, 2, OMPX_DOUBLE, OMPX_SUM);
  CHECK(sum[0] == n * (n - 1) / 2.0 && sum[1] == (double)n);
  int64_t lo = me, hi = me;
  ompx_allreduce(&lo, &lo, 1, OMPX_INT64, OMPX_MIN);
  ompx_allreduce(&hi, &hi, 1, OMPX_INT64, OMPX_MAX);
  CHECK(lo == 0 && hi == n - 1);

  ompx_free(counters);
  ompx_free(a);
  const int failed = failures;
  ompx_finalize();
  if (failed == 0) printf("ompx_test: rank %d of %d: all checks passed\n", me, n);
  return failed == 0 ? 0 : 1;
}
