#include "runtime/options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

namespace weft::detail {

namespace {

constexpr std::size_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

/// Bound on --weft:eager and --weft:coalesce: the mpi backend keeps four
/// receives of the larger one posted per rank (64 MiB at this bound).
constexpr std::size_t max_eager_message = 16 * MiB;
/// The shared-memory ring per pair of ranks on one node holds the longest
/// eager message twice; rings larger than this are not made, so an eager or
/// coalesce limit of 8M or more sends through MPI alone.
constexpr std::size_t max_ring_bytes = 16 * MiB;
/// MPI counts are ints: one send moves at most 2 GiB - 1 bytes.
constexpr std::size_t max_mpi_chunk = GiB;

std::string format_size(std::size_t n) {
  if (n != 0 && n % GiB == 0) return std::to_string(n / GiB) + "G";
  if (n != 0 && n % MiB == 0) return std::to_string(n / MiB) + "M";
  if (n != 0 && n % KiB == 0) return std::to_string(n / KiB) + "K";
  return std::to_string(n);
}

long parse_int(std::string_view name, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
    throw option_error("invalid value '" + v + "' for " + std::string(name) + " (expected an integer in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return x;
}

std::size_t parse_size(std::string_view name, const std::string& v, std::size_t lo, std::size_t hi) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  std::string_view suffix(end);
  unsigned long long mult = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = KiB;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") mult = MiB;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") mult = GiB;
  else if (!suffix.empty()) x = 0, errno = EINVAL;
  if (v.empty() || errno != 0 || end == v.c_str() || v[0] == '-' || x > ~0ull / mult)
    throw option_error("invalid size '" + v + "' for " + std::string(name) + " (e.g. 65536, 64K, 1M)");
  const auto n = static_cast<std::size_t>(x * mult);
  if (n < lo) throw option_error(std::string(name) + " must be at least " + format_size(lo));
  if (n > hi) throw option_error(std::string(name) + " must be at most " + format_size(hi));
  return n;
}

std::string parse_choice(std::string_view name, const std::string& v, const std::vector<const char*>& allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return v;
    list += list.empty() ? "" : ", ";
    list += a;
  }
  throw option_error("invalid value '" + v + "' for " + std::string(name) + " (one of: " + list + ")");
}

bool parse_bool(std::string_view name, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw option_error("invalid value '" + v + "' for " + std::string(name) + " (expected 0 or 1)");
}

struct option_def {
  const char* name;
  std::string value;   // what VALUE may be, with its limits and default, for --weft:help
  const char* help;
  std::function<void(runtime_options&, const std::string&)> set;
};

const runtime_options defaults{};

option_def int_option(const char* name, int runtime_options::*field, long lo, long hi, const char* default_text,
                      const char* help) {
  return {name, "N: " + std::to_string(lo) + " to " + std::to_string(hi) + "; default " + default_text, help,
          [=](runtime_options& o, const std::string& v) { o.*field = static_cast<int>(parse_int(name, v, lo, hi)); }};
}

option_def size_option(const char* name, std::size_t runtime_options::*field, std::size_t lo, std::size_t hi,
                       const char* help) {
  return {name,
          "SIZE (bytes, or with K, M, G): " + format_size(lo) + " to " + format_size(hi) + "; default " +
              format_size(defaults.*field),
          help, [=](runtime_options& o, const std::string& v) { o.*field = parse_size(name, v, lo, hi); }};
}

option_def bool_option(const char* name, bool runtime_options::*field, const char* help) {
  return {name, std::string("0 or 1; default ") + (defaults.*field ? "1" : "0"), help,
          [=](runtime_options& o, const std::string& v) { o.*field = parse_bool(name, v); }};
}

option_def choice_option(const char* name, std::string runtime_options::*field, std::vector<const char*> allowed,
                         const char* help) {
  std::string value;
  for (const char* a : allowed) value += (value.empty() ? "" : " | ") + std::string(a);
  return {name, value + "; default " + defaults.*field, help,
          [=](runtime_options& o, const std::string& v) { o.*field = parse_choice(name, v, allowed); }};
}

const std::vector<option_def>& table() {
  using o = runtime_options;
  static const std::vector<option_def> t = {
      int_option("threads", &o::threads, 1, 4096, "cores on this node / ranks on this node",
                 "worker threads per rank"),
      bool_option("pin", &o::pin, "pin workers to cores with hwloc"),
      int_option("ranks", &o::ranks, 1, 1024, "1", "smp backend: ranks in this process"),
      choice_option("backend", &o::backend, {"auto", "smp", "mpi", "ucx"},
                    "auto: mpi when a launcher (mpiexec, srun) started more than one process, else smp; ucx "
                    "(under mpiexec or srun, in a weft built with UCX): remote calls and one-sided operations "
                    "over UCX"),
      bool_option("smp-per-process", &o::smp_per_process,
                  "1: allow --weft:backend=smp in a process a launcher started as one of several; each process "
                  "then runs a separate job (refused otherwise)"),
      choice_option("progress", &o::progress, {"auto", "thread", "worker"},
                    "who drives communication: a dedicated progress thread, or idle workers (auto: worker)"),
      size_option("stack", &o::stack_size, 16 * KiB, GiB, "fiber stack size"),
      size_option("eager", &o::eager_threshold, KiB, max_eager_message,
                  "mpi: largest message sent copied through reused buffers; larger ones send their large "
                  "segments zero-copy"),
      size_option("coalesce", &o::coalesce_limit, 256, max_eager_message,
                  "mpi: most bytes of queued small messages sent to one rank as one MPI message (a lone larger "
                  "message still goes as one)"),
      int_option("node-size", &o::node_size, 0, 1 << 20, "0 (the real node)",
                 "each N consecutive ranks form one node: only inside it do ranks map each other's heaps, steal "
                 "through shared deques, copy rma directly and (mpi) use node rings; every other rank is reached "
                 "as on another node. 0: the real node (smp: the process; mpi: the host, cut into groups of N "
                 "when set). 1: every other rank is remote, to test the paths between nodes in one process or "
                 "host. Workers are pinned as without it (docs/CLUSTER.md, \"Node size\")"),
      bool_option("node-rings", &o::node_rings,
                  "mpi: small messages between ranks on one node go through shared-memory rings instead of MPI "
                  "(used only when every rank says 1, and when eager and coalesce are below half of the 16M ring "
                  "limit)"),
      size_option("mpi-chunk", &o::mpi_chunk, 4 * KiB, max_mpi_chunk,
                  "mpi: a large segment of a remote call travels in MPI messages of at most this size"),
      choice_option("mpi-rma", &o::mpi_rma, {"auto", "on", "off"},
                    "mpi: one-sided operations over MPI-3 RMA windows. auto: offered, but global memory and steals "
                    "keep messages (MPICH over UCX serves RMA from the target's MPI calls); on: they take the "
                    "windows, for an MPI whose RMA needs no action of the target; off: no windows. The same on "
                    "every rank (docs/PGAS.md)"),
      choice_option("ucx-rma", &o::ucx_rma, {"auto", "on", "off"},
                    "ucx: one-sided operations over UCP RMA and atomics. auto: offered, but global memory and steals "
                    "keep messages (UCX emulates them with messages between processes of one host, and over TCP); "
                    "on: they take them, for a network where UCX does RMA and atomics in hardware; off: none. The "
                    "same on every rank (docs/DISTRIBUTED.md)"),
      size_option("rma-chunk", &o::rma_chunk, KiB, GiB, "rma: largest piece one rma message carries"),
      bool_option("asymmetric-fences", &o::asymmetric_fences,
                  "use membarrier(2) asymmetric fences where the kernel has them (0: full fences)"),
      bool_option("malloc-tuning", &o::malloc_tuning,
                  "raise glibc malloc's trim and mmap thresholds so freed message payloads are not handed back "
                  "to the kernel and faulted in again (skipped when MALLOC_*_ or GLIBC_TUNABLES are set)"),
      size_option("segment", &o::segment, 64 * KiB, std::size_t{1} << 40,
                  "pgas: address space reserved for each rank's symmetric heap, committed as used"),
      size_option("cache-block", &o::cache_block, 4 * KiB, GiB,
                  "pgas: block of the software cache behind checkouts (a multiple of the page size)"),
      size_option("cache-size", &o::cache_size, 4 * KiB, 64 * GiB,
                  "pgas: bytes of software cache per rank (at least one block; a checkout may span at most "
                  "this much)"),
      choice_option("cache", &o::cache, {"auto", "always"},
                    "pgas: checkouts go through the software cache only for memory this rank does not map "
                    "(auto), or always, also of its own heap and its node's (for testing the cache; "
                    "--weft:node-size=1 sends only other ranks' memory through it)"),
      choice_option("forkjoin-checks", &o::forkjoin_checks, {"auto", "on", "off"},
                    "forkjoin: at every fork and join, check that the task holds no checkout and that the forked "
                    "function captured no address on the task's stack (auto: on unless built with NDEBUG)"),
      int_option("cpu-devices", &o::cpu_devices, 1, 64, "1",
                 "offload: CPU devices per rank (every rank must have the same number)"),
      size_option("cpu-device-memory", &o::cpu_device_memory, 4 * KiB, std::size_t{1} << 40,
                  "offload: bytes of memory of each CPU device"),
      {"trace", "PATH; default none",
       "write a timeline of every rank and worker to PATH (Chrome Trace Event JSON, for Perfetto; "
       "docs/TRACING.md); on mpi PATH must be on a file system every rank sees",
       [](runtime_options& opts, const std::string& v) { opts.trace = v; }},
      int_option("trace-limit", &o::trace_limit, 1, 1 << 30, "1048576",
                 "trace: most events recorded per thread (40 bytes each); later ones are counted as dropped in "
                 "the file's metadata"),
  };
  static_assert(max_ring_bytes == max_eager_message, "the node-rings help text names 16M");
  return t;
}

/// Options that --weft:node-size=1 replaced: each sent one same-node path
/// the way other nodes are reached, which node-size=1 does for all of them.
struct replaced_option {
  const char* name;
  const char* replacement;
};
constexpr replaced_option replaced[] = {
    {"pgas-direct", "node-size=1"},
    {"steal", "node-size=1"},
    {"rma-protocol", "node-size=1"},
};

const option_def* find(std::string_view name) {
  for (const auto& d : table())
    if (name == d.name) return &d;
  return nullptr;
}

std::string upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = c == '-' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return r;
}

/// Ends parsing with a message naming the replacement when `name` (from
/// the command line, or `env` from the environment) is a replaced option.
void refuse_replaced(std::string_view name, const char* env) {
  for (const auto& r : replaced) {
    if (name != r.name) continue;
    if (env != nullptr)
      throw option_error(std::string(env) + " (--weft:" + r.name + ") was replaced by WEFT_" + upper(r.replacement) +
                         " (--weft:" + r.replacement + ")");
    throw option_error(std::string("--weft:") + r.name + " was replaced by --weft:" + r.replacement);
  }
}

}  // namespace

std::string options_help() {
  std::string s =
      "weft runtime options (--weft:NAME=VALUE, or WEFT_NAME=VALUE in the environment, NAME in upper case with - "
      "as _):\n";
  for (const auto& d : table()) {
    s += "  --weft:" + std::string(d.name) + "\n      " + d.help + "\n      (" + d.value + ")\n";
  }
  s += "  --weft:help\n      print this list and exit\n";
  return s;
}

runtime_options parse_options(int& argc, char** argv, bool& help) {
  runtime_options o;
  help = false;
  for (const auto& r : replaced) {
    const std::string env = "WEFT_" + upper(r.name);
    if (std::getenv(env.c_str()) != nullptr) refuse_replaced(r.name, env.c_str());
  }
  for (const auto& d : table()) {
    std::string env = "WEFT_" + upper(d.name);
    if (const char* v = std::getenv(env.c_str())) {
      try {
        d.set(o, v);
      } catch (const option_error& e) {
        throw option_error(std::string(e.what()) + " (from environment variable " + env + ")");
      }
    }
  }
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a(argv[i]);
    if (a.substr(0, 7) != "--weft:") {
      argv[out++] = argv[i];
      continue;
    }
    std::string_view body = a.substr(7);
    if (body == "help") {
      help = true;
      continue;
    }
    auto eq = body.find('=');
    if (eq == std::string_view::npos)
      throw option_error("option '" + std::string(a) + "' needs a value: --weft:NAME=VALUE");
    std::string_view name = body.substr(0, eq);
    const option_def* d = find(name);
    if (d == nullptr) refuse_replaced(name, nullptr);
    if (d == nullptr) throw option_error("unknown option '--weft:" + std::string(name) + "'");
    d->set(o, std::string(body.substr(eq + 1)));
  }
  argc = out;
  argv[argc] = nullptr;
  return o;
}

}  // namespace weft::detail
