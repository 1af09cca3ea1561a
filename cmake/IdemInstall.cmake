# `cmake --install` and the Debian package (`./run package`, CPack's DEB generator): what goes
# where is listed in docs/install.md. The programs install themselves (app/*/CMakeLists.txt);
# this adds the units, the desktop entry and icon, the man pages and the examples.
include(GNUInstallDirs)

# What the install and the package hold, built alone (`./run package` builds this target): CPack's
# install step does not build "all", the test suites included, first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
add_custom_target(idem_installed)
add_dependencies(idem_installed idemctl)
if(IDEM_BUILD_UI)
  add_dependencies(idem_installed idem-console)
endif()

# The units name the installed idemctl (ExecStart) and docs, so they are made at install time,
# for the prefix installed to: `cmake --install build --prefix /usr/local` and CPack's /usr
# each get their own, from one build. Both share one hardening block.
install(CODE "
  set(IDEM_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  set(IDEM_DOCDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/doc/idem\")
  file(READ ${PROJECT_SOURCE_DIR}/resources/systemd/hardening.conf IDEM_HARDENING)
  foreach(unit idem-proxy@.service idem-sweep.service)
    configure_file(${PROJECT_SOURCE_DIR}/resources/systemd/\${unit}.in ${CMAKE_BINARY_DIR}/systemd/\${unit} @ONLY)
  endforeach()
")
# systemd reads units from /usr/lib/systemd/system and, for a local install, /usr/local/lib/systemd/system.
set(unit_dir lib/systemd/system)
install(FILES ${CMAKE_BINARY_DIR}/systemd/idem-proxy@.service ${CMAKE_BINARY_DIR}/systemd/idem-sweep.service
              resources/systemd/idem-sweep.timer
        DESTINATION ${unit_dir})

install(FILES docs/install.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/idem)
install(FILES resources/examples/proxy-main.toml resources/examples/proxy-main.env resources/examples/sweep.env resources/examples/main-policy.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/idem/examples)

if(IDEM_BUILD_UI)
  install(FILES resources/desktop/idem-console.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES resources/icons/idem-console.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()

# Man pages from each program's --help (help2man), remade whenever a program changes. Not in
# sanitizer builds: nothing installs from them.
find_program(IDEM_HELP2MAN help2man)
if(IDEM_HELP2MAN AND NOT IDEM_SANITIZE)
  set(man_dir ${CMAKE_BINARY_DIR}/man/man1)
  set(man_stamp ${CMAKE_BINARY_DIR}/man/pages.stamp)
  set(console_args)
  set(console_dep)
  if(IDEM_BUILD_UI)
    set(console_args -DCONSOLE=$<TARGET_FILE:idem-console>)
    set(console_dep idem-console)
  endif()
  add_custom_command(
    OUTPUT ${man_stamp}
    COMMAND ${CMAKE_COMMAND} -DIDEMCTL=$<TARGET_FILE:idemctl> ${console_args} -DOUT=${man_dir}
            -DVERSION=${PROJECT_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/manpages.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${man_stamp}
    DEPENDS idemctl ${console_dep} ${PROJECT_SOURCE_DIR}/cmake/manpages.cmake
    COMMENT "Making the man pages (help2man)"
    VERBATIM)
  add_custom_target(idem_man ALL DEPENDS ${man_stamp})
  add_dependencies(idem_installed idem_man)
  install(DIRECTORY ${man_dir} DESTINATION ${CMAKE_INSTALL_MANDIR})
else()
  message(STATUS "help2man not found (or a sanitizer build): no man pages")
endif()

# The Debian package. CPack rather than debhelper: the build is CMake's already, so the package
# is the install above plus a control file, with no debian/ tree to keep in step.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME idem)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "HTTP Idempotency-Key enforcement on PostgreSQL: proxy, CLI and console")
set(CPACK_PACKAGE_DESCRIPTION
    "Idem enforces the Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header) in front of an \
unchanged HTTP service (idemctl proxy), keeps keys in PostgreSQL, and ships an operations console \
(idem-console) and systemd units (idem-proxy@.service, idem-sweep.timer).")
set(CPACK_PACKAGE_CONTACT "Idem maintainers <idem@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Libraries the programs link come from dpkg-shlibdeps; what they load at run time it cannot
# see is listed: adduser (postinst), Qt's platform plugins and SQLite driver (the console's
# case book).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
if(IDEM_BUILD_UI)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", qt6-qpa-plugins, libqt6sql6-sqlite")
  # The console remembers passwords through the Secret Service (qtkeychain).
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnome-keyring")
endif()
# A store to point it at, and what `idemctl demo` and `idemctl cluster` start.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "postgresql, postgresql-client")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/resources/debian/postinst
    ${PROJECT_SOURCE_DIR}/resources/debian/prerm ${PROJECT_SOURCE_DIR}/resources/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
