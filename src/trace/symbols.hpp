// Internal to trace: names of code addresses, from the executable's own
// symbol table (which holds the local symbols dladdr cannot see: lambdas,
// functions in anonymous namespaces) or else dladdr.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace weft::trace {

class symbol_table {
 public:
  /// Reads /proc/self/exe's symbol table (empty if it cannot).
  symbol_table();
  /// The demangled name of the function holding `addr`, or "" if unknown.
  std::string name_of(const void* addr) const;

 private:
  struct symbol {
    std::uint64_t start, size;
    std::string name;  // mangled
  };
  std::vector<symbol> symbols_;  // sorted by start
  std::uintptr_t bias_ = 0;      // where the executable is loaded
};

}  // namespace weft::trace
