# dlc_add_model(<target> MODEL <file> [NAME <identifier>] [TARGET cpu]
#               [TRAIN LOSS <loss> [LOSS_OUTPUT <output>] [OPTIMIZER <spec>]
#                [FREEZE <names>...] [TRAINABLE <names>...]])
#
# Compiles MODEL with dlc at build time (again whenever the model file or dlc changes) and
# defines <target>, a static library to link against; its include directory holds NAME.h
# (NAME defaults to <target>). TRAIN adds the training step (dlc compile --train; the other
# training arguments are its options).
function(dlc_add_model target)
  cmake_parse_arguments(ARG "TRAIN" "MODEL;NAME;TARGET;LOSS;LOSS_OUTPUT;OPTIMIZER"
                        "FREEZE;TRAINABLE" ${ARGN})
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
  set(train_options)
  if(ARG_TRAIN)
    if(NOT ARG_LOSS)
      message(FATAL_ERROR "dlc_add_model(${target}): TRAIN needs LOSS <loss>")
    endif()
    list(APPEND train_options --train --loss ${ARG_LOSS})
    foreach(option LOSS_OUTPUT OPTIMIZER)
      if(ARG_${option})
        string(TOLOWER ${option} flag)
        string(REPLACE "_" "-" flag ${flag})
        list(APPEND train_options --${flag} ${ARG_${option}})
      endif()
    endforeach()
    foreach(name ${ARG_FREEZE})
      list(APPEND train_options --freeze ${name})
    endforeach()
    foreach(name ${ARG_TRAINABLE})
      list(APPEND train_options --trainable ${name})
    endforeach()
  elseif(ARG_LOSS OR ARG_LOSS_OUTPUT OR ARG_OPTIMIZER OR ARG_FREEZE OR ARG_TRAINABLE)
    message(FATAL_ERROR "dlc_add_model(${target}): training arguments need TRAIN")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/dlc_${target})
  set(library ${dir}/lib${ARG_NAME}.a)
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(
    OUTPUT ${library} ${dir}/${ARG_NAME}.h
    COMMAND ${CMAKE_COMMAND} -E env CXX=${CMAKE_CXX_COMPILER}
            $<TARGET_FILE:dlc::dlc> compile ${model} -o ${dir} --name ${ARG_NAME}
            --emit staticlib --target ${ARG_TARGET} ${train_options}
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
