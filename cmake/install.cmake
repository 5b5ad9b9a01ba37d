# Installation: hloc, hlorun, libhlort.a, the public headers, a CMake package
# (find_package(hloc) -> hloc::hlort) and a pkg-config file (hlort.pc).
include(CMakePackageConfigHelpers)
install(EXPORT hlocTargets NAMESPACE hloc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hloc)
file(WRITE ${CMAKE_BINARY_DIR}/hlocConfig.cmake.in [=[
@PACKAGE_INIT@
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_package(PkgConfig REQUIRED)
pkg_check_modules(FFI REQUIRED IMPORTED_TARGET libffi)
include("${CMAKE_CURRENT_LIST_DIR}/hlocTargets.cmake")
]=])
configure_package_config_file(${CMAKE_BINARY_DIR}/hlocConfig.cmake.in ${CMAKE_BINARY_DIR}/hlocConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hloc)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/hlocConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/hlocConfig.cmake ${CMAKE_BINARY_DIR}/hlocConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hloc)
# A relocatable .pc file: the prefix is found relative to the file itself.
file(RELATIVE_PATH HLOC_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
file(WRITE ${CMAKE_BINARY_DIR}/hlort.pc.in [=[
prefix=${pcfiledir}/@HLOC_PC_TO_PREFIX@
libdir=${prefix}/@CMAKE_INSTALL_LIBDIR@
includedir=${prefix}/@CMAKE_INSTALL_INCLUDEDIR@

Name: hlort
Description: runtime of models compiled by hloc (status, context, feeds, custom calls)
Version: @PROJECT_VERSION@
Requires.private: libffi
Cflags: -I${includedir}
Libs: -L${libdir} -lhlort @HLOC_PC_DNNL@-lffi -lm -lpthread -ldl
]=])
# With oneDNN (runtime/src/kernels/rt_dnnl.c), programs that link libhlort.a's convolutions need it too.
set(HLOC_PC_DNNL "")
if(HLOC_HAVE_DNNL)
  set(HLOC_PC_DNNL "-ldnnl -lgomp ")
endif()
configure_file(${CMAKE_BINARY_DIR}/hlort.pc.in ${CMAKE_BINARY_DIR}/hlort.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/hlort.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
