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

/// Streams `count` records to every other rank on the node through rings
/// of `capacity` bytes, reading what the others send meanwhile.
void stream(std::size_t capacity, std::size_t longest, std::uint64_t count) {
  MPI_Comm node = node_comm();
  {
    node_rings rings(node, capacity);
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
  }  // collective destruction
  MPI_Comm_free(&node);
}

TEST(NodeRings, SmallRecordsWrapAndRefill) { stream(4096, 200, 50000); }

TEST(NodeRings, RecordsUpToHalfTheRing) { stream(8192, 8192 / 2 - 16, 4000); }

TEST(NodeRings, EmptyUntilWritten) {
  MPI_Comm node = node_comm();
  {
    node_rings rings(node, 4096);
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
