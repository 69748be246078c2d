#include "am/mpi/node_rings.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace weft::detail {

namespace {

constexpr std::uint64_t wrap_marker = ~std::uint64_t{0};  // "continue at the ring's start"
constexpr std::size_t record_prefix = 8;                  // the record's length, a std::uint64_t

constexpr std::uint64_t align8(std::uint64_t n) noexcept { return (n + 7) & ~std::uint64_t{7}; }

}  // namespace

/// At the start of each ring; the data follows. Head and tail on lines of
/// their own: the writer's stores to one do not evict the reader's copy of
/// the other. Both count bytes since the start and never wrap.
struct node_rings::ring_header {
  alignas(64) std::atomic<std::uint64_t> tail{0};  // written by the producer
  alignas(64) std::atomic<std::uint64_t> head{0};  // written by the consumer
};
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free,
              "the rings are shared between processes: their counters must be lock-free");

std::string node_rings_segment_name(std::uint64_t job, int rank) {
  char name[48];
  std::snprintf(name, sizeof name, "/weft-%016llx-%d", static_cast<unsigned long long>(job), rank);
  return name;
}

void* node_rings::map_segment(const std::string& name, std::size_t bytes, bool create, std::string& error) noexcept {
  const int fd = shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  const char* step = "shm_open";
  int err = 0;
  void* base = MAP_FAILED;
  if (fd < 0) {
    err = errno;
  } else {
    // posix_fallocate, not only ftruncate: the pages are taken now, so a
    // /dev/shm too small fails here rather than with SIGBUS at a later write.
    if (create) {
      if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        err = errno;
        step = "ftruncate";
      } else if (const int e = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); e != 0) {
        err = e;
        step = "posix_fallocate";
      }
    }
    if (err == 0) {
      base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (base == MAP_FAILED) {
        err = errno;
        step = "mmap";
      }
    }
    close(fd);
    if (base == MAP_FAILED && create) shm_unlink(name.c_str());
  }
  if (base != MAP_FAILED) return base;
  char why[512];
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0)
    std::snprintf(why, sizeof why, "%s(/dev/shm%s, %zu bytes): %s (/dev/shm: %llu MiB free of %llu MiB)", step,
                  name.c_str(), bytes, std::strerror(err),
                  static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize >> 20,
                  static_cast<unsigned long long>(fs.f_blocks) * fs.f_frsize >> 20);
  else
    std::snprintf(why, sizeof why, "%s(/dev/shm%s, %zu bytes): %s (/dev/shm: %s)", step, name.c_str(), bytes,
                  std::strerror(err), std::strerror(errno));
  error = why;
  return nullptr;
}

namespace {

/// Every rank of `comm` says whether its step worked; all learn whether all
/// did. Also the barrier between the steps of the set-up.
bool all_succeeded(MPI_Comm comm, bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

/// Ends the process with status 1 after a failed set-up step, once every
/// rank has unlinked its segment (the first rank to end makes mpiexec kill
/// the others, which may then end with its signal); `error` is empty on the
/// ranks whose own step worked (they leave quietly: the failing rank says why).
[[noreturn]] void give_up(MPI_Comm comm, const std::string& error) {
  if (!error.empty())
    std::fprintf(stderr,
                 "weft: cannot set up the shared-memory rings between the ranks of this node: %s\n"
                 "weft: make /dev/shm larger, or run with --weft:node-rings=0 (MPI only)\n",
                 error.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  MPI_Barrier(comm);
  std::_Exit(1);
}

}  // namespace

node_rings::node_rings(MPI_Comm comm, std::span<const int> node_ranks, std::uint64_t job, std::size_t capacity)
    : cap_(capacity) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  n_ = static_cast<int>(node_ranks.size());
  me_ = static_cast<int>(std::find(node_ranks.begin(), node_ranks.end(), rank) - node_ranks.begin());
  const std::size_t stride = sizeof(ring_header) + cap_;
  segment_bytes_ = sizeof(sleep_slot) + stride * static_cast<std::size_t>(n_ - 1);
  segments_.assign(static_cast<std::size_t>(n_), nullptr);
  const std::string own_name = node_rings_segment_name(job, rank);
  std::string error;
  // A rank alone on its node makes nothing, but takes part in the barriers.
  void* base = n_ > 1 ? map_segment(own_name, segment_bytes_, true, error) : nullptr;
  if (base != nullptr) {
    segments_[static_cast<std::size_t>(me_)] = base;
    // The sleep slot, then the rings this rank reads, empty; the barrier
    // publishes that.
    own_slot_ = new (base) sleep_slot;
    for (int p = 0; p < n_ - 1; ++p)
      new (static_cast<std::byte*>(base) + sizeof(sleep_slot) + stride * static_cast<std::size_t>(p)) ring_header;
  }
  if (!all_succeeded(comm, error.empty())) {
    if (base != nullptr) shm_unlink(own_name.c_str());
    give_up(comm, error);
  }
  for (int peer = 0; peer < n_ && error.empty(); ++peer)
    if (peer != me_)
      segments_[static_cast<std::size_t>(peer)] =
          map_segment(node_rings_segment_name(job, node_ranks[static_cast<std::size_t>(peer)]), segment_bytes_, false,
                      error);
  // Unlinked once every peer has mapped it (or given up): the mappings keep
  // the memory, and no name outlives the set-up.
  const bool mapped = all_succeeded(comm, error.empty());
  if (base != nullptr) shm_unlink(own_name.c_str());
  if (!mapped) give_up(comm, error);
  out_.resize(static_cast<std::size_t>(n_));
  in_.resize(static_cast<std::size_t>(n_));
  auto* rings = static_cast<std::byte*>(base) + sizeof(sleep_slot);
  for (int peer = 0; peer < n_; ++peer) {
    if (peer == me_) continue;
    auto* theirs = static_cast<std::byte*>(segments_[static_cast<std::size_t>(peer)]);
    auto* out = theirs + sizeof(sleep_slot) + stride * static_cast<std::size_t>(slot(peer, me_));
    auto* in = rings + stride * static_cast<std::size_t>(slot(me_, peer));
    out_[static_cast<std::size_t>(peer)] =
        out_ring{reinterpret_cast<ring_header*>(out), reinterpret_cast<sleep_slot*>(theirs), out + sizeof(ring_header)};
    in_[static_cast<std::size_t>(peer)] = in_ring{reinterpret_cast<ring_header*>(in), in + sizeof(ring_header)};
  }
}

node_rings::~node_rings() {
  // Local: a peer still writing into this rank's rings keeps its own
  // mapping of them, and the memory goes when the last mapping does.
  for (void* s : segments_)
    if (s != nullptr) munmap(s, segment_bytes_);
}

bool node_rings::try_write(int to, const std::byte* bytes, std::size_t n) noexcept {
  out_ring& r = out_[static_cast<std::size_t>(to)];
  const std::uint64_t need = record_prefix + align8(n);
  std::uint64_t t = r.tail;
  std::uint64_t at = t & (cap_ - 1);
  // A record is contiguous: one that would run past the end starts over
  // at the beginning, after a marker (the rest of the ring is skipped).
  const std::uint64_t skip = at + need > cap_ ? cap_ - at : 0;
  if (t + skip + need - r.head_seen > cap_) {
    r.head_seen = r.h->head.load(std::memory_order_acquire);
    if (t + skip + need - r.head_seen > cap_) return false;
  }
  if (skip != 0) {
    std::memcpy(r.data + at, &wrap_marker, sizeof wrap_marker);
    t += skip;
    at = 0;
  }
  const std::uint64_t len = n;
  std::memcpy(r.data + at, &len, sizeof len);
  std::memcpy(r.data + at + record_prefix, bytes, n);
  r.tail = t + need;
  r.h->tail.store(r.tail, std::memory_order_release);  // the bytes above become the reader's
  wake_shared_sleeper(*r.reader);
  return true;
}

std::span<const std::byte> node_rings::peek(int from, bool& corrupt) noexcept {
  in_ring& r = in_[static_cast<std::size_t>(from)];
  if (r.head == r.tail_seen) {
    r.tail_seen = r.h->tail.load(std::memory_order_acquire);
    if (r.head == r.tail_seen) return {};
  }
  std::uint64_t at = r.head & (cap_ - 1);
  std::uint64_t len = 0;
  std::memcpy(&len, r.data + at, sizeof len);
  if (len == wrap_marker) {
    r.head += cap_ - at;
    at = 0;
    std::memcpy(&len, r.data, sizeof len);
  }
  if (len > cap_ - record_prefix || r.head + record_prefix + align8(len) > r.tail_seen) {
    corrupt = true;
    return {};
  }
  r.taken = record_prefix + align8(len);
  return {r.data + at + record_prefix, static_cast<std::size_t>(len)};
}

void node_rings::pop(int from) noexcept {
  in_ring& r = in_[static_cast<std::size_t>(from)];
  r.head += r.taken;
  r.taken = 0;
  r.h->head.store(r.head, std::memory_order_release);  // the writer may reuse the bytes
}

}  // namespace weft::detail
