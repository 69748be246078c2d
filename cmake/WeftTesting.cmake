# How tests are registered. Every ctest entry passes only when its program
# exits as expected AND its output is right: ctest's own pass-by-regex
# property ignores the exit status (a program that printed its report and
# then crashed would pass) and its will-fail property accepts any failure, a
# crash included, so neither is used. Instead each test runs under cmake/run_test.cmake,
# which checks both.
#
# weft_test(NAME name COMMAND program [args...]
#           [EXPECT regex...]      every regex must match the output (CMake regex syntax)
#           [FAILS_WITH regex]     the program must fail: non-zero status and this message
#           [STATUS n]             with FAILS_WITH: exactly this exit status
#           [SKIP_IF regex]        output matching it (with exit status 0) marks the test skipped
#           [SKIP_STATUS n]        exit status n marks the test skipped (the program said why)
#           [ENV var=value...] [TIMEOUT seconds] [PROCESSORS n])
# Without EXPECT or FAILS_WITH the exit status alone decides (status 0).
# A pattern may hold any character; an argument of COMMAND may hold neither
# `;` nor an unbalanced `[` (CMake lists split at the one and not after the other).
#
# weft_spmd_test(NAME base COMMAND program [args...] RANKS n... [BACKENDS smp mpi]
#                [SUFFIX text] [EXPECT ...] [FAILS_WITH ...] [STATUS n] [SKIP_IF ...] [ENV ...] [TIMEOUT s]
#                [NO_NODE_SIZE_VARIANT])
# One SPMD program on several rank counts and backends: base_smp_<n>ranks<SUFFIX>
# (WEFT_RANKS=n in one process) and base_mpi_<n>ranks<SUFFIX> (mpiexec -n n).
# BACKENDS defaults to both; mpi entries exist only when MPI was found.
# Each backend also runs the rank counts 2 and 4 where listed (neither
# listed: the smallest above 1) with every rank its own node: base_<backend>_<n>ranks<SUFFIX>_ns1,
# WEFT_NODE_SIZE=1, label node_size_1 (the paths between nodes, in one
# process or host); an entry whose ENV sets WEFT_NODE_SIZE=1 gets the label too. NO_NODE_SIZE_VARIANT leaves it out, for a test that is
# about same-node paths (say why at the call); so does an ENV that sets
# WEFT_NODE_SIZE itself.
set(WEFT_RUN_TEST_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/run_test.cmake)
set(_weft_test_timeout 300)
set(_weft_test_keywords NAME COMMAND EXPECT FAILS_WITH STATUS SKIP_IF SKIP_STATUS ENV TIMEOUT PROCESSORS
                        RANKS BACKENDS SUFFIX NO_NODE_SIZE_VARIANT LABELS)

# Splits the calling function's arguments: the patterns (EXPECT, FAILS_WITH,
# SKIP_IF) become the text of the test's spec file in `_weft_spec`, the rest
# stays a list in `_weft_rest`. Patterns never travel in a CMake list: an
# unbalanced `[` (a literal bracket, `\\[`) keeps a list from splitting at
# the `;` after it. The caller sets `_weft_argc` to its ARGC first (inside a
# macro, ${ARGC} would be the macro's own).
macro(_weft_split_arguments)
  set(_weft_spec "")
  set(_weft_rest)
  set(_weft_key "")
  set(_weft_expects 0)
  math(EXPR _weft_last "${_weft_argc} - 1")
  foreach(_weft_i RANGE ${_weft_last})
    set(_weft_arg "${ARGV${_weft_i}}")
    if(_weft_arg IN_LIST _weft_test_keywords)
      set(_weft_key "${_weft_arg}")
      if(NOT _weft_key MATCHES "^(EXPECT|FAILS_WITH|SKIP_IF)$")
        list(APPEND _weft_rest "${_weft_arg}")
      endif()
    elseif(_weft_key STREQUAL "EXPECT")
      string(APPEND _weft_spec "set(WEFT_EXPECT_${_weft_expects} [==[${_weft_arg}]==])\n")
      math(EXPR _weft_expects "${_weft_expects} + 1")
    elseif(_weft_key MATCHES "^(FAILS_WITH|SKIP_IF)$")
      string(APPEND _weft_spec "set(WEFT_${_weft_key} [==[${_weft_arg}]==])\n")
    else()
      list(APPEND _weft_rest "${_weft_arg}")
    endif()
  endforeach()
  string(APPEND _weft_spec "set(WEFT_EXPECT_COUNT ${_weft_expects})\n")
endmacro()

# Adds test `name` running `command` under run_test.cmake with the checks in
# `spec` (text of set() calls); the options as in weft_test.
function(_weft_register name spec)
  cmake_parse_arguments(PARSE_ARGV 2 T "" "STATUS;SKIP_STATUS;TIMEOUT;PROCESSORS" "COMMAND;ENV;LABELS")
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "weft_test(${name}): unknown arguments ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_COMMAND)
    message(FATAL_ERROR "weft_test(${name}): no COMMAND")
  endif()
  if(DEFINED T_STATUS)
    if(NOT spec MATCHES "WEFT_FAILS_WITH")
      message(FATAL_ERROR "weft_test(${name}): STATUS needs FAILS_WITH")
    endif()
    string(APPEND spec "set(WEFT_STATUS ${T_STATUS})\n")
  endif()
  if(DEFINED T_SKIP_STATUS)
    string(APPEND spec "set(WEFT_SKIP_STATUS ${T_SKIP_STATUS})\n")
  endif()
  set(spec_file ${CMAKE_CURRENT_BINARY_DIR}/test_specs/${name}.cmake)
  file(WRITE ${spec_file} "${spec}")
  # A bare target name runs that target's file, as add_test would (a target
  # defined later, in another folder, is named $<TARGET_FILE:name> instead).
  list(GET T_COMMAND 0 program)
  if(TARGET ${program})
    list(REMOVE_AT T_COMMAND 0)
    list(PREPEND T_COMMAND $<TARGET_FILE:${program}>)
  endif()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DWEFT_TEST_SPEC=${spec_file} -P ${WEFT_RUN_TEST_SCRIPT} -- ${T_COMMAND})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${_weft_test_timeout})
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  if(spec MATCHES "WEFT_SKIP_IF" OR DEFINED T_SKIP_STATUS)
    set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "WEFT_TEST_SKIPPED: ")
  endif()
  if(T_PROCESSORS)
    set_tests_properties(${name} PROPERTIES PROCESSORS ${T_PROCESSORS})
  endif()
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

function(weft_test)
  set(_weft_argc ${ARGC})
  _weft_split_arguments()
  cmake_parse_arguments(T "" "NAME" "" ${_weft_rest})
  if(NOT T_NAME)
    message(FATAL_ERROR "weft_test needs NAME")
  endif()
  _weft_register(${T_NAME} "${_weft_spec}" ${T_UNPARSED_ARGUMENTS})
endfunction()

function(weft_spmd_test)
  set(_weft_argc ${ARGC})
  _weft_split_arguments()
  cmake_parse_arguments(S "NO_NODE_SIZE_VARIANT" "NAME;SUFFIX;TIMEOUT;STATUS" "COMMAND;RANKS;BACKENDS;ENV" ${_weft_rest})
  if(NOT S_NAME OR NOT S_COMMAND OR NOT S_RANKS)
    message(FATAL_ERROR "weft_spmd_test needs NAME, COMMAND and RANKS")
  endif()
  if(S_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "weft_spmd_test(${S_NAME}): unknown arguments ${S_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT S_BACKENDS)
    set(S_BACKENDS smp mpi ucx)
  endif()
  set(options)
  foreach(key TIMEOUT STATUS)
    if(DEFINED S_${key})
      list(APPEND options ${key} ${S_${key}})
    endif()
  endforeach()
  list(POP_FRONT S_COMMAND program)
  if(TARGET ${program})
    set(program $<TARGET_FILE:${program}>)
  endif()
  # The rank counts that also run with every rank its own node (none: no
  # variant): 2 and 4 (a pair, and a ring of several remote peers), else the
  # smallest above 1.
  set(ns1_ranks "")
  if(NOT S_NO_NODE_SIZE_VARIANT AND NOT S_ENV MATCHES "(^|;)WEFT_NODE_SIZE=")
    foreach(n 2 4)
      if(n IN_LIST S_RANKS)
        list(APPEND ns1_ranks ${n})
      endif()
    endforeach()
    if(ns1_ranks STREQUAL "")
      foreach(n IN LISTS S_RANKS)
        if(n GREATER 1 AND (ns1_ranks STREQUAL "" OR n LESS ns1_ranks))
          set(ns1_ranks ${n})
        endif()
      endforeach()
    endif()
  endif()
  foreach(n IN LISTS S_RANKS)
    set(ranks ${n}ranks)
    if(n EQUAL 1)
      set(ranks 1rank)
    endif()
    foreach(backend IN LISTS S_BACKENDS)
      set(name ${S_NAME}_${backend}_${ranks}${S_SUFFIX})
      set(labels)
      if(S_ENV MATCHES "(^|;)WEFT_NODE_SIZE=1(;|$)")
        set(labels LABELS node_size_1)  # an entry of its own with every rank its own node
      endif()
      _weft_spmd_register(${backend} ${name} ${n} ENV ${S_ENV} ${labels})
      if(n IN_LIST ns1_ranks)
        _weft_spmd_register(${backend} ${name}_ns1 ${n} ENV ${S_ENV} WEFT_NODE_SIZE=1 LABELS node_size_1)
      endif()
    endforeach()
  endforeach()
endfunction()

# One entry of weft_spmd_test: `name` on `backend` with `n` ranks; the rest
# (ENV, LABELS) as in _weft_register. Reads the caller's _weft_spec,
# program, S_COMMAND, S_NAME and options.
function(_weft_spmd_register backend name n)
  cmake_parse_arguments(PARSE_ARGV 3 R "" "" "ENV;LABELS")
  set(extra)
  if(R_LABELS)
    set(extra LABELS ${R_LABELS})
  endif()
  if(backend STREQUAL "smp")
    _weft_register(${name} "${_weft_spec}" COMMAND ${program} ${S_COMMAND} ENV WEFT_RANKS=${n} ${R_ENV}
                   PROCESSORS 2 ${options} ${extra})
  elseif(backend STREQUAL "mpi")
    if(WEFT_WITH_MPI AND MPIEXEC_EXECUTABLE)
      _weft_register(${name} "${_weft_spec}"
                     COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${program} ${S_COMMAND}
                     ENV ${R_ENV} PROCESSORS 2 ${options} ${extra})
    endif()
  elseif(backend STREQUAL "ucx")
    # The same launch as mpi, on the ucx backend (label ucx).
    if(WEFT_HAVE_UCX AND MPIEXEC_EXECUTABLE)
      _weft_register(${name} "${_weft_spec}"
                     COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${program} ${S_COMMAND}
                     ENV WEFT_BACKEND=ucx ${R_ENV} PROCESSORS 2 ${options} LABELS ucx ${R_LABELS})
    endif()
  else()
    message(FATAL_ERROR "weft_spmd_test(${S_NAME}): unknown backend ${backend}")
  endif()
endfunction()

# weft_compile_tests(NAME prefix SOURCE file.cpp FAILS pattern...)
# Misuse rejected at compile time: `file.cpp` compiled (syntax only) with
# -DCASE=k must fail with the k-th pattern (prefix_compile_fail_k), and with
# -DCASE=0, the allowed uses, must compile (prefix_compile_allowed).
function(weft_compile_tests)
  cmake_parse_arguments(PARSE_ARGV 0 C "" "NAME;SOURCE" "")
  if(NOT C_NAME OR NOT C_SOURCE)
    message(FATAL_ERROR "weft_compile_tests needs NAME, SOURCE and FAILS")
  endif()
  set(compile ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include ${C_SOURCE})
  set(case 0)
  set(in_fails FALSE)
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE ${last})
    if(in_fails)
      math(EXPR case "${case} + 1")
      weft_test(NAME ${C_NAME}_compile_fail_${case} COMMAND ${compile} -DCASE=${case}
                FAILS_WITH "${ARGV${i}}" TIMEOUT 120)
    elseif("${ARGV${i}}" STREQUAL "FAILS")
      set(in_fails TRUE)
    endif()
  endforeach()
  weft_test(NAME ${C_NAME}_compile_allowed COMMAND ${compile} -DCASE=0 TIMEOUT 120)
endfunction()
