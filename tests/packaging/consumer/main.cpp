#include <weft/weft.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    int v = weft::async([] { return 41; }).get() + 1;
    std::printf("consumer ok %d\n", v);
    return v == 42 ? 0 : 1;
  });
}
