# Reliability tests (docs/testing.md): cancellation of a running call from another thread,
# one model.so run from 8 threads at once, and the feed queues under concurrent producers and
# consumers.  The model is tests/reliability/counter.hlo, compiled by hloc in a fixture.
set(REL ${CMAKE_SOURCE_DIR}/tests/reliability)
add_executable(feeds_stress_test ${REL}/feeds_stress_test.c)
target_link_libraries(feeds_stress_test PRIVATE hlort)
add_test(NAME reliability.feeds_stress COMMAND feeds_stress_test)
set_tests_properties(reliability.feeds_stress PROPERTIES TIMEOUT 120)
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
set(COUNTER_SO ${CMAKE_BINARY_DIR}/fixtures/counter.so)
add_test(NAME reliability.compile_counter
  COMMAND $<TARGET_FILE:hloc> ${REL}/counter.hlo -o ${COUNTER_SO} --entry-name counter)
set_tests_properties(reliability.compile_counter PROPERTIES FIXTURES_SETUP counter_so)
foreach(t cancel concurrency)
  add_executable(${t}_test ${REL}/${t}_test.c)
  target_link_libraries(${t}_test PRIVATE hlort ${CMAKE_DL_LIBS})
  add_test(NAME reliability.${t} COMMAND ${t}_test ${COUNTER_SO})
  set_tests_properties(reliability.${t} PROPERTIES FIXTURES_REQUIRED counter_so TIMEOUT 120)
endforeach()
# The compile cache under concurrent compiles and tampering (tools/cache.c).
add_test(NAME reliability.cache_safety COMMAND ${CMAKE_SOURCE_DIR}/tests/cache_safety.sh $<TARGET_FILE:hlorun>
  ${CMAKE_SOURCE_DIR}/testdata/npy)
set_tests_properties(reliability.cache_safety PROPERTIES TIMEOUT 300)
# Determinism: byte-identical .so files from two compiles; bit-identical results run after run
# and with 1, 2 and 4 threads (tests/determinism.sh).
add_test(NAME reliability.determinism COMMAND ${CMAKE_SOURCE_DIR}/tests/determinism.sh $<TARGET_FILE:hloc>
  $<TARGET_FILE:hlorun> ${CMAKE_SOURCE_DIR})
set_tests_properties(reliability.determinism PROPERTIES TIMEOUT 600)
# Copies of 8 MiB and more split over the pool (hlo_rt_copy): a dynamic-update-slice and a copy
# of 16 MiB + a row, on 1, 2 and 3 threads, against numpy (tests/big_copy.py).
add_test(NAME reliability.big_copy COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/big_copy.py $<TARGET_FILE:hlorun>)
set_tests_properties(reliability.big_copy PROPERTIES TIMEOUT 120)
