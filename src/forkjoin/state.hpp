// Internal: the forkjoin layer's per-rank state — its deques, the root_exec
// it is inside, its victims, the cells of spawned futures, the outcomes of
// root tasks, and its steal counters.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <span>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "am/handlers.hpp"
#include "am/rank_comm.hpp"
#include "forkjoin/outcome_board.hpp"
#include "forkjoin/steal_deque.hpp"
#include "sched/spin_mutex.hpp"
#include "weft/errors.hpp"

namespace weft::detail::fj {

/// How a root task ended, kept until that rank's root_exec takes it.
struct root_outcome {
  event done;
  bool failed = false;
  std::vector<std::byte> value;
  std::string error_type, error;  // when failed: the thrown type's name and what()
};

struct counters {
  std::atomic<std::uint64_t> from_node{0}, from_remote{0}, from_siblings{0}, failed{0};
  // Shared-memory attempts that are timed (all on a victim with work, one
  // in 16 of the others): how many were, and their time.
  std::atomic<std::uint64_t> node_timed{0}, node_ns{0}, failed_timed{0}, failed_ns{0};
  std::atomic<std::uint64_t> remote_ns{0};  // every steal by message
};

struct fj_rank {
  explicit fj_rank(rank_comm& c);
  rank_comm& comm;
  const int rank;
  std::uint64_t deques_offset = 0;     // same on every rank (a symmetric block)
  deque_set* mine = nullptr;           // this rank's deques
  std::atomic<bool> ready{false};      // deques made (at the first root_exec)
  // The sequence number of the root_exec this rank is inside, 0 between
  // them: it steals from other ranks only inside one, and only that root's
  // tasks (a rank may still be leaving root k while rank 0 runs root k+1).
  std::atomic<std::uint64_t> root{0};
  std::vector<int> node_victims;       // other ranks on this rank's node: their deques are mapped here
  std::vector<int> remote_victims;     // the others: asked by message
  std::atomic<bool> request_out{false};        // a steal request by message is on its way
  std::atomic<std::int64_t> request_sent_ns{0};
  std::uint64_t next_root = 0;         // the last root_exec's sequence number (counted alike on every rank)

  spin_mutex cells_mutex;  // spawned futures' cells, freed when the root_exec ends (all of the rank's root)
  std::vector<std::pair<cell_base*, void (*)(cell_base*)>> cells;
  outcome_board board;     // their outcomes for other nodes (guarded by cells_mutex)

  std::mutex roots_mutex;
  std::map<std::uint64_t, root_outcome> roots;

  counters stats;
};

/// The state of the rank `c`.
inline fj_rank& state_of(rank_comm& c) { return layer_state<fj_rank>(c); }
/// The calling task's rank state.
fj_rank& current_rank();

/// Process-wide settings, read from the options at first use.
struct settings {
  bool checks = false;       // --weft:forkjoin-checks
};
const settings& options() noexcept;

/// Ends the job with "forkjoin: rank R: <text>".
[[noreturn]] void fail(int rank, const std::string& text) noexcept;

std::int64_t now_ns() noexcept;

// ---- messages (messages.cpp) ------------------------------------------------------

extern const am_handler forkjoin_messages;

enum class wire_kind : std::uint8_t { complete = 1, steal_request, steal_reply, await, value, root_done };

struct wire_header {
  wire_kind kind;
  std::uint8_t failed;   // complete/value/root_done: the body is an error (encode_error); steal_reply: 1 = nothing
  std::int32_t rank;     // complete/value: where it ran
  std::uint64_t token;   // the cell, proxy or root sequence number (steal_request: the thief's root)
  std::uint64_t token2;  // await: the proxy to answer to
};
static_assert(sizeof(wire_header) <= 32);

/// A task outcome to `cell` of rank `owner` (any process): value bytes, or
/// an error.
void complete(fj_rank& me, int owner, std::uint64_t cell, const void* value, std::uint32_t size,
              std::exception_ptr error);
/// Sends an outcome (`size` value bytes, or `error` encoded) as a message
/// of `kind` for `token` on rank `to`.
void send_outcome(rank_comm& comm, int to, wire_kind kind, int ran_on, std::uint64_t token, const void* value,
                  std::uint32_t size, const std::exception_ptr& error);
/// An exception as it crosses processes: its type's name and what(),
/// encoded as remote calls encode theirs (write_current_exception).
std::vector<std::byte> encode_error(const std::exception_ptr& error);
/// The remote_error an encoded exception arrives as; ends the job, naming
/// rank `from`, if `body` is not one.
remote_error decode_error(const fj_rank& me, int from, std::span<const std::byte> body);

// ---- running stolen entries (execute.cpp) ---------------------------------------------

/// A task for the scheduler that runs `e` (taken from a deque).
task_base* make_stolen_task(const task_entry& e);

/// If the calling worker's newest task is the one for `c`, takes it back
/// and runs it here (fork.cpp).
void take_back_and_run(const cell_base& c) noexcept;

/// Victim side of a steal by message from a rank inside root `root`: the
/// oldest task of any of this rank's deques, if it belongs to that root
/// (stealing.cpp).
bool steal_for_remote(fj_rank& me, task_entry& out, std::uint64_t root) noexcept;
/// A root task's outcome arrived from rank `from` (0) (root.cpp).
void root_arrived(fj_rank& me, int from, std::uint64_t seq, bool failed, std::span<const std::byte> body);

// ---- the deques' set-up (state.cpp) ---------------------------------------------

/// Collective, once: every rank makes its deques in its heap.
void make_deques(fj_rank& me);

}  // namespace weft::detail::fj
