// Internal: the receiving side of the ucx backend. Each UCP active message
// carries a sequence number per (sender, receiver) pair; the inbox hands
// the messages it holds to the dispatcher in that order, whatever order UCP
// reports them in and however long a rendezvous payload takes to arrive:
// the same per-pair order the other backends keep.
//
// Two kinds of active message arrive:
//   - frames: one or more frames of the mpi backend's format
//     (am/mpi/frame_codec.hpp), compact or with their bulk segments
//     flattened inside, several messages to one rank coalesced;
//   - a large message: its descriptor frame (body and segments sent apart)
//     as the UCP header, and the body then each segment, every segment
//     aligned to segment_alignment, as the payload, which UCP moves by
//     rendezvous when it is long (straight from the sender's memory into
//     a block here: the handlers get views into it).
// In turn and complete (the common case) a frames message is read in the
// receive callback, where its bytes lie; otherwise it waits in the inbox.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include <ucp/api/ucp.h>

#include "am/message.hpp"

namespace weft::detail {

struct recv_block;

/// Active-message ids of the ucx backend.
inline constexpr unsigned ucx_am_frames = 1;
inline constexpr unsigned ucx_am_large = 2;

/// The UCP header in front of every active message (the large one's
/// descriptor frame follows it).
struct ucx_am_header {
  std::int32_t source;
  std::uint32_t seq;  // per (source, destination), from 0
};
static_assert(sizeof(ucx_am_header) == 8);

class ucx_inbox {
 public:
  ucx_inbox(ucp_worker_h worker, int rank, int size);
  ~ucx_inbox();
  ucx_inbox(const ucx_inbox&) = delete;
  ucx_inbox& operator=(const ucx_inbox&) = delete;

  /// Installs the receive callbacks on the worker (before any rank can
  /// connect).
  void install();
  /// Moves messages whose payload has arrived, in order, to ready(); true
  /// if any (with the UCP lock held, after a progress call).
  bool settle() { return waiting_ != 0 && settle_held(); }
  /// Messages ready for the dispatcher, in per-sender order.
  std::vector<am_message>& ready() noexcept { return ready_; }

 private:
  struct arrival;
  bool settle_held();
  template <unsigned id>
  static ucs_status_t on_active_message(void* self, const void* header, std::size_t header_length, void* data,
                                        std::size_t length, const ucp_am_recv_param_t* param);
  ucs_status_t receive(unsigned id, std::span<const std::byte> header, void* data, std::size_t length,
                       const ucp_am_recv_param_t* param);
  /// Reads the frames of one message into ready(); `block` holds `bytes`
  /// (null: they lie in UCP's buffer, and are copied if a frame keeps views).
  void read_frames(std::span<const std::byte> bytes, int source, recv_block* block);
  /// Turns a complete large message into ready()'s next.
  void read_large(arrival& a, int source);
  [[noreturn]] void corrupt_from(int source, const char* why) const;
  recv_block* block_for(std::size_t n);

  struct source_state;
  ucp_worker_h worker_;
  int rank_;
  std::vector<source_state> sources_;
  std::size_t waiting_ = 0;  // arrivals held in sources_
  std::vector<am_message> ready_;
  std::vector<recv_block*> pool_;
};

}  // namespace weft::detail
