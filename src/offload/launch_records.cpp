// The launcher's records of its target tasks in flight, and the consumer
// counts it owes the devices' ranks (see src/offload/task_table.hpp).
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "offload/task_table.hpp"
#include "runtime/layer_hooks.hpp"
#include "weft/offload/target.hpp"
#include "weft/runtime.hpp"

namespace weft::detail {

struct launch_record {
  const void* state;
  int device_rank;
  task_token token;
  bool ended = false;
  std::uint64_t consumers = 0;  // launches sent naming this task
};

namespace {

/// Counts travel with the next launch to their rank, or on their own once
/// this many wait for a rank, or this many when nothing is in flight any
/// more: a device's rank holds at most that many records of tasks ended
/// long ago per launching process (a few KiB).
constexpr std::size_t counts_batch = 256;
constexpr std::size_t counts_when_idle = 32;

struct launch_registry {
  std::mutex mutex;
  std::unordered_map<const void*, std::shared_ptr<launch_record>> in_flight;
  std::map<int, std::vector<consumer_count>> counts;  // by device rank
  std::atomic<std::uint64_t> next_seq{1};
  std::atomic<std::uint64_t> with_dependencies{0};
};

launch_registry& registry() {
  static launch_registry r;
  return r;
}

void send_counts(std::map<int, std::vector<consumer_count>>&& ready) noexcept {
  for (auto& [rank, counts] : ready) {
    try {
      send_consumer_counts(rank, std::move(counts));
    } catch (...) {  // the rank is gone: so are its records
    }
  }
}

/// A new runtime (a program may run several in turn) starts with no
/// records: counts left by the last one name records its ranks took along.
void forget_last_runtime(process_runtime&) {
  launch_registry& g = registry();
  std::lock_guard l(g.mutex);
  g.in_flight.clear();
  g.counts.clear();
}

}  // namespace

const bool offload_hooks = register_layer_hooks("offload", &forget_last_runtime, nullptr);

std::shared_ptr<launch_record> launch_record_of(const void* state) {
  launch_registry& g = registry();
  std::lock_guard l(g.mutex);
  auto r = g.in_flight.find(state);
  return r == g.in_flight.end() ? nullptr : r->second;
}

bool depend_on(launch_record& r, std::vector<remote_dependency>& after) {
  std::lock_guard l(registry().mutex);
  if (r.ended) return false;
  ++r.consumers;
  after.push_back({r.device_rank, r.token});
  return true;
}

std::shared_ptr<launch_record> begin_launch(const void* state, const device& d, launch_header& h) {
  launch_registry& g = registry();
  auto r = std::make_shared<launch_record>();
  r->state = state;
  r->device_rank = d.rank();
  r->token = task_token{weft::rank(), g.next_seq.fetch_add(1, std::memory_order_relaxed)};
  h.task = r->token;
  if (!h.after.empty()) g.with_dependencies.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard l(g.mutex);
  g.in_flight[state] = r;
  if (auto c = g.counts.find(d.rank()); c != g.counts.end()) {
    h.counts = std::move(c->second);
    g.counts.erase(c);
  }
  return r;
}

void end_launch(launch_record& rec, const char* not_sent) noexcept {
  launch_registry& g = registry();
  std::map<int, std::vector<consumer_count>> ready;
  std::uint64_t consumers = 0;
  {
    std::lock_guard l(g.mutex);
    auto r = g.in_flight.find(rec.state);
    if (r == g.in_flight.end() || r->second.get() != &rec) return;  // launched by a runtime before this one
    rec.ended = true;
    consumers = rec.consumers;
    g.in_flight.erase(r);
    // A launch that never left made no record there unless someone waits.
    if (not_sent == nullptr || consumers != 0) {
      auto& pending = g.counts[rec.device_rank];
      pending.push_back({rec.token, consumers});
      if (pending.size() >= counts_batch) {
        ready[rec.device_rank] = std::move(pending);
        g.counts.erase(rec.device_rank);
      }
    }
    if (g.in_flight.empty()) {
      for (auto c = g.counts.begin(); c != g.counts.end();) {
        if (c->second.size() < counts_when_idle) {
          ++c;
          continue;
        }
        auto& to = ready[c->first];
        to.insert(to.end(), c->second.begin(), c->second.end());
        c = g.counts.erase(c);
      }
    }
  }
  if (not_sent != nullptr && consumers != 0) {
    try {
      launch_not_sent(rec.device_rank, rec.token, not_sent);
    } catch (...) {  // the rank is gone: so is whoever waited there
    }
  }
  send_counts(std::move(ready));
}

void abandon_dependencies(const std::vector<remote_dependency>& after) noexcept {
  std::map<int, std::vector<task_token>> by_rank;
  for (const auto& a : after) by_rank[a.rank].push_back(a.task);
  for (auto& [rank, tasks] : by_rank) {
    try {
      abandon_arrivals(rank, std::move(tasks));
    } catch (...) {  // the rank is gone: so are its records
    }
  }
}

void send_consumer_counts_now() {
  std::map<int, std::vector<consumer_count>> ready;
  {
    launch_registry& g = registry();
    std::lock_guard l(g.mutex);
    ready.swap(g.counts);
  }
  send_counts(std::move(ready));
}

std::uint64_t launches_with_device_dependencies() noexcept {
  return registry().with_dependencies.load(std::memory_order_relaxed);
}

}  // namespace weft::detail
