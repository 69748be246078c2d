// A program whose rank 1 fails in the way argv[1] names, for the tests that
// check a failing rank ends the whole job (on every backend) with a message
// naming the rank and a non-zero exit, instead of leaving the others hanging.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "weft/weft.hpp"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "throw_main";
  return weft::run(argc, argv, [mode] {
    if (weft::rank() == 1) {
      if (std::strcmp(mode, "throw_main") == 0) throw std::runtime_error("rank one gives up");
      if (std::strcmp(mode, "abort") == 0) std::abort();
      if (std::strcmp(mode, "kill") == 0) std::raise(SIGKILL);
    }
    if (std::strcmp(mode, "throw_posted") == 0 && weft::rank() == 0)
      weft::post_at(1, [] { throw std::logic_error("posted call failed"); });
    weft::barrier();  // the other ranks would wait here forever for rank 1
    weft::barrier();
  });
}
