// A target task on its device's rank: addresses, temporaries, and the
// three steps (copies in, kernel, copies out) on the device's two queues.
#include <cstring>
#include <exception>
#include <stdexcept>

#include "offload/device_state.hpp"
#include "weft/offload/launch.hpp"

namespace weft::detail {

struct device_scope::pending {
  cpu_device* dev = nullptr;
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
  p_->dev = &local_device(device);
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
  cpu_device& d = *p_->dev;
  // Fetches come from the other devices' ranks into this task's own
  // temporaries: they run alongside the copies in.
  std::vector<future<void>> fetched;
  for (const auto& f : p_->fetches) fetched.push_back(device_read(f.device, f.address, f.to, f.bytes));
  if (!p_->ins.empty()) {
    d.transfers
        .submit([this] {
          for (auto& c : p_->ins) std::memcpy(c.to, c.from.data(), c.from.size());
        })
        .get();
  }
  if (!fetched.empty()) join_all(std::move(fetched)).get();
  d.kernels
      .submit([&kernel, &d] {
        try {
          kernel();
        } catch (const std::exception& e) {
          throw std::runtime_error("weft offload: kernel failed on " + d.name() + ": " + e.what());
        } catch (...) {
          throw std::runtime_error("weft offload: kernel failed on " + d.name() + " (exception not derived from std::exception)");
        }
      })
      .get();
  std::vector<std::vector<std::byte>> outs;
  if (!p_->outs.empty()) {
    d.transfers
        .submit([this, &outs] {
          for (const auto& c : p_->outs) outs.emplace_back(c.from, c.from + c.bytes);
        })
        .get();
  }
  return outs;
}

}  // namespace weft::detail
