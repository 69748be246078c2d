// A program whose rank 1 fails in the way argv[1] names, for the tests that
// check a failing rank ends the whole job (on every backend) with a message
// naming the rank and a non-zero exit, instead of leaving the others hanging.
// Two modes send rank 1 a malformed message through the runtime's internal
// send path (what a foreign or corrupted sender would deliver): the receiver
// must detect it and end the job naming the sender.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "am/rank_comm.hpp"
#include "weft/weft.hpp"

namespace {
/// Sends rank 1 a message for handler id `handler` with a `header_bytes`-byte
/// protocol header and no body.
void send_malformed(std::uint8_t handler, std::size_t header_bytes) {
  struct short_header {
    char bytes[3];
  };
  struct call_sized_header {
    std::uint64_t reply_token;
  };
  auto& comm = weft::detail::current_comm();
  const auto h = static_cast<weft::detail::am_handler>(handler);
  if (header_bytes == sizeof(short_header))
    weft::detail::send_am(comm, 1, h, short_header{{1, 2, 3}});
  else
    weft::detail::send_am(comm, 1, h, call_sized_header{0});
}
}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "throw_main";
  return weft::run(argc, argv, [mode] {
    if (weft::rank() == 1) {
      if (std::strcmp(mode, "throw_main") == 0) throw std::runtime_error("rank one gives up");
      if (std::strcmp(mode, "abort") == 0) std::abort();
      if (std::strcmp(mode, "kill") == 0) std::raise(SIGKILL);
    }
    if (weft::rank() == 0) {
      if (std::strcmp(mode, "unknown_handler") == 0) send_malformed(250, 8);
      if (std::strcmp(mode, "truncated_call") == 0) send_malformed(1, 3);  // a call's header is 8 bytes
    }
    if (std::strcmp(mode, "throw_posted") == 0 && weft::rank() == 0)
      weft::post_at(1, [] { throw std::logic_error("posted call failed"); });
    weft::barrier();  // the other ranks would wait here forever for rank 1
    weft::barrier();
  });
}
