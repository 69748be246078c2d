// forkjoin's --weft: options. Registered with the runtime's option table at
// load time (runtime/option_registry.hpp); read once, at the first use of
// fj::options() (state.cpp).
#pragma once
#include <string>

namespace weft::detail::fj {

struct forkjoin_option_values {
  // Whether forks and joins check for held checkouts and captured stack
  // addresses ("auto": in builds without NDEBUG).
  std::string checks = "auto";  // auto | on | off
  // Remote victims are stolen from by one-sided operations where the heap
  // has passive ones (false: by message, to compare the two paths).
  bool steal_rdma = true;
};

/// The values the last weft::init parsed (the defaults before one).
const forkjoin_option_values& forkjoin_options() noexcept;

}  // namespace weft::detail::fj
