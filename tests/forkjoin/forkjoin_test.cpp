// Fork-join across ranks: root_exec, parallel_invoke and spawn on every
// rank count, both backends, stealing through shared memory and by message.
// Where a test needs a task to run on another rank, the task that stays on
// rank 0 waits until another rank has taken one (bounded: past the bound it
// fails with a message instead of hanging), so the test does not depend on
// how long tasks take.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "spmd_main.hpp"
#include "weft/forkjoin.hpp"

using weft::test::on_every_rank;

namespace {

long fib(int n) {
  if (n < 2) return n;
  auto [a, b] = weft::parallel_invoke([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
  return a + b;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

/// Keeps a worker busy for `ms` milliseconds (so idle ranks steal meanwhile).
long busy(int ms, long tag) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  volatile long x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
  return tag;
}

std::uint64_t stolen_everywhere() {
  return weft::allreduce(weft::steal_stats().stolen(), std::plus<>());
}

/// Collective: `n` counters of tasks that ran off rank 0, zeroed, on rank 0.
weft::global_ptr<std::int64_t> new_taken_counter(std::size_t n = 1) {
  const weft::global_ptr<std::int64_t> counter = weft::allocate_symmetric<std::int64_t>(n).on(0);
  if (weft::rank() == 0)
    for (std::size_t i = 0; i < n; ++i) counter.local()[i] = 0;
  weft::barrier();
  return counter;
}

/// Called by a task: counts it when it runs on a rank other than 0.
void count_if_taken(weft::global_ptr<std::int64_t> counter) {
  if (weft::rank() != 0) (void)weft::atomic_fetch_add(counter, std::int64_t{1}).get();
}

constexpr auto steal_bound = std::chrono::seconds(60);

/// Spins (keeping this worker, so its queued tasks are left for other
/// ranks) until some task ran on another rank. Throws past the bound.
void wait_until_taken(weft::global_ptr<std::int64_t> counter) {
  if (weft::nranks() == 1) return;
  const auto give_up = std::chrono::steady_clock::now() + steal_bound;
  while (weft::atomic_load(counter).get() == 0) {
    if (std::chrono::steady_clock::now() > give_up)
      throw std::runtime_error("no other rank took a task within 60 s");
    // A scheduling point: with worker-driven progress this worker also
    // serves the steal requests of ranks on other nodes.
    weft::this_task::yield();
  }
}

/// Sum of tag over [lo, hi), split in halves; every leaf waits until some
/// leaf ran on another rank.
long stolen_sum(long lo, long hi, weft::global_ptr<std::int64_t> taken) {
  if (hi - lo == 1) {
    count_if_taken(taken);
    wait_until_taken(taken);
    return lo;
  }
  const long mid = lo + (hi - lo) / 2;
  auto [a, b] = weft::parallel_invoke([=] { return stolen_sum(lo, mid, taken); },
                                      [=] { return stolen_sum(mid, hi, taken); });
  return a + b;
}

}  // namespace

TEST(ForkJoin, FibOnEveryRank) {
  on_every_rank([] {
    const long r = weft::root_exec(fib, 22);
    EXPECT_EQ(r, fib_serial(22));
    const long again = weft::root_exec([] { return fib(18); });
    EXPECT_EQ(again, fib_serial(18));
  });
}

TEST(ForkJoin, OtherRanksStealTasks) {
  on_every_rank([] {
    const weft::global_ptr<std::int64_t> taken = new_taken_counter();
    weft::reset_steal_statistics();
    const long n = 8L * weft::nranks();
    try {
      const long sum = weft::root_exec(stolen_sum, 0L, n, taken);
      EXPECT_EQ(sum, n * (n - 1) / 2);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    const std::uint64_t stolen = stolen_everywhere();
    if (weft::nranks() > 1) {
      EXPECT_GT(stolen, 0u);
    } else {
      EXPECT_EQ(stolen, 0u);
    }
  });
}

// --weft:node-size (WEFT_NODE_SIZE, as the _ns1 and _ns2 entries set it):
// a rank maps the heaps, and steals through the deques, only of the ranks
// of its node; every other rank is reached by messages. The tests run in
// one process or on one host, where without it every rank shares the node.
namespace {
int node_size() {
  const char* v = std::getenv("WEFT_NODE_SIZE");
  return v == nullptr ? 0 : std::atoi(v);
}
bool on_my_node(int r) {
  const int k = node_size();
  return k == 0 || weft::rank() / k == r / k;
}
}  // namespace

TEST(ForkJoin, HeapViewsFollowNodeSize) {
  on_every_rank([] {
    const int me = weft::rank(), n = weft::nranks();
    const auto box = weft::allocate_symmetric<std::int64_t>(2);
    box.local()[0] = 0;
    box.local()[1] = 1000 + me;
    weft::barrier();
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(box.on(r).local() != nullptr, on_my_node(r)) << "rank " << me << " viewing rank " << r;
    // Mapped or not, puts and gets reach every rank.
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    weft::put(box.on(right), std::int64_t{100 + me}).get();
    weft::barrier();
    EXPECT_EQ(box.local()[0], 100 + left);
    EXPECT_EQ(weft::get(box.on(right) + 1).get(), 1000 + right);
    weft::barrier();
    weft::free_symmetric(box);
  });
}

TEST(ForkJoin, StealsFollowNodeSize) {
  on_every_rank([] {
    const weft::global_ptr<std::int64_t> taken = new_taken_counter();
    weft::reset_steal_statistics();
    const long n = 8L * weft::nranks();
    try {
      EXPECT_EQ(weft::root_exec(stolen_sum, 0L, n, taken), n * (n - 1) / 2);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    const weft::steal_statistics s = weft::steal_stats();
    bool others_on_node = false, others_off_node = false;
    for (int r = 0; r < weft::nranks(); ++r) {
      if (r == weft::rank()) continue;
      (on_my_node(r) ? others_on_node : others_off_node) = true;
    }
    // Each rank steals from its node's ranks in shared memory, from the
    // others by message, never the other way round.
    if (!others_on_node) {
      EXPECT_EQ(s.from_node, 0u);
    }
    if (!others_off_node) {
      EXPECT_EQ(s.from_remote, 0u);
    }
    const std::uint64_t remote = weft::allreduce(s.from_remote, std::plus<>());
    const std::uint64_t stolen = stolen_everywhere();
    if (weft::nranks() > 1) {
      EXPECT_GT(stolen, 0u);
    }
    if (node_size() == 1) {
      EXPECT_EQ(remote, stolen);
    }
    weft::barrier();
  });
}

TEST(ForkJoin, ParallelInvokeOfThreeWithVoid) {
  on_every_rank([] {
    auto t = weft::root_exec([] {
      auto [a, v, c] = weft::parallel_invoke([] { return busy(2, 1); }, [] { (void)busy(2, 0); },
                                             [] { return 2.5; });
      static_assert(std::is_same_v<decltype(v), std::monostate>);
      return a + static_cast<long>(2 * c);
    });
    EXPECT_EQ(t, 6);
    weft::root_exec([] { weft::parallel_invoke([] { (void)busy(1, 0); }, [] { (void)busy(1, 0); }); });
  });
}

TEST(ForkJoin, ExceptionsReachTheJoin) {
  on_every_rank([] {
    const bool caught = weft::root_exec([] {
      try {
        weft::parallel_invoke([] { return busy(5, 1); },
                              [] {
                                (void)busy(5, 0);
                                throw std::runtime_error("child failed");
                                return 0L;
                              });
      } catch (const std::exception& e) {
        return std::string(e.what()).find("child failed") != std::string::npos;
      }
      return false;
    });
    EXPECT_TRUE(caught);
  });
}

namespace {

struct task_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How a forked task's exception reached the join.
struct caught_at_join {
  bool as_thrown = false;  // as task_failure itself
  bool as_remote = false;  // as weft::remote_error
  char remote_type[64] = {};
  char what[64] = {};
};

void copy_text(char (&to)[64], const std::string& from) {
  std::strncpy(to, from.c_str(), sizeof to - 1);
}

/// A task that throws task_failure when it runs on a rank other than 0
/// (on any rank when there is one), once some task ran off rank 0.
void throw_off_rank_0(weft::global_ptr<std::int64_t> taken) {
  count_if_taken(taken);
  wait_until_taken(taken);
  if (weft::rank() != 0 || weft::nranks() == 1) throw task_failure("thrown by a forked task");
}

}  // namespace

// Forked tasks that throw only when another rank took them; the first task
// and as many throwers as rank 0 has workers wait on rank 0 until one was
// taken. Within the process and node the exception arrives as thrown, from
// another process or node as weft::remote_error naming the thrown type.
TEST(ForkJoin, StolenTaskExceptionKeepsItsType) {
  on_every_rank([] {
    const weft::global_ptr<std::int64_t> taken = new_taken_counter();
    caught_at_join c;
    try {
      c = weft::root_exec([taken] {
        caught_at_join r;
        const auto thrower = [taken] { throw_off_rank_0(taken); };
        try {
          weft::parallel_invoke([taken] { wait_until_taken(taken); }, thrower, thrower, thrower, thrower);
        } catch (const task_failure& e) {
          r.as_thrown = true;
          copy_text(r.what, e.what());
        } catch (const weft::remote_error& e) {
          r.as_remote = true;
          copy_text(r.remote_type, e.remote_type());
          copy_text(r.what, e.what());
        }
        return r;
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      return;
    }
    EXPECT_STREQ(c.what, "thrown by a forked task");
    // With more than one rank, only tasks on other ranks threw: as thrown
    // from ranks of this process and node, as remote_error from the others.
    const int n = weft::nranks(), k = node_size();
    const bool in_process = std::strcmp(weft::backend_name(), "smp") == 0;
    const bool all_off_node = n > 1 && (!in_process || k == 1);
    const bool all_on_node = n == 1 || (in_process && (k == 0 || k >= n));
    if (all_off_node) {
      EXPECT_TRUE(c.as_remote);
      EXPECT_NE(std::string(c.remote_type).find("task_failure"), std::string::npos) << c.remote_type;
    } else if (all_on_node) {
      EXPECT_TRUE(c.as_thrown);
    } else {
      EXPECT_TRUE(c.as_thrown || c.as_remote);
    }
  });
}

// Rank 0 gets the exception as thrown, the others as weft::remote_error
// naming its type.
TEST(ForkJoin, RootExceptionOnEveryRank) {
  on_every_rank([] {
    try {
      weft::root_exec([] {
        throw std::runtime_error("root failed");
        return 1;
      });
      ADD_FAILURE() << "root_exec did not throw";
    } catch (const weft::remote_error& e) {
      EXPECT_NE(weft::rank(), 0);
      EXPECT_EQ(e.remote_type(), "std::runtime_error");
      EXPECT_NE(std::string(e.what()).find("root failed"), std::string::npos) << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(weft::rank(), 0);
      EXPECT_STREQ(e.what(), "root failed");
    }
  });
}

// ItoyoriFBC's style: futures made by one task, awaited by tasks that may
// run on any rank. A producer run on rank 0 waits until one ran on another
// rank.
TEST(ForkJoin, SpawnedFuturesAwaitedAnywhere) {
  on_every_rank([] {
    const weft::global_ptr<std::int64_t> taken = new_taken_counter();
    weft::reset_steal_statistics();
    const long total = weft::root_exec([taken] {
      constexpr int n = 16;
      weft::global_future<long> f[n];
      for (int i = 0; i < n; ++i)
        f[i] = weft::spawn([taken, i] {
          count_if_taken(taken);
          wait_until_taken(taken);
          return static_cast<long>(i);
        });
      // Chains: each consumer awaits a producer, wherever either runs.
      weft::global_future<long> g[n];
      for (int i = 0; i < n; ++i)
        g[i] = weft::spawn([p = f[i]] { return 10 * p.get(); });
      long s = 0;
      for (int i = 0; i < n; ++i) s += g[i].get() + f[i].get();
      return s;
    });
    EXPECT_EQ(total, 11L * (15 * 16 / 2));
    if (weft::nranks() > 1) {
      EXPECT_GT(stolen_everywhere(), 0u);
    }
  });
}

TEST(ForkJoin, SpawnedExceptionRethrownByGet) {
  on_every_rank([] {
    const bool caught = weft::root_exec([] {
      auto f = weft::spawn([] {
        (void)busy(3, 0);
        throw std::runtime_error("spawned failed");
        return 1;
      });
      try {
        (void)f.get();
      } catch (const std::exception& e) {
        return std::string(e.what()).find("spawned failed") != std::string::npos;
      }
      return false;
    });
    EXPECT_TRUE(caught);
  });
}

// Checkouts at task boundaries: the parent writes through a checkout and
// forks; children (on any rank) read that and write their own part; after
// the join the parent reads the children's writes. Several rounds with new
// values, so a stale cached block (a missing acquire) or a write not yet
// sent back (a missing release) shows. Run with --weft:cache=always. In
// every round a leaf runs on another rank (the leaves wait for one).
namespace {

constexpr std::size_t part = 512;  // elements per leaf

void leaf(weft::global_span<std::int64_t> in, weft::global_span<std::int64_t> out, std::int64_t round,
          weft::global_ptr<std::int64_t> taken) {
  {
    auto src = weft::make_checkout(in, weft::checkout_mode::read);
    auto dst = weft::make_checkout(out, weft::checkout_mode::write);
    for (std::size_t i = 0; i < src.size(); ++i) dst[i] = src[i] + round;
  }
  count_if_taken(taken);
  wait_until_taken(taken);
}

void split(weft::global_span<std::int64_t> in, weft::global_span<std::int64_t> out, std::int64_t round,
           weft::global_ptr<std::int64_t> taken) {
  if (in.size <= part) return leaf(in, out, round, taken);
  const std::size_t h = in.size / 2, rest = in.size - h;
  weft::parallel_invoke([=] { split(in.subspan(0, h), out.subspan(0, h), round, taken); },
                        [=] { split(in.subspan(h, rest), out.subspan(h, rest), round, taken); });
}

}  // namespace

TEST(ForkJoin, CheckoutsAreCoherentAcrossForksAndJoins) {
  on_every_rank([] {
    constexpr std::size_t n = 16 * part;
    // Both arrays live on the last rank: rank 0's root reaches them through
    // the cache as well.
    const int last = weft::nranks() - 1;
    const weft::global_span<std::int64_t> a{weft::allocate_symmetric<std::int64_t>(n).on(last), n};
    const weft::global_span<std::int64_t> b{weft::allocate_symmetric<std::int64_t>(n).on(last), n};
    constexpr int rounds = 4;
    const weft::global_ptr<std::int64_t> taken = new_taken_counter(rounds);  // one per round
    weft::reset_steal_statistics();
    long bad = -1;
    try {
      bad = weft::root_exec([a, b, taken]() -> long {
        long wrong = 0;
        for (std::int64_t round = 1; round <= rounds; ++round) {
          {
            auto w = weft::make_checkout(a, weft::checkout_mode::write);
            for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<std::int64_t>(i) * round;
          }
          split(a, b, round, taken + (round - 1));
          auto r = weft::make_checkout(b, weft::checkout_mode::read);
          for (std::size_t i = 0; i < n; ++i)
            if (r[i] != static_cast<std::int64_t>(i) * round + round) ++wrong;
        }
        return wrong;
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    EXPECT_EQ(bad, 0);
    if (weft::nranks() > 1) {
      EXPECT_GT(stolen_everywhere(), 0u);
    }
    weft::barrier();
  });
}

// ---- patterns -----------------------------------------------------------------------

TEST(ForkJoinPatterns, ForEachIndexAndElements) {
  on_every_rank([] {
    constexpr std::size_t n = 10000;
    auto v = weft::global_vector<std::int64_t>::distributed(n);  // spans every rank
    for (std::size_t k = 0; k < v.local_part().size(); ++k)
      v.local_part()[k] = static_cast<std::int64_t>(v.local_first() + k);
    weft::cache_barrier();
    const std::int64_t sum = weft::root_exec([v] {
      const weft::fork_policy p{.cutoff = 300, .checkout_count = 128};
      weft::parallel_for_each(p, v, [](std::int64_t& x) { x = 3 * x + 1; });
      // Index form: element i read back through a one-element checkout.
      weft::parallel_for_each(p, std::size_t{0}, n, [v](std::size_t i) {
        auto one = weft::make_checkout(v[i], 1, weft::checkout_mode::read_write);
        one[0] -= 1;
      });
      return weft::transform_reduce(p, v, std::int64_t{0}, std::plus<>(), [](const std::int64_t& x) { return x; });
    });
    EXPECT_EQ(sum, 3 * static_cast<std::int64_t>(n * (n - 1) / 2));
    const long squares = weft::root_exec([] {
      return weft::transform_reduce(weft::fork_policy{.cutoff = 7}, 0L, 1000L, 0L, std::plus<>(),
                                    [](long i) { return i * i; });
    });
    EXPECT_EQ(squares, 999L * 1000 * 1999 / 6);
    weft::barrier();
  });
}

TEST(ForkJoinPatterns, ParallelSort) {
  on_every_rank([] {
    constexpr std::size_t n = 50000;
    const int last = weft::nranks() - 1;
    const weft::global_span<std::uint32_t> data{weft::allocate_symmetric<std::uint32_t>(n).on(last), n};
    const weft::global_span<std::uint32_t> tmp{weft::allocate_symmetric<std::uint32_t>(n).on(0), n};
    if (weft::rank() == last) {
      std::uint64_t x = 12345;
      for (std::size_t i = 0; i < n; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        data.local()[i] = static_cast<std::uint32_t>(x >> 40);
      }
    }
    weft::cache_barrier();
    const std::uint64_t checksum_before = weft::root_exec([data] {
      return weft::transform_reduce(weft::fork_policy{.cutoff = 4096, .checkout_count = 4096}, data,
                                    std::uint64_t{0}, std::plus<>(), [](std::uint32_t x) { return std::uint64_t{x}; });
    });
    const long unsorted = weft::root_exec([data, tmp] {
      weft::parallel_sort(weft::fork_policy{.cutoff = 1000}, data, tmp);
      return weft::transform_reduce(weft::fork_policy{.cutoff = 4096}, std::size_t{1}, n, 0L, std::plus<>(),
                                    [data](std::size_t i) {
                                      auto two = weft::make_checkout(data.data + static_cast<std::ptrdiff_t>(i - 1), 2,
                                                                     weft::checkout_mode::read);
                                      return two[0] > two[1] ? 1L : 0L;
                                    });
    });
    const std::uint64_t checksum_after = weft::root_exec([data] {
      return weft::transform_reduce(weft::fork_policy{.cutoff = 4096, .checkout_count = 4096}, data,
                                    std::uint64_t{0}, std::plus<>(), [](std::uint32_t x) { return std::uint64_t{x}; });
    });
    EXPECT_EQ(unsorted, 0);
    EXPECT_EQ(checksum_before, checksum_after);
    weft::barrier();
  });
}
