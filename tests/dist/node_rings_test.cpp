// The mpi backend's shared-memory rings on their own (am/node_rings.hpp),
// run under mpiexec: every rank streams records of many lengths to every
// other rank on its node through small rings, so the rings fill, refuse,
// wrap around and drain again all the time, and checks that each record
// arrives once, whole and in order.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include "am/mpi/node_rings.hpp"

using weft::detail::node_rings;

namespace {

/// The bytes of record `seq` from `from` to `to`: its length varies from 1
/// to `longest` bytes; the first eight say which record it is.
std::vector<std::byte> record(int from, int to, std::uint64_t seq, std::size_t longest) {
  const std::size_t n = 1 + (seq * 7919 + static_cast<std::uint64_t>(from) * 131) % longest;
  std::vector<std::byte> r(n);
  for (std::size_t i = 0; i < n; ++i)
    r[i] = static_cast<std::byte>((seq * 31 + i * 17 + static_cast<std::uint64_t>(from * 5 + to)) & 0xff);
  if (n >= 8) std::memcpy(r.data(), &seq, 8);
  return r;
}

/// Ends the job at once: the other ranks would wait forever for records
/// this one no longer reads (a failed ASSERT only returns).
[[noreturn]] void give_up(const std::string& why) {
  ADD_FAILURE() << why;
  std::fprintf(stderr, "node_rings_test: %s\n", why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

MPI_Comm node_comm() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  return node;
}

/// The world ranks on `node`, ascending.
std::vector<int> world_ranks_of(MPI_Comm node) {
  int n = 0;
  MPI_Comm_size(node, &n);
  std::vector<int> local(static_cast<std::size_t>(n)), world(local.size());
  for (int i = 0; i < n; ++i) local[static_cast<std::size_t>(i)] = i;
  MPI_Group node_group, world_group;
  MPI_Comm_group(node, &node_group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_translate_ranks(node_group, n, local.data(), world_group, world.data());
  MPI_Group_free(&node_group);
  MPI_Group_free(&world_group);
  return world;
}

/// A job number every rank agrees on, new for each set of rings.
std::uint64_t fresh_job() {
  std::uint64_t job = static_cast<std::uint64_t>(getpid()) * 1000003u + static_cast<std::uint64_t>(std::rand());
  MPI_Bcast(&job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return job;
}

/// Whether /dev/shm holds a segment of `job`.
bool segment_left(std::uint64_t job, int world_size) {
  for (int r = 0; r < world_size; ++r)
    if (access(("/dev/shm" + weft::detail::node_rings_segment_name(job, r)).c_str(), F_OK) == 0) return true;
  return false;
}

/// Streams `count` records to every other rank on the node through rings
/// of `capacity` bytes, reading what the others send meanwhile.
void stream(std::size_t capacity, std::size_t longest, std::uint64_t count) {
  MPI_Comm node = node_comm();
  {
    node_rings rings(MPI_COMM_WORLD, world_ranks_of(node), fresh_job(), capacity);
    const int me = rings.local_rank(), n = rings.local_size();
    std::vector<std::uint64_t> sent(static_cast<std::size_t>(n), 0), got(static_cast<std::size_t>(n), 0);
    sent[static_cast<std::size_t>(me)] = got[static_cast<std::size_t>(me)] = count;  // none to ourselves
    std::uint64_t refused = 0;
    auto done = [&] {
      for (int p = 0; p < n; ++p)
        if (sent[static_cast<std::size_t>(p)] < count || got[static_cast<std::size_t>(p)] < count) return false;
      return true;
    };
    while (!done()) {
      for (int p = 0; p < n; ++p) {
        auto& s = sent[static_cast<std::size_t>(p)];
        // Write until the ring refuses: it fills every round.
        while (s < count) {
          const auto r = record(me, p, s, longest);
          if (!rings.try_write(p, r.data(), r.size())) {
            ++refused;
            break;
          }
          ++s;
        }
      }
      for (int p = 0; p < n; ++p) {
        if (p == me) continue;
        auto& g = got[static_cast<std::size_t>(p)];
        for (;;) {
          bool corrupt = false;
          const auto rec = rings.peek(p, corrupt);
          const std::string which = "record " + std::to_string(g) + " from local rank " + std::to_string(p);
          if (corrupt) give_up(which + ": the ring holds an impossible length");
          if (rec.empty()) break;
          if (g >= count) give_up(which + ": more records than were sent");
          const auto want = record(p, me, g, longest);
          if (rec.size() != want.size() || std::memcmp(rec.data(), want.data(), want.size()) != 0)
            give_up(which + ": wrong length or bytes");
          rings.pop(p);
          ++g;
        }
      }
    }
    if (n > 1) {
      EXPECT_GT(refused, 0u) << "the rings never filled: the test did not test that";
    }
    MPI_Barrier(node);
  }
  MPI_Comm_free(&node);
}

TEST(NodeRings, SmallRecordsWrapAndRefill) { stream(4096, 200, 50000); }

TEST(NodeRings, RecordsUpToHalfTheRing) { stream(8192, 8192 / 2 - 16, 4000); }

TEST(NodeRings, EmptyUntilWritten) {
  MPI_Comm node = node_comm();
  {
    node_rings rings(MPI_COMM_WORLD, world_ranks_of(node), fresh_job(), 4096);
    for (int p = 0; p < rings.local_size(); ++p) {
      if (p == rings.local_rank()) continue;
      bool corrupt = false;
      EXPECT_TRUE(rings.peek(p, corrupt).empty());
      EXPECT_FALSE(corrupt);
    }
    MPI_Barrier(node);
  }
  MPI_Comm_free(&node);
}

// Each rank unlinks its segment as soon as every rank has mapped it: once
// all have constructed their rings, a crash leaves nothing in /dev/shm.
TEST(NodeRings, NoSegmentOutlivesTheSetUp) {
  MPI_Comm node = node_comm();
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const std::uint64_t job = fresh_job();
  {
    node_rings rings(MPI_COMM_WORLD, world_ranks_of(node), job, 4096);
    MPI_Barrier(MPI_COMM_WORLD);  // every rank has returned from the constructor
    EXPECT_FALSE(segment_left(job, world_size));
    MPI_Barrier(node);
  }
  MPI_Comm_free(&node);
}

// Run on its own (node_rings_full_shm): rank 0 cannot grow its segment (a
// file size limit stands in for a full /dev/shm), so every rank must end
// with status 1 rather than wait for it, and rank 0 must say why.
TEST(NodeRings, DISABLED_SegmentThatCannotGrowEndsEveryRank) {
  MPI_Comm node = node_comm();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // ftruncate then fails with EFBIG
    const rlimit small{1024, 1024};
    setrlimit(RLIMIT_FSIZE, &small);
  }
  node_rings rings(MPI_COMM_WORLD, world_ranks_of(node), fresh_job(), 4096);
  ADD_FAILURE() << "the rings were set up";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
