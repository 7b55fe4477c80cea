# The project's installed libraries, each the same way.
#
# rq_shared_library(TARGET NAME MAP): lib<NAME>.so.<major>, exporting what the
# version script MAP lists (its version node), with the install RUNPATH
# $ORIGIN: the project's other libraries it needs are installed beside it,
# and a program's own RUNPATH does not serve its libraries' dependencies.
function(rq_shared_library target name map)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${name}
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    INSTALL_RPATH "\$ORIGIN" LINK_DEPENDS ${map})
  target_link_options(${target} PRIVATE -Wl,--version-script=${map})
endfunction()

# rq_install_package(NAME PC_IN CONFIG_IN TARGET...): installs the TARGETs
# (export set NAMETargets, namespace NAME::), the CMake package NAME from
# CONFIG_IN (compatible within a major version) and NAME.pc from PC_IN.
function(rq_install_package name pc_in config_in)
  set(dir ${CMAKE_INSTALL_LIBDIR}/cmake/${name})
  set(bin ${CMAKE_CURRENT_BINARY_DIR})
  install(TARGETS ${ARGN} EXPORT ${name}Targets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ${name}Targets NAMESPACE ${name}:: DESTINATION ${dir})
  configure_package_config_file(${config_in} ${bin}/${name}Config.cmake INSTALL_DESTINATION ${dir})
  write_basic_package_version_file(${bin}/${name}ConfigVersion.cmake
                                   COMPATIBILITY SameMajorVersion)
  install(FILES ${bin}/${name}Config.cmake ${bin}/${name}ConfigVersion.cmake DESTINATION ${dir})
  configure_file(${pc_in} ${bin}/${name}.pc @ONLY)
  install(FILES ${bin}/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

# rq_package_targets(PKG STATIC SHARED INCLUDE_DIR): the public include
# directory of both libraries, and their package names PKG::PKG (SHARED)
# and PKG::PKG_static (STATIC), as exported and as aliases in the build.
function(rq_package_targets pkg static shared include_dir)
  foreach(t ${static} ${shared})
    target_include_directories(${t} PUBLIC $<BUILD_INTERFACE:${include_dir}>
                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endforeach()
  set_target_properties(${static} PROPERTIES EXPORT_NAME ${pkg}_static)
  set_target_properties(${shared} PROPERTIES EXPORT_NAME ${pkg})
  add_library(${pkg}::${pkg} ALIAS ${shared})
  add_library(${pkg}::${pkg}_static ALIAS ${static})
endfunction()
