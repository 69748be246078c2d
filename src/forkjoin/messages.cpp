// The forkjoin layer's messages (handler id 6): outcomes of tasks that ran
// on a rank of another process, steals by message, awaiting a spawned
// future of another process, and the end of a root task.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "forkjoin/outcome_board.hpp"
#include "forkjoin/state.hpp"
#include "weft/detail/action.hpp"
#include "weft/errors.hpp"
#include "weft/serialize.hpp"

namespace weft::detail::fj {

namespace {

serialization::message body_of(const void* p, std::size_t n) {
  serialization::message m;
  m.bytes.resize(n);
  if (n != 0) std::memcpy(m.bytes.data(), p, n);
  return m;
}

/// Fills `c` from a message's outcome and fires it.
void settle(fj_rank& me, cell_base& c, const wire_header& h, std::span<const std::byte> body, int from) {
  if (h.failed != 0) {
    c.error = std::make_exception_ptr(decode_error(me, from, body));
  } else {
    if (body.size() != c.value_size)
      fail(me.rank, "a task outcome from rank " + std::to_string(from) + " has " + std::to_string(body.size()) +
                        " bytes, expected " + std::to_string(c.value_size));
    if (!body.empty()) std::memcpy(c.value, body.data(), body.size());
  }
  mark_done(c, h.rank);
}

/// Parked on a cell until it is done, for a rank of another process.
struct remote_waiter : waiter {
  rank_comm* comm;
  int to;
  std::uint64_t proxy;
  cell_base* cell;
};

void fj_arrived(rank_comm& c, am_message&& m) {
  const auto h = am_header<wire_header>(m, "forkjoin");
  fj_rank& me = state_of(c);
  const auto body = m.body_bytes();
  switch (h.kind) {
    case wire_kind::complete:
    case wire_kind::value:
      settle(me, *reinterpret_cast<cell_base*>(static_cast<std::uintptr_t>(h.token)), h, body, m.source);
      return;
    case wire_kind::steal_request: {
      task_entry e;
      if (steal_for_remote(me, e, h.token))
        send_am(c, m.source, forkjoin_messages, wire_header{wire_kind::steal_reply, 0, me.rank, 0, 0},
                body_of(&e, offsetof(task_entry, payload) + e.h.size));
      else
        send_am(c, m.source, forkjoin_messages, wire_header{wire_kind::steal_reply, 1, me.rank, 0, 0});
      return;
    }
    case wire_kind::steal_reply: {
      // Request to reply, for both outcomes (failed ones are timed like the
      // one-sided path's, so the two compare).
      const auto spent = static_cast<std::uint64_t>(now_ns() - me.request_sent_ns.load(std::memory_order_relaxed));
      if (h.failed == 0) {
        if (body.size() < offsetof(task_entry, payload)) fail(me.rank, "a truncated stolen task");
        task_entry e;
        std::memcpy(&e, body.data(), std::min(body.size(), sizeof e));
        me.stats.from_remote.fetch_add(1, std::memory_order_relaxed);
        me.stats.remote_ns.fetch_add(spent, std::memory_order_relaxed);
        spawn_to(c.sched, make_stolen_task(e));
      } else {
        me.stats.failed.fetch_add(1, std::memory_order_relaxed);
        me.stats.failed_timed.fetch_add(1, std::memory_order_relaxed);
        me.stats.failed_ns.fetch_add(spent, std::memory_order_relaxed);
      }
      me.request_out.store(false, std::memory_order_release);
      return;
    }
    case wire_kind::await: {
      auto* cell = reinterpret_cast<cell_base*>(static_cast<std::uintptr_t>(h.token));
      auto* w = new remote_waiter;
      w->comm = &c;
      w->to = m.source;
      w->proxy = h.token2;
      w->cell = cell;
      w->notify = [](waiter* n) noexcept {
        std::unique_ptr<remote_waiter> self(static_cast<remote_waiter*>(n));
        const cell_base& c = *self->cell;
        send_outcome(*self->comm, self->to, wire_kind::value, c.ran_on, self->proxy, c.value, c.value_size, c.error);
      };
      if (!cell->done.add(w)) w->notify(w);
      return;
    }
    case wire_kind::root_done:
      root_arrived(me, m.source, h.token, h.failed != 0, body);
      return;
  }
  fail(me.rank, "an unknown forkjoin message from rank " + std::to_string(m.source));
}

}  // namespace

const am_handler forkjoin_messages = register_am_handler(6, "forkjoin", &fj_arrived);

std::vector<std::byte> encode_error(const std::exception_ptr& error) {
  // All inline (no bulk segments): the strings written are gone on return.
  serialization::writer w(serialization::writer_options{SIZE_MAX, 0});
  try {
    std::rethrow_exception(error);
  } catch (...) {
    write_current_exception(w);
  }
  return std::move(w).finish().bytes;
}

remote_error decode_error(const fj_rank& me, int from, std::span<const std::byte> body) {
  serialization::reader in(body);
  try {
    read_result<void>(in);  // throws the remote_error the body describes
  } catch (const remote_error& e) {
    return e;
  } catch (const std::exception&) {
    // A truncated or corrupt body: reported below.
  }
  fail(me.rank, "a failed task outcome from rank " + std::to_string(from) + " does not describe an exception");
}

void send_outcome(rank_comm& comm, int to, wire_kind kind, int ran_on, std::uint64_t token, const void* value,
                  std::uint32_t size, const std::exception_ptr& error) {
  if (error) {
    const std::vector<std::byte> body = encode_error(error);
    send_am(comm, to, forkjoin_messages, wire_header{kind, 1, ran_on, token, 0}, body_of(body.data(), body.size()));
  } else {
    send_am(comm, to, forkjoin_messages, wire_header{kind, 0, ran_on, token, 0}, body_of(value, size));
  }
}

namespace {
/// Whether `owner`'s cells are reached in memory: in this process and on
/// this rank's node (--weft:node-size=1 sends the others' by message).
bool cells_in_reach(const fj_rank& me, int owner) noexcept {
  return in_process_comm(owner) != nullptr && me.comm.transport->same_node(owner);
}
}  // namespace

void complete(fj_rank& me, int owner, std::uint64_t cell, const void* value, std::uint32_t size,
              std::exception_ptr error) {
  if (cells_in_reach(me, owner)) {
    auto& c = *reinterpret_cast<cell_base*>(static_cast<std::uintptr_t>(cell));
    if (error) c.error = std::move(error);
    else if (size != 0) std::memcpy(c.value, value, size);
    mark_done(c, me.rank);
    return;
  }
  send_outcome(me.comm, owner, wire_kind::complete, me.rank, cell, value, size, error);
}

void await_future(int owner, std::uint64_t cell, std::uint64_t slot, void* value, std::uint32_t size) {
  fj_rank& me = current_rank();
  cell_base proxy;
  cell_base* c = &proxy;
  if (cells_in_reach(me, owner)) {
    c = reinterpret_cast<cell_base*>(static_cast<std::uintptr_t>(cell));
    // Its task is still this worker's newest: run it here rather than wait.
    if (!c->done.is_set()) take_back_and_run(*c);
  } else if (slot != no_outcome_slot && read_outcome(me, owner, slot, value, size, proxy.ran_on)) {
    proxy.done.set();  // read from the owner's heap, without its CPU; the join below acquires
  } else {
    proxy.value = value;
    proxy.value_size = size;
    send_am(me.comm, owner, forkjoin_messages,
            wire_header{wire_kind::await, 0, me.rank, cell, reinterpret_cast<std::uintptr_t>(&proxy)});
  }
  join(*c, "global_future::get");
  if (c->error) std::rethrow_exception(c->error);
  if (c != &proxy && size != 0) std::memcpy(value, c->value, size);
}

}  // namespace weft::detail::fj
