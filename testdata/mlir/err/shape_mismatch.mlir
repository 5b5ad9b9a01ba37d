module {
  func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %a, %b : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
