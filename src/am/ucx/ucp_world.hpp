// Internal: the UCP objects of one rank of the ucx backend: its context
// (active messages, RMA, 64-bit atomics), its worker, and an endpoint to
// every rank (created on first use from the worker addresses all ranks
// exchanged at start). The worker runs in UCS_THREAD_MODE_SERIALIZED: every
// UCP call is made by the thread holding `lock` (senders queue, idle
// workers and one-sided callers take turns), as the mpi backend does with
// MPI.
#pragma once
#include <cstddef>
#include <vector>

#include <ucp/api/ucp.h>

#include "am/ucx/ucx_bootstrap.hpp"
#include "sched/spin_mutex.hpp"

namespace weft::detail {

class ucp_world {
 public:
  /// Creates the context and the worker.
  explicit ucp_world(mpi_bootstrap& boot);
  ~ucp_world();
  ucp_world(const ucp_world&) = delete;
  ucp_world& operator=(const ucp_world&) = delete;

  ucp_context_h context() const noexcept { return context_; }
  ucp_worker_h worker() const noexcept { return worker_; }
  /// Exchanges the worker addresses (collective). Other ranks may send to
  /// this one from then on: its active-message handlers are set before.
  void connect();
  /// The endpoint to `rank` (created on first use). With `lock` held.
  ucp_ep_h ep(int rank) {
    const ucp_ep_h e = eps_[static_cast<std::size_t>(rank)];
    return e != nullptr ? e : connect_to(rank);
  }
  /// Waits for `request` (a ucp_*_nbx result) to complete, taking `lock`
  /// for each progress call and dropping it between them (other threads
  /// send and progress meanwhile), then frees it. `lock` not held.
  /// `what` names the operation in the message that ends the job when it
  /// failed.
  void wait(ucs_status_ptr_t request, const char* what);
  /// Closes every endpoint (flushing; with `lock` not held).
  void close_endpoints();

  spin_mutex lock;  // held around every UCP call

 private:
  ucp_ep_h connect_to(int rank);

  mpi_bootstrap& boot_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::vector<std::vector<std::byte>> addresses_;  // by rank: its worker address
  std::vector<ucp_ep_h> eps_;                      // by rank: null until first use
};

/// Ends the job with a one-line message naming the failed UCX call.
[[noreturn]] void ucx_fail(const char* what, ucs_status_t status);

}  // namespace weft::detail
