#include "am/ucx/ucx_inbox.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>

#include "am/mpi/frame_codec.hpp"
#include "am/recv_block.hpp"
#include "am/mpi/mpi_transport.hpp"
#include "am/ucx/ucp_world.hpp"

namespace weft::detail {


/// An active message held until its turn comes and its payload is there.
struct ucx_inbox::arrival {
  std::uint32_t seq = 0;
  bool large = false;
  std::vector<std::byte> descriptor;  // large: its descriptor frame
  recv_block* payload = nullptr;  // the frames, or a large message's body and segments
  std::size_t length = 0;
  void* request = nullptr;  // a rendezvous receive still under way
};

struct ucx_inbox::source_state {
  std::uint32_t next = 0;      // the sequence number to deliver next
  std::deque<arrival> held;    // ascending sequence numbers
};

namespace {
/// Pooled blocks kept for reuse (a burst of long-lived views does not pin more).
constexpr std::size_t pool_limit = 64;
constexpr std::size_t min_block = 64 * 1024;
}  // namespace

ucx_inbox::ucx_inbox(ucp_worker_h worker, int rank, int size)
    : worker_(worker), rank_(rank), sources_(static_cast<std::size_t>(size)) {}

ucx_inbox::~ucx_inbox() {
  // The worker outlives the inbox (its teardown still progresses): no
  // callback may reach it any more.
  for (const unsigned id : {ucx_am_frames, ucx_am_large}) {
    ucp_am_handler_param_t p{};
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
    p.id = id;
    p.cb = nullptr;
    ucp_worker_set_am_recv_handler(worker_, &p);
  }
  for (auto& s : sources_)
    for (auto& a : s.held) {
      if (a.request != nullptr) {
        ucp_request_cancel(worker_, a.request);
        ucp_request_free(a.request);
      }
      if (a.payload != nullptr) recv_block::release(a.payload);
    }
  for (recv_block* b : pool_) recv_block::release(b);
}

void ucx_inbox::install() {
  for (const unsigned id : {ucx_am_frames, ucx_am_large}) {
    ucp_am_handler_param_t p{};
    p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                   UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    p.id = id;
    p.cb = id == ucx_am_frames ? &ucx_inbox::on_active_message<ucx_am_frames>
                               : &ucx_inbox::on_active_message<ucx_am_large>;
    p.arg = this;
    p.flags = UCP_AM_FLAG_WHOLE_MSG;
    const ucs_status_t s = ucp_worker_set_am_recv_handler(worker_, &p);
    if (s != UCS_OK) ucx_fail("ucp_worker_set_am_recv_handler", s);
  }
}

recv_block* ucx_inbox::block_for(std::size_t n) {
  for (recv_block* b : pool_)
    if (b->capacity >= n && b->free()) {
      b->refs.fetch_add(1, std::memory_order_relaxed);
      return b;
    }
  auto* b = new recv_block;  // refs = 1: the caller's
  b->capacity = std::max(n, min_block);
  b->data.reset(new std::byte[b->capacity]);
  if (pool_.size() < pool_limit) {
    b->refs.fetch_add(1, std::memory_order_relaxed);  // the pool's
    pool_.push_back(b);
  }
  return b;
}

void ucx_inbox::corrupt_from(int source, const char* why) const {
  std::fprintf(stderr, "weft: rank %d: corrupt or truncated message from rank %d: %s\n", rank_, source, why);
  mpi_transport::abort_world(1);
}

template <unsigned id>
ucs_status_t ucx_inbox::on_active_message(void* self, const void* header, std::size_t header_length, void* data,
                                          std::size_t length, const ucp_am_recv_param_t* param) {
  return static_cast<ucx_inbox*>(self)->receive(id, {static_cast<const std::byte*>(header), header_length}, data,
                                                length, param);
}

ucs_status_t ucx_inbox::receive(unsigned id, std::span<const std::byte> header, void* data, std::size_t length,
                                const ucp_am_recv_param_t* param) {
  if (header.size() < sizeof(ucx_am_header)) corrupt_from(-1, "active message without its header");
  ucx_am_header h;
  std::memcpy(&h, header.data(), sizeof h);
  if (h.source < 0 || static_cast<std::size_t>(h.source) >= sources_.size())
    corrupt_from(h.source, "sender rank out of range");
  source_state& s = sources_[static_cast<std::size_t>(h.source)];
  const bool rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  if (id == ucx_am_frames && !rndv && h.seq == s.next && s.held.empty()) {
    read_frames({static_cast<const std::byte*>(data), length}, h.source, nullptr);
    ++s.next;
    return UCS_OK;
  }
  arrival a;
  a.seq = h.seq;
  a.large = id == ucx_am_large;
  if (a.large) a.descriptor.assign(header.begin() + sizeof h, header.end());
  a.length = length;
  a.payload = block_for(length);
  if (rndv) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    p.memory_type = UCS_MEMORY_TYPE_HOST;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(worker_, data, a.payload->data.get(), length, &p);
    if (UCS_PTR_IS_ERR(r)) ucx_fail("ucp_am_recv_data_nbx", UCS_PTR_STATUS(r));
    a.request = r;
  } else if (length != 0) {
    std::memcpy(a.payload->data.get(), data, length);
  }
  // In order of sequence numbers (UCP reports one sender's messages in
  // order on one lane: this is the end of the queue in practice).
  // (Compared as a difference: the numbers wrap after 2^32 messages.)
  auto at = s.held.end();
  while (at != s.held.begin() && static_cast<std::int32_t>(std::prev(at)->seq - a.seq) > 0) --at;
  s.held.insert(at, std::move(a));
  ++waiting_;
  return UCS_OK;
}

bool ucx_inbox::settle_held() {
  bool did = false;
  for (std::size_t source = 0; source < sources_.size(); ++source) {
    source_state& s = sources_[source];
    while (!s.held.empty() && s.held.front().seq == s.next) {
      arrival& a = s.held.front();
      if (a.request != nullptr) {
        const ucs_status_t st = ucp_request_check_status(a.request);
        if (st == UCS_INPROGRESS) break;
        ucp_request_free(a.request);
        a.request = nullptr;
        if (st != UCS_OK) ucx_fail("a rendezvous receive", st);
      }
      if (a.large) {
        read_large(a, static_cast<int>(source));
      } else {
        read_frames({a.payload->data.get(), a.length}, static_cast<int>(source), a.payload);
        recv_block::release(a.payload);  // the views taken keep it
      }
      s.held.pop_front();
      --waiting_;
      ++s.next;
      did = true;
    }
  }
  return did;
}

void ucx_inbox::read_frames(std::span<const std::byte> bytes, int source, recv_block* block) {
  if (bytes.empty()) corrupt_from(source, "empty message");
  recv_block* copy = nullptr;  // made for the first flattened frame when the bytes are UCP's
  frame_fields f;
  std::size_t at = 0;
  while (at != bytes.size()) {
    if (compact_frame c; read_compact_frame(bytes, at, c)) [[likely]] {  // most calls and replies
      am_message& m = ready_.emplace_back();
      m.source = source;
      m.handler = static_cast<am_handler>(c.handler);
      m.set_header(bytes.data() + c.header_at, c.header_len);
      m.set_body_bytes(bytes.data() + c.body_at, c.body_len);
      continue;
    }
    if (const char* why = read_frame(bytes, at, f)) corrupt_from(source, why);
    if (f.body_apart || (!f.bulk_lens.empty() && !f.flattened))
      corrupt_from(source, "a frame with parts sent apart in a frames message");
    am_message& m = ready_.emplace_back();
    m.source = source;
    m.handler = static_cast<am_handler>(f.handler);
    m.set_header(bytes.data() + f.header_at, f.header_len);
    m.set_body_bytes(bytes.data() + f.body_at, static_cast<std::size_t>(f.body_len));
    if (f.bulk_lens.empty()) continue;
    if (block == nullptr) {
      // Views outlive UCP's buffer: the rest is read from a copy.
      copy = block = block_for(bytes.size());
      std::memcpy(block->data.get(), bytes.data(), bytes.size());
      bytes = {block->data.get(), bytes.size()};
    }
    auto& ool = m.spill();
    ool.bulk.reserve(f.bulk_lens.size());
    for (std::size_t i = 0; i < f.bulk_lens.size(); ++i)
      ool.bulk.emplace_back(bytes.data() + f.bulk_at[i], static_cast<std::size_t>(f.bulk_lens[i]));
    block->refs.fetch_add(1, std::memory_order_relaxed);
    ool.keep = serialization::owner::borrow(block, &recv_block::release);
  }
  if (copy != nullptr) recv_block::release(copy);
}

void ucx_inbox::read_large(arrival& a, int source) {
  std::size_t at = 0;
  frame_fields f;
  const std::span<const std::byte> d(a.descriptor);
  if (const char* why = read_frame(d, at, f)) corrupt_from(source, why);
  if (at != d.size() || !f.body_apart || f.flattened) corrupt_from(source, "a large message with a malformed descriptor");
  // Where each part lies in the payload: the body, then the segments, each aligned.
  std::size_t off = static_cast<std::size_t>(f.body_len);
  std::vector<std::size_t> starts;
  starts.reserve(f.bulk_lens.size());
  for (const std::uint64_t l : f.bulk_lens) {
    off = align_up(off, segment_alignment);
    starts.push_back(off);
    off += static_cast<std::size_t>(l);
  }
  if (off != a.length) corrupt_from(source, "a large message whose payload does not match its descriptor");
  const std::byte* base = a.payload->data.get();
  am_message& m = ready_.emplace_back();
  m.source = source;
  m.handler = static_cast<am_handler>(f.handler);
  m.set_header(d.data() + f.header_at, f.header_len);
  m.set_body_bytes(base, static_cast<std::size_t>(f.body_len));
  auto& ool = m.spill();
  for (std::size_t i = 0; i < starts.size(); ++i)
    ool.bulk.emplace_back(base + starts[i], static_cast<std::size_t>(f.bulk_lens[i]));
  ool.keep = serialization::owner::borrow(a.payload, &recv_block::release);  // the arrival's reference
  a.payload = nullptr;
}

}  // namespace weft::detail
