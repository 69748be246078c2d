# -Wall -Wextra on every target of this project (not on users' code).
add_library(weft_warnings INTERFACE)
target_compile_options(weft_warnings INTERFACE -Wall -Wextra -Wpedantic)
