module @bad attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  sdy.mesh @small = <["z"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg2: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,8]<=[16]}"}, %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"w"}, {}]>}) -> tensor<8x8xf32> {
    %0 = sdy.reshard %arg0 <@mesh, [{"y"}, {"x"}]> : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
