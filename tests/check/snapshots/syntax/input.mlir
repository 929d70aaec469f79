module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x32xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicat}"}, %arg1: tensor<32x64xf32> {mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) -> (tensor<16x64xf32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}, tensor<64xf32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %1 = stablehlo.tanh %0 : tensor<16x64xf32>
    %2 = stablehlo.custom_call @Sharding(%1) {backend_config = "unspecified_dims=[1]", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<16x64xf32>) -> tensor<16x64xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<16x64xf32>) -> tensor<16x64xf32>
    %4 = stablehlo.custom_call @SPMDFullToShardShape(%3) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<16x64xf32>) -> tensor<8x16xf32>
    %5 = call @shmap_body(%4) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %6 = stablehlo.custom_call @Sharding(%5) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %7 = stablehlo.custom_call @SPMDShardToFullShape(%6) {backend_config = "", mhlo.sharding = "{devices=[2,4]<=[8]}"} : (tensor<8x16xf32>) -> tensor<16x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<16x64xf32>, tensor<f32>) -> tensor<64xf32>
    return %7, %8 : tensor<16x64xf32>, tensor<64xf32>
  }
  func.func private @shmap_body(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32> {jax.result_info = "[('batch',), ('model',)]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x16xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}
