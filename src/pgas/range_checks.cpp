// The bounds checks every put, get, atomic and checkout passes on the
// origin (docs/PGAS.md "Errors"): the target rank exists and the bytes lie
// inside its heap. Each is a few compares on the hot path; the messages are
// built only when a check fails, and end the job.
#include <cstdint>
#include <string>

#include "pgas/state.hpp"
#include "rma/range_text.hpp"
#include "weft/pgas.hpp"

namespace weft::pgas::detail {

namespace {

std::string heap_size_of(int rank) {
  return "the heap of rank " + std::to_string(rank) + " has " + std::to_string(process().segment) + " bytes";
}

std::string from_to(const char* op, int origin, int rank) {
  return std::string(op) + " from rank " + std::to_string(origin) + " to rank " + std::to_string(rank);
}

}  // namespace

void check_range(const char* op, int origin, int rank, std::uint64_t offset, std::size_t bytes) {
  const process_pgas& p = process();
  const bool no_rank = rank < 0 || rank >= p.nranks;
  // Written so that nothing wraps: offset + bytes may exceed 2^64 - 1.
  if (!no_rank && offset <= p.segment && bytes <= p.segment - offset) [[likely]]
    return;
  const std::string what = from_to(op, origin, rank) + ", heap bytes " + weft::rma::detail::range_text(offset, bytes);
  if (no_rank)
    fail(what + ": rank " + std::to_string(rank) + " does not exist (" + std::to_string(p.nranks) + " ranks)");
  fail(what + ": out of bounds, " + heap_size_of(rank));
}

}  // namespace weft::pgas::detail

namespace weft::detail::pgas {

using namespace weft::pgas::detail;

std::byte* checked_address(const char* op, int rank, std::uint64_t offset, std::size_t bytes) {
  const process_pgas& p = process();
  if (rank < 0 || rank >= p.nranks || offset > p.segment || bytes > p.segment - offset) [[unlikely]]
    check_range(op, this_rank(), rank, offset, bytes);  // ends the job
  return view(p, rank, offset);
}

void too_many_bytes(const char* op, int rank, std::uint64_t offset, std::size_t count, std::size_t element_bytes) {
  fail(from_to(op, this_rank(), rank) + " at heap offset " + std::to_string(offset) + ": " + std::to_string(count) +
       " elements of " + std::to_string(element_bytes) + " bytes do not fit in 64 bits; " + heap_size_of(rank));
}

void check_strided(const char* op, int rank, std::uint64_t offset, std::ptrdiff_t stride, std::size_t block,
                   std::size_t count, std::size_t element_bytes) {
  if (count == 0) return;
  std::size_t block_bytes = 0;
  if (__builtin_mul_overflow(block, element_bytes, &block_bytes))
    too_many_bytes(op, rank, offset, block, element_bytes);
  // The footprint [lowest, end): from the lowest block's start to the end
  // of the highest block, whatever the stride's sign.
  std::int64_t distance = 0;  // bytes from the first block's start to the last's
  std::uint64_t lowest = offset, highest = offset, end = 0;
  const char* beyond = nullptr;  // where the footprint would reach, if it leaves 64 bits
  if (__builtin_mul_overflow(count - 1, stride, &distance) ||
      __builtin_mul_overflow(distance, element_bytes, &distance))
    beyond = stride < 0 ? "below heap offset 0" : "past 2^64";
  else if (distance < 0 && __builtin_sub_overflow(offset, -static_cast<std::uint64_t>(distance), &lowest))
    beyond = "below heap offset 0";
  else if ((distance > 0 && __builtin_add_overflow(offset, static_cast<std::uint64_t>(distance), &highest)) ||
           __builtin_add_overflow(highest, block_bytes, &end))
    beyond = "past 2^64";
  if (beyond != nullptr)
    fail(from_to(op, this_rank(), rank) + " at heap offset " + std::to_string(offset) + ": " + std::to_string(count) +
         " blocks of " + std::to_string(block_bytes) + " bytes, " + std::to_string(stride) + " elements of " +
         std::to_string(element_bytes) + " bytes apart, reach " + beyond + "; " + heap_size_of(rank));
  check_range(op, this_rank(), rank, lowest, end - lowest);
}

}  // namespace weft::detail::pgas
