# Include roots that make the layers visible to the compiler (docs/build.md).
#
# No target sees the repository root. A target's headers are reached through symlinks in the
# build tree instead:
#   ${CMAKE_BINARY_DIR}/include/<target>/<folder>/<header>          its PUBLIC headers
#   ${CMAKE_BINARY_DIR}/include/<target>-private/<folder>/<header>  headers only its folder uses
# so `#include "core/store/pg.h"` resolves only for targets that link idem_store, and a
# wrong-way include (store -> endpoint, core -> ui) fails with "No such file or directory".

# Recreates <root>/<folder>/<header> -> <source> for each header (stale links are dropped, so
# a header moved from public to private stops being reachable at the next configure).
function(_idem_link_headers root)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(header IN LISTS ARGN)
    set(link ${root}/${folder}/${header})
    get_filename_component(link_dir ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${link_dir})
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${header} ${link} SYMBOLIC)
  endforeach()
endfunction()

# idem_include_roots(<target> [PUBLIC_HEADERS h...] [PRIVATE_HEADERS h...])
# Headers are paths relative to the current source folder. PUBLIC headers are what the
# target's dependents may include; PRIVATE ones only its own sources. For a target with
# private headers, <target>_internals (INTERFACE) exposes them to white-box tests only.
# Also fails the configure when a .cpp/.h in the folder is named by no list, so a new file
# cannot be forgotten (adding one is one line in the folder's CMakeLists.txt).
function(idem_include_roots target)
  cmake_parse_arguments(ARG "" "" "PUBLIC_HEADERS;PRIVATE_HEADERS" ${ARGN})
  set(public_root ${CMAKE_BINARY_DIR}/include/${target})
  set(private_root ${CMAKE_BINARY_DIR}/include/${target}-private)
  _idem_link_headers(${public_root} ${ARG_PUBLIC_HEADERS})
  _idem_link_headers(${private_root} ${ARG_PRIVATE_HEADERS})
  target_sources(${target} PRIVATE ${ARG_PUBLIC_HEADERS} ${ARG_PRIVATE_HEADERS})
  get_target_property(type ${target} TYPE)
  # idem_options: the project's warnings, for the target and (as before) its dependents.
  if(type STREQUAL "EXECUTABLE")
    target_include_directories(${target} PRIVATE ${public_root} ${private_root})
    target_link_libraries(${target} PRIVATE idem_options)
  else()
    target_include_directories(${target} PUBLIC ${public_root} PRIVATE ${private_root})
    target_link_libraries(${target} PUBLIC idem_options)
  endif()
  if(ARG_PRIVATE_HEADERS AND NOT type STREQUAL "EXECUTABLE")
    add_library(${target}_internals INTERFACE)
    target_include_directories(${target}_internals INTERFACE ${private_root})
    target_link_libraries(${target}_internals INTERFACE ${target})
  endif()

  get_target_property(listed ${target} SOURCES)
  list(TRANSFORM listed PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/ REGEX "^[^/]")
  file(GLOB_RECURSE present RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
    ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  foreach(file IN LISTS present)
    if(NOT ${CMAKE_CURRENT_SOURCE_DIR}/${file} IN_LIST listed)
      message(FATAL_ERROR "${CMAKE_CURRENT_SOURCE_DIR}/${file} is in no list of ${target}: "
                          "add it to ${CMAKE_CURRENT_LIST_FILE}")
    endif()
  endforeach()
endfunction()

# idem_folder_root(<target> <folder>): an INTERFACE target whose include root holds only
# <folder> (relative to the repository root) as "<folder>/...". The tests use it for
# "tests/support/testdb.h" and the like without getting the rest of the repository.
function(idem_folder_root target folder)
  set(root ${CMAKE_BINARY_DIR}/include/${target})
  file(REMOVE_RECURSE ${root})
  get_filename_component(link_dir ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${link_dir})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE ${root})
endfunction()

# Precompiled headers: CI compiles the tree three times on two cores (g++, ASan, TSan), and most
# of a heavy source's time was the same system headers: the standard library, nlohmann/json, and
# Boost.Beast where a folder speaks HTTP. System headers only: the include roots above still
# decide what a target sees. Libraries only under clang (the sanitizer builds): GCC 12 at -O2
# with the standard library precompiled reports out-of-bounds copies inside std::string that
# are not there (-Warray-bounds, -Wstringop-overread: its system-header exemption is lost for
# inlined code), so the g++ build keeps its warnings whole and compiles its libraries as before.
set(IDEM_PCH_COMMON <algorithm> <chrono> <functional> <map> <memory> <optional> <string> <vector>
    <nlohmann/json.hpp>)
set(IDEM_PCH_BEAST <boost/beast/core.hpp> <boost/beast/http.hpp>)

# idem_precompile(<target> [BEAST])
function(idem_precompile target)
  cmake_parse_arguments(ARG "BEAST" "" "" ${ARGN})
  set(headers ${IDEM_PCH_COMMON})
  if(ARG_BEAST)
    list(APPEND headers ${IDEM_PCH_BEAST})
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_precompile_headers(${target} PRIVATE ${headers})
  endif()
endfunction()
