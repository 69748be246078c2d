// root_exec: set up once (the deques), mark the rank as inside the root
// (its sequence number: it then steals that root's tasks from others), and
// end with rank 0 sending the root task's outcome to every rank — one
// message each, no barrier: a rank that gets it knows every task of the
// root has finished (joins are strict), so it stops stealing. Rank 0 may
// start the next root before the others have left this one; tasks carry
// their root's number, so a rank runs only those of the root it is in.
#include <cstring>

#include "forkjoin/state.hpp"
#include "weft/checkout.hpp"
#include "weft/errors.hpp"

namespace weft::detail::fj {

namespace {

root_outcome& outcome(fj_rank& me, std::uint64_t seq) {
  std::lock_guard g(me.roots_mutex);
  return me.roots[seq];  // std::map: the reference stays valid as others are added
}

/// The end of a root_exec on this rank: spawned futures' cells go (all of
/// them were made by tasks of this root: the rank runs no other root's).
void finish(fj_rank& me) {
  me.root.store(0, std::memory_order_release);
  std::vector<std::pair<cell_base*, void (*)(cell_base*)>> cells;
  {
    std::lock_guard g(me.cells_mutex);
    cells.swap(me.cells);
    me.board.reset(me);
  }
  for (auto& [c, destroy] : cells) {
    if (!c->done.is_set())
      fail(me.rank, "a task made by weft::spawn was still running when its root_exec ended; get() every "
                    "global_future before the root task returns");
    destroy(c);
  }
}

}  // namespace

std::uint64_t root_begin() {
  if (!on_worker()) throw std::logic_error("weft::root_exec must be called from a task (inside weft::run)");
  fj_rank& me = current_rank();
  if (!me.ready.load(std::memory_order_acquire)) make_deques(me);
  const std::uint64_t seq = ++me.next_root;
  me.root.store(seq, std::memory_order_release);
  return seq;
}

void root_end(std::uint64_t seq, const void* value, std::uint32_t size, std::exception_ptr error) {
  fj_rank& me = current_rank();
  detail::pgas::task_boundary_release();  // every rank sees the root's writes after root_exec
  for (int r = 0; r < me.comm.nranks; ++r)
    if (r != me.rank) send_outcome(me.comm, r, wire_kind::root_done, me.rank, seq, value, size, error);
  finish(me);
}

void root_wait(std::uint64_t seq, void* value, std::uint32_t size) {
  fj_rank& me = current_rank();
  root_outcome& o = outcome(me, seq);
  if (!o.done.is_set()) wait_for(o.done, nullptr);
  root_outcome done;
  {
    std::lock_guard g(me.roots_mutex);
    auto it = me.roots.find(seq);
    done.failed = it->second.failed;
    done.value = std::move(it->second.value);
    done.error_type = std::move(it->second.error_type);
    done.error = std::move(it->second.error);
    me.roots.erase(it);
  }
  finish(me);
  detail::pgas::task_boundary_acquire();
  if (done.failed)
    throw remote_error(std::move(done.error_type), "root_exec: the root task failed on rank 0: " + done.error);
  if (done.value.size() != size) fail(me.rank, "root_exec: the root task's result has the wrong size");
  if (size != 0) std::memcpy(value, done.value.data(), size);
}

void root_arrived(fj_rank& me, int from, std::uint64_t seq, bool failed, std::span<const std::byte> body) {
  root_outcome& o = outcome(me, seq);
  o.failed = failed;
  if (failed) {
    const remote_error e = decode_error(me, from, body);
    o.error_type = e.remote_type();
    o.error = e.what();
  } else {
    o.value.assign(body.begin(), body.end());
  }
  o.done.set();
}

}  // namespace weft::detail::fj
