// weft — remote-call ids without registration (templates; the parts that
// read the loaded image are in src/am/action_ids.cpp). How it works and its
// limits: docs/SERIALIZATION.md.
//
// For each callable type F and decayed argument types D... the program holds
// one constant record (a variable template instance) with a magic number, a
// pointer to itself, a hash of the signature and a type-erased invoker. The
// id of a call is the record's byte offset from an anchor object of the same
// executable: every process of the same binary computes the same offset,
// whatever ASLR does. A plain function pointer passed at run time adds its
// offset from the same anchor. The receiver checks that the offsets land in
// the main executable's loaded segments, that the magic and self pointer are
// right and that a 32-bit check word matches, before it calls anything.
//
// @code
//   // given: std::span<const std::byte> bytes, reply;
//   // given: std::span<const std::span<const std::byte>> bulk;
//   using namespace weft;
//   // sender: w << id; w(args...)  (write_call does both)
//   serialization::writer w;
//   detail::write_call(w, [](int x) { return 2 * x; }, 21);
//   // receiver
//   serialization::reader r(bytes, bulk);
//   detail::resolved_action a = detail::read_action(r);   // throws protocol_error
//   serialization::writer out;
//   serialization::owner keep = a.invoke(r, &out);       // out: status + value/error
//   // caller, on the reply
//   serialization::reader reply_reader(reply);
//   int v = detail::read_result<int>(reply_reader);       // or throws remote_error
// @endcode
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>

#include "weft/errors.hpp"
#include "weft/serialize.hpp"

namespace weft {

template <class T>
class buffer;


namespace detail {

using serialization::reader;
using serialization::writer;

/// A type-erased function pointer (null for stateless callables).
using action_target = void (*)();
/// Reads the arguments from `args` (which must then be at its end), calls the
/// function and, when `result` is not null, appends the outcome to it
/// (see read_result). With a null `result` an exception from the callee
/// propagates. Malformed arguments throw serialization_error in both cases.
/// The returned owner keeps alive what result's bulk segments point into.
using action_invoke_fn = serialization::owner (*)(action_target target, reader& args,
                                                  writer* result);

enum class action_kind : std::uint32_t { stateless = 1, function_pointer = 2 };

inline constexpr std::uint64_t action_magic = 0x31746361'74666577ull;  // "weftact1"

struct action_record {
  std::uint64_t magic;
  const action_record* self;  // == this for a genuine record
  std::uint64_t signature;    // FNV-1a of the signature text
  action_invoke_fn invoke;
  const char* name;  // signature text (not NUL-terminated), name_len bytes
  std::size_t name_len;
  action_kind kind;
};

/// A remote-call id. `code`: low 32 bits the record's offset from the
/// anchor, high 32 bits a check word. `target` (function pointers only, else
/// 0): low 32 bits the function's offset from the anchor, high 32 a check word.
struct action_id {
  std::uint64_t code = 0;
  std::uint64_t target = 0;
  bool operator==(const action_id&) const = default;
};

/// Wire size of an id: 8 bytes, 16 with a function pointer.
inline std::size_t wire_size(const action_id& id) noexcept { return id.target != 0 ? 16 : 8; }

// ---- signature hash -----------------------------------------------------------

template <class F, class... D>
constexpr std::string_view action_signature_text() noexcept {
  return __PRETTY_FUNCTION__;
}

constexpr std::uint64_t fnv1a(std::string_view s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

constexpr std::uint32_t check_word(std::uint32_t offset, std::uint64_t salt) noexcept {
  return static_cast<std::uint32_t>(mix64(salt ^ (std::uint64_t{offset} * 0x9e3779b97f4a7c15ull)) >> 32);
}

// ---- the executable image -------------------------------------------------------

struct action_anchor_t {
  unsigned char byte;
};
/// Offsets are taken from here. One object per executable (inline variable).
alignas(64) inline constexpr action_anchor_t action_anchor{0};

inline std::uintptr_t anchor_address() noexcept {
  return reinterpret_cast<std::uintptr_t>(&action_anchor);
}

/// Segment permission bits (the ELF program header's PF_X and PF_R).
inline constexpr std::uint32_t segment_exec = 1;
inline constexpr std::uint32_t segment_read = 4;

struct image_map {
  struct segment {
    std::uintptr_t begin, end;
    std::uint32_t flags;  // segment_read, segment_exec, ...
  };
  segment seg[16];
  int n = 0;
  bool anchor_inside = false;

  bool contains(std::uintptr_t a, std::size_t size, std::uint32_t need) const noexcept {
    for (int i = 0; i < n; ++i) {
      const segment& s = seg[i];
      if ((s.flags & need) == need && a >= s.begin && a < s.end && size <= s.end - a) return true;
    }
    return false;
  }
};


/// The loaded PT_LOAD segments of the main program (the first object that
/// dl_iterate_phdr reports), computed once.
const image_map& main_image() noexcept;

// ---- calling ------------------------------------------------------------------

template <class F, class... D>
constexpr auto call_result_helper() {
  if constexpr (std::is_invocable_v<F&, D&&...>) return std::type_identity<std::invoke_result_t<F&, D&&...>>{};
  else if constexpr (std::is_invocable_v<F&, D&...>) return std::type_identity<std::invoke_result_t<F&, D&...>>{};
  else return std::type_identity<void>{};
}

template <class F, class... D>
struct call_traits {
  static constexpr bool by_rvalue = std::is_invocable_v<F&, D&&...>;
  static constexpr bool invocable = by_rvalue || std::is_invocable_v<F&, D&...>;
  using raw_result = typename decltype(call_result_helper<F, D...>())::type;
  using result = std::decay_t<raw_result>;
};

// Arguments are passed as rvalues when F accepts that, else as lvalues (for
// non-const reference parameters); they are the received copies either way.
template <class F, class... D>
decltype(auto) apply_call(F& f, std::tuple<D...>& args) {
  return std::apply(
      [&f](D&... a) -> decltype(auto) {
        if constexpr (call_traits<F, D...>::by_rvalue) return std::invoke(f, std::move(a)...);
        else return std::invoke(f, a...);
      },
      args);
}

// Does a value of T possibly produce bulk segments? (Decides whether an
// invoker keeps the result on the heap.)
template <class T>
constexpr bool may_have_bulk();

template <class... T>
constexpr bool any_bulk(std::type_identity<std::tuple<T...>>) { return (may_have_bulk<T>() || ...); }
template <class... T>
constexpr bool any_bulk(std::type_identity<std::variant<T...>>) { return (may_have_bulk<T>() || ...); }

template <class T>
constexpr bool may_have_bulk() {
  using namespace serialization::detail;
  constexpr kind k = kind_v<T>;
  if constexpr (k == kind::bitwise || k == kind::boolean || k == kind::monostate) return false;
  else if constexpr (k == kind::vector)
    return bitwise_v<typename seq_traits<T>::elem> || may_have_bulk<typename seq_traits<T>::elem>();
  else if constexpr (k == kind::optional) return may_have_bulk<typename T::value_type>();
  else if constexpr (k == kind::array && is_std_array<T>::value)
    return may_have_bulk<typename T::value_type>();
  else if constexpr (k == kind::pair)
    return may_have_bulk<typename T::first_type>() || may_have_bulk<typename T::second_type>();
  else if constexpr (k == kind::tuple || k == kind::variant)
    return any_bulk(std::type_identity<T>{});
  else if constexpr (k == kind::map)
    return may_have_bulk<typename map_traits<T>::key>() || may_have_bulk<typename map_traits<T>::mapped>();
  else if constexpr (k == kind::set) return may_have_bulk<typename set_traits<T>::key>();
  else return true;  // strings, hooks, C arrays of non-bitwise elements
}

inline constexpr std::uint8_t result_value = 0;
inline constexpr std::uint8_t result_exception = 1;

/// Appends the current exception to `out` as (status 1, type, what).
void write_current_exception(writer& out);


/// Whether every bulk segment a value of T can produce lies in memory that
/// moving T keeps valid: a std::vector's heap buffer, a weft::buffer's
/// shared block. Not for other types: a bulk segment of a C array member
/// would move with its object, and a string's could be in its inline
/// (short-string) storage were the zero-copy threshold set that low.
template <class T>
constexpr bool bulk_outlives_move() {
  return serialization::detail::is_spec_v<T, std::vector> || serialization::detail::is_spec_v<T, weft::buffer>;
}

template <class F, class... D>
serialization::owner invoke_action(action_target target, reader& in, writer* out) {
  // Arguments, read in order (braced initialization), then the input must end.
  std::tuple<D...> args{in.template read<D>()...};
  in.expect_end();
  const auto call = [&]() -> decltype(auto) {
    if constexpr (std::is_pointer_v<F>) {
      F fp = reinterpret_cast<F>(target);
      return apply_call(fp, args);
    } else {
      (void)target;
      F f{};
      return apply_call(f, args);
    }
  };
  using R = typename call_traits<F, D...>::result;
  if (out == nullptr) {
    call();
    return {};
  }
  const std::size_t mark = out->size();
  const std::size_t mark_bulk = out->bulk().size();
  try {
    if constexpr (std::is_void_v<R>) {
      call();
      out->write_raw(result_value);
    } else if constexpr (!may_have_bulk<R>()) {
      const R r = call();
      out->write_raw(result_value);
      *out & r;
    } else if constexpr (bulk_outlives_move<R>()) {
      // Bulk segments would point into memory the result owns on the heap,
      // which a move hands over: serialize from here, and move the result
      // to the heap (for the caller to keep) only when segments point into
      // it. Small results (most) then cost no allocation.
      R r = call();
      out->write_raw(result_value);
      *out & r;
      if (out->bulk().size() != mark_bulk) return serialization::owner::adopt(std::make_unique<R>(std::move(r)));
    } else {
      // The result may be referenced by bulk segments: keep it on the heap
      // and hand it to the caller when it is.
      auto r = std::make_unique<R>(call());
      out->write_raw(result_value);
      *out & *r;
      if (out->bulk().size() != mark_bulk) return serialization::owner::adopt(std::move(r));
    }
  } catch (...) {
    out->truncate(mark, mark_bulk);
    write_current_exception(*out);
  }
  return {};
}

/// Reads a result written by an invoker: returns the value (R may be void)
/// or throws remote_error with the callee's exception message.
template <class R>
R read_result(reader& in) {
  std::uint8_t status;
  in.read_bytes(&status, 1);
  if (status == result_value) {
    if constexpr (std::is_void_v<R>) return;
    else return in.template read<R>();
  }
  if (status == result_exception) {
    std::string type, what;
    in & type & what;
    throw remote_error(std::move(type), what);
  }
  throw serialization_error("weft: deserialization failed: invalid remote-call result status");
}

// ---- records and ids -------------------------------------------------------------

template <class F, class... D>
inline constexpr action_record action_record_v{
    action_magic,
    &action_record_v<F, D...>,
    fnv1a(action_signature_text<F, D...>()),
    &invoke_action<F, D...>,
    action_signature_text<F, D...>().data(),
    action_signature_text<F, D...>().size(),
    std::is_pointer_v<F> ? action_kind::function_pointer : action_kind::stateless,
};

template <class Fn>
inline constexpr bool callable_ok_v =
    (std::is_pointer_v<Fn> && std::is_function_v<std::remove_pointer_t<Fn>>) ||
    (std::is_class_v<Fn> && std::is_empty_v<Fn> && std::is_default_constructible_v<Fn> &&
     !std::is_polymorphic_v<Fn>);

template <class F, class... A>
constexpr bool action_ok() {
  using Fn = std::decay_t<F>;
  if constexpr (!callable_ok_v<Fn>) {
    return false;
  } else if constexpr (((serialization::detail::is_pointer_like_v<std::decay_t<A>> ||
                         !serialization::is_serializable_v<std::decay_t<A>> ||
                         !std::is_default_constructible_v<std::decay_t<A>>) || ...)) {
    return false;
  } else if constexpr (!call_traits<Fn, std::decay_t<A>...>::invocable) {
    return false;
  } else {
    using R = typename call_traits<Fn, std::decay_t<A>...>::result;
    if constexpr (std::is_void_v<R>) return true;
    else return !serialization::detail::is_pointer_like_v<R> && serialization::is_serializable_v<R> &&
                std::is_default_constructible_v<R>;
  }
}

/// Compile-time checks with readable messages (the first problem only).
template <class F, class... A>
constexpr void check_action() {
  using Fn = std::decay_t<F>;
  static_assert(callable_ok_v<Fn>,
                "weft remote call: the callable must be a plain function (pointer) or a stateless "
                "lambda / empty function object without captures (`[](int x) { ... }`, not "
                "`[=]` or `[&]`); pass state as arguments instead");
  if constexpr (callable_ok_v<Fn>) {
    constexpr bool no_pointers = !(serialization::detail::is_pointer_like_v<std::decay_t<A>> || ...);
    static_assert(no_pointers,
                  "weft remote call: pointer, std::span or std::string_view arguments (and string "
                  "literals) mean nothing on another rank; pass values (std::string, std::vector, "
                  "...) or a weft::global_ptr");
    constexpr bool serializable = (serialization::is_serializable_v<std::decay_t<A>> && ...);
    static_assert(!no_pointers || serializable,
                  "weft remote call: an argument type is not serializable (see "
                  "docs/SERIALIZATION.md)");
    constexpr bool constructible = (std::is_default_constructible_v<std::decay_t<A>> && ...);
    static_assert(!no_pointers || !serializable || constructible,
                  "weft remote call: argument types must be default-constructible");
    if constexpr (no_pointers && serializable && constructible) {
      static_assert(call_traits<Fn, std::decay_t<A>...>::invocable,
                    "weft remote call: the callable cannot be called with these argument types "
                    "(arguments arrive as values; non-const lvalue reference parameters are "
                    "allowed, they refer to the received copies)");
      if constexpr (call_traits<Fn, std::decay_t<A>...>::invocable) {
        using R = typename call_traits<Fn, std::decay_t<A>...>::result;
        if constexpr (!std::is_void_v<R>) {
          static_assert(!serialization::detail::is_pointer_like_v<R>,
                        "weft remote call: the callable returns a pointer / span / string_view, "
                        "which means nothing on the calling rank");
          static_assert(serialization::detail::is_pointer_like_v<R> || serialization::is_serializable_v<R>,
                        "weft remote call: the return type is not serializable (see "
                        "docs/SERIALIZATION.md)");
          static_assert(std::is_default_constructible_v<R>,
                        "weft remote call: the return type must be default-constructible");
        }
      }
    }
  }
}

/// The decayed result type of calling F with Args (void allowed).
template <class F, class... Args>
using action_result_t = typename call_traits<std::decay_t<F>, std::decay_t<Args>...>::result;


/// The id code of record `rec`; throws protocol_error when it is not inside
/// the main executable.
std::uint64_t encode_record(const action_record* rec);
/// The id's function part for `fn` called through `rec` (whose code is
/// `code`); throws protocol_error when `fn` is null or not in the executable.
std::uint64_t encode_target(const action_record* rec, std::uint64_t code, action_target fn);

/// encode_target, remembering the last function encoded for this record on
/// this thread: a sender usually calls the same one again, and encoding is
/// a search of the executable's segments and a hash on every call. Not
/// inlined: a fiber may resume on another thread, and inlined code may keep
/// a thread_local's address across that.
template <class Fn>
[[gnu::noinline]] std::uint64_t encode_target_cached(const action_record* rec, std::uint64_t code, Fn fp) {
  static thread_local struct {
    Fn fp;
    std::uint64_t target;
  } last{};
  if (fp == nullptr || fp != last.fp) last = {fp, encode_target(rec, code, reinterpret_cast<action_target>(fp))};
  return last.target;
}

/// The record of a stateless callable type F called with Args.
template <class F, class... Args>
const action_record& action_record_of() noexcept {
  return action_record_v<std::decay_t<F>, std::decay_t<Args>...>;
}

/// Id of a stateless callable type F (captureless lambda, empty function
/// object) called with Args (decayed), as in
/// `action_id_of<decltype(lambda), int, std::string>()`.
template <class F, class... Args>
action_id action_id_of() {
  check_action<F, Args...>();
  using Fn = std::decay_t<F>;
  static_assert(!std::is_pointer_v<Fn>,
                "weft: action_id_of<F, Args...>() without a value is for stateless callable types; "
                "pass a function pointer as action_id_of<Args...>(fn)");
  if constexpr (action_ok<F, Args...>() && !std::is_pointer_v<Fn>) {
    static const std::uint64_t code = encode_record(&action_record_v<Fn, std::decay_t<Args>...>);
    return action_id{code, 0};
  } else {
    return action_id{};
  }
}

/// Id of any supported callable value called with Args (decayed): a
/// function (pointer) or a stateless callable object, as in
/// `action_id_of<int, int>(&add)`.
template <class... Args, class F>
action_id action_id_of(const F& f) {
  check_action<F, Args...>();
  using Fn = std::decay_t<F>;
  if constexpr (!action_ok<F, Args...>()) {
    return action_id{};
  } else if constexpr (std::is_pointer_v<Fn>) {
    const action_record* rec = &action_record_v<Fn, std::decay_t<Args>...>;
    static const std::uint64_t code = encode_record(rec);
    return action_id{code, encode_target_cached(rec, code, static_cast<Fn>(f))};
  } else {
    return action_id_of<Fn, Args...>();
  }
}

/// A validated id: the record and, for function pointers, the function.
struct resolved_action {
  const action_record* record = nullptr;
  action_target target = nullptr;

  /// See action_invoke_fn.
  serialization::owner invoke(reader& args, writer* result) const {
    return record->invoke(target, args, result);
  }
  /// The signature text ("F = ...; D = {...}") for diagnostics.
  std::string_view name() const noexcept {
    std::string_view s(record->name, record->name_len);
    const auto b = s.find("[with ");
    if (b == std::string_view::npos) return s;
    s.remove_prefix(b + 6);
    const auto e = s.rfind(']');
    return e == std::string_view::npos ? s : s.substr(0, e);
  }
};


/// Resolves an id without throwing: nullptr on success (out filled), else
/// the reason the id is invalid.
const char* try_action_from_id(const action_id& id, resolved_action& out) noexcept;

/// Resolves an id; throws protocol_error when it is invalid.
resolved_action action_from_id(const action_id& id);

// ---- wire helpers ------------------------------------------------------------------

/// Appends an id: 8 bytes (code), plus 8 (target) for function pointers.
inline void write_action_id(writer& w, const action_id& id) {
  w.write_raw(id.code);
  if (id.target != 0) w.write_raw(id.target);
}


/// Reads and validates an id written by write_action_id; throws
/// protocol_error (invalid id) or serialization_error (truncated input).
resolved_action read_action(reader& r);

/// Appends the id of `f` called with `args`, then the arguments, as in
/// `detail::write_call(w, &add, 2, 3)`.
template <class F, class... Args>
void write_call(writer& w, const F& f, const Args&... args) {
  if constexpr (action_ok<F, Args...>()) {
    write_action_id(w, action_id_of<Args...>(f));
    w(static_cast<const std::decay_t<Args>&>(args)...);
  } else {
    check_action<F, Args...>();
  }
}

}  // namespace detail
}  // namespace weft
