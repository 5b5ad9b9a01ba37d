# Every real model in ../shared/models compiles and runs to finite outputs with random inputs,
# or stops with a clear error naming an op that a later milestone adds (tests/models_run.py).
if(HLOC_HAVE_CODEGEN)
  file(GLOB MODELS CONFIGURE_DEPENDS ${HLOC_SHARED_DIR}/models/*.hlo)
  foreach(m ${MODELS})
    get_filename_component(name ${m} NAME_WE)
    add_test(NAME models.run.${name} COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/models_run.py
      --hlorun $<TARGET_FILE:hlorun> --timeout 900 ${m})
    set_tests_properties(models.run.${name} PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache"
      TIMEOUT 1000)
  endforeach()
endif()
