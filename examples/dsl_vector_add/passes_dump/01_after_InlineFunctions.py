# IR of program VectorAdd after InlineFunctions (pypto.ir passes_dump)
import pypto.language as pl


@pl.program
class VectorAdd:
    @pl.function(type=pl.FunctionType.AIV)
    def kernel_add(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[32, 128], pl.FP32], c: pl.Out[pl.Tensor[[32, 128], pl.FP32]]) -> pl.Tensor[[32, 128], pl.FP32]:
        ta: pl.Tile[[32, 128], pl.FP32] = pl.tile.load(a, [0, 0], shapes=[32, 128])
        tb: pl.Tile[[32, 128], pl.FP32] = pl.tile.load(b, [0, 0], shapes=[32, 128])
        _tmp1: pl.Tile[[32, 128], pl.FP32] = pl.tile.add(ta, tb)
        _ret2: pl.Tensor[[32, 128], pl.FP32] = pl.tile.store(_tmp1, [0, 0], c)
        return _ret2

    @pl.function(type=pl.FunctionType.Orchestration)
    def vector_add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        for i in pl.range(0, 4, 1):
            rows: pl.Tensor[[32, 128], pl.FP32] = pl.tensor.slice(c, [i * 32, 0], shape=[32, 128])
            _arg1: pl.Tensor[[32, 128], pl.FP32] = pl.tensor.slice(a, [i * 32, 0], shape=[32, 128])
            _arg2: pl.Tensor[[32, 128], pl.FP32] = pl.tensor.slice(b, [i * 32, 0], shape=[32, 128])
            rows: pl.Tensor[[32, 128], pl.FP32] = self.kernel_add(_arg1, _arg2, rows)
        return c
