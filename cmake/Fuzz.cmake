# The fuzz build (CMakePresets.json `fuzz`, run by scripts/test.sh): core and the training-log parsers
# compiled with libFuzzer's coverage and the address and undefined-behaviour sanitizers, and the fuzz
# targets with their smoke tests. Nothing else: no Qt, no GUI, so that CI spends its minutes fuzzing.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES Clang)
  message(FATAL_ERROR "PARALLAX_FUZZ needs clang (libFuzzer ships with it): use the `fuzz` preset")
endif()
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(tomlplusplus REQUIRED)
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
add_link_options(-fsanitize=address,undefined)
enable_testing()
add_subdirectory(presets)
add_subdirectory(core)
add_subdirectory(core/io/fuzz)
# The log parsers' target (remote/log_parse/fuzz) compiles the parser sources itself; they are plain C++.
file(GLOB PARALLAX_LOG_PARSE_SOURCES RELATIVE "${PROJECT_SOURCE_DIR}/remote" "${PROJECT_SOURCE_DIR}/remote/log_parse/*.cpp")
add_subdirectory(remote/log_parse/fuzz)
