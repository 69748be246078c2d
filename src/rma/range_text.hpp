// Internal: how error messages of the rma and pgas layers write a byte
// range. A range whose end does not fit in 64 bits is written as
// "[offset, offset + bytes)", so that the message shows the size that was
// asked for rather than an end that wrapped around below the start.
#pragma once
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>

namespace weft::rma::detail {

/// Whether [offset, offset + bytes) ends past the largest 64-bit offset.
inline bool range_wraps(std::size_t offset, std::size_t bytes) noexcept {
  return bytes > std::numeric_limits<std::size_t>::max() - offset;
}

/// "[64, 128)", or "[64, 64 + 18446744073709551615)"; snprintf's result.
inline int format_range(char* buf, std::size_t n, std::size_t offset, std::size_t bytes) noexcept {
  if (range_wraps(offset, bytes)) return std::snprintf(buf, n, "[%zu, %zu + %zu)", offset, offset, bytes);
  return std::snprintf(buf, n, "[%zu, %zu)", offset, offset + bytes);
}

inline std::string range_text(std::size_t offset, std::size_t bytes) {
  char buf[80];
  format_range(buf, sizeof buf, offset, bytes);
  return buf;
}

}  // namespace weft::rma::detail
