# The waist holds: src/cpu (a backend like any plugin) includes nothing from
# src/core, src/opencl (a module) includes nothing of src/ outside its own
# folder but src/math (the coefficient tables and float8 format descriptions
# every backend shares: data, no code), and src/core names no backend (no backend header, no backend
# namespace). Run as: cmake -DSRC=<src dir> -P check_layering.cmake
set(bad "")
# The files of src/<dir>; their lines matching regex go to `bad`; the count to n_<dir>.
function(forbid dir regex)
  file(GLOB_RECURSE files ${SRC}/${dir}/*.cc ${SRC}/${dir}/*.h)
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
forbid(cpu "#include \"core/")
# any folder name but "math" (CMake regexes have no negative lookahead)
forbid(opencl "#include \"([a-ln-z_][a-z_]*|m[b-z_][a-z_]*|ma[a-su-z_][a-z_]*|mat[a-gi-z_][a-z_]*|math[a-z_]+)/")
forbid(core "#include \"(cpu|cuda|opencl)/|cpu::|cuda::|opencl::|ct_cpu_|CTCpuStream")
if(bad)
  string(REPLACE ";" "\n" msg "${bad}")
  message(FATAL_ERROR "layering: a backend includes core, or core names a backend:\n${msg}")
endif()
message(STATUS "layering: ${n_cpu} files of src/cpu include nothing from src/core; ${n_opencl} files of src/opencl "
               "nothing of src/ outside it but src/math; ${n_core} files of src/core name no backend")
