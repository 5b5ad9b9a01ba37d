// Pretty-printed elementwise ops, broadcast_in_dim, compare/select, convert; expected values by hand.
module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> tensor<2x3xf32> {
    %a = stablehlo.constant dense<[[1.0, -2.0, 3.5], [0.0, 4.0, -0.5]]> : tensor<2x3xf32>
    %s = stablehlo.constant dense<2.0> : tensor<f32>
    %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %m = stablehlo.multiply %a, %b : tensor<2x3xf32>
    %abs = stablehlo.abs %m : tensor<2x3xf32>
    %p = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %sel = stablehlo.select %p, %a, %abs : tensor<2x3xi1>, tensor<2x3xf32>
    %i = stablehlo.convert %sel : (tensor<2x3xf32>) -> tensor<2x3xi32>
    %want = stablehlo.constant dense<[[2.0, 4.0, 3.5], [0.0, 4.0, 1.0]]> : tensor<2x3xf32>
    %wanti = stablehlo.constant dense<[[2, 4, 3], [0, 4, 1]]> : tensor<2x3xi32>
    stablehlo.custom_call @check.expect_close(%sel, %want) {has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
    stablehlo.custom_call @check.expect_eq(%i, %wanti) {has_side_effect = true} : (tensor<2x3xi32>, tensor<2x3xi32>) -> ()
    return %sel : tensor<2x3xf32>
  }
}
