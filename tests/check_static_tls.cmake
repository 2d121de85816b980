# Fails when LIB's thread-local block is large while it is static TLS (the
# STATIC_TLS flag: initial-exec variables). A library loaded by dlopen
# (Python's import, a framework's plugin loader) takes such a block from a
# small surplus glibc reserves for all of them together (about 1.6 KiB):
# a large block makes the load fail ("cannot allocate memory in static TLS
# block") once other libraries took their share.
execute_process(COMMAND readelf -lW ${LIB} OUTPUT_VARIABLE segs RESULT_VARIABLE rc1)
execute_process(COMMAND readelf -dW ${LIB} OUTPUT_VARIABLE dyn RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIB}")
endif()
set(limit 512)
if(NOT dyn MATCHES "STATIC_TLS")
  message(STATUS "no static TLS in ${LIB}")
  return()
endif()
# TLS  Offset VirtAddr PhysAddr FileSiz MemSiz Flg Align
if(NOT segs MATCHES "TLS +0x[0-9a-fA-F]+ +0x[0-9a-fA-F]+ +0x[0-9a-fA-F]+ +0x[0-9a-fA-F]+ +0x([0-9a-fA-F]+)")
  message(FATAL_ERROR "STATIC_TLS set but no TLS segment found in ${LIB}")
endif()
math(EXPR bytes "0x${CMAKE_MATCH_1}")
if(bytes GREATER limit)
  message(FATAL_ERROR "${LIB}: static TLS block of ${bytes} bytes (limit ${limit}): move large thread_local "
                      "buffers to the heap (error.cc's message is a thread_local pointer for this reason)")
endif()
message(STATUS "static TLS block ${bytes} bytes (limit ${limit})")
