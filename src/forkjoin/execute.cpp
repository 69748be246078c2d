// Running a task taken from a deque (the owner's own, a sibling's, another
// rank's): find its code in this executable, acquire if it was forked on
// another rank, run it, release, and send its outcome to its cell.
#include <memory>
#include <vector>

#include "forkjoin/state.hpp"
#include "trace/recorder.hpp"
#include "weft/checkout.hpp"

namespace weft::detail::fj {

namespace {

const task_record* resolve(const fj_rank& me, const entry_header& h) {
  const std::uintptr_t at = anchor_address() + h.code;
  const auto* r = reinterpret_cast<const task_record*>(at);
  if (!main_image().contains(at, sizeof(task_record), segment_read) || r->magic != record_magic || r->self != r ||
      r->payload_size != h.size)
    fail(me.rank, "a task forked on rank " + std::to_string(h.owner) +
                      " does not name a task of this executable (do all ranks run the same program?)");
  return r;
}

struct taken_task final : task_base {
  explicit taken_task(const task_entry& e) : entry(e) { run = &run_it; }
  task_entry entry;

  static void run_it(task_base* t) noexcept {
    std::unique_ptr<taken_task> self(static_cast<taken_task*>(t));
    const entry_header& h = self->entry.h;
    fj_rank& me = current_rank();
    const task_record* r = resolve(me, h);
    trace::name_running(trace::kind::forked_task, reinterpret_cast<const void*>(r->run));  // named after its packet
    const bool foreign = h.owner != me.rank;
    if (foreign) detail::pgas::task_boundary_acquire();  // see what the forking task wrote
    alignas(16) std::byte small[64];
    std::vector<std::byte> large;
    void* result = small;
    if (r->result_size > sizeof small) {
      large.resize(r->result_size);
      result = large.data();
    }
    std::exception_ptr error;
    try {
      r->run(self->entry.payload, result);
    } catch (...) {
      error = std::current_exception();
    }
    if (foreign) detail::pgas::task_boundary_release();  // the joiner sees what it wrote
    complete(me, h.owner, h.cell, result, r->result_size, std::move(error));
  }
};

}  // namespace

task_base* make_stolen_task(const task_entry& e) { return new taken_task(e); }

}  // namespace weft::detail::fj
