// Collective mailboxes: messages of step (sequence, phase) collect per rank
// until the local call says how many it expects; then its future fires.
#include <cstring>

#include "am/rank_comm.hpp"
#include "coll/coll_state.hpp"
#include "trace/recorder.hpp"
#include "weft/coll.hpp"

namespace weft::detail {

namespace {
struct coll_header {
  std::uint64_t seq;
  std::int32_t phase;
  std::int32_t unused;
};

void collective_arrived(rank_comm& c, am_message&& m);

/// The coll layer's message id (docs/ARCHITECTURE.md lists the ids).
const am_handler coll_messages = register_am_handler(3, "coll", &collective_arrived);
}  // namespace

std::uint64_t collective_begin() {
  coll_state& st = layer_state<coll_state>(current_comm());
  std::lock_guard lock(st.mutex);
  return st.next_collective++;
}

void collective_send(int dest, std::uint64_t seq, int phase, std::vector<std::byte>&& bytes) {
  serialization::message body;
  body.bytes = std::move(bytes);
  send_am(current_comm(), dest, coll_messages, coll_header{seq, phase, 0}, std::move(body));
}

future<std::vector<std::vector<std::byte>>> collective_expect(std::uint64_t seq, int phase, int count) {
  // The interval of a collective's steps up to this wait; only this one: a
  // blocking collective runs in its caller's task, whose later work is not.
  trace::name_this_interval(trace::kind::collective);
  coll_state& st = layer_state<coll_state>(current_comm());
  std::unique_lock lock(st.mutex);
  auto key = std::make_pair(seq, phase);
  coll_slot& slot = st.slots[key];
  slot.expected = count;
  auto f = slot.done.get_future();
  if (slot.arrived >= count) {
    auto data = std::move(slot.by_rank);
    auto p = std::move(slot.done);
    st.slots.erase(key);
    lock.unlock();
    data.resize(static_cast<std::size_t>(st.nranks));
    p.set_value(std::move(data));
  }
  return f;
}

namespace {
void collective_arrived(rank_comm& c, am_message&& m) {
  const auto h = am_header<coll_header>(m, "collective");
  coll_state& st = layer_state<coll_state>(c);
  std::unique_lock lock(st.mutex);
  auto key = std::make_pair(h.seq, static_cast<int>(h.phase));
  coll_slot& slot = st.slots[key];
  slot.by_rank.resize(static_cast<std::size_t>(st.nranks));
  slot.by_rank[static_cast<std::size_t>(m.source)] = m.take_body_bytes();
  ++slot.arrived;
  if (slot.expected >= 0 && slot.arrived >= slot.expected) {
    auto data = std::move(slot.by_rank);
    auto p = std::move(slot.done);
    st.slots.erase(key);
    lock.unlock();
    p.set_value(std::move(data));
  }
}
}  // namespace

}  // namespace weft::detail
