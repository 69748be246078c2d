// A target task on its device's rank: addresses, temporaries, and the
// three steps (copies in, kernel, copies out) on the device's two queues.
#include <cstring>
#include <exception>
#include <stdexcept>

#include "offload/device_state.hpp"
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
};

device_scope::device_scope(int device) : device_(device), p_(std::make_unique<pending>()) {
  p_->dev = &local_device_of(device);
}

device_scope::~device_scope() {
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

std::vector<std::vector<std::byte>> device_scope::run(const std::function<void()>& kernel) {
  return run_steps([&](local_device& d) { d.run_kernel(kernel); });
}

std::vector<std::vector<std::byte>> device_scope::run_launcher(const std::function<void(cuda_stream)>& launcher) {
  return run_steps([&](local_device& d) { d.run_launcher(launcher); });
}

std::vector<std::vector<std::byte>> device_scope::run_steps(const std::function<void(local_device&)>& kernel) {
  local_device& d = *p_->dev;
  // Fetches come from the other devices' ranks into this task's own
  // temporaries (through this rank's memory when the device's is not
  // addressable): they run alongside the copies in.
  std::vector<future<void>> fetched;
  std::vector<std::vector<std::byte>> staged(d.host_addressable() ? 0 : p_->fetches.size());
  for (std::size_t i = 0; i < p_->fetches.size(); ++i) {
    const auto& f = p_->fetches[i];
    std::byte* to = f.to;
    if (!d.host_addressable()) {
      staged[i].resize(f.bytes);
      to = staged[i].data();
    }
    fetched.push_back(device_read(f.device, f.address, to, f.bytes));
  }
  for (auto& c : p_->ins) d.write(c.to, c.from.data(), c.from.size());
  if (!fetched.empty()) join_all(std::move(fetched)).get();
  for (std::size_t i = 0; i < staged.size(); ++i) d.write(p_->fetches[i].to, staged[i].data(), staged[i].size());
  kernel(d);
  std::vector<std::vector<std::byte>> outs;
  for (const auto& c : p_->outs) {
    outs.emplace_back(c.bytes);
    d.read(outs.back().data(), c.from, c.bytes);
  }
  return outs;
}

}  // namespace weft::detail
