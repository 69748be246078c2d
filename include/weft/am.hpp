// weft — remote calls: run a function on another rank, get a future back.
//
// @code
//   int square(int x) { return x * x; }
//   weft::future<int> f = weft::async_at(1, square, 7);        // runs on rank 1
//   weft::post_at(2, [](std::string s) { std::puts(s.c_str()); },
//                 std::string("hi"));                          // fire and forget
//   std::vector<double> big_vector(1 << 20);
//   auto g = weft::async_at(0, [](std::vector<double> v) {     // lambdas too
//     return v.size(); }, big_vector);                         // (captureless)
// @endcode
//
// The callable is a plain function (pointer) or a captureless lambda / empty
// function object; every rank runs the same executable, so it is identified
// without any registration macro. Arguments and results are serialized:
// trivially copyable types, std::string, std::vector, std::array, std::pair,
// std::tuple, std::optional, maps, sets, variants, nestings of these, and
// user types with a `template <class Ar> void serialize(Ar& ar)` member (see
// docs/SERIALIZATION.md). Large contiguous payloads are not copied into the
// message (zero-copy; in-process ranks hand the buffer over). Pointers and
// references to the caller's memory cannot travel.
//
// The call runs as a task on the destination rank (it may block, call other
// ranks, call back). An exception thrown there is rethrown by get() as
// weft::remote_error carrying the original message; an exception escaping a
// post_at call ends the job, naming the rank.
//
// Delivery: a message a task sends leaves when that task ends, yields or
// waits (get(), a collective), or — when other tasks are ready on the same
// worker — together with theirs at the worker's next progress pass; messages
// are sent in batches. To wait for a remote effect, wait on a future; never
// spin on plain memory.
//
// Flow control: when a task floods an in-process (smp) rank faster than that
// rank runs the calls, async_at/post_at may briefly suspend the calling task
// (running other tasks meanwhile) until the destination catches up — so do
// not hold a std::mutex across them, as across future::get().
#pragma once
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "weft/detail/action.hpp"
#include "weft/serialize.hpp"
#include "weft/runtime.hpp"
#include "weft/sched.hpp"

namespace weft {

namespace detail {

/// Where a reply goes: the caller's future state. The pointer travels as an
/// opaque token and comes back to this process.
struct reply_slot {
  void (*deliver)(reply_slot*, serialization::reader&) noexcept = nullptr;
};

/// Sends one call (`body` = action id + arguments) to `dest`; `reply` is null
/// for post_at. `keep` owns what body's bulk views point into.
void send_call(int dest, serialization::message&& body, serialization::owner&& keep, reply_slot* reply);

/// The calling thread's spare serialization buffer (its capacity is reused:
/// a small call is copied into the message, so its buffer comes back here
/// instead of being freed and allocated again for the next call).
std::vector<std::byte> take_call_buffer() noexcept;

template <class R>
class remote_state final : public state<R>, public reply_slot {
 public:
  remote_state() : state<R>([](state_base* s) { delete static_cast<remote_state*>(s); }, 2) {
    deliver = [](reply_slot* slot, serialization::reader& in) noexcept {
      auto* self = static_cast<remote_state*>(slot);
      try {
        if constexpr (std::is_void_v<R>) {
          read_result<void>(in);
          self->set_value();
        } else {
          self->set_value(read_result<R>(in));
        }
      } catch (...) {
        self->set_exception(std::current_exception());
      }
      self->release();  // the reference the pending call held
    };
  }
};

template <class F, class... Args>
void encode_call(serialization::message& body, serialization::owner& keep, const F& f, Args&&... args) {
  serialization::writer w(take_call_buffer());
  write_call(w, f, args...);
  if constexpr ((may_have_bulk<std::decay_t<Args>>() || ...)) {
    if (!w.bulk().empty()) {
      // Large payloads are sent from the arguments themselves: keep them
      // alive (on the heap) until the transport is done with them, and
      // serialize again from there. Small calls (no bulk) skip the heap.
      auto held = std::make_unique<std::tuple<std::decay_t<Args>...>>(std::forward<Args>(args)...);
      w.clear();
      std::apply([&](auto&... a) { write_call(w, f, a...); }, *held);
      keep = serialization::owner::adopt(std::move(held));
    }
  }
  body = std::move(w).finish();
}

template <class F, class... Args>
using remote_result_t = typename call_traits<std::decay_t<F>, std::decay_t<Args>...>::result;

}  // namespace detail

/// Runs `f(args...)` as a task on rank `dest` (which may be this rank) and
/// returns the future of its result.
template <class F, class... Args>
auto async_at(int dest, F&& f, Args&&... args) -> future<detail::remote_result_t<F, Args...>> {
  using R = detail::remote_result_t<F, Args...>;
  serialization::message body;
  serialization::owner keep;
  detail::encode_call(body, keep, f, std::forward<Args>(args)...);
  auto* s = new detail::remote_state<R>();
  try {
    detail::send_call(dest, std::move(body), std::move(keep), s);
  } catch (...) {  // no such rank: nobody holds the state yet
    delete s;
    throw;
  }
  return detail::access<void>::template make<R>(s);
}

/// Runs `f(args...)` as a task on rank `dest`; no reply. finalize() waits for
/// it like for any other work.
template <class F, class... Args>
void post_at(int dest, F&& f, Args&&... args) {
  serialization::message body;
  serialization::owner keep;
  detail::encode_call(body, keep, f, std::forward<Args>(args)...);
  detail::send_call(dest, std::move(body), std::move(keep), nullptr);
}

}  // namespace weft
