/* DiOMP-style C with OpenMP (weft/ompx.h): every rank passes a block of a
 * vector around the ring of ranks, as Cannon's matrix multiply shifts its
 * blocks; at each step the OpenMP threads put slices of the block into the
 * right neighbour's buffer and then add what arrived. After nranks steps
 * every rank has summed every rank's block. One rank per process:
 *
 *   ./example_ompx_ring                    # 1 rank
 *   mpiexec -n 4 ./example_ompx_ring       # 4 ranks */
#include <stdio.h>
#include <string.h>

#include "weft/ompx.h"

#define N 4096

int main(int argc, char** argv) {
  ompx_init(&argc, &argv);
  const int me = ompx_rank(), n = ompx_nranks();
  const int right = (me + 1) % n;
  double* inbox = (double*)ompx_alloc(N * sizeof(double)); /* symmetric: the same block on every rank */
  double block[N], sum[N];
  for (int i = 0; i < N; ++i) {
    block[i] = me + 1;
    sum[i] = 0;
  }
  for (int step = 0; step < n; ++step) {
#pragma omp parallel for
    for (int i = 0; i < N; ++i) sum[i] += block[i];
#pragma omp parallel for
    for (int slice = 0; slice < N; slice += 512)
      ompx_put(right, &inbox[slice], &block[slice], 512 * sizeof(double));
    ompx_barrier(); /* the puts are in place and everyone's block was sent */
    memcpy(block, inbox, sizeof block);
    ompx_barrier(); /* nobody puts into inbox before everyone copied it out */
  }
  double total = 0;
  for (int i = 0; i < N; ++i) total += sum[i];
  double all = 0;
  ompx_allreduce(&total, &all, 1, OMPX_DOUBLE, OMPX_SUM);
  const double expected = (double)N * n * (n * (n + 1) / 2.0);
  if (me == 0)
    printf("ring of %d ranks, %d doubles per block: every rank summed every block: %s (total %.0f)\n", n, N,
           all == expected ? "yes" : "no", all);
  ompx_free(inbox);
  ompx_finalize();
  return all == expected ? 0 : 1;
}
