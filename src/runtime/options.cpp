#include "runtime/options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <vector>

namespace weft::detail {

namespace {

/// Bound on --weft:eager and --weft:coalesce: the mpi backend keeps four
/// receives of the larger one posted per rank (64 MiB at this bound).
constexpr std::size_t max_eager_message = std::size_t{16} << 20;

long parse_int(std::string_view name, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
    throw option_error("invalid value '" + v + "' for " + std::string(name) + " (expected an integer in [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "])");
  return x;
}

std::size_t parse_size(std::string_view name, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  std::string_view suffix(end);
  unsigned long long mult = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1024;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") mult = 1024 * 1024;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") mult = 1024ULL * 1024 * 1024;
  else if (!suffix.empty()) x = 0, errno = EINVAL;
  if (v.empty() || errno != 0 || end == v.c_str() || v[0] == '-')
    throw option_error("invalid size '" + v + "' for " + std::string(name) + " (e.g. 65536, 64K, 1M)");
  return static_cast<std::size_t>(x * mult);
}

std::string parse_choice(std::string_view name, const std::string& v, std::initializer_list<const char*> allowed) {
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
  const char* help;
  std::function<void(runtime_options&, const std::string&)> set;
};

const std::vector<option_def>& table() {
  static const std::vector<option_def> t = {
      {"threads", "worker threads per rank (default: cores / ranks on this node)",
       [](runtime_options& o, const std::string& v) { o.threads = static_cast<int>(parse_int("threads", v, 1, 4096)); }},
      {"pin", "pin workers to cores with hwloc: 1 or 0 (default 1)",
       [](runtime_options& o, const std::string& v) { o.pin = parse_bool("pin", v); }},
      {"ranks", "ranks in this process for the smp backend (default 1)",
       [](runtime_options& o, const std::string& v) { o.ranks = static_cast<int>(parse_int("ranks", v, 1, 1024)); }},
      {"backend", "auto, smp or mpi (default auto: mpi when launched by mpiexec with more than one process)",
       [](runtime_options& o, const std::string& v) { o.backend = parse_choice("backend", v, {"auto", "smp", "mpi"}); }},
      {"progress", "who drives communication: thread (a dedicated progress thread), worker (idle workers) or auto",
       [](runtime_options& o, const std::string& v) { o.progress = parse_choice("progress", v, {"auto", "thread", "worker"}); }},
      {"stack", "fiber stack size, e.g. 256K (default 256K)",
       [](runtime_options& o, const std::string& v) {
         o.stack_size = parse_size("stack", v);
         if (o.stack_size < 16 * 1024) throw option_error("stack must be at least 16K");
       }},
      {"eager", "mpi: largest message sent copied through reused buffers; larger ones go zero-copy (default 16K)",
       [](runtime_options& o, const std::string& v) {
         o.eager_threshold = parse_size("eager", v);
         // Each rank keeps a few receives of the larger of eager and coalesce posted.
         if (o.eager_threshold > max_eager_message) throw option_error("eager must be at most 16M");
       }},
      {"coalesce",
       "mpi: most bytes of queued small messages sent to one rank as one MPI message (default 8K; a lone larger "
       "message still goes as one)",
       [](runtime_options& o, const std::string& v) {
         o.coalesce_limit = parse_size("coalesce", v);
         if (o.coalesce_limit < 256) throw option_error("coalesce must be at least 256");
         if (o.coalesce_limit > max_eager_message) throw option_error("coalesce must be at most 16M");
       }},
      {"node-rings",
       "mpi: small messages between ranks on one node go through shared-memory rings instead of MPI: 1 or 0 "
       "(default 1; used only when every rank says 1)",
       [](runtime_options& o, const std::string& v) { o.node_rings = parse_bool("node-rings", v); }},
      {"malloc-tuning",
       "raise glibc malloc's trim and mmap thresholds so freed message payloads are not handed back to the kernel "
       "and faulted in again: 1 or 0 (default 1; skipped when MALLOC_*_ or GLIBC_TUNABLES are set)",
       [](runtime_options& o, const std::string& v) { o.malloc_tuning = parse_bool("malloc-tuning", v); }},
  };
  return t;
}

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

}  // namespace

std::string options_help() {
  std::string s = "weft runtime options (--weft:NAME=VALUE, or WEFT_NAME=VALUE in the environment, NAME in upper case with - as _):\n";
  for (const auto& d : table()) {
    s += "  --weft:";
    s += d.name;
    s += std::string(d.name).size() < 10 ? std::string(10 - std::string(d.name).size(), ' ') : " ";
    s += d.help;
    s += "\n";
  }
  s += "  --weft:help      print this list and exit\n";
  return s;
}

runtime_options parse_options(int& argc, char** argv, bool& help) {
  runtime_options o;
  help = false;
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
    if (d == nullptr) throw option_error("unknown option '--weft:" + std::string(name) + "'");
    d->set(o, std::string(body.substr(eq + 1)));
  }
  argc = out;
  argv[argc] = nullptr;
  return o;
}

}  // namespace weft::detail
