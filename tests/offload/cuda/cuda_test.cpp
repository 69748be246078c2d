// cuda devices: the inventory and the launcher checks run everywhere; the
// cases that need a GPU skip, saying so, when cudaGetDeviceCount() finds none.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../expect_error.hpp"
#include "launchers.hpp"
#include "spmd_main.hpp"
#include "weft/offload.hpp"

namespace {

using offload_test::expect_error;
using weft::test::on_every_rank;

/// GPUs this process sees; 0 when the runtime reports an error (no driver, no device).
int gpus_seen() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

std::string why_no_gpu() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  return std::string("no GPU on this machine (cudaGetDeviceCount: ") +
         (e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)) + "): cuda device case not run";
}

#define REQUIRE_GPU() \
  if (gpus_seen() == 0) GTEST_SKIP() << why_no_gpu()

std::vector<weft::device> cuda_devices() { return weft::devices(weft::device_kind::cuda); }

void host_kernel(std::span<int> out) {
  for (auto& v : out) v = 1;
}

TEST(CudaDevices, EveryGpuSeenIsListedAfterTheCpuDevices) {
  const int gpus = gpus_seen();
  on_every_rank([gpus] {
    const auto all = weft::devices();
    for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].id(), static_cast<int>(i));
    const auto mine = weft::devices_of(weft::rank());
    int cuda = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      EXPECT_EQ(mine[i].rank(), weft::rank());
      if (mine[i].kind() == weft::device_kind::cuda) {
        ++cuda;
      } else {
        EXPECT_EQ(cuda, 0) << "a cpu device after a cuda device";
      }
    }
    EXPECT_EQ(cuda, gpus);
    EXPECT_EQ(weft::devices(weft::device_kind::cuda).size(), static_cast<std::size_t>(gpus * weft::nranks()));
    EXPECT_EQ(weft::devices(weft::device_kind::cpu).size() + weft::devices(weft::device_kind::cuda).size(), all.size());
  });
}

TEST(CudaDevices, LauncherOnACpuDeviceIsRefused) {
  on_every_rank([] {
    const weft::device cpu = weft::devices(weft::device_kind::cpu).back();
    std::vector<int> out(4);
    expect_error<std::exception>([&] { weft::target(cpu, cuda_test::fill, weft::map_from(out), 1).get(); },
                                        "needs a cuda device");
  });
}

TEST(CudaDevices, SaxpyOnEveryCudaDevice) {
  REQUIRE_GPU();
  on_every_rank([] {
    for (const weft::device& d : cuda_devices()) {
      std::vector<float> x(300'000), y(300'000, 1.0f);  // more than one 1 MiB staging fragment
      std::iota(x.begin(), x.end(), 0.0f);
      weft::target(d, cuda_test::saxpy, 2.0f, weft::map_to(x), weft::map_tofrom(y)).get();
      for (std::size_t i = 0; i < y.size(); i += 997) ASSERT_EQ(y[i], 1.0f + 2.0f * static_cast<float>(i));
    }
  });
}

TEST(CudaDevices, CopiesBetweenEveryPairOfDevices) {
  REQUIRE_GPU();
  on_every_rank([] {
    if (weft::rank() != 0) return;
    const auto all = weft::devices();
    std::vector<int> host(800'000);
    std::iota(host.begin(), host.end(), 7);
    for (const auto& a : all)
      for (const auto& b : all) {
        auto from = weft::allocate<int>(a, host.size()).get();
        auto to = weft::allocate<int>(b, host.size()).get();
        weft::copy(from, 0, std::span<const int>(host)).get();
        weft::copy(to, 0, from, 0, host.size()).get();
        std::vector<int> back(host.size());
        weft::copy(std::span<int>(back), to, 0).get();
        ASSERT_EQ(back, host) << a.id() << " -> " << b.id();
        weft::deallocate(from).get();
        weft::deallocate(to).get();
      }
  });
}

TEST(CudaDevices, PresentDataStaysOnTheGpu) {
  REQUIRE_GPU();
  on_every_rank([] {
    const weft::device d = cuda_devices().back();
    std::vector<float> x(1000, 1.0f), y(1000, 0.0f);
    weft::target_enter_data(d, weft::map_to(y)).get();
    weft::future<void> f = weft::make_ready_future();
    for (int k = 0; k < 10; ++k)
      f = weft::target(d, cuda_test::saxpy, 1.0f, weft::map_to(x), weft::map_tofrom(y), std::move(f));
    f.get();
    EXPECT_EQ(y[0], 0.0f);  // not copied back yet
    weft::target_exit_data(d, weft::map_from(y)).get();
    for (float v : y) ASSERT_EQ(v, 10.0f);
  });
}

TEST(CudaDevices, BufferOfAnotherRanksDeviceIsFetched) {
  REQUIRE_GPU();
  on_every_rank([] {
    if (weft::rank() != 0) return;
    const weft::device gpu = cuda_devices().front();
    const weft::device far = weft::devices_of(weft::nranks() - 1).front();
    std::vector<float> x(5000, 3.0f), y(5000, 1.0f);
    auto xb = weft::allocate<float>(far, x.size()).get();
    weft::copy(xb, 0, std::span<const float>(x)).get();
    weft::target(gpu, cuda_test::saxpy, 2.0f, xb, weft::map_tofrom(y)).get();
    for (float v : y) ASSERT_EQ(v, 7.0f);
    weft::deallocate(xb).get();
  });
}

TEST(CudaDevices, HostKernelOnACudaDeviceIsRefused) {
  REQUIRE_GPU();
  on_every_rank([] {
    std::vector<int> out(4);
    expect_error<std::exception>(
        [&] { weft::target(cuda_devices().back(), host_kernel, weft::map_from(out)).get(); }, "runs launchers");
  });
}

TEST(CudaDevices, LaunchErrorNamesTheDeviceAndItsRank) {
  REQUIRE_GPU();
  on_every_rank([] {
    const weft::device d = cuda_devices().back();
    std::vector<int> out(4);
    expect_error<std::exception>([&] { weft::target(d, cuda_test::bad_launch, weft::map_from(out)).get(); },
                                     "kernel failed on " + weft::detail::describe_device(d.id()));
    // The device keeps working.
    weft::target(d, cuda_test::fill, weft::map_from(out), 2).get();
    EXPECT_EQ(out[3], 2003);
  });
}

TEST(CudaDevices, LongKernelDoesNotBlockTransfers) {
  REQUIRE_GPU();
  on_every_rank([] {
    // The kernel spins until a host -> device copy to its own flag has
    // landed: were copies queued behind kernels, it would give up.
    const weft::device d = cuda_devices().back();
    auto flag = weft::allocate<int>(d, 2).get();
    const std::vector<int> zero{0, 0}, one{1};
    weft::copy(flag, 0, std::span<const int>(zero)).get();
    auto waiting = weft::target(d, cuda_test::wait_for_flag, flag);
    weft::copy(flag, 0, std::span<const int>(one)).get();
    waiting.get();
    std::vector<int> seen(2);
    weft::copy(std::span<int>(seen), flag, 0).get();
    EXPECT_EQ(seen[1], 1) << "the kernel gave up waiting for the copy";
    weft::deallocate(flag).get();
  });
}

}  // namespace
