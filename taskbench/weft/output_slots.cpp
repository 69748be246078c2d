#include "output_slots.hpp"

namespace taskbench_weft {

output_slots::slot& output_slots::find_or_add(long t, long p) {
  auto [it, added] = slots_.try_emplace(key(t, p));
  if (added) {
    it->second.future = it->second.promise.get_future().share();
    it->second.takes_left = takers_(t, p);
  }
  return it->second;
}

weft::shared_future<buffer> output_slots::take(long t, long p) {
  std::lock_guard hold(lock_);
  slot& s = find_or_add(t, p);
  weft::shared_future<buffer> f = s.future;
  if (--s.takes_left == 0 && s.delivered) slots_.erase(key(t, p));
  return f;
}

void output_slots::deliver(long t, long p, buffer&& value) {
  std::unique_lock hold(lock_);
  slot& s = find_or_add(t, p);
  weft::promise<buffer> fulfil(std::move(s.promise));
  s.delivered = true;
  if (s.takes_left == 0) slots_.erase(key(t, p));  // every consumer holds the future
  hold.unlock();
  // After the last use of this object: this may run a consumer, which may
  // finish the run and destroy what holds it.
  fulfil.set_value(std::move(value));
}

}  // namespace taskbench_weft
