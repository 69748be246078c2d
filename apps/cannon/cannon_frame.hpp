// The command line, the serial mode and the report that every parallel
// version of Cannon shares (MPI, weft), so that they accept the same
// options, refuse the same input and print the same lines. No
// communication here.
#pragma once

#include <string>
#include <vector>

namespace cannon {

struct options {
  long n = 512;     // tile per rank
  long reps = 3;
  long q = 1;       // serial mode only: the grid side of the run to reproduce
  bool check = false;
  bool serial = false;
};

/// Parses argv into `o` and checks it against the rank count: "" when the
/// run can go ahead, else what is wrong (every rank finds the same).
std::string parse_options(int argc, char** argv, int nranks, options& o);

/// The side q of the q x q grid of `nranks` (a perfect square).
long grid_side(int nranks);

/// -serial: the plain triple loop's checksum of the matrix a q x q run
/// computes.
int run_serial(const options& o);

/// Rank 0's lines after a run on `layer`: time of the slowest rank per
/// repetition (median [min-max]), GFLOP/s, the -check verdict (`worst`:
/// largest relative error of any element) and the checksum. Returns the
/// exit status: 1 when -check failed.
int report(const char* layer, int nranks, const options& o, const std::vector<double>& seconds, double worst,
           double checksum);

}  // namespace cannon
