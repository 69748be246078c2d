// Remote-call ids: the parts that need the loaded image (dl_iterate_phdr)
// or the C++ ABI (demangling, the current exception's type), and the
// validation of received ids. The templates that make records and ids are
// in include/weft/detail/action.hpp.
#include <cxxabi.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>

#include "weft/detail/action.hpp"

namespace weft::detail {

static_assert(segment_exec == PF_X && segment_read == PF_R);

/// The loaded PT_LOAD segments of the main program (the first object that
/// dl_iterate_phdr reports), computed once.
const image_map& main_image() noexcept {
  static const image_map map = [] {
    image_map m;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) -> int {
          auto* mm = static_cast<image_map*>(data);
          for (int i = 0; i < info->dlpi_phnum && mm->n < 16; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD || ph.p_memsz == 0) continue;
            const std::uintptr_t b = info->dlpi_addr + ph.p_vaddr;
            mm->seg[mm->n++] = {b, b + ph.p_memsz, ph.p_flags};
          }
          return 1;  // the main program comes first; stop there
        },
        &m);
    m.anchor_inside = m.contains(anchor_address(), sizeof(action_anchor_t), segment_read);
    return m;
  }();
  return map;
}

// Loads a word at an address proven to be mapped and aligned, but that may
// not hold an object (a corrupt id): no ASan check, no typed access.
#if defined(__GNUC__)
__attribute__((no_sanitize("address", "hwaddress", "undefined")))
#endif
static std::uint64_t load_word(std::uintptr_t a) noexcept {
  return *reinterpret_cast<const volatile std::uint64_t*>(a);
}

static std::string demangle(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = (status == 0 && d != nullptr) ? d : mangled;
  std::free(d);
  return s;
}

/// Appends the current exception to `out` as (status 1, type, what).
void write_current_exception(writer& out) {
  std::string type = "unknown";
  if (const std::type_info* t = abi::__cxa_current_exception_type()) type = demangle(t->name());
  std::string what;
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "exception of type " + type + " (not derived from std::exception)";
  }
  out.write_raw(result_exception);
  out & type & what;
}

[[noreturn]] static void not_in_image(const char* what) {
  throw protocol_error(std::string("weft: remote call: ") + what +
                       " is not inside the main executable; remote-call ids are offsets within the "
                       "executable, so callables must be linked into it (not into a shared "
                       "library)");
}

static std::uint32_t offset_of(std::uintptr_t a, const char* what) {
  const std::uintptr_t anchor = anchor_address();
  const auto off = static_cast<std::intptr_t>(a - anchor);
  if (off < INT32_MIN || off > INT32_MAX) not_in_image(what);
  return static_cast<std::uint32_t>(static_cast<std::int32_t>(off));
}

std::uint64_t encode_record(const action_record* rec) {
  const auto a = reinterpret_cast<std::uintptr_t>(rec);
  const image_map& img = main_image();
  if (!img.anchor_inside || !img.contains(a, sizeof(action_record), segment_read)) not_in_image("the call record");
  const std::uint32_t off = offset_of(a, "the call record");
  return (std::uint64_t{check_word(off, rec->signature)} << 32) | off;
}

std::uint64_t encode_target(const action_record* rec, std::uint64_t code, action_target fn) {
  if (fn == nullptr) throw protocol_error("weft: remote call: null function pointer");
  const auto a = reinterpret_cast<std::uintptr_t>(fn);
  if (!main_image().contains(a, 1, segment_exec)) not_in_image("the function");
  const std::uint32_t off = offset_of(a, "the function");
  return (std::uint64_t{check_word(off, rec->signature ^ code)} << 32) | off;
}

/// Validates `code` alone (the record); nullptr or the reason it is invalid.
static const char* check_record(std::uint64_t code, const action_record*& rec) noexcept {
  const image_map& img = main_image();
  if (!img.anchor_inside) return "the anchor is not in the main executable";
  const auto off = static_cast<std::uint32_t>(code);
  const std::uintptr_t a =
      anchor_address() + static_cast<std::uintptr_t>(static_cast<std::intptr_t>(static_cast<std::int32_t>(off)));
  if (a % alignof(action_record) != 0) return "misaligned record offset";
  if (!img.contains(a, sizeof(action_record), segment_read)) return "record offset outside the executable";
  if (load_word(a + offsetof(action_record, magic)) != action_magic) return "no call record at this offset";
  if (load_word(a + offsetof(action_record, self)) != a) return "no call record at this offset";
  rec = reinterpret_cast<const action_record*>(a);
  if (static_cast<std::uint32_t>(code >> 32) != check_word(off, rec->signature))
    return "check word mismatch (corrupt id)";
  return nullptr;
}

/// Validates the function part of an id for a function-pointer record.
static const char* check_target(const action_record* rec, std::uint64_t code, std::uint64_t target,
                                action_target& fn) noexcept {
  if (rec->kind == action_kind::stateless)
    return target == 0 ? nullptr : "function offset given for a stateless callable";
  if (rec->kind != action_kind::function_pointer) return "corrupt call record";
  const auto off = static_cast<std::uint32_t>(target);
  if (static_cast<std::uint32_t>(target >> 32) != check_word(off, rec->signature ^ code))
    return "function check word mismatch (corrupt id)";
  const std::uintptr_t a =
      anchor_address() + static_cast<std::uintptr_t>(static_cast<std::intptr_t>(static_cast<std::int32_t>(off)));
  if (!main_image().contains(a, 1, segment_exec)) return "function offset outside the executable's code";
  fn = reinterpret_cast<action_target>(a);
  return nullptr;
}

/// Resolves an id without throwing: nullptr on success (out filled), else
/// the reason the id is invalid.
const char* try_action_from_id(const action_id& id, resolved_action& out) noexcept {
  const action_record* rec = nullptr;
  if (const char* why = check_record(id.code, rec)) return why;
  action_target fn = nullptr;
  if (const char* why = check_target(rec, id.code, id.target, fn)) return why;
  out = resolved_action{rec, fn};
  return nullptr;
}

[[noreturn]] static void bad_id(const action_id& id, const char* why) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "%016llx:%016llx", static_cast<unsigned long long>(id.code),
                static_cast<unsigned long long>(id.target));
  throw protocol_error(std::string("weft: invalid remote-call id ") + buf + ": " + why +
                       " (are all ranks running the same executable?)");
}

/// Resolves an id; throws protocol_error when it is invalid.
resolved_action action_from_id(const action_id& id) {
  resolved_action r;
  if (const char* why = try_action_from_id(id, r)) bad_id(id, why);
  return r;
}

namespace {

/// Ids this thread resolved lately, direct-mapped by code. Validating an id
/// (a segment search, two loads, a check word) cost ~90 instructions per
/// received call (callgrind, pong rank of bench_latency); a hit compares one
/// or two words. Only ids that passed the full check are stored, so a hit
/// is exactly as valid.
struct resolved_cache {
  struct entry {
    std::uint64_t code = 0;
    std::uint64_t target = 0;
    resolved_action action;
  };
  static constexpr std::size_t size = 8;
  entry slot[size];
  static std::size_t index(std::uint64_t code) noexcept {
    return static_cast<std::size_t>((code * 0x9e3779b97f4a7c15ull) >> 61);
  }
};
thread_local resolved_cache tls_resolved;

}  // namespace

/// read_action past a cache miss: the full check; the id is cached when it
/// passes. `have_target`: the function part was read already.
static resolved_action resolve_id_slow(reader& r, action_id id, bool have_target) {
  const action_record* rec = nullptr;
  if (const char* why = check_record(id.code, rec)) bad_id(id, why);
  if (rec->kind == action_kind::function_pointer && !have_target) r.read_bytes(&id.target, sizeof id.target);
  action_target fn = nullptr;
  if (const char* why = check_target(rec, id.code, id.target, fn)) bad_id(id, why);
  const resolved_action out{rec, fn};
  tls_resolved.slot[resolved_cache::index(id.code)] = {id.code, id.target, out};
  return out;
}

/// Reads and validates an id written by write_action_id; throws
/// protocol_error (invalid id) or serialization_error (truncated input).
/// Not inlined (even with link-time optimization): a fiber may resume on
/// another thread, and inlined code may keep tls_resolved's address across that.
[[gnu::noinline]] resolved_action read_action(reader& r) {
  action_id id;
  r.read_bytes(&id.code, sizeof id.code);
  resolved_cache::entry& hit = tls_resolved.slot[resolved_cache::index(id.code)];
  if (hit.code == id.code && hit.action.record != nullptr) {
    if (hit.action.target == nullptr) return hit.action;  // a stateless callable: no function part
    r.read_bytes(&id.target, sizeof id.target);
    if (id.target == hit.target) return hit.action;
    return resolve_id_slow(r, id, true);
  }
  return resolve_id_slow(r, id, false);
}

}  // namespace weft::detail
