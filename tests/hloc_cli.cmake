# hloc's command line: exit codes and messages (DESIGN.md "Command line").
set(EXPECT ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh)
set(OK_HLO ${CMAKE_SOURCE_DIR}/testdata/parse/ok/control_flow.hlo)
add_test(NAME cli.hloc.help COMMAND ${EXPECT} 0 "usage: hloc MODEL.hlo" $<TARGET_FILE:hloc> --help)
add_test(NAME cli.hloc.version COMMAND ${EXPECT} 0 "^hloc [0-9]" $<TARGET_FILE:hloc> --version)
add_test(NAME cli.hloc.unknown_flag COMMAND ${EXPECT} 2 "unknown option: --frobnicate" $<TARGET_FILE:hloc> --frobnicate ${OK_HLO})
add_test(NAME cli.hloc.no_input COMMAND ${EXPECT} 2 "no input file" $<TARGET_FILE:hloc> --emit=none)
add_test(NAME cli.hloc.missing_file COMMAND ${EXPECT} 2 "no_such.hlo: cannot open" $<TARGET_FILE:hloc> no_such.hlo --emit=none)
add_test(NAME cli.hloc.directory_input COMMAND ${EXPECT} 2 "testdata: is a directory" $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata --emit=none)
add_test(NAME cli.hloc.bad_dump_dir COMMAND ${EXPECT} 1 "--dump-dir /proc/no_such_dir: cannot create" $<TARGET_FILE:hloc> ${OK_HLO} --emit=none --dump-dir /proc/no_such_dir)
add_test(NAME cli.hloc.bad_emit COMMAND ${EXPECT} 2 "unknown --emit kind: wat" $<TARGET_FILE:hloc> ${OK_HLO} --emit=wat)
add_test(NAME cli.hloc.bad_suffix COMMAND ${EXPECT} 2 "cannot tell what to write" $<TARGET_FILE:hloc> ${OK_HLO} -o out.xyz)
add_test(NAME cli.hloc.verify_ok COMMAND ${EXPECT} 0 "^$|.*" $<TARGET_FILE:hloc> ${OK_HLO} --emit=none)
add_test(NAME cli.hloc.verify_error COMMAND ${EXPECT} 2 "dot_contracting_sizes.hlo:6:8: error: %dot.4: lhs contracting dimension 1 has size 3"
  $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/verify/err/dot_contracting_sizes.hlo --emit=none)
add_test(NAME cli.hloc.emit_hlo_stdout COMMAND ${EXPECT} 0 "^HloModule control_flow" $<TARGET_FILE:hloc> ${OK_HLO} --emit=hlo -o -)
add_test(NAME cli.hloc.time_passes COMMAND ${EXPECT} 0 "^  parse +[0-9.]+ +[0-9.]+%$" $<TARGET_FILE:hloc> ${OK_HLO} --emit=hlo --after-passes -o /dev/null --time-passes)
add_test(NAME cli.hloc.time_passes_total COMMAND ${EXPECT} 0 "^  total +[0-9.]+ +100.0%$" $<TARGET_FILE:hloc> ${OK_HLO} --emit=hlo --after-passes -o /dev/null --time-passes)
add_test(NAME cli.hloc.verify_each COMMAND ${EXPECT} 0 "^  verify \\(--verify-each\\) " $<TARGET_FILE:hloc> ${OK_HLO} --emit=hlo --after-passes -o /dev/null --verify-each --time-passes)
add_test(NAME cli.hloc.parse_error COMMAND ${EXPECT} 2 "bad_direction.hlo:[0-9]+:[0-9]+: error: "
  $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/parse/err/bad_direction.hlo --emit=none)
add_test(NAME cli.hloc.emit_hlo_default_stdout COMMAND ${EXPECT} 0 "^ENTRY" $<TARGET_FILE:hloc> ${OK_HLO} --emit=hlo)
add_test(NAME cli.hloc.bad_entry_name COMMAND ${EXPECT} 2 "--entry-name must be a C identifier: 1x" $<TARGET_FILE:hloc> ${OK_HLO} -o x.so --entry-name 1x)
add_test(NAME cli.hloc.reserved_entry_name COMMAND ${EXPECT} 2 "--entry-name names a symbol of the C library or the runtime; choose another: exp" $<TARGET_FILE:hloc> ${OK_HLO} -o x.so --entry-name exp)
add_test(NAME cli.hloc.binary_to_stdout COMMAND ${EXPECT} 2 "-o - writes only text kinds" $<TARGET_FILE:hloc> ${OK_HLO} --emit=so -o -)
add_test(NAME cli.hloc.no_output COMMAND ${EXPECT} 2 "-o is required" $<TARGET_FILE:hloc> ${OK_HLO} --emit=obj)
foreach(c roundtrip help_doc elided_ranges dce fold_dot_transposes merged_kernels codegen_threads)
  add_test(NAME cli.hloc.${c} COMMAND ${CMAKE_SOURCE_DIR}/tests/hloc_cli_cases.sh ${c} ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
endforeach()
add_test(NAME cli.hloc.elided_note COMMAND ${EXPECT} 0 "note: filled 1 elided constant"
  $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/parse/ok/elided_constants.hlo --emit=hlo --after-passes -o /dev/null)
add_test(NAME cli.hloc.dump_dir COMMAND ${EXPECT} 0 "^$|.*" $<TARGET_FILE:hloc> ${OK_HLO} --emit=hlo --after-passes -o /dev/null --dump-dir ${CMAKE_BINARY_DIR}/dump-test)

# Native outputs (need the code generator).
if(HLOC_HAVE_CODEGEN)
  set(MLP ${CMAKE_SOURCE_DIR}/testdata/examples/mlp.hlo)
  add_test(NAME cli.hloc.emit_llvm COMMAND ${EXPECT} 0 "^define .*@mlp\\(ptr" $<TARGET_FILE:hloc> ${MLP} --emit=llvm -o -)
  add_test(NAME cli.hloc.emit_asm COMMAND ${EXPECT} 0 "^mlp:" $<TARGET_FILE:hloc> ${MLP} --emit=asm -o - -O1)
  add_test(NAME cli.hloc.emit_obj_by_suffix COMMAND ${EXPECT} 0 "^$|.*" $<TARGET_FILE:hloc> ${MLP} -o ${CMAKE_BINARY_DIR}/mlp-test.o -O0)
  add_test(NAME cli.hloc.emit_header COMMAND ${EXPECT} 0 "hlo_status mlp\\(hlo_context \\*ctx" $<TARGET_FILE:hloc> ${MLP} --emit=header -o -)
  # A module named like a C library function (libm's powf64) gets the entry point hlo_powf64.
  add_test(NAME cli.hloc.reserved_module_name COMMAND ${EXPECT} 0 "hlo_status hlo_powf64\\(hlo_context \\*ctx" $<TARGET_FILE:hloc>
    ${CMAKE_SOURCE_DIR}/testdata/golden/power_f64_exact/model.hlo --emit=header -o -)
  add_test(NAME cli.hloc.generic_cpu COMMAND ${EXPECT} 0 "^$|.*" $<TARGET_FILE:hloc> ${MLP} --target-cpu=generic -o ${CMAKE_BINARY_DIR}/mlp-generic.so)
  add_test(NAME cli.hloc.generic_cpu_runs COMMAND ${EXPECT} 0 "^  \\{ 1.4967666, 0.26926836, -0.14090773 \\},$"
    $<TARGET_FILE:hlorun> ${CMAKE_BINARY_DIR}/mlp-generic.so --input ${CMAKE_SOURCE_DIR}/testdata/examples/mlp_x.npy)
  set_tests_properties(cli.hloc.generic_cpu_runs PROPERTIES DEPENDS cli.hloc.generic_cpu)
  add_test(NAME cli.hloc.dump_llvm COMMAND ${EXPECT} 0 "^  llvm-optimize +[0-9.]+ " $<TARGET_FILE:hloc> ${MLP}
    -o ${CMAKE_BINARY_DIR}/mlp-dump.o --dump-dir ${CMAKE_BINARY_DIR}/dump-llvm --time-passes)
  add_test(NAME cli.hloc.unknown_cpu COMMAND ${EXPECT} 2 "--target-cpu=frobcpu: LLVM does not know this CPU"
    $<TARGET_FILE:hloc> ${MLP} --target-cpu=frobcpu -o ${CMAKE_BINARY_DIR}/unknown-cpu.o)
  add_test(NAME cli.hloc.cpu_without_64bit COMMAND ${EXPECT} 2 "--target-cpu=i686: LLVM cannot generate code"
    $<TARGET_FILE:hloc> ${MLP} --target-cpu=i686 -o ${CMAKE_BINARY_DIR}/i686.o)
  add_test(NAME cli.hloc.missing_output_dir COMMAND ${EXPECT} 1 "no_such_dir/m.so: cannot write: No such file"
    $<TARGET_FILE:hloc> ${MLP} -o ${CMAKE_BINARY_DIR}/no_such_dir/m.so)
  foreach(c dump_files fusion header_once header_names entry_name cc_words target_cpus abi_doc)
    add_test(NAME cli.hloc.${c} COMMAND ${CMAKE_SOURCE_DIR}/tests/hloc_cli_cases.sh ${c} ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  endforeach()
endif()
# XLA's verifier takes these collective forms and after-all over non-tokens: so does --strict.
add_test(NAME cli.hloc.strict_collective_forms COMMAND ${EXPECT} 0 "^$"
  $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/parse/ok/collective_forms.hlo --emit=none --strict)

# A module without replica_count whose collectives name replicas 0..3 runs as 4 replicas, with
# a note (pass_infer_replica_count); fewer replicas get a message that says how many it needs.
set(REPLICAS_INFERRED ${CMAKE_SOURCE_DIR}/testdata/driver/replicas_inferred.hlo)
add_test(NAME cli.hloc.replicas_inferred COMMAND ${EXPECT} 0 "note: the module states no replica_count, and its collectives name replicas 0 to 3: it runs as 4 replicas"
  $<TARGET_FILE:hloc> ${REPLICAS_INFERRED} --emit=hlo --after-passes -o /dev/null)
if(HLOC_HAVE_CODEGEN)
  add_test(NAME cli.hlorun.replicas_inferred COMMAND ${EXPECT} 0 "^replica 3:"
    $<TARGET_FILE:hlorun> ${REPLICAS_INFERRED})
  add_test(NAME cli.hlorun.replicas_too_few COMMAND ${EXPECT} 1 "replica group names replica 2, but 2 replicas run: its groups need --replicas 4"
    $<TARGET_FILE:hlorun> ${REPLICAS_INFERRED} --replicas 2)
  set_tests_properties(cli.hlorun.replicas_inferred cli.hlorun.replicas_too_few PROPERTIES
    ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
endif()

# XLA's newest forms that verify but that a CPU backend cannot run: refused when compiled, saying why.
if(HLOC_HAVE_CODEGEN)
  add_test(NAME cli.hloc.permute_start_sets_refused COMMAND ${EXPECT} 1
    "has 2 sets of input start indices for 3 source-target pairs"
    $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/driver/permute_start_sets.hlo -o ${CMAKE_BINARY_DIR}/permute-sets.so)
  add_test(NAME cli.hloc.permute_start_sets_verify COMMAND ${EXPECT} 0 "^$|.*"
    $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/driver/permute_start_sets.hlo --emit=none)
endif()

# hloc -v states the memory plan: parameter, result and arena bytes and the largest temporaries.
if(HLOC_HAVE_CODEGEN)
  add_test(NAME cli.hloc.verbose_plan COMMAND ${EXPECT} 0 "^hloc: generate_loop: parameters 268451840 bytes, results 131072 bytes, arena [0-9]+ bytes$"
    $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/models/generate_loop.hlo -v -o ${CMAKE_BINARY_DIR}/generate-loop-plan.so)
endif()

# Non-temporal stores for large cheap loop results (docs/cli.md, --nontemporal-min-bytes): in
# the listing where they should be and nowhere else; a malformed value is a usage error.
add_test(NAME cli.hloc.nontemporal_asm COMMAND ${CMAKE_SOURCE_DIR}/tests/nontemporal_asm.sh $<TARGET_FILE:hloc>
                                               ${CMAKE_SOURCE_DIR})
add_test(NAME cli.hloc.nontemporal_bad COMMAND ${EXPECT} 2 "--nontemporal-min-bytes needs a byte count"
                                               $<TARGET_FILE:hloc> --nontemporal-min-bytes=0 ${OK_HLO})
add_test(NAME cli.hlorun.nontemporal_bad COMMAND ${EXPECT} 2 "--nontemporal-min-bytes needs a byte count"
                                                 $<TARGET_FILE:hlorun> ${OK_HLO} --nontemporal-min-bytes=lots)
