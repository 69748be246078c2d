#include "am/mpi/mpi_transport.hpp"

#include "am/mpi/frame_codec.hpp"
#include "am/recv_block.hpp"
#include "am/mpi/mpi_one_sided.hpp"
#include "am/mpi/node_rings.hpp"
#include "am/mpi/mpi_init.hpp"
#include "am/mpi/rank_facts.hpp"

#include "sched/scheduler.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include <sched.h>
#include <unistd.h>

namespace weft::detail {

namespace {

constexpr int tag_eager = 1;
constexpr int tag_bulk = 2;
/// Never sent: probing for it finds nothing, so MPI makes a progress pass
/// (mpi_transport::keep_mpi_moving).
constexpr int tag_never_sent = 3;
/// Most progress passes a rank whose rings carry all its eager traffic
/// makes without entering MPI (mpi_transport::keep_mpi_moving)...
constexpr int passes_between_mpi_calls = 16;
/// ...and the longest it stays out of MPI in passes that find nothing (an
/// idle worker napping between passes makes few of them).
constexpr std::chrono::microseconds idle_time_between_mpi_calls{50};

// The frames of an eager MPI message: am/mpi/frame_codec.hpp.
/// Eager receives kept posted. Each takes a pooled block of recv_size_
/// bytes; more than this many messages arriving between two progress
/// passes wait in MPI's unexpected queue until receives are posted again.
constexpr int posted_receives = 4;
/// Eager sends retired together (mpi_transport::retire_sends).
constexpr std::size_t retire_group = 8;
struct outgoing {
  int dest;
  am_message msg;
};

struct in_flight_recv {
  int source;
  am_message msg;
  std::vector<MPI_Request> requests;
};


/// Calls post(offset, length) for each piece of n bytes on the bulk tag:
/// at most `chunk` bytes each (MPI counts are ints), and one empty piece
/// for n == 0 (sender and receiver both post one). Sender and receiver cut
/// alike; MPI keeps one rank's messages on one tag in order, so the pieces
/// match.
template <class Post>
void for_each_piece(std::size_t n, std::size_t chunk, Post&& post) {
  std::size_t done = 0;
  do {
    const std::size_t len = std::min(chunk, n - done);
    post(done, static_cast<int>(len));
    done += len;
  } while (done < n);
}

/// Keeps an eager send buffer for the next batch, up to a bound (a burst
/// does not pin its peak number of buffers).
void recycle(std::vector<wire_buffer>& spare, wire_buffer&& buffer) {
  if (spare.size() < 64) spare.push_back(std::move(buffer));
}

}  // namespace


/// One MPI message on the eager tag: the frames of every message queued
/// for one destination in one progress pass (coalescing: under load one
/// MPI_Isend carries many small messages, as LCI/HPX aggregate parcels).
struct in_flight_send {
  int dest = -1;
  MPI_Request eager = MPI_REQUEST_NULL;
  std::vector<MPI_Request> bulk;  // rendezvous segments, sent from the messages' own memory
  wire_buffer buffer;             // the frames (recycled through `spare`)
  std::vector<am_message> held;   // rendezvous messages: keep their bulk memory alive
};

/// Eager receives posted ahead of the messages (MPI_ANY_SOURCE, tag_eager):
/// a message then lands in its buffer as it arrives, and one MPI_Test finds
/// and completes it. Probing instead (MPI_Improbe + MPI_Mrecv)
/// takes two MPI calls per message, and MPI_Testsome over all four is
/// slower than testing the earliest (docs/DISTRIBUTED.md, "Posted receives,
/// earliest first"). MPI matches a message to
/// the earliest posted receive, so testing only the earliest finds every
/// message, and messages from one rank are read in the order they were sent.
struct posted_ring {
  std::array<MPI_Request, posted_receives> req;
  std::array<recv_block*, posted_receives> block{};
  int head = 0;   // the earliest posted
  int count = 0;  // posted, from head on
  posted_ring() { req.fill(MPI_REQUEST_NULL); }
};

struct mpi_transport::impl {
  MPI_Comm comm = MPI_COMM_NULL;
  posted_ring posted;
  bool receiving = false;  // the last pass received a message
  spin_mutex queue_mutex;  // held for a push or a swap
  std::vector<outgoing> queue;  // filled by send(), drained under the progress lock
  std::atomic<std::size_t> queued{0};
  std::vector<outgoing> draining;
  std::deque<in_flight_send> sends;
  std::deque<in_flight_recv> recvs;  // waiting for bulk segments, in arrival order
  std::vector<am_message> loopback;   // messages to self
  std::vector<in_flight_send> building;       // batches being filled, one per destination
  std::vector<wire_buffer> spare;  // eager send buffers to reuse
  std::vector<recv_block*> blocks;  // eager receive buffers (the pool's reference each)
  std::vector<std::deque<in_flight_send>> ring_backlog;  // by rank on this node: batches its full ring refused
  std::size_t backlogged = 0;  // batches in ring_backlog
  ~impl() {
    for (recv_block* b : blocks) recv_block::release(b);
  }
  /// A block of at least n bytes that no handler still reads, with one
  /// reference for the caller (released once its frames are read).
  recv_block* block_for(std::size_t n) {
    for (recv_block* b : blocks)
      if (b->capacity >= n && b->free()) {
        b->refs.fetch_add(1, std::memory_order_relaxed);
        return b;
      }
    auto* b = new recv_block;  // refs = 1: the caller's
    b->capacity = n < 64 * 1024 ? 64 * 1024 : n;
    b->data.reset(new std::byte[b->capacity]);
    // Past 64 blocks (a burst of long-lived messages holds every pooled
    // one) a block is used once and goes when its last view does.
    if (blocks.size() < 64) {
      b->refs.fetch_add(1, std::memory_order_relaxed);  // the pool's
      blocks.push_back(b);
    }
    return b;
  }
};

mpi_transport::mpi_transport(am_dispatch_fn dispatch, const mpi_transport_settings& settings)
    : p_(std::make_unique<impl>()),
      dispatch_(dispatch),
      eager_limit_(std::max(settings.eager_limit, mpi_transport_settings::min_eager)),
      batch_limit_(settings.coalesce_limit) {
  init_mpi_once();
  MPI_Comm_dup(MPI_COMM_WORLD, &p_->comm);
  MPI_Comm_set_errhandler(p_->comm, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(p_->comm, &rank_);
  MPI_Comm_size(p_->comm, &size_);
  // One allgather tells each rank which ranks share its node and what every
  // rank asked for. Every rank must accept the longest eager message any
  // rank may send; the limits come from options, which could differ
  // between ranks. So may the choice of rings: a rank writing into a ring
  // nobody reads would hang, so they are used only if every rank asks for
  // them. Sender and receiver cut a long segment into the same pieces: the
  // smallest chunk any rank asks for. (MPI_Comm_split_type and an
  // allreduce would cost several times as much on an oversubscribed node:
  // docs/CLUSTER.md, "Start-up time".)
  const rank_facts mine = my_facts(settings, std::max(eager_limit_, batch_limit_));
  std::vector<rank_facts> all(static_cast<std::size_t>(size_));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, p_->comm);
  // The node is the host, or a group of --weft:node-size consecutive ranks
  // on it; every node path below (rings, their sleep slots, same_node)
  // follows it, while the host's count stays for pinning.
  std::vector<int> node_ranks;  // ascending: a rank's place here is its rank on the node
  recv_size_ = 0;
  chunk_ = mpi_transport_settings::max_chunk;
  bool rings_wanted = true;
  require_one_node_size(all, rank_);
  host_size_ = 0;
  for (int r = 0; r < size_; ++r) {
    const rank_facts& f = all[static_cast<std::size_t>(r)];
    if (same_host(f, mine)) {
      host_rank_ += r < rank_ ? 1 : 0;
      ++host_size_;
    }
    if (on_one_node(r, f, rank_, mine)) node_ranks.push_back(r);
    recv_size_ = std::max<std::size_t>(recv_size_, f.longest_eager);
    chunk_ = std::min<std::size_t>(chunk_, f.chunk);
    rings_wanted &= f.wants_rings != 0;
  }
  local_rank_ = static_cast<int>(std::find(node_ranks.begin(), node_ranks.end(), rank_) - node_ranks.begin());
  local_size_ = static_cast<int>(node_ranks.size());
  node_ranks_ = node_ranks;
  setup_node_rings(rings_wanted, node_ranks, all[0].job);
  // A frame's segment lengths must fit in an eager message next to the
  // longest prefix and header; the prefix counts them in 16 bits.
  max_segments_ = std::min<std::size_t>((recv_size_ - sizeof(wire_prefix) - 8 - am_header_capacity) / 8, 0xffff);
  if (polls_mpi_eager()) repost_receives();
  // Only if every rank asks: each registration is collective. Passive
  // (layers route work through them) only if every rank says so too.
  const bool one_sided_wanted =
      std::all_of(all.begin(), all.end(), [](const rank_facts& f) { return f.wants_one_sided != 0; });
  const bool passive = std::all_of(all.begin(), all.end(), [](const rank_facts& f) { return f.wants_one_sided == 2; });
  if (one_sided_wanted) one_sided_ = std::make_unique<mpi_one_sided>(p_->comm, lock_, *this, passive);
}

one_sided_ops* mpi_transport::one_sided() noexcept { return one_sided_.get(); }

void mpi_transport::setup_node_rings(bool wanted, const std::vector<int>& node_ranks, std::uint64_t job) {
  local_of_.assign(static_cast<std::size_t>(size_), -1);
  // Room for the longest record twice over: a record that does not fit
  // waits for at most one other to be read. Every input of the decision is
  // the same on every rank, so they all decide alike: the set-up is
  // collective over the world, and a rank alone on its node takes part,
  // then keeps no rings.
  std::size_t capacity = 64 * 1024;
  while (capacity < 2 * (recv_size_ + 16)) capacity *= 2;
  if (!wanted || capacity > mpi_transport_settings::max_ring_bytes) return;
  rings_ = std::make_unique<node_rings>(p_->comm, node_ranks, job, capacity);
  if (local_size_ < 2) {
    rings_.reset();
    return;
  }
  world_of_ = node_ranks;
  for (int i = 0; i < local_size_; ++i)
    if (i != local_rank_) local_of_[static_cast<std::size_t>(world_of_[static_cast<std::size_t>(i)])] = i;
  p_->ring_backlog.resize(static_cast<std::size_t>(local_size_));
}

mpi_transport::~mpi_transport() {
  one_sided_.reset();  // frees its windows (collective), under the lock it takes itself
  std::lock_guard lock(lock_);
  while (!p_->sends.empty()) {  // quiescence guarantees these are done or nearly
    auto& s = p_->sends.front();
    MPI_Wait(&s.eager, MPI_STATUS_IGNORE);
    MPI_Waitall(static_cast<int>(s.bulk.size()), s.bulk.data(), MPI_STATUSES_IGNORE);
    p_->sends.pop_front();
  }
  rings_.reset();
  posted_ring& r = p_->posted;
  for (int i = 0; i < r.count; ++i) {  // quiescence: nothing more is coming
    const auto k = static_cast<std::size_t>((r.head + i) % posted_receives);
    MPI_Cancel(&r.req[k]);
    MPI_Wait(&r.req[k], MPI_STATUS_IGNORE);
    recv_block::release(r.block[k]);
  }
  MPI_Comm_free(&p_->comm);
}

void mpi_transport::abort_world(int code) noexcept {
  // Not MPI_Abort: when several ranks fail at once (a corrupted value seen
  // by every consumer), concurrent MPI_Abort calls can crash inside UCX and
  // then hang in its crash handler. A rank that exits non-zero before
  // MPI_Finalize makes mpiexec (Hydra) kill the others and fail the job,
  // with this rank's output forwarded first.
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

void mpi_transport::send(int dest, am_message&& m) {
  // The serializer makes at most a handful of segments
  // (writer_options::max_bulk_segments); max_segments_ is the wire's bound.
  if (m.bulk_count() > max_segments_)
    throw std::length_error("weft: a message with " + std::to_string(m.bulk_count()) + " bulk segments (at most " +
                            std::to_string(max_segments_) + " with this eager threshold)");
  worker* w = publishing_ ? current_worker() : nullptr;
  if (w != nullptr && w->sched == owner) {
    // When this worker has nothing else to run (a reply, a chain's next
    // call), the first message a task sends leaves at once (MPI_Isend, or
    // the destination's ring on this node), provided
    // nothing is queued ahead of it and no other thread is inside MPI;
    // later ones queue up and leave together when the task ends or waits
    // (flush). With other tasks ready, messages queue and leave together
    // at the next progress pass: several calls that arrived together then
    // answer in one MPI message.
    const bool first = !std::exchange(w->unpublished_sends, true);
    if (first && dest != rank_ && p_->queued.load(std::memory_order_acquire) == 0 && !owner->has_local_work(*w)) {
      std::unique_lock lock(lock_, std::try_to_lock);
      if (lock.owns_lock() && p_->queued.load(std::memory_order_acquire) == 0) {
        in_flight_send b = fresh_batch(dest);
        append_frame(b, std::move(m));
        finish_batch(std::move(b));
        return;
      }
    }
  }
  std::lock_guard lock(p_->queue_mutex);
  p_->queue.push_back(outgoing{dest, std::move(m)});
  p_->queued.store(p_->queue.size(), std::memory_order_release);
}

bool mpi_transport::send_queued() {
  impl& p = *p_;
  if (p.queued.load(std::memory_order_acquire) == 0) return false;
  {
    std::lock_guard q(p.queue_mutex);
    p.draining.swap(p.queue);
    p.queued.store(0, std::memory_order_relaxed);
  }
  for (auto& o : p.draining) {
    if (o.dest == rank_) {
      p.loopback.push_back(std::move(o.msg));
      continue;
    }
    append_frame(batch_for(o.dest), std::move(o.msg));
  }
  for (auto& b : p.building) finish_batch(std::move(b));
  p.building.clear();
  p.draining.clear();
  return true;
}

void mpi_transport::finish_batch(in_flight_send&& b) {
  if (!b.buffer.empty()) start_send(std::move(b));
  else recycle(p_->spare, std::move(b.buffer));  // append_frame sent it already (closed it)
}

void mpi_transport::attach_publisher(scheduler& s) noexcept {
  s.publish = [](void* self, int) noexcept { static_cast<mpi_transport*>(self)->flush(); };
  s.publish_now = [](void* self, int) noexcept { static_cast<mpi_transport*>(self)->flush_now(); };
  s.publish_ctx = this;
  publishing_ = true;
}

sleep_slot* mpi_transport::node_sleep_slot() noexcept {
  return rings_ != nullptr ? &rings_->own_sleep_slot() : nullptr;
}

void mpi_transport::flush_now() {
  if (p_->queued.load(std::memory_order_acquire) == 0) return;
  std::unique_lock lock(lock_, std::try_to_lock);
  if (lock.owns_lock()) send_queued();  // else the holder's pass sends them
}

void mpi_transport::flush() {
  if (worker* w = current_worker(); w != nullptr && owner->has_local_work(*w)) return;  // see send()
  std::unique_lock lock(lock_, std::try_to_lock);
  if (lock.owns_lock()) send_queued();  // else the holder's pass sends them
}

bool mpi_transport::progress() {
  std::unique_lock lock(lock_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  return progress_locked();
}

in_flight_send mpi_transport::fresh_batch(int dest) {
  impl& p = *p_;
  in_flight_send b;
  b.dest = dest;
  if (!p.spare.empty()) {
    b.buffer = std::move(p.spare.back());
    p.spare.pop_back();
    b.buffer.clear();
  }
  return b;
}

in_flight_send& mpi_transport::batch_for(int dest) {
  for (auto& b : p_->building)
    if (b.dest == dest) return b;
  return p_->building.emplace_back(fresh_batch(dest));
}

void mpi_transport::start_send(in_flight_send&& b) {
  impl& p = *p_;
  if (rings_ != nullptr)
    if (const int peer = local_of_[static_cast<std::size_t>(b.dest)]; peer >= 0) return ring_send(peer, std::move(b));
  MPI_Isend(b.buffer.data(), static_cast<int>(b.buffer.size()), MPI_BYTE, b.dest, tag_eager, p.comm, &b.eager);
  p.sends.push_back(std::move(b));
}

void mpi_transport::ring_send(int peer, in_flight_send&& b) {
  impl& p = *p_;
  auto& waiting = p.ring_backlog[static_cast<std::size_t>(peer)];
  if (waiting.empty() && try_ring(peer, b)) return;
  waiting.push_back(std::move(b));  // in order, behind what waits already
  ++p.backlogged;
}

bool mpi_transport::try_ring(int peer, in_flight_send& b) {
  if (!rings_->try_write(peer, b.buffer.data(), b.buffer.size())) return false;
  // The frames are copied: done, unless rendezvous segments still travel
  // on the bulk tag (its eager request stays null; retire_sends waits for
  // the segments).
  if (b.bulk.empty()) recycle(p_->spare, std::move(b.buffer));
  else p_->sends.push_back(std::move(b));
  return true;
}

bool mpi_transport::drain_ring_backlog() {
  impl& p = *p_;
  if (p.backlogged == 0) return false;
  bool did = false;
  for (std::size_t peer = 0; peer < p.ring_backlog.size(); ++peer) {
    auto& waiting = p.ring_backlog[peer];
    while (!waiting.empty() && try_ring(static_cast<int>(peer), waiting.front())) {
      waiting.pop_front();
      --p.backlogged;
      did = true;
    }
  }
  return did;
}

template <class Deliver>
int mpi_transport::poll_rings(int most, Deliver& deliver) {
  int got = 0;
  for (int peer = 0; peer < local_size_; ++peer) {
    if (peer == local_rank_) continue;
    for (int i = 0; i < most; ++i) {
      bool corrupt = false;
      const std::span<const std::byte> record = rings_->peek(peer, corrupt);
      const int source = world_of_[static_cast<std::size_t>(peer)];
      if (corrupt) [[unlikely]]
        corrupt_from(source, "its shared-memory ring holds an impossible record length");
      if (record.empty()) break;
      // Read where it lies: small messages are copied out as their frames
      // are read; read_frames copies the record into a block first if it
      // holds segments the handlers would keep views of.
      read_frames(record, source, nullptr, deliver);
      rings_->pop(peer);
      ++got;
    }
  }
  return got;
}

void mpi_transport::append_frame(in_flight_send& batch, am_message&& m) {
  const frame_plan plan = plan_frame(m, eager_limit_, recv_size_);
  // Full: send what is there, continue in a fresh batch for this rank.
  if (!batch.buffer.empty() && batch.buffer.size() + plan.most_bytes > batch_limit_) close_batch(batch);
  write_frame(batch.buffer, m, plan);
  if (plan.compact || plan.flatten) return;  // `m` (and what it keeps alive) is released now: its bytes are copied
  // Bulk segments (after a body sent apart) go now, straight from the
  // message's memory; the receiver posts its receives in frame order, which
  // MPI's ordering matches.
  auto send_apart = [&](const std::byte* data, std::size_t n) {
    for_each_piece(n, chunk_, [&](std::size_t at, int len) {
      batch.bulk.emplace_back();
      MPI_Isend(data + at, len, MPI_BYTE, batch.dest, tag_bulk, p_->comm, &batch.bulk.back());
    });
  };
  const std::size_t n_bulk = m.bulk_count();
  if (plan.body_apart) send_apart(m.body_bytes().data(), m.body_bytes().size());
  for (std::size_t i = 0; i < n_bulk; ++i) send_apart(m.bulk_segment(i).data(), m.bulk_segment(i).size());
  batch.held.push_back(std::move(m));
  // A frame whose bulk segments travel separately ends its batch. Batched
  // with the next such frame, the receiver started both large transfers
  // before it could run the first call, and two ping-pong chains then
  // stayed in step, each core copying two payloads while the other waited
  // (docs/DISTRIBUTED.md, "A frame with rendezvous segments closes its MPI
  // message").
  if (n_bulk != 0 || plan.body_apart) close_batch(batch);
}

void mpi_transport::close_batch(in_flight_send& batch) { start_send(std::exchange(batch, fresh_batch(batch.dest))); }

void mpi_transport::corrupt_from(int source, const char* why) const {
  std::fprintf(stderr, "weft: rank %d: corrupt or truncated message from rank %d: %s\n", rank_, source, why);
  abort_world(1);
}

template <class Deliver>
void mpi_transport::read_frames(std::span<const std::byte> buf, int source, recv_block* block,
                                Deliver& deliver) {
  auto bad = [&](const char* why) { corrupt_from(source, why); };
  if (buf.empty()) bad("empty message");
  // Without a block (a record read in its ring), the first flattened frame
  // moves the rest of the reading into a pooled copy: its views outlive
  // the ring's bytes.
  recv_block* copy = nullptr;
  auto own_the_bytes = [&] {
    copy = p_->block_for(buf.size());
    std::memcpy(copy->data.get(), buf.data(), buf.size());
    buf = std::span<const std::byte>(copy->data.get(), buf.size());
    block = copy;
  };
  frame_fields f;
  std::size_t at = 0;
  while (at != buf.size()) {
    if (const char* why = read_frame(buf, at, f)) bad(why);
    in_flight_recv r;
    r.source = source;
    auto receive_apart = [&](std::byte* data, std::size_t n) {
      for_each_piece(n, chunk_, [&](std::size_t piece_at, int len) {
        r.requests.emplace_back();
        MPI_Irecv(data + piece_at, len, MPI_BYTE, source, tag_bulk, p_->comm, &r.requests.back());
      });
    };
    am_message& m = r.msg;
    m.source = source;
    m.handler = static_cast<am_handler>(f.handler);
    m.set_header(buf.data() + f.header_at, f.header_len);
    if (f.body_apart) {
      // It follows on tag_bulk, ahead of any segments (append_frame's order).
      auto& body = m.spill().bytes;
      body.resize(static_cast<std::size_t>(f.body_len));
      receive_apart(body.data(), body.size());
    } else {
      m.set_body_bytes(buf.data() + f.body_at, static_cast<std::size_t>(f.body_len));
    }
    if (f.bulk_lens.empty()) {
      if (f.body_apart)
        p_->recvs.push_back(std::move(r));
      else
        deliver(std::move(m));
      continue;
    }
    auto& ool = m.spill();
    ool.bulk.reserve(f.bulk_lens.size());
    if (f.flattened) {
      if (block == nullptr) own_the_bytes();
      // Views into the receive block, which stays out of the pool until
      // the handler (and any weft::buffer it kept) is done with them: no
      // copy, no allocation per segment.
      for (std::size_t i = 0; i < f.bulk_lens.size(); ++i)
        ool.bulk.emplace_back(buf.data() + f.bulk_at[i], static_cast<std::size_t>(f.bulk_lens[i]));
      block->refs.fetch_add(1, std::memory_order_relaxed);
      ool.keep = serialization::owner::borrow(block, &recv_block::release);
      deliver(std::move(m));
      continue;
    }
    // The segments follow on tag_bulk: received into one pooled block
    // (uninitialized, reused), each segment aligned, delivered as views.
    std::size_t room = 0;
    for (auto l : f.bulk_lens) room = align_up(room, segment_alignment) + static_cast<std::size_t>(l);
    recv_block* target = p_->block_for(room);
    std::size_t off = 0;
    for (const std::uint64_t l : f.bulk_lens) {
      off = align_up(off, segment_alignment);
      ool.bulk.emplace_back(target->data.get() + off, static_cast<std::size_t>(l));
      receive_apart(target->data.get() + off, static_cast<std::size_t>(l));
      off += static_cast<std::size_t>(l);
    }
    ool.keep = serialization::owner::borrow(target, &recv_block::release);  // block_for's reference
    p_->recvs.push_back(std::move(r));
  }
  if (copy != nullptr) recv_block::release(copy);  // the views taken keep it out of the pool
}

void mpi_transport::repost_receives() {
  posted_ring& r = p_->posted;
  while (r.count < posted_receives) {
    const auto k = static_cast<std::size_t>((r.head + r.count) % posted_receives);
    r.block[k] = p_->block_for(recv_size_);  // block_for's reference is the receive's
    MPI_Irecv(r.block[k]->data.get(), static_cast<int>(recv_size_), MPI_BYTE, MPI_ANY_SOURCE, tag_eager, p_->comm,
              &r.req[k]);
    ++r.count;
  }
}

bool mpi_transport::retire_sends() {
  impl& p = *p_;
  bool did = false;
  while (!p.sends.empty()) {
    // Eager sends go in groups: MPICH/UCX completes a short one inside
    // MPI_Isend, but MPI_Test still makes a progress pass for it; one
    // MPI_Testall over a group makes one pass for all of them
    // (docs/BENCHMARKS.md, "when a task's messages leave"). Their buffers are weft's
    // own, so nothing waits for them meanwhile.
    std::array<MPI_Request, retire_group> group;
    std::size_t n = 0;
    auto it = p.sends.begin();
    for (; n < retire_group && it != p.sends.end() && it->held.empty(); ++it) group[n++] = it->eager;
    if (n == retire_group) {
      int done = 0;
      MPI_Testall(static_cast<int>(n), group.data(), &done, MPI_STATUSES_IGNORE);
      if (done) {
        for (std::size_t i = 0; i < n; ++i) {
          recycle(p.spare, std::move(p.sends.front().buffer));
          p.sends.pop_front();
        }
        did = true;
        continue;
      }
    } else if (it == p.sends.end()) {
      break;  // too few for a group yet
    }
    // One at a time up to a send of rendezvous segments, which keeps the
    // caller's payload alive until it is retired (or a group not complete).
    auto& s = p.sends.front();
    int done = 0;
    MPI_Test(&s.eager, &done, MPI_STATUS_IGNORE);
    if (done && !s.bulk.empty())
      MPI_Testall(static_cast<int>(s.bulk.size()), s.bulk.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) break;
    recycle(p.spare, std::move(s.buffer));
    p.sends.pop_front();
    did = true;
  }
  return did;
}

bool mpi_transport::progress_locked() {
  bool did = false;
  std::size_t n_delivered = 0;
  auto deliver = [&](am_message&& m) {
    dispatch_(ctx_, std::move(m));
    ++n_delivered;
  };
  impl& p = *p_;
  // Tests of this rank's own requests below each make MPI progress.
  const bool enters_mpi = polls_mpi_eager() || !p.sends.empty() || !p.recvs.empty();
  if (enters_mpi) passes_without_mpi_ = 0;
  // 1. Hand queued messages to MPI (or to ourselves, or to a ring).
  did |= send_queued();
  if (rings_ != nullptr) did |= drain_ring_backlog();
  // 2. Retire completed sends, in order.
  did |= retire_sends();
  // 3. Receive eager messages, in the order their receives were posted.
  // Replacing the receives taken in the last pass comes first (after step
  // 1: a reply already went out, this is not on its way).
  // While messages come one at a time, one per pass: its handler then runs
  // before another MPI call is made (in a ping-pong, the next test could
  // only come back empty). Once passes keep finding messages, up to all
  // the posted receives per pass, so a busy worker's occasional poll
  // catches up with a burst from several ranks. The same per ring.
  const int most = p.receiving ? posted_receives : 1;
  int got = rings_ != nullptr ? poll_rings(most, deliver) : 0;
  posted_ring& ring = p.posted;
  const bool from_mpi = polls_mpi_eager();
  if (from_mpi && ring.count < posted_receives) repost_receives();
  for (int taken = 0; from_mpi && taken < most; ++taken) {
    const auto k = static_cast<std::size_t>(ring.head);
    int flag = 0;
    MPI_Status st;
    MPI_Test(&ring.req[k], &flag, &st);
    if (!flag) break;
    ++got;
    ring.head = (ring.head + 1) % posted_receives;
    --ring.count;
    recv_block* block = std::exchange(ring.block[k], nullptr);
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    read_frames(std::span<const std::byte>(block->data.get(), static_cast<std::size_t>(count)), st.MPI_SOURCE,
                block, deliver);
    recv_block::release(block);  // the views taken meanwhile keep it out of the pool
  }
  p.receiving = got != 0;
  did |= got != 0;
  // 4. Deliver messages whose bulk segments have all arrived, oldest first,
  // up to the first that has not (testing every pending one each pass made
  // a flood of large messages quadratic; MPI matches them in order anyway).
  while (!p.recvs.empty()) {
    auto& r = p.recvs.front();
    int done = 0;
    MPI_Testall(static_cast<int>(r.requests.size()), r.requests.data(), &done, MPI_STATUSES_IGNORE);
    if (!done) break;
    deliver(std::move(r.msg));
    p.recvs.pop_front();
    did = true;
  }
  // 5. Messages to ourselves.
  if (!p.loopback.empty()) {
    std::vector<am_message> local;
    local.swap(p.loopback);
    for (auto& m : local) deliver(std::move(m));
    did = true;
  }
  if (!enters_mpi) keep_mpi_moving(!did);
  delivered(n_delivered);
  return did;
}

void mpi_transport::keep_mpi_moving(bool idle) {
  // A bulk receive completes here once its data has arrived, but the
  // sender's MPI_Isend completes only when this rank's MPI has answered
  // (UCX's rendezvous acknowledgement), which it does only inside an MPI
  // call. A rank whose eager traffic all travels in the rings and that
  // has no request of its own left makes no MPI call, so without this the
  // sender's segments never retired and a fence waiting for them hung.
  // Counting passes alone would leave a napping rank out of MPI for 16
  // naps; a clock read only in passes that found nothing keeps busy
  // passes cheap.
  using clock = std::chrono::steady_clock;
  if (++passes_without_mpi_ < passes_between_mpi_calls &&
      !(idle && clock::now() - last_mpi_poke_ >= idle_time_between_mpi_calls))
    return;
  passes_without_mpi_ = 0;
  int found = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, tag_never_sent, p_->comm, &found, MPI_STATUS_IGNORE);
  last_mpi_poke_ = clock::now();
}

std::array<std::uint64_t, 3> mpi_transport::global_sum(std::array<std::uint64_t, 3> local) {
  std::array<std::uint64_t, 3> global{};
  MPI_Request req;
  {
    std::lock_guard lock(lock_);
    MPI_Iallreduce(local.data(), global.data(), 3, MPI_UINT64_T, MPI_SUM, p_->comm, &req);
  }
  // Ranks that are done wait here for the slowest one: after a short while
  // they nap instead of yielding, or on an oversubscribed node (more ranks
  // and workers than cores) their spinning takes the cores the slowest
  // rank's workers need, and a job's end took seconds instead of
  // milliseconds.
  for (int round = 0;; ++round) {
    int done = 0;
    {
      std::lock_guard lock(lock_);
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (!done) progress_locked();  // keep serving the other ranks meanwhile
    }
    if (done) break;
    if (round < 100) sched_yield();
    else usleep(50);
  }
  return global;
}

}  // namespace weft::detail
