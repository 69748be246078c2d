// Devices and device memory: ids, allocation by the owner, checked copies
// host <-> device and device <-> device (also rank to rank, fragmented).
#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "spmd_main.hpp"
#include "weft/offload.hpp"

namespace {

using offload_test::expect_error;
using weft::test::on_every_rank;

int expected_per_rank() {
  const char* v = std::getenv("WEFT_CPU_DEVICES");
  return v ? std::atoi(v) : 1;
}

TEST(OffloadDevices, RankMajorIds) {
  on_every_rank([] {
    const auto all = weft::devices();
    ASSERT_EQ(static_cast<int>(all.size()), weft::nranks() * expected_per_rank());
    EXPECT_EQ(weft::num_devices(), static_cast<int>(all.size()));
    for (std::size_t i = 0; i < all.size(); ++i) {
      EXPECT_EQ(all[i].id(), static_cast<int>(i));
      EXPECT_EQ(all[i].rank(), static_cast<int>(i) / expected_per_rank());
      EXPECT_EQ(all[i].kind(), weft::device_kind::cpu);
      EXPECT_GT(all[i].memory(), 0u);
    }
    EXPECT_FALSE(weft::device_at(static_cast<int>(all.size())).valid());
    EXPECT_EQ(weft::devices_of(weft::rank()).front().rank(), weft::rank());
  });
}

TEST(OffloadMemory, HostDeviceRoundTripOnEveryDevice) {
  on_every_rank([] {
    for (const weft::device& d : weft::devices()) {
      std::vector<int> host(1000);
      std::iota(host.begin(), host.end(), 100 * weft::rank());
      auto buf = weft::allocate<int>(d, host.size()).get();
      EXPECT_EQ(buf.device_id, d.id());
      weft::copy(buf, 0, std::span<const int>(host)).get();
      std::vector<int> back(host.size());
      weft::copy(std::span<int>(back), buf, 0).get();
      EXPECT_EQ(back, host);
      weft::deallocate(buf).get();
    }
  });
}

TEST(OffloadMemory, CopiesAreBoundsChecked) {
  on_every_rank([] {
    const weft::device d = weft::devices().back();
    auto buf = weft::allocate<double>(d, 10).get();
    std::vector<double> eleven(11);
    expect_error<std::out_of_range>([&] { weft::copy(buf, 0, std::span<const double>(eleven)).get(); },
                                    weft::detail::describe_device(d.id()) + ": elements [0, 11) outside the buffer's 10");
    EXPECT_THROW(weft::copy(std::span<double>(eleven.data(), 3), buf, 8).get(), std::out_of_range);
    EXPECT_THROW(weft::copy(buf, 5, buf, 0, 6).get(), std::out_of_range);
    // A forged handle is refused by the owning rank.
    weft::device_buffer<double> forged{buf.device_id, buf.address + 8 * sizeof(double), 10};
    EXPECT_THROW(weft::copy(forged, 0, std::span<const double>(eleven.data(), 10)).get(), std::exception);
    weft::deallocate(buf).get();
  });
}

TEST(OffloadMemory, OutOfRangeCopiesNameTheDeviceOnce) {
  on_every_rank([] {
    const weft::device d = weft::devices().back();
    const std::string dev = weft::detail::describe_device(d.id());
    auto buf = weft::allocate<int>(d, 10).get();
    std::vector<int> eleven(11);
    expect_error<std::out_of_range>([&] { weft::copy(buf, 0, std::span<const int>(eleven)).get(); },
                                    "weft offload: copy to " + dev + ": elements [0, 11) outside the buffer's 10 elements");
    expect_error<std::out_of_range>([&] { weft::copy(std::span<int>(eleven).first(3), buf, 8).get(); },
                                    "weft offload: copy from " + dev + ": elements [8, 11) outside the buffer's 10 elements");
    expect_error<std::out_of_range>([&] { weft::copy(buf, 5, buf, 0, 6).get(); },
                                    "weft offload: device-to-device copy into " + dev +
                                        ": elements [5, 11) outside the buffer's 10 elements");
    expect_error<std::out_of_range>([&] { weft::copy(buf, 0, buf, 7, 4).get(); },
                                    "weft offload: device-to-device copy from " + dev +
                                        ": elements [7, 11) outside the buffer's 10 elements");
    weft::deallocate(buf).get();
  });
}

TEST(OffloadMemory, DeviceToDeviceAcrossRanksInFragments) {
  on_every_rank([] {
    // The source is the next rank's device, the destination the one after:
    // with three ranks or more the caller is a third party.
    const int n = weft::nranks();
    const weft::device src = weft::devices_of((weft::rank() + 1) % n).back();
    const weft::device dst = weft::devices_of((weft::rank() + 2) % n).front();
    const std::size_t count = (std::size_t{7} << 20) / 2 / sizeof(long) + 3;  // 3.5 MiB + a bit
    std::vector<long> host(count);
    std::iota(host.begin(), host.end(), 7L * weft::rank());
    auto a = weft::allocate<long>(src, count).get();
    auto b = weft::allocate<long>(dst, count + 5).get();
    weft::copy(a, 0, std::span<const long>(host)).get();
    weft::copy(b, 5, a, 0, count).get();
    std::vector<long> back(count);
    weft::copy(std::span<long>(back), b, 5).get();
    EXPECT_EQ(back, host);
    weft::deallocate(a).get();
    weft::deallocate(b).get();
  });
}

TEST(OffloadMemory, UnknownDeviceFailsTheFuture) {
  on_every_rank([] {
    expect_error<std::out_of_range>([] { weft::allocate<int>(weft::device_at(999), 4).get(); }, "no device 999");
  });
}

TEST(OffloadMemory, AllocationBeyondTheDeviceMemoryFails) {
  on_every_rank([] {
    const weft::device d = weft::devices().front();
    expect_error<std::exception>([&] { weft::allocate<char>(d, d.memory() + 1).get(); },
                                 "device 0 (cpu, rank 0): allocation of");
  });
}

}  // namespace
