# The arena: a model's second and later calls fault in no pages (tests/arena/arena_faults.c on
# tests/arena/temps.hlo), an embedder's arena is used, a short one refused.
if(HLOC_HAVE_CODEGEN)
  add_executable(arena_faults tests/arena/arena_faults.c)
  target_link_libraries(arena_faults PRIVATE hlort ${CMAKE_DL_LIBS})
  add_test(NAME arena.no_faults_after_first_call COMMAND bash -c
    [=["$1" "$2" -o "$3/arena-temps.so" && "$4" "$3/arena-temps.so"]=] _
    $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/tests/arena/temps.hlo ${CMAKE_BINARY_DIR} $<TARGET_FILE:arena_faults>)
endif()
# In-place elementwise results: which results take over a dying operand's buffer, which must
# not, and the arena of each golden reuse case (tests/arena/reuse.sh; values: golden.reuse_*).
if(HLOC_HAVE_CODEGEN)
  add_test(NAME arena.elementwise_reuse COMMAND ${CMAKE_SOURCE_DIR}/tests/arena/reuse.sh
    $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
endif()
# Loop-invariant weights (issue 17): a while loop that only reads 256 MiB of weights carried in
# its state uses the entry parameters' buffers (arena under 10% of the weights), and computes
# numpy's result (tests/generate_loop.py on testdata/models/generate_loop.hlo).
if(HLOC_HAVE_CODEGEN)
  add_test(NAME arena.generate_loop_weights_in_place
    COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/generate_loop.py $<TARGET_FILE:hloc> $<TARGET_FILE:hlorun>
            ${CMAKE_BINARY_DIR}/generate-loop)
endif()
# Donated parameters (input_output_alias, issue 17): hlorun --donate passes a donated
# parameter's buffer as its result; the results equal numpy's and the run without --donate,
# a result is written over its donor only after the donor's last read, and the mapped input
# files stay untouched (tests/donate.py on testdata/models/donated_step.hlo).
if(HLOC_HAVE_CODEGEN)
  add_test(NAME arena.donated_parameters_in_place
    COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/donate.py $<TARGET_FILE:hloc> $<TARGET_FILE:hlorun>
            ${CMAKE_BINARY_DIR}/donate)
endif()
# Constants are read where their literal lies (buffer_plan_constant_by_reference): a recurrent
# step whose loop body multiplies by a 4 MiB constant (testdata/models/rnn_constant_weights.hlo)
# keeps an arena under 1 MiB (the constant copied into it on every iteration before).
if(HLOC_HAVE_CODEGEN)
  add_test(NAME arena.constants_in_place COMMAND ${CMAKE_SOURCE_DIR}/tests/arena/arena_below.sh $<TARGET_FILE:hloc>
    ${CMAKE_SOURCE_DIR}/testdata/models/rnn_constant_weights.hlo ${CMAKE_BINARY_DIR}/rnn-constant-weights.so 1048576 "1 MiB, a quarter of the constant")
endif()
# A cheap elementwise producer read by two reductions (pairwise differences d = x_j - x_i of an
# N-body sum, [N, N, 3] f64) is computed in both reductions' loops, never materialized, and
# the sums of its 3 components are computed inline where they are read: no [N, N] or
# [N, N, 3] temporary is left (values: golden.pairwise_gravity_f64).
if(HLOC_HAVE_CODEGEN)
  add_test(NAME arena.pairwise_no_nbody_temporary COMMAND ${CMAKE_SOURCE_DIR}/tests/arena/arena_below.sh $<TARGET_FILE:hloc>
    ${CMAKE_SOURCE_DIR}/testdata/golden/pairwise_gravity_f64/model.hlo ${CMAKE_BINARY_DIR}/pairwise-gravity.so 294912 "the [192,192] f64 sums")
endif()
# |d|^2 of an N-body sum read by two groups (a sqrt and an rsqrt of it) is computed inline in
# both: the arena holds only the one [N, N] f32 of sqrt that a scalar sum reads (values:
# golden.pairwise_sum_distances_grad_f32).
if(HLOC_HAVE_CODEGEN)
  add_test(NAME arena.pairwise_inline_copies COMMAND ${CMAKE_SOURCE_DIR}/tests/arena/arena_below.sh $<TARGET_FILE:hloc>
    ${CMAKE_SOURCE_DIR}/testdata/golden/pairwise_sum_distances_grad_f32/model.hlo ${CMAKE_BINARY_DIR}/pairwise-sum-distances.so 524288 "two [256,256] f32 temporaries")
endif()
