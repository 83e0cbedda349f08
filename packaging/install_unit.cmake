# Run by `cmake --install` (and cpack): installs the systemd units with ExecStart and
# Documentation naming this install's prefix. Each source file names the prefix it is written
# for as it stands (~/.local, as %h/.local, for the user units: a user's own install; /usr/local
# for the system units); each line that is rewritten must be there (ExecStart in a .service,
# Documentation in every unit), so the units and this script cannot drift.
#   pybox_units: "<source file>|<folder under the prefix>|<prefix the source names>" per unit
#   pybox_bin_dir, pybox_doc_dir: set by packaging/CMakeLists.txt
foreach(entry IN LISTS pybox_units)
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 source)
  list(GET entry 1 unit_dir)
  list(GET entry 2 written_for)
  file(READ ${source} unit)
  set(pairs "Documentation=file://${written_for}/share/doc/pybox/|Documentation=file://${CMAKE_INSTALL_PREFIX}/${pybox_doc_dir}/")
  if(source MATCHES "\\.service$")
    list(APPEND pairs "ExecStart=${written_for}/bin/pyboxd|ExecStart=${CMAKE_INSTALL_PREFIX}/${pybox_bin_dir}/pyboxd")
  endif()
  foreach(pair IN LISTS pairs)
    string(REPLACE "|" ";" pair "${pair}")
    list(GET pair 0 from)
    list(GET pair 1 to)
    string(FIND "${unit}" "\n${from}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${source} has no line starting with ${from}")
    endif()
    string(REPLACE "\n${from}" "\n${to}" unit "${unit}")
  endforeach()
  get_filename_component(name ${source} NAME)
  set(target $ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${unit_dir}/${name})
  message(STATUS "Installing: ${target}")
  file(WRITE ${target} "${unit}")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES ${target})
endforeach()
