// pgas's --weft: options: the symmetric heap's size and the software
// cache's. Registered with the runtime's option table at load time
// (runtime/option_registry.hpp); pgas_start reads them at each weft::init.
#pragma once
#include <cstddef>
#include <string>

namespace weft::pgas::detail {

struct pgas_option_values {
  // Bytes of address space each rank's symmetric heap reserves (committed
  // page by page as it is used).
  std::size_t segment = std::size_t{1} << 30;
  // The software cache behind checkout/checkin: block size, bytes per rank,
  // and whether every checkout goes through it ("always", for testing: also
  // the rank's own heap, which no node size makes remote) or only those of
  // memory this rank does not map ("auto").
  std::size_t cache_block = std::size_t{64} << 10;
  std::size_t cache_sub_block = std::size_t{4} << 10;
  std::size_t cache_size = std::size_t{16} << 20;
  std::string cache = "auto";  // auto | always
  // Memory this rank does not map goes through the transport's passive
  // one-sided operations where there are some (false: by messages, to
  // compare the two paths; the same on every rank).
  bool one_sided = true;
};

/// The values the last weft::init parsed (the defaults before one).
const pgas_option_values& pgas_options() noexcept;

}  // namespace weft::pgas::detail
