# The bundled example end to end: dlc compiles digits.onnx to libdigits.a, a tiny program links
# it and prints predictions and accuracy. Fails unless every sample is classified correctly
# (the model reaches 98% on the held-out set; the 16 bundled samples are all right in PyTorch).
#   cmake -DDLC=<dlc> -DSOURCE_DIR=<repo> -DBUILD_DIR=<dir> [-DVALGRIND=<valgrind>]
#         [-DMODE=train [-DEPOCHS=n]] -P run_example.cmake
# MODE=train instead compiles digits_train.onnx with --train (cross entropy, Adam) and trains
# it from scratch with examples/digits/train.cpp, then prints the test accuracy.
# With VALGRIND the program is built with -O1 -g and runs under memcheck: any memcheck error or
# definite/indirect leak fails too.
set(example ${SOURCE_DIR}/examples/digits)
file(REMOVE_RECURSE ${BUILD_DIR})
if(DEFINED ENV{CXX})
  set(cxx $ENV{CXX})
else()
  set(cxx c++)
endif()
if(MODE STREQUAL "train")
  if(NOT DEFINED EPOCHS)
    set(EPOCHS 30)
  endif()
  execute_process(COMMAND ${DLC} compile ${example}/digits_train.onnx -o ${BUILD_DIR}
                          --emit staticlib --train --loss cross_entropy
                          --optimizer adam:lr=0.003 RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "dlc compile --train failed")
  endif()
  execute_process(COMMAND ${cxx} -std=c++17 -O2 -Wall -Wextra -Werror -I${BUILD_DIR}
                          ${example}/train.cpp ${BUILD_DIR}/libdigits_train.a
                          -o ${BUILD_DIR}/digits_train RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building the training program failed")
  endif()
  execute_process(COMMAND ${BUILD_DIR}/digits_train ${example}/train_images.npy
                          ${example}/train_labels.npy ${example}/test_images.npy
                          ${example}/test_labels.npy ${EPOCHS} ${BUILD_DIR}/state.bin
                  RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "training failed with '${rc}'")
  endif()
  return()
endif()
execute_process(COMMAND ${DLC} compile ${example}/digits.onnx -o ${BUILD_DIR} --emit staticlib
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "dlc compile failed")
endif()
set(optimize -O2)
set(launcher)
if(DEFINED VALGRIND)
  if(NOT VALGRIND)
    message(FATAL_ERROR "valgrind not found (apt install valgrind; the test job of "
                        "scripts/quickstart.sh installs it)")
  endif()
  set(optimize -O1 -g)
  set(launcher ${VALGRIND} -q --error-exitcode=1 --leak-check=full
               --errors-for-leak-kinds=definite,indirect)
endif()
execute_process(COMMAND ${cxx} -std=c++17 ${optimize} -Wall -Wextra -Werror -I${BUILD_DIR}
                        ${example}/main.cpp ${BUILD_DIR}/libdigits.a -o ${BUILD_DIR}/digits_demo
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the example program failed")
endif()
execute_process(COMMAND ${launcher} ${BUILD_DIR}/digits_demo ${example}/samples.npy
                        ${example}/labels.npy
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(rc)
  message(FATAL_ERROR "the example exited with '${rc}'")
endif()
if(NOT out MATCHES "accuracy: 16/16")
  message(FATAL_ERROR "the example did not classify every bundled sample correctly")
endif()
