// --weft:progress: which drive each option gives a rank, from what its paths
// to other ranks need (runtime/progress_drive.hpp), and the progress
// thread's naps.
#include <gtest/gtest.h>

#include <memory>

#include "am/transport.hpp"
#include "runtime/progress_drive.hpp"
#include "sched/scheduler.hpp"

namespace weft::detail {
namespace {

/// One-sided operations that only say whether they are passive.
class fake_one_sided final : public one_sided_ops {
 public:
  explicit fake_one_sided(bool passive) : passive_(passive) {}
  bool target_passive() const noexcept override { return passive_; }
  region_key register_region(void*, std::size_t) override { return 0; }
  void put(int, region_key, std::size_t, const void*, std::size_t) override {}
  void get(int, region_key, std::size_t, void*, std::size_t) override {}
  std::uint64_t fetch_add(int, region_key, std::size_t, std::uint64_t) override { return 0; }
  std::uint64_t compare_swap(int, region_key, std::size_t, std::uint64_t, std::uint64_t) override { return 0; }
  std::uint64_t swap(int, region_key, std::size_t, std::uint64_t) override { return 0; }
  void flush(int) override {}
  void flush_all() override {}

 private:
  bool passive_;
};

/// Rank 0 of `size` ranks whose nodes are groups of `node_size` (0: one
/// node), with or without one-sided operations.
class fake_transport final : public am_transport {
 public:
  fake_transport(int size, int node_size, fake_one_sided* os) : size_(size), node_size_(node_size), os_(os) {}
  void send(int, am_message&&) override {}
  bool progress() override { return false; }
  job_shape shape() const noexcept override { return {0, size_, 0, size_}; }
  bool same_node(int rank) const noexcept override { return node_size_ == 0 || rank / node_size_ == 0; }
  std::array<std::uint64_t, 3> global_sum(std::array<std::uint64_t, 3> local) override { return local; }
  void attach_publisher(scheduler&) noexcept override {}
  one_sided_ops* one_sided() noexcept override { return os_; }

 private:
  int size_, node_size_;
  fake_one_sided* os_;
};

TEST(ProgressDrive, AutoStartsAThreadOnlyWhereAPathBetweenNodesNeedsTheTarget) {
  const progress_drive backstop = choose_progress_drive("auto", {.other_nodes = true, .passive_one_sided = false});
  EXPECT_TRUE(backstop.workers);
  EXPECT_TRUE(backstop.thread);
  for (const remote_paths p : {remote_paths{false, false}, remote_paths{false, true}, remote_paths{true, true}}) {
    const progress_drive d = choose_progress_drive("auto", p);
    EXPECT_TRUE(d.workers);
    EXPECT_FALSE(d.thread) << "other nodes " << p.other_nodes << ", passive " << p.passive_one_sided;
  }
}

TEST(ProgressDrive, ExplicitChoicesIgnoreThePaths) {
  for (const remote_paths p : {remote_paths{false, false}, remote_paths{true, false}, remote_paths{true, true}}) {
    const progress_drive t = choose_progress_drive("thread", p);
    EXPECT_FALSE(t.workers);
    EXPECT_TRUE(t.thread);
    const progress_drive w = choose_progress_drive("worker", p);
    EXPECT_TRUE(w.workers);
    EXPECT_FALSE(w.thread);
  }
}

TEST(ProgressDrive, PathsComeFromTheTransport) {
  fake_one_sided passive(true), served(false);
  // The real node: every rank on it, whatever the one-sided operations.
  EXPECT_FALSE(remote_paths_of(*std::make_unique<fake_transport>(4, 0, nullptr)).other_nodes);
  // One rank alone is on no other node's path, even as a node of one.
  EXPECT_FALSE(remote_paths_of(*std::make_unique<fake_transport>(1, 1, nullptr)).other_nodes);
  // node-size=1 (or 2 of 4 ranks): the other ranks are on other nodes.
  const remote_paths none = remote_paths_of(*std::make_unique<fake_transport>(4, 1, nullptr));
  EXPECT_TRUE(none.other_nodes);
  EXPECT_FALSE(none.passive_one_sided);
  EXPECT_TRUE(remote_paths_of(*std::make_unique<fake_transport>(4, 2, nullptr)).other_nodes);
  // One-sided operations count only when they need no action of the target
  // (mpi and ucx with rma=auto offer them, not passive).
  EXPECT_FALSE(remote_paths_of(*std::make_unique<fake_transport>(4, 1, &served)).passive_one_sided);
  EXPECT_TRUE(remote_paths_of(*std::make_unique<fake_transport>(4, 1, &passive)).passive_one_sided);
}

TEST(ProgressDrive, AnIdleThreadNapsLongerWhenWorkersShareCores) {
  const long worker_nap = sched_options{}.idle_nap_ns;
  // The only driver: hot after traffic, then 20 µs naps, stretched by how
  // many workers share a core.
  const progress_naps alone = naps_for({.workers = false, .thread = true}, worker_nap);
  EXPECT_GT(alone.spin_polls, 0);
  EXPECT_EQ(alone.max_ns, alone.min_ns);
  EXPECT_EQ(naps_for({.workers = false, .thread = true}, 4 * worker_nap).max_ns, 4 * alone.min_ns);
  // The backstop next to polling workers: no spinning, naps up to the
  // workers' own.
  const progress_naps backstop = naps_for({.workers = true, .thread = true}, worker_nap);
  EXPECT_EQ(backstop.spin_polls, 0);
  EXPECT_EQ(backstop.yield_polls, 0);
  EXPECT_EQ(backstop.max_ns, worker_nap);
  EXPECT_EQ(naps_for({.workers = true, .thread = true}, 100 * worker_nap).max_ns, 100 * worker_nap);
}

}  // namespace
}  // namespace weft::detail
