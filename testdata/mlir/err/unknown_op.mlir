module {
  func.func @main() -> tensor<2xf32> {
    %0 = stablehlo.constant dense<1.0> : tensor<2xf32>
    %1 = stablehlo.frobnicate %0 : tensor<2xf32>
    return %1 : tensor<2xf32>
  }
}
