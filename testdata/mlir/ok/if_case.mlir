// if and case whose branches use values defined outside them (passed as the branch operand).
module {
  func.func public @main() -> () {
    %p = stablehlo.constant dense<true> : tensor<i1>
    %a = stablehlo.constant dense<2.0> : tensor<f32>
    %b = stablehlo.constant dense<3.0> : tensor<f32>
    %r = "stablehlo.if"(%p) ({
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }, {
      stablehlo.return %b : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    %w = stablehlo.constant dense<5.0> : tensor<f32>
    stablehlo.custom_call @check.expect_eq(%r, %w) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    %i = stablehlo.constant dense<1> : tensor<i32>
    %q = "stablehlo.case"(%i) ({
      stablehlo.return %a : tensor<f32>
    }, {
      %m = stablehlo.multiply %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    %w6 = stablehlo.constant dense<6.0> : tensor<f32>
    stablehlo.custom_call @check.expect_eq(%q, %w6) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    return
  }
}
