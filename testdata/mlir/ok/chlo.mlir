// CHLO expansions against known values: lgamma(0.5) = log(sqrt(pi)), lgamma(3) = log(2),
// lgamma(-0.5) = log(2 sqrt(pi)); digamma(1) = -0.5772157 (Euler's gamma), digamma(0.5) =
// -gamma - 2 log 2; erf_inv(0.5) = 0.4769363; erfc(1) = 0.1572992; erfc(-1) = 1.8427008;
// bessel_i1e(1) = 0.2079104; next_after(1, 2) = 1 + 2^-23.
module @chlo {
  func.func public @main() -> () {
    %x = stablehlo.constant dense<[0.5, 3.0, -0.5]> : tensor<3xf32>
    %lg = chlo.lgamma %x : tensor<3xf32> -> tensor<3xf32>
    %wl = stablehlo.constant dense<[0.5723649, 0.6931472, 1.2655121]> : tensor<3xf32>
    stablehlo.custom_call @check.expect_almost_eq(%lg, %wl) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
    %y = stablehlo.constant dense<[1.0, 0.5]> : tensor<2xf32>
    %dg = chlo.digamma %y : tensor<2xf32> -> tensor<2xf32>
    %wd = stablehlo.constant dense<[-0.5772157, -1.9635100]> : tensor<2xf32>
    stablehlo.custom_call @check.expect_almost_eq(%dg, %wd) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
    %h = stablehlo.constant dense<0.5> : tensor<f32>
    %ei = chlo.erf_inv %h : tensor<f32> -> tensor<f32>
    %we = stablehlo.constant dense<0.4769363> : tensor<f32>
    stablehlo.custom_call @check.expect_almost_eq(%ei, %we) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    %o = stablehlo.constant dense<[1.0, -1.0]> : tensor<2xf32>
    %ec = chlo.erfc %o : tensor<2xf32> -> tensor<2xf32>
    %wc = stablehlo.constant dense<[0.1572992, 1.8427008]> : tensor<2xf32>
    stablehlo.custom_call @check.expect_almost_eq(%ec, %wc) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %bi = chlo.bessel_i1e %one : tensor<f32> -> tensor<f32>
    %wb = stablehlo.constant dense<0.2079104> : tensor<f32>
    stablehlo.custom_call @check.expect_almost_eq(%bi, %wb) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    %two = stablehlo.constant dense<2.0> : tensor<f32>
    %na = chlo.next_after %one, %two : tensor<f32>, tensor<f32> -> tensor<f32>
    %wn = stablehlo.constant dense<0x3F800001> : tensor<f32>
    stablehlo.custom_call @check.expect_eq(%na, %wn) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    return
  }
}
