// Multi-result reduce (argmax) in the pretty form, a while loop, sort, iota, dot_general with
// batching dims, slice, concatenate, transpose, pad, a call; expected values by hand.
module @regions {
  func.func public @main() -> tensor<4xf32> {
    %x = stablehlo.constant dense<[3.0, 9.0, -1.0, 9.5]> : tensor<4xf32>
    %io = stablehlo.iota dim = 0 : tensor<4xi32>
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.reduce(%x init: %ninf), (%io init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
      %gt = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
      %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
    }
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %c9 = stablehlo.constant dense<9.5> : tensor<f32>
    stablehlo.custom_call @check.expect_eq(%r#1, %c3) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
    stablehlo.custom_call @check.expect_eq(%r#0, %c9) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
    // sum of 1..10 with a while loop
    %one = stablehlo.constant dense<1> : tensor<i32>
    %w:2 = stablehlo.while(%i = %one, %acc = %z) : tensor<i32>, tensor<i32>
     cond {
      %ten = stablehlo.constant dense<10> : tensor<i32>
      %le = stablehlo.compare  LE, %i, %ten,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %le : tensor<i1>
    } do {
      %acc2 = stablehlo.add %acc, %i : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2, %acc2 : tensor<i32>, tensor<i32>
    }
    %c55 = stablehlo.constant dense<55> : tensor<i32>
    stablehlo.custom_call @check.expect_eq(%w#1, %c55) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
    %sorted = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %lt = stablehlo.compare  LT, %p, %q,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %ws = stablehlo.constant dense<[-1.0, 3.0, 9.0, 9.5]> : tensor<4xf32>
    stablehlo.custom_call @check.expect_eq(%sorted, %ws) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    // batched matrix products: [2,2,3] x [2,3,1]
    %l = stablehlo.constant dense<[[[1, 2, 3], [4, 5, 6]], [[1, 0, 0], [0, 1, 0]]]> : tensor<2x2x3xi32>
    %rr = stablehlo.constant dense<[[[1], [1], [1]], [[7], [8], [9]]]> : tensor<2x3x1xi32>
    %d = stablehlo.dot_general %l, %rr, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x3xi32>, tensor<2x3x1xi32>) -> tensor<2x2x1xi32>
    %wd = stablehlo.constant dense<[[[6], [15]], [[7], [8]]]> : tensor<2x2x1xi32>
    stablehlo.custom_call @check.expect_eq(%d, %wd) {has_side_effect = true} : (tensor<2x2x1xi32>, tensor<2x2x1xi32>) -> ()
    %sl = stablehlo.slice %x [1:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %cat = stablehlo.concatenate %sl, %sl, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    %wc = stablehlo.constant dense<[9.0, 9.5, 9.0, 9.5]> : tensor<4xf32>
    stablehlo.custom_call @check.expect_eq(%cat, %wc) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    %m23 = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
    %t = stablehlo.transpose %m23, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>
    %wt = stablehlo.constant dense<[[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
    stablehlo.custom_call @check.expect_eq(%t, %wt) {has_side_effect = true} : (tensor<3x2xi32>, tensor<3x2xi32>) -> ()
    %pd = stablehlo.pad %sl, %ninf, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %wp = stablehlo.constant dense<[0xFF800000, 9.0, 0xFF800000, 9.5]> : tensor<4xf32>
    stablehlo.custom_call @check.expect_eq(%pd, %wp) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    %sq = func.call @square(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %sq : tensor<4xf32>
  }
  func.func private @square(%v: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.multiply %v, %v : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
