#include "am/ucx/ucx_transport.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "am/mpi/frame_codec.hpp"
#include "am/mpi/mpi_transport.hpp"
#include "am/mpi/rank_facts.hpp"
#include "am/ucx/ucp_world.hpp"
#include "am/ucx/ucx_bootstrap.hpp"
#include "am/ucx/ucx_inbox.hpp"
#include "am/ucx/ucx_one_sided.hpp"
#include "sched/scheduler.hpp"

namespace weft::detail {

namespace {

struct outgoing {
  int dest;
  am_message msg;
};

/// One active message UCP may still be sending: what it reads from stays
/// here (at a fixed address: a deque element) until the request completes.
struct in_flight {
  void* request = nullptr;
  std::vector<std::byte> header;  // ucx_am_header, then a large message's descriptor
  wire_buffer frames;
  std::vector<ucp_dt_iov_t> iov;  // a large message's body and segments
  am_message held;                // ... whose memory they are
};

/// Zeros a large message's payload is padded with, so that each segment
/// starts aligned.
constexpr std::byte padding[segment_alignment] = {};

/// Spare frame buffers kept for the next batches.
constexpr std::size_t spare_limit = 64;

}  // namespace

struct ucx_transport::impl {
  mpi_bootstrap boot;
  ucp_world world{boot};
  ucx_inbox inbox{world.worker(), boot.rank(), boot.size()};
  ucx_one_sided one_sided{world, boot};
  spin_mutex queue_mutex;  // held for a push or a swap
  std::vector<outgoing> queue;  // filled by send(), drained under the UCP lock
  std::atomic<std::size_t> queued{0};
  // Frames in `building` that wait for a flush (send() wrote them there
  // under the UCP lock); written with that lock held.
  std::atomic<bool> gathered{false};
  std::vector<outgoing> draining;
  std::vector<wire_buffer> building;  // by rank: frames gathered in this pass
  std::vector<int> touched;           // ranks with frames in `building`
  std::vector<std::uint32_t> next_seq;  // by rank: the sequence number of the next active message to it
  std::deque<in_flight> sends;
  std::vector<wire_buffer> spare;
  std::vector<am_message> loopback;  // messages to self
  std::vector<int> node_of;          // by rank: its node number (host, then node-size groups)
};

ucx_transport::ucx_transport(am_dispatch_fn dispatch, const ucx_transport_settings& settings)
    : p_(std::make_unique<impl>()),
      dispatch_(dispatch),
      eager_limit_(std::max(settings.eager_limit, mpi_transport_settings::min_eager)),
      coalesce_limit_(settings.coalesce_limit),
      offers_one_sided_(settings.one_sided) {
  impl& p = *p_;
  rank_ = p.boot.rank();
  size_ = p.boot.size();
  p.inbox.install();  // before any rank can reach this one
  p.world.connect();
  // The descriptor of a large message travels in a UCP header: its
  // segment lengths must fit next to the prefix and the protocol header.
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  // UCX 1.13 reports 8100 bytes between the processes of one host; where
  // it reports nothing, a header of 1 KiB (over a hundred segments) is assumed.
  std::size_t max_header = 1024;
  if (ucp_worker_query(p.world.worker(), &attr) == UCS_OK && attr.max_am_header != 0) max_header = attr.max_am_header;
  const std::size_t fixed = sizeof(ucx_am_header) + sizeof(wire_prefix) + 8 + am_header_capacity;
  max_segments_ = max_header > fixed ? std::min<std::size_t>((max_header - fixed) / 8, 0xffff) : 0;
  // Nodes: the hosts, as the mpi backend tells them apart, cut into groups
  // of node_size consecutive ranks when that is set.
  mpi_transport_settings facts_settings{};  // only what rank_facts reads of it matters here
  facts_settings.one_sided = settings.one_sided;
  facts_settings.one_sided_passive = settings.one_sided_passive;
  const rank_facts mine = my_facts(facts_settings, 0);
  const auto all = p.boot.allgather({reinterpret_cast<const std::byte*>(&mine), sizeof mine}, nullptr);
  auto facts_of = [&](int r) {
    rank_facts f;
    std::memcpy(&f, all[static_cast<std::size_t>(r)].data(), sizeof f);
    return f;
  };
  bool all_offer = true, all_passive = true;
  host_size_ = 0;
  for (int r = 0; r < size_; ++r) {
    const rank_facts f = facts_of(r);
    const bool same_group = settings.node_size <= 0 || r / settings.node_size == rank_ / settings.node_size;
    if (same_host(f, mine)) {
      if (r == rank_) host_rank_ = host_size_;
      ++host_size_;
      if (same_group) node_ranks_.push_back(r);
    }
    all_offer = all_offer && f.wants_one_sided != 0;
    all_passive = all_passive && f.wants_one_sided == 2;
  }
  // Registration is collective: offered only if every rank asks.
  offers_one_sided_ = all_offer;
  p.one_sided.declare_passive(all_passive);
  local_rank_ = static_cast<int>(std::find(node_ranks_.begin(), node_ranks_.end(), rank_) - node_ranks_.begin());
  local_size_ = static_cast<int>(node_ranks_.size());
  p.building.resize(static_cast<std::size_t>(size_));
  p.next_seq.assign(static_cast<std::size_t>(size_), 0);
}

ucx_transport::~ucx_transport() {
  impl& p = *p_;
  // Quiescence guarantees every message was delivered; what remains are
  // send requests UCP has not retired yet.
  while (!p.sends.empty()) {
    in_flight& s = p.sends.front();
    p.world.wait(s.request, "a send at teardown");
    p.sends.pop_front();
  }
  // Every rank stops using UCX before any closes its endpoints.
  p.boot.barrier([this] {
    std::lock_guard hold(p_->world.lock);
    ucp_worker_progress(p_->world.worker());
  });
}

bool ucx_transport::same_node(int rank) const noexcept {
  return std::binary_search(node_ranks_.begin(), node_ranks_.end(), rank);
}

am_transport::abort_fn ucx_transport::job_abort() const noexcept { return &mpi_transport::abort_world; }

one_sided_ops* ucx_transport::one_sided() noexcept { return offers_one_sided_ ? &p_->one_sided : nullptr; }

void ucx_transport::send(int dest, am_message&& m) {
  if (m.bulk_count() > max_segments_)
    throw std::length_error("weft: a message with " + std::to_string(m.bulk_count()) + " bulk segments (at most " +
                            std::to_string(max_segments_) + " on the ucx backend)");
  impl& p = *p_;
  worker* w = publishing_ ? current_worker() : nullptr;
  if (w != nullptr && w->sched == owner) {
    // As on mpi: when this worker has nothing else to run, a task's first
    // message goes to UCP at once; later ones leave together when the task
    // ends, waits or yields. Either way, if nothing is queued ahead of it
    // and no other thread holds the UCP lock, the message is written
    // straight into the frames for its destination (no trip through the
    // queue); gathered ones wait there for the task's publish (flush_now)
    // or the next progress pass.
    const bool first = !std::exchange(w->unpublished_sends, true);
    if (dest != rank_ && p.queued.load(std::memory_order_acquire) == 0) {
      std::unique_lock lock(p.world.lock, std::try_to_lock);
      if (lock.owns_lock() && p.queued.load(std::memory_order_acquire) == 0) {
        take(dest, std::move(m));
        if (first && !owner->has_local_work(*w)) send_touched();
        else p.gathered.store(!p.touched.empty(), std::memory_order_relaxed);
        return;
      }
    }
  }
  std::lock_guard lock(p.queue_mutex);
  p.queue.push_back(outgoing{dest, std::move(m)});
  p.queued.store(p.queue.size(), std::memory_order_release);
}

void ucx_transport::take(int dest, am_message&& m) {
  if (fits_compact(m)) [[likely]] {  // most calls and replies: nothing to plan
    write_compact_frame(frames_for(dest, sizeof(wire_compact_prefix) + m.header_bytes().size() + m.body_bytes().size()),
                        m);
    return;
  }
  const frame_plan plan = plan_frame(m, eager_limit_, ~std::size_t{0});
  if (!plan.compact && !plan.flatten) {
    send_frames(dest);  // the frames before it keep their place
    send_large(dest, std::move(m));
    return;
  }
  write_frame(frames_for(dest, plan.most_bytes), m, plan);
}

wire_buffer& ucx_transport::frames_for(int dest, std::size_t most_bytes) {
  impl& p = *p_;
  wire_buffer& b = p.building[static_cast<std::size_t>(dest)];
  if (!b.empty() && b.size() + most_bytes > coalesce_limit_) send_frames(dest);
  if (b.empty()) {
    if (!p.spare.empty()) {
      b = std::move(p.spare.back());
      p.spare.pop_back();
      b.clear();
    }
    p.touched.push_back(dest);
  }
  return b;
}

void ucx_transport::send_frames(int dest) {
  impl& p = *p_;
  wire_buffer& b = p.building[static_cast<std::size_t>(dest)];
  if (b.empty()) return;
  std::uint32_t& seq = p.next_seq[static_cast<std::size_t>(dest)];
  const ucx_am_header h{rank_, seq};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  param.memory_type = UCS_MEMORY_TYPE_HOST;
  // Most batches leave at once (UCP copies them out): then nothing is kept,
  // and the header and frames may be the caller's for that moment.
  ucs_status_ptr_t r = ucp_am_send_nbx(p.world.ep(dest), ucx_am_frames, &h, sizeof h, b.data(), b.size(), &param);
  if (r == nullptr) {
    ++seq;
    b.clear();  // the buffer serves the next batch
    return;
  }
  // Not at once (no room now, or a batch long enough for rendezvous): the
  // header and frames stay until the request completes.
  in_flight& s = p.sends.emplace_back();
  s.frames = std::move(b);
  b = wire_buffer();
  s.header.resize(sizeof h);
  std::memcpy(s.header.data(), &h, sizeof h);
  ++seq;
  param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  r = ucp_am_send_nbx(p.world.ep(dest), ucx_am_frames, s.header.data(), s.header.size(), s.frames.data(),
                      s.frames.size(), &param);
  if (UCS_PTR_IS_ERR(r)) ucx_fail("ucp_am_send_nbx", UCS_PTR_STATUS(r));
  s.request = r;
  if (r == nullptr) {  // sent (copied) after all
    if (p.spare.size() < spare_limit) p.spare.push_back(std::move(s.frames));
    p.sends.pop_back();
  }
}

void ucx_transport::send_large(int dest, am_message&& m) {
  impl& p = *p_;
  in_flight& s = p.sends.emplace_back();
  // The descriptor: the frame with body and segments apart (lengths only).
  frame_plan plan;
  plan.long_body = plan.body_apart = true;
  wire_buffer descriptor;
  write_frame(descriptor, m, plan);
  const ucx_am_header h{rank_, p.next_seq[static_cast<std::size_t>(dest)]++};
  s.header.resize(sizeof h + descriptor.size());
  std::memcpy(s.header.data(), &h, sizeof h);
  std::memcpy(s.header.data() + sizeof h, descriptor.data(), descriptor.size());
  // The payload: the body, then each segment at an aligned offset.
  std::size_t at = 0;
  auto add = [&](const void* data, std::size_t n) {
    if (n != 0) s.iov.push_back({const_cast<void*>(data), n});
    at += n;
  };
  add(m.body_bytes().data(), m.body_bytes().size());
  for (std::size_t i = 0; i < m.bulk_count(); ++i) {
    add(padding, align_up(at, segment_alignment) - at);
    add(m.bulk_segment(i).data(), m.bulk_segment(i).size());
  }
  s.held = std::move(m);
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  param.datatype = ucp_dt_make_iov();
  param.memory_type = UCS_MEMORY_TYPE_HOST;
  ucs_status_ptr_t r = ucp_am_send_nbx(p.world.ep(dest), ucx_am_large, s.header.data(), s.header.size(),
                                       s.iov.data(), s.iov.size(), &param);
  if (UCS_PTR_IS_ERR(r)) ucx_fail("ucp_am_send_nbx", UCS_PTR_STATUS(r));
  s.request = r;
  if (r == nullptr) p.sends.pop_back();  // done: the message's memory may go
}

bool ucx_transport::send_queued() {
  impl& p = *p_;
  const bool gathered = p.gathered.load(std::memory_order_relaxed);
  if (p.queued.load(std::memory_order_acquire) == 0) {
    if (!gathered) return false;
  } else {
    {
      std::lock_guard q(p.queue_mutex);
      p.draining.swap(p.queue);
      p.queued.store(0, std::memory_order_relaxed);
    }
    // Behind what send() gathered: each sender's order holds.
    for (auto& o : p.draining) {
      if (o.dest == rank_) p.loopback.push_back(std::move(o.msg));
      else take(o.dest, std::move(o.msg));
    }
    p.draining.clear();
  }
  send_touched();
  return true;
}

void ucx_transport::send_touched() {
  impl& p = *p_;
  for (const int dest : p.touched) send_frames(dest);
  p.touched.clear();
  p.gathered.store(false, std::memory_order_relaxed);
}

bool ucx_transport::retire_sends() {
  impl& p = *p_;
  bool did = false;
  // In order, up to the first still under way (a rendezvous send waits for
  // its receiver to fetch the payload).
  while (!p.sends.empty()) {
    in_flight& s = p.sends.front();
    const ucs_status_t st = ucp_request_check_status(s.request);
    if (st == UCS_INPROGRESS) break;
    ucp_request_free(s.request);
    if (st != UCS_OK) ucx_fail("ucp_am_send_nbx (completion)", st);
    if (!s.frames.empty() && p.spare.size() < spare_limit) p.spare.push_back(std::move(s.frames));
    p.sends.pop_front();
    did = true;
  }
  return did;
}

bool ucx_transport::progress() {
  std::unique_lock lock(p_->world.lock, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  return progress_locked();
}

bool ucx_transport::progress_locked() {
  impl& p = *p_;
  // Most polls find nothing: each step returns at once when it has no work
  // (an idle worker's poll is what the next message waits behind).
  bool did = send_queued();
  did |= ucp_worker_progress(p.world.worker()) != 0;
  if (!p.sends.empty()) did |= retire_sends();
  did |= p.inbox.settle();
  std::size_t n = 0;
  auto& ready = p.inbox.ready();
  if (!ready.empty()) {
    for (auto& m : ready) dispatch_(ctx_, std::move(m));
    n += ready.size();
    ready.clear();
  }
  if (!p.loopback.empty()) {
    std::vector<am_message> local;
    local.swap(p.loopback);
    for (auto& m : local) dispatch_(ctx_, std::move(m));
    n += local.size();
  }
  did |= n != 0;
  delivered(n);
  return did;
}

void ucx_transport::attach_publisher(scheduler& s) noexcept {
  s.publish = [](void* self, int) noexcept { static_cast<ucx_transport*>(self)->flush(); };
  s.publish_now = [](void* self, int) noexcept { static_cast<ucx_transport*>(self)->flush_now(); };
  s.publish_ctx = this;
  publishing_ = true;
}

void ucx_transport::flush_now() {
  if (p_->queued.load(std::memory_order_acquire) == 0 && !p_->gathered.load(std::memory_order_relaxed)) return;
  std::unique_lock lock(p_->world.lock, std::try_to_lock);
  if (lock.owns_lock()) send_queued();  // else the holder's pass sends them
}

void ucx_transport::flush() {
  if (worker* w = current_worker(); w != nullptr && owner->has_local_work(*w)) return;  // see send()
  flush_now();
}

std::array<std::uint64_t, 3> ucx_transport::global_sum(std::array<std::uint64_t, 3> local) {
  return p_->boot.sum(local, [this] { progress(); });
}

}  // namespace weft::detail
