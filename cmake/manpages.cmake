# Makes the man pages from the programs' own --help (Debian's help2man), so they say what the
# build does: idemctl(1), idemctl-COMMAND(1) for each command `idemctl --help` lists, and
# idem-console(1). Run by cmake/IdemInstall.cmake at build time:
#   cmake -DIDEMCTL=... -DCONSOLE=... -DOUT=DIR -DVERSION=X.Y.Z -P manpages.cmake
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})

function(make_page program name summary help_option)
  execute_process(
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr "--help-option=${help_option}"
            "--version-string=${name} ${VERSION}" "--name=${summary}" --section=1 --manual=Idem
            --source=Idem --output=${OUT}/${name}.1 ${program}
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man ${name}: ${err}")
  endif()
  # -n: no name or time stamp in the archive, so the page is the same on every build.
  execute_process(COMMAND ${GZIP} -9nf ${OUT}/${name}.1 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${name}.1 failed")
  endif()
endfunction()

make_page(${IDEMCTL} idemctl "HTTP Idempotency-Key enforcement on a PostgreSQL store" --help)
# The commands and their summaries: the indented lines under "Commands:" in `idemctl --help`.
execute_process(COMMAND ${IDEMCTL} --help OUTPUT_VARIABLE overview RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "idemctl --help failed")
endif()
# A CMake list splits at ";": a summary's semicolons become commas in the page's NAME line.
string(REPLACE ";" "," overview "${overview}")
string(REGEX MATCH "Commands:\n(  [^\n]+\n)+" commands "${overview}")
string(REGEX MATCHALL "  [a-z]+ +[^\n]+" lines "${commands}")
foreach(line IN LISTS lines)
  string(REGEX MATCH "^  ([a-z]+) +(.+)$" ignored "${line}")
  make_page(${IDEMCTL} idemctl-${CMAKE_MATCH_1} "${CMAKE_MATCH_2}" "${CMAKE_MATCH_1} --help")
endforeach()
if(CONSOLE)
  make_page(${CONSOLE} idem-console "the Idem operations console" --help)
endif()
