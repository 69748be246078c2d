// A rank that throws must end the whole job with a message naming it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

#include "spmd_main.hpp"

namespace {
void ranks_where_one_throws() {
  setenv("WEFT_RANKS", "3", 1);
  weft::test::on_every_rank([] {
    if (weft::rank() == 1) throw std::runtime_error("rank one gives up");
    weft::barrier();  // the others would wait forever for rank 1
  });
}
void remote_call_throws_in_post() {
  setenv("WEFT_RANKS", "2", 1);
  weft::test::on_every_rank([] {
    if (weft::rank() == 0) weft::post_at(1, [] { throw std::logic_error("posted call failed"); });
    weft::barrier();
    weft::barrier();
  });
}
}  // namespace

TEST(FailureDeathTest, ThrowingRankEndsJob) {
  EXPECT_EXIT(ranks_where_one_throws(), ::testing::ExitedWithCode(1),
              "rank 1: uncaught exception in the main task: rank one gives up");
}

TEST(FailureDeathTest, ThrowingPostedCallEndsJob) {
  EXPECT_EXIT(remote_call_throws_in_post(), ::testing::ExitedWithCode(1),
              "rank 1: uncaught exception in a call posted by rank 0: posted call failed");
}
