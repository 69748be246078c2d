// Internal: what <weft/forkjoin.hpp>'s templates need — a forked task as
// bytes any rank can run (its packet), the cell its outcome goes to, and the
// calls into the compiled layer (src/forkjoin/).
//
// A forked task is pushed, as bytes, onto the forking worker's deque, which
// lives in the rank's symmetric heap: a rank of the same node takes from it
// through shared memory without the victim's help, a rank of another node
// asks the victim by message. The bytes are the packet (the function and its
// arguments, trivially copyable) plus the offset of its task_record from the
// executable's anchor, the same in every process of the program (as for
// remote calls, include/weft/detail/action.hpp). If nobody took the task
// when the parent joins, the parent runs its own copy in place: an unstolen
// task costs a push and a pop, nothing is serialized.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

#include "weft/detail/action.hpp"
#include "weft/detail/future_state.hpp"
#include "weft/pgas.hpp"

namespace weft::detail::fj {

struct cell_tag {};

/// Bytes of function and arguments a forked task may carry.
inline constexpr std::size_t payload_capacity = 224;

/// Where a task's outcome goes: in the process of the rank that forked it.
struct cell_base {
  event done;
  std::exception_ptr error;
  void* value = nullptr;          // the result's storage (value_size bytes)
  std::uint32_t value_size = 0;
  int ran_on = -1;                // the rank that ran it (set before `done`)
  std::byte* board = nullptr;     // spawn's: its outcome slot in this rank's heap, if any
};

/// A spawned future without an outcome slot (src/forkjoin/outcome_board.hpp).
inline constexpr std::uint64_t no_outcome_slot = ~std::uint64_t{0};

template <class T>
struct cell : cell_base {
  cell() noexcept {
    value = &storage;
    value_size = sizeof(T);
  }
  T take() {
    if (error) std::rethrow_exception(error);
    return *std::launder(reinterpret_cast<T*>(&storage));  // bytes of a trivially copyable T
  }
  alignas(T) unsigned char storage[sizeof(T)];
};

template <>
struct cell<void> : cell_base {
  void take() const {
    if (error) std::rethrow_exception(error);
  }
};

/// Runs a packet copied to `payload`, writing the result (if any) to `result`.
using run_fn = void (*)(const std::byte* payload, void* result);

inline constexpr std::uint64_t record_magic = 0x316b726f'6a746677ull;  // "wftjork1"

/// One per packet type, in the executable's read-only data.
struct task_record {
  std::uint64_t magic;
  const task_record* self;
  run_fn run;
  std::uint32_t result_size;
  std::uint32_t payload_size;
};

template <class P>
void run_packet(const std::byte* payload, void* result) {
  // A trivially copyable object lives again once its bytes are copied in.
  alignas(P) std::byte copy[sizeof(P)];
  std::memcpy(copy, payload, sizeof(P));
  P& p = *std::launder(reinterpret_cast<P*>(copy));
  using R = std::invoke_result_t<P&>;
  if constexpr (std::is_void_v<R>) {
    p();
  } else {
    R r = p();
    std::memcpy(result, static_cast<const void*>(&r), sizeof(R));
  }
}

template <class P>
constexpr std::uint32_t result_size_of() {
  using R = std::invoke_result_t<P&>;
  if constexpr (std::is_void_v<R>) return 0;
  else return sizeof(R);
}

template <class P>
inline constexpr task_record record_of{record_magic, &record_of<P>, &run_packet<P>, result_size_of<P>(),
                                       static_cast<std::uint32_t>(sizeof(P))};

/// A function pointer as its offset from the executable's anchor, so it
/// means the same function in every process (ASLR moves the absolute one).
template <class Fp>
struct code_ref {
  std::intptr_t offset;
  static code_ref of(Fp p) noexcept {
    return {reinterpret_cast<std::intptr_t>(p) - static_cast<std::intptr_t>(anchor_address())};
  }
  Fp get() const noexcept {
    return reinterpret_cast<Fp>(static_cast<std::intptr_t>(anchor_address()) + offset);
  }
  template <class... X>
  decltype(auto) operator()(X&&... x) const {
    return get()(std::forward<X>(x)...);
  }
};

template <class T>
struct is_reference_wrapper : std::false_type {};
template <class T>
struct is_reference_wrapper<std::reference_wrapper<T>> : std::true_type {};

template <class D>
inline constexpr bool is_function_pointer_v = std::is_pointer_v<D> && std::is_function_v<std::remove_pointer_t<D>>;

/// A value that may travel inside a packet: function pointers become code_refs.
template <class X>
auto portable(X&& x) {
  using D = std::decay_t<X>;
  if constexpr (is_function_pointer_v<D>) return code_ref<D>::of(x);
  else return D(std::forward<X>(x));
}

template <class D>
constexpr void check_argument() {
  static_assert(!std::is_member_pointer_v<D>,
                "weft fork-join: a member pointer cannot be a task's function or argument; wrap the call in a "
                "lambda that captures values");
  static_assert(!std::is_pointer_v<D> || is_function_pointer_v<D>,
                "weft fork-join: a raw pointer cannot be a task argument: the task may run on another rank, where "
                "the address means nothing. Put the data in global memory and pass a weft::global_ptr or "
                "weft::global_span");
  static_assert(!is_reference_wrapper<D>::value,
                "weft fork-join: std::ref/std::cref cannot be a task argument (the task may run on another rank); "
                "pass the value, or a weft::global_ptr to data in global memory");
  static_assert(std::is_trivially_copyable_v<D>,
                "weft fork-join: task arguments travel as bytes when the task is stolen, so they must be trivially "
                "copyable (numbers, structs of them, weft::global_ptr, weft::global_span); keep std::vector or "
                "std::string data in global memory (weft::global_vector) and pass a span of it");
}

template <class F>
constexpr void check_function() {
  static_assert(std::is_trivially_copyable_v<F>,
                "weft fork-join: the task's function travels as bytes when the task is stolen, so it must be "
                "trivially copyable: capture numbers, weft::global_ptr and weft::global_span by value; a capture "
                "of std::vector, std::string, std::function or std::shared_ptr is not (docs/FORKJOIN.md)");
}

/// The packet of f(args...): the function and its arguments in one
/// trivially copyable closure.
template <class F, class... A>
auto make_packet(F&& f, A&&... a) {
  check_argument<std::decay_t<F>>();
  (check_argument<std::decay_t<A>>(), ...);
  auto fn = portable(std::forward<F>(f));
  check_function<decltype(fn)>();
  auto p = [fn, ... args = portable(std::forward<A>(a))]() mutable { return std::invoke(fn, args...); };
  using P = decltype(p);
  static_assert(sizeof(P) <= payload_capacity,
                "weft fork-join: a task's captures and arguments may take at most 224 bytes; pass large data "
                "through global memory (a weft::global_span)");
  static_assert(alignof(P) <= 16, "weft fork-join: over-aligned captures are not supported");
  using R = std::invoke_result_t<P&>;
  static_assert(std::is_void_v<R> || std::is_trivially_copyable_v<R>,
                "weft fork-join: a task's result travels as bytes when the task is stolen, so it must be void or "
                "trivially copyable; return large results through global memory");
  return p;
}

template <class P>
using packet_result_t = std::invoke_result_t<P&>;

/// Runs packet `p` here into `c` (the task was not stolen).
template <class P>
void run_here(P& p, cell<packet_result_t<P>>& c) noexcept {
  using R = packet_result_t<P>;
  try {
    if constexpr (std::is_void_v<R>) {
      p();
    } else {
      R r = p();
      std::memcpy(c.value, static_cast<const void*>(&r), sizeof(R));
    }
  } catch (...) {
    c.error = std::current_exception();
  }
}

// ---- the compiled layer (src/forkjoin/) -------------------------------------------

/// Offset of `r` from the anchor (how a record travels).
inline std::uint64_t code_of(const task_record* r) noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(r) - anchor_address());
}

/// Before a fork: checks (held checkouts, captured stack addresses) and the
/// release of what this rank wrote through checkouts. `what` names the call.
void before_fork(const void* payload, std::size_t size, const char* what);
/// Pushes the task onto the calling worker's deque, its outcome going to
/// `c`. False when it cannot be queued (outside root_exec, off the workers,
/// or the deque is full): the caller runs it itself.
bool push(const task_record* r, const void* payload, std::uint32_t size, cell_base* c) noexcept;
/// Takes back the calling worker's newest task if it is the one for `c`
/// (nobody stole it): the caller then runs its own copy.
bool pop_if(const cell_base* c) noexcept;
/// Waits until the task of `c` completed elsewhere; acquires if it ran on
/// another rank. (Its error, if any, is in c.)
void join(cell_base& c, const char* what);

/// spawn's cells: made on the heap, freed when the root_exec ends. Returns
/// the offset of the outcome slot it gives the cell, or no_outcome_slot.
std::uint64_t adopt_future_cell(cell_base* c, void (*destroy)(cell_base*)) noexcept;
/// spawn ran the task itself: marks the cell done by the calling rank.
void finish_here(cell_base& c) noexcept;
/// A spawned task's result: waits for the cell (another node's: read from
/// its outcome slot when there, else asked by message).
void await_future(int owner, std::uint64_t cell, std::uint64_t slot, void* value, std::uint32_t size);

/// Collective start of a root_exec; returns its sequence number.
std::uint64_t root_begin();
/// Rank 0: the root task's outcome, sent to every rank.
void root_end(std::uint64_t seq, const void* value, std::uint32_t size, std::exception_ptr error);
/// Other ranks: waits for the root's outcome (runs stolen tasks meanwhile).
void root_wait(std::uint64_t seq, void* value, std::uint32_t size);

}  // namespace weft::detail::fj
