// OpenMP data directives: the present table, reference counts, `always`,
// target_update, overlapping ranges of another extent, and the reference a
// running target task holds on the ranges it maps.
#include <gtest/gtest.h>

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "gate.hpp"
#include "spmd_main.hpp"
#include "weft/offload.hpp"

namespace {

using offload_test::expect_error;
using weft::test::on_every_rank;

void add_one(std::span<int> v) {
  for (auto& x : v) x += 1;
}

/// add_one once the test has opened the calling rank's gate.
void add_one_at_gate(std::span<int> v, std::size_t gate) {
  offload_test::wait_at_gate(gate);
  add_one(v);
}

void fail_at_gate(std::span<int>, std::size_t gate) {
  offload_test::wait_at_gate(gate);
  throw std::runtime_error("failed at the gate");
}

std::size_t bytes_in_use(const weft::device& d) { return weft::detail::device_bytes_in_use(d.id()).get(); }

/// `x` is no longer in `d`'s present table: a map copies both ways for the
/// task alone.
void expect_not_present(const weft::device& d, std::vector<int>& x) {
  x.assign(x.size(), 100);
  weft::target(d, add_one, weft::map_tofrom(x)).get();
  EXPECT_EQ(x[0], 101) << "the range is still in the present table";
}

weft::device remote_device() { return weft::devices_of((weft::rank() + 1) % weft::nranks()).back(); }

TEST(OffloadPresent, PresentRangeIsNotCopiedAgain) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> x(100, 10);
    weft::target_enter_data(d, weft::map_to(x)).get();
    x.assign(100, 500);  // the device keeps its copy (10s)
    for (int k = 0; k < 3; ++k) weft::target(d, add_one, weft::map_tofrom(x)).get();
    EXPECT_EQ(x[0], 500);  // present: nothing copied back either
    weft::target_update(d, weft::map_from(x)).get();
    EXPECT_EQ(x[0], 13);
    weft::target(d, add_one, weft::map_to(x).always()).get();  // device gets 13 again, then 14
    weft::target_exit_data(d, weft::map_from(x)).get();
    EXPECT_EQ(x[99], 14);
    // No longer present: a map copies both ways for the task alone.
    weft::target(d, add_one, weft::map_tofrom(x)).get();
    EXPECT_EQ(x[99], 15);
  });
}

TEST(OffloadPresent, ReferenceCountsDelayTheCopyBack) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> x(8, 1);
    weft::target_enter_data(d, weft::map_to(x)).get();
    weft::target_enter_data(d, weft::map_to(x)).get();  // count 2, no copy
    weft::target(d, add_one, weft::map_tofrom(x)).get();
    weft::target_exit_data(d, weft::map_from(x)).get();  // count 1: stays, no copy
    EXPECT_EQ(x[0], 1);
    weft::target_exit_data(d, weft::map_from(x)).get();  // count 0: copied back, freed
    EXPECT_EQ(x[0], 2);
  });
}

TEST(OffloadPresent, AllocAndUpdateTo) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> x(16, 3);
    weft::target_enter_data(d, weft::map_alloc(x)).get();
    weft::target_update(d, weft::map_to(x)).get();
    weft::target(d, add_one, weft::map_tofrom(x)).get();
    weft::target_exit_data(d, weft::map_from(x)).get();
    EXPECT_EQ(x[5], 4);
  });
}

TEST(OffloadPresent, DeleteDropsEveryReference) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> x(4, 1);
    weft::target_enter_data(d, weft::map_to(x)).get();
    weft::target_enter_data(d, weft::map_to(x)).get();
    weft::target_exit_data(d, weft::map_delete(x)).get();
    x.assign(4, 9);
    weft::target(d, add_one, weft::map_tofrom(x)).get();  // not present any more: copied
    EXPECT_EQ(x[0], 10);
  });
}

TEST(OffloadPresent, OverlapWithAnotherExtentIsAnError) {
  on_every_rank([] {
    const weft::device d = remote_device();
    std::vector<int> x(64, 0);
    weft::target_enter_data(d, weft::map_to(x)).get();
    const std::string where = "present on device " + std::to_string(d.id()) + " (cpu, rank " + std::to_string(d.rank()) + ")";
    expect_error<std::invalid_argument>([&] { weft::target(d, add_one, weft::map_tofrom(x.data() + 8, 8)).get(); },
                                        where + " with a different extent");
    EXPECT_THROW(weft::target_enter_data(d, weft::map_to(x.data(), 65)).get(), std::invalid_argument);
    weft::target_exit_data(d, weft::map_release(x)).get();
    weft::target(d, add_one, weft::map_tofrom(x.data() + 8, 8)).get();  // gone: fine now
    EXPECT_EQ(x[8], 1);
    EXPECT_EQ(x[7], 0);
  });
}

// A target task holds its own reference on each present range it maps:
// whoever drops the last one copies back (if its clause says so) and frees.

TEST(OffloadPresentHolds, ExitDataWhileATargetRunsLeavesTheCopyBackToTheTarget) {
  on_every_rank([] {
    const weft::device d = remote_device();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(d.rank(), gate);
    const std::size_t before = bytes_in_use(d);
    std::vector<int> x(64, 1);
    weft::target_enter_data(d, weft::map_to(x)).get();
    auto running = weft::target(d, add_one_at_gate, weft::map_tofrom(x), gate);
    weft::target_exit_data(d, weft::map_from(x)).get();  // the running task holds x: no copy, no free
    EXPECT_EQ(x[0], 1);
    offload_test::open_gate(d.rank(), gate);
    running.get();
    EXPECT_EQ(x[0], 2) << "the target that dropped the last reference did not copy back";
    EXPECT_EQ(x[63], 2);
    EXPECT_EQ(bytes_in_use(d), before) << "the range's device memory was not freed";
    expect_not_present(d, x);
  });
}

TEST(OffloadPresentHolds, DeleteWhileATargetRunsKeepsItsData) {
  on_every_rank([] {
    const weft::device d = remote_device();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(d.rank(), gate);
    const std::size_t before = bytes_in_use(d);
    std::vector<int> x(64, 1);
    weft::target_enter_data(d, weft::map_to(x)).get();
    weft::target_enter_data(d, weft::map_to(x)).get();
    auto running = weft::target(d, add_one_at_gate, weft::map_tofrom(x), gate);
    weft::target_exit_data(d, weft::map_delete(x)).get();
    // Memory freed by the delete would be handed out again here.
    auto other = weft::allocate<int>(d, x.size()).get();
    const std::vector<int> sevens(x.size(), 7);
    weft::copy(other, 0, std::span<const int>(sevens)).get();
    offload_test::open_gate(d.rank(), gate);
    running.get();  // fails ("not inside a live allocation") if x was freed before the task ran
    EXPECT_EQ(x[0], 2);
    EXPECT_EQ(x[63], 2);
    std::vector<int> o(x.size());
    weft::copy(std::span<int>(o), other, 0).get();
    EXPECT_EQ(o[0], 7) << "the running task wrote into memory that had been freed and reused";
    weft::deallocate(other).get();
    EXPECT_EQ(bytes_in_use(d), before);
    expect_not_present(d, x);
  });
}

TEST(OffloadPresentHolds, ReleaseWhileTargetsRunCopiesBackAfterTheLast) {
  on_every_rank([] {
    const weft::device d = remote_device();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(d.rank(), gate);
    const std::size_t before = bytes_in_use(d);
    std::vector<int> x(16, 1);
    weft::target_enter_data(d, weft::map_to(x)).get();
    // Whichever ends last drops the last reference, after both kernels ran.
    auto first = weft::target(d, add_one_at_gate, weft::map_tofrom(x), gate);
    auto second = weft::target(d, add_one_at_gate, weft::map_tofrom(x), gate);
    weft::target_exit_data(d, weft::map_release(x)).get();
    offload_test::open_gate(d.rank(), gate);
    first.get();
    second.get();
    EXPECT_EQ(x[0], 3);
    EXPECT_EQ(x[15], 3);
    EXPECT_EQ(bytes_in_use(d), before);
  });
}

TEST(OffloadPresentHolds, AFailedTargetDroppingTheLastReferenceFreesWithoutCopying) {
  on_every_rank([] {
    const weft::device d = remote_device();
    const std::size_t gate = offload_test::my_gate();
    offload_test::close_gate(d.rank(), gate);
    const std::size_t before = bytes_in_use(d);
    std::vector<int> x(16, 1);
    weft::target_enter_data(d, weft::map_to(x)).get();
    auto failing = weft::target(d, fail_at_gate, weft::map_tofrom(x), gate);
    weft::target_exit_data(d, weft::map_from(x)).get();
    x.assign(16, 5);
    offload_test::open_gate(d.rank(), gate);
    expect_error<std::exception>([&] { failing.get(); }, "failed at the gate");
    EXPECT_EQ(x[0], 5);
    EXPECT_EQ(bytes_in_use(d), before);
  });
}

}  // namespace
