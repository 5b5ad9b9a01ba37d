// The generic form: properties <{...}>, regions ({^bb0 ...}), function types; a reduce with
// a region, the check dialect's own op (check.expect_eq) and a hex constant.
"builtin.module"() ({
  "func.func"() <{function_type = () -> (), sym_name = "main"}> ({
    %0 = "stablehlo.constant"() <{value = dense<"0x010000000200000003000000040000000500000006000000"> : tensor<2x3xi32>}> : () -> tensor<2x3xi32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg0: tensor<i32>, %arg1: tensor<i32>):
      %4 = "stablehlo.add"(%arg0, %arg1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%4) : (tensor<i32>) -> ()
    }) : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
    %3 = "stablehlo.constant"() <{value = dense<[6, 15]> : tensor<2xi32>}> : () -> tensor<2xi32>
    "stablehlo.custom_call"(%2, %3) <{call_target_name = "check.expect_eq", has_side_effect = true}> : (tensor<2xi32>, tensor<2xi32>) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) {mhlo.num_replicas = 1 : i32} : () -> ()
