# IR of program VectorAdd after OutlineIncoreScopes (pypto.ir passes_dump)
import pypto.language as pl


@pl.program
class VectorAdd:
    @pl.function(type=pl.FunctionType.AIV)
    def kernel_add(self, a__ssa_v0: pl.Tensor[[32, 128], pl.FP32], b__ssa_v0: pl.Tensor[[32, 128], pl.FP32], c__ssa_v0: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        ta__ssa_v0: pl.Tile[[32, 128], pl.FP32] = pl.tile.load(a__ssa_v0, [0, 0], shapes=[32, 128])
        tb__ssa_v0: pl.Tile[[32, 128], pl.FP32] = pl.tile.load(b__ssa_v0, [0, 0], shapes=[32, 128])
        _tmp1__ssa_v0: pl.Tile[[32, 128], pl.FP32] = pl.tile.add(ta__ssa_v0, tb__ssa_v0)
        _ret2__ssa_v0: pl.Tensor[[32, 128], pl.FP32] = pl.tile.store(_tmp1__ssa_v0, [0, 0], c__ssa_v0)
        return _ret2__ssa_v0

    @pl.function(type=pl.FunctionType.Orchestration)
    def vector_add(self, a__ssa_v0: pl.Tensor[[128, 128], pl.FP32], b__ssa_v0: pl.Tensor[[128, 128], pl.FP32], c__ssa_v0: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        for i__ssa_v0 in pl.range(0, 4, 1):
            rows__ssa_v0: pl.Tensor[[32, 128], pl.FP32] = pl.tensor.slice(c__ssa_v0, [i__ssa_v0 * 32, 0], shape=[32, 128])
            _arg1__ssa_v0: pl.Tensor[[32, 128], pl.FP32] = pl.tensor.slice(a__ssa_v0, [i__ssa_v0 * 32, 0], shape=[32, 128])
            _arg2__ssa_v0: pl.Tensor[[32, 128], pl.FP32] = pl.tensor.slice(b__ssa_v0, [i__ssa_v0 * 32, 0], shape=[32, 128])
            rows__ssa_v1: pl.Tensor[[32, 128], pl.FP32] = self.kernel_add(_arg1__ssa_v0, _arg2__ssa_v0, rows__ssa_v0)
        return c__ssa_v0
