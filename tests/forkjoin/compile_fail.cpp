// Arguments and captures that cannot travel to another rank must not
// compile (ctest compiles this with -DCASE=n and expects the message).
#include <string>
#include <vector>

#include "weft/forkjoin.hpp"

long twice(long x) { return 2 * x; }

void cases() {
#if CASE == 1  // a raw pointer argument
  long x = 1;
  weft::spawn([](long* p) { return *p; }, &x);
#elif CASE == 2  // a capture that is not trivially copyable
  std::vector<int> v{1, 2};
  weft::parallel_invoke([] { return 0; }, [v] { return v.size(); });
#elif CASE == 3  // std::ref
  long x = 1;
  weft::spawn([](long& r) { return r; }, std::ref(x));
#elif CASE == 4  // a std::string argument
  weft::spawn([](std::string s) { return s.size(); }, std::string("no"));
#else  // what is allowed: function pointers, values, global pointers
  weft::spawn(twice, 21L);
  auto g = weft::allocate<long>(4);
  weft::spawn([g](long k) { return weft::make_checkout(g, 4, weft::checkout_mode::read)[0] + k; }, 1L);
#endif
}
