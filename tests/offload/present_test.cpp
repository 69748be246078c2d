// OpenMP data directives: the present table, reference counts, `always`,
// target_update, and overlapping ranges of another extent.
#include <gtest/gtest.h>

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

void add_one(std::span<int> v) {
  for (auto& x : v) x += 1;
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

}  // namespace
