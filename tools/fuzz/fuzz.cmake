# mentat_fuzz_target(<name> SOURCES <files> LIBS <targets> [DICT <file>])
#
# One fuzz target, <module>/fuzz/<name>.cc defining LLVMFuzzerTestOneInput.
# Always: <name>_replay (the entry point + tools/fuzz/replay_main.cc) and a
# CTest entry fuzz_replay_<name> that replays the committed inputs,
# <module>/fuzz/regressions/<name>/ (crashes found and fixed) and
# <module>/fuzz/seeds/<name>/ (hand-picked seeds).
# With MENTAT_FUZZ=ON (clang): also the libFuzzer binary <name>, and a
# CTest entry fuzz_<name> that fuzzes it for MENTAT_FUZZ_SECONDS from the
# generated corpus (<build>/fuzz-corpus/<name>, see query/fuzz/seed_corpus.cc)
# plus the committed inputs.
set(MENTAT_FUZZ_SECONDS 20 CACHE STRING
    "Seconds each fuzz_<target> CTest entry fuzzes (MENTAT_FUZZ=ON)")
set(MENTAT_FUZZ_TOOLS_DIR ${CMAKE_CURRENT_LIST_DIR})

function(mentat_fuzz_target name)
  cmake_parse_arguments(F "" "DICT" "SOURCES;LIBS" ${ARGN})
  set(inputs)
  foreach(dir regressions/${name} seeds/${name})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir})
      list(APPEND inputs ${CMAKE_CURRENT_SOURCE_DIR}/${dir})
    endif()
  endforeach()

  add_executable(${name}_replay ${F_SOURCES}
                 ${MENTAT_FUZZ_TOOLS_DIR}/replay_main.cc)
  target_include_directories(${name}_replay PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name}_replay PRIVATE ${F_LIBS})
  if(inputs)
    add_test(NAME fuzz_replay_${name} COMMAND ${name}_replay ${inputs})
  endif()

  if(MENTAT_FUZZ)
    add_executable(${name} ${F_SOURCES})
    target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${name} PRIVATE ${F_LIBS})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    add_dependencies(${name} fuzz_corpus)
    set(corpus ${CMAKE_BINARY_DIR}/fuzz-corpus/${name})
    set(artifacts ${CMAKE_BINARY_DIR}/fuzz-artifacts/${name}/)
    set(dict)
    if(F_DICT)
      set(dict -dict=${F_DICT})
    endif()
    file(MAKE_DIRECTORY ${corpus} ${artifacts})
    add_test(NAME fuzz_${name}
             COMMAND ${name} -max_total_time=${MENTAT_FUZZ_SECONDS}
                     -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
                     -artifact_prefix=${artifacts} ${dict} ${corpus} ${inputs})
    set_tests_properties(fuzz_${name} PROPERTIES
      LABELS fuzz TIMEOUT 600 RUN_SERIAL TRUE)
  endif()
endfunction()
