#include "trace/symbols.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace weft::trace {

namespace {

int first_object_bias(dl_phdr_info* info, std::size_t, void* data) {
  *static_cast<std::uintptr_t*>(data) = info->dlpi_addr;
  return 1;  // the first object is the executable
}

std::string demangle(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && d != nullptr ? d : mangled;
  std::free(d);
  // weft::detail::kernel_symbol<K> (weft/offload/launch.hpp) stands for
  // the kernel K: show K.
  constexpr std::string_view head = "void weft::detail::kernel_symbol<", tail = ">()";
  if (s.size() > head.size() + tail.size() && s.starts_with(head) && s.ends_with(tail))
    s = s.substr(head.size(), s.size() - head.size() - tail.size());
  // Instantiations of weft's own templates spell out every argument type:
  // the head says enough on a timeline.
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

}  // namespace

symbol_table::symbol_table() {
  dl_iterate_phdr(&first_object_bias, &bias_);
  const int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  void* map = fstat(fd, &st) == 0 ? mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return;
  const auto* base = static_cast<const unsigned char*>(map);
  const auto size = static_cast<std::size_t>(st.st_size);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (size >= sizeof(Elf64_Ehdr) && std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 &&
      eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) <= size) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; ++i) {
      if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& strtab = sh[sh[i].sh_link];
      if (sh[i].sh_offset + sh[i].sh_size > size || strtab.sh_offset + strtab.sh_size > size) continue;
      const auto* syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
      const std::size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
      const char* names = reinterpret_cast<const char*>(base + strtab.sh_offset);
      for (std::size_t k = 0; k < n; ++k)
        if (ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC && syms[k].st_size != 0 && syms[k].st_name < strtab.sh_size)
          symbols_.push_back({syms[k].st_value, syms[k].st_size, names + syms[k].st_name});
    }
  }
  munmap(map, size);
  std::sort(symbols_.begin(), symbols_.end(), [](const symbol& a, const symbol& b) { return a.start < b.start; });
}

std::string symbol_table::name_of(const void* addr) const {
  const auto a = reinterpret_cast<std::uintptr_t>(addr) - bias_;
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), a,
                             [](std::uint64_t x, const symbol& s) { return x < s.start; });
  if (it != symbols_.begin() && a < (it - 1)->start + (it - 1)->size) return demangle((it - 1)->name.c_str());
  Dl_info info{};
  if (dladdr(addr, &info) != 0 && info.dli_sname != nullptr) return demangle(info.dli_sname);
  return "";
}

}  // namespace weft::trace
