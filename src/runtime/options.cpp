#include "runtime/options.hpp"

#include <cstdlib>
#include <map>
#include <string_view>
#include <vector>

namespace weft::detail {

namespace {

/// Bound on --weft:eager and --weft:coalesce: the mpi backend keeps four
/// receives of the larger one posted per rank (64 MiB at this bound).
constexpr std::size_t max_eager_message = 16 * MiB;
/// The shared-memory ring per pair of ranks on one node holds the longest
/// eager message twice; rings larger than this are not made, so an eager or
/// coalesce limit of 8M or more sends through MPI alone.
constexpr std::size_t max_ring_bytes = 16 * MiB;
/// MPI counts are ints: one send moves at most 2 GiB - 1 bytes.
constexpr std::size_t max_mpi_chunk = GiB;

/// The runtime's options as the last parse left them; its table's entries
/// point into it.
runtime_options& parsed() {
  static runtime_options o;
  return o;
}

/// The runtime's own options: those of the runtime and of the layers below
/// it, which it hands their values (options.hpp).
const std::vector<option_def>& runtime_table() {
  runtime_options& o = parsed();
  static const std::vector<option_def> t = {
      int_option("threads", &o.threads, 1, 4096, "cores on this node / ranks on this node",
                 "worker threads per rank"),
      bool_option("pin", &o.pin, "pin workers to cores with hwloc"),
      int_option("ranks", &o.ranks, 1, 1024, "1", "smp backend: ranks in this process"),
      choice_option("backend", &o.backend, {"auto", "smp", "mpi", "ucx"},
                    "auto: mpi when a launcher (mpiexec, srun) started more than one process, else smp; ucx "
                    "(under mpiexec or srun, in a weft built with UCX): remote calls and one-sided operations "
                    "over UCX"),
      bool_option("smp-per-process", &o.smp_per_process,
                  "1: allow --weft:backend=smp in a process a launcher started as one of several; each process "
                  "then runs a separate job (refused otherwise)"),
      choice_option("progress", &o.progress, {"auto", "thread", "worker"},
                    "who drives communication: worker: the workers (idle ones, busy ones between tasks); "
                    "thread: a dedicated progress thread per rank instead; auto: the workers, plus a napping "
                    "progress thread per rank when some rank is on another node (see node-size) and the "
                    "transport has no one-sided operations that need no action of the target (mpi and ucx "
                    "unless --weft:mpi-rma=on / --weft:ucx-rma=on), so that a rank whose workers are all busy "
                    "still answers messages from other nodes"),
      size_option("stack", &o.stack_size, 16 * KiB, GiB, "fiber stack size"),
      size_option("eager", &o.eager_threshold, KiB, max_eager_message,
                  "mpi: largest message sent copied through reused buffers; larger ones send their large "
                  "segments zero-copy"),
      size_option("coalesce", &o.coalesce_limit, 256, max_eager_message,
                  "mpi: most bytes of queued small messages sent to one rank as one MPI message (a lone larger "
                  "message still goes as one)"),
      int_option("node-size", &o.node_size, 0, 1 << 20, "0 (the real node)",
                 "each N consecutive ranks form one node: only inside it do ranks map each other's heaps, steal "
                 "through shared deques, copy rma directly and (mpi) use node rings; every other rank is reached "
                 "as on another node. 0: the real node (smp: the process; mpi: the host, cut into groups of N "
                 "when set). 1: every other rank is remote, to test the paths between nodes in one process or "
                 "host. Workers are pinned as without it (docs/CLUSTER.md, \"Node size\")"),
      bool_option("node-rings", &o.node_rings,
                  "mpi: small messages between ranks on one node go through shared-memory rings instead of MPI "
                  "(used only when every rank says 1, and when eager and coalesce are below half of the 16M ring "
                  "limit)"),
      size_option("mpi-chunk", &o.mpi_chunk, 4 * KiB, max_mpi_chunk,
                  "mpi: a large segment of a remote call travels in MPI messages of at most this size"),
      choice_option("mpi-rma", &o.mpi_rma, {"auto", "on", "off"},
                    "mpi: one-sided operations over MPI-3 RMA windows. auto: offered, but global memory and steals "
                    "keep messages (MPICH over UCX serves RMA from the target's MPI calls); on: they take the "
                    "windows, for an MPI whose RMA needs no action of the target; off: no windows. The same on "
                    "every rank (docs/PGAS.md)"),
      choice_option("ucx-rma", &o.ucx_rma, {"auto", "on", "off"},
                    "ucx: one-sided operations over UCP RMA and atomics. auto: offered, but global memory and steals "
                    "keep messages (UCX emulates them with messages between processes of one host, and over TCP); "
                    "on: they take them, for a network where UCX does RMA and atomics in hardware; off: none. The "
                    "same on every rank (docs/DISTRIBUTED.md)"),
      size_option("rma-chunk", &o.rma_chunk, KiB, GiB, "rma: largest piece one rma message carries"),
      bool_option("asymmetric-fences", &o.asymmetric_fences,
                  "use membarrier(2) asymmetric fences where the kernel has them (0: full fences)"),
      bool_option("malloc-tuning", &o.malloc_tuning,
                  "raise glibc malloc's trim and mmap thresholds so freed message payloads are not handed back "
                  "to the kernel and faulted in again (skipped when MALLOC_*_ or GLIBC_TUNABLES are set)"),
      text_option("trace", &o.trace, "PATH; default none",
                  "write a timeline of every rank and worker to PATH (Chrome Trace Event JSON, for Perfetto; "
                  "docs/TRACING.md); on mpi PATH must be on a file system every rank sees"),
      int_option("trace-limit", &o.trace_limit, 1, 1 << 30, "1048576",
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

/// Calls f(layer, options) for the runtime's table, then for each
/// registered layer's.
template <class F>
void for_each_table(F&& f) {
  f("runtime", runtime_table());
  for (const auto& l : registered_layer_options()) f(l.layer, l.options);
}

const option_def* find(std::string_view name) {
  const option_def* found = nullptr;
  for_each_table([&](const char*, const std::vector<option_def>& t) {
    for (const auto& d : t)
      if (found == nullptr && name == d.name) found = &d;
  });
  return found;
}

/// Every option back to its default (a process may run weft::init several
/// times; each parse starts from the defaults). Refuses a name two tables
/// use: the environment and command line could not tell them apart.
void reset_all() {
  parsed() = runtime_options{};  // also any field no option sets
  std::map<std::string_view, const char*> owner;
  for_each_table([&](const char* layer, const std::vector<option_def>& t) {
    for (const auto& d : t) {
      if (auto [at, fresh] = owner.emplace(d.name, layer); !fresh)
        throw option_error(std::string("option --weft:") + d.name + " is defined by both " + at->second + " and " +
                           layer);
      d.reset();
    }
  });
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
      "weft options (--weft:NAME=VALUE, or WEFT_NAME=VALUE in the environment, NAME in upper case with - as _), "
      "by layer:\n";
  for_each_table([&](const char* layer, const std::vector<option_def>& t) {
    s += std::string(layer) + " options:\n";
    for (const auto& d : t)
      s += "  --weft:" + std::string(d.name) + "\n      " + d.help + "\n      (" + d.value + ")\n";
    if (std::string_view(layer) == "runtime") s += "  --weft:help\n      print this list and exit\n";
  });
  return s;
}

runtime_options parse_options(int& argc, char** argv, bool& help) {
  help = false;
  reset_all();
  for (const auto& r : replaced) {
    const std::string env = "WEFT_" + upper(r.name);
    if (std::getenv(env.c_str()) != nullptr) refuse_replaced(r.name, env.c_str());
  }
  for_each_table([](const char*, const std::vector<option_def>& t) {
    for (const auto& d : t) {
      const std::string env = "WEFT_" + upper(d.name);
      if (const char* v = std::getenv(env.c_str())) {
        try {
          d.set(v);
        } catch (const option_error& e) {
          throw option_error(std::string(e.what()) + " (from environment variable " + env + ")");
        }
      }
    }
  });
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
    d->set(std::string(body.substr(eq + 1)));
  }
  argc = out;
  argv[argc] = nullptr;
  return parsed();
}

}  // namespace weft::detail
