# IR of program TiledMatmul after InlineFunctions (pypto.ir passes_dump)
import pypto.language as pl


@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.AIC)
    def matmul_tile(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.InOut[pl.Tensor[[128, 128], pl.FP32]], i: pl.Scalar[pl.INDEX], j: pl.Scalar[pl.INDEX]) -> pl.Tensor[[128, 128], pl.FP32]:
        a0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [i * 64, 0], shapes=[64, 64], target_memory=pl.Mem.Mat)
        b0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, j * 64], shapes=[64, 64], target_memory=pl.Mem.Mat)
        _tmp1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(a0, target_memory=pl.Mem.Left)
        _tmp2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(b0, target_memory=pl.Mem.Right)
        acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(_tmp1, _tmp2)
        for k in pl.range(1, 2, 1):
            ak: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [i * 64, k * 64], shapes=[64, 64], target_memory=pl.Mem.Mat)
            bk: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [k * 64, j * 64], shapes=[64, 64], target_memory=pl.Mem.Mat)
            _tmp3: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(ak, target_memory=pl.Mem.Left)
            _tmp4: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(bk, target_memory=pl.Mem.Right)
            acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, _tmp3, _tmp4)
        _ret5: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(acc, [i * 64, j * 64], c)
        return _ret5

    @pl.function(type=pl.FunctionType.Orchestration)
    def tiled_matmul(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.InOut[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        for i in pl.range(0, 2, 1):
            for j in pl.range(0, 2, 1):
                c: pl.Tensor[[128, 128], pl.FP32] = self.matmul_tile(a, b, c, i, j)
        return c
