// Test helper: many tasks suspended at the same time.
#pragma once
#include <atomic>
#include <cstddef>
#include <vector>

#include "weft/weft.hpp"

/// Starts `n` tasks that each wait on one promise; once all of them wait,
/// calls `while_waiting()`, then releases them and waits for them to end.
template <class F>
void suspend_at_once(long n, F&& while_waiting) {
  weft::promise<void> release;
  weft::shared_future<void> released = release.get_future().share();
  std::atomic<long> waiting{0};
  std::vector<weft::future<void>> tasks;
  tasks.reserve(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i)
    tasks.push_back(weft::async([&waiting, released] {
      waiting.fetch_add(1);
      released.get();
    }));
  while (waiting.load() < n) weft::this_task::yield();
  while_waiting();
  release.set_value();
  for (auto& t : tasks) t.get();
}
