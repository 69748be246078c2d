#include "am/ucx/ucp_world.hpp"

#include <cstdio>
#include <mutex>

#include "am/mpi/mpi_transport.hpp"

namespace weft::detail {

void ucx_fail(const char* what, ucs_status_t status) {
  std::fprintf(stderr, "weft: ucx backend: %s failed: %s\n", what, ucs_status_string(status));
  mpi_transport::abort_world(1);
}

namespace {

void check(ucs_status_t status, const char* what) {
  if (status != UCS_OK) ucx_fail(what, status);
}

}  // namespace

ucp_world::ucp_world(mpi_bootstrap& boot) : boot_(boot) {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_AMO64;
  params.mt_workers_shared = 0;
  const ucs_status_t made = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check(made, "ucp_init");
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  check(ucp_worker_create(context_, &wp, &worker_), "ucp_worker_create");
}

void ucp_world::connect() {
  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  check(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address");
  addresses_ = boot_.allgather({reinterpret_cast<const std::byte*>(address), length}, nullptr);
  ucp_worker_release_address(worker_, address);
  eps_.assign(addresses_.size(), nullptr);
}

ucp_world::~ucp_world() {
  close_endpoints();
  // Another rank's close may need this worker's answers: it keeps
  // progressing until every rank closed its endpoints.
  boot_.barrier([this] {
    std::lock_guard hold(lock);
    ucp_worker_progress(worker_);
  });
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

ucp_ep_h ucp_world::connect_to(int rank) {
  ucp_ep_h& e = eps_[static_cast<std::size_t>(rank)];
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  p.address = reinterpret_cast<const ucp_address_t*>(addresses_[static_cast<std::size_t>(rank)].data());
  check(ucp_ep_create(worker_, &p, &e), "ucp_ep_create");
  return e;
}

void ucp_world::wait(ucs_status_ptr_t request, const char* what) {
  if (request == nullptr) return;  // completed at once
  if (UCS_PTR_IS_ERR(request)) ucx_fail(what, UCS_PTR_STATUS(request));
  for (;;) {
    std::lock_guard hold(lock);
    const ucs_status_t status = ucp_request_check_status(request);
    if (status == UCS_INPROGRESS) {
      ucp_worker_progress(worker_);
      continue;
    }
    ucp_request_free(request);
    if (status != UCS_OK) ucx_fail(what, status);
    return;
  }
}

void ucp_world::close_endpoints() {
  // Flushing closes (a forced one needs error handling on the endpoint,
  // which weft does not ask for: a failing rank ends the job). Every rank
  // is past the teardown barrier: nothing travels any more but the closes.
  for (ucp_ep_h& e : eps_) {
    if (e == nullptr) continue;
    ucp_request_param_t p{};
    ucs_status_ptr_t r;
    {
      std::lock_guard hold(lock);
      r = ucp_ep_close_nbx(e, &p);
    }
    wait(r, "ucp_ep_close_nbx");
    e = nullptr;
  }
}

}  // namespace weft::detail
