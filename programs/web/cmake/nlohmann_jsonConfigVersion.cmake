# Any version: the system's package is the one the native build checked (cmake/Dependencies.cmake).
set(PACKAGE_VERSION 3)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
