# mentat_check_sources_listed(<module dir> <listed files...>)
#
# Fails the configure when a .cc file under <module dir> (subfolders
# included) is in none of the module's source lists. The lists are
# explicit (see the top-level CMakeLists.txt); this keeps a file that was
# added but not listed from being silently left out of the build, and a
# test file from silently never running. Files are named relative to
# <module dir>, as the lists name them. Subfolders with their own
# CMakeLists.txt (fuzz/, python/) and tools/ list their own files.
function(mentat_check_sources_listed dir)
  file(GLOB_RECURSE present RELATIVE ${dir} ${dir}/*.cc)
  list(FILTER present EXCLUDE REGEX "^(fuzz|python|tools)/")
  set(listed ${ARGN})
  set(missing)
  foreach(file ${present})
    if(NOT file IN_LIST listed)
      list(APPEND missing ${file})
    endif()
  endforeach()
  if(missing)
    list(JOIN missing "\n  " text)
    message(FATAL_ERROR
            "Files of ${dir} in no source list of its CMakeLists.txt:\n"
            "  ${text}\nAdd each to its library's, executable's or test's "
            "list.")
  endif()
endfunction()
