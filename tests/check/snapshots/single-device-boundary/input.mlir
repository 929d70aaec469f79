module {
  sdy.mesh @mesh = <["x"=2]>
  sdy.mesh @d0 = <[], device_ids=[0]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@d0, []>}) -> tensor<8x8xf32> {
    return %arg0 : tensor<8x8xf32>
  }
}
