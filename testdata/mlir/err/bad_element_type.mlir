module {
  func.func @main(%a: tensor<2xq7>) -> tensor<2xq7> {
    return %a : tensor<2xq7>
  }
}
