// weft — when_all: one future for many.
//
// @code
//   // given: extern int f(); extern double g();
//   auto both = weft::when_all(weft::async(f), weft::async(g));
//   auto [a, b] = both.get();              // a.get(), b.get(): ready
// @endcode
#pragma once
#include <atomic>
#include <cstddef>
#include <iterator>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/future.hpp"

namespace weft {

namespace detail {

/// Counts inputs down to zero, then publishes the collected futures.
template <class Result>
class when_all_state final : public state<Result> {
 public:
  struct node : waiter {
    when_all_state* owner;
  };
  when_all_state(Result&& r, std::size_t n)
      : state<Result>([](state_base* s) { delete static_cast<when_all_state*>(s); }, 1),
        result_(std::move(r)),
        nodes_(n),
        remaining_(n + 1) {}
  void watch(std::size_t i, state_base* s) noexcept {
    nodes_[i].owner = this;
    nodes_[i].notify = [](waiter* w) noexcept { static_cast<node*>(w)->owner->arrive(); };
    if (!s->add_waiter(&nodes_[i])) arrive();
  }
  void arrive() noexcept {
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      this->set_value(std::move(result_));
      this->release();  // the reference held while inputs were pending
    }
  }
  Result& result() noexcept { return result_; }

 private:
  Result result_;
  std::vector<node> nodes_;
  std::atomic<std::size_t> remaining_;
};

}  // namespace detail

/// Future of all the given futures, returned (ready) in a tuple once every
/// one of them is ready. It never throws itself: get() on an element rethrows
/// that element's exception.
template <class... Fs>
auto when_all(Fs&&... fs) -> future<std::tuple<std::decay_t<Fs>...>> {
  using R = std::tuple<std::decay_t<Fs>...>;
  auto* s = new detail::when_all_state<R>(R(std::forward<Fs>(fs)...), sizeof...(Fs));
  s->add_ref();  // the future's reference
  std::apply(
      [&](auto&... f) {
        std::size_t i = 0;
        (s->watch(i++, detail::access<void>::get(f)), ...);
      },
      s->result());
  s->arrive();
  return detail::access<void>::template make<R>(s);
}

/// Range form: future of the vector of futures [first, last) (moved from).
template <class It>
auto when_all(It first, It last) -> future<std::vector<typename std::iterator_traits<It>::value_type>> {
  using F = typename std::iterator_traits<It>::value_type;
  using R = std::vector<F>;
  R v(std::make_move_iterator(first), std::make_move_iterator(last));
  auto* s = new detail::when_all_state<R>(std::move(v), static_cast<std::size_t>(std::distance(first, last)));
  s->add_ref();
  for (std::size_t i = 0; i < s->result().size(); ++i) s->watch(i, detail::access<void>::get(s->result()[i]));
  s->arrive();
  return detail::access<void>::template make<R>(s);
}
template <class F>
auto when_all(std::vector<F>&& v) {
  return when_all(v.begin(), v.end());
}
template <class F>
auto when_all(std::vector<F>& v) {
  return when_all(v.begin(), v.end());
}

}  // namespace weft
