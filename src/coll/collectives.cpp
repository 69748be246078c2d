// Collective mailboxes: messages of step (sequence, phase) collect per rank
// until the local call says how many it expects; then its future fires.
#include <cstring>

#include "am/rank_comm.hpp"
#include "weft/coll.hpp"

namespace weft::detail {

namespace {
struct coll_header {
  std::uint64_t seq;
  std::int32_t phase;
  std::int32_t unused;
};
}  // namespace

std::uint64_t collective_begin() {
  rank_comm& c = current_comm();
  std::lock_guard lock(c.coll_mutex);
  return c.next_collective++;
}

void collective_send(int dest, std::uint64_t seq, int phase, std::vector<std::byte>&& bytes) {
  serialization::message body;
  body.bytes = std::move(bytes);
  send_am(current_comm(), dest, am_handler::collective, coll_header{seq, phase, 0}, std::move(body));
}

future<std::vector<std::vector<std::byte>>> collective_expect(std::uint64_t seq, int phase, int count) {
  rank_comm& c = current_comm();
  std::unique_lock lock(c.coll_mutex);
  auto key = std::make_pair(seq, phase);
  coll_slot& slot = c.coll_slots[key];
  slot.expected = count;
  auto f = slot.done.get_future();
  if (slot.arrived >= count) {
    auto data = std::move(slot.by_rank);
    auto p = std::move(slot.done);
    c.coll_slots.erase(key);
    lock.unlock();
    data.resize(static_cast<std::size_t>(c.nranks));
    p.set_value(std::move(data));
  }
  return f;
}

void collective_arrived(rank_comm& c, am_message&& m) {
  const auto h = am_header<coll_header>(m, "collective");
  std::unique_lock lock(c.coll_mutex);
  auto key = std::make_pair(h.seq, static_cast<int>(h.phase));
  coll_slot& slot = c.coll_slots[key];
  slot.by_rank.resize(static_cast<std::size_t>(c.nranks));
  slot.by_rank[static_cast<std::size_t>(m.source)] = m.take_body_bytes();
  ++slot.arrived;
  if (slot.expected >= 0 && slot.arrived >= slot.expected) {
    auto data = std::move(slot.by_rank);
    auto p = std::move(slot.done);
    c.coll_slots.erase(key);
    lock.unlock();
    p.set_value(std::move(data));
  }
}

}  // namespace weft::detail
