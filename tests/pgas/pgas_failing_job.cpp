// A program whose ranks misuse the pgas layer as argv[1] says, for the
// tests that check such misuse ends the whole job (non-zero exit) with a
// message naming the ranks and the sizes, on both backends.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

#include "weft/weft.hpp"

namespace {

// The tests run these modes with --weft:segment=1M.
constexpr std::uint64_t heap_bytes = std::uint64_t{1} << 20;
constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

/// Rank 0's accesses that reach past the end of rank 1's heap, or whose
/// size wraps around 2^64; none of them may touch memory.
void access_out_of_bounds(const char* mode, weft::global_ptr<std::int64_t> block) {
  auto mode_is = [mode](const char* m) { return std::strcmp(mode, m) == 0; };
  std::int64_t buf[4] = {};
  // The last 4 bytes of rank 1's heap and the 4 after it.
  auto straddling = weft::global_ptr<std::int64_t>::at(1, heap_bytes - 4);
  auto at_end = weft::global_ptr<std::int64_t>::at(1, heap_bytes);
  if (mode_is("get_past_heap_end")) {
    const std::int64_t v = weft::get(straddling).get();
    std::printf("rank 0 read %lld past the end of rank 1's heap\n", static_cast<long long>(v));
  }
  if (mode_is("put_past_heap_end")) weft::put(straddling, std::int64_t{1}).get();
  if (mode_is("get_span_past_heap_end")) weft::get(straddling, std::span<std::int64_t>(buf, 1)).get();
  if (mode_is("atomic_past_heap_end")) weft::atomic_fetch_add(at_end, std::int64_t{1}).get();
  // A byte count that wraps offset + bytes past 2^64 back into the heap
  // ([8, 8 + 2^64 - 1) would be [8, 7)).
  auto byte8 = block.on(1).reinterpret<char>() + 8;
  if (mode_is("get_wrapping_size")) weft::get(byte8, std::span<char>(reinterpret_cast<char*>(buf), size_max)).get();
  if (mode_is("put_wrapping_size"))
    weft::put(byte8, std::span<const char>(reinterpret_cast<const char*>(buf), size_max)).get();
  // The last of three blocks lies past the end: nothing may be written.
  if (mode_is("put_strided_past_heap_end"))
    weft::put_strided(block.on(1), std::ptrdiff_t{1} << 16, buf, 1, 1, 3).get();
  // A stride whose byte distance is 2^64: every block would land on the first.
  if (mode_is("get_strided_wrapping_stride"))
    weft::get_strided(block.on(1), std::ptrdiff_t{1} << 61, buf, 1, 1, 3).get();
  // 2^61 + 1 elements of 8 bytes: the byte count wraps to 8.
  if (mode_is("checkout_wrapping_count"))
    (void)weft::make_checkout(block.on(1), (std::size_t{1} << 61) + 1, weft::checkout_mode::read);
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "put_out_of_bounds";
  return weft::run(argc, argv, [mode] {
    auto mode_is = [mode](const char* m) { return std::strcmp(mode, m) == 0; };
    const int me = weft::rank();
    auto block = weft::allocate_symmetric<std::int64_t>(8);
    // Collective, so only in the mode that needs it (the heap usage others report stays the same).
    auto big = mode_is("checkout_too_large") ? weft::allocate_symmetric<char>(128 * 1024) : block.reinterpret<char>();
    weft::barrier();
    if (me == 0) access_out_of_bounds(mode, block);
    if (me == 0) {
      std::int64_t buf[4] = {};
      auto far = weft::global_ptr<std::int64_t>::at(1, (std::uint64_t{1} << 40));
      if (mode_is("put_out_of_bounds")) weft::put(far, std::span<const std::int64_t>(buf)).get();
      if (mode_is("get_no_such_rank")) weft::get(block.on(7)).get();
      if (mode_is("misaligned_atomic"))
        weft::atomic_fetch_add(weft::global_ptr<std::int64_t>::at(1, block.offset() + 4), std::int64_t{1}).get();
      if (mode_is("double_free")) {
        auto p = weft::allocate<int>(4);
        weft::deallocate(p);
        weft::deallocate(p);
      }
      if (mode_is("local_exhausted")) (void)weft::allocate<char>(std::size_t{1} << 40);
      // Sizes whose byte count wraps (2^61 + 1 int64s) or whose rounding up would.
      if (mode_is("local_count_overflow")) (void)weft::allocate<std::int64_t>((std::size_t{1} << 61) + 1);
      if (mode_is("local_size_max")) (void)weft::allocate<char>(size_max);
      if (mode_is("unlock_not_held")) weft::global_lock::of_rank(1).unlock();
      if (mode_is("destroy_held")) {
        auto l = weft::global_lock::create();
        l.lock();
        l.destroy();
      }
    }
    // Checkouts (run with --weft:cache=always --weft:cache-size=64K --weft:cache-block=4K).
    if (me == 0 && mode_is("checkout_too_large"))
      (void)weft::make_checkout(big.on(1), 128 * 1024, weft::checkout_mode::read);
    if (me == 0 && mode_is("checkout_held_at_release")) {
      auto held = weft::make_checkout(block.on(1), 8, weft::checkout_mode::write);
      weft::cache_release();
    }
    if (me == 0 && mode_is("checkout_held_at_fence")) {
      auto held = weft::make_checkout(block.on(1), 8, weft::checkout_mode::read);
      weft::fence();
    }
    if (me == 0 && mode_is("checkout_held_at_end")) {
      static weft::checkout<std::int64_t> never_checked_in;
      never_checked_in = weft::make_checkout(block.on(1), 8, weft::checkout_mode::write);
    }
    if (me == 0 && mode_is("dirty_at_end")) weft::make_checkout(block.on(1), 8, weft::checkout_mode::write)[0] = 1;
    if (mode_is("symmetric_exhausted")) (void)weft::allocate_symmetric<char>(std::size_t{1} << 40);
    if (mode_is("symmetric_count_overflow"))
      (void)weft::allocate_symmetric<std::int64_t>((std::size_t{1} << 61) + 1);
    if (mode_is("symmetric_size_max")) (void)weft::allocate_symmetric<char>(size_max);
    if (mode_is("symmetric_size_mismatch")) (void)weft::allocate_symmetric<char>(64 + static_cast<std::size_t>(me));
    weft::barrier();  // the other ranks would wait here forever for rank 0
    weft::barrier();
  });
}
