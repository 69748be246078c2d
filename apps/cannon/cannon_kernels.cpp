#include "cannon_kernels.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace cannon {

namespace {
// A(i, k) = 1 + (i + 2k) / N and B(k, j) = 1 + (3k + j / 2) / N: values
// in [1, 4], so C has no cancellation and relative errors stay near eps.
constexpr double a_row = 1, a_inner = 2, b_inner = 3, b_col = 0.5;
}  // namespace

double a_value(long i, long k, long N) {
  return 1 + (a_row * static_cast<double>(i) + a_inner * static_cast<double>(k)) / static_cast<double>(N);
}

double b_value(long k, long j, long N) {
  return 1 + (b_inner * static_cast<double>(k) + b_col * static_cast<double>(j)) / static_cast<double>(N);
}

double c_exact(long i, long j, long N) {
  // sum_k (alpha + p k)(beta + s k) = alpha beta S0 + (alpha s + p beta) S1 + p s S2
  const double n = static_cast<double>(N);
  const double alpha = 1 + a_row * static_cast<double>(i) / n, p = a_inner / n;
  const double beta = 1 + b_col * static_cast<double>(j) / n, s = b_inner / n;
  const double s0 = n, s1 = n * (n - 1) / 2, s2 = (n - 1) * n * (2 * n - 1) / 6;
  return alpha * beta * s0 + (alpha * s + p * beta) * s1 + p * s * s2;
}

void fill_a_tile(double* tile, long n, long row0, long col0, long N) {
  for (long i = 0; i < n; ++i)
    for (long k = 0; k < n; ++k) tile[i * n + k] = a_value(row0 + i, col0 + k, N);
}

void fill_b_tile(double* tile, long n, long row0, long col0, long N) {
  for (long k = 0; k < n; ++k)
    for (long j = 0; j < n; ++j) tile[k * n + j] = b_value(row0 + k, col0 + j, N);
}

void multiply_accumulate(const double* a, const double* b, double* c, long n) {
  const auto m = static_cast<blasint>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a, m, b, m, 1.0, c, m);
}

double max_relative_error(const double* c, long n, long row0, long col0, long N) {
  double worst = 0;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      const double exact = c_exact(row0 + i, col0 + j, N);
      worst = std::max(worst, std::abs(c[i * n + j] - exact) / std::abs(exact));
    }
  return worst;
}

namespace {
double weight(long i, long j) { return 1 + static_cast<double>((7 * i + 13 * j) % 17) / 17; }
}  // namespace

double tile_checksum(const double* c, long n, long row0, long col0) {
  double sum = 0;
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) sum += weight(row0 + i, col0 + j) * c[i * n + j];
  return sum;
}

double serial_checksum(long N) {
  std::vector<double> a(static_cast<std::size_t>(N * N)), b(a.size()), c(a.size(), 0.0);
  fill_a_tile(a.data(), N, 0, 0, N);
  fill_b_tile(b.data(), N, 0, 0, N);
  for (long i = 0; i < N; ++i)
    for (long k = 0; k < N; ++k) {
      const double aik = a[static_cast<std::size_t>(i * N + k)];
      for (long j = 0; j < N; ++j) c[static_cast<std::size_t>(i * N + j)] += aik * b[static_cast<std::size_t>(k * N + j)];
    }
  return tile_checksum(c.data(), N, 0, 0);
}

void run_steps(long q, long n, double* const a[2], double* const b[2], double* c, tile_shift& shift) {
  int cur = 0;
  for (long step = 0; step < q; ++step) {
    const bool more = step + 1 < q;
    if (more) shift.begin(a[cur], a[1 - cur], b[cur], b[1 - cur]);
    multiply_accumulate(a[cur], b[cur], c, n);
    if (more) {
      shift.end();
      cur = 1 - cur;
    }
  }
}

}  // namespace cannon
