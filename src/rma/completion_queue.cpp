// completion_queue: a mutex-protected FIFO. Producers are progress handlers
// (short critical sections, no waiting); the size is mirrored in an atomic so
// that polling an empty queue — the common case in a polling loop — takes no
// lock. A task in wait() parks on a promise the next push fulfils, so it
// costs nothing while it waits and its worker runs other tasks.
#include <optional>
#include <utility>

#include "weft/rma.hpp"

namespace weft::rma {

bool completion_queue::poll(completion& out) {
  if (size_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard lock(mutex_);
  if (entries_.empty()) return false;
  out = entries_.front();
  entries_.pop_front();
  size_.store(entries_.size(), std::memory_order_release);
  return true;
}

completion completion_queue::wait() {
  completion c;
  for (;;) {
    if (poll(c)) return c;
    future<void> woken;
    {
      std::lock_guard lock(mutex_);
      if (!entries_.empty()) continue;  // arrived since poll()
      waiters_.emplace_back();
      woken = waiters_.back().get_future();
    }
    woken.get();  // another consumer may take the entry first: then wait again
  }
}

void completion_queue::push(const completion& c) {
  std::optional<promise<void>> wake;
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(c);
    size_.store(entries_.size(), std::memory_order_release);
    if (!waiters_.empty()) {
      wake.emplace(std::move(waiters_.front()));
      waiters_.pop_front();
    }
  }
  if (wake) wake->set_value();  // outside the lock: it may resume the waiter here
}

}  // namespace weft::rma
