#include "sched/fiber_stack.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define WEFT_ASAN 1
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102  // Linux 6.13; older headers lack it
#endif

namespace weft::detail {

namespace {
std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

/// A chunk maps about this much address space (at least one stack).
constexpr std::size_t chunk_bytes = 16u << 20;
constexpr std::size_t max_stacks_per_chunk = 256;

std::atomic<std::size_t> stacks_in_use{0};

// ---- how guard pages are made ------------------------------------------------

enum class guard_kind { unknown, installed, own_mapping };
std::atomic<guard_kind> guards{guard_kind::unknown};
/// Stacks that may still get a PROT_NONE guard page (two mappings) of their
/// own, where the kernel cannot install guards without one.
std::atomic<long> own_guards_left{0};

long read_long(const char* path, long fallback) {
  std::ifstream in(path);
  long v = 0;
  return (in >> v) ? v : fallback;
}

/// Decides how guard pages are made, trying MADV_GUARD_INSTALL on `page`.
/// WEFT_FIBER_GUARDS=N makes PROT_NONE guard pages for N stacks instead, as
/// on kernels without guard installation (for tests of that path).
guard_kind decide_guards(char* page) {
  guard_kind k = guards.load(std::memory_order_acquire);
  if (k != guard_kind::unknown) return k;
  long budget = read_long("/proc/sys/vm/max_map_count", 65530) / 4;
  if (const char* forced = std::getenv("WEFT_FIBER_GUARDS"); forced != nullptr && *forced != '\0') {
    budget = std::atol(forced);
    k = guard_kind::own_mapping;
  } else {
    k = madvise(page, page_size(), MADV_GUARD_INSTALL) == 0 ? guard_kind::installed : guard_kind::own_mapping;
  }
  guard_kind expected = guard_kind::unknown;
  if (guards.compare_exchange_strong(expected, k, std::memory_order_acq_rel)) {
    own_guards_left.store(budget, std::memory_order_relaxed);
    return k;
  }
  return expected;
}

// ---- the job-ending message --------------------------------------------------

std::size_t mappings_of_this_process() {
  std::ifstream in("/proc/self/maps");
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

/// Which limit the kernel enforced, and what to change.
std::string limit_reached() {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    return "the address-space limit (ulimit -v) is " + std::to_string(as.rlim_cur >> 20) +
           " MiB; raise it, lower --weft:stack or suspend fewer tasks at once";
  const long max_maps = read_long("/proc/sys/vm/max_map_count", -1);
  const std::size_t maps = mappings_of_this_process();
  if (max_maps > 0 && maps + 64 >= static_cast<std::size_t>(max_maps))
    return "this process has " + std::to_string(maps) + " memory mappings and vm.max_map_count = " +
           std::to_string(max_maps) +
           " limits them per process; raise it (sysctl -w vm.max_map_count=N) or suspend fewer tasks at once";
  return "the kernel commits no more memory (vm.overcommit_memory = " +
         std::to_string(read_long("/proc/sys/vm/overcommit_memory", -1)) +
         "); lower --weft:stack or suspend fewer tasks at once";
}

[[noreturn]] void refused(const char* call, int err, std::size_t stack_size) {
  throw fiber_stack_error(std::string("cannot map a stack for another fiber (") + call + ": " + std::strerror(err) +
                          ") with " + std::to_string(stacks_in_use.load()) + " fiber stacks of " +
                          std::to_string(stack_size / 1024) +
                          " KiB in this process (each task suspended at once holds one): " + limit_reached());
}

// ---- released stacks -----------------------------------------------------------

std::mutex released_mutex;
std::vector<fiber_stack>& released() {
  static auto* v = new std::vector<fiber_stack>;  // never destroyed: workers may outlive statics
  return *v;
}

bool take_released(std::size_t size, fiber_stack& out) {
  std::lock_guard lock(released_mutex);
  auto& v = released();
  // Newest first; a process uses one stack size, so the scan is short.
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    if (it->size == size) {
      out = *it;
      v.erase(std::next(it).base());
      return true;
    }
  return false;
}

void keep_released(const fiber_stack& s) noexcept {
  std::lock_guard lock(released_mutex);
  try {
    released().push_back(s);
  } catch (...) {  // no memory for the record: the range stays reserved, unused
  }
}
}  // namespace

fiber_stack_carver::fiber_stack_carver(std::size_t stack_size) noexcept
    : stack_size_((stack_size + page_size() - 1) / page_size() * page_size()) {}

fiber_stack_carver::~fiber_stack_carver() {
  // What this worker did not carve goes to the next runtime's workers.
  while (left_ != 0) keep_released(carve());
}

fiber_stack fiber_stack_carver::take() {
  fiber_stack s;
  if (!take_released(stack_size_, s)) {
    if (left_ == 0) map_chunk();
    s = carve();
  }
  stacks_in_use.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void fiber_stack_carver::map_chunk() {
  const std::size_t page = page_size();
  const std::size_t slot = page + stack_size_;  // [guard page][stack]
  const std::size_t n = std::clamp<std::size_t>(chunk_bytes / slot, 1, max_stacks_per_chunk);
  void* base = mmap(nullptr, n * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) refused("mmap", errno, stack_size_);
  char* b = static_cast<char*>(base);
  const guard_kind k = decide_guards(b);
  // Where guards need mappings of their own, a chunk's stacks either all
  // have one (while the budget lasts) or share the one below the chunk.
  own_guards_ = k == guard_kind::installed ||
                own_guards_left.fetch_sub(static_cast<long>(n), std::memory_order_relaxed) >= static_cast<long>(n);
  for (std::size_t i = 0; i < n; ++i) {
    char* g = b + i * slot;
    if (i > 0 && !own_guards_) continue;
    const int rc = k == guard_kind::installed ? madvise(g, page, MADV_GUARD_INSTALL) : mprotect(g, page, PROT_NONE);
    if (rc != 0) {
      const int err = errno;
      munmap(base, n * slot);
      refused(k == guard_kind::installed ? "madvise" : "mprotect", err, stack_size_);
    }
  }
  // Carved from the top down: an overflow without end runs through the
  // stacks carved after its own, not yet or least used, to the guard.
  next_ = b + (n - 1) * slot;
  left_ = n;
  chunk_guard_ = b;
}

fiber_stack fiber_stack_carver::carve() noexcept {
  fiber_stack s;
  s.lo = next_ + page_size();
  s.size = stack_size_;
  const bool guard_here = own_guards_ || next_ == chunk_guard_;
  s.guard = guard_here ? next_ : chunk_guard_;
  if (!guard_here) {
    s.canary = reinterpret_cast<std::uint64_t*>(s.lo) - 1;
    *s.canary = stack_canary_value;
  }
  next_ -= page_size() + stack_size_;
  --left_;
  return s;
}

void release_fiber_stack(const fiber_stack& s) noexcept {
#if WEFT_ASAN
  // The stack's shadow still holds the redzones of frames that were never
  // unwound; whoever reuses these addresses must not inherit them.
  __asan_unpoison_memory_region(s.lo, s.size);
#endif
  madvise(s.lo, s.size, MADV_DONTNEED);  // the memory goes back; the range stays ours
  stacks_in_use.fetch_sub(1, std::memory_order_relaxed);
  keep_released(s);
}

}  // namespace weft::detail
