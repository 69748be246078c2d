#include "pgas/atomics.hpp"

#include <atomic>
#include <string>

#include "pgas/handlers.hpp"
#include "pgas/one_sided_heap.hpp"
#include "rma/rank_state.hpp"

namespace weft::pgas::detail {

namespace {

template <class T>
T bits_to(std::uint64_t b) noexcept {
  return weft::detail::pgas::from_bits<T>(b);
}

template <class T>
std::uint64_t to_bits(T v) noexcept {
  return weft::detail::pgas::to_bits(v);
}

template <class T>
std::uint64_t apply_typed(T* p, atomic_op op, std::uint64_t a, std::uint64_t b) noexcept {
  std::atomic_ref<T> x(*p);
  const T va = bits_to<T>(a);
  switch (op) {
    case atomic_op::load:
      return to_bits(x.load());
    case atomic_op::store:
      return to_bits(x.exchange(va));
    case atomic_op::exchange:
      return to_bits(x.exchange(va));
    case atomic_op::compare_exchange: {
      T expected = va;
      x.compare_exchange_strong(expected, bits_to<T>(b));
      return to_bits(expected);
    }
    case atomic_op::fetch_add: {
      if constexpr (std::is_integral_v<T>) {
        return to_bits(x.fetch_add(va));
      } else {
        T old = x.load(std::memory_order_relaxed);
        while (!x.compare_exchange_weak(old, old + va)) {
        }
        return to_bits(old);
      }
    }
    case atomic_op::fetch_min:
    case atomic_op::fetch_max: {
      T old = x.load(std::memory_order_relaxed);
      for (;;) {
        const bool replace = op == atomic_op::fetch_min ? va < old : old < va;
        if (!replace || x.compare_exchange_weak(old, va)) return to_bits(old);
      }
    }
  }
  return 0;
}

const char* op_name(atomic_op op) {
  switch (op) {
    case atomic_op::load: return "atomic load";
    case atomic_op::store: return "atomic store";
    case atomic_op::exchange: return "atomic exchange";
    case atomic_op::compare_exchange: return "atomic compare_exchange";
    case atomic_op::fetch_add: return "atomic fetch_add";
    case atomic_op::fetch_min: return "atomic fetch_min";
    case atomic_op::fetch_max: return "atomic fetch_max";
  }
  return "atomic (unknown operation)";
}

}  // namespace

std::size_t width_of(atomic_type t) noexcept {
  return t == atomic_type::i32 || t == atomic_type::u32 || t == atomic_type::f32 ? 4 : 8;
}

std::uint64_t apply_atomic(std::byte* p, atomic_type t, atomic_op op, std::uint64_t a, std::uint64_t b) noexcept {
  switch (t) {
    case atomic_type::i32: return apply_typed(reinterpret_cast<std::int32_t*>(p), op, a, b);
    case atomic_type::i64: return apply_typed(reinterpret_cast<std::int64_t*>(p), op, a, b);
    case atomic_type::u32: return apply_typed(reinterpret_cast<std::uint32_t*>(p), op, a, b);
    case atomic_type::u64: return apply_typed(reinterpret_cast<std::uint64_t*>(p), op, a, b);
    case atomic_type::f32: return apply_typed(reinterpret_cast<float*>(p), op, a, b);
    case atomic_type::f64: return apply_typed(reinterpret_cast<double*>(p), op, a, b);
  }
  return 0;
}

void check_atomic(int origin, int target, std::uint64_t offset, atomic_type t, atomic_op op) {
  if (static_cast<unsigned>(t) > static_cast<unsigned>(atomic_type::f64) ||
      static_cast<unsigned>(op) > static_cast<unsigned>(atomic_op::fetch_max))
    fail("malformed atomic request from rank " + std::to_string(origin));
  const std::size_t w = width_of(t);
  check_range(op_name(op), origin, target, offset, w);
  if (offset % w != 0)
    fail(std::string(op_name(op)) + " from rank " + std::to_string(origin) + " to rank " + std::to_string(target) +
         ", heap bytes [" + std::to_string(offset) + ", " + std::to_string(offset + w) + "): not aligned to " +
         std::to_string(w) + " bytes");
}

// The transport's one-sided atomics are 64-bit fetch_add, compare_swap and
// swap. Those serve the 64-bit operations that are one of them; everything
// else (32-bit types, min, max, floating-point add) is a compare_swap loop
// on the aligned 64-bit word that holds the operand: the operation is
// applied to a copy of the word read atomically, which then replaces the
// word if it did not change meanwhile.
std::uint64_t one_sided_atomic(const one_sided_heap& h, int rank, std::uint64_t offset, atomic_type t, atomic_op op,
                               std::uint64_t a, std::uint64_t b) {
  weft::detail::one_sided_ops& o = *h.ops;
  if (width_of(t) == 8) {
    switch (op) {
      case atomic_op::load:
        count_one_sided();
        return o.fetch_add(rank, h.key, offset, 0);
      case atomic_op::store:
      case atomic_op::exchange:
        count_one_sided();
        return o.swap(rank, h.key, offset, a);
      case atomic_op::compare_exchange:
        count_one_sided();
        return o.compare_swap(rank, h.key, offset, a, b);
      case atomic_op::fetch_add:
        if (t == atomic_type::i64 || t == atomic_type::u64) {
          count_one_sided();
          return o.fetch_add(rank, h.key, offset, a);
        }
        break;
      default:
        break;
    }
  }
  const std::uint64_t word_at = offset & ~std::uint64_t{7};
  const std::size_t within = static_cast<std::size_t>(offset - word_at);
  count_one_sided();
  std::uint64_t seen = o.fetch_add(rank, h.key, word_at, 0);
  for (;;) {
    std::uint64_t next = seen;
    const std::uint64_t old = apply_atomic(reinterpret_cast<std::byte*>(&next) + within, t, op, a, b);
    // Nothing to write (a load, a failed compare, a min or max that keeps
    // the value): the operation took effect when `seen` was read.
    if (next == seen) return old;
    count_one_sided();
    const std::uint64_t was = o.compare_swap(rank, h.key, word_at, seen, next);
    if (was == seen) return old;
    seen = was;
  }
}

}  // namespace weft::pgas::detail

namespace weft::detail::pgas {

using namespace weft::pgas::detail;

namespace {
/// An atomic in flight through messages; its address is the token.
struct atomic_record {
  promise<std::uint64_t> old;
};
}  // namespace

future<std::uint64_t> atomic(int rank, std::uint64_t offset, atomic_type t, atomic_op op, std::uint64_t a,
                             std::uint64_t b) {
  rank_comm& comm = weft::pgas::detail::current_comm();
  check_atomic(comm.rank, rank, offset, t, op);
  if (std::byte* p = address_of(rank, offset, true)) return make_ready_future(apply_atomic(p, t, op, a, b));
  // Atomics that return the old value are complete when they return.
  if (const one_sided_heap h = my_heap_one_sided(); h.ops != nullptr)
    return make_ready_future(one_sided_atomic(h, rank, offset, t, op, a, b));
  auto* r = new atomic_record;
  future<std::uint64_t> f = r->old.get_future();
  op_counter& c = current().in_flight[static_cast<int>(kind::atomic)];
  c.started();
  serialization::message body;
  body.bytes.resize(sizeof b);
  std::memcpy(body.bytes.data(), &b, sizeof b);
  send_am(comm, rank, pgas_messages,
          wire_header{wire_kind::atomic_request, static_cast<std::uint8_t>(t), static_cast<std::uint8_t>(op), 0, 0,
                      offset, a, reinterpret_cast<std::uintptr_t>(r)},
          std::move(body));
  return f.then([&c](future<std::uint64_t> done) {
    const std::uint64_t v = done.get();
    c.finished();
    return v;
  });
}

}  // namespace weft::detail::pgas

namespace weft::pgas::detail {

void serve_atomic(rank_comm& c, weft::detail::am_message& m, const wire_header& h) {
  const auto t = static_cast<atomic_type>(h.type);
  const auto op = static_cast<atomic_op>(h.op);
  check_atomic(m.source, c.rank, h.offset, t, op);
  std::uint64_t b = 0;
  serialization::reader in = m.reader();
  if (in.remaining() != sizeof b) fail("malformed atomic request from rank " + std::to_string(m.source));
  in.read_bytes(&b, sizeof b);
  const std::uint64_t old = apply_atomic(in_process(c.rank)->base + h.offset, t, op, h.operand, b);
  weft::detail::send_am(c, m.source, weft::detail::pgas_messages,
                        wire_header{wire_kind::atomic_reply, 0, 0, 0, 0, 0, old, h.token});
}

void atomic_replied(const wire_header& h) {
  auto* r = reinterpret_cast<weft::detail::pgas::atomic_record*>(static_cast<std::uintptr_t>(h.token));
  r->old.set_value(h.operand);
  delete r;
}

}  // namespace weft::pgas::detail
