# The waist holds: src/cpu (a backend like any plugin) includes nothing from
# src/core; the GPU modules (src/opencl, src/cuda) include nothing of src/
# outside their own folder but src/math (the coefficient tables and float8
# format descriptions every backend shares: data, no code) and src/gpu (the
# kernel generator, op rows and disk cache the two GPU modules share), and
# src/gpu nothing but src/math; src/core names no backend (no backend header,
# no backend namespace). Run as: cmake -DSRC=<src dir> -P check_layering.cmake
cmake_policy(SET CMP0057 NEW)
set(bad "")
# The files of src/<dir>; their lines matching regex go to `bad`; the count to n_<dir>.
function(forbid dir regex)
  file(GLOB_RECURSE files ${SRC}/${dir}/*.cc ${SRC}/${dir}/*.h ${SRC}/${dir}/*.cu ${SRC}/${dir}/*.cuh)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "${regex}")
    if(lines)
      list(APPEND bad "${f}: ${lines}")
    endif()
  endforeach()
  list(LENGTH files n)
  set(n_${dir} ${n} PARENT_SCOPE)
  set(bad "${bad}" PARENT_SCOPE)
endfunction()
# The files of src/<dir> may include "<folder>/..." only for the folders in
# ARGN (CMake regexes have no negative lookahead: each include is checked).
function(allow_only dir)
  file(GLOB_RECURSE files ${SRC}/${dir}/*.cc ${SRC}/${dir}/*.h ${SRC}/${dir}/*.cu ${SRC}/${dir}/*.cuh)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "#include \"[a-z_]+/")
    foreach(line ${lines})
      string(REGEX MATCH "#include \"([a-z_]+)/" m "${line}")
      set(allowed ${ARGN})
      if(NOT CMAKE_MATCH_1 IN_LIST allowed)
        list(APPEND bad "${f}: ${line}")
      endif()
    endforeach()
  endforeach()
  list(LENGTH files n)
  set(n_${dir} ${n} PARENT_SCOPE)
  set(bad "${bad}" PARENT_SCOPE)
endfunction()
forbid(cpu "#include \"core/")
allow_only(opencl math gpu)
allow_only(cuda math gpu)
allow_only(gpu math)
forbid(core "#include \"(cpu|cuda|opencl|gpu)/|cpu::|cuda::|opencl::|ctgpu::|ct_cpu_|CTCpuStream")
if(bad)
  string(REPLACE ";" "\n" msg "${bad}")
  message(FATAL_ERROR "layering: a backend includes core, or core names a backend:\n${msg}")
endif()
message(STATUS "layering: ${n_cpu} files of src/cpu include nothing from src/core; ${n_opencl} files of src/opencl "
               "and ${n_cuda} of src/cuda nothing of src/ outside them but src/math and src/gpu; ${n_gpu} files of "
               "src/gpu nothing but src/math; ${n_core} files of src/core name no backend")
