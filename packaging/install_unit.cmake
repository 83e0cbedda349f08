# Run by `cmake --install` (and cpack): installs pyboxd.service with ExecStart and Documentation
# naming this install's prefix. The source file names ~/.local (the prefix of a user's own
# install); each line that is rewritten must be there, so the unit and this script cannot drift.
#   pybox_unit_source, pybox_unit_dir, pybox_bin_dir, pybox_doc_dir: set by packaging/CMakeLists.txt
file(READ ${pybox_unit_source} unit)
foreach(pair "ExecStart=%h/.local/bin/pyboxd|ExecStart=${CMAKE_INSTALL_PREFIX}/${pybox_bin_dir}/pyboxd"
             "Documentation=file://%h/.local/share/doc/pybox/|Documentation=file://${CMAKE_INSTALL_PREFIX}/${pybox_doc_dir}/")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 from)
  list(GET pair 1 to)
  string(FIND "${unit}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${pybox_unit_source} has no line starting with ${from}")
  endif()
  string(REPLACE "${from}" "${to}" unit "${unit}")
endforeach()
set(target $ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${pybox_unit_dir}/pyboxd.service)
message(STATUS "Installing: ${target}")
file(WRITE ${target} "${unit}")
list(APPEND CMAKE_INSTALL_MANIFEST_FILES ${target})
