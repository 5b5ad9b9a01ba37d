module {
  func.func @main() -> tensor<2xf32> {
    %1 = stablehlo.negate %x : tensor<2xf32>
    return %1 : tensor<2xf32>
  }
}
