// weft — the exceptions weft throws for its users to catch.
//
// @code
//   // given: int parse(std::string); std::string text;
//   try {
//     int v = weft::async_at(1, parse, text).get();
//   } catch (const weft::remote_error& e) {     // parse threw on rank 1
//     std::printf("%s: %s\n", e.remote_type().c_str(), e.what());
//   }
// @endcode
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace weft {

/// Thrown by get() on a future whose promise was destroyed unsatisfied, or
/// by misuse (get on an empty future, setting a promise twice).
class future_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Thrown by the reader on truncated or corrupt input, and by the writer on a
/// value it cannot encode (a valueless variant).
class serialization_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An invalid, corrupt or foreign remote-call id (or a callable that cannot
/// be called remotely, detected at run time on the sending side).
class protocol_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The callee threw: what() is the original exception's what(), and
/// remote_type() the (demangled) type of the exception thrown on the callee.
class remote_error : public std::runtime_error {
 public:
  remote_error(std::string type, const std::string& what)
      : std::runtime_error(what), type_(std::move(type)) {}
  const std::string& remote_type() const noexcept { return type_; }

 private:
  std::string type_;
};

}  // namespace weft
