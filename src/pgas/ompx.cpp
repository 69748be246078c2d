// DiOMP's C API (include/weft/ompx.h) on the pgas layer. Threads the
// runtime did not create (OpenMP's, the program's own) are bound to the
// process's rank on their first call, so the layer's calls find their rank.
#include "weft/ompx.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pgas/state.hpp"
#include "runtime/runtime_state.hpp"
#include "weft/weft.hpp"

namespace weft::pgas::detail {

namespace {

/// Makes the calling thread act for the process's rank.
void bind_thread() {
  if (weft::detail::on_worker() || weft::detail::home_scheduler() != nullptr) return;
  weft::detail::process_runtime* rt = weft::detail::runtime_state();
  if (rt == nullptr) {
    std::fputs("weft: ompx call before ompx_init (or after ompx_finalize)\n", stderr);
    std::abort();
  }
  weft::detail::home_scheduler() = rt->local[0].get();
}

/// Heap offset of `p`, a symmetric address as this rank sees it.
std::uint64_t symmetric_offset(const void* p, const char* call) {
  const process_pgas& pp = process();
  const rank_pgas& me = current();
  const auto* b = static_cast<const std::byte*>(p);
  if (b < me.base || b >= me.base + pp.segment) {
    char what[160];
    std::snprintf(what, sizeof what, "%s: address %p is not in the heap of rank %d (from ompx_alloc)", call, p,
                  me.rank);
    fail(what);
  }
  return static_cast<std::uint64_t>(b - me.base);
}

/// Thread-level holding of rank locks (ompx_lockt): one gate per target rank
/// lets one thread of this rank at a time go on to request the rank lock.
class thread_gate {
 public:
  void enter() {
    std::unique_lock g(mutex_);
    if (held_) {
      waiting_.emplace_back();
      future<void> turn = waiting_.back().get_future();
      g.unlock();
      turn.get();  // the leaving thread handed the gate over
      g.lock();
    }
    held_ = true;
    holder_ = std::this_thread::get_id();
  }
  /// False if the calling thread is not inside.
  bool leave() {
    std::unique_lock g(mutex_);
    if (!held_ || holder_ != std::this_thread::get_id()) return false;
    holder_ = {};
    if (waiting_.empty()) {
      held_ = false;
      return true;
    }
    promise<void> next = std::move(waiting_.front());
    waiting_.pop_front();
    g.unlock();
    next.set_value();
    return true;
  }

 private:
  std::mutex mutex_;
  bool held_ = false;
  std::thread::id holder_;
  std::deque<promise<void>> waiting_;
};

std::mutex g_gates_mutex;
std::vector<std::unique_ptr<thread_gate>> g_gates;  // by target rank; for this process's rank

thread_gate& gate_for(int rank) {
  std::lock_guard g(g_gates_mutex);
  const int n = process().nranks;
  if (g_gates.size() != static_cast<std::size_t>(n)) {
    g_gates.clear();
    for (int r = 0; r < n; ++r) g_gates.push_back(std::make_unique<thread_gate>());
  }
  if (rank < 0 || rank >= n)
    fail("ompx_lockt of rank " + std::to_string(rank) + ", which does not exist (" + std::to_string(n) + " ranks)");
  return *g_gates[static_cast<std::size_t>(rank)];
}

template <class T>
T combine(T a, T b, ompx_op_t op) {
  switch (op) {
    case OMPX_SUM: return a + b;
    case OMPX_PROD: return a * b;
    case OMPX_MIN: return b < a ? b : a;
    case OMPX_MAX: return a < b ? b : a;
  }
  fail("ompx_allreduce: unknown operation " + std::to_string(static_cast<int>(op)));
}

template <class T>
void allreduce_as(const void* src, void* dst, std::size_t count, ompx_op_t op) {
  std::vector<T> v(count);
  if (count != 0) std::memcpy(v.data(), src, count * sizeof(T));
  v = weft::allreduce(v, [op](std::vector<T> a, const std::vector<T>& b) {
    if (a.size() != b.size()) fail("ompx_allreduce with different counts on different ranks");
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = combine(a[i], b[i], op);
    return a;
  });
  if (count != 0) std::memcpy(dst, v.data(), count * sizeof(T));
}

std::int64_t atomic_i64(int rank, std::int64_t* dst, weft::detail::pgas::atomic_op op, std::int64_t a,
                        std::int64_t b, const char* call) {
  bind_thread();
  const std::uint64_t off = symmetric_offset(dst, call);
  using namespace weft::detail::pgas;
  return from_bits<std::int64_t>(atomic(rank, off, atomic_type::i64, op, to_bits(a), to_bits(b)).get());
}

}  // namespace

}  // namespace weft::pgas::detail

using namespace weft::pgas::detail;

extern "C" {

int ompx_init(int* argc, char*** argv) {
  weft::init(*argc, *argv);
  if (weft::detail::runtime_state()->local.size() != 1) {
    std::fputs("weft: ompx programs run one rank per process: start them with mpiexec -n N "
               "(--weft:ranks=N puts several ranks in one process, which needs weft::run)\n", stderr);
    std::exit(2);
  }
  return 0;
}

void ompx_finalize(void) {
  bind_thread();
  weft::fence();
  weft::finalize();
}

int ompx_rank(void) {
  bind_thread();
  return weft::rank();
}

int ompx_nranks(void) { return weft::nranks(); }

void* ompx_alloc(size_t bytes) {
  bind_thread();
  const std::uint64_t off = weft::detail::pgas::allocate_symmetric(bytes);
  return current().base + off;
}

void ompx_free(void* p) {
  bind_thread();
  weft::detail::pgas::free_symmetric(symmetric_offset(p, "ompx_free"));
}

void ompx_put(int rank, void* dst, const void* src, size_t bytes) {
  bind_thread();
  (void)weft::detail::pgas::put_bytes(rank, symmetric_offset(dst, "ompx_put"), src, bytes, false);
}

void ompx_get(void* dst, int rank, const void* src, size_t bytes) {
  bind_thread();
  (void)weft::detail::pgas::get_bytes(rank, symmetric_offset(src, "ompx_get"), dst, bytes);
}

void ompx_waitRMA(ompx_event_t kind) {
  bind_thread();
  if (kind == OMPX_EV_PUT)
    weft::wait_puts();
  else
    weft::wait_gets();
}

void ompx_waitALLRMA(void) {
  bind_thread();
  weft::fence();
}

void ompx_barrier(void) {
  bind_thread();
  weft::fence();
  weft::barrier();
}

void ompx_lock(int rank) {
  bind_thread();
  weft::global_lock::of_rank(rank).lock();
}

void ompx_unlock(int rank) {
  bind_thread();
  weft::global_lock::of_rank(rank).unlock();
}

void ompx_lockt(int rank) {
  bind_thread();
  gate_for(rank).enter();
  weft::global_lock::of_rank(rank).lock();
}

void ompx_unlockt(int rank) {
  bind_thread();
  thread_gate& gate = gate_for(rank);
  weft::global_lock::of_rank(rank).unlock();
  if (!gate.leave())
    fail("ompx_unlockt(" + std::to_string(rank) + ") on rank " + std::to_string(weft::rank()) +
         " by a thread that does not hold the lock through ompx_lockt");
}

void ompx_bcast(void* data, size_t bytes, int root) {
  bind_thread();
  std::vector<std::byte> v(bytes);
  if (bytes != 0) std::memcpy(v.data(), data, bytes);
  v = weft::broadcast(v, root);
  if (v.size() != bytes) fail("ompx_bcast with different sizes on different ranks");
  if (bytes != 0) std::memcpy(data, v.data(), bytes);
}

void ompx_allreduce(const void* src, void* dst, size_t count, ompx_dt_t dt, ompx_op_t op) {
  bind_thread();
  switch (dt) {
    case OMPX_INT32: return allreduce_as<std::int32_t>(src, dst, count, op);
    case OMPX_INT64: return allreduce_as<std::int64_t>(src, dst, count, op);
    case OMPX_UINT32: return allreduce_as<std::uint32_t>(src, dst, count, op);
    case OMPX_UINT64: return allreduce_as<std::uint64_t>(src, dst, count, op);
    case OMPX_FLOAT: return allreduce_as<float>(src, dst, count, op);
    case OMPX_DOUBLE: return allreduce_as<double>(src, dst, count, op);
  }
  fail("ompx_allreduce: unknown data type " + std::to_string(static_cast<int>(dt)));
}

int64_t ompx_atomic_fetch_add_i64(int rank, int64_t* dst, int64_t value) {
  return atomic_i64(rank, dst, weft::detail::pgas::atomic_op::fetch_add, value, 0, "ompx_atomic_fetch_add_i64");
}

int64_t ompx_atomic_cas_i64(int rank, int64_t* dst, int64_t expected, int64_t desired) {
  return atomic_i64(rank, dst, weft::detail::pgas::atomic_op::compare_exchange, expected, desired,
                    "ompx_atomic_cas_i64");
}

int omp_get_rank_num(void) { return ompx_rank(); }
int omp_get_num_ranks(void) { return ompx_nranks(); }
void* llvm_omp_distributed_alloc(size_t bytes) { return ompx_alloc(bytes); }
void diomp_barrier(void) { ompx_barrier(); }
void diomp_waitALLRMA(void) { ompx_waitALLRMA(); }
void ompx_fence(void) { ompx_waitALLRMA(); }

}  // extern "C"
