// Fiber stacks carved from large mappings, so that a task suspended at once
// does not cost the process kernel memory mappings of its own (the kernel
// allows vm.max_map_count, 65530 by default, per process).
//
// A stack's guard page, where an overflow faults, is installed without a
// mapping of its own where the kernel can (madvise MADV_GUARD_INSTALL,
// Linux 6.13+). Elsewhere the first stacks get a PROT_NONE page each (two
// mappings a stack, as many as max_map_count / 4 leaves room for); the
// stacks past that share one guard page per chunk, below its lowest stack,
// and carry a canary word just below their own end instead, which the
// scheduler checks whenever the fiber leaves its worker. docs/SCHED.md
// discusses the trade-off.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace weft::detail {

/// The kernel refused the memory for another fiber stack; the message names
/// the limit that was reached and what to change.
struct fiber_stack_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The value of an intact canary word.
inline constexpr std::uint64_t stack_canary_value = 0x5757'c0de'fbad'a11eULL;

struct fiber_stack {
  char* lo = nullptr;               // lowest usable byte
  std::size_t size = 0;             // usable bytes above `lo`
  const char* guard = nullptr;      // the no-access page an overflow faults in first
  std::uint64_t* canary = nullptr;  // below `lo` when no guard page is right there
};

/// Carves stacks of one size from chunks of many, for one worker: the
/// stacks a worker makes lie together, so the canary-guarded stacks of one
/// worker are what an overflow there runs into before the chunk's guard.
class fiber_stack_carver {
 public:
  explicit fiber_stack_carver(std::size_t stack_size) noexcept;
  ~fiber_stack_carver();  // releases the stacks not carved yet
  fiber_stack_carver(const fiber_stack_carver&) = delete;
  fiber_stack_carver& operator=(const fiber_stack_carver&) = delete;
  /// A stack of stack_size() bytes: a released one, or a new one carved
  /// here; throws fiber_stack_error when the kernel refuses the memory.
  fiber_stack take();
  std::size_t stack_size() const noexcept { return stack_size_; }

 private:
  void map_chunk();              // a fresh chunk with its guard pages
  fiber_stack carve() noexcept;  // the next stack of the current chunk

  std::size_t stack_size_;  // rounded up to pages
  char* next_ = nullptr;    // the next slot to carve in the current chunk
  std::size_t left_ = 0;    // slots left to carve in the current chunk
  const char* chunk_guard_ = nullptr;  // the guard page below the chunk's lowest stack
  bool own_guards_ = false;           // the current chunk's stacks each have a guard page
};

/// Gives a stack back for any worker to reuse; its memory is returned to
/// the kernel (the address range stays reserved).
void release_fiber_stack(const fiber_stack& s) noexcept;

}  // namespace weft::detail
