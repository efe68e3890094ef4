# `cmake --install` into a scratch prefix, then checks what a user or a package gets: the executables (the CLI
# runs from there), the documentation, and for GUI builds a valid desktop entry whose program and icon are
# installed next to it.
#   cmake -DBUILD_DIR=build/dev -DPREFIX=/tmp/p -DGUI=ON -P tests/install/check_install.cmake
foreach(var BUILD_DIR PREFIX GUI)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_install.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}\n${err}")
endif()

function(expect_file path)
  if(NOT EXISTS "${PREFIX}/${path}")
    message(FATAL_ERROR "not installed: ${path}")
  endif()
endfunction()

expect_file(bin/parallax-cli)
expect_file(share/doc/parallax/README.md)
expect_file(share/doc/parallax/docs/scenario-format.md)
expect_file(share/doc/parallax/docs/cli.md)
expect_file(share/doc/parallax/docs/screenshots/planner-window.png)
file(GLOB_RECURSE scripts "${PREFIX}/share/doc/parallax/*.sh")
if(scripts)
  message(FATAL_ERROR "the documentation should not install the screenshot scripts: ${scripts}")
endif()

# The installed CLI runs on its own (no build-tree paths): its version and a prediction of a built-in preset.
execute_process(COMMAND "${PREFIX}/bin/parallax-cli" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^parallax-cli [0-9]")
  message(FATAL_ERROR "installed parallax-cli --version: exit ${rc}, output '${out}'")
endif()
execute_process(COMMAND "${PREFIX}/bin/parallax-cli" predict default RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "step time")
  message(FATAL_ERROR "installed parallax-cli predict default: exit ${rc}\n${out}\n${err}")
endif()

if(GUI)
  expect_file(bin/parallax)
  expect_file(share/icons/hicolor/scalable/apps/parallax.svg)
  set(desktop "${PREFIX}/share/applications/parallax.desktop")
  expect_file(share/applications/parallax.desktop)
  file(STRINGS "${desktop}" lines)
  list(GET lines 0 first)
  if(NOT first STREQUAL "[Desktop Entry]")
    message(FATAL_ERROR "${desktop}: the first line must be [Desktop Entry], is '${first}'")
  endif()
  foreach(required "Type=Application" "Name=Parallax" "Icon=parallax" "Exec=parallax %f" "Terminal=false")
    list(FIND lines "${required}" found)
    if(found EQUAL -1)
      message(FATAL_ERROR "${desktop}: no line '${required}'")
    endif()
  endforeach()
  foreach(line IN LISTS lines)
    if(line MATCHES "^Categories=" AND NOT line MATCHES ";$")
      message(FATAL_ERROR "${desktop}: Categories must end with ';': '${line}'")
    endif()
  endforeach()
  find_program(DESKTOP_FILE_VALIDATE desktop-file-validate)
  if(DESKTOP_FILE_VALIDATE)
    execute_process(COMMAND "${DESKTOP_FILE_VALIDATE}" "${desktop}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
      ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "desktop-file-validate ${desktop}:\n${out}\n${err}")
    endif()
  endif()
  # The installed GUI starts, renders offscreen and exits (the file argument of the desktop entry's %f).
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env QT_QPA_PLATFORM=offscreen
    "${PREFIX}/bin/parallax" --screenshot "${PREFIX}/shot.png" --size 800x600 default
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${PREFIX}/shot.png")
    message(FATAL_ERROR "installed parallax --screenshot: exit ${rc}\n${out}\n${err}")
  endif()
endif()
message(STATUS "installed tree in ${PREFIX} checked")
