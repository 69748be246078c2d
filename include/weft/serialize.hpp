// weft — serialization for remote calls (header-only, no dependency on the
// rest of the runtime). User guide and wire format: docs/SERIALIZATION.md.
//
// @code
//   weft::serialization::message m = weft::serialize(42, 3.5, std::string("hi"));
//   // send m.bytes (inline) and m.bulk (zero-copy views of large payloads)
//   auto [i, d, s] = weft::deserialize<int, double, std::string>(m.bytes, m.bulk);
// @endcode
//
// User types: a member hook, used for both directions,
//
// @code
//   struct point { int x; std::string label;
//     template <class Ar> void serialize(Ar& ar) { ar & x & label; } };
// @endcode
//
// or, for a type you cannot change, a free function found by ADL in the
// type's namespace: template <class Ar> void serialize(Ar& ar, point& p).
//
// The reader checks every read against the input and throws
// weft::serialization_error on truncated or corrupt input; it never reads
// out of bounds and never allocates more than the input can justify.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "weft/errors.hpp"

namespace weft {

namespace serialization {

/// Contiguous payloads (std::vector / std::basic_string of bitwise elements)
/// larger than this many bytes are not copied into the inline buffer but
/// referenced as bulk segments (zero copy). Per-writer override: writer_options.
inline constexpr std::size_t default_zero_copy_threshold = 4096;
/// At most this many bulk segments per message by default; further large
/// payloads are copied inline.
inline constexpr std::size_t default_max_bulk_segments = 8;
/// A container whose elements serialize to zero inline bytes (e.g. empty user
/// types) may hold at most this many of them on the wire (bounds the work a
/// corrupt length can cause).
inline constexpr std::size_t max_zero_size_elements = std::size_t{1} << 20;

class writer;
class reader;

/// The result of serializing: inline bytes plus views of large payloads,
/// which still point into the serialized objects (keep those alive until the
/// transport is done with the views).
struct message {
  std::vector<std::byte> bytes;
  std::vector<std::span<const std::byte>> bulk;

  /// Total payload: inline bytes plus every bulk segment.
  std::size_t total_size() const noexcept {
    std::size_t n = bytes.size();
    for (auto s : bulk) n += s.size();
    return n;
  }
};

/// Type-erased, move-only owner of an object that bulk segments of a message
/// point into (e.g. a remote call's result). Empty when there is none.
class owner {
 public:
  owner() noexcept = default;
  template <class T>
  static owner adopt(std::unique_ptr<T> p) noexcept {
    owner o;
    o.p_ = p.release();
    o.del_ = [](void* q) noexcept { delete static_cast<T*>(q); };
    return o;
  }
  /// An owner that calls release(p) when it lets go (a reference into a
  /// pooled buffer, say).
  static owner borrow(void* p, void (*release)(void*) noexcept) noexcept {
    owner o;
    o.p_ = p;
    o.del_ = release;
    return o;
  }
  owner(owner&& o) noexcept : p_(std::exchange(o.p_, nullptr)), del_(std::exchange(o.del_, nullptr)) {}
  owner& operator=(owner&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      del_ = std::exchange(o.del_, nullptr);
    }
    return *this;
  }
  owner(const owner&) = delete;
  owner& operator=(const owner&) = delete;
  ~owner() { reset(); }
  void reset() noexcept {
    if (p_ != nullptr) del_(p_);
    p_ = nullptr;
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  void* p_ = nullptr;
  void (*del_)(void*) noexcept = nullptr;
};


struct writer_options {
  std::size_t zero_copy_threshold = default_zero_copy_threshold;
  std::size_t max_bulk_segments = default_max_bulk_segments;
};

namespace detail {

template <class T, template <class...> class Tmpl>
struct is_spec : std::false_type {};
template <template <class...> class Tmpl, class... A>
struct is_spec<Tmpl<A...>, Tmpl> : std::true_type {};
template <class T, template <class...> class Tmpl>
inline constexpr bool is_spec_v = is_spec<std::remove_cv_t<T>, Tmpl>::value;

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

template <class T>
struct is_span : std::false_type {};
template <class T, std::size_t N>
struct is_span<std::span<T, N>> : std::true_type {};

template <class T>
struct is_string_view : std::false_type {};
template <class C, class Tr>
struct is_string_view<std::basic_string_view<C, Tr>> : std::true_type {};

template <class T>
inline constexpr bool is_pointer_like_v =
    std::is_pointer_v<T> || std::is_member_pointer_v<T> || std::is_null_pointer_v<T> ||
    is_span<T>::value || is_string_view<T>::value;

// ---- user hooks -------------------------------------------------------------
template <class T, class Ar>
concept member_hook = requires(T& t, Ar& ar) { t.serialize(ar); };

namespace adl {
void serialize() = delete;  // stops unqualified lookup; only ADL finds hooks
template <class T, class Ar>
concept free_hook = requires(T& t, Ar& ar) {
  { serialize(ar, t) } -> std::same_as<void>;
};
template <class Ar, class T>
inline void call(Ar& ar, T& t) { serialize(ar, t); }
}  // namespace adl

template <class T>
inline constexpr bool has_hook_v = member_hook<T, writer> || member_hook<T, reader> ||
                                   adl::free_hook<T, writer> || adl::free_hook<T, reader>;

// ---- classification ---------------------------------------------------------
enum class kind {
  unsupported,
  pointer,  // rejected with its own message
  hook,
  bitwise,  // memcpy of sizeof(T) bytes
  boolean,
  string,   // std::basic_string
  vector,   // std::vector (incl. vector<bool>), std::deque, std::list
  array,    // std::array / C array of non-bitwise elements
  pair,
  tuple,
  optional,
  variant,
  monostate,
  map,      // std::map, std::multimap, std::unordered_(multi)map
  set,      // std::set, std::multiset, std::unordered_(multi)set
};

template <class T>
struct seq_traits : std::false_type {};
template <class T, class A>
struct seq_traits<std::vector<T, A>> : std::true_type { using elem = T; };
template <class T, class A>
struct seq_traits<std::deque<T, A>> : std::true_type { using elem = T; };
template <class T, class A>
struct seq_traits<std::list<T, A>> : std::true_type { using elem = T; };

template <class T>
struct map_traits : std::false_type {};
template <class K, class V, class C, class A>
struct map_traits<std::map<K, V, C, A>> : std::true_type { using key = K; using mapped = V; };
template <class K, class V, class C, class A>
struct map_traits<std::multimap<K, V, C, A>> : std::true_type { using key = K; using mapped = V; };
template <class K, class V, class H, class E, class A>
struct map_traits<std::unordered_map<K, V, H, E, A>> : std::true_type { using key = K; using mapped = V; };
template <class K, class V, class H, class E, class A>
struct map_traits<std::unordered_multimap<K, V, H, E, A>> : std::true_type { using key = K; using mapped = V; };

template <class T>
struct set_traits : std::false_type {};
template <class K, class C, class A>
struct set_traits<std::set<K, C, A>> : std::true_type { using key = K; };
template <class K, class C, class A>
struct set_traits<std::multiset<K, C, A>> : std::true_type { using key = K; };
template <class K, class H, class E, class A>
struct set_traits<std::unordered_set<K, H, E, A>> : std::true_type { using key = K; };
template <class K, class H, class E, class A>
struct set_traits<std::unordered_multiset<K, H, E, A>> : std::true_type { using key = K; };

template <class T>
constexpr kind kind_of();

template <class T>
inline constexpr kind kind_v = kind_of<std::remove_cv_t<T>>();

template <class T>
inline constexpr bool bitwise_v = kind_v<T> == kind::bitwise;

template <class T>
constexpr kind kind_of() {
  if constexpr (std::is_reference_v<T> || std::is_function_v<T> || std::is_void_v<T>) {
    return kind::unsupported;
  } else if constexpr (is_pointer_like_v<T>) {
    return kind::pointer;
  } else if constexpr (has_hook_v<T>) {
    return kind::hook;
  } else if constexpr (std::is_same_v<T, bool>) {
    return kind::boolean;
  } else if constexpr (std::is_same_v<T, std::monostate>) {
    return kind::monostate;
  } else if constexpr (std::is_array_v<T>) {
    using E = std::remove_all_extents_t<T>;
    return kind_v<E> == kind::bitwise ? kind::bitwise
           : kind_v<E> == kind::pointer ? kind::pointer
                                        : kind::array;
  } else if constexpr (is_std_array<T>::value) {
    using E = typename T::value_type;
    return kind_v<E> == kind::bitwise ? kind::bitwise
           : kind_v<E> == kind::pointer ? kind::pointer
                                        : kind::array;
  } else if constexpr (is_spec_v<T, std::basic_string>) {
    return kind::string;
  } else if constexpr (seq_traits<T>::value) {
    return kind::vector;
  } else if constexpr (is_spec_v<T, std::pair>) {
    return kind::pair;
  } else if constexpr (is_spec_v<T, std::tuple>) {
    return kind::tuple;
  } else if constexpr (is_spec_v<T, std::optional>) {
    return kind::optional;
  } else if constexpr (is_spec_v<T, std::variant>) {
    return kind::variant;
  } else if constexpr (map_traits<T>::value) {
    return kind::map;
  } else if constexpr (set_traits<T>::value) {
    return kind::set;
  } else if constexpr (std::is_trivially_copyable_v<T> && !std::is_empty_v<T>) {
    return kind::bitwise;
  } else if constexpr (std::is_trivially_copyable_v<T> && std::is_empty_v<T> &&
                       std::is_default_constructible_v<T>) {
    return kind::monostate;  // empty tag types: nothing on the wire
  } else {
    return kind::unsupported;
  }
}

template <class T>
constexpr bool serializable_impl();

template <class... T>
constexpr bool all_serializable() { return (serializable_impl<std::remove_cv_t<T>>() && ...); }

template <class T>
constexpr bool serializable_impl() {
  constexpr kind k = kind_of<T>();
  if constexpr (k == kind::unsupported || k == kind::pointer) {
    return false;
  } else if constexpr (k == kind::hook || k == kind::bitwise || k == kind::boolean ||
                       k == kind::monostate) {
    return true;
  } else if constexpr (k == kind::string) {
    return kind_v<typename T::value_type> == kind::bitwise;
  } else if constexpr (k == kind::vector) {
    return all_serializable<typename seq_traits<T>::elem>();
  } else if constexpr (k == kind::array) {
    if constexpr (std::is_array_v<T>) return all_serializable<std::remove_all_extents_t<T>>();
    else return all_serializable<typename T::value_type>();
  } else if constexpr (k == kind::pair) {
    return all_serializable<typename T::first_type, typename T::second_type>();
  } else if constexpr (k == kind::tuple) {
    return []<class... E>(std::type_identity<std::tuple<E...>>) {
      return all_serializable<E...>();
    }(std::type_identity<T>{});
  } else if constexpr (k == kind::optional) {
    return all_serializable<typename T::value_type>();
  } else if constexpr (k == kind::variant) {
    return []<class... E>(std::type_identity<std::variant<E...>>) {
      return all_serializable<E...>() && (std::is_default_constructible_v<E> && ...);
    }(std::type_identity<T>{});
  } else if constexpr (k == kind::map) {
    return all_serializable<typename map_traits<T>::key, typename map_traits<T>::mapped>();
  } else if constexpr (k == kind::set) {
    return all_serializable<typename set_traits<T>::key>();
  } else {
    return false;
  }
}

/// Smallest number of inline bytes a value of T occupies (0: unknown).
template <class T>
constexpr std::size_t min_wire_size() {
  constexpr kind k = kind_v<T>;
  if constexpr (k == kind::bitwise) {
    return sizeof(T);
  } else if constexpr (k == kind::boolean || k == kind::optional) {
    return 1;
  } else if constexpr (k == kind::string || k == kind::vector || k == kind::map ||
                       k == kind::set) {
    return 1;  // a short length header
  } else if constexpr (k == kind::variant) {
    return 4;
  } else if constexpr (k == kind::pair) {
    return min_wire_size<typename T::first_type>() + min_wire_size<typename T::second_type>();
  } else if constexpr (k == kind::tuple) {
    return []<class... E>(std::type_identity<std::tuple<E...>>) {
      return (std::size_t{0} + ... + min_wire_size<E>());
    }(std::type_identity<std::remove_cv_t<T>>{});
  } else if constexpr (k == kind::array) {
    if constexpr (std::is_array_v<T>)
      return std::extent_v<T> * min_wire_size<std::remove_extent_t<T>>();
    else
      return std::tuple_size_v<T> * min_wire_size<typename T::value_type>();
  } else {
    return 0;  // hooks, empty types
  }
}

// Length header of strings and sequences. Most counts are small, and every
// byte counts on the wire (MPICH over UCX sends up to 92 bytes by a cheaper
// path; docs/DISTRIBUTED.md, "The 92-byte short path"): one byte holds a count up to short_count_max;
// otherwise a marker byte says which of the two long forms follows, then the
// count as a u64. Only large payloads go as bulk segments, so a bulk count
// always takes the long form.
inline constexpr std::uint8_t short_count_max = 0xfc;
inline constexpr std::uint8_t long_count_marker = 0xfd;  // u64 count, elements inline
inline constexpr std::uint8_t bulk_count_marker = 0xfe;  // u64 count, elements in a bulk segment

[[noreturn]] inline void fail(const char* what) {
  throw serialization_error(std::string("weft: deserialization failed: ") + what);
}

template <class T>
constexpr void check_supported() {
  static_assert(kind_v<T> != kind::pointer,
                "weft serialization: pointers, std::span and std::string_view cannot be sent to "
                "another rank (the address means nothing there); send the values instead "
                "(std::vector, std::string) or a weft::global_ptr");
  static_assert(kind_v<T> != kind::unsupported,
                "weft serialization: unsupported type. Supported: trivially copyable types, "
                "std::string, std::vector, std::array, std::pair, std::tuple, std::optional, "
                "std::variant, std::map/set (and unordered), std::deque, std::list, and types with "
                "a `template <class Ar> void serialize(Ar& ar)` member (or an ADL free function "
                "`serialize(Ar&, T&)`). See docs/SERIALIZATION.md");
  if constexpr (kind_v<T> == kind::string)
    static_assert(kind_v<typename T::value_type> == kind::bitwise,
                  "weft serialization: std::basic_string of a non-trivially-copyable character type");
}

}  // namespace detail

/// True when T can be serialized (recursively).
template <class T>
inline constexpr bool is_serializable_v = detail::serializable_impl<std::remove_cv_t<T>>();

// ============================================================================
// writer
// ============================================================================

/// Appends values to a growable byte buffer; large contiguous payloads become
/// bulk segments (views into the serialized objects, see message).
class writer {
 public:
  static constexpr bool is_saving = true;
  static constexpr bool is_loading = false;

  writer() = default;
  explicit writer(writer_options opt) : opt_(opt) {}
  /// Reuses `buffer` (its contents are discarded; its size becomes room for
  /// the fields to come, so a buffer handed back after a call of the same
  /// shape is written without growing or zeroing it again).
  explicit writer(std::vector<std::byte>&& buffer, writer_options opt = {})
      : bytes_(std::move(buffer)), opt_(opt) {}
  writer(const writer& o) : bytes_(o.bytes()), bulk_(o.bulk_), opt_(o.opt_), end_(o.end_) {}
  writer(writer&& o) noexcept
      : bytes_(std::move(o.bytes_)), bulk_(std::move(o.bulk_)), opt_(o.opt_), end_(std::exchange(o.end_, 0)) {
    o.bytes_.clear();
  }
  writer& operator=(writer o) noexcept {
    bytes_ = std::move(o.bytes_);
    bulk_ = std::move(o.bulk_);
    opt_ = o.opt_;
    end_ = std::exchange(o.end_, 0);
    return *this;
  }

  /// `ar & a & b` — the form used in serialize hooks.
  template <class T>
  writer& operator&(const T& v) {
    save(v);
    return *this;
  }
  /// `ar(a, b, c)` — same, several at once.
  template <class... T>
  writer& operator()(const T&... v) {
    (save(v), ...);
    return *this;
  }

  /// Appends n raw bytes.
  void write_bytes(const void* p, std::size_t n) {
    if (n == 0) return;
    std::memcpy(append(n), p, n);
  }

  /// Appends the value of a trivially copyable object as sizeof(T) bytes.
  template <class T>
  void write_raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(append(sizeof(T)), &v, sizeof(T));
  }

  /// Appends `count` elements of a trivially copyable E as one array: inline
  /// when small, else as a bulk segment viewing `data` (zero copy: `data`
  /// must stay valid until the transport is done with the message). This is
  /// how std::vector and std::string travel; weft::buffer uses it too.
  /// `bulk_above` lowers the size from which it goes as a bulk segment
  /// (never raises it past the writer's zero_copy_threshold).
  template <class E>
  void write_array(const E* data, std::size_t count, std::size_t bulk_above = SIZE_MAX) {
    static_assert(std::is_trivially_copyable_v<E>);
    save_contiguous(data, count, std::min(bulk_above, opt_.zero_copy_threshold));
  }

  /// Inline bytes written so far (mutable: a transport may patch a header).
  /// Valid until the next write.
  std::vector<std::byte>& bytes() noexcept {
    trim();
    return bytes_;
  }
  const std::vector<std::byte>& bytes() const noexcept {
    trim();
    return bytes_;
  }
  /// Bulk segments recorded so far, in wire order.
  const std::vector<std::span<const std::byte>>& bulk() const noexcept { return bulk_; }
  std::size_t size() const noexcept { return end_; }
  const writer_options& options() const noexcept { return opt_; }

  /// Moves the result out; the writer is left empty.
  message finish() && {
    trim();
    end_ = 0;
    return message{std::move(bytes_), std::move(bulk_)};
  }
  message take() {
    trim();
    message m{std::move(bytes_), std::move(bulk_)};
    bytes_.clear();
    bulk_.clear();
    end_ = 0;
    return m;
  }
  void clear() noexcept {
    end_ = 0;
    bulk_.clear();
  }
  /// Drops everything written after inline size n and bulk count nb (used to
  /// roll back a partially written value).
  void truncate(std::size_t n, std::size_t nb) {
    if (n < end_) end_ = n;
    if (nb < bulk_.size()) bulk_.resize(nb);
  }

 private:
  template <class T>
  void save(const T& v);

  template <class E>
  void save_contiguous(const E* data, std::size_t count) {
    save_contiguous(data, count, opt_.zero_copy_threshold);
  }
  template <class E>
  void save_contiguous(const E* data, std::size_t count, std::size_t bulk_above) {
    const std::size_t nbytes = count * sizeof(E);
    if (nbytes > bulk_above && bulk_.size() < opt_.max_bulk_segments) {
      write_count(count, true);
      bulk_.emplace_back(reinterpret_cast<const std::byte*>(data), nbytes);
    } else {
      write_count(count, false);
      write_bytes(data, nbytes);
    }
  }
  /// A length header (see short_count_max).
  void write_count(std::size_t count, bool bulk) {
    if (!bulk && count <= detail::short_count_max) {
      write_raw<std::uint8_t>(static_cast<std::uint8_t>(count));
      return;
    }
    std::byte* at = append(9);
    at[0] = std::byte{bulk ? detail::bulk_count_marker : detail::long_count_marker};
    const std::uint64_t n = count;
    std::memcpy(at + 1, &n, 8);
  }

  // n more bytes at the end; returns where they start. bytes_ is kept
  // larger than what was written (end_), so a field is a compare and a
  // memcpy: std::vector's insert is an out-of-line general routine of ~40
  // instructions per 8-byte field, a few per remote call. Growth is
  // geometric from 64 bytes (a small call needs one allocation, and a
  // reused buffer is zeroed ahead only in doubling steps).
  std::byte* append(std::size_t n) {
    if (bytes_.size() - end_ < n) [[unlikely]]
      grow(n);
    std::byte* at = bytes_.data() + end_;
    end_ += n;
    return at;
  }
  void grow(std::size_t n) { bytes_.resize(std::max<std::size_t>({end_ + n, 2 * bytes_.size(), 64})); }
  // Drops the room past what was written (before bytes_ is shown or handed on).
  void trim() const noexcept {
    if (bytes_.size() != end_) bytes_.resize(end_);
  }

  // [0, end_) written; [end_, size()) room for the next fields.
  mutable std::vector<std::byte> bytes_;
  std::vector<std::span<const std::byte>> bulk_;
  writer_options opt_{};
  std::size_t end_ = 0;
};

// ============================================================================
// reader
// ============================================================================

/// Reads values back from inline bytes plus the received bulk segments (in
/// the order the writer recorded them). Every read is bounds-checked.
class reader {
 public:
  static constexpr bool is_saving = false;
  static constexpr bool is_loading = true;

  explicit reader(std::span<const std::byte> bytes,
                  std::span<const std::span<const std::byte>> bulk = {}) noexcept
      : cur_(bytes.data()), end_(bytes.data() + bytes.size()), bulk_views_(bulk) {}

  /// Bulk segments held in owning buffers: a std::vector<std::byte> value
  /// whose payload arrived as bulk segment i is moved out of owned[i] (no
  /// copy); other types copy from it.
  reader(std::span<const std::byte> bytes, std::span<std::vector<std::byte>> owned) noexcept
      : cur_(bytes.data()), end_(bytes.data() + bytes.size()), bulk_owned_(owned) {}

  template <class T>
  reader& operator&(T& v) {
    load(v);
    return *this;
  }
  template <class... T>
  reader& operator()(T&... v) {
    (load(v), ...);
    return *this;
  }

  /// Reads one value of type T (T must be default-constructible, or a
  /// trivially copyable type).
  template <class T>
  T read() {
    static_assert(!std::is_reference_v<T> && !std::is_const_v<T> && !std::is_array_v<T>,
                  "weft serialization: read<T>() needs a non-const, non-reference, non-array T");
    if constexpr (detail::kind_v<T> == detail::kind::bitwise) {
      std::array<std::byte, sizeof(T)> raw;
      read_bytes(raw.data(), sizeof(T));
      return std::bit_cast<T>(raw);
    } else {
      static_assert(std::is_default_constructible_v<T> || !is_serializable_v<T>,
                    "weft serialization: deserialized types must be default-constructible (or "
                    "trivially copyable)");
      T v{};
      load(v);
      return v;
    }
  }

  /// Copies n raw bytes out of the input (throws when fewer remain).
  void read_bytes(void* dst, std::size_t n) {
    if (static_cast<std::size_t>(end_ - cur_) < n) [[unlikely]] truncated(n);
    if (n != 0) std::memcpy(dst, cur_, n);
    cur_ += n;
  }
  /// A view of the next n input bytes, consumed (throws when fewer remain).
  std::span<const std::byte> read_view(std::size_t n) {
    if (static_cast<std::size_t>(end_ - cur_) < n) [[unlikely]] truncated(n);
    std::span<const std::byte> s(cur_, n);
    cur_ += n;
    return s;
  }

  /// Lets values that can alias received memory (weft::buffer) share
  /// ownership of what the bulk views point into instead of copying: `keep`
  /// owns it (a transport's receive block, the sender's objects in-process).
  /// The first such value moves it into a shared owner.
  reader& share_bulk_owner(owner* keep) noexcept {
    keep_src_ = keep;
    return *this;
  }

  /// An array as written by writer::write_array<E>: its bytes (count *
  /// sizeof(E), not necessarily aligned for E) and, when they are a bulk
  /// segment whose memory the reader can share, an owner that keeps them
  /// valid past the input. A null owner: the bytes live only as long as the
  /// input; copy them.
  template <class E>
  std::pair<std::span<const std::byte>, std::shared_ptr<const void>> read_array_shared() {
    static_assert(std::is_trivially_copyable_v<E>);
    bool is_bulk;
    const std::uint64_t count = read_header(is_bulk);
    if (!is_bulk) {
      if (count > remaining() / sizeof(E)) too_long(count);
      return {read_view(static_cast<std::size_t>(count) * sizeof(E)), nullptr};
    }
    const std::size_t i = take_bulk(count, sizeof(E));
    if (!bulk_owned_.empty()) {
      auto held = std::make_shared<std::vector<std::byte>>(std::move(bulk_owned_[i]));
      return {std::span<const std::byte>(*held), held};
    }
    if (!shared_keep_ && keep_src_ != nullptr && *keep_src_)
      shared_keep_ = std::make_shared<owner>(std::move(*keep_src_));
    return {bulk_views_[i], shared_keep_};
  }

  /// Inline bytes not yet read.
  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - cur_); }
  /// Bulk segments not yet consumed.
  std::size_t bulk_remaining() const noexcept { return bulk_count() - next_bulk_; }
  /// Everything consumed (inline bytes and bulk segments)?
  bool at_end() const noexcept { return cur_ == end_ && bulk_remaining() == 0; }
  /// Throws unless everything was consumed (detects a type mismatch between
  /// sender and receiver, or trailing garbage).
  void expect_end() const {
    if (cur_ != end_) detail::fail("trailing bytes after the last value");
    if (bulk_remaining() != 0) detail::fail("unused bulk segments after the last value");
  }

 private:
  template <class T>
  void load(T& v);

  [[noreturn]] void truncated(std::size_t n) const {
    throw serialization_error("weft: deserialization failed: truncated input (needed " +
                              std::to_string(n) + " more bytes, " +
                              std::to_string(remaining()) + " left)");
  }

  std::size_t bulk_count() const noexcept {
    return bulk_owned_.empty() ? bulk_views_.size() : bulk_owned_.size();
  }

  // Returns the next bulk segment, which must hold exactly `count` elements
  // of `elem` bytes.
  std::size_t take_bulk(std::uint64_t count, std::size_t elem) {
    if (next_bulk_ >= bulk_count()) detail::fail("a bulk segment is missing");
    const std::size_t i = next_bulk_++;
    const std::size_t have = bulk_owned_.empty() ? bulk_views_[i].size() : bulk_owned_[i].size();
    if (count > have / elem || count * elem != have)
      detail::fail("bulk segment size does not match its length field");
    return i;
  }
  const std::byte* bulk_data(std::size_t i) const noexcept {
    return bulk_owned_.empty() ? bulk_views_[i].data() : bulk_owned_[i].data();
  }

  [[noreturn]] void too_long(std::uint64_t count) const {
    throw serialization_error("weft: deserialization failed: length field (" + std::to_string(count) +
                              " elements) exceeds the remaining input (" + std::to_string(remaining()) +
                              " bytes)");
  }

  // Reads a length header (see detail::short_count_max).
  std::uint64_t read_header(bool& is_bulk) {
    std::uint8_t first;
    read_bytes(&first, 1);
    is_bulk = false;
    if (first <= detail::short_count_max) return first;
    if (first != detail::long_count_marker && first != detail::bulk_count_marker)
      detail::fail("invalid length header");
    is_bulk = first == detail::bulk_count_marker;
    std::uint64_t count;
    read_bytes(&count, sizeof count);
    return count;
  }

  template <class E, class C>
  void load_contiguous(C& c) {
    bool is_bulk;
    const std::uint64_t count = read_header(is_bulk);
    if (is_bulk) {
      const std::size_t i = take_bulk(count, sizeof(E));
      if constexpr (std::is_same_v<C, std::vector<std::byte>>) {
        if (!bulk_owned_.empty()) {
          c = std::move(bulk_owned_[i]);
          return;
        }
      }
      const E* p = reinterpret_cast<const E*>(bulk_data(i));
      assign_contiguous(c, p, static_cast<std::size_t>(count));
    } else {
      if (count > remaining() / sizeof(E)) too_long(count);
      assign_contiguous(c, cur_, static_cast<std::size_t>(count));
      cur_ += count * sizeof(E);
    }
  }

  template <class C, class Src>
  static void assign_contiguous(C& c, const Src* src, std::size_t count) {
    using E = typename C::value_type;
    c.resize(count);
    if (count != 0) std::memcpy(static_cast<void*>(c.data()), src, count * sizeof(E));
  }

  // Element count of a non-contiguous container, checked against the input.
  template <class E>
  std::size_t read_count() {
    bool is_bulk;
    const std::uint64_t count = read_header(is_bulk);
    if (is_bulk) detail::fail("bulk flag on a non-contiguous container");
    constexpr std::size_t m = detail::min_wire_size<E>();
    if constexpr (m != 0) {
      if (count > remaining() / m) too_long(count);
    } else {
      if (count > max_zero_size_elements && count > remaining()) too_long(count);
    }
    return static_cast<std::size_t>(count);
  }
  // Progress guard for elements that may occupy zero inline bytes.
  struct progress {
    const std::byte* last;
    std::size_t zero = 0;
  };
  void check_progress(progress& p) {
    if (cur_ == p.last) {
      if (++p.zero > max_zero_size_elements) detail::fail("too many zero-size elements");
    }
    p.last = cur_;
  }
  template <class E>
  std::size_t reserve_hint(std::size_t count) const {
    constexpr std::size_t m = detail::min_wire_size<E>();
    const std::size_t cap = m != 0 ? remaining() / m : std::min(remaining(), max_zero_size_elements);
    return std::min(count, cap);
  }

  template <class T>
  void load_sequence(T& c);
  template <class T>
  void load_map(T& c);
  template <class T>
  void load_set(T& c);
  template <class V, std::size_t... I>
  void load_variant(V& v, std::uint32_t idx, std::index_sequence<I...>);

  const std::byte* cur_;
  const std::byte* end_;
  std::span<const std::span<const std::byte>> bulk_views_{};
  std::span<std::vector<std::byte>> bulk_owned_{};
  std::size_t next_bulk_ = 0;
  owner* keep_src_ = nullptr;           // see share_bulk_owner
  std::shared_ptr<owner> shared_keep_;  // keep_src_'s contents once shared
};

// ============================================================================
// writer::save
// ============================================================================

template <class T>
void writer::save(const T& v) {
  using namespace detail;
  check_supported<T>();
  constexpr kind k = kind_v<T>;
  if constexpr (k == kind::bitwise) {
    write_raw(v);
  } else if constexpr (k == kind::hook) {
    auto& m = const_cast<std::remove_cv_t<T>&>(v);  // hooks are shared by both directions
    if constexpr (member_hook<std::remove_cv_t<T>, writer>) m.serialize(*this);
    else adl::call(*this, m);
  } else if constexpr (k == kind::boolean) {
    write_raw<std::uint8_t>(v ? 1 : 0);
  } else if constexpr (k == kind::monostate) {
  } else if constexpr (k == kind::string) {
    save_contiguous(v.data(), v.size());
  } else if constexpr (k == kind::vector) {
    using E = typename seq_traits<T>::elem;
    if constexpr (is_spec_v<T, std::vector> && bitwise_v<E>) {
      save_contiguous(v.data(), v.size());
    } else {
      write_count(v.size(), false);
      for (const auto& e : v) save(static_cast<const E&>(e));  // vector<bool> proxies -> bool
    }
  } else if constexpr (k == kind::array) {
    for (const auto& e : v) save(e);
  } else if constexpr (k == kind::pair) {
    save(v.first);
    save(v.second);
  } else if constexpr (k == kind::tuple) {
    std::apply([this](const auto&... e) { (save(e), ...); }, v);
  } else if constexpr (k == kind::optional) {
    write_raw<std::uint8_t>(v.has_value() ? 1 : 0);
    if (v) save(*v);
  } else if constexpr (k == kind::variant) {
    if (v.valueless_by_exception())
      throw serialization_error("weft: cannot serialize a valueless std::variant");
    write_raw<std::uint32_t>(static_cast<std::uint32_t>(v.index()));
    std::visit([this](const auto& e) { save(e); }, v);
  } else if constexpr (k == kind::map) {
    write_count(v.size(), false);
    for (const auto& [key, val] : v) {
      save(key);
      save(val);
    }
  } else if constexpr (k == kind::set) {
    write_count(v.size(), false);
    for (const auto& e : v) save(e);
  }
}

// ============================================================================
// reader::load
// ============================================================================

template <class T>
void reader::load(T& v) {
  using namespace detail;
  static_assert(!std::is_const_v<T>, "weft serialization: cannot deserialize into a const object");
  check_supported<T>();
  constexpr kind k = kind_v<T>;
  if constexpr (k == kind::bitwise) {
    read_bytes(&v, sizeof(T));
  } else if constexpr (k == kind::hook) {
    if constexpr (member_hook<T, reader>) v.serialize(*this);
    else adl::call(*this, v);
  } else if constexpr (k == kind::boolean) {
    std::uint8_t b;
    read_bytes(&b, 1);
    if (b > 1) fail("invalid bool value");
    v = b != 0;
  } else if constexpr (k == kind::monostate) {
  } else if constexpr (k == kind::string) {
    load_contiguous<typename T::value_type>(v);
  } else if constexpr (k == kind::vector) {
    using E = typename seq_traits<T>::elem;
    if constexpr (is_spec_v<T, std::vector> && bitwise_v<E>) load_contiguous<E>(v);
    else load_sequence(v);
  } else if constexpr (k == kind::array) {
    for (auto& e : v) load(e);
  } else if constexpr (k == kind::pair) {
    load(v.first);
    load(v.second);
  } else if constexpr (k == kind::tuple) {
    std::apply([this](auto&... e) { (load(e), ...); }, v);
  } else if constexpr (k == kind::optional) {
    std::uint8_t has;
    read_bytes(&has, 1);
    if (has > 1) fail("invalid std::optional flag");
    if (has) {
      if (!v) v.emplace();
      load(*v);
    } else {
      v.reset();
    }
  } else if constexpr (k == kind::variant) {
    std::uint32_t idx;
    read_bytes(&idx, sizeof idx);
    if (idx >= std::variant_size_v<T>) fail("std::variant index out of range");
    load_variant(v, idx, std::make_index_sequence<std::variant_size_v<T>>{});
  } else if constexpr (k == kind::map) {
    load_map(v);
  } else if constexpr (k == kind::set) {
    load_set(v);
  }
}

template <class T>
void reader::load_sequence(T& c) {
  using E = typename detail::seq_traits<T>::elem;
  const std::size_t count = read_count<E>();
  c.clear();
  if constexpr (requires { c.reserve(count); }) c.reserve(reserve_hint<E>(count));
  progress p{cur_};
  for (std::size_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<T, std::vector<bool, typename T::allocator_type>>) {
      bool b;
      load(b);
      c.push_back(b);
    } else {
      load(c.emplace_back());
    }
    check_progress(p);
  }
}

template <class T>
void reader::load_map(T& c) {
  using K = typename detail::map_traits<T>::key;
  using V = typename detail::map_traits<T>::mapped;
  const std::size_t count = read_count<std::pair<K, V>>();
  c.clear();
  if constexpr (requires { c.reserve(count); }) c.reserve(reserve_hint<std::pair<K, V>>(count));
  progress p{cur_};
  for (std::size_t i = 0; i < count; ++i) {
    K key{};
    load(key);
    V val{};
    load(val);
    c.emplace_hint(c.end(), std::move(key), std::move(val));
    check_progress(p);
  }
}

template <class T>
void reader::load_set(T& c) {
  using K = typename detail::set_traits<T>::key;
  const std::size_t count = read_count<K>();
  c.clear();
  if constexpr (requires { c.reserve(count); }) c.reserve(reserve_hint<K>(count));
  progress p{cur_};
  for (std::size_t i = 0; i < count; ++i) {
    K key{};
    load(key);
    c.emplace_hint(c.end(), std::move(key));
    check_progress(p);
  }
}

template <class V, std::size_t... I>
void reader::load_variant(V& v, std::uint32_t idx, std::index_sequence<I...>) {
  (void)((idx == I ? (load(v.template emplace<I>()), true) : false) || ...);
}

}  // namespace serialization

// ============================================================================
// convenience
// ============================================================================

namespace serialization::detail {
template <class T>
inline constexpr bool is_archive_v =
    std::is_same_v<std::remove_cvref_t<T>, writer> || std::is_same_v<std::remove_cvref_t<T>, reader>;

template <class... T>
auto read_values(reader& r) {
  if constexpr (sizeof...(T) == 1) {
    return r.read<T...>();
  } else {
    return std::tuple<T...>{r.read<T>()...};  // braced: read in order
  }
}
}  // namespace serialization::detail

/// Serializes the values in order. Large contiguous payloads are referenced,
/// not copied: keep the arguments alive while the message's bulk is in use.
template <class... T>
  requires(!(serialization::detail::is_archive_v<T> || ...))
serialization::message serialize(const T&... v) {
  serialization::writer w;
  w(v...);
  return std::move(w).finish();
}

/// Serializes the values into one contiguous buffer (no bulk segments).
template <class... T>
  requires(!(serialization::detail::is_archive_v<T> || ...))
std::vector<std::byte> serialize_to_bytes(const T&... v) {
  serialization::writer w(serialization::writer_options{SIZE_MAX, 0});
  w(v...);
  return std::move(w).finish().bytes;
}

/// Deserializes T... (one value: returns T; several: std::tuple<T...>).
/// Throws serialization_error on truncated/corrupt input or trailing data.
template <class... T>
auto deserialize(std::span<const std::byte> bytes,
                 std::span<const std::span<const std::byte>> bulk = {}) {
  static_assert(sizeof...(T) >= 1);
  serialization::reader r(bytes, bulk);
  auto result = serialization::detail::read_values<T...>(r);
  r.expect_end();
  return result;
}

/// Same, with bulk segments in owning buffers: a std::vector<std::byte>
/// value sent as bulk is moved out of its buffer instead of copied.
template <class... T>
auto deserialize(std::span<const std::byte> bytes, std::span<std::vector<std::byte>> owned_bulk) {
  static_assert(sizeof...(T) >= 1);
  serialization::reader r(bytes, owned_bulk);
  auto result = serialization::detail::read_values<T...>(r);
  r.expect_end();
  return result;
}

template <class... T>
auto deserialize(const serialization::message& m) {
  return deserialize<T...>(std::span<const std::byte>(m.bytes),
                           std::span<const std::span<const std::byte>>(m.bulk));
}

}  // namespace weft
