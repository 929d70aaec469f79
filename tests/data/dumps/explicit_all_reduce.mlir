module @jit_unreduced_dot attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["X"=2, "Y"=4]> {stablehlo.mesh = {axes = [{name = "X", size = 2 : i64}, {name = "Y", size = 4 : i64}]}}
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"Y"}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"Y"}, {}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}]>}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"X"}, {}], unreduced={"Y"}>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=8, k=8} reduction={k}>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = sdy.reshard %0 <@mesh, [{"X"}, {}], unreduced={"Y"}> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}>} : tensor<8x8xf32>
    %2 = sdy.all_reduce {"Y"} %1 out_sharding=<@mesh, [{"X"}, {}]> : tensor<8x8xf32>
    %3 = sdy.reshard %2 <@mesh, [{"X"}, {"Y"}]> {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}>} : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}
