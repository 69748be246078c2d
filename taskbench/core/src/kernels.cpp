// The kernels of Task Bench.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "internal.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TASKBENCH_X86 1
#endif

#if TASKBENCH_HAVE_CBLAS
#include <cblas.h>
#endif

namespace taskbench::detail {

namespace {

// Keeps a value alive without costing more than a store.
template <class T>
inline void keep(T value) {
  __asm__ __volatile__("" : : "m"(value) : "memory");
}

// Initial values of the 64 compute_bound accumulators. a <- a*a + a stays in
// (-1, 0) for a in (-1, 0) and tends to 0 slowly (about -1/n after n rounds),
// so the kernel runs on ordinary numbers: no overflow, no denormals.
inline double initial_value(int k) { return -0.5 + 0.004 * k; }

// --- compute_bound: 64 doubles, iter rounds of a = a*a + a, then a sum ----------
// 128 FLOPs per round (64 fused multiply-adds), 64 for the final reduction.

#if TASKBENCH_X86
// The accumulators are set from constants, not copied in from an array
// (that copy cost about 0.035 us a task, a quarter of a whole task at
// -iter 0). The final reduction is one chain of 64 dependent additions, as
// long as Task Bench's own (a chain of 64 multiplications), so that a task
// costs what it costs there.
__attribute__((target("avx512f"))) double compute_bound_avx512(long iterations) {
  __m512d a[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i)
    a[i] = _mm512_setr_pd(initial_value(8 * i), initial_value(8 * i + 1), initial_value(8 * i + 2),
                          initial_value(8 * i + 3), initial_value(8 * i + 4), initial_value(8 * i + 5),
                          initial_value(8 * i + 6), initial_value(8 * i + 7));
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) a[i] = _mm512_fmadd_pd(a[i], a[i], a[i]);
  }
  alignas(64) double v[64];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) _mm512_store_pd(v + 8 * i, a[i]);
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum;
}

__attribute__((target("avx2,fma"))) double compute_bound_avx2(long iterations) {
  __m256d a[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    a[i] = _mm256_setr_pd(initial_value(4 * i), initial_value(4 * i + 1), initial_value(4 * i + 2),
                          initial_value(4 * i + 3));
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) a[i] = _mm256_fmadd_pd(a[i], a[i], a[i]);
  }
  alignas(32) double v[64];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) _mm256_store_pd(v + 4 * i, a[i]);
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum;
}
#endif

double compute_bound_generic(long iterations) {
  double a[64];
  for (int k = 0; k < 64; ++k) a[k] = initial_value(k);
  for (long it = 0; it < iterations; ++it)
    for (int k = 0; k < 64; ++k) a[k] = a[k] * a[k] + a[k];
  double sum = 0.0;
  for (int k = 0; k < 64; ++k) sum += a[k];
  return sum;
}

using compute_fn = double (*)(long);

compute_fn pick_compute_bound() {
#if TASKBENCH_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return compute_bound_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return compute_bound_avx2;
#endif
  return compute_bound_generic;
}

}  // namespace

double compute_bound(long iterations) {
  static const compute_fn fn = pick_compute_bound();
  return fn(iterations);
}

namespace {

// --- compute_bound2: 32-element c += a*b, iter rounds (64 FLOPs per round) ------
double compute_bound2(long iterations) {
  double a[32], b[32], c[32];
  for (int i = 0; i < 32; ++i) {
    a[i] = 1.2345 + 0.001 * i;
    b[i] = 1.010101 - 0.001 * i;
    c[i] = 0.0;
  }
  for (long it = 0; it < iterations; ++it) {
    // Without this the compiler would hoist a*b out of the loop and leave
    // only the additions: the barrier makes a opaque on every round.
    __asm__ __volatile__("" : "+m"(a));
    for (int i = 0; i < 32; ++i) c[i] += a[i] * b[i];
  }
  double sum = 0.0;
  for (int i = 0; i < 32; ++i) sum += c[i];
  return sum;
}

// --- busy_wait: an integer LCG -------------------------------------------------------
long long busy_wait(long iterations) {
  long long acc = 113;
  for (long it = 0; it < iterations; ++it) acc = acc * 139 % 2147483647;
  return acc;
}

// Chunk of the memory kernels: the scratch is split into `samples` chunks; the
// chunk stride is rounded down to 8 bytes so every chunk starts on a word.
struct chunking {
  std::size_t stride;  // bytes between chunks
  long samples;
};

chunking chunks_of(const kernel_config& k, std::size_t scratch_bytes) {
  std::size_t samples = static_cast<std::size_t>(k.samples);
  return {samples > 0 ? scratch_bytes / samples / 8 * 8 : 0, k.samples};
}

long chunk_index(long t, long iterations, long it, long samples) {
  return static_cast<long>((static_cast<unsigned long long>(t) * static_cast<unsigned long long>(iterations) +
                            static_cast<unsigned long long>(it)) %
                           static_cast<unsigned long long>(samples));
}

// --- memory_bound: each iteration copies one half of a chunk onto the other -----
void memory_bound(const kernel_config& k, long t, char* scratch, std::size_t bytes) {
  chunking c = chunks_of(k, bytes);
  std::size_t half = c.stride / 2 / 8 * 8;  // whole words keep the magic pattern intact
  if (half == 0) return;
  for (long it = 0; it < k.iterations; ++it) {
    char* chunk = scratch + static_cast<std::size_t>(chunk_index(t, k.iterations, it, c.samples)) * c.stride;
    std::memcpy(chunk + half, chunk, half);
  }
  keep(scratch[0]);
}

void set_blas_single_threaded() {
#if TASKBENCH_HAVE_OPENBLAS
  // Tasks run on every core already; OpenBLAS must not start its own threads.
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
#endif
}

// --- memory_daxpy: y += x over one chunk (x first half, y second) per iteration --
void memory_daxpy(const kernel_config& k, long t, char* scratch, std::size_t bytes) {
#if TASKBENCH_HAVE_CBLAS
  set_blas_single_threaded();
  chunking c = chunks_of(k, bytes);
  int n = static_cast<int>(c.stride / (2 * sizeof(double)));
  if (n == 0) return;
  for (long it = 0; it < k.iterations; ++it) {
    char* chunk = scratch + static_cast<std::size_t>(chunk_index(t, k.iterations, it, c.samples)) * c.stride;
    double* x = reinterpret_cast<double*>(chunk);
    double* y = x + n;
    cblas_daxpy(n, 1.0, x, 1, y, 1);
  }
#else
  (void)k, (void)t, (void)scratch, (void)bytes;
#endif
}

// --- compute_dgemm: C += A*B, N x N, iter times ------------------------------------
void compute_dgemm(const kernel_config& k, char* scratch, std::size_t bytes) {
#if TASKBENCH_HAVE_CBLAS
  set_blas_single_threaded();
  std::size_t elems = bytes / (3 * sizeof(double));
  int n = static_cast<int>(dgemm_order(bytes));
  if (n == 0) return;
  double* a = reinterpret_cast<double*>(scratch);
  double* b = a + elems;
  double* c = b + elems;
  for (long it = 0; it < k.iterations; ++it)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 1.0, c, n);
#else
  (void)k, (void)scratch, (void)bytes;
#endif
}

}  // namespace

long dgemm_order(std::size_t scratch_bytes) noexcept {
  long elems = static_cast<long>(scratch_bytes / (3 * sizeof(double)));
  long n = static_cast<long>(std::sqrt(static_cast<double>(elems)));
  while (n > 0 && n * n > elems) --n;
  while ((n + 1) * (n + 1) <= elems) ++n;
  return n;
}

bool have_blas() noexcept {
#if TASKBENCH_HAVE_CBLAS
  return true;
#else
  return false;
#endif
}

void run_kernel(const task_graph& g, long t, long x, char* scratch, std::size_t scratch_bytes) {
  const kernel_config& k = g.kernel;
  switch (k.type) {
    case kernel_type::empty:
    case kernel_type::io_bound:
      break;
    case kernel_type::busy_wait:
      keep(busy_wait(k.iterations));
      break;
    case kernel_type::compute_bound:
      keep(compute_bound(k.iterations));
      break;
    case kernel_type::compute_bound2:
      keep(compute_bound2(k.iterations));
      break;
    case kernel_type::load_imbalance:
      keep(compute_bound(g.iterations_at(t, x)));
      break;
    case kernel_type::memory_bound:
      memory_bound(k, t, scratch, scratch_bytes);
      break;
    case kernel_type::memory_daxpy:
      memory_daxpy(k, t, scratch, scratch_bytes);
      break;
    case kernel_type::compute_dgemm:
      compute_dgemm(k, scratch, scratch_bytes);
      break;
  }
}

}  // namespace taskbench::detail

namespace taskbench {

void ensure_single_threaded_blas(char** argv) {
#if TASKBENCH_HAVE_OPENBLAS
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then go on as we are
#else
  (void)argv;
#endif
}

}  // namespace taskbench
