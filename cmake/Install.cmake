# cmake --install BUILD [--prefix PREFIX]: the executables, the desktop entry and its icon (GUI builds), the
# README and docs/ (what Help > Documentation opens). GNUInstallDirs and PARALLAX_INSTALL_DOCDIR are set in the
# top-level CMakeLists.txt; tests/install/check_install.cmake checks an installed tree.
install(TARGETS parallax-cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES README.md DESTINATION "${PARALLAX_INSTALL_DOCDIR}")
install(DIRECTORY docs/ DESTINATION "${PARALLAX_INSTALL_DOCDIR}/docs" PATTERN "*.sh" EXCLUDE)
if(PARALLAX_BUILD_GUI)
  install(TARGETS parallax RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  install(FILES resources/parallax.desktop DESTINATION "${CMAKE_INSTALL_DATADIR}/applications")
  install(FILES resources/icons/parallax.svg DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps")
endif()
