# IR of program TiledMatmul after ResolveKernelCoreTypes (pypto.ir passes_dump)
import pypto.language as pl


@pl.program
class TiledMatmul:
    @pl.function(type=pl.FunctionType.AIC)
    def matmul_tile(self, a__ssa_v0: pl.Tensor[[128, 128], pl.FP32], b__ssa_v0: pl.Tensor[[128, 128], pl.FP32], c__ssa_v0: pl.InOut[pl.Tensor[[128, 128], pl.FP32]], i__ssa_v0: pl.Scalar[pl.INDEX], j__ssa_v0: pl.Scalar[pl.INDEX]) -> pl.Tensor[[128, 128], pl.FP32]:
        a0__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a__ssa_v0, [i__ssa_v0 * 64, 0], shapes=[64, 64], target_memory=pl.Mem.Mat)
        b0__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b__ssa_v0, [0, j__ssa_v0 * 64], shapes=[64, 64], target_memory=pl.Mem.Mat)
        _tmp1__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(a0__ssa_v0, target_memory=pl.Mem.Left)
        _tmp2__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(b0__ssa_v0, target_memory=pl.Mem.Right)
        acc__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(_tmp1__ssa_v0, _tmp2__ssa_v0)
        for k__ssa_v0, (acc__ssa_v1,) in pl.range(1, 2, 1, init_values=(acc__ssa_v0,)):
            ak__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a__ssa_v0, [i__ssa_v0 * 64, k__ssa_v0 * 64], shapes=[64, 64], target_memory=pl.Mem.Mat)
            bk__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b__ssa_v0, [k__ssa_v0 * 64, j__ssa_v0 * 64], shapes=[64, 64], target_memory=pl.Mem.Mat)
            _tmp3__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(ak__ssa_v0, target_memory=pl.Mem.Left)
            _tmp4__ssa_v0: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(bk__ssa_v0, target_memory=pl.Mem.Right)
            acc__ssa_v2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc__ssa_v1, _tmp3__ssa_v0, _tmp4__ssa_v0)
            acc__ssa_v3 = pl.yield_(acc__ssa_v2)
        _ret5__ssa_v0: pl.Tensor[[128, 128], pl.FP32] = pl.tile.store(acc__ssa_v3, [i__ssa_v0 * 64, j__ssa_v0 * 64], c__ssa_v0)
        return _ret5__ssa_v0

    @pl.function(type=pl.FunctionType.Orchestration)
    def tiled_matmul(self, a__ssa_v0: pl.Tensor[[128, 128], pl.FP32], b__ssa_v0: pl.Tensor[[128, 128], pl.FP32], c__ssa_v0: pl.InOut[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        for i__ssa_v0, (c__ssa_v1,) in pl.range(0, 2, 1, init_values=(c__ssa_v0,)):
            for j__ssa_v0, (c__ssa_v2,) in pl.range(0, 2, 1, init_values=(c__ssa_v1,)):
                c__ssa_v3: pl.Tensor[[128, 128], pl.FP32] = self.matmul_tile(a__ssa_v0, b__ssa_v0, c__ssa_v2, i__ssa_v0, j__ssa_v0)
                c__ssa_v4 = pl.yield_(c__ssa_v3)
            c__ssa_v5 = pl.yield_(c__ssa_v4)
        return c__ssa_v5
