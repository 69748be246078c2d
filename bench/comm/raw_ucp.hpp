// The raw-UCP baseline of bench_latency (system ucp): the same windowed
// ping-pong as its raw MPI side, written directly on UCP active messages,
// so that weft's ucx backend can be compared with the library it runs on.
// Each chain is an active message whose 4-byte header names it; rank 1
// answers every ping, rank 0 sends a chain's next ping when its reply came,
// until K replies came on every chain. The receive callback only notes the
// chain (payloads that UCP moves by rendezvous are received into a buffer
// per chain first); the loop sends, after waiting for that chain's previous
// send, as the MPI side does. Worker addresses travel over MPI.
#pragma once
#include <mpi.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace comm_bench {

class raw_ucp {
 public:
  explicit raw_ucp(int me) : peer_(1 - me) {
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM;
    check(ucp_init(&p, nullptr, &ctx_), "ucp_init");
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    check(ucp_worker_create(ctx_, &wp, &worker_), "ucp_worker_create");
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id = 0;
    hp.cb = &raw_ucp::on_message;
    hp.arg = this;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    check(ucp_worker_set_am_recv_handler(worker_, &hp), "ucp_worker_set_am_recv_handler");
    ucp_address_t* mine = nullptr;
    std::size_t len = 0;
    check(ucp_worker_get_address(worker_, &mine, &len), "ucp_worker_get_address");
    int lens[2] = {0, 0};
    const int my_len = static_cast<int>(len);
    MPI_Allgather(&my_len, 1, MPI_INT, lens, 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<char> all(static_cast<std::size_t>(lens[0] + lens[1]));
    int offsets[2] = {0, lens[0]};
    MPI_Allgatherv(mine, my_len, MPI_BYTE, all.data(), lens, offsets, MPI_BYTE, MPI_COMM_WORLD);
    ucp_worker_release_address(worker_, mine);
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t*>(all.data() + offsets[peer_]);
    check(ucp_ep_create(worker_, &ep, &ep_), "ucp_ep_create");
  }
  ~raw_ucp() {
    // A flushing close (a forced one needs error handling on the
    // endpoint); the peer's close may need this worker's answers, so it
    // keeps progressing until both are through.
    ucp_request_param_t p{};
    wait(ucp_ep_close_nbx(ep_, &p));
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    for (int done = 0; !done;) {
      ucp_worker_progress(worker_);
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    }
    ucp_worker_destroy(worker_);
    ucp_cleanup(ctx_);
  }
  raw_ucp(const raw_ucp&) = delete;
  raw_ucp& operator=(const raw_ucp&) = delete;

  /// One measurement: w chains of k round trips of `size` bytes; seconds.
  double once(long size, long w, long k) {
    const auto chains = static_cast<std::size_t>(w);
    const std::vector<char> out(static_cast<std::size_t>(size), 'x');
    in_.assign(chains * static_cast<std::size_t>(size), 0);
    size_ = static_cast<std::size_t>(size);
    ids_.resize(chains);
    for (std::size_t c = 0; c < chains; ++c) ids_[c] = static_cast<int>(c);
    std::vector<void*> sends(chains, nullptr);
    std::vector<long> got(chains, 0);
    auto send = [&](std::size_t c) {
      wait(sends[c]);  // the chain's previous send
      ucp_request_param_t p{};
      sends[c] = ucp_am_send_nbx(ep_, 0, &ids_[c], sizeof(int), out.data(), out.size(), &p);
      if (UCS_PTR_IS_ERR(sends[c])) fail("ucp_am_send_nbx", UCS_PTR_STATUS(sends[c]));
    };
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = clk::now();
    if (peer_ == 1)
      for (std::size_t c = 0; c < chains; ++c) send(c);
    for (long left = w * k; left > 0;) {
      ucp_worker_progress(worker_);
      for (std::size_t i = 0; i < arrived_.size(); ++i, --left) {
        const auto c = static_cast<std::size_t>(arrived_[i]);
        const bool last = ++got[c] == k;
        if (peer_ == 0 || !last) send(c);
      }
      arrived_.clear();
    }
    for (void*& s : sends) wait(s);
    return seconds_since(t0);
  }

 private:
  [[noreturn]] static void fail(const char* what, ucs_status_t s) {
    std::fprintf(stderr, "raw ucp: %s: %s\n", what, ucs_status_string(s));
    std::exit(1);
  }
  static void check(ucs_status_t s, const char* what) {
    if (s != UCS_OK) fail(what, s);
  }
  void wait(void* request) {
    if (request == nullptr) return;
    if (UCS_PTR_IS_ERR(request)) fail("request", UCS_PTR_STATUS(request));
    while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker_);
    ucp_request_free(request);
  }
  static void received(void* request, ucs_status_t, std::size_t, void* self) {
    auto* u = static_cast<raw_ucp*>(self);
    // The chain whose rendezvous payload this was.
    for (auto it = u->pending_.begin(); it != u->pending_.end(); ++it)
      if (it->first == request) {
        u->arrived_.push_back(it->second);
        u->pending_.erase(it);
        break;
      }
    ucp_request_free(request);
  }
  static ucs_status_t on_message(void* self, const void* header, std::size_t, void* data, std::size_t length,
                                 const ucp_am_recv_param_t* param) {
    auto* u = static_cast<raw_ucp*>(self);
    const int chain = *static_cast<const int*>(header);
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
      u->arrived_.push_back(chain);  // eager: the payload was here during the callback
      return UCS_OK;
    }
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = &raw_ucp::received;
    p.user_data = u;
    void* r = ucp_am_recv_data_nbx(u->worker_, data, u->in_.data() + static_cast<std::size_t>(chain) * u->size_,
                                   length, &p);
    if (r == nullptr) u->arrived_.push_back(chain);
    else u->pending_.push_back({r, chain});
    return UCS_OK;
  }

  int peer_;
  ucp_context_h ctx_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h ep_ = nullptr;
  std::vector<int> ids_;        // header of each chain's messages
  std::vector<char> in_;        // rendezvous payloads, one slot per chain
  std::size_t size_ = 0;
  std::vector<int> arrived_;    // chains whose message came, in order
  std::vector<std::pair<void*, int>> pending_;  // rendezvous receives under way
};

}  // namespace comm_bench
