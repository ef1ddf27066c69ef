# gc_add_model: compile a torch.export archive into a gc package at build time.
#
#   include(/path/to/gc/cmake/GcModel.cmake)
#   gc_add_model(mlp MODEL ${CMAKE_CURRENT_SOURCE_DIR}/mlp.pt2 FREEZE)
#   # ${mlp_PACKAGE} is the package; target `mlp` builds it.
#
#   gc_add_model(<name> MODEL <archive.pt2>
#                [FREEZE]                 inference: gc-opt --freeze
#                [TARGET <cpu>]           the CPU target, --target (default x86-64-v3)
#                [OUTPUT <file.gcpkg>]    default ${CMAKE_CURRENT_BINARY_DIR}/<name>.gcpkg
#                [EMIT_STAGES]            keep the stage files beside the package
#                [OPTIONS <arg>...])      more gc-compile options (--no-fuse, --linker=...)
#
# gc-compile writes a depfile, so the package is rebuilt when the archive or
# gc-compile changes, and only then. gc-compile is found as the gc-compile
# target when gc is part of the project, else through GC_COMPILE (a cache
# variable, searched on PATH and in GC_BIN_DIR).

include_guard(GLOBAL)

function(gc_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 GC "FREEZE;EMIT_STAGES" "MODEL;TARGET;OUTPUT" "OPTIONS")
  if(GC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "gc_add_model(${name}): unknown arguments ${GC_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT GC_MODEL)
    message(FATAL_ERROR "gc_add_model(${name}): MODEL <archive.pt2> is required")
  endif()
  cmake_path(ABSOLUTE_PATH GC_MODEL BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})

  if(TARGET gc-compile)
    set(compiler $<TARGET_FILE:gc-compile>)
    set(compiler_dependency gc-compile)
  else()
    find_program(GC_COMPILE gc-compile HINTS ${GC_BIN_DIR} DOC "gc's gc-compile")
    if(NOT GC_COMPILE)
      message(FATAL_ERROR "gc_add_model(${name}): gc-compile not found; set GC_COMPILE or "
                          "GC_BIN_DIR")
    endif()
    set(compiler ${GC_COMPILE})
    set(compiler_dependency ${GC_COMPILE})
  endif()

  if(NOT GC_OUTPUT)
    set(GC_OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${name}.gcpkg)
  endif()
  cmake_path(ABSOLUTE_PATH GC_OUTPUT BASE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  cmake_path(GET GC_OUTPUT PARENT_PATH output_dir)

  set(args ${GC_MODEL} -o ${GC_OUTPUT} -MF ${GC_OUTPUT}.d)
  if(GC_FREEZE)
    list(APPEND args --freeze)
  endif()
  if(GC_TARGET)
    list(APPEND args --target=${GC_TARGET})
  endif()
  if(GC_EMIT_STAGES)
    list(APPEND args --emit-stage=${output_dir})
  endif()
  list(APPEND args ${GC_OPTIONS})

  add_custom_command(
    OUTPUT ${GC_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${output_dir}
    COMMAND ${compiler} ${args}
    DEPENDS ${GC_MODEL} ${compiler_dependency}
    DEPFILE ${GC_OUTPUT}.d
    COMMENT "Compiling ${name} with gc"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${GC_OUTPUT})
  set(${name}_PACKAGE ${GC_OUTPUT} PARENT_SCOPE)
endfunction()
