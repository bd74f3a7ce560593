# The WebAssembly build's view of a header-only library that the system installed beside its C
# library (/usr/include/nlohmann, /usr/include/CLI, /usr/include/stb): only that library's
# folder, linked into this build's own include folder. Adding /usr/include itself would put
# glibc's headers before emscripten's, and the WebAssembly build would compile against the
# wrong C library.

# pe_system_header_folder(out folder header): links the system's `folder` (found by
# `folder/header`) into the build's include folder, which `out` names.
function(pe_system_header_folder out folder header)
  # NO_CMAKE_FIND_ROOT_PATH: emscripten's toolchain would look inside its own sysroot only.
  find_path(PE_SYSTEM_${folder}_PARENT ${folder}/${header}
            PATHS /usr/include /usr/local/include /opt/homebrew/include NO_CMAKE_FIND_ROOT_PATH)
  if(NOT PE_SYSTEM_${folder}_PARENT)
    message(FATAL_ERROR "wasm: no ${folder}/${header} in /usr/include, /usr/local/include or "
                        "/opt/homebrew/include (Debian/Ubuntu: scripts/install-deps.sh)")
  endif()
  set(include_dir ${CMAKE_BINARY_DIR}/header_only_packages)
  file(MAKE_DIRECTORY ${include_dir})
  if(NOT EXISTS ${include_dir}/${folder})
    file(CREATE_LINK ${PE_SYSTEM_${folder}_PARENT}/${folder} ${include_dir}/${folder} SYMBOLIC)
  endif()
  set(${out} ${include_dir} PARENT_SCOPE)
endfunction()

# pe_header_only_package(target folder header): the imported target `target` whose include
# folder holds the system's `folder` alone.
function(pe_header_only_package target folder header)
  if(TARGET ${target})
    return()
  endif()
  pe_system_header_folder(include_dir ${folder} ${header})
  add_library(${target} INTERFACE IMPORTED)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${include_dir})
endfunction()
