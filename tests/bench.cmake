# Smoke test of the benchmark suite (bench/run.py, docs/performance.md): one small workload
# (rowsum at --quick size, one repetition, no OpenBLAS, no models) through every timer, so the
# harness cannot rot. Its timings are not checked: the suite is not part of CI's pass/fail;
# --fail-on-error fails only on a harness error, a failed timer or an out-of-tolerance output.
if(HLOC_HAVE_CODEGEN)
  add_test(NAME bench.smoke COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/bench/run.py --quick
    --only rowsum --reps 1 --no-models --no-openblas --fail-on-error
    --hlorun $<TARGET_FILE:hlorun> --out-dir ${CMAKE_BINARY_DIR}/bench-smoke)
  set_tests_properties(bench.smoke PROPERTIES
    ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache" TIMEOUT 300)
endif()
