// The command line, the serial mode, the check and the report that every
// parallel version of Minimod shares (MPI, weft), so that they accept the
// same options, refuse the same input and print the same lines. No
// communication here.
#pragma once

#include <string>
#include <vector>

#include "minimod_kernels.hpp"

namespace minimod {

struct options {
  long nx = 64, ny = 64, nz = 64;
  long steps = 20;
  bool check = false;
  bool serial = false;
};

/// Parses argv into `o` and checks it against the rank count: "" when the
/// run can go ahead, else what is wrong (every rank finds the same).
std::string parse_options(int argc, char** argv, int nranks, options& o);

/// -serial: one process, no exchange; prints the time per step and the
/// checksum.
int run_serial(const problem& p);

/// One rank's seconds: the whole time loop and the halo exchanges in it.
struct rank_times {
  double loop = 0, exchange = 0;
};

/// Rank 0's lines after a run on `layer`: the slowest rank's time per step
/// and its exchange share, the -check verdict (`field`: the owned values of
/// all ranks in x order, compared with a serial run) and the checksum of
/// the plane sums in x order. Returns the exit status: 1 when -check failed.
int report(const char* layer, const problem& p, const std::vector<rank_times>& times, bool check,
           const std::vector<double>& field, const std::vector<double>& sums);

}  // namespace minimod
