// A program whose rank 0 makes the rma error argv[1] names, for the tests
// that check such errors end the whole job (non-zero exit) with a message
// naming the ranks, the segment, the offset and the size — on the origin
// when the target is in its process, on the target otherwise.
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "weft/weft.hpp"

namespace rma = weft::rma;

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "put_out_of_bounds";
  return weft::run(argc, argv, [mode] {
    auto mode_is = [mode](const char* m) { return std::strcmp(mode, m) == 0; };
    std::vector<std::byte> mem(64);
    rma::segment seg = rma::register_memory(mem.data(), mem.size());
    if (mode_is("put_deregistered") && weft::rank() == 1) rma::deregister(seg);
    weft::barrier();
    if (weft::rank() == 0) {
      std::byte buf[64] = {};
      if (mode_is("put_out_of_bounds")) rma::put(1, 0, 48, buf, 32).get();
      if (mode_is("get_unknown_segment")) rma::get(1, 5, 0, buf, 8).get();
      if (mode_is("put_deregistered")) rma::put(1, 0, 0, buf, 8).get();
      if (mode_is("put_no_such_rank")) rma::put(7, 0, 0, buf, 8).get();
      if (mode_is("notify_without_queue")) rma::put(1, 0, 0, buf, 8, {.notify = 1}).get();
      // offset + bytes wraps past 2^64: 1024 bytes below it, 2048 bytes long
      // (split into pieces, the second would start at offset 0).
      const std::size_t top = std::numeric_limits<std::size_t>::max();
      if (mode_is("put_wrapping_range")) rma::put(1, 0, top - 1023, buf, 2048).get();
      if (mode_is("get_wrapping_size")) rma::get(1, 0, 8, buf, top).get();
    }
    weft::barrier();  // the other ranks would wait here forever for rank 0
    weft::barrier();
  });
}
