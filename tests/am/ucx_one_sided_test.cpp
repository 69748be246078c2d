// The ucx backend's one-sided operations (am_transport::one_sided()), on
// every rank of an mpiexec job with --weft:backend=ucx:
//   - registering a 1 GiB reserved range touches none of its pages;
//   - put and get of odd sizes at odd offsets, and a few MiB at once;
//   - fetch_add from every rank on one word gives the exact sum;
//   - compare_swap lets exactly one rank win; swap hands every value on;
//   - flush / flush_all complete puts towards one rank / every rank;
//   - with several workers per rank: tasks on each of them add at once
//     (the transport is called from many threads);
//   - with two ranks or more: the target's workers take no part. Rank 1's
//     only worker spins in a task on a word of its own region (no weft
//     call) while rank 0 puts, gets and adds into that region, then sets
//     the word; rank 1 then finds every change already there. Ordering is
//     by flags: rank 1 raises a "busy" word before spinning, rank 0 reads
//     it (one-sided) before it starts and again after it finished, both
//     while rank 1 can only be spinning.
// Who answers for the spinning rank: on a network with RDMA and atomics
// (verbs) the network itself, and the check runs without a progress thread
// when WEFT_TEST_HARDWARE_RMA=1 says the job has one. Between processes of
// one host UCX 1.13 (without xpmem or knem) emulates RMA and atomics with
// active messages the target's UCP worker answers: there the check needs
// --weft:progress=thread (the rank's progress thread answers) and is
// skipped without it.
// Prints "ucx one-sided: all checks passed" on rank 0 when every check held.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/runtime_state.hpp"
#include "weft/weft.hpp"

namespace {

using weft::detail::one_sided_ops;

constexpr std::size_t region_bytes = std::size_t{1} << 30;
// Where things lie in every rank's region.
constexpr std::size_t counter_at = 0;       // fetch_add target (on rank 0)
constexpr std::size_t cas_at = 8;           // compare_swap target (on rank 0)
constexpr std::size_t winners_at = 16;      // compare_swap winners count (on rank 0)
constexpr std::size_t swap_at = 24;         // swap target (on rank 0)
constexpr std::size_t busy_at = 32;         // rank 1: 1 while it spins
constexpr std::size_t done_at = 40;         // rank 1: rank 0 sets it when done
constexpr std::size_t added_at = 48;        // rank 1: rank 0 adds to it while it spins
constexpr std::size_t swap_olds_at = 4096;  // one word per rank (on rank 0)
constexpr std::size_t tasks_counter_at = 56; // concurrent tasks' fetch_add target (on the last rank)
constexpr std::size_t odd_at = 65536 + 3;   // odd-offset puts: one slot per rank
constexpr std::size_t slot = 8192;
constexpr std::size_t big_at = 64 << 20;    // a few MiB in one put
constexpr std::size_t big_bytes = (3 << 20) + 5;
constexpr std::size_t spin_data_at = 1 << 20;  // what rank 0 puts while rank 1 spins
constexpr std::size_t spin_data_bytes = 100003;

int failures = 0;

void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", weft::rank(), what.c_str());
}

std::uint8_t pattern(int from, std::size_t i) { return static_cast<std::uint8_t>(from * 37 + i * 11 + 5); }

std::uint64_t load(const std::byte* base, std::size_t at) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(base) + at))
      .load(std::memory_order_acquire);
}

/// Pages of [p, p + n) in memory.
std::size_t resident_pages(const void* p, std::size_t n) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((n + page - 1) / page);
  if (mincore(const_cast<void*>(p), n, in.data()) != 0) return ~std::size_t{0};
  std::size_t count = 0;
  for (unsigned char c : in) count += c & 1;
  return count;
}

/// Whether the job's network moves RMA and atomics without the target's
/// progress (see the top of this file).
bool hardware_rma() {
  const char* v = std::getenv("WEFT_TEST_HARDWARE_RMA");
  return v != nullptr && std::string(v) == "1";
}

void odd_puts_and_gets(one_sided_ops& os, one_sided_ops::region_key key, std::byte* base) {
  const int me = weft::rank(), n = weft::nranks();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const std::size_t len = 777 + static_cast<std::size_t>(me);
  std::vector<std::uint8_t> out(len);
  for (std::size_t i = 0; i < len; ++i) out[i] = pattern(me, i);
  os.put(next, key, odd_at + static_cast<std::size_t>(me) * slot, out.data(), len);
  os.flush(next);
  weft::barrier();
  const std::size_t from_len = 777 + static_cast<std::size_t>(prev);
  bool same = true;
  for (std::size_t i = 0; i < from_len; ++i)
    same &= static_cast<std::uint8_t>(base[odd_at + static_cast<std::size_t>(prev) * slot + i]) == pattern(prev, i);
  check(same, "bytes rank " + std::to_string(prev) + " put at an odd offset");
  std::vector<std::uint8_t> back(len);
  os.get(next, key, odd_at + static_cast<std::size_t>(me) * slot + 1, back.data(), len - 1);
  check(std::memcmp(back.data(), out.data() + 1, len - 1) == 0, "get of odd size at an odd offset");
  // A few MiB to the next rank, checked by a get of its middle.
  std::vector<std::uint8_t> big(big_bytes);
  for (std::size_t i = 0; i < big_bytes; ++i) big[i] = pattern(me + 100, i);
  os.put(next, key, big_at, big.data(), big_bytes);
  os.flush_all();
  std::vector<std::uint8_t> mid(4099);
  os.get(next, key, big_at + 1000001, mid.data(), mid.size());
  check(std::memcmp(mid.data(), big.data() + 1000001, mid.size()) == 0, "get from the middle of a 3 MiB put");
  weft::barrier();
}

void atomics(one_sided_ops& os, one_sided_ops::region_key key, std::byte* base) {
  const int me = weft::rank(), n = weft::nranks();
  constexpr int adds = 500;
  std::uint64_t last = 0;
  bool increasing = true;
  for (int i = 0; i < adds; ++i) {
    const std::uint64_t old = os.fetch_add(0, key, counter_at, static_cast<std::uint64_t>(me) + 1);
    increasing &= i == 0 || old > last;
    last = old;
  }
  check(increasing, "fetch_add's old values grow");
  const bool won = os.compare_swap(0, key, cas_at, 0, static_cast<std::uint64_t>(me) + 1) == 0;
  if (won) os.fetch_add(0, key, winners_at, 1);
  const std::uint64_t old = os.swap(0, key, swap_at, static_cast<std::uint64_t>(me) + 1000);
  os.put(0, key, swap_olds_at + 8 * static_cast<std::size_t>(me), &old, 8);
  os.flush(0);
  weft::barrier();
  if (me != 0) return;
  const std::uint64_t expected = static_cast<std::uint64_t>(adds) * static_cast<std::uint64_t>(n) * (n + 1) / 2;
  check(load(base, counter_at) == expected, "fetch_add sum " + std::to_string(load(base, counter_at)) +
                                                " (expected " + std::to_string(expected) + ")");
  check(load(base, winners_at) == 1, "compare_swap winners: " + std::to_string(load(base, winners_at)));
  const std::uint64_t cas = load(base, cas_at);
  check(cas >= 1 && cas <= static_cast<std::uint64_t>(n), "compare_swap left a rank's value");
  // The swapped values form one chain: 7 (the start), then every rank's
  // value once; the last is still in the word.
  std::vector<int> seen(static_cast<std::size_t>(n) + 1, 0);
  auto count = [&](std::uint64_t v) {
    if (v == 7) ++seen[static_cast<std::size_t>(n)];
    else if (v >= 1000 && v < 1000 + static_cast<std::uint64_t>(n)) ++seen[static_cast<std::size_t>(v - 1000)];
  };
  for (int r = 0; r < n; ++r) count(load(base, swap_olds_at + 8 * static_cast<std::size_t>(r)));
  count(load(base, swap_at));
  bool chain = true;
  for (int v : seen) chain &= v == 1;
  check(chain, "swap handed every value on exactly once");
}

/// Tasks of every worker of every rank add to one word on the last rank at once.
void concurrent_tasks(one_sided_ops& os, one_sided_ops::region_key key, std::byte* base) {
  constexpr int tasks = 8, adds = 100;
  const int last = weft::nranks() - 1;
  std::vector<weft::future<void>> running;
  for (int t = 0; t < tasks; ++t)
    running.push_back(weft::async([&os, key, last] {
      for (int i = 0; i < adds; ++i) os.fetch_add(last, key, tasks_counter_at, 1);
      os.flush(last);
    }));
  for (auto& f : running) f.get();
  weft::barrier();
  if (weft::rank() != last) return;
  const std::uint64_t expected = static_cast<std::uint64_t>(tasks) * adds * static_cast<std::uint64_t>(weft::nranks());
  check(load(base, tasks_counter_at) == expected, "concurrent tasks' fetch_add sum " +
                                                      std::to_string(load(base, tasks_counter_at)) + " (expected " +
                                                      std::to_string(expected) + ")");
}

/// Rank 1 spins without any weft call; rank 0 acts on its region.
void target_takes_no_part(one_sided_ops& os, one_sided_ops::region_key key, std::byte* base) {
  const int me = weft::rank();
  if (me == 1) {
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(base + busy_at)).store(1);
    // A bound so that a transport needing this rank's help fails the test
    // instead of hanging it.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (load(base, done_at) == 0 && std::chrono::steady_clock::now() < give_up) {
    }
    check(load(base, done_at) == 1, "rank 0 finished while rank 1 spun (it waited 30 s)");
    bool same = true;
    for (std::size_t i = 0; i < spin_data_bytes; ++i)
      same &= static_cast<std::uint8_t>(base[spin_data_at + i]) == pattern(0, i);
    check(same, "the bytes rank 0 put while this rank spun");
    check(load(base, added_at) == 42, "the value rank 0 added while this rank spun");
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(base + busy_at)).store(0);
  } else if (me == 0) {
    std::uint64_t busy = 0;
    while (busy == 0) os.get(1, key, busy_at, &busy, 8);  // rank 1 is in its loop
    std::vector<std::uint8_t> out(spin_data_bytes);
    for (std::size_t i = 0; i < spin_data_bytes; ++i) out[i] = pattern(0, i);
    os.put(1, key, spin_data_at, out.data(), out.size());
    os.flush(1);
    std::vector<std::uint8_t> back(spin_data_bytes);
    os.get(1, key, spin_data_at, back.data(), back.size());
    check(back == out, "get from a rank that spins");
    check(os.fetch_add(1, key, added_at, 42) == 0, "fetch_add on a rank that spins");
    os.get(1, key, busy_at, &busy, 8);
    check(busy == 1, "rank 1 still spinning when every operation completed");
    const std::uint64_t done = 1;
    os.put(1, key, done_at, &done, 8);
    os.flush(1);
    std::printf("one-sided operations completed while the target spun (answered by %s)\n",
                hardware_rma() ? "the network" : "its progress thread");
  }
  weft::barrier();
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    weft::detail::process_runtime* rt = weft::detail::runtime_state();
    if (rt->backend != "ucx") {
      if (weft::rank() == 0) std::printf("WEFT_TEST_SKIPPED: not on the ucx backend (%s)\n", rt->backend.c_str());
      return;
    }
    one_sided_ops* os = rt->transports[0]->one_sided();
    check(os != nullptr, "the ucx transport offers one-sided operations");
    if (os == nullptr) std::exit(1);
    // A reserved range as pgas reserves its heaps: committed page by page.
    void* p = mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    check(p != MAP_FAILED, "mmap of 1 GiB");
    auto* base = static_cast<std::byte*>(p);
    const one_sided_ops::region_key key = os->register_region(base, region_bytes);
    const std::size_t resident = resident_pages(base, region_bytes);
    check(resident == 0, "registering 1 GiB made " + std::to_string(resident) + " pages resident");
    std::memcpy(base + swap_at, "\x07\0\0\0\0\0\0\0", 8);  // the swap chain starts at 7
    weft::barrier();
    odd_puts_and_gets(*os, key, base);
    atomics(*os, key, base);
    concurrent_tasks(*os, key, base);
    // The spinning rank's only worker must be the one that spins.
    if (weft::nranks() >= 2 && weft::num_threads() == 1 && (hardware_rma() || rt->opts.progress == "thread"))
      target_takes_no_part(*os, key, base);
    else if (weft::rank() == 0)
      std::printf("target-takes-no-part check skipped: it needs 2 ranks of one worker each and "
                  "--weft:progress=thread, or WEFT_TEST_HARDWARE_RMA=1\n");
    const int failed = weft::allreduce(failures, [](int a, int b) { return a + b; });
    if (weft::rank() == 0 && failed == 0) std::printf("ucx one-sided: all checks passed\n");
    if (failed != 0) std::exit(1);
  });
}
