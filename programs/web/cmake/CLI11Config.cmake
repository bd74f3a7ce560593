# find_package(CLI11) in the wasm preset (CLI11_DIR points here): the system's headers alone,
# without /usr/include (header_only_package.cmake says why).
include(${CMAKE_CURRENT_LIST_DIR}/header_only_package.cmake)
pe_header_only_package(CLI11::CLI11 CLI App.hpp)
