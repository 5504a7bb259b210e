# Builds tests/cmake/consumer against dlc twice, from the build tree and from an install,
# runs the program, and checks that touching the model file makes the build recompile it.
#   cmake -DDLC_BUILD_DIR=.. -DSOURCE_DIR=.. -DWORK_DIR=.. -DMODEL=.. -P run_consumer.cmake
get_filename_component(repo ${SOURCE_DIR}/../.. ABSOLUTE)
set(example_main ${repo}/examples/digits/main.cpp)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
configure_file(${MODEL} ${WORK_DIR}/model.onnx COPYONLY)

function(check_step what)
  if(rc)
    message(FATAL_ERROR "${what} failed:\n${out}\n${err}")
  endif()
endfunction()

execute_process(COMMAND ${CMAKE_COMMAND} --install ${DLC_BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
check_step("cmake --install")

foreach(variant build-tree installed)
  if(variant STREQUAL "build-tree")
    set(dlc_dir ${DLC_BUILD_DIR})
  else()
    set(dlc_dir ${WORK_DIR}/prefix/lib/cmake/dlc)
  endif()
  set(bin ${WORK_DIR}/${variant})
  execute_process(COMMAND ${CMAKE_COMMAND} -G Ninja -S ${SOURCE_DIR}/consumer -B ${bin}
                          -Ddlc_DIR=${dlc_dir} -DDLC_TEST_MODEL=${WORK_DIR}/model.onnx
                          -DDLC_EXAMPLE_MAIN=${example_main}
                          -DDLC_TRAIN_MODEL=${repo}/examples/digits/digits_train.onnx
                          -DDLC_EXAMPLE_TRAIN_MAIN=${repo}/examples/digits/train.cpp
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_step("configure (${variant})")
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${bin}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_step("build (${variant})")
  execute_process(COMMAND ${bin}/digits_demo ${repo}/examples/digits/samples.npy
                          ${repo}/examples/digits/labels.npy
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_step("run (${variant})")
  if(NOT out MATCHES "accuracy: 16/16")
    message(FATAL_ERROR "unexpected output (${variant}):\n${out}")
  endif()
  if(EXISTS ${bin}/digits_gpu_demo)
    execute_process(COMMAND ${bin}/digits_gpu_demo ${repo}/examples/digits/samples.npy
                            ${repo}/examples/digits/labels.npy
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(out MATCHES "accuracy: 16/16")
      message("${variant}: the CUDA model ran on the GPU")
    elseif(rc EQUAL 1 AND err MATCHES "cannot create the model: a CUDA call failed \\(cuda")
      message("${variant}: the CUDA model built and linked; no usable GPU here: ${err}")
    else()
      message(FATAL_ERROR "CUDA program (${variant}): rc ${rc}\n${out}\n${err}")
    endif()
  endif()
  set(digits ${repo}/examples/digits)
  execute_process(COMMAND ${bin}/digits_trainer ${digits}/train_images.npy
                          ${digits}/train_labels.npy ${digits}/test_images.npy
                          ${digits}/test_labels.npy 3
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_step("train (${variant})")
  # Three epochs from scratch already classify most test digits.
  if(NOT out MATCHES "test accuracy: [0-9]+/448 = (9[0-9]|100)\\.")
    message(FATAL_ERROR "training did not reach 90% (${variant}):\n${out}")
  endif()
  message("${variant}: ok")
endforeach()

# A changed model must be recompiled by the next build.
execute_process(COMMAND ${CMAKE_COMMAND} -E touch ${WORK_DIR}/model.onnx)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/installed
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
check_step("rebuild after touching the model")
if(NOT out MATCHES "dlc: compiling")
  message(FATAL_ERROR "touching the model did not recompile it:\n${out}")
endif()
message("rebuild on model change: ok")
