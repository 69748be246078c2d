// weft remote-call ids: stability, invocation, error capture, validation.
#include "weft/detail/action.hpp"
#include "weft/buffer.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace ser = weft::serialization;
namespace wd = weft::detail;

// ---- callables ----------------------------------------------------------------
int add(int a, int b) { return a + b; }
int mul(int a, int b) { return a * b; }
std::string greet(const std::string& who, int times) {
  std::string s;
  for (int i = 0; i < times; ++i) s += "hi " + who + ";";
  return s;
}
int side_effect = 0;
void set_side_effect(int v) { side_effect = v; }
double scale_in_place(std::vector<double>& v, double f) {  // non-const lvalue reference
  double sum = 0;
  for (double& x : v) sum += (x *= f);
  return sum;
}
std::vector<int> iota_vec(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}
int throws_int(int) { throw 42; }
weft::buffer<char> letters(int n) {
  return weft::buffer<char>::make(static_cast<std::size_t>(n), [](std::span<char> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>('a' + i % 26);
  });
}

struct sum_all {  // empty function object with a generic call operator
  template <class... T>
  auto operator()(T... v) const {
    return (v + ...);
  }
};

// A lambda at namespace scope: the child process prints its id.
inline constexpr auto triple = [](int x) { return 3 * x; };

// ---- helpers -------------------------------------------------------------------
namespace {

// Sends a call through the wire format and the id machinery, as the runtime
// would: sender writes id + args, receiver resolves and invokes, the caller
// decodes the reply.
template <class R, class F, class... A>
R call_via_wire(const F& f, const A&... args) {
  ser::writer w;
  wd::write_call(w, f, args...);
  ser::message msg = std::move(w).finish();
  // transport: bulk segments arrive as separate buffers
  std::vector<std::vector<std::byte>> received;
  for (auto s : msg.bulk) received.emplace_back(s.begin(), s.end());
  ser::reader in(msg.bytes, received);
  wd::resolved_action a = wd::read_action(in);
  ser::writer out;
  ser::owner keep = a.invoke(in, &out);
  ser::message reply = std::move(out).finish();
  ser::reader rr(reply.bytes, reply.bulk);
  if constexpr (std::is_void_v<R>) {
    wd::read_result<void>(rr);
    rr.expect_end();
  } else {
    R r = wd::read_result<R>(rr);
    rr.expect_end();
    return r;
  }
}

std::uintptr_t anchor() { return wd::anchor_address(); }

std::uint64_t code_for_offset(std::int64_t off, std::uint32_t check) {
  return (std::uint64_t{check} << 32) | static_cast<std::uint32_t>(static_cast<std::int32_t>(off));
}

}  // namespace

// ---- compile-time acceptance --------------------------------------------------
static_assert(wd::action_ok<decltype(&add), int, int>());
static_assert(wd::action_ok<decltype(triple), int>());
static_assert(wd::action_ok<sum_all, int, long>());
static_assert(wd::action_ok<decltype(&greet), const char (&)[4], int>() == false);  // decays to a pointer
static_assert(wd::action_ok<decltype(&greet), std::string, int>());
static_assert(!wd::action_ok<decltype(&add), int*, int>());                  // pointer argument
static_assert(!wd::action_ok<decltype(&add), std::string, int>());           // not invocable
static_assert(!wd::action_ok<std::function<int(int)>, int>());               // stateful
static_assert(!wd::action_ok<decltype([](int* p) { return *p; }), int*>());  // pointer parameter
inline int captured_state = 0;
inline auto make_stateful() {
  int k = 1;
  return [k](int x) { return x + k; };
}
static_assert(!wd::action_ok<decltype(make_stateful()), int>());
static_assert(std::is_same_v<wd::action_result_t<decltype(&greet), std::string, int>, std::string>);
static_assert(std::is_same_v<wd::action_result_t<decltype(&set_side_effect), int>, void>);
static_assert(!wd::may_have_bulk<std::tuple<int, double, std::optional<char>>>());
static_assert(!wd::may_have_bulk<std::map<int, std::variant<int, float>>>());
static_assert(wd::may_have_bulk<std::vector<int>>());
static_assert(wd::may_have_bulk<std::tuple<int, std::string>>());
static_assert(wd::may_have_bulk<std::vector<std::vector<int>>>());

// ---- ids -------------------------------------------------------------------------

TEST(ActionId, SameCallableSameId) {
  EXPECT_EQ((wd::action_id_of<int, int>(&add)), (wd::action_id_of<int, int>(&add)));
  EXPECT_EQ(wd::action_id_of<int>(triple), (wd::action_id_of<decltype(triple), int>()));
  EXPECT_EQ(wd::action_id_of<int>(triple), wd::action_id_of<int>(triple));
  // argument types decay: int&, const int -> int
  EXPECT_EQ((wd::action_id_of<int&, const int>(&add)), (wd::action_id_of<int, int>(&add)));
  EXPECT_NE((wd::action_id_of<int, int>(&add).target), 0u);
  EXPECT_EQ(wd::action_id_of<int>(triple).target, 0u);
  EXPECT_EQ(wd::wire_size((wd::action_id_of<int, int>(&add))), 16u);
  EXPECT_EQ(wd::wire_size(wd::action_id_of<int>(triple)), 8u);
}

TEST(ActionId, DifferentCallablesDifferentIds) {
  auto l1 = [](int x) { return x + 1; };
  auto l2 = [](int x) { return x + 1; };  // same signature and body, different type
  EXPECT_NE(wd::action_id_of<int>(l1), wd::action_id_of<int>(l2));
  EXPECT_NE(wd::action_id_of<int>(l1).code, wd::action_id_of<int>(triple).code);
  // same function signature: same record, different function
  wd::action_id a = wd::action_id_of<int, int>(&add), m = wd::action_id_of<int, int>(&mul);
  EXPECT_EQ(a.code, m.code);
  EXPECT_NE(a.target, m.target);
  // same callable, different argument types: different records
  EXPECT_NE((wd::action_id_of<int, int>(sum_all{}).code), (wd::action_id_of<int, double>(sum_all{}).code));
}

TEST(ActionId, ResolvesToTheRecord) {
  wd::resolved_action r = wd::action_from_id(wd::action_id_of<int>(triple));
  EXPECT_EQ(r.record, (&wd::action_record_of<decltype(triple), int>()));
  EXPECT_EQ(r.target, nullptr);
  EXPECT_NE(r.name().find("int"), std::string_view::npos) << r.name();
  wd::resolved_action f = wd::action_from_id(wd::action_id_of<int, int>(&add));
  EXPECT_EQ(reinterpret_cast<int (*)(int, int)>(f.target), &add);
  EXPECT_EQ(f.record->kind, wd::action_kind::function_pointer);
}

// ---- invocation -------------------------------------------------------------------

TEST(ActionInvoke, FunctionsAndLambdas) {
  EXPECT_EQ(call_via_wire<int>(&add, 2, 3), 5);
  EXPECT_EQ(call_via_wire<int>(&mul, 2, 3), 6);
  EXPECT_EQ(call_via_wire<int>(add, 4, 5), 9);  // function, not pointer
  EXPECT_EQ(call_via_wire<std::string>(&greet, std::string("bob"), 2), "hi bob;hi bob;");
  EXPECT_EQ(call_via_wire<int>(triple, 14), 42);
  EXPECT_EQ(call_via_wire<int>([](int x) { return x * 2; }, 21), 42);
  EXPECT_EQ(call_via_wire<double>(sum_all{}, 1, 2.5, 3.5f), 7.0);
  auto many = [](char c, std::vector<std::string> v, std::map<int, double> m, std::optional<int> o,
                 std::tuple<bool, long> t) {
    return std::to_string(c) + std::to_string(v.size()) + std::to_string(m.size()) +
           std::to_string(o.value_or(-1)) + std::to_string(std::get<1>(t));
  };
  EXPECT_EQ(call_via_wire<std::string>(many, 'A', std::vector<std::string>{"a", "b"},
                                       std::map<int, double>{{1, 1.0}}, std::optional<int>{}, std::tuple<bool, long>{true, 9L}),
            "6521-19");
  EXPECT_EQ(call_via_wire<int>([](std::tuple<int, int> t) { return std::get<0>(t) - std::get<1>(t); },
                               std::tuple<int, int>{5, 3}),
            2);
  using pt = std::pair<int, std::string>;
  EXPECT_EQ(call_via_wire<pt>([](pt p) { return pt{p.first + 1, p.second + "!"}; }, pt{1, "a"}), (pt{2, "a!"}));
  std::vector<double> big(5000, 2.0);  // argument goes zero-copy
  EXPECT_EQ(call_via_wire<double>(&scale_in_place, big, 0.5), 5000.0);
  EXPECT_EQ(big[0], 2.0);  // the callee got a copy
}

TEST(ActionInvoke, VoidResults) {
  side_effect = 0;
  call_via_wire<void>(&set_side_effect, 17);
  EXPECT_EQ(side_effect, 17);
  call_via_wire<void>([](std::string s) { side_effect = static_cast<int>(s.size()); }, std::string("four"));
  EXPECT_EQ(side_effect, 4);
  call_via_wire<void>([] { side_effect = -1; });
  EXPECT_EQ(side_effect, -1);
}

TEST(ActionInvoke, LargeResultIsKeptAliveForZeroCopy) {
  ser::writer w;
  wd::write_call(w, &iota_vec, 100000);
  ser::reader in(w.bytes());
  wd::resolved_action a = wd::read_action(in);
  ser::writer out;
  ser::owner keep = a.invoke(in, &out);
  ASSERT_EQ(out.bulk().size(), 1u);
  EXPECT_TRUE(keep);  // owns the vector the bulk span points into
  ser::reader rr(out.bytes(), out.bulk());
  std::vector<int> r = wd::read_result<std::vector<int>>(rr);
  ASSERT_EQ(r.size(), 100000u);
  EXPECT_EQ(r[99999], 99999);
  // small results need no owner
  ser::writer w2;
  wd::write_call(w2, &add, 1, 2);
  ser::reader in2(w2.bytes());
  ser::writer out2;
  EXPECT_FALSE(wd::read_action(in2).invoke(in2, &out2));
}

// Vectors and weft::buffers are serialized from the callee's stack and
// moved to the heap only when bulk segments point into them: the segments
// must still be valid (ASan checks) once the call has returned.
TEST(ActionInvoke, VectorAndBufferResultsKeptOnlyWhenViewed) {
  for (int n : {3, 100000}) {
    ser::writer w;
    wd::write_call(w, &iota_vec, n);
    ser::reader in(w.bytes());
    ser::writer out;
    ser::owner keep = wd::read_action(in).invoke(in, &out);
    EXPECT_EQ(static_cast<bool>(keep), n == 100000) << n;
    ser::reader rr(out.bytes(), out.bulk());
    const std::vector<int> r = wd::read_result<std::vector<int>>(rr);
    ASSERT_EQ(r.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(r.back(), n - 1);
  }
  for (int n : {8, 64 * 1024}) {
    ser::writer w;
    wd::write_call(w, &letters, n);
    ser::reader in(w.bytes());
    ser::writer out;
    ser::owner keep = wd::read_action(in).invoke(in, &out);
    EXPECT_EQ(static_cast<bool>(keep), n > 512) << n;  // buffers over 512 bytes go as bulk
    ser::reader rr(out.bytes(), out.bulk());
    const weft::buffer<char> r = wd::read_result<weft::buffer<char>>(rr);
    ASSERT_EQ(r.size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; i += 997) EXPECT_EQ(r[static_cast<std::size_t>(i)], static_cast<char>('a' + i % 26)) << i;
  }
}

TEST(ActionInvoke, ExceptionsAreCapturedAndRethrownAsRemoteError) {
  auto boom = [](int x) -> int {
    if (x > 0) throw std::out_of_range("value " + std::to_string(x) + " too large");
    return x;
  };
  try {
    (void)call_via_wire<int>(boom, 5);
    FAIL() << "no exception";
  } catch (const weft::remote_error& e) {
    EXPECT_STREQ(e.what(), "value 5 too large");
    EXPECT_EQ(e.remote_type(), "std::out_of_range");
  }
  EXPECT_EQ(call_via_wire<int>(boom, -5), -5);
  try {
    call_via_wire<void>([] { throw std::runtime_error("void boom"); });
    FAIL() << "no exception";
  } catch (const weft::remote_error& e) {
    EXPECT_STREQ(e.what(), "void boom");
  }
  try {
    (void)call_via_wire<int>(&throws_int, 1);
    FAIL() << "no exception";
  } catch (const weft::remote_error& e) {
    EXPECT_EQ(e.remote_type(), "int");
    EXPECT_NE(std::string(e.what()).find("not derived from std::exception"), std::string::npos);
  }
}

TEST(ActionInvoke, WithoutResultWriterExceptionsPropagate) {
  ser::writer w;
  wd::write_call(w, [](int) { throw std::logic_error("fire and forget failed"); }, 1);
  ser::reader in(w.bytes());
  wd::resolved_action a = wd::read_action(in);
  EXPECT_THROW(a.invoke(in, nullptr), std::logic_error);
  side_effect = 0;
  ser::writer w2;
  wd::write_call(w2, &set_side_effect, 3);
  ser::reader in2(w2.bytes());
  EXPECT_FALSE(wd::read_action(in2).invoke(in2, nullptr));
  EXPECT_EQ(side_effect, 3);
}

TEST(ActionInvoke, MalformedArgumentsThrowSerializationError) {
  // id of add(int, int) followed by the wrong arguments
  ser::writer w;
  wd::write_action_id(w, wd::action_id_of<int, int>(&add));
  w & std::string("not two ints");
  ser::reader in(w.bytes());
  wd::resolved_action a = wd::read_action(in);
  ser::writer out;
  EXPECT_THROW(a.invoke(in, &out), weft::serialization_error);
  // every truncation of a call message is detected
  ser::writer full;
  wd::write_call(full, &greet, std::string("someone"), 3);
  for (std::size_t n = 0; n < full.size(); ++n) {
    std::vector<std::byte> prefix(full.bytes().begin(), full.bytes().begin() + static_cast<std::ptrdiff_t>(n));
    ser::reader r(prefix);
    try {
      wd::resolved_action ra = wd::read_action(r);
      ser::writer o;
      ra.invoke(r, &o);
      ADD_FAILURE() << "prefix " << n << " accepted";
    } catch (const weft::serialization_error&) {
    } catch (const weft::protocol_error&) {
    }
  }
}

// ---- validation of ids ------------------------------------------------------------

TEST(ActionValidate, RandomIdsAreRejected) {
  std::mt19937_64 rng(2024);
  int rejected = 0;
  for (int i = 0; i < 200000; ++i) {
    wd::action_id id{rng(), (i % 2) ? rng() : 0};
    wd::resolved_action r;
    if (wd::try_action_from_id(id, r) != nullptr) ++rejected;
  }
  EXPECT_EQ(rejected, 200000);
  EXPECT_THROW(wd::action_from_id(wd::action_id{0, 0}), weft::protocol_error);
  EXPECT_THROW(wd::action_from_id(wd::action_id{~0ull, ~0ull}), weft::protocol_error);
}

TEST(ActionValidate, OffsetsAroundEverySegmentAreRejected) {
  const wd::image_map& img = wd::main_image();
  ASSERT_GT(img.n, 0);
  ASSERT_TRUE(img.anchor_inside);
  for (int s = 0; s < img.n; ++s) {
    const auto& seg = img.seg[s];
    for (std::int64_t delta : {-64, -8, 0, 8}) {
      for (std::uintptr_t edge : {seg.begin, seg.end}) {
        const std::int64_t off = static_cast<std::int64_t>(edge - anchor()) + delta;
        for (std::uint32_t check : {0u, 0xffffffffu, wd::check_word(static_cast<std::uint32_t>(off), 0)}) {
          wd::resolved_action r;
          EXPECT_NE(wd::try_action_from_id({code_for_offset(off, check), 0}, r), nullptr);
        }
      }
    }
  }
  // every aligned offset in a window around the anchor and around a real record
  const wd::action_id good = wd::action_id_of<int>(triple);
  const auto good_off = static_cast<std::int32_t>(good.code);
  int accepted = 0;
  for (std::int64_t off = good_off - 4096; off <= good_off + 4096; off += 8) {
    wd::resolved_action r;
    if (wd::try_action_from_id({code_for_offset(off, static_cast<std::uint32_t>(good.code >> 32)), 0}, r) == nullptr)
      ++accepted;
  }
  EXPECT_EQ(accepted, 1);  // only the record itself
  for (std::int64_t off = -4096; off <= 4096; ++off) {
    wd::resolved_action r;
    EXPECT_NE(wd::try_action_from_id({code_for_offset(off, 0), 0}, r), nullptr);
  }
}

TEST(ActionValidate, IdsOfOtherSignaturesAreRejected) {
  auto l1 = [](int x) { return x; };
  auto l2 = [](std::string s) { return s; };
  const wd::action_id a = wd::action_id_of<int>(l1), b = wd::action_id_of<std::string>(l2);
  wd::resolved_action r;
  ASSERT_EQ(wd::try_action_from_id(a, r), nullptr);
  // record offset of one, check word of the other
  const wd::action_id mixed{(b.code & 0xffffffff00000000ull) | (a.code & 0xffffffffull), 0};
  EXPECT_NE(wd::try_action_from_id(mixed, r), nullptr);
  // a single flipped bit anywhere
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_NE(wd::try_action_from_id({a.code ^ (1ull << bit), 0}, r), nullptr) << bit;
  }
  // function of one signature with the record of another
  const wd::action_id f = wd::action_id_of<int, int>(&add);
  const wd::action_id g = wd::action_id_of<std::string, int>(&greet);
  EXPECT_NE(wd::try_action_from_id({f.code, g.target}, r), nullptr);
  EXPECT_NE(wd::try_action_from_id({g.code, f.target}, r), nullptr);
  for (int bit = 0; bit < 64; ++bit) {
    EXPECT_NE(wd::try_action_from_id({f.code, f.target ^ (1ull << bit)}, r), nullptr) << bit;
  }
  // a stateless record with a function, a function record without one
  EXPECT_NE(wd::try_action_from_id({a.code, f.target}, r), nullptr);
  EXPECT_NE(wd::try_action_from_id({f.code, 0}, r), nullptr);
  // a function offset with a valid check word that points at data, not code
  const auto data_off = static_cast<std::uint32_t>(a.code);  // a record, in a non-executable segment
  const std::uint64_t forged = (std::uint64_t{wd::check_word(data_off, f.code == 0 ? 0 : wd::action_from_id(f).record->signature ^ f.code)} << 32) | data_off;
  EXPECT_NE(wd::try_action_from_id({f.code, forged}, r), nullptr);
}

TEST(ActionValidate, ErrorsAreClear) {
  try {
    (void)wd::action_from_id({0x1234567812345678ull, 0});
    FAIL();
  } catch (const weft::protocol_error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid remote-call id"), std::string::npos) << e.what();
  }
  ser::writer w;
  w.write_raw(std::uint64_t{0xdeadbeefdeadbeefull});
  ser::reader in(w.bytes());
  EXPECT_THROW(wd::read_action(in), weft::protocol_error);
}

// read_action remembers ids it resolved (per thread); a remembered code must
// not make a corrupt function part, or a different function, pass.
TEST(ActionValidate, ResolvedIdsAreRememberedWithoutWeakeningTheCheck) {
  auto read_id = [](wd::action_id id) {
    ser::writer w;
    wd::write_action_id(w, id);
    ser::reader in(w.bytes());
    return wd::read_action(in);
  };
  const wd::action_id f = wd::action_id_of<int, int>(&add), g = wd::action_id_of<int, int>(&mul);
  ASSERT_EQ(f.code, g.code);  // one record (same signature), two functions
  for (int round = 0; round < 3; ++round) {  // first a miss, then hits; alternating functions
    EXPECT_EQ(read_id(f).target, reinterpret_cast<wd::action_target>(&add));
    EXPECT_EQ(read_id(g).target, reinterpret_cast<wd::action_target>(&mul));
    EXPECT_EQ(read_id(f).target, reinterpret_cast<wd::action_target>(&add));
  }
  for (int bit = 0; bit < 64; ++bit)  // the code is remembered; the target is still checked
    EXPECT_THROW(read_id({f.code, f.target ^ (1ull << bit)}), weft::protocol_error) << bit;
  EXPECT_EQ(read_id(f).target, reinterpret_cast<wd::action_target>(&add));  // still resolves after the failures
  // A stateless callable's remembered id still has no function part: a
  // message with one has trailing bytes the arguments' reader rejects.
  auto l = [](int x) { return x; };
  const wd::action_id a = wd::action_id_of<int>(l);
  EXPECT_EQ(read_id(a).target, nullptr);
  EXPECT_EQ(read_id(a).record, wd::action_from_id(a).record);
}

// The sender remembers the last function it encoded per signature; ids
// must follow the function actually passed when they alternate.
TEST(ActionId, AlternatingFunctionsOfOneSignatureKeepTheirIds) {
  const wd::action_id f = wd::action_id_of<int, int>(&add), g = wd::action_id_of<int, int>(&mul);
  EXPECT_NE(f.target, g.target);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((wd::action_id_of<int, int>(&add)), f);
    EXPECT_EQ((wd::action_id_of<int, int>(&mul)), g);
    EXPECT_EQ(wd::action_from_id((wd::action_id_of<int, int>(i % 2 ? &mul : &add))).target,
              reinterpret_cast<wd::action_target>(i % 2 ? &mul : &add));
  }
  std::thread other([&] { EXPECT_EQ((wd::action_id_of<int, int>(&mul)), g); });  // its own memory
  other.join();
  EXPECT_EQ((wd::action_id_of<int, int>(&add)), f);
}

TEST(ActionValidate, SenderRejectsNullFunctionPointer) {
  int (*null_fn)(int, int) = nullptr;
  EXPECT_THROW((wd::action_id_of<int, int>(null_fn)), weft::protocol_error);
}

// ---- cross-process stability -------------------------------------------------------

namespace {
std::string ids_line() {
  const wd::action_id l = wd::action_id_of<int>(triple);
  const wd::action_id f = wd::action_id_of<int, int>(&add);
  const wd::action_id g = wd::action_id_of<std::string, int>(&greet);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64, l.code,
                f.code, f.target, g.code, g.target);
  return buf;
}
}  // namespace

// Child mode of CrossProcess.SameIdsInAnotherProcess: when started with
// WEFT_ACTION_TEST_CHILD set, this binary prints its ids and exits before
// running any test.
[[maybe_unused]] static const bool child_mode = [] {
  if (std::getenv("WEFT_ACTION_TEST_CHILD") == nullptr) return false;
  std::printf("WEFT_IDS %s %p\n", ids_line().c_str(),
              static_cast<const void*>(&wd::action_record_of<decltype(triple), int>()));
  std::fflush(stdout);
  std::_Exit(0);
}();

TEST(CrossProcess, SameIdsInAnotherProcess) {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) env_s.emplace_back(*e);
  env_s.emplace_back("WEFT_ACTION_TEST_CHILD=1");
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  char* argv[] = {exe, nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, exe, &fa, nullptr, argv, envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t k;
  while ((k = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(k));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  const auto pos = out.find("WEFT_IDS ");
  ASSERT_NE(pos, std::string::npos) << out;
  const std::string line = out.substr(pos + 9, out.find('\n', pos) - pos - 9);
  const std::string mine = ids_line();
  EXPECT_EQ(line.substr(0, mine.size()), mine);
  // informational: where the record lives in each process (differs under ASLR)
  std::printf("parent record %p, child line: %s\n",
              static_cast<const void*>(&wd::action_record_of<decltype(triple), int>()), line.c_str());
}
