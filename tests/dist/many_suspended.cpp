// Suspends N tasks at once (each waits on one promise), then releases
// them: more than vm.max_map_count / 2 of them once ended the job, when
// every fiber stack was two kernel mappings. Prints the process's mappings
// while they wait (docs/SCHED.md, "Fiber stacks and the kernel's mapping
// limit"):
//
//   many_suspended [N] --weft:threads=1
#include <cstdio>
#include <cstdlib>

#include "suspend_at_once.hpp"
#include "weft/weft.hpp"

namespace {
long mappings() {
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return -1;
  long lines = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) lines += c == '\n';
  std::fclose(f);
  return lines;
}
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [](int args, char** argl) {
    const long n = args > 1 ? std::atol(argl[1]) : 100'000;
    suspend_at_once(n, [n] { std::printf("%ld tasks suspended at once, %ld memory mappings\n", n, mappings()); });
    std::printf("all released\n");
  });
}
