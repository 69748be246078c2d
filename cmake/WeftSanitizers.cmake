# Sanitizer flags apply to everything built in this tree, so the runtime and
# the tests are instrumented together (fiber switches are annotated in
# src/sched/fiber.cpp so ASan and TSan follow them).
# The asan and tsan presets compile with -O1 -g1 (line tables only): the
# sanitizers' reports keep file and line, and the instrumented tree builds in
# about half the time it takes at -O2 -g (one heavy test file: 120 s -> 63 s
# under ASan+UBSan), which is most of the test command's wall time.
if(WEFT_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(WEFT_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT WEFT_SANITIZE STREQUAL "")
  message(FATAL_ERROR "WEFT_SANITIZE must be '', 'address' or 'thread', not '${WEFT_SANITIZE}'")
endif()
