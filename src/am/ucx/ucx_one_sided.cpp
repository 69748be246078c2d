#include "am/ucx/ucx_one_sided.hpp"

#include <cstdio>
#include <cstring>
#include <mutex>

#include "am/mpi/mpi_transport.hpp"
#include "am/ucx/ucp_world.hpp"

namespace weft::detail {

ucx_one_sided::ucx_one_sided(ucp_world& world, mpi_bootstrap& boot)
    : world_(world), boot_(boot) {}

ucx_one_sided::~ucx_one_sided() {
  std::lock_guard hold(world_.lock);
  for (region& r : regions_) {
    for (ucp_rkey_h k : r.rkey)
      if (k != nullptr) ucp_rkey_destroy(k);
    ucp_mem_unmap(world_.context(), r.memh);
  }
}

one_sided_ops::region_key ucx_one_sided::register_region(void* base, std::size_t bytes) {
  region r;
  r.bytes = bytes;
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS |
                  UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  mp.address = base;
  mp.length = bytes;
  mp.flags = UCP_MEM_MAP_NONBLOCK;  // touch and pin nothing now (see the header)
  mp.memory_type = UCS_MEMORY_TYPE_HOST;
  void* packed = nullptr;
  std::size_t packed_size = 0;
  {
    std::lock_guard hold(world_.lock);
    ucs_status_t s = ucp_mem_map(world_.context(), &mp, &r.memh);
    if (s != UCS_OK) ucx_fail("ucp_mem_map (registering a region)", s);
    s = ucp_rkey_pack(world_.context(), r.memh, &packed, &packed_size);
    if (s != UCS_OK) ucx_fail("ucp_rkey_pack", s);
  }
  // Each rank tells the others where its region starts and its key.
  std::vector<std::byte> mine(8 + packed_size);
  const std::uint64_t at = reinterpret_cast<std::uintptr_t>(base);
  std::memcpy(mine.data(), &at, 8);
  std::memcpy(mine.data() + 8, packed, packed_size);
  ucp_rkey_buffer_release(packed);
  auto all = boot_.allgather(mine, [this] {
    std::lock_guard hold(world_.lock);
    ucp_worker_progress(world_.worker());
  });
  for (auto& blob : all) {
    if (blob.size() < 8) {
      std::fprintf(stderr, "weft: ucx backend: a rank sent no remote key for a region\n");
      mpi_transport::abort_world(1);
    }
    std::uint64_t b;
    std::memcpy(&b, blob.data(), 8);
    r.base.push_back(b);
    r.packed.emplace_back(blob.begin() + 8, blob.end());
  }
  r.rkey.assign(all.size(), nullptr);
  std::lock_guard hold(world_.lock);
  regions_.push_back(std::move(r));
  return regions_.size() - 1;
}

ucx_one_sided::target ucx_one_sided::resolve(int rank, region_key key, std::size_t offset, std::size_t n,
                                             const char* op) {
  if (key >= regions_.size() || rank < 0 || static_cast<std::size_t>(rank) >= regions_[key].base.size() ||
      offset > regions_[key].bytes || n > regions_[key].bytes - offset) {
    std::fprintf(stderr, "weft: ucx backend: %s of %zu bytes at offset %zu of region %llu on rank %d is outside it\n",
                 op, n, offset, static_cast<unsigned long long>(key), rank);
    mpi_transport::abort_world(1);
  }
  region& r = regions_[key];
  const auto peer = static_cast<std::size_t>(rank);
  ucp_ep_h ep = world_.ep(rank);
  if (r.rkey[peer] == nullptr) {
    const ucs_status_t s = ucp_ep_rkey_unpack(ep, r.packed[peer].data(), &r.rkey[peer]);
    if (s != UCS_OK) ucx_fail("ucp_ep_rkey_unpack", s);
  }
  return {ep, r.base[peer] + offset, r.rkey[peer]};
}

void ucx_one_sided::put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) {
  ucs_status_ptr_t req;
  {
    std::lock_guard hold(world_.lock);
    const target t = resolve(rank, region, offset, n, "put");
    ucp_request_param_t p{};
    req = ucp_put_nbx(t.ep, src, n, t.address, t.rkey, &p);
  }
  // Locally complete (`src` may be reused); remotely at the next flush.
  world_.wait(req, "ucp_put_nbx");
}

void ucx_one_sided::get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) {
  ucs_status_ptr_t req;
  {
    std::lock_guard hold(world_.lock);
    const target t = resolve(rank, region, offset, n, "get");
    ucp_request_param_t p{};
    req = ucp_get_nbx(t.ep, dst, n, t.address, t.rkey, &p);
  }
  world_.wait(req, "ucp_get_nbx");  // the bytes are in `dst`
}

std::uint64_t ucx_one_sided::atomic(ucp_atomic_op_t op, int rank, region_key key, std::size_t offset,
                                    std::uint64_t operand, std::uint64_t reply, const char* what) {
  if (offset % 8 != 0) {
    std::fprintf(stderr, "weft: ucx backend: %s at offset %zu, which is not 8-byte aligned\n", what, offset);
    mpi_transport::abort_world(1);
  }
  ucs_status_ptr_t req;
  {
    std::lock_guard hold(world_.lock);
    const target t = resolve(rank, key, offset, 8, what);
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    p.datatype = ucp_dt_make_contig(8);
    p.reply_buffer = &reply;  // compare-and-swap: holds the new value going in (`operand`: the expected one)
    req = ucp_atomic_op_nbx(t.ep, op, &operand, 1, t.address, t.rkey, &p);
  }
  world_.wait(req, what);  // the old value is in `reply`
  return reply;
}

std::uint64_t ucx_one_sided::fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) {
  return atomic(UCP_ATOMIC_OP_ADD, rank, region, offset, add, 0, "fetch_add");
}

std::uint64_t ucx_one_sided::compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                                          std::uint64_t desired) {
  return atomic(UCP_ATOMIC_OP_CSWAP, rank, region, offset, expected, desired, "compare_swap");
}

std::uint64_t ucx_one_sided::swap(int rank, region_key region, std::size_t offset, std::uint64_t value) {
  return atomic(UCP_ATOMIC_OP_SWAP, rank, region, offset, value, 0, "swap");
}

void ucx_one_sided::flush(int rank) {
  ucs_status_ptr_t req;
  {
    std::lock_guard hold(world_.lock);
    ucp_request_param_t p{};
    req = ucp_ep_flush_nbx(world_.ep(rank), &p);
  }
  world_.wait(req, "ucp_ep_flush_nbx");
}

void ucx_one_sided::flush_all() {
  ucs_status_ptr_t req;
  {
    std::lock_guard hold(world_.lock);
    ucp_request_param_t p{};
    req = ucp_worker_flush_nbx(world_.worker(), &p);
  }
  world_.wait(req, "ucp_worker_flush_nbx");
}

}  // namespace weft::detail
