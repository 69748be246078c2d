#include "minimod_frame.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "../common/app_frame.hpp"
#include "../common/app_options.hpp"

namespace minimod {

namespace {

constexpr double check_tolerance = 1e-12;

/// The final wavefield of a run on one process (owned values, x slowest)
/// and its plane sums.
struct serial_run {
  std::vector<double> values, sums;
  double seconds = 0;
};

serial_run run_serial_propagation(const problem& p) {
  const slab s = split(p, 1, 0);
  std::vector<double> u(s.size(), 0.0), u_prev(s.size(), 0.0);
  no_exchange none;
  const run_result r = propagate(p, s, u.data(), u_prev.data(), none);
  return {owned_values(s, r.field), plane_sums(s, r.field), r.seconds};
}

double sum_in_order(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

void print_header(const char* what, std::size_t nranks, const problem& p) {
  std::printf("minimod %s: %zu rank%s, grid %ld x %ld x %ld (split along x), %ld steps, absorbing layers of %ld points\n",
              what, nranks, nranks == 1 ? "" : "s", p.nx, p.ny, p.nz, p.steps, p.sponge);
}

/// Compares the gathered wavefield with a serial run.
bool check_against_serial(const problem& p, const std::vector<double>& field) {
  const serial_run ref = run_serial_propagation(p);
  if (ref.values.size() == field.size() &&
      std::memcmp(ref.values.data(), field.data(), field.size() * sizeof(double)) == 0) {
    std::printf("check: wavefield bitwise identical to the serial run: passed\n");
    return true;
  }
  if (ref.values.size() != field.size()) {
    std::printf("check: gathered %zu values, the serial run has %zu: FAILED\n", field.size(), ref.values.size());
    return false;
  }
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < field.size(); ++i) {
    diff = std::max(diff, std::abs(field[i] - ref.values[i]));
    scale = std::max(scale, std::abs(ref.values[i]));
  }
  const double rel = scale > 0 ? diff / scale : diff;
  const bool ok = rel <= check_tolerance;
  std::printf("check: wavefield differs from the serial run, max |diff| / max |u| = %.3e (tolerance %.0e): %s\n", rel,
              check_tolerance, ok ? "passed" : "FAILED");
  return ok;
}

}  // namespace

std::string parse_options(int argc, char** argv, int nranks, options& o) {
  const std::array ints = {apps::int_option{"-nx", &o.nx, 1}, apps::int_option{"-ny", &o.ny, 1},
                           apps::int_option{"-nz", &o.nz, 1}, apps::int_option{"-steps", &o.steps, 1}};
  const std::array flags = {apps::flag_option{"-check", &o.check}, apps::flag_option{"-serial", &o.serial}};
  std::string error = apps::parse_options(argc, argv, ints, flags);
  if (error.empty()) error = apps::serial_needs_one_rank(o.serial, nranks);
  if (error.empty() && o.nx / nranks < radius)
    error = "-nx " + std::to_string(o.nx) + " over " + std::to_string(nranks) +
            " ranks leaves fewer than 4 planes on a rank; the halo exchange needs at least 4 planes per rank";
  return error;
}

int run_serial(const problem& p) {
  const serial_run r = run_serial_propagation(p);
  print_header("serial", 1, p);
  std::printf("time per step ms: %.3f\n", r.seconds / static_cast<double>(p.steps) * 1e3);
  apps::print_checksum(sum_in_order(r.sums));
  return 0;
}

int report(const char* layer, const problem& p, const std::vector<rank_times>& times, bool check,
           const std::vector<double>& field, const std::vector<double>& sums) {
  print_header(layer, times.size(), p);
  std::size_t slowest = 0;
  for (std::size_t i = 1; i < times.size(); ++i)
    if (times[i].loop > times[slowest].loop) slowest = i;
  const double per_step = 1e3 / static_cast<double>(p.steps);
  std::printf("time per step ms: %.3f (halo exchange %.3f) [slowest rank, %zu]\n", times[slowest].loop * per_step,
              times[slowest].exchange * per_step, slowest);
  const int rc = check && !check_against_serial(p, field) ? 1 : 0;
  apps::print_checksum(sum_in_order(sums));
  return rc;
}

}  // namespace minimod
