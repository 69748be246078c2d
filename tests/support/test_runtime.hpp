// Test helper: a weft runtime for the duration of one test, configured with
// --weft: options as a user would pass them.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace weft::test {

class scoped_runtime {
 public:
  explicit scoped_runtime(std::initializer_list<const char*> opts = {}) {
    storage_.push_back("test");
    for (const char* o : opts) storage_.push_back(o);
    for (auto& s : storage_) argv_.push_back(s.data());
    argv_.push_back(nullptr);
    int argc = static_cast<int>(storage_.size());
    weft::init(argc, argv_.data());
  }
  ~scoped_runtime() { weft::finalize(); }
  scoped_runtime(const scoped_runtime&) = delete;
  scoped_runtime& operator=(const scoped_runtime&) = delete;

 private:
  std::vector<std::string> storage_;
  std::vector<char*> argv_;
};

}  // namespace weft::test
