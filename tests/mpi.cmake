# hlorun's multi-process mode (docs/distributed.md), one replica per MPI rank on this machine:
#   mpi.runtime.CASE  every multi-replica case of testdata/runtime/ with a CASE.expected, run again
#                     under `mpirun -np N` (N: the module's replica_count, or its --replicas) and
#                     checked against the same hand-written expected output (tests/mpi_case.sh);
#   mpi.err.*         the failure behaviour: a rank failing before or during the run, a collective
#                     or recv timeout, a send/recv shape mismatch (tests/mpi_expect.sh);
#   mpi.train_step    a data-parallel SGD step on 4 ranks against numpy on the whole batch;
#   mpi.identical.*   threads and processes give byte-identical results on every replica;
#   mpi.native.*, mpi.native_polled.*, mpi.exact_order.*, mpi.threads.native.*  the native MPI
#                     collectives against numpy (testdata/mpi/native), with MPI's order (blocking
#                     calls, or polled ones under --collective-timeout) and --collective-order exact.
# Without MPI (no libhlort_mpi.so, or no mpirun) every one of them reports itself skipped.
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
set(MPI_TEST_ENV "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")

file(GLOB MPI_RUNTIME_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/runtime/*.hlo)
foreach(m ${MPI_RUNTIME_CASES})
  get_filename_component(name ${m} NAME_WE)
  get_filename_component(dir ${m} DIRECTORY)
  if(NOT EXISTS ${dir}/${name}.expected)
    continue()
  endif()
  file(READ ${m} text)
  set(np 0)
  if(text MATCHES "replica_count=([0-9]+)")
    set(np ${CMAKE_MATCH_1})
  elseif(EXISTS ${dir}/${name}.args)
    file(READ ${dir}/${name}.args args)
    if(args MATCHES "--replicas\n([0-9]+)")
      set(np ${CMAKE_MATCH_1})
    endif()
  endif()
  if(np LESS 2)
    continue()
  endif()
  add_test(NAME mpi.runtime.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_case.sh $<TARGET_FILE:hlorun> ${np}
    ${dir}/${name} $<TARGET_FILE:runtime_cc_lib>)
  set_tests_properties(mpi.runtime.${name} PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" SKIP_RETURN_CODE 77
    TIMEOUT 150 PROCESSORS 2)
endforeach()

set(MPI_DIR ${CMAKE_SOURCE_DIR}/testdata/mpi)
function(hloc_mpi_error name np rc line)
  add_test(NAME mpi.err.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_expect.sh $<TARGET_FILE:hlorun> ${np} ${rc}
    ${line} ${ARGN})
  set_tests_properties(mpi.err.${name} PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" SKIP_RETURN_CODE 77
    TIMEOUT 90 PROCESSORS 2)
endfunction()
# A custom call fails on rank 1 while rank 0 waits in the all-reduce: both stop (MPI_Abort).
hloc_mpi_error(mid_run 2 1
  "hlorun: rank 1 of 2 failed, stopping every rank: r: custom call 'cc_check_positive' failed: negative input"
  ${MPI_DIR}/fail_mid_run.hlo --custom-call-lib $<TARGET_FILE:runtime_cc_lib>
  "--input=r0:f32[4] {1, 2, 3, 4}" "--input=r1:f32[4] {1, -2, 3, 4}")
# Rank 1's input cannot be read: every rank says so before anything runs, with rank 1's status.
hloc_mpi_error(bad_input 2 2
  "hlorun: rank 1 of 2: ${MPI_DIR}/no_such_input.npy: cannot open: No such file or directory"
  ${MPI_DIR}/fail_mid_run.hlo --custom-call-lib $<TARGET_FILE:runtime_cc_lib>
  "--input=r0:f32[4] {1, 2, 3, 4}" --input=r1:${MPI_DIR}/no_such_input.npy)
# No library holds the custom call: every rank fails to load it; the lowest rank is named.
hloc_mpi_error(missing_custom_call 2 2
  "hlorun: rank 0 of 2: loading fail_mid_run: custom-call target 'cc_check_positive' not found (looked in 0 registered targets, 0 custom-call libraries and the process)"
  ${MPI_DIR}/fail_mid_run.hlo "--input=f32[4] {1, 2, 3, 4}")
# Rank 1 counts for ever before the all-reduce: rank 0 gives up after 1 s and stops both.
hloc_mpi_error(collective_timeout 2 1
  "hlorun: rank 0 of 2 failed, stopping every rank: waited more than 1 s for the other ranks in a collective (--collective-timeout): a rank stopped or is far behind"
  ${MPI_DIR}/stall.hlo --collective-timeout 1 "--input=r0:s64[] 0" "--input=r1:s64[] 100000000000000")
# The same with the ordered gather path (--collective-order exact): the same wait, the same words.
hloc_mpi_error(collective_timeout_exact_order 2 1
  "hlorun: rank 0 of 2 failed, stopping every rank: waited more than 1 s for the other ranks in a collective (--collective-timeout): a rank stopped or is far behind"
  ${MPI_DIR}/stall.hlo --collective-timeout 1 --collective-order exact "--input=r0:s64[] 0"
  "--input=r1:s64[] 100000000000000")
# A reducer computation failing inside MPI's reduction (the user-defined MPI_Op): the run stops
# with its message.  Which ranks apply the op is MPI's choice (for 2 ranks Open MPI's blocking
# all-reduce has both do it), so each rank that failed may say so: every hlorun line must be
# one rank's failure with the reducer's message.
if(HLOC_HAVE_MPI)
  add_test(NAME mpi.err.reducer_fails COMMAND bash -c [=[
    command -v mpirun >/dev/null || { echo "skipped: mpirun not found"; exit 77; }
    err=$(HLORUN_MPI_BIN=$1 HLORUN_MPI_NP=2 HLORUN_MPI_TIMEOUT=60 "$2/tests/mpi_hlorun.sh" \
      "$2/testdata/mpi/reducer_fails.hlo" --custom-call-lib "$3" "--input=r0:f32[4] {1, 2, 3, 4}" \
      "--input=r1:f32[4] {1, -5, 3, 4}" 2>&1 >/dev/null); rc=$?
    want="^hlorun: rank [01] of 2 failed, stopping every rank: the reducer computation, in MPI_Allreduce: c: custom call 'cc_check_positive' failed: negative input$"
    lines=$(grep '^hlorun:' <<<"$err")
    if [ "$rc" -ne 1 ] || [ -z "$lines" ] || grep -v -E "$want" <<<"$lines"; then
      echo "FAIL: exit status $rc; standard error:"; echo "$err"; exit 1
    fi
    echo ok]=] _ $<TARGET_FILE:hlorun> ${CMAKE_SOURCE_DIR} $<TARGET_FILE:runtime_cc_lib>)
  set_tests_properties(mpi.err.reducer_fails PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" SKIP_RETURN_CODE 77
    TIMEOUT 90 PROCESSORS 2)
endif()
# Send/recv between ranks: a recv of another shape than was sent, and a recv nobody sends to,
# bounded by --collective-timeout.
hloc_mpi_error(sendrecv_shape_mismatch 2 1
  "hlorun: rank 1 of 2 failed, stopping every rank: recv 'rv' (channel 7): replica 0 sent f32[4] (16 bytes) but this recv wants f32[3] (12 bytes)"
  ${CMAKE_SOURCE_DIR}/testdata/runtime/sendrecv_shape_mismatch.hlo)
hloc_mpi_error(recv_timeout 2 1
  "hlorun: rank 1 of 2 failed, stopping every rank: recv 'rv' (channel 2): waited more than 1 s for replica 0 to send (--collective-timeout)"
  ${CMAKE_SOURCE_DIR}/testdata/runtime/sendrecv_unmatched.hlo --collective-timeout 1)
# --replicas that disagrees with the number of ranks.
hloc_mpi_error(replicas_mismatch 2 2
  "hlorun: rank 0 of 2: --replicas 3, but mpirun started 2 ranks (one replica per rank)"
  ${CMAKE_SOURCE_DIR}/testdata/runtime/coll_all_reduce.hlo --replicas 3)

# hlorun --mpi when the backend cannot be had: a build without MPI says it needs MPI; a build
# with it names the library it could not load.
if(HLOC_HAVE_MPI)
  add_test(NAME mpi.cli.backend_missing COMMAND env HLORUN_MPI_LIB=/nonexistent/libhlort_mpi.so
    ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
    "^hlorun: multi-process mode \\(--mpi, or running under mpirun\\): cannot load /nonexistent/libhlort_mpi.so: "
    $<TARGET_FILE:hlorun> --mpi ${CMAKE_SOURCE_DIR}/testdata/runtime/coll_all_reduce.hlo)
else()
  add_test(NAME mpi.cli.built_without_mpi COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
    "^hlorun: multi-process mode \\(--mpi, or running under mpirun\\) needs MPI, and this hlorun was built without it"
    $<TARGET_FILE:hlorun> --mpi ${CMAKE_SOURCE_DIR}/testdata/runtime/coll_all_reduce.hlo)
endif()

# The data-parallel training step (testdata/mpi/make_train_step.py): 4 ranks with a quarter of
# the batch each, the same on 4 threads, and one replica on the whole batch; all three against
# numpy's step on the whole batch (--expected, rank 0 / replica 0).
add_test(NAME mpi.train_step COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_case.sh $<TARGET_FILE:hlorun> 4
  ${MPI_DIR}/train_step $<TARGET_FILE:runtime_cc_lib>)
set_tests_properties(mpi.train_step PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 150
  PROCESSORS 2)
# Threads and processes give identical bits: every replica's every result, both ways, with
# --collective-order exact (MPI's own f32 sum over 4 ranks may associate otherwise).
add_test(NAME mpi.identical.train_step COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_identical.sh $<TARGET_FILE:hlorun>
  ${MPI_DIR}/train_step 4 --collective-order exact)
set_tests_properties(mpi.identical.train_step PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" SKIP_RETURN_CODE 77
  TIMEOUT 150 PROCESSORS 2)
foreach(name train_step train_step_single)
  add_test(NAME mpi.threads.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/runtime_case.sh $<TARGET_FILE:hlorun>
    ${MPI_DIR}/${name} $<TARGET_FILE:runtime_cc_lib>)
  set_tests_properties(mpi.threads.${name} PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" TIMEOUT 120)
endforeach()

# The native MPI collectives (testdata/mpi/native/make_native.py, numpy's expected leaves of
# every replica, tests/mpi_npy_case.sh): every case on threads, on MPI ranks with MPI's own
# collectives (bit for bit: integer-valued data, but for order_np4, whose random f32 sum MPI
# may associate otherwise: close), and on MPI ranks with --collective-order exact (bit for bit,
# order_np4 included: the sum in replica order, as numpy folds it).
set(NATIVE_DIR ${MPI_DIR}/native)
foreach(case reduce user move order)
  foreach(np 2 4)
    set(c ${case}_np${np})
    set(check exact)
    if(c STREQUAL "order_np4")
      set(check close)
    endif()
    add_test(NAME mpi.threads.native.${c} COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_npy_case.sh $<TARGET_FILE:hlorun>
      ${NATIVE_DIR}/${c} ${np} threads exact)
    add_test(NAME mpi.native.${c} COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_npy_case.sh $<TARGET_FILE:hlorun>
      ${NATIVE_DIR}/${c} ${np} mpi ${check})
    add_test(NAME mpi.exact_order.${c} COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_npy_case.sh $<TARGET_FILE:hlorun>
      ${NATIVE_DIR}/${c} ${np} mpi exact --collective-order exact)
    set_tests_properties(mpi.threads.native.${c} PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" TIMEOUT 120)
    set_tests_properties(mpi.native.${c} mpi.exact_order.${c} PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}"
      SKIP_RETURN_CODE 77 TIMEOUT 150 PROCESSORS 2)
  endforeach()
endforeach()
# The same 4-rank cases with --collective-timeout: MPI's nonblocking collectives, polled (the
# user-defined op inside MPI_Iallreduce, strided datatypes in MPI_Iallgather / MPI_Ialltoall).
foreach(c reduce_np4 user_np4 move_np4)
  add_test(NAME mpi.native_polled.${c} COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi_npy_case.sh $<TARGET_FILE:hlorun>
    ${NATIVE_DIR}/${c} 4 mpi exact --collective-timeout 60)
  set_tests_properties(mpi.native_polled.${c} PROPERTIES ENVIRONMENT "${MPI_TEST_ENV}" SKIP_RETURN_CODE 77
    TIMEOUT 150 PROCESSORS 2)
endforeach()
add_test(NAME mpi.cli.collective_order_bad COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 2
  "^hlorun: --collective-order needs 'native' or 'exact': fast"
  $<TARGET_FILE:hlorun> --collective-order fast ${CMAKE_SOURCE_DIR}/testdata/runtime/coll_all_reduce.hlo)

# bench/mpi_allreduce.c at small sizes on 2 ranks: it fails when the runtime's all-reduce and
# MPI_Allreduce disagree (its timings are not checked).
if(TARGET mpi_allreduce_bench)
  add_test(NAME mpi.bench_smoke COMMAND bash -c [=[
    command -v mpirun >/dev/null || { echo "skipped: mpirun not found"; exit 77; }
    timeout 60 mpirun --oversubscribe --allow-run-as-root -np 2 "$1" --reps 1 0.01 0.25]=] _
    $<TARGET_FILE:mpi_allreduce_bench>)
  set_tests_properties(mpi.bench_smoke PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 90 PROCESSORS 2)
endif()
