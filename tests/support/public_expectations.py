"""What the public tests of XLA, Shardy and JAX (and jaxlib 0.10.2 itself) expect of the V3, proto and
reduction forms XLA head writes, as ``shardconv`` command lines: one table that drives
``tests/releases/test_public_expectations.py`` and the parity count in docs/parity.md.

``want`` is the exact stdout; an expectation that shardconv must refuse has ``want=None`` and names the
words its error must hold in ``refusal``.
"""

from __future__ import annotations

from dataclasses import dataclass

XLA_TESTS = "xla/service/spmd/shardy/test"


@dataclass(frozen=True)
class Expectation:
    source: str  # the public test (or oracle) the expected text comes from
    args: tuple[str, ...]  # the shardconv command line
    want: str | None  # exact stdout (without the newline); None: refused
    refusal: str = ""  # words the error must hold when refused

    @property
    def id(self) -> str:
        return " ".join(self.args[1:3])


def _v3(text: str, source: str, *more: str, want: str | None = None) -> Expectation:
    return Expectation(source, ("convert", text, "--to", "v3", *more), text if want is None else want)


def _sdy_to_v3(sdy: str, mesh: str, want: str, source: str, *more: str) -> Expectation:
    return Expectation(source, ("convert", sdy, "--mesh", mesh, "--to", "v3", *more), want)


ORACLE = "jaxlib 0.10.2"
NAMED_TESTS = "xla/hlo/ir/named_sharding_test.cc"
EXPORT_TESTS = f"{XLA_TESTS}/stablehlo_export_pipeline.mlir"
REDUCE_TESTS = "shardy/dialect/sdy/ir/test/reshard_verification.mlir"
MAX = '#sdy.sharding<@mesh, [{"a"}, {}], unreduced=max{"b"}>'
# xla/hlo/parser/hlo_parser_test.cc at head: ParseNamedShardingUnreducedMax, ParseNamedShardingFullyUnreduced
PARSER_TESTS = "xla/hlo/parser/hlo_parser_test.cc"
V3_MAX = "{mesh['x'=2], [{}], unreduced=max{'x'}}"
ROUND_TRIP_V3 = f"{XLA_TESTS}/sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir"
BARE_UNREDUCED = f"{PARSER_TESTS}: ParseNamedShardingFullyUnreduced (a bare `unreduced` after the dims)"
MIXED = "{{mesh['a'=2,'b'=2], [{'a'}, {}]}, {replicated}}"

EXPECTATIONS: tuple[Expectation, ...] = (
    # 1. open dims in V3: parse and print, V3 -> sdy -> V3, sdy -> V3
    _v3("{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}", ORACLE),
    _v3("{mesh['i'=2,'j'=2], [{'i', ?}, {?}], replicated={'j'}}", EXPORT_TESTS),
    _v3("{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{'a', ?}, {'b', ?}]}", EXPORT_TESTS),
    _v3("{mesh[a=2,b=4,c=3,d=8], [{c}, {a, b:(2)2, ?}]}", NAMED_TESTS,
        want="{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'c'}, {'a', 'b':(2)2, ?}]}"),
    _v3("{mesh['a'=2,'b'=4], [{?}, {}]}", "xla/hlo/ir/named_sharding.h"),
    _sdy_to_v3('#sdy.sharding<@mesh, [{"a", ?}, {?}]>', "a=2,b=4", "{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}", ORACLE),
    _sdy_to_v3('#sdy.sharding<@mesh, [{"i", ?}, {?}], replicated={"j"}>', "i=2,j=2",
               "{mesh['i'=2,'j'=2], [{'i', ?}, {?}], replicated={'j'}}", EXPORT_TESTS),
    _sdy_to_v3('#sdy.sharding<@mesh, [{"a", ?}, {"b", ?}]>', "a=2,b=2,c=2,d=2",
               "{mesh['a'=2,'b'=2,'c'=2,'d'=2], [{'a', ?}, {'b', ?}]}", EXPORT_TESTS),
    Expectation(ORACLE, ("convert", "{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}"), '#sdy.sharding<@mesh, [{"a", ?}, {?}]>'),
    # 2. the proto of a V3 sharding is the named one (field 14 only)
    Expectation(ORACLE, ("convert", "{mesh['a'=2,'b'=4], [{'a'}, {}]}", "--to", "proto-hex"),
                "721a120e0a050a016110020a050a016210041a040a0010011a021001"),
    Expectation(ORACLE, ("convert", "{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}", "--to", "proto-hex"),
                "7216120e0a050a016110020a050a016210041a020a001a00"),
    Expectation(ORACLE, ("convert", MIXED, "--to", "proto-hex"),
                "08022a1c721a120e0a050a016110020a050a016210021a040a0010011a0210012a00"),
    # 3. reduction kinds: Shardy at head reads and writes them; jaxlib 0.10.2 predates them
    Expectation(REDUCE_TESTS, ("convert", '#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>', "--mesh", "x=2,y=2",
                               "--to", "sdy", "--xla-version", "head"), '#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>'),
    Expectation(REDUCE_TESTS, ("convert", MAX, "--mesh", "a=2,b=4"), None, "predates reduction kinds"),
    Expectation(REDUCE_TESTS, ("convert", MAX, "--mesh", "a=2,b=4", "--to", "v3"), None, "predates reduction kinds"),
    # Shardy text in, Shardy text out: nothing is dropped, so no release is needed
    Expectation(REDUCE_TESTS, ("convert", MAX, "--mesh", "a=2,b=4", "--to", "sdy"), MAX),
    Expectation(REDUCE_TESTS, ("convert", MAX, "--mesh", "a=2,b=4", "--to", "sdy", "--xla-version", "head"), MAX),
    # 3b. reduction kinds in HLO V3 at XLA head: read, printed, converted to and from Shardy
    _v3(V3_MAX, PARSER_TESTS, "--xla-version", "head"),
    Expectation(PARSER_TESTS, ("convert", V3_MAX, "--xla-version", "head"),
                '#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>'),
    Expectation(PARSER_TESTS, ("convert", V3_MAX), None, "cannot be read by jaxlib 0.10.2"),
    _sdy_to_v3('#sdy.sharding<@mesh, [{}], unreduced=max{"x"}>', "x=2", V3_MAX, PARSER_TESTS, "--xla-version", "head"),
    Expectation(PARSER_TESTS, ("convert", "{mesh['a'=2,'b'=4], unreduced}"),
                '#sdy.sharding<@mesh, [], unreduced={"a", "b"}>'),
    Expectation(BARE_UNREDUCED, ("convert", "{mesh['x'=2], [{}], unreduced}"), '#sdy.sharding<@mesh, [{}], unreduced={"x"}>'),
    # 3c. XLA's V3 round-trip import at head: placeholders in mixed tuples, open dims kept on another mesh
    Expectation(f"{ROUND_TRIP_V3} (mixed_tuple_sharding_placeholder)", ("convert", MIXED, "--rank", "2,2"),
                '#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, <@mesh, [{?}, {?}]>]>'),
    Expectation(f"{ROUND_TRIP_V3} (frontend_attr_not_sharding)",
                ("convert", "{mesh['a'=1,'b'=4,'c'=1], [{'b'},{?}]}", "--mesh", '<["a"=2, "b"=2]>'),
                '#sdy.sharding<@mesh, [{"a", "b"}, {?}]>'),
    Expectation(f"{ROUND_TRIP_V3} (inlined_mesh)", ("convert", "{mesh['c'=4], [{'c'}]}", "--mesh", '<["a"=2, "b"=2]>'),
                '#sdy.sharding<@mesh, [{"a", "b"}]>'),
    # 3d. XLA's import of a Sharding custom call with backend_config="unspecified_dims=[1]"
    # (mhlo_import_pipeline.mlir, sharding_custom_call_with_unspecified_dims; that file's release names the
    # synthetic axes axis_N, head _axis_N)
    Expectation(f"{XLA_TESTS}/mhlo_import_pipeline.mlir (sharding_custom_call_with_unspecified_dims)",
                ("convert", "{devices=[8,1,4]<=[32] last_tile_dim_replicate}",
                 "--unspecified-dims", "unspecified_dims=[1]"),
                '#sdy.sharding<mesh<["_axis_0"=8, "_axis_1"=4]>, [{"_axis_0"}, {?}]>'),
    Expectation(f"{XLA_TESTS}/mhlo_import_pipeline.mlir (sharding_custom_call_with_unspecified_dims)",
                ("convert", "{devices=[8,1,4]<=[32] last_tile_dim_replicate}", "--unspecified-dims", "1",
                 "--to", "v2"), None, "no spelling for them"),
    # 4. the eight: the mixed tuple, the single-device mesh, head's short forms and 0.10.2's long ones
    Expectation(ORACLE, ("convert", MIXED, "--rank", "2,0"), '#sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>, <@mesh, []>]>'),
    Expectation(ORACLE, ("convert", MIXED, "--rank", "2,0", "--to", "hlo"),
                "{{devices=[2,1,2]<=[4] last_tile_dim_replicate}, {replicated}}"),
    Expectation(f"{XLA_TESTS}/sdy_round_trip_import_pipeline_hlo_sharding_v3.mlir",
                ("convert", "{maximal_mesh[device_id=0]}", "--rank", "2"), "#sdy.sharding<@mesh, []>"),
    Expectation(ORACLE, ("convert", "{maximal_mesh[device_id=0]}", "--rank", "2", "--to", "hlo"), "{maximal device=0}"),
    _v3("{mesh['x'=8,'y'=4], [{}], manual={'x', 'y'}}", EXPORT_TESTS, "--xla-version", "head",
        want="{mesh['x'=8,'y'=4], manual}"),
    _v3("{mesh['axis_0'=16], [{}, {}]}", EXPORT_TESTS, "--xla-version", "head", want="{mesh[], replicated}"),
    _v3("{mesh['x'=8,'y'=4], [{}], manual={'x', 'y'}}", ORACLE, "--xla-version", "0.10.2"),
    _v3("{mesh['axis_0'=16], [{}, {}]}", ORACLE, "--xla-version", "0.10.2"),
)
