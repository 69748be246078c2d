// Backend choice, start-up and the global-quiescence shutdown.
#include <cstdlib>
#include <memory>

#include "am/local_transport.hpp"
#include "runtime/runtime_state.hpp"
#include "sched/topology.hpp"

namespace weft::detail {

namespace {

void make_schedulers(process_runtime& rt, int ranks_here, int threads_per_rank, int first_rank) {
  for (int i = 0; i < ranks_here; ++i) {
    sched_options so;
    so.threads = threads_per_rank;
    so.pin = rt.opts.pin;
    so.first_core = i * threads_per_rank;
    so.stack_size = rt.opts.stack_size;
    rt.local.push_back(std::make_unique<scheduler>(first_rank + i, so));
  }
}

/// Connects rank context i to its scheduler and transport; idle workers
/// drive the transport (progress=worker, the smp default).
void wire_rank(process_runtime& rt, int i) {
  scheduler* s = rt.local[static_cast<std::size_t>(i)].get();
  rank_comm* c = rt.comms[static_cast<std::size_t>(i)].get();
  am_transport* t = rt.transports[static_cast<std::size_t>(i)].get();
  c->transport = t;
  s->comm = c;
  s->idle_poll = [t] { return t->progress(); };
}

void start_smp(process_runtime& rt) {
  const runtime_options& o = rt.opts;
  rt.backend = "smp";
  rt.world_size = o.ranks;
  const int cores = hardware_cores();
  const int threads = o.threads > 0 ? o.threads : (cores / o.ranks > 0 ? cores / o.ranks : 1);
  make_schedulers(rt, o.ranks, threads, 0);
  auto world = std::make_shared<local_world>(o.ranks);
  for (int r = 0; r < o.ranks; ++r) {
    rt.comms.push_back(std::make_unique<rank_comm>(r, o.ranks, rt.local[static_cast<std::size_t>(r)].get()));
    rt.transports.push_back(world->make_transport(r));
    world->attach(r, rt.local[static_cast<std::size_t>(r)].get(), &am_dispatch, rt.comms.back().get());
    wire_rank(rt, r);
  }
  rt.backend_state = world;
}

/// All local ranks idle, every inbox empty and every message sent handled,
/// observed twice in a row with nothing new in between.
void wait_local_world_quiescent(process_runtime& rt) {
  std::uint64_t last_sent = ~std::uint64_t{0};
  int stable = 0;
  while (stable < 2) {
    for (auto& s : rt.local) s->wait_quiescent();
    bool moved = false;
    for (auto& t : rt.transports) moved |= t->progress();
    std::uint64_t handled = 0, sent = 0;
    for (auto& c : rt.comms) handled += c->handled.load(std::memory_order_acquire);
    for (auto& c : rt.comms) sent += c->sent.load(std::memory_order_acquire);
    bool idle = true;
    for (auto& s : rt.local) idle = idle && s->quiescent();
    if (!moved && idle && sent == handled && sent == last_sent)
      ++stable;
    else
      stable = 0;
    last_sent = sent;
  }
}

}  // namespace

void start_backend(process_runtime& rt) { start_smp(rt); }

void stop_backend(process_runtime& rt) {
  wait_local_world_quiescent(rt);
  for (auto& s : rt.local) s->stop();
  if (rt.shutdown) rt.shutdown();
  rt.transports.clear();
  rt.comms.clear();
}

}  // namespace weft::detail
