// Internal: --weft:trace for the whole job: starting the recorder, aligning
// the ranks' clocks, and gathering the ranks' events into one file.
#pragma once

namespace weft::detail {

struct process_runtime;

/// Starts the recorder when --weft:trace names a file (before the workers
/// start; names the calling main thread's row).
void start_trace(process_runtime& rt);
/// In a job of several processes, after the workers started: waits until
/// every process records (a job-wide sum every process joins, traced or
/// not), then rank 0 measures every other process's clock against its own
/// (the ranks of one process share a clock).
void sync_trace_clocks(process_runtime& rt);
/// After the workers stopped: writes this process's part; the process of
/// rank 0 merges every part into the file.
void finish_trace(process_runtime& rt);
/// From a failure path: writes this process's part, best effort (the parts
/// of a failed job stay unmerged; tools/trace merge joins them).
void write_trace_after_failure() noexcept;

}  // namespace weft::detail
