//! Site kinds: what a site is, one byte per site in the table's `kind` column. Python reads the names in
//! this order (`_native.SITE_KINDS`), and `shardconv.scan.sites.SiteKind` is held to them by a test.

/// What a site is. The discriminant is the byte Python reads; the order is the contract's.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SiteKind {
    /// An HloSharding string (text, or a serialized OpSharding in the site's data).
    Hlo = 0,
    /// `#sdy.sharding<...>`.
    SdySharding = 1,
    /// The `<@mesh, [...]>` of an op (`sdy.sharding_constraint`, `sdy.reshard`, ...).
    SdyShardingBare = 2,
    /// `#sdy.sharding_per_value<[...]>`.
    SdyPerValue = 3,
    /// `[<...>, <...>]`: `sdy.manual_computation`'s `in_shardings` / `out_shardings`.
    SdyPerValueList = 4,
    /// `#sdy.mesh<...>`, or the `<...>` of a `sdy.mesh @name = <...>` declaration.
    SdyMesh = 5,
    /// The `{axes = [...]}` StableHLO copy of an `sdy.mesh` declaration.
    StablehloMesh = 6,
    /// The `@name` of the mesh a collective's replica groups use.
    CollectiveMesh = 7,
    /// `{"a", "b"}` or `#sdy<manual_axes{...}>`.
    ManualAxes = 8,
    /// A module's `num_partitions` (the integer).
    NumPartitions = 9,
    /// `[1, 2]` from `backend_config="unspecified_dims=[...]"`.
    UnspecifiedDims = 10,
    /// A lit `expected-error` marker.
    ExpectedError = 11,
    /// An `HloModule` / MLIR `module` header or a `// -----` split: meshes reset.
    ModuleStart = 12,
    /// The axes a collective names (`sdy.all_gather [{}, {"y"}]`, `sdy.all_reduce {"y"}`, ...).
    CollectiveAxes = 13,
    /// MLIR's shard dialect: a `shard.grid @g(shape = 2x4)` declaration (a mesh by its grid's name).
    ShardGrid = 14,
    /// MLIR's shard dialect: a `shard.sharding @g split_axes = [[0], []] ...` op, named by its grid.
    ShardSharding = 15,
    /// `sdy.sharding_origins`: `{axis = "origin", ...}`, or `[{...}, ...]` per result (a propagation record).
    SdyOrigins = 16,
    /// `sdy.sharding_origin_name`: the name of an op that is an origin (`constraint_0`, `mc_0`).
    SdyOriginName = 17,
    /// `sdy.propagation_edges`: `#sdy.propagation_edges<[...]>`, or `[...]` per result / block argument.
    SdyEdges = 18,
    /// `%a, %b`: the operands of an op carrying a propagation record, or of a `return`.
    Operands = 19,
}

impl SiteKind {
    /// Every kind, by discriminant.
    pub const ALL: [SiteKind; 20] = [
        SiteKind::Hlo,
        SiteKind::SdySharding,
        SiteKind::SdyShardingBare,
        SiteKind::SdyPerValue,
        SiteKind::SdyPerValueList,
        SiteKind::SdyMesh,
        SiteKind::StablehloMesh,
        SiteKind::CollectiveMesh,
        SiteKind::ManualAxes,
        SiteKind::NumPartitions,
        SiteKind::UnspecifiedDims,
        SiteKind::ExpectedError,
        SiteKind::ModuleStart,
        SiteKind::CollectiveAxes,
        SiteKind::ShardGrid,
        SiteKind::ShardSharding,
        SiteKind::SdyOrigins,
        SiteKind::SdyOriginName,
        SiteKind::SdyEdges,
        SiteKind::Operands,
    ];

    /// The kind's name, as Python's `SiteKind` values read it (and the site key of a kind whose sites
    /// all share one).
    pub const fn name(self) -> &'static str {
        match self {
            SiteKind::Hlo => "hlo",
            SiteKind::SdySharding => "sdy.sharding",
            SiteKind::SdyShardingBare => "sdy.sharding.bare",
            SiteKind::SdyPerValue => "sdy.sharding_per_value",
            SiteKind::SdyPerValueList => "sdy.sharding_list",
            SiteKind::SdyMesh => "sdy.mesh",
            SiteKind::StablehloMesh => "stablehlo.mesh",
            SiteKind::CollectiveMesh => "collective.mesh",
            SiteKind::ManualAxes => "sdy.manual_axes",
            SiteKind::NumPartitions => "num_partitions",
            SiteKind::UnspecifiedDims => "unspecified_dims",
            SiteKind::ExpectedError => "expected-error",
            SiteKind::ModuleStart => "module",
            SiteKind::CollectiveAxes => "sdy.collective_axes",
            SiteKind::ShardGrid => "shard.grid",
            SiteKind::ShardSharding => "shard.sharding",
            SiteKind::SdyOrigins => "sdy.sharding_origins",
            SiteKind::SdyOriginName => "sdy.sharding_origin_name",
            SiteKind::SdyEdges => "sdy.propagation_edges",
            SiteKind::Operands => "operands",
        }
    }

    /// Every kind's name, by discriminant (`_native.SITE_KINDS`).
    pub fn names() -> [&'static str; 20] {
        SiteKind::ALL.map(SiteKind::name)
    }
}

#[cfg(test)]
mod tests {
    use super::SiteKind;

    #[test]
    fn all_is_in_discriminant_order() {
        for (i, k) in SiteKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
        }
    }
}
