module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22batch\22=2, \22model\22=4]>}"}, mhlo.num_partitions = 8 : i32, mhlo.spmd_output_sharding = "{{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, {replicated}}"} {
  func.func public @main(%arg0: tensor<16x32xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22batch\22}, {}]>"}, mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}, %arg1: tensor<32x64xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}, {\22model\22}]>"}, mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"}) -> (tensor<16x64xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}, {\\\22model\\\22}]>"}, mhlo.sharding = "\22{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\22"}, tensor<f32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "unspecified_dims=[1]", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22batch\22}, {?}]>]>"}, mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} : (tensor<16x64xf32>) -> tensor<16x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    return %1, %cst : tensor<16x64xf32>, tensor<f32>
  }
}
