// weft serialization: round trips, user hooks, zero copy, robustness.
#include "weft/serialize.hpp"
#include "weft/buffer.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace ser = weft::serialization;

namespace {

/// A length header in its long form: marker byte, then the count as a u64.
std::vector<std::byte> long_header(std::uint64_t count, bool bulk) {
  std::vector<std::byte> h(9);
  h[0] = std::byte{bulk ? ser::detail::bulk_count_marker : ser::detail::long_count_marker};
  std::memcpy(h.data() + 1, &count, 8);
  return h;
}

// ---- user types --------------------------------------------------------------
struct point {
  int x = 0;
  std::string label;
  template <class Ar>
  void serialize(Ar& ar) {
    ar & x & label;
  }
  bool operator==(const point&) const = default;
};

struct particle {  // call form ar(a, b, c), nested user type
  point where;
  std::vector<double> v;
  std::optional<std::string> tag;
  template <class Ar>
  void serialize(Ar& ar) {
    ar(where, v, tag);
  }
  bool operator==(const particle&) const = default;
};

struct plain {  // trivially copyable: memcpy, no hook needed
  int a;
  double b;
  char c[3];
  bool operator==(const plain& o) const {
    return a == o.a && b == o.b && std::memcmp(c, o.c, 3) == 0;
  }
};

struct no_default {  // trivially copyable without a default constructor
  explicit no_default(int v) : value(v) {}
  int value;
};

enum class color : std::uint8_t { red = 1, green = 2 };

struct empty_hook {
  template <class Ar>
  void serialize(Ar&) {}
  bool operator==(const empty_hook&) const = default;
};

struct asymmetric {  // different code for saving and loading
  std::vector<int> data;
  std::size_t loaded_from = 0;
  template <class Ar>
  void serialize(Ar& ar) {
    ar & data;
    if constexpr (Ar::is_loading) loaded_from = data.size();
  }
};

struct fragile {  // constructor throws: leaves a variant valueless
  std::string s;
  fragile() = default;
  explicit fragile(int) { throw std::runtime_error("construction failed"); }
  template <class Ar>
  void serialize(Ar& ar) {
    ar & s;
  }
};

struct not_serializable {
  std::vector<int> v;  // not trivially copyable, no hook
};

}  // namespace

namespace thirdparty {
struct money {  // a type we "cannot change": free hook found by ADL
  long cents = 0;
  std::string currency;
  bool operator==(const money&) const = default;
};
template <class Ar>
void serialize(Ar& ar, money& m) {
  ar & m.cents & m.currency;
}
}  // namespace thirdparty

// ---- static properties -------------------------------------------------------
static_assert(ser::is_serializable_v<int>);
static_assert(ser::is_serializable_v<plain>);
static_assert(ser::is_serializable_v<point>);
static_assert(ser::is_serializable_v<thirdparty::money>);
static_assert(ser::is_serializable_v<std::vector<std::pair<std::string, std::optional<std::array<int, 3>>>>>);
static_assert(ser::is_serializable_v<std::map<std::string, std::variant<int, std::string>>>);
static_assert(!ser::is_serializable_v<int*>);
static_assert(!ser::is_serializable_v<const char*>);
static_assert(!ser::is_serializable_v<std::string_view>);
static_assert(!ser::is_serializable_v<std::span<int>>);
static_assert(!ser::is_serializable_v<std::vector<int*>>);
static_assert(!ser::is_serializable_v<std::optional<int*>>);
static_assert(!ser::is_serializable_v<std::array<int*, 2>>);
static_assert(!ser::is_serializable_v<not_serializable>);
static_assert(!ser::is_serializable_v<std::vector<not_serializable>>);

namespace {

template <class T>
T round_trip(const T& v) {
  ser::message m = weft::serialize(v);
  return weft::deserialize<T>(m.bytes, m.bulk);
}

template <class T>
void expect_round_trip(const T& v) {
  EXPECT_EQ(round_trip(v), v);
  // all-inline form too
  std::vector<std::byte> flat = weft::serialize_to_bytes(v);
  EXPECT_EQ(weft::deserialize<T>(flat), v);
}

}  // namespace

TEST(Serialize, Scalars) {
  expect_round_trip(42);
  expect_round_trip(-7LL);
  expect_round_trip(3.25);
  expect_round_trip(1.5f);
  expect_round_trip('x');
  expect_round_trip(true);
  expect_round_trip(false);
  expect_round_trip(std::byte{0xab});
  expect_round_trip(color::green);
  expect_round_trip(std::uint64_t{0xffffffffffffffffull});
  expect_round_trip(plain{1, 2.5, {'a', 'b', 'c'}});
  EXPECT_EQ(weft::deserialize<no_default>(weft::serialize(no_default{5}).bytes).value, 5);
}

TEST(Serialize, IntAndDoubleAreTwoMemcpys) {
  ser::message m = weft::serialize(int{7}, 2.5);
  ASSERT_EQ(m.bytes.size(), sizeof(int) + sizeof(double));
  EXPECT_TRUE(m.bulk.empty());
  int i;
  double d;
  std::memcpy(&i, m.bytes.data(), sizeof i);
  std::memcpy(&d, m.bytes.data() + sizeof i, sizeof d);
  EXPECT_EQ(i, 7);
  EXPECT_EQ(d, 2.5);
  auto [i2, d2] = weft::deserialize<int, double>(m.bytes);
  EXPECT_EQ(i2, 7);
  EXPECT_EQ(d2, 2.5);
}

TEST(Serialize, Strings) {
  expect_round_trip(std::string());
  expect_round_trip(std::string("hello"));
  expect_round_trip(std::string(1000, 'q'));
  expect_round_trip(std::string(100000, 'z'));
  expect_round_trip(std::u16string(u"wide"));
  std::string with_nul("a\0b", 3);
  expect_round_trip(with_nul);
}

TEST(Serialize, Sequences) {
  expect_round_trip(std::vector<int>{});
  expect_round_trip(std::vector<int>{1, 2, 3});
  expect_round_trip(std::vector<std::string>{"a", "", "ccc"});
  expect_round_trip(std::vector<bool>{true, false, true, true});
  expect_round_trip(std::vector<std::vector<int>>{{1}, {}, {2, 3}});
  expect_round_trip(std::deque<int>{4, 5, 6});
  expect_round_trip(std::list<std::string>{"x", "y"});
  expect_round_trip(std::vector<plain>{{1, 2.0, {'a', 'b', 'c'}}, {3, 4.0, {'d', 'e', 'f'}}});
}

TEST(Serialize, ArraysPairsTuples) {
  expect_round_trip(std::array<int, 3>{1, 2, 3});
  expect_round_trip(std::array<std::string, 2>{"a", "bb"});
  expect_round_trip(std::array<bool, 3>{true, false, true});
  expect_round_trip(std::pair<int, std::string>{1, "one"});
  expect_round_trip(std::tuple<int, double, std::string>{1, 2.0, "three"});
  expect_round_trip(std::tuple<>{});
}

TEST(Serialize, OptionalVariant) {
  expect_round_trip(std::optional<int>{});
  expect_round_trip(std::optional<int>{5});
  expect_round_trip(std::optional<std::string>{"s"});
  using V = std::variant<std::monostate, int, std::string, std::vector<double>>;
  expect_round_trip(V{});
  expect_round_trip(V{7});
  expect_round_trip(V{std::string("str")});
  expect_round_trip(V{std::vector<double>{1.0, 2.0}});
}

TEST(Serialize, AssociativeContainers) {
  expect_round_trip(std::map<std::string, int>{{"a", 1}, {"b", 2}});
  expect_round_trip(std::multimap<int, int>{{1, 1}, {1, 2}, {0, 5}});
  expect_round_trip(std::unordered_map<int, std::string>{{1, "x"}, {2, "y"}});
  expect_round_trip(std::set<std::string>{"p", "q"});
  expect_round_trip(std::multiset<int>{3, 3, 1});
  expect_round_trip(std::unordered_set<int>{9, 8, 7});
}

TEST(Serialize, Nesting) {
  using T = std::vector<std::pair<std::string, std::optional<std::array<int, 3>>>>;
  expect_round_trip(T{{"a", std::array<int, 3>{1, 2, 3}}, {"b", std::nullopt}, {"", std::array<int, 3>{}}});
  using U = std::map<std::string, std::vector<std::variant<int, std::string, std::tuple<bool, char>>>>;
  expect_round_trip(U{{"k", {1, std::string("two"), std::tuple<bool, char>{true, 'c'}}}, {"empty", {}}});
  using W = std::optional<std::vector<std::optional<std::vector<std::string>>>>;
  expect_round_trip(W{{std::nullopt, std::vector<std::string>{"deep"}}});
}

TEST(Serialize, UserHooks) {
  expect_round_trip(point{3, "p"});
  particle pa;
  pa.where = point{1, "w"};
  pa.v = {1.0, 2.0};
  pa.tag = "t";
  expect_round_trip(pa);
  expect_round_trip(thirdparty::money{1234, "EUR"});
  expect_round_trip(std::vector<point>{{1, "a"}, {2, "b"}});
  expect_round_trip(std::map<int, thirdparty::money>{{1, {5, "USD"}}});
  asymmetric a{{1, 2, 3}, 0};
  asymmetric b = round_trip(a);
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(b.loaded_from, 3u);
}

TEST(Serialize, SeveralValuesAndArchiveOperators) {
  ser::writer w;
  w & 1 & std::string("two");
  w(3.0, point{4, "four"});
  ser::reader r(w.bytes());
  int a;
  std::string b;
  double c;
  point d;
  r & a & b;
  r(c, d);
  r.expect_end();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, "two");
  EXPECT_EQ(c, 3.0);
  EXPECT_EQ(d, (point{4, "four"}));

  ser::message m = weft::serialize(1, std::string("x"), std::vector<int>{1, 2});
  auto [x, y, z] = weft::deserialize<int, std::string, std::vector<int>>(m);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, "x");
  EXPECT_EQ(z, (std::vector<int>{1, 2}));
}

TEST(Serialize, WireFormat) {
  // string: a one-byte length when short, then the bytes
  ser::message m = weft::serialize(std::string("abc"));
  ASSERT_EQ(m.bytes.size(), 1u + 3u);
  EXPECT_EQ(m.bytes[0], std::byte{3});
  // the longest short length, and the first that takes marker + u64
  const std::string at_limit(ser::detail::short_count_max, 'a');
  const std::string past_limit(ser::detail::short_count_max + 1u, 'b');
  m = weft::serialize(at_limit);
  ASSERT_EQ(m.bytes.size(), 1u + at_limit.size());
  EXPECT_EQ(m.bytes[0], std::byte{ser::detail::short_count_max});
  m = weft::serialize(past_limit);
  ASSERT_EQ(m.bytes.size(), 9u + past_limit.size());
  EXPECT_TRUE(std::equal(m.bytes.begin(), m.bytes.begin() + 9, long_header(past_limit.size(), false).begin()));
  EXPECT_EQ(weft::deserialize<std::string>(weft::serialize_to_bytes(at_limit)), at_limit);
  EXPECT_EQ(weft::deserialize<std::string>(weft::serialize_to_bytes(past_limit)), past_limit);
  // non-contiguous containers use the same header
  const std::vector<std::string> many(300, "s");
  EXPECT_EQ(weft::serialize(many).bytes.size(), 9u + 300u * 2u);
  EXPECT_EQ(round_trip(many), many);
  EXPECT_EQ(weft::serialize(std::map<int, int>{{1, 2}}).bytes.size(), 1u + 8u);
  // optional: u8 flag; variant: u32 index; bool: u8
  EXPECT_EQ(weft::serialize(std::optional<int>{}).bytes.size(), 1u);
  EXPECT_EQ(weft::serialize(std::optional<int>{1}).bytes.size(), 5u);
  EXPECT_EQ(weft::serialize(std::variant<char, int>{'a'}).bytes.size(), 5u);
  EXPECT_EQ(weft::serialize(true).bytes.size(), 1u);
  EXPECT_EQ(weft::serialize(std::monostate{}).bytes.size(), 0u);
}

TEST(Serialize, WriterReusesBuffer) {
  std::vector<std::byte> buf;
  buf.reserve(1024);
  const std::byte* p = buf.data();
  ser::writer w(std::move(buf));
  w & 1 & 2.0;
  ser::message m = std::move(w).finish();
  EXPECT_EQ(m.bytes.data(), p);
  EXPECT_EQ(m.bytes.size(), 12u);
}

// The writer keeps room past what it wrote; every way out (bytes(), size(),
// finish, take, copies and moves, truncate, clear) must show exactly the
// bytes written, through growth from empty and from a reused buffer.
TEST(Serialize, WriterShowsExactlyWhatWasWritten) {
  auto expect_ints = [](const std::vector<std::byte>& bytes, int n) {
    ASSERT_EQ(bytes.size(), static_cast<std::size_t>(n) * sizeof(int));
    ser::reader r(bytes);
    for (int i = 0; i < n; ++i) EXPECT_EQ(r.read<int>(), i);
    r.expect_end();
  };
  ser::writer w;
  for (int i = 0; i < 1000; ++i) {  // many growth steps
    w & i;
    ASSERT_EQ(w.size(), static_cast<std::size_t>(i + 1) * sizeof(int));
    if (i % 97 == 0) expect_ints(w.bytes(), i + 1);  // looking in between does not disturb writing
  }
  expect_ints(w.bytes(), 1000);
  ser::writer copy = w;
  expect_ints(copy.bytes(), 1000);
  copy & 1000;
  expect_ints(copy.bytes(), 1001);
  expect_ints(w.bytes(), 1000);  // the original is unchanged
  ser::writer moved = std::move(w);
  expect_ints(moved.bytes(), 1000);
  EXPECT_EQ(w.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from writer is empty and usable
  w & 0 & 1;
  expect_ints(w.bytes(), 2);
  moved.truncate(3 * sizeof(int), 0);
  expect_ints(moved.bytes(), 3);
  moved & 3;
  expect_ints(moved.bytes(), 4);
  ser::message m = moved.take();
  expect_ints(m.bytes, 4);
  EXPECT_EQ(moved.size(), 0u);
  moved & 0;
  expect_ints(std::move(moved).finish().bytes, 1);
  copy.clear();
  EXPECT_EQ(copy.size(), 0u);
  copy & 0 & 1 & 2;
  expect_ints(copy.bytes(), 3);
  std::vector<std::byte> used(4096, std::byte{0x5a});  // a reused buffer's old contents never show
  ser::writer r(std::move(used));
  r & 0;
  expect_ints(r.bytes(), 1);
}

// ---- zero copy ------------------------------------------------------------------

TEST(ZeroCopy, LargeVectorIsReferencedNotCopied) {
  std::vector<double> v(10000);
  std::iota(v.begin(), v.end(), 0.0);
  ser::message m = weft::serialize(int{1}, v, std::string("tail"));
  ASSERT_EQ(m.bulk.size(), 1u);
  EXPECT_EQ(m.bulk[0].data(), reinterpret_cast<const std::byte*>(v.data()));
  EXPECT_EQ(m.bulk[0].size(), v.size() * sizeof(double));
  EXPECT_EQ(m.bytes.size(), 4u + 9u + 1u + 4u);  // int, bulk descriptor, string header + 4 chars
  EXPECT_EQ(m.total_size(), m.bytes.size() + v.size() * sizeof(double));

  // the transport delivers the bulk segment somewhere else
  std::vector<std::byte> received(m.bulk[0].begin(), m.bulk[0].end());
  std::span<const std::byte> spans[] = {received};
  auto [i, w, s] = weft::deserialize<int, std::vector<double>, std::string>(m.bytes, spans);
  EXPECT_EQ(i, 1);
  EXPECT_EQ(w, v);
  EXPECT_EQ(s, "tail");
}

TEST(ZeroCopy, Threshold) {
  std::vector<char> at(ser::default_zero_copy_threshold, 'a');
  std::vector<char> above(ser::default_zero_copy_threshold + 1, 'b');
  EXPECT_TRUE(weft::serialize(at).bulk.empty());
  EXPECT_EQ(weft::serialize(above).bulk.size(), 1u);
  std::string big(ser::default_zero_copy_threshold + 1, 's');
  ser::message m = weft::serialize(big);
  ASSERT_EQ(m.bulk.size(), 1u);
  EXPECT_EQ(m.bulk[0].data(), reinterpret_cast<const std::byte*>(big.data()));
  EXPECT_EQ(weft::deserialize<std::string>(m), big);
  // a per-writer threshold
  ser::writer w(ser::writer_options{16, 8});
  w & std::vector<int>(5) & std::vector<int>(4);
  EXPECT_EQ(w.bulk().size(), 1u);
}

TEST(ZeroCopy, MaxBulkSegmentsThenInline) {
  std::vector<std::vector<int>> many(11, std::vector<int>(5000));
  for (std::size_t i = 0; i < many.size(); ++i) many[i][i] = static_cast<int>(i) + 1;
  ser::message m = weft::serialize(many);
  EXPECT_EQ(m.bulk.size(), ser::default_max_bulk_segments);
  for (std::size_t i = 0; i < m.bulk.size(); ++i)
    EXPECT_EQ(m.bulk[i].data(), reinterpret_cast<const std::byte*>(many[i].data()));
  EXPECT_EQ(weft::deserialize<std::vector<std::vector<int>>>(m), many);
}

TEST(ZeroCopy, NestedAndUserTypes) {
  particle p;
  p.where = point{1, "w"};
  p.v.assign(2000, 1.5);
  std::map<int, std::string> mp{{1, std::string(5000, 'm')}};
  ser::message m = weft::serialize(p, mp);
  EXPECT_EQ(m.bulk.size(), 2u);
  auto [p2, mp2] = weft::deserialize<particle, std::map<int, std::string>>(m);
  EXPECT_EQ(p2, p);
  EXPECT_EQ(mp2, mp);
}

TEST(ZeroCopy, OwnedBulkIsMovedIntoByteVector) {
  std::vector<std::byte> payload(100000, std::byte{7});
  ser::message m = weft::serialize(std::string("hdr"), payload);
  ASSERT_EQ(m.bulk.size(), 1u);
  std::vector<std::vector<std::byte>> owned(1);
  owned[0].assign(m.bulk[0].begin(), m.bulk[0].end());  // as received
  const std::byte* where = owned[0].data();
  auto [h, got] = weft::deserialize<std::string, std::vector<std::byte>>(m.bytes, owned);
  EXPECT_EQ(h, "hdr");
  EXPECT_EQ(got.data(), where);  // no copy
  EXPECT_EQ(got, payload);
  // other element types copy out of owned buffers
  std::vector<int> ints(3000, 3);
  ser::message m2 = weft::serialize(ints);
  std::vector<std::vector<std::byte>> owned2{std::vector<std::byte>(m2.bulk[0].begin(), m2.bulk[0].end())};
  EXPECT_EQ(weft::deserialize<std::vector<int>>(m2.bytes, owned2), ints);
}

TEST(ZeroCopy, BulkMismatchesAreDetected) {
  std::vector<int> v(5000, 1);
  ser::message m = weft::serialize(v);
  ASSERT_EQ(m.bulk.size(), 1u);
  // missing segment
  EXPECT_THROW(weft::deserialize<std::vector<int>>(m.bytes), weft::serialization_error);
  // wrong size
  std::span<const std::byte> shorter[] = {m.bulk[0].first(m.bulk[0].size() - 4)};
  EXPECT_THROW(weft::deserialize<std::vector<int>>(m.bytes, shorter), weft::serialization_error);
  std::span<const std::byte> odd[] = {m.bulk[0].first(m.bulk[0].size() - 1)};
  EXPECT_THROW(weft::deserialize<std::vector<int>>(m.bytes, odd), weft::serialization_error);
  // extra segment
  std::span<const std::byte> extra[] = {m.bulk[0], m.bulk[0]};
  EXPECT_THROW(weft::deserialize<std::vector<int>>(m.bytes, extra), weft::serialization_error);
  // bulk flag on a non-contiguous container
  const std::vector<std::byte> bad = long_header(1, true);
  EXPECT_THROW(weft::deserialize<std::vector<std::string>>(bad, m.bulk), weft::serialization_error);
}

// ---- robustness -------------------------------------------------------------------

namespace {
using complex_t =
    std::tuple<int, std::string, std::vector<std::pair<std::string, std::optional<std::array<int, 3>>>>,
               std::map<int, std::variant<double, std::string>>, point, std::vector<bool>, thirdparty::money,
               std::set<std::string>, std::vector<std::vector<int>>>;

complex_t sample() {
  return complex_t{-5,
                   "hello",
                   {{"a", std::array<int, 3>{1, 2, 3}}, {"bb", std::nullopt}},
                   {{1, 2.5}, {2, std::string("two")}},
                   point{9, "nine"},
                   {true, false, true},
                   thirdparty::money{100, "JPY"},
                   {"x", "yy"},
                   {{1, 2}, {}, {3}}};
}
}  // namespace

TEST(Robustness, EveryTruncationThrows) {
  const complex_t v = sample();
  std::vector<std::byte> full = weft::serialize_to_bytes(v);
  ASSERT_EQ(weft::deserialize<complex_t>(full), v);
  for (std::size_t n = 0; n < full.size(); ++n) {
    // copy the prefix into its own allocation so ASan sees any overread
    std::vector<std::byte> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(weft::deserialize<complex_t>(prefix), weft::serialization_error) << "prefix " << n;
  }
}

TEST(Robustness, EveryTruncationThrowsWithBulk) {
  std::vector<int> big(3000, 4);
  std::string s = "x";
  ser::message m = weft::serialize(s, big, 17);
  ASSERT_EQ(m.bulk.size(), 1u);
  for (std::size_t n = 0; n < m.bytes.size(); ++n) {
    std::vector<std::byte> prefix(m.bytes.begin(), m.bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW((weft::deserialize<std::string, std::vector<int>, int>(prefix, m.bulk)), weft::serialization_error);
  }
}

TEST(Robustness, TrailingBytesThrow) {
  std::vector<std::byte> b = weft::serialize_to_bytes(1, 2);
  EXPECT_THROW(weft::deserialize<int>(b), weft::serialization_error);
  EXPECT_NO_THROW((weft::deserialize<int, int>(b)));
}

TEST(Robustness, LengthHeaders) {
  // the one byte value that is neither a short length nor a marker
  std::vector<std::byte> b{std::byte{0xff}, std::byte{0}};
  EXPECT_THROW(weft::deserialize<std::string>(b), weft::serialization_error);
  EXPECT_THROW(weft::deserialize<std::vector<std::string>>(b), weft::serialization_error);
  // a marker without its count
  b = {std::byte{ser::detail::long_count_marker}, std::byte{1}};
  EXPECT_THROW(weft::deserialize<std::string>(b), weft::serialization_error);
  // the long form of a small count reads the same
  b = long_header(2, false);
  b.push_back(std::byte{'h'});
  b.push_back(std::byte{'i'});
  EXPECT_EQ(weft::deserialize<std::string>(b), "hi");
}

TEST(Robustness, InvalidTagsThrow) {
  std::vector<std::byte> b{std::byte{2}};
  EXPECT_THROW(weft::deserialize<bool>(b), weft::serialization_error);
  EXPECT_THROW(weft::deserialize<std::optional<int>>(b), weft::serialization_error);
  std::vector<std::byte> idx(4);
  std::uint32_t i = 3;
  std::memcpy(idx.data(), &i, 4);
  EXPECT_THROW((weft::deserialize<std::variant<int, char, double>>(idx)), weft::serialization_error);
}

TEST(Robustness, HugeLengthsThrowWithoutAllocating) {
  for (std::uint64_t count : {std::uint64_t{1} << 62, std::uint64_t{1} << 40, std::uint64_t{1} << 20, std::uint64_t{1000}}) {
    std::vector<std::byte> b = long_header(count, false);
    b.resize(9 + 16);
    EXPECT_THROW(weft::deserialize<std::string>(b), weft::serialization_error);
    EXPECT_THROW(weft::deserialize<std::vector<double>>(b), weft::serialization_error);
    EXPECT_THROW(weft::deserialize<std::vector<std::string>>(b), weft::serialization_error);
    EXPECT_THROW((weft::deserialize<std::map<int, int>>(b)), weft::serialization_error);
    EXPECT_THROW(weft::deserialize<std::vector<point>>(b), weft::serialization_error);
    EXPECT_THROW(weft::deserialize<std::vector<empty_hook>>(b), weft::serialization_error);
    const std::vector<std::byte> bulk = long_header(count, true);
    std::copy(bulk.begin(), bulk.end(), b.begin());
    std::vector<std::byte> seg(64);
    std::span<const std::byte> spans[] = {seg};
    EXPECT_THROW(weft::deserialize<std::vector<double>>(b, spans), weft::serialization_error);
  }
  // zero-size elements: a few are fine, absurd counts are not
  std::vector<empty_hook> few(10);
  EXPECT_EQ(round_trip(few), few);
}

TEST(Robustness, RandomCorruptionNeverCrashes) {
  const complex_t v = sample();
  const std::vector<std::byte> full = weft::serialize_to_bytes(v);
  std::mt19937_64 rng(12345);
  int threw = 0, parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<std::byte> b = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<std::byte>(rng());
    try {
      (void)weft::deserialize<complex_t>(b);
      ++parsed;
    } catch (const weft::serialization_error&) {
      ++threw;
    }
  }
  EXPECT_GT(threw, 0);
  EXPECT_EQ(threw + parsed, 20000);
}

TEST(Robustness, ErrorMessagesAreClear) {
  std::vector<std::byte> b(3);
  try {
    (void)weft::deserialize<int>(b);
    FAIL();
  } catch (const weft::serialization_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  std::variant<int, fragile> vv = 1;
  try {
    vv.emplace<1>(0);
  } catch (const std::runtime_error&) {
  }
  ASSERT_TRUE(vv.valueless_by_exception());
  EXPECT_THROW(weft::serialize(vv), weft::serialization_error);
}

// ---- weft::buffer ------------------------------------------------------------


TEST(SerializeBuffer, SmallTravelsInlineLargeAsOneBulkSegment) {
  weft::buffer<int> small(10, 7);
  auto m = weft::serialize(small);
  EXPECT_TRUE(m.bulk.empty());
  auto back = weft::deserialize<weft::buffer<int>>(m);
  EXPECT_EQ(back.to_vector(), small.to_vector());
  EXPECT_NE(back.data(), small.data());

  weft::buffer<double> big(std::vector<double>(5000, 1.5));
  auto mb = weft::serialize(big);
  ASSERT_EQ(mb.bulk.size(), 1u);
  EXPECT_EQ(static_cast<const void*>(mb.bulk[0].data()), static_cast<const void*>(big.data()));  // zero copy out
  // Without an owner to share, the reader copies.
  auto copied = weft::deserialize<weft::buffer<double>>(mb);
  EXPECT_NE(copied.data(), big.data());
  EXPECT_EQ(copied.to_vector(), big.to_vector());
}

TEST(SerializeBuffer, SharesTheOwnerOfReceivedMemory) {
  auto storage = std::make_unique<std::vector<double>>(4000);
  std::iota(storage->begin(), storage->end(), 0.0);
  const double* where = storage->data();
  weft::serialization::writer w;
  w.write_array(storage->data(), storage->size());
  auto m = std::move(w).finish();
  ASSERT_EQ(m.bulk.size(), 1u);
  auto keep = weft::serialization::owner::adopt(std::move(storage));
  weft::buffer<double> b;
  {
    weft::serialization::reader r(m.bytes, m.bulk);
    r.share_bulk_owner(&keep);
    r & b;
    r.expect_end();
  }
  EXPECT_FALSE(keep);          // moved into the buffer's shared owner
  EXPECT_EQ(b.data(), where);  // aliases, no copy
  weft::buffer<double> copy = b;
  b = {};
  ASSERT_EQ(copy.size(), 4000u);
  EXPECT_EQ(copy[3999], 3999.0);  // still alive through the copy
}

TEST(SerializeBuffer, MisalignedBytesAreCopiedToAlignedStorage) {
  std::vector<std::byte> raw(9 + 600 * sizeof(double));
  const std::vector<std::byte> header = long_header(600, true);
  std::copy(header.begin(), header.end(), raw.begin());
  std::byte* odd = raw.data() + 9;  // not aligned for double
  for (int k = 0; k < 600; ++k) {
    const double v = k * 0.5;
    std::memcpy(odd + k * sizeof(double), &v, sizeof v);
  }
  std::vector<std::span<const std::byte>> bulk = {std::span<const std::byte>(odd, 600 * sizeof(double))};
  auto keep = weft::serialization::owner::borrow(raw.data(), [](void*) noexcept {});
  weft::buffer<double> b;
  weft::serialization::reader r(std::span<const std::byte>(raw.data(), 9), bulk);
  r.share_bulk_owner(&keep);
  r & b;
  ASSERT_EQ(b.size(), 600u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % alignof(double), 0u);
  EXPECT_EQ(b[599], 599 * 0.5);
}

TEST(SerializeBuffer, CorruptLengthIsRejected) {
  weft::buffer<std::uint32_t> b(100, 1u);
  auto bytes = weft::serialize_to_bytes(b);
  ASSERT_EQ(bytes[0], std::byte{100});  // a short length header
  bytes[0] = std::byte{101};
  EXPECT_THROW(weft::deserialize<weft::buffer<std::uint32_t>>(bytes), weft::serialization_error);
}

TEST(SerializeBuffer, MakeAndViews) {
  auto b = weft::buffer<int>::make(5, [](std::span<int> out) { std::iota(out.begin(), out.end(), 1); });
  std::span<const int> s = b;
  EXPECT_EQ(std::accumulate(s.begin(), s.end(), 0), 15);
  EXPECT_EQ(weft::buffer<int>(s).to_vector(), b.to_vector());
  EXPECT_TRUE(weft::buffer<int>().empty());
  EXPECT_TRUE(weft::buffer<int>(std::vector<int>{}).empty());
  EXPECT_EQ(b.size_bytes(), 5 * sizeof(int));
}
