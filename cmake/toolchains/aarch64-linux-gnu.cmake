# Cross-compiling for arm64 Linux with Debian's g++-aarch64-linux-gnu; the tests run under
# qemu-user (qemu-aarch64 with the arm64 C library of libc6-arm64-cross), so that an x86-64
# machine checks the NEON path:
#
#   cmake --preset arm64-cross && cmake --build --preset arm64-cross && ctest --preset arm64-cross
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
# Libraries and programs of the target from its own root; the header-only packages (xsimd,
# xtensor, xtl, CLI11, nlohmann_json: the same files for every architecture) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Debian puts the CMake files of xsimd and xtensor in the host's multiarch folder
# (/usr/lib/x86_64-linux-gnu/cmake), which a search for arm64 does not look in.
list(APPEND CMAKE_PREFIX_PATH /usr/lib/${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu/cmake)
