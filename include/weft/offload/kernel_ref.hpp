// weft offload — naming a kernel on another rank without registration.
//
// Kernels are identified as remote calls are (weft/detail/action.hpp): a
// stateless callable by its type alone (the launch's own remote-call id
// carries it), a function pointer by its offset from the executable's
// anchor, with a check word made from the offset and the pointer's type, so
// a wrong or corrupt code is refused before anything is called.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "weft/detail/action.hpp"
#include "weft/errors.hpp"

namespace weft::detail {

template <class K>
inline constexpr bool kernel_callable_ok_v = callable_ok_v<K>;

template <class K>
std::uint64_t kernel_salt() noexcept {
  return fnv1a(action_signature_text<K>()) ^ 0x6f66666c6f6164ull;  // "offload"
}

/// The code of kernel `k` (0 for a stateless callable).
template <class K>
std::uint64_t encode_kernel(const K& k) {
  if constexpr (std::is_pointer_v<K>) {
    const auto a = reinterpret_cast<std::uintptr_t>(k);
    if (k == nullptr || !main_image().contains(a, 1, segment_exec))
      throw protocol_error("weft offload: the kernel function is null or not inside the main executable");
    const auto off = static_cast<std::uint32_t>(static_cast<std::int32_t>(static_cast<std::intptr_t>(a - anchor_address())));
    return (std::uint64_t{check_word(off, kernel_salt<K>())} << 32) | off;
  } else {
    (void)k;
    return 0;
  }
}

/// The kernel a code names; throws protocol_error for a corrupt code.
template <class K>
K decode_kernel(std::uint64_t code) {
  if constexpr (std::is_pointer_v<K>) {
    const auto off = static_cast<std::uint32_t>(code);
    const std::uintptr_t a =
        anchor_address() + static_cast<std::uintptr_t>(static_cast<std::intptr_t>(static_cast<std::int32_t>(off)));
    if (static_cast<std::uint32_t>(code >> 32) != check_word(off, kernel_salt<K>()) ||
        !main_image().contains(a, 1, segment_exec))
      throw protocol_error("weft offload: invalid kernel code (are all ranks running the same executable?)");
    return reinterpret_cast<K>(a);
  } else {
    if (code != 0) throw protocol_error("weft offload: kernel code given for a stateless kernel");
    return K{};
  }
}

}  // namespace weft::detail
