// Collectives on 2 replicas (mhlo.num_replicas): all_gather, reduce_scatter, all_to_all,
// collective_permute and collective_broadcast.  Replica r holds x = [r+1, r+2, r+3, r+4];
// expected values by hand, sliced at the replica's own offset where they differ by replica.
module @collectives attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main() -> tensor<8xf32> {
    %rid = stablehlo.replica_id : tensor<ui32>
    %r = stablehlo.convert %rid : (tensor<ui32>) -> tensor<f32>
    %ri = stablehlo.convert %rid : (tensor<ui32>) -> tensor<i32>
    %io = stablehlo.iota dim = 0 : tensor<4xf32>
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %rb = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %x0 = stablehlo.add %io, %one : tensor<4xf32>
    %x = stablehlo.add %x0, %rb : tensor<4xf32>
    // all_gather along 0: [1,2,3,4, 2,3,4,5] on both replicas
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 5 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<8xf32>
    %ge = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 2.0, 3.0, 4.0, 5.0]> : tensor<8xf32>
    stablehlo.custom_call @check.expect_eq(%g, %ge) {has_side_effect = true} : (tensor<8xf32>, tensor<8xf32>) -> ()
    // redeplica_id : tensor<ui32>
    %r = stablehlo.convert %rid : (tensor<ui32>) -> tensor<f32>
    %ri = stablehlo.convert %rid : (tensor<ui32>) -> tensor<i32>
    %io = stablehlo.iota dim = 0 : tensor<4xf32>
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %rb = stablehlo.broadcast_in_dim %r, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %x0 = stablehlo.add %io, %one : tensor<4xf32>
    %x = stablehlo.add %x0, %rb : tensor<4xf32>
    // all_gather along 0: [1,2,3,4, 2,3,4,5] on both replicas
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 5 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<8xf32>
    %ge = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 2.0, 3.0, 4.0, 5.0]> : tensor<8xf32>
    stablehlo.custom_call @check.expect_eq(%g, %ge) {has_side_effect = true} : (tensor<8xf32>, tensor<8xf32>) -> ()
    // reduce_scatter (sum) along 0: [3,5,7,9] split: replica r gets [3,5] or [7,9]
    %s = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<2xf32>
    %sall = stablehlo.constant dense<[3.0, 5.0, 7.0, 9.0]> : tensor<4xf32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %off = stablehlo.multiply %ri, %two : tensor<i32>
    %se = stablehlo.dynamic_slice %sall, %off, sizes = [2] : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
    stablehlo.custom_call @check.expect_eq(%s, %se) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
    // all_to_aluce_scatter (sum) along 0: [3,5,7,9] split: replica r gets [3,5] or [7,9]
    %s = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<2xf32>
    %sall = stablehlo.constant dense<[3.0, 5.0, 7.0, 9.0]> : tensor<4xf32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %off = stablehlo.multiply %ri, %two : tensor<i32>
    %se = stablehlo.dynamic_slice %sall, %off, sizes = [2] : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
    stablehlo.custom_call @check.expect_eq(%s, %se) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
    // all_to_all alo,5]
    %t = "stablehlo.all_to_all"(%x) {concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %tall = stablehlo.constant dense<[1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0]> : tensor<8xf32>
    %four = stablehlo.constant dense<4> : tensor<i32>
    %off4 = stablehlo.multiply %ri, %four : tensor<i32>
    %te = stablehlo.dynamic_slice %tall, %off4, sizes = [4] : (tensor<8xf32>, tensor<i32>) -> tensor<4xf32>
    stablehlo.custom_call @check.expect_eq(%t, %te) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    // collective_permute 0 <-> 1: the other replica's x
    %p = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4xf32>) -> tensor<4xf32>
    %pall = stablehlo.constant dense<[2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0]> : tensor<8xf32>
    %pe = stablehlo.dynamic_slice %pall, %off4, sizes = [4] : (tensor<8xf32>, tensor<i32>) -> tensor<4xf32>
    stablehlo.custom_call @check.expect_eq(%p, %pe) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    // collective_broadcast from replica 0 (the first of the group): [1,2,3,4] everywhere
    %b = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.custom_call @check.expect_eq(%b, %x0) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
    return %g : tensor<8xf32>
  }
}
