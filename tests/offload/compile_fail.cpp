// Misuse of target tasks and map clauses must not compile (ctest compiles
// this with -DCASE=n and expects the message); case 0, what is allowed,
// must compile. weft/weft.hpp alone: it includes the offload layer.
#include <span>
#include <vector>

#include "weft/weft.hpp"

void cases(const weft::device& d, std::vector<int>& v) {
  [[maybe_unused]] std::span<int> s(v);
  [[maybe_unused]] std::span<const int> cs(v);
#if CASE == 1  // a kernel that returns a value
  weft::target(d, [](std::span<int> x) { return x[0]; }, weft::map_tofrom(s));
#elif CASE == 2  // a launcher (cuda devices) that returns a value
  weft::target(d, [](weft::cuda_stream, std::span<int> x) { return x.size(); }, weft::map_tofrom(s));
#elif CASE == 3  // a const range mapped from the device
  weft::map_from(cs);
#elif CASE == 4  // a const range copied into
  weft::copy(cs, weft::device_buffer<int>{}, 0);
#else  // what is allowed: spans in every clause, vectors and spans in copies
  weft::target(d, [](std::span<const int>, std::span<int>) {}, weft::map_to(s), weft::map_tofrom(s.first(2)));
  weft::target(d, [](std::span<const int>, std::span<int>) {}, weft::map_to(cs), weft::map_from(s.first<2>()));
  weft::target_enter_data(d, weft::map_alloc(s), weft::map_to(cs));
  weft::target_exit_data(d, weft::map_release(cs), weft::map_delete(s), weft::map_from(s));
  weft::target_update(d, weft::map_to(cs), weft::map_from(s));
  weft::device_buffer<int> b{};
  weft::copy(b, 0, v);
  weft::copy(b, 0, s);
  weft::copy(b, 0, cs);
  weft::copy(v, b, 0);
  weft::copy(s, b, 0);
#endif
}
