// Internal: what the runtime does with the recorder: start it, name its
// threads, tell it each rank's clock offset, and write the file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace weft::trace {

/// Starts recording, at most `events_per_thread` events per thread (later
/// ones are counted as dropped). `process_rank`: the rank of threads that
/// belong to no rank. Call before the workers start.
void start(std::size_t events_per_thread, int process_rank);
/// Stops recording (after the workers stopped).
void stop() noexcept;
/// Gives the calling thread's buffer a name (before it records anything).
void name_this_thread(const char* name);

/// How rank `rank`'s clock relates to rank 0's: its CLOCK_MONOTONIC reads
/// `offset_ns` more than rank 0's at the same instant, measured over a
/// round trip of `rtt_ns`. Timestamps of that rank are shifted by -offset
/// when written. Ranks never set read 0.
void set_clock_offset(int rank, std::int64_t offset_ns, std::int64_t rtt_ns);

/// The part file of the ranks in this process: PATH.rank-R.part, R the
/// first of them.
std::string part_path(const std::string& path, int rank);
/// The ranks of this process and each one's worker count: every worker gets
/// its row, also one that recorded nothing. Set before writing.
void set_local_ranks(std::vector<std::pair<int, int>> rank_workers);
/// Writes every event recorded in this process to `part` (written under a
/// temporary name and renamed, so a reader never sees half a part).
/// Returns false (with a message on stderr) when it cannot.
bool write_part(const std::string& part, int world_size, const std::string& backend) noexcept;
/// Merges the parts into `path` and removes them, waiting up to
/// `timeout_s` seconds for parts still being written. Returns false (with
/// a message on stderr) when one never came.
bool merge_parts(const std::string& path, const std::vector<std::string>& parts, double timeout_s) noexcept;

}  // namespace weft::trace
