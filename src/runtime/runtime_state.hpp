// Internal: what the process-wide runtime holds, shared by the runtime and
// the communication layers.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "am/message.hpp"
#include "am/rank_comm.hpp"
#include "runtime/options.hpp"
#include "sched/scheduler.hpp"

namespace weft::detail {

struct process_runtime {
  runtime_options opts;
  std::string backend = "smp";
  int world_size = 1;
  int first_rank = 0;                                // global rank of local[0]
  std::vector<std::unique_ptr<scheduler>> local;     // this process's ranks
  std::vector<std::unique_ptr<rank_comm>> comms;     // one per local rank
  std::vector<std::unique_ptr<am_transport>> transports;
  std::shared_ptr<void> backend_state;               // the backend's own objects
  std::function<void(int)> abort_job;                // ends every rank (mpi: MPI_Abort)
  std::function<void()> shutdown;                    // backend teardown after workers stop
  std::vector<std::thread> progress_threads;         // one per transport whose drive has a thread (progress_drive.hpp)
  std::atomic<bool> stop_progress{false};
};

process_runtime* runtime_state() noexcept;

/// Picks the backend from the options and environment, creates the local
/// ranks' schedulers and (for several ranks) the transport.
void start_backend(process_runtime& rt);
/// Waits for global quiescence, stops the schedulers, tears the backend down.
void stop_backend(process_runtime& rt);

}  // namespace weft::detail
