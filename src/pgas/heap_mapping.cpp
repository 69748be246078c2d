#include "pgas/heap_mapping.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "am/transport.hpp"
#include "runtime/runtime_state.hpp"

namespace weft::pgas::detail {

namespace {

[[noreturn]] void cannot_map(const char* what, std::size_t bytes, int err) {
  fail(std::string("cannot ") + what + " a heap of " + std::to_string(bytes) + " bytes: " + std::strerror(err) +
       " (--weft:segment sets the size)");
}

std::byte* map_region(int fd, std::size_t bytes) {
  const int flags = (fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED) | MAP_NORESERVE;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (p == MAP_FAILED) cannot_map("map", bytes, errno);
  return static_cast<std::byte*>(p);
}

}  // namespace

void map_private_heaps(process_pgas& p) {
  for (std::size_t i = 0; i < p.local.size(); ++i) {
    std::byte* b = map_region(-1, p.segment);
    p.maps.push_back({b, p.segment});
    p.views[static_cast<std::size_t>(p.first_rank) + i] = b;
  }
}

namespace {

/// Names every rank's heap object: the job is named by its rank 0's process
/// id and host, which no other job running at the same time shares.
std::string object_name(std::uint64_t job, std::uint64_t host, int rank) {
  return "/weft-heap." + std::to_string(job) + "." + std::to_string(host % 1000000007) + "." + std::to_string(rank);
}

std::uint64_t host_hash() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::uint64_t h = 1469598103934665603ull;
  for (const char* c = name; *c != 0; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  return h >> 1;  // the sum over ranks below must not overflow
}

}  // namespace

namespace {
std::string g_own_name;  // this rank's object, until every peer opened it
std::uint64_t g_job[2];
}  // namespace

void map_own_shared_heap(process_pgas& p, weft::detail::process_runtime& rt) {
  weft::detail::am_transport& t = *rt.transports[0];
  const int me = p.first_rank;
  const bool root = me == 0;
  const auto job = t.global_sum({root ? static_cast<std::uint64_t>(getpid()) : 0, root ? host_hash() : 0, p.segment});
  if (job[2] != p.segment * static_cast<std::uint64_t>(p.nranks))
    fail("the ranks were started with different --weft:segment sizes (this rank: " + std::to_string(p.segment) +
         " bytes); symmetric allocation needs the same size everywhere");
  const std::string mine = object_name(job[0], job[1], me);
  const int fd = shm_open(mine.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) cannot_map(("create shared memory " + mine + " for").c_str(), p.segment, errno);
  if (ftruncate(fd, static_cast<off_t>(p.segment)) != 0) {
    const int err = errno;
    shm_unlink(mine.c_str());
    cannot_map("size", p.segment, err);
  }
  std::byte* b = map_region(fd, p.segment);
  close(fd);
  p.maps.push_back({b, p.segment});
  p.views[static_cast<std::size_t>(me)] = b;
  g_own_name = mine;
  g_job[0] = job[0];
  g_job[1] = job[1];
}

void map_node_peers(process_pgas& p, weft::detail::process_runtime& rt) {
  weft::detail::am_transport& t = *rt.transports[0];
  const int me = p.first_rank;
  const std::uint64_t job[2] = {g_job[0], g_job[1]};
  t.global_sum({0, 0, 0});  // every object exists
  // The transport's node (the host, or a --weft:node-size group of it)
  // is mapped; every other rank is reached through messages, even where
  // this process could open its object.
  for (int r = 0; r < p.nranks; ++r) {
    if (r == me || !t.same_node(r)) continue;
    const int peer = shm_open(object_name(job[0], job[1], r).c_str(), O_RDWR, 0);
    if (peer < 0) continue;
    struct stat st {};
    if (fstat(peer, &st) == 0 && static_cast<std::size_t>(st.st_size) == p.segment) {
      std::byte* v = map_region(peer, p.segment);
      p.maps.push_back({v, p.segment});
      p.views[static_cast<std::size_t>(r)] = v;
    }
    close(peer);
  }
  t.global_sum({0, 0, 0});  // everyone mapped what it could: the names can go
  shm_unlink(g_own_name.c_str());
  g_own_name.clear();
}

void unmap_heaps(process_pgas& p) noexcept {
  for (const mapping& m : p.maps) munmap(m.base, m.bytes);
  p.maps.clear();
}

}  // namespace weft::pgas::detail
