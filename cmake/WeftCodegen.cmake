# Code generation settings for everything built in this tree.
#
# Intel's JCC erratum (Skylake-derived cores, which include the Xeon of our
# 2-vCPU VMs): microcode keeps a jump that crosses or ends on a 32-byte
# boundary out of the decoded-uop cache, so a hot loop runs far slower when
# the linker happens to place it badly. Measured on such a core: the same
# smp message path runs at 13M or 20M messages/s depending on unrelated code
# elsewhere in the file; with the assembler padding jumps away from those
# boundaries it runs at 20-22M either way (docs/BENCHMARKS.md). The padding
# costs a few bytes of code and nothing measurable on other CPUs.
option(WEFT_JCC_MITIGATION "x86-64: keep jumps off 32-byte boundaries (Intel JCC erratum)" ON)
if(WEFT_JCC_MITIGATION AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag("-Wa,-mbranches-within-32B-boundaries" WEFT_ASSEMBLER_PADS_JUMPS)
  if(WEFT_ASSEMBLER_PADS_JUMPS)
    add_compile_options(-Wa,-mbranches-within-32B-boundaries)
  endif()
endif()
