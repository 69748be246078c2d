#include "remote_outputs.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace taskbench_weft {

namespace {
// The registered mailbox of each rank (ranks of the smp backend share the
// process, so this is indexed by rank), and the per-rank run counters that
// stamp messages so one of an earlier run can never be taken for this one.
constexpr int max_ranks = 1024;
std::atomic<void*> registry[max_ranks];
std::uint64_t runs[max_ranks];
}  // namespace

local_block::local_block(const taskbench::task_graph& g, int r, int n)
    : first(taskbench::block_first(r, n, g.max_width)),
      last(taskbench::block_first(r + 1, n, g.max_width)),
      rank(r),
      nranks(n),
      width(g.max_width) {}

mailbox::mailbox(const taskbench::task_graph& g, const local_block& me) : g_(g), me_(me) {
  if (me.rank >= max_ranks) {
    std::fprintf(stderr, "error: taskbench_weft supports at most %d ranks\n", max_ranks);
    std::exit(1);
  }
  run_ = ++runs[me.rank];
  registry[me.rank].store(this, std::memory_order_release);
  weft::barrier();  // every rank can receive before anyone sends
}

mailbox::~mailbox() {
  // Every output sent to this rank was consumed by a local task, and the
  // caller waited for all of them; the barrier keeps run boundaries clean.
  weft::barrier();
  registry[me_.rank].store(nullptr, std::memory_order_release);
}

int mailbox::local_consumers(long t, long p) const {
  int n = 0;
  g_.for_each_output(t, p, [&](long x) { n += me_.owns(x) ? 1 : 0; });
  return n;
}

mailbox::slot& mailbox::find_or_add(long t, long p) {
  auto [it, added] = slots_.try_emplace(key(t, p));
  if (added) {
    it->second.future = it->second.promise.get_future().share();
    it->second.takes_left = local_consumers(t, p);
  }
  return it->second;
}

weft::shared_future<buffer> mailbox::take(long t, long p) {
  std::lock_guard hold(lock_);
  slot& s = find_or_add(t, p);
  weft::shared_future<buffer> f = s.future;
  if (--s.takes_left == 0 && s.delivered) slots_.erase(key(t, p));
  return f;
}

void mailbox::arrived(std::uint64_t run, long t, long p, buffer data) {
  auto* box = static_cast<mailbox*>(registry[weft::rank()].load(std::memory_order_acquire));
  if (box == nullptr || box->run_ != run) {
    std::fprintf(stderr, "error: rank %d got the output of task (%ld, %ld) of run %llu outside that run\n",
                 weft::rank(), t, p, static_cast<unsigned long long>(run));
    std::abort();
  }
  weft::promise<buffer> fulfil;
  {
    std::lock_guard hold(box->lock_);
    slot& s = box->find_or_add(t, p);
    fulfil = std::move(s.promise);
    s.delivered = true;
    if (s.takes_left == 0) box->slots_.erase(box->key(t, p));  // every consumer holds the future
  }
  // Outside the lock and after the last use of `box`: this may run the
  // consumer, which may finish the run and destroy the mailbox.
  fulfil.set_value(std::move(data));
}

void mailbox::send(long t, long x, const buffer& out) const {
  if (me_.nranks == 1) return;
  std::vector<int> dests;  // distinct other ranks that consume (t, x)
  g_.for_each_output(t, x, [&](long c) {
    const int r = me_.owner(c);
    if (r != me_.rank && std::find(dests.begin(), dests.end(), r) == dests.end()) dests.push_back(r);
  });
  for (int r : dests) weft::post_at(r, &mailbox::arrived, run_, t, x, out);
}

}  // namespace taskbench_weft
