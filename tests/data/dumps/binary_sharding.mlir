module @binary_sharding attributes {mhlo.num_partitions = 8 : i32} {
  func.func public @main(%arg0: tensor<32x32xf32> {mhlo.sharding = "\08\03\1A\03\01\04\020\01J\02\02\04R\02\01\00"}) -> (tensor<32x32xf32> {jax.result_info = "result", mhlo.sharding = ""}) {
    return %arg0 : tensor<32x32xf32>
  }
}
