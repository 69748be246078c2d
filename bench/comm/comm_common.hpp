// Shared plumbing of the communication benchmarks (bench_msg_rate,
// bench_latency; bench_pgas uses the options, weft start-up and statistics):
// options, the repetition driver that alternates raw MPI and weft, sample
// statistics, CSV and table cells.
//
// Modes. Under `mpiexec -n 2` (mode mpi) each repetition first measures raw
// MPI on MPI_COMM_WORLD, then starts weft (which finds MPI initialized and
// reuses it: its mpi backend only calls MPI_Init_thread itself when nobody
// did, and then leaves MPI_Finalize to us), measures the same
// configurations on weft's mpi backend and finalizes weft again. Run as a
// single process (mode smp) only weft is measured, with two in-process ranks
// (--weft:ranks=2 is added unless given). run_comm_bench.sh runs both and
// merges the CSV files into one table with the ratios to raw MPI.
// --mpi-path (mode mpi) adds a third run per repetition: weft's mpi backend
// with --weft:node-rings=0, so its messages travel through MPI as they would
// between nodes (system names weft-mpi-only...; docs/DISTRIBUTED.md, "Ranks
// on one node"). --ucx (mode mpi) adds weft's ucx backend the same way
// (system weft-ucx; bench_latency adds raw UCP too, system ucp).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <compare>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace comm_bench {

using clk = std::chrono::steady_clock;

inline double seconds_since(clk::time_point t0) {
  return std::chrono::duration<double>(clk::now() - t0).count();
}
inline clk::time_point after(clk::time_point t0, double seconds) {
  return t0 + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(seconds));
}

// ---- options ----------------------------------------------------------------

struct options {
  int reps = 5;
  bool quick = false;
  std::string csv;
  std::string mode = "auto";             // auto | mpi | smp
  bool mpi_path = false;                 // --mpi-path: also weft-mpi without node rings
  bool ucx = false;                      // --ucx: also weft's ucx backend (system weft-ucx)
  std::vector<std::string> weft_args;    // --weft:... options, handed to weft::run
  std::string prog;
};

/// Parses --reps N, --quick, --csv FILE, --mode M, --mpi-path, --ucx and the integer options in
/// `ints` (bench specific); keeps --weft: options for weft. --quick means
/// one repetition unless --reps is given.
inline options parse_options(int argc, char** argv, const std::map<std::string, long*>& ints, const char* usage) {
  options o;
  o.prog = argv[0];
  bool reps_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // --name=value is accepted too (the script passes --mode=mpi).
    std::optional<std::string> inline_value;
    if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--weft:", 0) != 0) {
      inline_value = a.substr(eq + 1);
      a.resize(eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n%s", o.prog.c_str(), a.c_str(), usage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a.rfind("--weft:", 0) == 0) o.weft_args.push_back(argv[i]);
    else if (a == "--reps") {
      o.reps = std::max(1, std::atoi(value().c_str()));
      reps_given = true;
    }
    else if (a == "--quick") o.quick = true;
    else if (a == "--mpi-path") o.mpi_path = true;
    else if (a == "--ucx") o.ucx = true;
    else if (a == "--csv") o.csv = value();
    else if (a == "--mode") o.mode = value();
    else if (ints.count(a)) *ints.at(a) = std::atol(value().c_str());
    else {
      std::fprintf(stderr, "%s", usage);
      std::exit(2);
    }
  }
  if (o.quick && !reps_given) o.reps = 1;
  if (o.mode != "auto" && o.mode != "mpi" && o.mode != "smp") {
    std::fprintf(stderr, "%s: --mode is auto, mpi or smp\n", o.prog.c_str());
    std::exit(2);
  }
  if (o.mode == "auto") {
    // Hydra (MPICH's mpiexec) tells every process the job size.
    const char* n = std::getenv("PMI_SIZE");
    o.mode = n && std::atoi(n) > 1 ? "mpi" : "smp";
  }
  return o;
}

// ---- samples ----------------------------------------------------------------

/// One configuration of one system, e.g. ("weft-mpi", 8 bytes, window 4).
struct key {
  std::string system;
  long size;
  long param;
  auto operator<=>(const key&) const = default;
};

/// Measurements, kept on rank 0 only (in smp mode both ranks share the
/// process, so only rank 0 may record).
inline std::map<key, std::vector<double>> samples;

inline void record(const std::string& system, long size, long param, double v) {
  samples[key{system, size, param}].push_back(v);
}

struct stats {
  double med = 0, lo = 0, hi = 0;
  bool ok = false;
};
inline stats summarize(const std::string& system, long size, long param) {
  auto it = samples.find(key{system, size, param});
  if (it == samples.end() || it->second.empty()) return {};
  std::vector<double> v = it->second;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front(), v.back(), true};
}

/// Systems measured in this run, raw MPI first.
inline std::vector<std::string> systems() {
  std::vector<std::string> s;
  for (auto& [k, v] : samples)
    if (std::find(s.begin(), s.end(), k.system) == s.end()) s.push_back(k.system);
  std::stable_partition(s.begin(), s.end(), [](const std::string& x) { return x == "mpi"; });
  return s;
}

/// "1.23M" style number with a K/M/G suffix.
inline std::string si(double v) {
  char b[32];
  if (v >= 1e9) std::snprintf(b, sizeof b, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(b, sizeof b, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(b, sizeof b, "%.1fK", v / 1e3);
  else std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

inline std::string size_name(long bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

/// Opens the CSV file for appending; writes `header` if the file is new/empty.
inline FILE* open_csv(const std::string& path, const char* header) {
  if (path.empty()) return nullptr;
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fseek(f, 0, SEEK_END);
  if (std::ftell(f) == 0) std::fprintf(f, "%s\n", header);
  return f;
}

// ---- driver -----------------------------------------------------------------

/// Runs `body(system)` on every rank under weft::run, with a fresh argv each
/// time (weft::run removes the --weft: options it parses). `extra_args` are
/// added to the --weft: options given; the system is named
/// weft-<backend><suffix>.
template <class Body>
void run_weft(const options& o, Body& body, const std::vector<std::string>& extra_args, const std::string& suffix) {
  std::vector<std::string> args = {o.prog};
  args.insert(args.end(), o.weft_args.begin(), o.weft_args.end());
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  int rc = weft::run(argc, argv.data(), [&] {
    if (weft::nranks() != 2) {
      if (weft::rank() == 0) std::fprintf(stderr, "%s: needs exactly 2 ranks, got %d\n", o.prog.c_str(), weft::nranks());
      return 1;
    }
    body(std::string("weft-") + weft::backend_name() + suffix);
    return 0;
  });
  if (rc != 0) std::exit(rc);
}

/// The same; `mpi_only`: without node rings (system weft-mpi-only).
template <class Body>
void run_weft(const options& o, Body& body, bool mpi_only = false) {
  if (mpi_only) run_weft(o, body, {"--weft:node-rings=0"}, "-only");
  else run_weft(o, body, {}, "");
}

/// Mode smp: two in-process ranks unless --weft:ranks= was given.
inline void add_smp_ranks(options& o) {
  bool has_ranks = false;
  for (auto& a : o.weft_args) has_ranks |= a.rfind("--weft:ranks=", 0) == 0;
  if (!has_ranks) o.weft_args.push_back("--weft:ranks=2");
}

/// Mode mpi: initializes MPI with the thread level weft needs, so that weft
/// reuses it (and leaves MPI_Finalize to the caller); exits unless there are
/// exactly 2 processes. Returns this process's rank.
inline int init_mpi_for_weft(const char* name) {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 2 || provided < MPI_THREAD_SERIALIZED) {
    if (me == 0) std::fprintf(stderr, "%s: --mode mpi needs mpiexec -n 2 and MPI_THREAD_SERIALIZED\n", name);
    MPI_Finalize();
    std::exit(2);
  }
  return me;
}

/// Repetitions, alternating raw MPI and weft in mpi mode so that slow drifts
/// of the machine hit both alike. `raw(me)` runs on both MPI processes;
/// `weft_body(system)` on both weft ranks. Returns true on the process that
/// holds the samples and should print (MPI rank 0, or the smp process).
template <class Raw, class WeftBody>
bool drive(options& o, const char* name, Raw raw, WeftBody weft_body) {
  if (o.mode == "smp") {
    add_smp_ranks(o);
    for (int r = 0; r < o.reps; ++r) {
      std::fprintf(stderr, "\r%s (smp): repetition %d/%d", name, r + 1, o.reps);
      run_weft(o, weft_body);
    }
    std::fprintf(stderr, "\n");
    return true;
  }
  const int me = init_mpi_for_weft(name);
  for (int r = 0; r < o.reps; ++r) {
    if (me == 0) std::fprintf(stderr, "\r%s (mpi): repetition %d/%d", name, r + 1, o.reps);
    raw(me);
    run_weft(o, weft_body);
    if (o.mpi_path) run_weft(o, weft_body, true);
    if (o.ucx) run_weft(o, weft_body, {"--weft:backend=ucx"}, "");
  }
  if (me == 0) std::fprintf(stderr, "\n");
  MPI_Finalize();
  return me == 0;
}

}  // namespace comm_bench
