#include "trace/recorder.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "trace/buffers.hpp"
#include "trace/control.hpp"

namespace weft::trace {

namespace {

std::mutex registry_mutex;
std::vector<std::unique_ptr<thread_buffer>> registry;
std::map<int, int> others_per_rank;  // non-worker threads seen per rank
std::size_t limit = std::size_t{1} << 20;
int default_rank = 0;

// Bumped by every start(): a thread's buffer from an earlier runtime (the
// main thread's, after finalize and init) is not used again.
std::uint64_t generation = 0;

thread_local thread_buffer* tls_buffer = nullptr;
thread_local std::uint64_t tls_generation = 0;

thread_buffer* make_buffer(const char* name) {
  auto b = std::make_unique<thread_buffer>();
  int rank = -1, worker = -1;
  if (identify_thread != nullptr) identify_thread(rank, worker);
  b->rank = rank < 0 ? default_rank : rank;
  std::lock_guard lock(registry_mutex);
  if (worker >= 0) {
    b->tid = worker;
    b->name = "worker " + std::to_string(worker);
  } else {
    b->tid = first_other_tid + others_per_rank[b->rank]++;
    // weft's only threads besides workers and the main thread.
    b->name = name != nullptr ? name : "progress thread";
  }
  // Reserved up front so recording never copies the buffer (pages are
  // committed only as events fill them); very large limits grow past this.
  b->records.reserve(std::min<std::size_t>(limit, std::size_t{1} << 22));
  registry.push_back(std::move(b));
  return registry.back().get();
}

// Not inlined: a fiber may resume on another thread, so the thread_local's
// address must be computed afresh on every call.
[[gnu::noinline]] thread_buffer& buffer() {
  thread_buffer* b = tls_buffer;
  if (b == nullptr || tls_generation != generation) [[unlikely]] {
    b = tls_buffer = make_buffer(nullptr);
    tls_generation = generation;
  }
  return *b;
}

record* push(thread_buffer& b) noexcept {
  if (b.records.size() >= limit) [[unlikely]] {
    ++b.dropped;
    return nullptr;
  }
  return &b.records.emplace_back();
}

}  // namespace

namespace impl {

void begin(label l) noexcept {
  thread_buffer& b = buffer();
  const bool fresh = b.open < 0;
  if (fresh && b.records.size() >= limit) [[unlikely]] {
    ++b.dropped;  // without reading the clock
    return;
  }
  if (l.fn == nullptr && l.what == kind::task) l.what = std::exchange(b.next, kind::task);
  const record r{ticks(), 0, reinterpret_cast<std::uintptr_t>(l.fn), 0, -1, record_type::interval,
                 static_cast<std::uint8_t>(l.what), 0};
  // An interval still open here is a resumption item that jumped straight
  // into the resumed task: the resumed task takes its record.
  if (fresh) {
    b.open = static_cast<std::ptrdiff_t>(b.records.size());
    b.records.push_back(r);
  } else {
    b.records[static_cast<std::size_t>(b.open)] = r;
  }
  b.renamed = false;  // the label given here replaces any rename
}

label end() noexcept {
  thread_buffer& b = buffer();
  if (b.open < 0) return {};
  record& r = b.records[static_cast<std::size_t>(b.open)];
  b.open = -1;
  r.dur = ticks() - r.t;
  if (b.renamed) {
    b.renamed = false;
    return b.before_rename;
  }
  return {reinterpret_cast<const void*>(r.a), static_cast<kind>(r.what)};
}

void name_running(kind k, const void* fn) noexcept {
  thread_buffer& b = buffer();
  if (b.open < 0) return;
  record& r = b.records[static_cast<std::size_t>(b.open)];
  // A stolen task stays one: its function names it, its kind says how it came.
  if (r.what != static_cast<std::uint8_t>(kind::stolen_task)) r.what = static_cast<std::uint8_t>(k);
  r.a = reinterpret_cast<std::uintptr_t>(fn);
}

void name_this_interval(kind k) noexcept {
  thread_buffer& b = buffer();
  if (b.open < 0) return;
  record& r = b.records[static_cast<std::size_t>(b.open)];
  if (!b.renamed) b.before_rename = {reinterpret_cast<const void*>(r.a), static_cast<kind>(r.what)};
  b.renamed = true;
  r.what = static_cast<std::uint8_t>(k);
}

void comm(record_type type, int peer, std::uint8_t what, std::uint64_t key, std::uint64_t bytes,
          std::uint64_t t0) noexcept {
  thread_buffer& b = buffer();
  if (record* r = push(b)) *r = record{t0, ticks() - t0, key, bytes, peer, type, what, 0};
}

void steal(int victim_rank, int victim_worker) noexcept {
  thread_buffer& b = buffer();
  b.next = kind::stolen_task;  // the thief runs it next
  if (record* r = push(b))
    *r = record{ticks(), 0, 0, static_cast<std::uint64_t>(victim_worker), victim_rank, record_type::steal, 0, 0};
}

}  // namespace impl

void start(std::size_t events_per_thread, int process_rank) {
  {
    std::lock_guard lock(registry_mutex);
    registry.clear();  // an earlier runtime's, written already; its threads are gone
    others_per_rank.clear();
  }
  ++generation;
  start_clock();
  limit = events_per_thread;
  default_rank = process_rank;
  enabled.store(true, std::memory_order_relaxed);
}

void stop() noexcept {
  enabled.store(false, std::memory_order_relaxed);
  stop_clock();
}

void name_this_thread(const char* name) {
  if (tls_buffer == nullptr || tls_generation != generation) {
    tls_buffer = make_buffer(name);
    tls_generation = generation;
  }
}

std::vector<thread_buffer*> all_buffers() {
  std::lock_guard lock(registry_mutex);
  std::vector<thread_buffer*> v;
  for (auto& b : registry) v.push_back(b.get());
  return v;
}

}  // namespace weft::trace
