# dlc_add_model(<target> MODEL <file> [NAME <identifier>] [TARGET cpu])
#
# Compiles MODEL with dlc at build time (again whenever the model file or dlc changes) and
# defines <target>, a static library to link against; its include directory holds NAME.h
# (NAME defaults to <target>).
function(dlc_add_model target)
  cmake_parse_arguments(ARG "" "MODEL;NAME;TARGET" "" ${ARGN})
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "dlc_add_model(${target}): MODEL <file> is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dlc_add_model(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET cpu)
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/dlc_${target})
  set(library ${dir}/lib${ARG_NAME}.a)
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(
    OUTPUT ${library} ${dir}/${ARG_NAME}.h
    COMMAND ${CMAKE_COMMAND} -E env CXX=${CMAKE_CXX_COMPILER}
            $<TARGET_FILE:dlc::dlc> compile ${model} -o ${dir} --name ${ARG_NAME}
            --emit staticlib --target ${ARG_TARGET}
    DEPENDS ${model} $<TARGET_FILE:dlc::dlc>
    COMMENT "dlc: compiling ${ARG_MODEL}"
    VERBATIM)
  add_custom_target(${target}_dlc_build DEPENDS ${library})
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION ${library}
    INTERFACE_INCLUDE_DIRECTORIES ${dir}
    INTERFACE_LINK_LIBRARIES m)
  add_dependencies(${target} ${target}_dlc_build)
endfunction()
