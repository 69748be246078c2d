// Test helper: an operation must fail with exception type E whose message
// contains `part`.
#pragma once
#include <gtest/gtest.h>

#include <string>

namespace offload_test {

template <class E, class F>
void expect_error(F&& operation, const std::string& part) {
  try {
    operation();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace offload_test
