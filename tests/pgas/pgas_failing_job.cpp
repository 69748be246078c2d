// A program whose ranks misuse the pgas layer as argv[1] says, for the
// tests that check such misuse ends the whole job (non-zero exit) with a
// message naming the ranks and the sizes, on both backends.
#include <cstdint>
#include <cstring>

#include "weft/weft.hpp"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "put_out_of_bounds";
  return weft::run(argc, argv, [mode] {
    auto mode_is = [mode](const char* m) { return std::strcmp(mode, m) == 0; };
    const int me = weft::rank();
    auto block = weft::allocate_symmetric<std::int64_t>(8);
    // Collective, so only in the mode that needs it (the heap usage others report stays the same).
    auto big = mode_is("checkout_too_large") ? weft::allocate_symmetric<char>(128 * 1024) : block.reinterpret<char>();
    weft::barrier();
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
    if (mode_is("symmetric_size_mismatch")) (void)weft::allocate_symmetric<char>(64 + static_cast<std::size_t>(me));
    weft::barrier();  // the other ranks would wait here forever for rank 0
    weft::barrier();
  });
}
