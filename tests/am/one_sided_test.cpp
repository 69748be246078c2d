// The transport's one-sided operations (am_transport::one_sided()), on
// whichever backend offers them: puts and gets of odd sizes at odd offsets,
// atomics raced by every rank and worker, flush(rank) against flush_all,
// two regions at once. Run SPMD on every rank (spmd_main.hpp). A backend
// without the capability makes the program print WEFT_TEST_SKIPPED and
// succeed.
//
// OneSidedBusyTarget checks that operations complete while the target rank
// computes without entering weft or MPI; it holds only where the transport
// moves data without the target's CPU, and is run only where registered so
// (tests/am/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "am/transport.hpp"
#include "runtime/runtime_state.hpp"
#include "spmd_main.hpp"

using ops_t = weft::detail::one_sided_ops;
using weft::test::on_every_rank;

namespace {

/// This rank's one-sided operations, or null.
ops_t* one_sided() {
  weft::detail::process_runtime* rt = weft::detail::runtime_state();
  if (rt == nullptr || rt->transports.empty()) return nullptr;
  const auto local = static_cast<std::size_t>(weft::rank() - rt->first_rank);
  const std::size_t at = local < rt->transports.size() ? local : 0;
  return rt->transports[at]->one_sided();
}

/// A registered buffer of `bytes` (the same on every rank), 8-byte aligned.
struct region {
  std::vector<std::uint64_t> words;
  ops_t::region_key key = 0;
  explicit region(std::size_t bytes) : words((bytes + 7) / 8, 0) {
    key = one_sided()->register_region(words.data(), words.size() * 8);
  }
  std::byte* bytes() { return reinterpret_cast<std::byte*>(words.data()); }
  /// A word this rank reads while other ranks write it one-sidedly.
  std::uint64_t load(std::size_t word) { return std::atomic_ref(words[word]).load(std::memory_order_acquire); }
};

std::byte pattern_byte(int from, int to, std::size_t size, std::size_t i, int phase = 0) {
  return static_cast<std::byte>((from * 131 + to * 31 + size * 7 + i * 13 + phase * 101) & 0xff);
}

/// Runs body(thread) on every worker of this rank at once and waits.
void on_every_worker(const std::function<void(int)>& body) {
  std::vector<weft::future<void>> done;
  for (int t = 0; t < weft::num_threads(); ++t) done.push_back(weft::async(weft::on_thread{t}, [&body, t] { body(t); }));
  for (auto& f : done) f.get();
}

/// Atomically reads a word of this rank's own region through the
/// transport: where the target's MPI must serve the operations, this makes
/// the MPI progress the waiting rank needs.
std::uint64_t read_own(ops_t& ops, ops_t::region_key key, std::size_t word) {
  return ops.fetch_add(weft::rank(), key, word * 8, 0);
}

/// Waits until word `word` of this rank's region reaches `want`.
void wait_for(ops_t& ops, ops_t::region_key key, std::size_t word, std::uint64_t want) {
  while (read_own(ops, key, word) < want) weft::this_task::yield();
}

constexpr std::size_t odd_sizes[] = {1, 7, 4097, (std::size_t{1} << 20) + 3};

}  // namespace

// Every rank puts a block of each odd size at an odd offset into every
// other rank's region, flushes, and after a barrier each rank finds every
// block intact; then each gets its blocks back.
TEST(OneSided, PutGetOddSizesEveryPair) {
  on_every_rank([] {
    ops_t& ops = *one_sided();
    const int me = weft::rank(), n = weft::nranks();
    std::size_t per_rank = 0;
    for (std::size_t s : odd_sizes) per_rank += s + 8;
    region r(per_rank * static_cast<std::size_t>(n) + 16);
    auto slot = [&](int from, std::size_t size_index) {
      std::size_t at = 3 + per_rank * static_cast<std::size_t>(from);  // odd
      for (std::size_t i = 0; i < size_index; ++i) at += odd_sizes[i] + 8;
      return at;
    };
    std::vector<std::vector<std::byte>> sent;
    for (int t = 0; t < n; ++t) {
      if (t == me) continue;
      for (std::size_t k = 0; k < std::size(odd_sizes); ++k) {
        std::vector<std::byte>& b = sent.emplace_back(odd_sizes[k]);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = pattern_byte(me, t, b.size(), i);
        ops.put(t, r.key, slot(me, k), b.data(), b.size());
      }
      ops.flush(t);
    }
    weft::barrier();
    int bad = 0;
    for (int from = 0; from < n; ++from) {
      if (from == me) continue;
      for (std::size_t k = 0; k < std::size(odd_sizes); ++k)
        for (std::size_t i = 0; i < odd_sizes[k]; ++i)
          bad += r.bytes()[slot(from, k) + i] != pattern_byte(from, me, odd_sizes[k], i);
    }
    EXPECT_EQ(bad, 0) << "rank " << me;
    // The bytes around the blocks are untouched.
    EXPECT_EQ(r.bytes()[slot(0, 0) - 1], std::byte{0});
    EXPECT_EQ(r.bytes()[slot(0, 0) + 1], std::byte{0});

    std::vector<std::vector<std::byte>> back;
    for (int t = 0; t < n; ++t) {
      if (t == me) continue;
      for (std::size_t k = 0; k < std::size(odd_sizes); ++k) {
        std::vector<std::byte>& b = back.emplace_back(odd_sizes[k]);
        ops.get(t, r.key, slot(me, k), b.data(), b.size());
      }
    }
    ops.flush_all();
    EXPECT_EQ(back, sent) << "rank " << me;
    weft::barrier();  // nobody reads this region any more
  });
}

// fetch_add from every rank and worker on one word: the sum is exact and
// every old value was handed out exactly once.
TEST(OneSided, FetchAddExactSum) {
  on_every_rank([] {
    ops_t& ops = *one_sided();
    const int n = weft::nranks(), threads = weft::num_threads();
    constexpr int per_task = 100;
    // Every rank has the same number of workers (the same options).
    const auto total = static_cast<std::size_t>(n * threads * per_task);
    region counter(64);
    region seen(total * 8);  // on the last rank: how often each old value was returned
    const int target = n - 1;
    weft::barrier();
    on_every_worker([&](int) {
      for (int i = 0; i < per_task; ++i) {
        const std::uint64_t old = ops.fetch_add(target, counter.key, 8, 1);
        ASSERT_LT(old, total);
        ops.fetch_add(target, seen.key, old * 8, 1);
      }
    });
    weft::barrier();
    if (weft::rank() == target) {
      EXPECT_EQ(counter.load(1), total);
      EXPECT_EQ(counter.load(0), 0u);  // the neighbour word
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < total; ++i) wrong += seen.load(i) != 1;
      EXPECT_EQ(wrong, 0u);
    }
    weft::barrier();
  });
}

// Rounds of compare_swap races from every rank and worker on one word
// (another rank's each round): exactly one wins each round, and the word
// holds the winner's value.
TEST(OneSided, CompareSwapOneWinnerPerRound) {
  on_every_rank([] {
    ops_t& ops = *one_sided();
    const int me = weft::rank(), n = weft::nranks(), threads = weft::num_threads();
    constexpr int rounds = 20;
    region words(rounds * 8);
    region winners(rounds * 8);  // on rank 0: winners per round
    weft::barrier();
    std::vector<std::uint64_t> won(static_cast<std::size_t>(rounds), 0);  // my winning value per round
    for (int round = 0; round < rounds; ++round) {
      const int target = round % n;
      on_every_worker([&](int t) {
        const std::uint64_t mine = static_cast<std::uint64_t>(me * threads + t) + 1;
        const std::uint64_t old = ops.compare_swap(target, words.key, round * 8, 0, mine);
        if (old == 0) {
          won[static_cast<std::size_t>(round)] = mine;
          ops.fetch_add(0, winners.key, round * 8, 1);
        } else {
          EXPECT_LE(old, static_cast<std::uint64_t>(n * threads));
        }
      });
    }
    weft::barrier();
    for (int round = 0; round < rounds; ++round) {
      if (won[static_cast<std::size_t>(round)] == 0) continue;
      std::uint64_t now = 0;
      ops.get(round % n, words.key, round * 8, &now, 8);
      ops.flush(round % n);
      EXPECT_EQ(now, won[static_cast<std::size_t>(round)]) << "round " << round;
    }
    if (me == 0) {
      for (int round = 0; round < rounds; ++round) EXPECT_EQ(winners.load(round), 1u) << "round " << round;
    }
    weft::barrier();
  });
}

// Every rank and worker swaps its own token into one word: the old values
// form one chain, so every token but the last comes back exactly once, and
// the initial 0 too.
TEST(OneSided, SwapChain) {
  on_every_rank([] {
    ops_t& ops = *one_sided();
    const int me = weft::rank(), n = weft::nranks(), threads = weft::num_threads();
    constexpr int per_task = 50;
    const auto tokens = static_cast<std::size_t>(n * threads * per_task);
    region word(8);
    region seen((tokens + 1) * 8);  // on rank 0, by value (0 and the tokens 1..tokens)
    const int target = n - 1;
    weft::barrier();
    on_every_worker([&](int t) {
      for (int i = 0; i < per_task; ++i) {
        const std::uint64_t token = static_cast<std::uint64_t>(((me * threads + t) * per_task) + i) + 1;
        const std::uint64_t old = ops.swap(target, word.key, 0, token);
        ASSERT_LE(old, tokens);
        ops.fetch_add(0, seen.key, old * 8, 1);
      }
    });
    weft::barrier();
    if (me == 0) {
      std::uint64_t last = 0;
      ops.get(target, word.key, 0, &last, 8);
      ops.flush(target);
      EXPECT_GE(last, 1u);
      std::size_t wrong = 0;
      for (std::size_t v = 0; v <= tokens; ++v) wrong += seen.load(v) != (v == last ? 0u : 1u);
      EXPECT_EQ(wrong, 0u) << "last token " << last;
    }
    weft::barrier();
  });
}

// Several phases in a row, in two regions at once. In each phase every rank
// puts a block into both regions of every other rank, completes them, and
// only then raises that rank's flag with an atomic: with flush(rank) per
// target in even phases, flush_all in odd ones. A rank whose flag shows
// every other rank finds their blocks complete in both regions, without a
// barrier in between.
TEST(OneSided, FlushRankAndFlushAllPhases) {
  on_every_rank([] {
    ops_t& ops = *one_sided();
    const int me = weft::rank(), n = weft::nranks();
    constexpr std::size_t block = 5003;
    constexpr int phases = 4;
    const std::size_t bytes = block * static_cast<std::size_t>(n) + 64;
    region a(bytes), b(bytes);
    region flags(phases * 8);
    EXPECT_NE(a.key, b.key);
    weft::barrier();
    for (int phase = 0; phase < phases; ++phase) {
      std::vector<std::vector<std::byte>> out;
      for (int t = 0; t < n; ++t) {
        if (t == me) continue;
        for (region* r : {&a, &b}) {
          std::vector<std::byte>& data = out.emplace_back(block);
          for (std::size_t i = 0; i < block; ++i) data[i] = pattern_byte(me, t, r == &a ? 1 : 2, i, phase);
          ops.put(t, r->key, block * static_cast<std::size_t>(me) + 1, data.data(), block);
        }
      }
      if (phase % 2 == 1) ops.flush_all();
      for (int t = 0; t < n; ++t) {
        if (t == me) continue;
        if (phase % 2 == 0) ops.flush(t);
        ops.fetch_add(t, flags.key, phase * 8, 1);
      }
      wait_for(ops, flags.key, static_cast<std::size_t>(phase), static_cast<std::uint64_t>(n - 1));
      int bad = 0;
      for (int from = 0; from < n; ++from) {
        if (from == me) continue;
        for (region* r : {&a, &b})
          for (std::size_t i = 0; i < block; ++i)
            bad += r->bytes()[block * static_cast<std::size_t>(from) + 1 + i] !=
                   pattern_byte(from, me, r == &a ? 1 : 2, i, phase);
      }
      EXPECT_EQ(bad, 0) << "rank " << me << ", phase " << phase;
      weft::barrier();  // everyone checked this phase before the next overwrites it
    }
  });
}

// Operations complete while the target computes and makes no weft or MPI
// call: rank 0 spins on its own memory until rank 1's operations (atomics,
// then a get, then a put of the flag that ends the spin) have all
// returned. Where the target's CPU were needed, the flag would never come;
// the spin gives up after a minute and fails instead of hanging.
TEST(OneSidedBusyTarget, CompletesWhileTargetComputes) {
  on_every_rank([] {
    ops_t& ops = *one_sided();
    const int me = weft::rank();
    region r(4096);
    if (me == 0) r.words[2] = 77;
    weft::barrier();
    if (me == 0) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
      std::uint64_t spins = 0;
      while (r.load(0) == 0 && std::chrono::steady_clock::now() < give_up) ++spins;
      // Not ASSERT: every rank must reach the barrier below.
      EXPECT_EQ(r.load(0), 1u) << "rank 1's one-sided operations did not complete while rank 0 computed";
      if (r.load(0) == 1) {
        EXPECT_EQ(r.load(1), 5u);   // fetch_add
        EXPECT_EQ(r.load(3), 9u);   // compare_swap
        EXPECT_EQ(r.load(4), 11u);  // swap
        EXPECT_EQ(r.load(5), 77u);  // the get's copy, put back
      }
    } else if (me == 1) {
      EXPECT_EQ(ops.fetch_add(0, r.key, 8, 5), 0u);
      EXPECT_EQ(ops.compare_swap(0, r.key, 24, 0, 9), 0u);
      EXPECT_EQ(ops.swap(0, r.key, 32, 11), 0u);
      std::uint64_t got = 0;
      ops.get(0, r.key, 16, &got, 8);
      ops.flush(0);
      EXPECT_EQ(got, 77u);
      ops.put(0, r.key, 40, &got, 8);
      ops.flush(0);
      const std::uint64_t flag = 1;
      ops.put(0, r.key, 0, &flag, 8);
      ops.flush(0);
    }
    weft::barrier();
  });
}

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // Every rank asks its transport; they all agree (one backend).
  std::atomic<bool> missing{false};
  weft::test::on_every_rank([&] {
    if (one_sided() == nullptr) missing = true;
  });
  if (missing) {
    std::printf("WEFT_TEST_SKIPPED: no one-sided capability on this backend\n");
    return 0;
  }
  return RUN_ALL_TESTS();
}
