// Internal: one-sided operations of the ucx backend over UCP's RMA and
// 64-bit atomics. The target's workers take no part where the transport
// UCX picked for that rank moves the bytes itself: cma (process_vm_readv
// and writev) between processes of a host, verbs RDMA and network atomics
// between hosts. Atomics between processes of one host have no such
// transport in UCX 1.13 without xpmem or knem (posix and sysv shared memory
// reach only memory UCX allocated itself): UCP then emulates them with
// active messages that the target's progress answers (docs/DISTRIBUTED.md,
// "ucx backend").
//
// Every operation takes the UCP lock and progresses the worker while it
// waits: none may be called from the dispatcher (a message handler run
// inside progress), which holds that lock.
//
// register_region maps the range with UCP_MEM_MAP_NONBLOCK and packs its
// remote key: no page is touched or pinned up front (where the network
// needs registered memory, on-demand paging registers pages as they are
// used), so a symmetric heap reserved large and committed as it grows can
// be registered whole.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include <ucp/api/ucp.h>

#include "am/transport.hpp"

namespace weft::detail {

class mpi_bootstrap;
class ucp_world;

class ucx_one_sided final : public one_sided_ops {
 public:
  ucx_one_sided(ucp_world& world, mpi_bootstrap& boot);
  ~ucx_one_sided() override;

  region_key register_region(void* base, std::size_t bytes) override;
  void put(int rank, region_key region, std::size_t offset, const void* src, std::size_t n) override;
  void get(int rank, region_key region, std::size_t offset, void* dst, std::size_t n) override;
  std::uint64_t fetch_add(int rank, region_key region, std::size_t offset, std::uint64_t add) override;
  std::uint64_t compare_swap(int rank, region_key region, std::size_t offset, std::uint64_t expected,
                             std::uint64_t desired) override;
  std::uint64_t swap(int rank, region_key region, std::size_t offset, std::uint64_t value) override;
  void flush(int rank) override;
  void flush_all() override;
  /// Between processes of one host UCX 1.13 emulates RMA and atomics with
  /// messages the target's worker answers; only the user can say that the
  /// network does them in hardware (--weft:ucx-rma=on).
  bool target_passive() const noexcept override { return passive_; }
  void declare_passive(bool passive) noexcept { passive_ = passive; }

 private:
  struct region {
    ucp_mem_h memh = nullptr;
    std::size_t bytes = 0;
    std::vector<std::uint64_t> base;               // by rank
    std::vector<std::vector<std::byte>> packed;    // by rank: its packed remote key
    std::vector<ucp_rkey_h> rkey;                  // by rank: unpacked on first use
  };
  /// The endpoint, remote address and key for (rank, region, offset) of an
  /// access of `n` bytes; ends the job on a key or range that does not exist.
  /// With the UCP lock held.
  struct target {
    ucp_ep_h ep;
    std::uint64_t address;
    ucp_rkey_h rkey;
  };
  target resolve(int rank, region_key key, std::size_t offset, std::size_t n, const char* op);
  std::uint64_t atomic(ucp_atomic_op_t op, int rank, region_key key, std::size_t offset, std::uint64_t operand,
                       std::uint64_t reply, const char* what);

  ucp_world& world_;
  mpi_bootstrap& boot_;
  std::deque<region> regions_;  // by key (stable addresses while one is added)
  bool passive_ = false;
};

}  // namespace weft::detail
