// Internal: a set of byte ranges [begin, end) inside one cache block —
// which bytes hold valid data, which were written and must go back. Kept
// sorted, disjoint and with touching ranges merged, so a block written in
// many small pieces still writes back as few puts as possible.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace weft::pgas::detail {

class byte_ranges {
 public:
  struct range {
    std::size_t begin, end;
  };

  void add(std::size_t begin, std::size_t end) {
    if (begin >= end) return;
    // In place (a cache fill or check-in adds at every fork-join steal;
    // building a new vector each time was a malloc and a free each).
    auto first = std::find_if(ranges_.begin(), ranges_.end(), [&](const range& r) { return r.end >= begin; });
    range joined{begin, end};
    auto last = first;
    for (; last != ranges_.end() && last->begin <= joined.end; ++last) {  // overlaps or touches: absorb
      joined.begin = std::min(joined.begin, last->begin);
      joined.end = std::max(joined.end, last->end);
    }
    if (first == last) {
      ranges_.insert(first, joined);
    } else {
      *first = joined;
      ranges_.erase(first + 1, last);
    }
  }

  /// The parts of [begin, end) not in the set, in order.
  std::vector<range> gaps(std::size_t begin, std::size_t end) const {
    std::vector<range> out;
    std::size_t at = begin;
    for (const range& r : ranges_) {
      if (r.end <= at) continue;
      if (r.begin >= end) break;
      if (r.begin > at) out.push_back({at, r.begin});
      at = std::max(at, r.end);
    }
    if (at < end) out.push_back({at, end});
    return out;
  }

  std::size_t bytes() const noexcept {
    std::size_t n = 0;
    for (const range& r : ranges_) n += r.end - r.begin;
    return n;
  }
  const std::vector<range>& items() const noexcept { return ranges_; }
  bool empty() const noexcept { return ranges_.empty(); }
  void clear() noexcept { ranges_.clear(); }

 private:
  std::vector<range> ranges_;
};

}  // namespace weft::pgas::detail
