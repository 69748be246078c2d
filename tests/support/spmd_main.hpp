// Test helper for multi-rank tests: run a body on every rank with weft::run.
// The number of ranks comes from outside — WEFT_RANKS for the smp backend,
// or mpiexec -n for the mpi backend — so one binary serves both.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace weft::test {

template <class F>
void on_every_rank(F&& body) {
  std::vector<std::string> args = {"dist_test"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = 1;
  int rc = weft::run(argc, argv.data(), [&] { body(); });
  EXPECT_EQ(rc, 0);
}

}  // namespace weft::test
