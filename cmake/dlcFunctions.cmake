# dlc_add_model(<target> MODEL <file> [NAME <identifier>] [TARGET cpu|cuda|cpu,cuda]
#               [TRAIN LOSS <loss> [LOSS_OUTPUT <output>] [OPTIMIZER <spec>]
#                [FREEZE <names>...] [TRAINABLE <names>...]])
#
# Compiles MODEL with dlc at build time (again whenever the model file or dlc changes) and
# defines <target>, a static library to link against; its include directory holds NAME.h
# (NAME defaults to <target>). TARGET cuda builds the model for NVIDIA GPUs (the CUDA
# toolkit is found with find_package(CUDAToolkit); <target> links the CUDA runtime, cuBLAS,
# cuDNN and NVRTC, as `dlc link-libraries` lists them); cpu,cuda puts both in the library, the CUDA one as NAME_cuda
# (NAME_cuda.h), with NAME_any.h, whose create picks the device. TRAIN adds the training step
# (dlc compile --train; the other training arguments are its options).
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
  set(headers ${dir}/${ARG_NAME}.h)
  set(tool_env CXX=${CMAKE_CXX_COMPILER})
  if(ARG_TARGET MATCHES "cuda")
    # dlc builds the CUDA model with the toolkit's nvcc.
    find_package(CUDAToolkit QUIET)
    if(NOT CUDAToolkit_FOUND)
      message(FATAL_ERROR "dlc_add_model(${target}): TARGET ${ARG_TARGET} needs the CUDA "
                          "toolkit (find_package(CUDAToolkit) found none)")
    endif()
    list(APPEND tool_env DLC_NVCC=${CUDAToolkit_NVCC_EXECUTABLE})
    if(ARG_TARGET MATCHES "cpu")
      list(APPEND headers ${dir}/${ARG_NAME}_cuda.h ${dir}/${ARG_NAME}_any.h)
    endif()
  endif()
  # The libraries the targets' runtimes call into are dlc's to say (dlc link-libraries); each
  # is found beside the CUDA toolkit's libraries or on the linker's path.
  get_target_property(dlc_executable dlc::dlc LOCATION)
  execute_process(COMMAND ${dlc_executable} link-libraries ${ARG_TARGET}
                  OUTPUT_VARIABLE libraries ERROR_VARIABLE why RESULT_VARIABLE failed
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(failed)
    message(FATAL_ERROR "dlc_add_model(${target}): ${why}")
  endif()
  string(REPLACE "\n" ";" libraries "${libraries}")
  set(link_libraries)
  foreach(library ${libraries})
    find_library(DLC_LIBRARY_${library} ${library} HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(NOT DLC_LIBRARY_${library})
      message(FATAL_ERROR "dlc_add_model(${target}): TARGET ${ARG_TARGET} needs lib${library} "
                          "(beside the CUDA toolkit's libraries or on the linker path)")
    endif()
    list(APPEND link_libraries ${DLC_LIBRARY_${library}})
  endforeach()
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(
    OUTPUT ${library} ${headers}
    COMMAND ${CMAKE_COMMAND} -E env ${tool_env}
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
    INTERFACE_LINK_LIBRARIES "${link_libraries}")
  add_dependencies(${target} ${target}_dlc_build)
endfunction()
