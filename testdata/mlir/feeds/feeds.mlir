// Token ops (tests/stablehlo.cmake stablehlo.feeds): x comes in by infeed, 2x goes out by
// outfeed and by a host send on channel 7, and a host recv on channel 8 brings z; the result
// is 2x + z.  hlorun runs it with --infeed x.npy --recv 8:z.npy.
module @feeds {
  func.func public @main() -> tensor<3xf32> {
    %t0 = "stablehlo.after_all"() : () -> !stablehlo.token
    %x, %t1 = "stablehlo.infeed"(%t0) {infeed_config = ""} : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)
    %y = stablehlo.add %x, %x : tensor<3xf32>
    %t2 = "stablehlo.outfeed"(%y, %t1) {outfeed_config = ""} : (tensor<3xf32>, !stablehlo.token) -> !stablehlo.token
    %t3 = "stablehlo.send"(%y, %t2) {channel_handle = #stablehlo.channel_handle<handle = 7, type = 2>, is_host_transfer = true} : (tensor<3xf32>, !stablehlo.token) -> !stablehlo.token
    %z, %t4 = "stablehlo.recv"(%t3) {channel_handle = #stablehlo.channel_handle<handle = 8, type = 3>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)
    %r = stablehlo.add %y, %z : tensor<3xf32>
    return %r : tensor<3xf32>
  }
}
