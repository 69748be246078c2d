// What the fork-join benchmarks share: --name=value options, the clock,
// result rows (printed, and appended to a CSV file that
// run_forkjoin_bench.sh merges), and every rank's steal statistics.
//
// CSV row: bench,config,param,metric,value
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/coll.hpp"
#include "weft/forkjoin.hpp"
#include "weft/runtime.hpp"

namespace fj_bench {

/// --name=value options (after weft::run took its --weft: ones), plus
/// --serial (run the baseline without weft), --label=NAME (the config
/// column) and --csv=FILE.
class options {
 public:
  options(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
  }
  bool flag(std::string_view name) const {
    for (const auto& a : args_)
      if (a == "--" + std::string(name)) return true;
    return false;
  }
  std::string get(std::string_view name, std::string fallback) const {
    const std::string prefix = "--" + std::string(name) + "=";
    for (const auto& a : args_)
      if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
    return fallback;
  }
  long number(std::string_view name, long fallback) const {
    const std::string v = get(name, "");
    return v.empty() ? fallback : std::strtol(v.c_str(), nullptr, 10);
  }
  bool serial() const { return flag("serial"); }
  std::string label() const { return get("label", serial() ? "serial" : "weft"); }
  std::string csv() const { return get("csv", ""); }

 private:
  std::vector<std::string> args_;
};

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Prints a result and appends it to --csv (call on one rank only).
inline void record(const options& o, const char* bench, const std::string& param, const char* metric,
                   double value) {
  std::printf("%-10s %-16s %-14s %-22s %.10g\n", bench, o.label().c_str(), param.c_str(), metric, value);
  if (const std::string path = o.csv(); !path.empty()) {
    if (std::FILE* f = std::fopen(path.c_str(), "a")) {
      std::fprintf(f, "%s,%s,%s,%s,%.9g\n", bench, o.label().c_str(), param.c_str(), metric, value);
      std::fclose(f);
    }
  }
}

/// Every rank's steal statistics, on every rank (collective).
inline std::vector<weft::steal_statistics> all_steal_stats() {
  constexpr int fields = 7;
  const int n = weft::nranks(), me = weft::rank();
  const weft::steal_statistics s = weft::steal_stats();
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * fields), 0);
  const std::uint64_t mine[fields] = {s.from_node,     s.from_remote,     s.from_siblings, s.failed,
                                      s.node_steal_ns, s.failed_steal_ns, s.remote_steal_ns};
  for (int k = 0; k < fields; ++k) v[static_cast<std::size_t>(me * fields + k)] = mine[k];
  v = weft::allreduce(std::move(v), weft::elementwise{std::plus<>{}});
  std::vector<weft::steal_statistics> out(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const std::uint64_t* f = &v[static_cast<std::size_t>(r * fields)];
    out[static_cast<std::size_t>(r)] = {f[0], f[1], f[2], f[3], f[4], f[5], f[6]};
  }
  return out;
}

/// Records every rank's steals: counts, success fraction (taken from other
/// ranks over attempts on other ranks) and mean times (collective; rank 0
/// records).
inline void record_steal_stats(const options& o, const char* bench, const std::string& param) {
  const auto all = all_steal_stats();
  if (weft::rank() != 0) return;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto& s = all[r];
    // (Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "r" + std::string.)
    std::string who = "r";
    who += std::to_string(r);
    who += '.';
    auto put = [&](const char* what, double v) { record(o, bench, param, (who + what).c_str(), v); };
    put("stolen", static_cast<double>(s.stolen()));
    put("from_siblings", static_cast<double>(s.from_siblings));
    put("failed", static_cast<double>(s.failed));
    const double attempts = static_cast<double>(s.stolen() + s.failed);
    if (attempts > 0) put("success_fraction", static_cast<double>(s.stolen()) / attempts);
    if (s.from_node > 0) put("steal_us", 1e-3 * static_cast<double>(s.node_steal_ns) / static_cast<double>(s.from_node));
    if (s.from_remote > 0)
      put("remote_steal_us", 1e-3 * static_cast<double>(s.remote_steal_ns) / static_cast<double>(s.from_remote));
    if (s.failed > 0) put("failed_us", 1e-3 * static_cast<double>(s.failed_steal_ns) / static_cast<double>(s.failed));
  }
}

/// main() of a benchmark: body(options) runs directly with --serial, else
/// on every rank inside weft::run.
template <class Body>
int bench_main(int argc, char** argv, Body body) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--serial") {
      body(options(argc, argv));
      return 0;
    }
  return weft::run(argc, argv, [&](int ac, char** av) { body(options(ac, av)); });
}

}  // namespace fj_bench
