// Test helper: a kernel that must still be running while the test does
// something waits at a gate, which the test opens afterwards. The gate lives
// on the kernel's rank and the test reaches it with a remote call (smp ranks
// share one process, mpi ranks do not), so "the kernel is still running
// then" is certain, not likely. Each launching rank has a gate of its own.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>

#include "weft/am.hpp"
#include "weft/runtime.hpp"
#include "weft/this_task.hpp"

namespace offload_test {

inline std::array<std::atomic<bool>, 64> gates{};

/// The calling rank's gate.
inline std::size_t my_gate() { return static_cast<std::size_t>(weft::rank()); }

inline void set_gate(std::size_t gate, bool open) { gates.at(gate).store(open, std::memory_order_release); }

/// On the kernel's rank: returns once `gate` is open, yielding to the rank's
/// other tasks meanwhile. A gate still closed after a minute means the test
/// is broken: it throws, so the test fails with a message instead of hanging.
inline void wait_at_gate(std::size_t gate) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!gates.at(gate).load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("offload test: the gate stayed closed for a minute");
    weft::this_task::yield();
  }
}

/// Closes (before launching the kernel) or opens the gate on `rank`.
inline void close_gate(int rank, std::size_t gate) { weft::async_at(rank, &set_gate, gate, false).get(); }
inline void open_gate(int rank, std::size_t gate) { weft::async_at(rank, &set_gate, gate, true).get(); }

}  // namespace offload_test
