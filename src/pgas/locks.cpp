// Distributed locks: the owner's lock_table queues requests in arrival
// order and grants the lock to one rank at a time. A requester in the
// owner's process and on its node calls the owner's side directly; others
// send messages (DiOMP's active-message protocol: request, grant, release),
// so that with --weft:node-size=1 ranks of one process lock each other as
// across nodes. In jobs whose
// ranks do not all map each other's heaps and whose transport has one-sided
// operations, every lock is instead an MCS queue lock on one-sided atomics
// (mcs_lock.hpp): one protocol per lock, whoever asks.
#include <string>

#include "pgas/handlers.hpp"
#include "pgas/mcs_lock.hpp"
#include "pgas/one_sided_heap.hpp"
#include "rma/rank_state.hpp"
#include "weft/pgas.hpp"

namespace weft::pgas::detail {

namespace {

/// A lock request in flight; its address is the token.
struct lock_record {
  promise<bool> granted;
};

std::string lock_name(int owner, std::uint32_t id) {
  return id == 0 ? "the lock of rank " + std::to_string(owner)
                 : "lock " + std::to_string(id) + " of rank " + std::to_string(owner);
}

void check_owner(int owner) {
  const int n = process().nranks;
  if (owner < 0 || owner >= n)
    fail("lock request to rank " + std::to_string(owner) + ", which does not exist (" + std::to_string(n) +
         " ranks)");
}

/// Rank `r`'s state when the rank of `from` reaches it by direct calls: in
/// this process and on the same node (transport same_node, as for heaps);
/// null when they talk by messages.
rank_pgas* direct_peer(const rank_comm& from, int r) noexcept {
  return from.transport->same_node(r) ? in_process(r) : nullptr;
}

/// Tells the requester (token) whether it has the lock.
void answer(rank_comm& owner, int requester, std::uint64_t token, bool granted) {
  if (direct_peer(owner, requester) != nullptr) {
    auto* r = reinterpret_cast<lock_record*>(static_cast<std::uintptr_t>(token));
    r->granted.set_value(granted);
    delete r;
    return;
  }
  weft::detail::send_am(owner, requester, weft::detail::pgas_messages,
                        wire_header{wire_kind::lock_reply, 0, 0, granted ? wire_granted : std::uint8_t{0}, 0, 0, 0,
                                    token});
}

rank_comm& comm_of(int rank) { return *weft::rma::detail::in_process_comm(rank); }

}  // namespace

/// The owner's side of a request.
void serve_lock_request(rank_pgas& owner, int requester, std::uint32_t id, std::uint64_t token, bool try_only) {
  switch (owner.locks.request(id, {requester, token}, try_only)) {
    case lock_table::outcome::granted:
      answer(comm_of(owner.rank), requester, token, true);
      break;
    case lock_table::outcome::busy:
      answer(comm_of(owner.rank), requester, token, false);
      break;
    case lock_table::outcome::queued:
      break;
    case lock_table::outcome::no_such_lock:
      fail("lock request from rank " + std::to_string(requester) + ": " + lock_name(owner.rank, id) +
           " does not exist (never created, or destroyed)");
  }
}

/// The owner's side of a release.
void serve_unlock(rank_pgas& owner, int releaser, std::uint32_t id) {
  lock_waiter next{};
  int holder = -1;
  switch (owner.locks.release(id, releaser, next, holder)) {
    case lock_table::release_outcome::next:
      answer(comm_of(owner.rank), next.rank, next.token, true);
      break;
    case lock_table::release_outcome::free:
      break;
    case lock_table::release_outcome::not_held:
      fail("unlock of " + lock_name(owner.rank, id) + " by rank " + std::to_string(releaser) +
           ", which does not hold it (" +
           (holder < 0 ? std::string("nobody does") : "rank " + std::to_string(holder) + " does") + ")");
    case lock_table::release_outcome::no_such_lock:
      fail("unlock by rank " + std::to_string(releaser) + ": " + lock_name(owner.rank, id) + " does not exist");
  }
}

void lock_replied(const wire_header& h) {
  auto* r = reinterpret_cast<lock_record*>(static_cast<std::uintptr_t>(h.token));
  r->granted.set_value((h.flags & wire_granted) != 0);
  delete r;
}

}  // namespace weft::pgas::detail

namespace weft::detail::pgas {

using namespace weft::pgas::detail;

std::uint32_t lock_create() {
  const std::uint32_t id = current().locks.create();
  if (one_sided_locks()) mcs::check_created(current().rank, id);
  return id;
}

void lock_destroy(int owner, std::uint32_t id) {
  rank_pgas& me = current();
  if (owner != me.rank)
    fail("rank " + std::to_string(me.rank) + " destroys " + lock_name(owner, id) + " (only its owner may)");
  if (id == 0) fail("the lock of rank " + std::to_string(owner) + " cannot be destroyed");
  if (one_sided_locks()) mcs::check_destroy(owner, id);
  const int holder = me.locks.destroy(id);
  if (holder == -2) fail("destroy of " + lock_name(owner, id) + ", which does not exist");
  if (holder >= 0) fail(lock_name(owner, id) + " destroyed while rank " + std::to_string(holder) + " holds it");
}

future<bool> lock_acquire(int owner, std::uint32_t id, bool try_only) {
  check_owner(owner);
  if (one_sided_locks()) return mcs::acquire(owner, id, try_only);
  rank_comm& comm = weft::pgas::detail::current_comm();
  auto* r = new lock_record;
  future<bool> f = r->granted.get_future();
  const auto token = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(r));
  if (rank_pgas* o = direct_peer(comm, owner)) {
    serve_lock_request(*o, comm.rank, id, token, try_only);
  } else {
    send_am(comm, owner, pgas_messages,
            wire_header{wire_kind::lock_request, 0, 0, try_only ? wire_try : std::uint8_t{0}, id, 0, 0, token});
  }
  return f;
}

void lock_release(int owner, std::uint32_t id) {
  check_owner(owner);
  // What was written under the lock is in place before the next holder has it.
  weft::wait_puts();
  weft::wait_atomics();
  if (one_sided_locks()) return mcs::release(owner, id);
  rank_comm& comm = weft::pgas::detail::current_comm();
  if (rank_pgas* o = direct_peer(comm, owner))
    serve_unlock(*o, comm.rank, id);
  else
    send_am(comm, owner, pgas_messages, wire_header{wire_kind::unlock, 0, 0, 0, id, 0, 0, 0});
}

}  // namespace weft::detail::pgas
