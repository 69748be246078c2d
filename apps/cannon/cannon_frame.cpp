#include "cannon_frame.hpp"

#include <array>
#include <cmath>
#include <cstdio>

#include "../common/app_frame.hpp"
#include "../common/app_options.hpp"
#include "cannon_kernels.hpp"

namespace cannon {

namespace {
constexpr double check_tolerance = 1e-10;
}  // namespace

long grid_side(int nranks) { return std::lround(std::sqrt(static_cast<double>(nranks))); }

std::string parse_options(int argc, char** argv, int nranks, options& o) {
  const std::array ints = {apps::int_option{"-n", &o.n, 1}, apps::int_option{"-reps", &o.reps, 1},
                           apps::int_option{"-q", &o.q, 1}};
  const std::array flags = {apps::flag_option{"-check", &o.check}, apps::flag_option{"-serial", &o.serial}};
  std::string error = apps::parse_options(argc, argv, ints, flags);
  if (error.empty()) error = apps::serial_needs_one_rank(o.serial, nranks);
  if (error.empty() && !o.serial && o.q != 1) error = "-q is for -serial (a parallel run's grid follows from its rank count)";
  if (error.empty() && !o.serial && grid_side(nranks) * grid_side(nranks) != nranks)
    error = std::to_string(nranks) + " ranks is not a perfect square; Cannon needs a q x q grid (1, 4, 9, ... ranks)";
  return error;
}

int run_serial(const options& o) {
  const long N = o.q * o.n;
  std::printf("cannon serial reference: N %ld (q %ld x tile %ld), plain triple loop\n", N, o.q, o.n);
  apps::print_checksum(serial_checksum(N));
  return 0;
}

int report(const char* layer, int nranks, const options& o, const std::vector<double>& seconds, double worst,
           double checksum) {
  const long q = grid_side(nranks), N = q * o.n;
  const double flops = 2.0 * static_cast<double>(N) * static_cast<double>(N) * static_cast<double>(N);
  const apps::spread t = apps::summarize(seconds);
  std::printf("cannon %s: %d ranks (%ld x %ld grid), tile %ld, N %ld, %ld reps\n", layer, nranks, q, q, o.n, N, o.reps);
  std::printf("time s: median %.4f [%.4f-%.4f]\n", t.median, t.min, t.max);
  std::printf("GFLOP/s: median %.2f [%.2f-%.2f]\n", flops / t.median / 1e9, flops / t.max / 1e9, flops / t.min / 1e9);
  int rc = 0;
  if (o.check) {
    const bool ok = worst <= check_tolerance;
    std::printf("check: max relative error vs closed form %.3e (tolerance %.0e): %s\n", worst, check_tolerance,
                ok ? "passed" : "FAILED");
    rc = ok ? 0 : 1;
  }
  apps::print_checksum(checksum);
  return rc;
}

}  // namespace cannon
