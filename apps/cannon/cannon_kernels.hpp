// Cannon's matrix multiply C = A * B, the parts every version shares: the
// global matrices (a formula of the global indices, so any rank computes
// any tile), the per-tile product, the closed form of C used to verify the
// result, the checksum, and the shift loop. A version supplies only the
// communication: the initial skew and a tile_shift.
//
// Matrices are N x N with N = q * n, split into q x q tiles of n x n, each
// stored row-major. Rank (row r, column c) of the q x q grid computes tile
// C(r, c).
#pragma once

#include <cstddef>

namespace cannon {

/// A(i, k) and B(k, j): affine in both indices with different slopes, so a
/// tile paired with the wrong partner, transposed or missing changes C.
double a_value(long i, long k, long N);
double b_value(long k, long j, long N);
/// C(i, j) = sum_k A(i, k) B(k, j) in closed form.
double c_exact(long i, long j, long N);

/// Fills the n x n tile whose top-left element is (row0, col0).
void fill_a_tile(double* tile, long n, long row0, long col0, long N);
void fill_b_tile(double* tile, long n, long row0, long col0, long N);

/// c += a * b for n x n row-major tiles (OpenBLAS dgemm).
void multiply_accumulate(const double* a, const double* b, double* c, long n);

/// Largest |C - exact| / |exact| over the tile at (row0, col0).
double max_relative_error(const double* c, long n, long row0, long col0, long N);

/// Weighted sum of the tile's elements; the weights depend on the global
/// indices, so a misplaced tile changes the sum. Tile sums add up to the
/// checksum of the whole matrix.
double tile_checksum(const double* c, long n, long row0, long col0);

/// The serial reference: C = A * B for the whole N x N matrix by a plain
/// triple loop (no BLAS), and its checksum.
double serial_checksum(long N);

/// One step's communication: start moving the current A tile to the left
/// neighbour and the current B tile to the upper neighbour, arriving in
/// the receivers' spare buffers (`a_next`, `b_next` name this rank's own
/// spare buffers, at the same place as the receivers' ones), then finish.
/// MPI receives into them; a global-memory version puts into them.
class tile_shift {
 public:
  virtual void begin(const double* a, double* a_next, const double* b, double* b_next) = 0;
  virtual void end() = 0;

 protected:
  ~tile_shift() = default;
};

/// The q steps of Cannon's algorithm on skewed tiles: each step multiplies
/// the current tiles while the next ones travel. a[0]/b[0] hold the skewed
/// tiles on entry; c is accumulated into.
void run_steps(long q, long n, double* const a[2], double* const b[2], double* c, tile_shift& shift);

}  // namespace cannon
