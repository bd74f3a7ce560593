# find_package(nlohmann_json) in the wasm preset (nlohmann_json_DIR points here): the system's
# headers alone, without /usr/include (header_only_package.cmake says why).
include(${CMAKE_CURRENT_LIST_DIR}/header_only_package.cmake)
pe_header_only_package(nlohmann_json::nlohmann_json nlohmann json.hpp)
