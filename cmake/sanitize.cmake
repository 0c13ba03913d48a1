# Sanitizer and fuzzer builds (docs/testing.md, scripts/sanitize.sh).
#
#   -DAOTIRT_SANITIZE=address,undefined  AddressSanitizer (with LeakSanitizer) and
#                                        UndefinedBehaviorSanitizer; a UBSan finding
#                                        aborts the process (no recovery), like ASan's.
#   -DAOTIRT_SANITIZE=thread             ThreadSanitizer.
#   -DAOTIRT_BUILD_FUZZERS=ON            the libFuzzer targets of tests/fuzz (clang only);
#                                        implies address,undefined unless AOTIRT_SANITIZE
#                                        names something else.
#
# The flags are directory-wide options set here, before any target exists, so
# they reach every C and C++ target of the project: the library, the CLI, the
# examples, the tests and the fake model library. CUDA sources are left
# uninstrumented. Frame pointers are kept and line tables added so reports
# carry full, symbolized stacks whatever CMAKE_BUILD_TYPE is.
#
# Model libraries inside .pt2 packages are compiled by Inductor, without
# sanitizers; the executable carries the sanitizer runtime, so they load and run
# normally (their own memory accesses are just not checked).

option(AOTIRT_BUILD_FUZZERS "Build the libFuzzer targets in tests/fuzz (clang; implies AOTIRT_SANITIZE=address,undefined)" OFF)

set(_aotirt_sanitize "${AOTIRT_SANITIZE}")
if(AOTIRT_BUILD_FUZZERS AND _aotirt_sanitize STREQUAL "")
  set(_aotirt_sanitize "address,undefined")
endif()
string(REPLACE " " "" _aotirt_sanitize "${_aotirt_sanitize}")
string(TOLOWER "${_aotirt_sanitize}" _aotirt_sanitize)

if(AOTIRT_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "AOTIRT_BUILD_FUZZERS needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  if(NOT AOTIRT_BUILD_TESTS)
    message(FATAL_ERROR "AOTIRT_BUILD_FUZZERS needs AOTIRT_BUILD_TESTS=ON (the fuzzers live in tests/fuzz)")
  endif()
endif()

# Set for tests/fuzz and anything else that wants to know.
set(AOTIRT_SANITIZERS "")
if(_aotirt_sanitize STREQUAL "")
  return()
endif()

string(REPLACE "," ";" _aotirt_sanitize_list "${_aotirt_sanitize}")
list(REMOVE_DUPLICATES _aotirt_sanitize_list)
foreach(_s IN LISTS _aotirt_sanitize_list)
  if(NOT _s MATCHES "^(address|undefined|thread)$")
    message(FATAL_ERROR "AOTIRT_SANITIZE: unknown sanitizer '${_s}' (use address,undefined or thread)")
  endif()
endforeach()
if("thread" IN_LIST _aotirt_sanitize_list AND "address" IN_LIST _aotirt_sanitize_list)
  message(FATAL_ERROR "AOTIRT_SANITIZE: thread and address cannot be combined; make two builds")
endif()
if(AOTIRT_BUILD_FUZZERS AND "thread" IN_LIST _aotirt_sanitize_list)
  message(FATAL_ERROR "AOTIRT_BUILD_FUZZERS: libFuzzer runs with address,undefined, not thread")
endif()
set(AOTIRT_SANITIZERS ${_aotirt_sanitize_list})
list(JOIN _aotirt_sanitize_list "," _aotirt_sanitize_csv)

# Line tables are all a symbolized stack needs, and build much faster than -g.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(_aotirt_san_debug -gline-tables-only)
else()
  set(_aotirt_san_debug -g1)
endif()
set(_aotirt_san_compile -fsanitize=${_aotirt_sanitize_csv} -fno-omit-frame-pointer
  -fno-optimize-sibling-calls ${_aotirt_san_debug})
set(_aotirt_san_link -fsanitize=${_aotirt_sanitize_csv})
if("undefined" IN_LIST _aotirt_sanitize_list)
  # A UBSan finding must fail the test that hits it, not scroll past.
  list(APPEND _aotirt_san_compile -fno-sanitize-recover=all)
  list(APPEND _aotirt_san_link -fno-sanitize-recover=all)
endif()
if(AOTIRT_BUILD_FUZZERS)
  # Coverage feedback for libFuzzer in every object; the fuzz executables
  # add -fsanitize=fuzzer (libFuzzer's main) themselves (tests/fuzz).
  list(APPEND _aotirt_san_compile -fsanitize=fuzzer-no-link)
endif()

add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_aotirt_san_compile}>")
add_link_options("$<$<LINK_LANGUAGE:C,CXX>:${_aotirt_san_link}>")
if(AOTIRT_BUILD_FUZZERS)
  message(STATUS "aotirt: sanitizers ${_aotirt_sanitize_csv} on every C/C++ target, with libFuzzer targets")
else()
  message(STATUS "aotirt: sanitizers ${_aotirt_sanitize_csv} on every C/C++ target")
endif()
