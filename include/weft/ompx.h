/* weft — DiOMP's C API for PGAS with OpenMP: one rank per process (start
 * the program with mpiexec -n N, or alone for one rank), a symmetric heap,
 * one-sided put/get, rank locks, collectives and atomics. C and C++; link
 * weft::weft.
 *
 * @code{.c}
 *   // given: enum { n = 1024 }; extern double mine[];
 *   int main(int argc, char** argv) {
 *     ompx_init(&argc, &argv);
 *     double* a = ompx_alloc(n * sizeof(double));        // same address offset on every rank
 *     int right = (ompx_rank() + 1) % ompx_nranks();
 *     #pragma omp parallel for
 *     for (int i = 0; i < n; ++i) ompx_put(right, &a[i], &mine[i], sizeof(double));
 *     ompx_barrier();                                   // puts complete, everyone here
 *     ompx_free(a);
 *     ompx_finalize();
 *   }
 * @endcode
 *
 * Every call may be made from any thread of the rank (the thread that
 * called ompx_init, OpenMP threads, weft tasks), except the collective ones
 * (ompx_alloc, ompx_free, ompx_barrier, ompx_bcast, ompx_allreduce), which
 * one thread per rank makes, in the same order on every rank. Symmetric
 * addresses are the caller's own: to reach rank r's copy of a block, pass
 * the address of this rank's copy. Buffers given to ompx_put / ompx_get
 * stay valid and untouched until ompx_waitRMA of that kind (or
 * ompx_waitALLRMA, ompx_barrier). Misuse (an address outside the heap, a
 * rank that does not exist, an unlock by a rank or thread not holding the
 * lock) ends the job with a message naming the rank. See docs/OMPX.md. */
#ifndef WEFT_OMPX_H
#define WEFT_OMPX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts weft (--weft: options are taken from argv as usual); the calling
 * thread then acts as the rank's main thread. Returns 0. */
int ompx_init(int* argc, char*** argv);
/* Completes every operation, waits for every rank, stops weft. */
void ompx_finalize(void);
int ompx_rank(void);
int ompx_nranks(void);

/* Collective: every rank asks for the same size; the block lies at the same
 * offset of every rank's heap. */
void* ompx_alloc(size_t bytes);
void ompx_free(void* p); /* collective */

/* Non-blocking. dst (put) / src (get): a symmetric address as the caller
 * sees it. */
void ompx_put(int rank, void* dst, const void* src, size_t bytes);
void ompx_get(void* dst, int rank, const void* src, size_t bytes);

typedef enum { OMPX_EV_PUT, OMPX_EV_GET } ompx_event_t;
/* The calling rank's operations of that kind are complete (puts: at the
 * target). */
void ompx_waitRMA(ompx_event_t kind);
void ompx_waitALLRMA(void);
/* Completes the caller's puts and gets, then waits for every rank. */
void ompx_barrier(void);

/* Rank `rank`'s lock, granted in request order by that rank's queue. Held by
 * the calling rank: any of its threads may unlock it. */
void ompx_lock(int rank);
void ompx_unlock(int rank);
/* The same lock, held by the calling thread: other threads of this rank
 * wait too, and only this thread may unlock it. */
void ompx_lockt(int rank);
void ompx_unlockt(int rank);

typedef enum { OMPX_INT32, OMPX_INT64, OMPX_UINT32, OMPX_UINT64, OMPX_FLOAT, OMPX_DOUBLE } ompx_dt_t;
typedef enum { OMPX_SUM, OMPX_PROD, OMPX_MIN, OMPX_MAX } ompx_op_t;
void ompx_bcast(void* data, size_t bytes, int root);
void ompx_allreduce(const void* src, void* dst, size_t count, ompx_dt_t dt, ompx_op_t op);

/* On rank `rank`'s copy of the symmetric int64_t at dst; return the old value. */
int64_t ompx_atomic_fetch_add_i64(int rank, int64_t* dst, int64_t value);
int64_t ompx_atomic_cas_i64(int rank, int64_t* dst, int64_t expected, int64_t desired);

/* The names DiOMP's own code uses. */
int omp_get_rank_num(void);                   /* ompx_rank */
int omp_get_num_ranks(void);                  /* ompx_nranks */
void* llvm_omp_distributed_alloc(size_t bytes); /* ompx_alloc */
void diomp_barrier(void);                     /* ompx_barrier */
void diomp_waitALLRMA(void);                  /* ompx_waitALLRMA */
void ompx_fence(void);                        /* ompx_waitALLRMA */

#ifdef __cplusplus
}
#endif

#endif /* WEFT_OMPX_H */
