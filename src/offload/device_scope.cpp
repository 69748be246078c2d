// A target task on its device's rank: addresses, temporaries, and the
// three steps (copies in, kernel, copies out) on the device's two queues.
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>

#include "offload/device_state.hpp"
#include "offload/task_table.hpp"
#include "weft/offload/target.hpp"
#include "weft/offload/launch.hpp"

namespace weft::detail {

struct device_scope::pending {
  local_device* dev = nullptr;
  std::vector<std::uint64_t> temporaries;
  struct copy_in {
    std::byte* to;
    std::vector<std::byte> from;
  };
  struct copy_out {
    const std::byte* from;
    std::size_t bytes;
  };
  struct fetch {
    std::byte* to;
    int device;
    std::uint64_t address;
    std::size_t bytes;
  };
  std::vector<fetch> fetches;
  std::vector<copy_in> ins;
  std::vector<copy_out> outs;
  std::vector<remote_dependency> after;  // not yet waited for
};

// A task that fails before it waits still arrives where its dependencies
// ran, or their records there would never go.
device_scope::device_scope(int device, std::vector<remote_dependency> after)
    : device_(device), p_(std::make_unique<pending>()) {
  try {
    p_->dev = &local_device_of(device);
  } catch (...) {
    abandon_dependencies(after);
    throw;
  }
  p_->after = std::move(after);
}

device_scope::~device_scope() {
  abandon_dependencies(p_->after);
  for (std::uint64_t a : p_->temporaries) p_->dev->free(a);
}

std::byte* device_scope::resolve(std::uint64_t address, std::size_t bytes) { return p_->dev->resolve(address, bytes); }

std::byte* device_scope::allocate_temporary(std::size_t bytes) {
  const std::uint64_t a = p_->dev->allocate(bytes);
  p_->temporaries.push_back(a);
  return reinterpret_cast<std::byte*>(a);
}

std::byte* device_scope::fetch_later(int device, std::uint64_t address, std::size_t bytes) {
  std::byte* to = allocate_temporary(bytes);
  p_->fetches.push_back({to, device, address, bytes});
  return to;
}

void device_scope::copy_in_later(std::byte* to, std::vector<std::byte>&& from) {
  p_->ins.push_back({to, std::move(from)});
}

void device_scope::copy_out_later(const std::byte* from, std::size_t bytes) { p_->outs.push_back({from, bytes}); }

std::vector<std::vector<std::byte>> device_scope::run(const std::function<void()>& kernel, const void* name) {
  return run_steps([&](local_device& d) { d.run_kernel(kernel, name); });
}

std::vector<std::vector<std::byte>> device_scope::run_launcher(const std::function<void(cuda_stream)>& launcher,
                                                               const void* name) {
  return run_steps([&](local_device& d) { d.run_launcher(launcher, name); });
}

/// Starts this task's fetches, each from its device's rank. A rank that ran
/// one of the task's dependencies makes its fetches once they are done (one
/// message per rank, sent at once: the wait happens there). Fetches from this
/// rank's other devices start after this rank's dependencies.
class device_scope::fetching {
 public:
  fetching(pending& p, int me) : p_(p), staged_(p.dev->host_addressable() ? 0 : p.fetches.size()) {
    std::map<int, std::vector<task_token>> after;
    for (const auto& a : p.after) after[a.rank].push_back(a.task);
    p.after.clear();  // they arrive below (this rank's in wait())
    std::map<int, std::vector<std::size_t>> fetch_of;
    for (std::size_t i = 0; i < p.fetches.size(); ++i) fetch_of[device_at(p.fetches[i].device).rank()].push_back(i);
    if (auto mine = after.find(me); mine != after.end()) {
      local_after_ = std::move(mine->second);
      after.erase(mine);
    }
    for (auto& [rank, tasks] : after) {
      std::vector<std::size_t> which;
      if (auto f = fetch_of.find(rank); f != fetch_of.end()) {
        which = std::move(f->second);
        fetch_of.erase(f);
      }
      std::vector<fetch_request> reads;
      for (std::size_t i : which) reads.push_back({p.fetches[i].device, p.fetches[i].address, p.fetches[i].bytes});
      waited_.push_back({read_after(rank, std::move(tasks), std::move(reads)), std::move(which)});
    }
    for (auto& [rank, which] : fetch_of)
      for (std::size_t i : which) (rank == me ? later_ : now_).push_back(i);
    for (std::size_t i : now_) started_.push_back(start(i));
  }

  /// Waits for every dependency and fetch; the fetched bytes are in place
  /// (or staged, for a device this rank cannot address).
  void wait() {
    std::vector<shared_future<void>> local;
    for (const auto& t : local_after_) local.push_back(arrive_here(t));
    local_after_.clear();
    std::exception_ptr error;
    for (const auto& f : local) {
      try {
        f.get();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    if (!error)
      for (std::size_t i : later_) started_.push_back(start(i));
    for (auto& [reply, which] : waited_) {
      try {
        auto bytes = reply.get();
        if (bytes.size() != which.size()) throw protocol_error("weft offload: short fetch reply");
        for (std::size_t k = 0; k < which.size(); ++k) place(which[k], std::move(bytes[k]));
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    for (auto& f : started_) {
      try {
        f.get();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
  }

  /// Writes what was staged into the device.
  void unstage() {
    for (std::size_t i = 0; i < staged_.size(); ++i)
      if (!staged_[i].empty()) p_.dev->write(p_.fetches[i].to, staged_[i].data(), staged_[i].size());
  }

 private:
  future<void> start(std::size_t i) {
    const auto& f = p_.fetches[i];
    std::byte* to = f.to;
    if (!staged_.empty()) {
      staged_[i].resize(f.bytes);
      to = staged_[i].data();
    }
    return device_read(f.device, f.address, to, f.bytes);
  }
  void place(std::size_t i, std::vector<std::byte>&& bytes) {
    const auto& f = p_.fetches[i];
    if (bytes.size() != f.bytes) throw protocol_error("weft offload: short fetch reply");
    if (staged_.empty()) {
      if (!bytes.empty()) std::memcpy(f.to, bytes.data(), bytes.size());
    } else {
      staged_[i] = std::move(bytes);
    }
  }

  pending& p_;
  std::vector<std::vector<std::byte>> staged_;
  std::vector<task_token> local_after_;
  std::vector<std::pair<future<std::vector<std::vector<std::byte>>>, std::vector<std::size_t>>> waited_;
  std::vector<std::size_t> now_, later_;
  std::vector<future<void>> started_;
};

std::vector<std::vector<std::byte>> device_scope::run_steps(const std::function<void(local_device&)>& kernel) {
  local_device& d = *p_->dev;
  // Dependencies first (a copy in may overwrite what a dependency reads);
  // the fetches go into this task's own temporaries meanwhile.
  fetching fetches(*p_, weft::rank());
  fetches.wait();
  for (auto& c : p_->ins) d.write(c.to, c.from.data(), c.from.size());
  fetches.unstage();
  kernel(d);
  std::vector<std::vector<std::byte>> outs;
  for (const auto& c : p_->outs) {
    outs.emplace_back(c.bytes);
    d.read(outs.back().data(), c.from, c.bytes);
  }
  return outs;
}

}  // namespace weft::detail
