# -Wall -Wextra on every target of this project (not on users' code).
add_library(weft_warnings INTERFACE)
target_compile_options(weft_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
