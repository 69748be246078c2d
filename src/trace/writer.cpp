// Writing the trace: each process writes its ranks' events as a part (one
// metadata line, then one JSON event per line); one process merges the parts
// into the Chrome Trace Event file.
//
// Messages are paired without any field on the wire: a send is keyed by its
// content (handler, header, body size and first body bytes; am computes the
// key) and the k-th message from s to d with key x is taken to be the k-th
// received by d from s with key x, k counted in each side's time order.
// Messages with different keys cannot be confused whatever order the
// transports deliver them in; messages with equal keys are interchangeable.
// Both sides compute the flow id from (s, d, x, k), so no part needs another.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "trace/buffers.hpp"
#include "trace/clock.hpp"
#include "trace/control.hpp"
#include "trace/symbols.hpp"

namespace weft::trace {

namespace {

struct clock_estimate {
  std::int64_t offset_ns = 0;
  std::int64_t rtt_ns = 0;
};
std::mutex offsets_mutex;
std::map<int, clock_estimate> offsets;
std::vector<std::pair<int, int>> local_ranks;  // (rank, workers)

const char* kind_name(std::uint8_t k) {
  static const char* const names[] = {"task", "remote call", "forked task", "stolen task", "target kernel",
                                      "collective"};
  return k < std::size(names) ? names[k] : "task";
}

std::string handler_name(std::uint8_t h) {
  if (h == 1) return "call";
  if (h == 2) return "reply";
  if (message_kind_names[h] != nullptr) return message_kind_names[h];
  return "message " + std::to_string(h);
}

std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    } else {
      r += c;
    }
  }
  return r + "\"";
}

/// Flow ids stay below 2^53: JSON readers hold numbers as doubles.
std::uint64_t flow_id(int from, int to, std::uint64_t key, std::uint64_t k) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint64_t v : {static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(to), key, k}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h & ((std::uint64_t{1} << 53) - 1);
}

/// Per message record: its flow id, from each side's time order.
std::unordered_map<const record*, std::uint64_t> message_ids(const std::vector<thread_buffer*>& buffers) {
  struct entry {
    int rank, peer;
    record_type type;
    std::uint64_t key, t;
    const record* r;
  };
  std::vector<entry> all;
  for (thread_buffer* b : buffers)
    for (const record& r : b->records)
      if (r.type == record_type::send || r.type == record_type::receive)
        all.push_back({b->rank, r.peer, r.type, r.a, r.t, &r});
  std::sort(all.begin(), all.end(), [](const entry& x, const entry& y) {
    return std::tie(x.rank, x.type, x.peer, x.key, x.t) < std::tie(y.rank, y.type, y.peer, y.key, y.t);
  });
  std::unordered_map<const record*, std::uint64_t> ids;
  std::uint64_t k = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const entry& e = all[i];
    const bool same_group = i > 0 && all[i - 1].rank == e.rank && all[i - 1].type == e.type &&
                            all[i - 1].peer == e.peer && all[i - 1].key == e.key;
    k = same_group ? k + 1 : 0;
    const bool sent = e.type == record_type::send;
    ids[e.r] = flow_id(sent ? e.rank : e.peer, sent ? e.peer : e.rank, e.key, k);
  }
  return ids;
}

class part_writer {
 public:
  explicit part_writer(std::FILE* f) : f_(f), clock_(current_tick_map()) {}

  void buffer(const thread_buffer& b, const std::unordered_map<const record*, std::uint64_t>& ids) {
    std::fprintf(f_, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":%s}}\n", b.rank,
                 b.tid, json_string(b.name).c_str());
    std::fprintf(f_, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}\n",
                 b.rank, b.tid, b.tid);
    const std::int64_t offset = offset_of(b.rank);
    for (const record& r : b.records) {
      const double ts = static_cast<double>(clock_.ns(r.t) - offset) / 1000.0;
      const double dur = clock_.span(r.dur) / 1000.0;
      switch (r.type) {
        case record_type::interval:
          if (&r == open_record(b)) break;  // still running (a failure path writes mid-run)
          std::fprintf(f_,
                       "{\"ph\":\"X\",\"cat\":\"task\",\"name\":%s,\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                       "\"args\":{\"kind\":\"%s\"}}\n",
                       json_string(name_of(r)).c_str(), b.rank, b.tid, ts, dur, kind_name(r.what));
          break;
        case record_type::send:
        case record_type::receive: {
          const bool sent = r.type == record_type::send;
          const std::string h = handler_name(r.what);
          std::fprintf(f_,
                       "{\"ph\":\"X\",\"cat\":\"comm\",\"name\":\"%s %s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                       "\"dur\":%.3f,\"args\":{\"%s\":%d,\"bytes\":%" PRIu64 "}}\n",
                       sent ? "send" : "receive", h.c_str(), b.rank, b.tid, ts, dur, sent ? "to" : "from", r.peer,
                       r.b);
          // The arrow's ends sit inside the comm slices (flow events bind
          // to the slice enclosing them).
          std::fprintf(f_,
                       "{\"ph\":\"%s\",%s\"cat\":\"message\",\"name\":\"message\",\"id\":%" PRIu64
                       ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"args\":{\"kind\":\"%s\",\"bytes\":%" PRIu64 "}}\n",
                       sent ? "s" : "f", sent ? "" : "\"bp\":\"e\",", ids.at(&r), b.rank, b.tid, ts + dur / 2,
                       h.c_str(), r.b);
          break;
        }
        case record_type::steal: {
          std::fprintf(f_,
                       "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"steal\",\"name\":\"steal\",\"pid\":%d,\"tid\":%d,"
                       "\"ts\":%.3f,\"args\":{\"from_rank\":%d,\"from_worker\":%" PRIu64 "}}\n",
                       b.rank, b.tid, ts, r.peer, r.b);
          // An arrow from the victim's row (inside the task it was running)
          // to the stolen task's interval, which follows on the thief's row.
          const std::uint64_t id = flow_id(b.rank, b.tid, r.t, 0x5ea1);
          std::fprintf(f_,
                       "{\"ph\":\"s\",\"cat\":\"steal\",\"name\":\"steal\",\"id\":%" PRIu64
                       ",\"pid\":%d,\"tid\":%" PRIu64 ",\"ts\":%.3f}\n",
                       id, r.peer, r.b, ts);
          std::fprintf(f_,
                       "{\"ph\":\"f\",\"cat\":\"steal\",\"name\":\"steal\",\"id\":%" PRIu64
                       ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f}\n",
                       id, b.rank, b.tid, ts);
          break;
        }
      }
    }
  }

 private:
  static const record* open_record(const thread_buffer& b) {
    return b.open >= 0 ? &b.records[static_cast<std::size_t>(b.open)] : nullptr;
  }
  static std::int64_t offset_of(int rank) {
    std::lock_guard lock(offsets_mutex);
    auto it = offsets.find(rank);
    return it == offsets.end() ? 0 : it->second.offset_ns;
  }
  std::string name_of(const record& r) {
    if (r.a == 0) return kind_name(r.what);
    auto [it, fresh] = names_.try_emplace(r.a);
    if (fresh) {
      if (!symbols_) symbols_.emplace();  // read the symbol table only when something needs a name
      it->second = symbols_->name_of(reinterpret_cast<const void*>(r.a));
    }
    return it->second.empty() ? kind_name(r.what) : it->second;
  }

  std::FILE* f_;
  tick_map clock_;
  std::optional<symbol_table> symbols_;
  std::unordered_map<std::uint64_t, std::string> names_;
};

}  // namespace

void set_clock_offset(int rank, std::int64_t offset_ns, std::int64_t rtt_ns) {
  std::lock_guard lock(offsets_mutex);
  offsets[rank] = {offset_ns, rtt_ns};
}

void set_local_ranks(std::vector<std::pair<int, int>> rank_workers) { local_ranks = std::move(rank_workers); }

std::string part_path(const std::string& path, int rank) { return path + ".rank-" + std::to_string(rank) + ".part"; }

bool write_part(const std::string& part, int world_size, const std::string& backend) noexcept {
  try {
    const std::string tmp = part + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) {
      std::perror(("weft: trace: cannot write " + tmp).c_str());
      return false;
    }
    std::vector<thread_buffer*> buffers = all_buffers();
    std::sort(buffers.begin(), buffers.end(),
              [](const thread_buffer* a, const thread_buffer* b) { return std::tie(a->rank, a->tid) < std::tie(b->rank, b->tid); });
    // First line: one metadata object per rank of this process.
    std::map<int, std::pair<std::uint64_t, std::uint64_t>> counts;  // rank -> events, dropped
    for (auto [rank, workers] : local_ranks) counts[rank];
    for (thread_buffer* b : buffers) {
      counts[b->rank].first += b->records.size();
      counts[b->rank].second += b->dropped;
    }
    std::string meta;
    for (auto& [rank, c] : counts) {
      clock_estimate est;
      {
        std::lock_guard lock(offsets_mutex);
        if (auto it = offsets.find(rank); it != offsets.end()) est = it->second;
      }
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "{\"rank\":%d,\"world_size\":%d,\"backend\":%s,\"host_pid\":%d,\"clock_offset_ns\":%" PRId64
                    ",\"clock_sync_rtt_ns\":%" PRId64 ",\"events\":%" PRIu64 ",\"dropped_events\":%" PRIu64 "}",
                    rank, world_size, json_string(backend).c_str(), static_cast<int>(getpid()), est.offset_ns,
                    est.rtt_ns, c.first, c.second);
      if (!meta.empty()) meta += ',';
      meta += buf;
    }
    std::fprintf(f, "%s\n", meta.c_str());
    for (auto& [rank, c] : counts)
      std::fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}\n", rank,
                   rank);
    // Rows of workers that recorded nothing (they were idle throughout).
    for (auto [rank, workers] : local_ranks)
      for (int w = 0; w < workers; ++w)
        if (std::none_of(buffers.begin(), buffers.end(), [&](const thread_buffer* b) { return b->rank == rank && b->tid == w; }))
          std::fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"worker %d\"}}\n",
                       rank, w, w);
    const auto ids = message_ids(buffers);
    part_writer w(f);
    for (thread_buffer* b : buffers) w.buffer(*b, ids);
    const bool ok = std::fclose(f) == 0 && std::rename(tmp.c_str(), part.c_str()) == 0;
    if (!ok) std::perror(("weft: trace: cannot write " + part).c_str());
    return ok;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: trace: cannot write %s: %s\n", part.c_str(), e.what());
    return false;
  }
}

bool merge_parts(const std::string& path, const std::vector<std::string>& parts, double timeout_s) noexcept {
  try {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (const std::string& p : parts)
      while (access(p.c_str(), R_OK) != 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          std::fprintf(stderr, "weft: trace: %s did not appear within %.0f s; the parts stay unmerged\n", p.c_str(),
                       timeout_s);
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    std::ofstream out(path);
    out << "{\"traceEvents\":[\n";
    std::string meta, line;
    bool first = true;
    for (const std::string& p : parts) {
      std::ifstream in(p);
      if (std::getline(in, line)) {
        if (!meta.empty()) meta += ",\n";
        meta += line;
      }
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        out << (first ? "" : ",\n") << line;
        first = false;
      }
    }
    out << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"weft --weft:trace\",\"clock\":"
           "\"CLOCK_MONOTONIC; each rank's timestamps are shifted by its clock_offset_ns, estimated at start from "
           "the minimum-round-trip ping-pong of rank 0 with it\",\"ranks\":[\n"
        << meta << "\n]}}\n";
    out.close();
    if (!out) {
      std::fprintf(stderr, "weft: trace: cannot write %s\n", path.c_str());
      return false;
    }
    for (const std::string& p : parts) std::remove(p.c_str());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft: trace: cannot merge into %s: %s\n", path.c_str(), e.what());
    return false;
  }
}

}  // namespace weft::trace
