// The present table: for each device, the calling rank's host ranges that
// are mapped there, with OpenMP's reference counts (the data directives'
// and the running target tasks' holds, weft/offload/map.hpp). Host addresses mean
// something only on their own rank, so each rank keeps its own table and
// nobody else needs to be asked whether a range is present.
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "am/rank_comm.hpp"
#include "weft/offload/target.hpp"

namespace weft::detail {

namespace {

struct present_tables {
  explicit present_tables(rank_comm&) {}
  std::mutex mutex;
  std::map<int, std::map<const std::byte*, present_ref>> by_device;
};

present_tables& tables() { return layer_state<present_tables>(current_comm()); }

std::string range_text(const void* p, std::size_t bytes) {
  char s[64];
  std::snprintf(s, sizeof s, "[%p, +%zu)", p, bytes);
  return s;
}

/// The entry of exactly [host, host + bytes), or null when nothing of it is
/// present; throws when it overlaps an entry of another extent. Under the lock.
present_ref find_exact(std::map<const std::byte*, present_ref>& t, int device, const std::byte* host,
                       std::size_t bytes) {
  if (bytes == 0) return nullptr;
  auto it = t.upper_bound(host);
  present_ref hit;
  auto overlaps = [&](const present_ref& e) { return e->host < host + bytes && host < e->host + e->bytes; };
  if (it != t.begin() && overlaps(std::prev(it)->second)) hit = std::prev(it)->second;
  else if (it != t.end() && overlaps(it->second)) hit = it->second;
  if (!hit) return nullptr;
  if (hit->host != host || hit->bytes != bytes)
    throw std::invalid_argument("weft offload: host range " + range_text(host, bytes) + " overlaps the range " +
                                range_text(hit->host, hit->bytes) + " present on " + describe_device(device) +
                                " with a different extent");
  return hit;
}

/// The calling rank's table for one device, held locked.
struct open_table {
  explicit open_table(int dev) : device(dev), lock(tables().mutex), entries(tables().by_device[dev]) {}
  /// find_exact on this table.
  present_ref find(const void* host, std::size_t bytes) {
    return find_exact(entries, device, static_cast<const std::byte*>(host), bytes);
  }
  int device;
  std::unique_lock<std::mutex> lock;
  std::map<const std::byte*, present_ref>& entries;
};

future<void> when_ready(const present_ref& e) {
  return e->ready.then([](shared_future<void> f) { f.get(); });
}

/// Takes `e` out of its table, unless a new entry for the same range has
/// replaced it there. Under the lock.
void erase_entry(std::map<const std::byte*, present_ref>& t, const present_ref& e) {
  auto it = t.find(e->host);
  if (it != t.end() && it->second == e) t.erase(it);
}

/// The end of a range that lost its last reference (already out of the
/// table): copied back into `to` unless that is null, then freed, once its
/// own copy in has arrived. The memory is freed even when the copy fails.
future<void> retire(const present_ref& e, void* to) {
  return e->ready.then([e, to](shared_future<void> r) {
    r.get();  // never arrived: nothing to copy or free
    const std::uint64_t a = e->address.load(std::memory_order_acquire);
    std::exception_ptr copy_error;
    if (to != nullptr) {
      try {
        device_read(e->device, a, to, e->bytes).get();
      } catch (...) {
        copy_error = std::current_exception();
      }
    }
    device_free(e->device, a).get();
    if (copy_error) std::rethrow_exception(copy_error);
  });
}

bool copies_back(map_kind kind) noexcept { return kind == map_kind::from || kind == map_kind::tofrom; }

}  // namespace

present_ref present_acquire(int device, const void* host, std::size_t bytes) {
  open_table table(device);
  present_ref e = table.find(host, bytes);
  if (e) ++e->holds;
  return e;
}

future<void> present_release(const present_ref& e, void* copy_back_to) {
  {
    open_table table(e->device);
    --e->holds;
    if (e->refs > 0 || e->holds > 0) return make_ready_future();
    erase_entry(table.entries, e);
  }
  return retire(e, copy_back_to);
}

void target_builder::check_buffer(int buffer_device) {
  if (!device_at(buffer_device).valid())
    fail(std::make_exception_ptr(std::invalid_argument("weft offload: a device_buffer of " +
                                                       describe_device(buffer_device) +
                                                       ", which does not exist, passed to a target task on " +
                                                       describe_device(device))));
}

void target_builder::release_entries() noexcept {
  // The task never ran: nothing to copy back (a range freed here was
  // dropped by everyone else meanwhile; its free goes on by itself).
  for (auto& e : entries) present_release(e, nullptr);
  entries.clear();
}

future<void> enter_range(int device, void* host, std::size_t bytes, map_kind kind, bool always) {
  try {
    const auto* h = static_cast<const std::byte*>(host);
    open_table table(device);
    if (present_ref e = table.find(host, bytes)) {
      ++e->refs;
      table.lock.unlock();
      if (!(always && (kind == map_kind::to || kind == map_kind::tofrom))) return when_ready(e);
      return e->ready.then([e, host, bytes](shared_future<void> r) {
        r.get();
        device_write(e->device, e->address.load(std::memory_order_acquire), host, bytes).get();
      });
    }
    if (bytes == 0) return make_ready_future();
    auto e = std::make_shared<present_entry>();
    e->device = device;
    e->host = h;
    e->bytes = bytes;
    e->refs = 1;
    promise<void> filled;
    e->ready = filled.get_future().share();
    table.entries.emplace(h, e);
    table.lock.unlock();
    const bool copy = kind == map_kind::to || kind == map_kind::tofrom;
    device_allocate(device, bytes).then([e, host, copy, filled = std::move(filled)](future<std::uint64_t> a) mutable {
      try {
        e->address.store(a.get(), std::memory_order_release);
        if (copy) device_write(e->device, e->address.load(std::memory_order_relaxed), host, e->bytes).get();
        filled.set_value();
      } catch (...) {
        {  // a range that never arrived is not present
          present_tables& p = tables();
          std::lock_guard g(p.mutex);
          erase_entry(p.by_device[e->device], e);
        }
        filled.set_exception(std::current_exception());
      }
    });
    return when_ready(e);
  } catch (...) {
    return make_exceptional_future<void>(std::current_exception());
  }
}

future<void> exit_range(int device, void* host, std::size_t bytes, map_kind kind, bool always) {
  try {
    open_table table(device);
    present_ref e = table.find(host, bytes);
    if (!e) return make_ready_future();  // not present: nothing to do (OpenMP)
    // map_delete drops every reference of the data directives, never a
    // running target task's hold: that task still reads and writes the range.
    if (kind == map_kind::remove) e->refs = 0;
    else if (e->refs > 0) --e->refs;
    const bool last = e->refs == 0 && e->holds == 0;
    if (last) table.entries.erase(e->host);  // found under this lock: it is e
    table.lock.unlock();
    if (last) return retire(e, copies_back(kind) ? host : nullptr);
    if (!(always && copies_back(kind))) return when_ready(e);
    return e->ready.then([e, host, bytes](shared_future<void> r) {
      r.get();
      device_read(e->device, e->address.load(std::memory_order_acquire), host, bytes).get();
    });
  } catch (...) {
    return make_exceptional_future<void>(std::current_exception());
  }
}

future<void> update_range(int device, void* host, std::size_t bytes, map_kind kind, bool) {
  try {
    open_table table(device);
    present_ref e = table.find(host, bytes);
    table.lock.unlock();
    if (!e) return make_ready_future();  // not present: skipped (OpenMP)
    return e->ready.then([e, host, bytes, kind](shared_future<void> r) {
      r.get();
      const std::uint64_t a = e->address.load(std::memory_order_acquire);
      if (kind == map_kind::to || kind == map_kind::tofrom) device_write(e->device, a, host, bytes).get();
      if (kind == map_kind::from || kind == map_kind::tofrom) device_read(e->device, a, host, bytes).get();
    });
  } catch (...) {
    return make_exceptional_future<void>(std::current_exception());
  }
}

}  // namespace weft::detail
