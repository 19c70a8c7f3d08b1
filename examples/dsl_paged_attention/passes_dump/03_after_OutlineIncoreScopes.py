# IR of program PagedAttention after OutlineIncoreScopes (pypto.ir passes_dump)
import pypto.language as pl


@pl.program
class PagedAttention:
    @pl.function(type=pl.FunctionType.AIV)
    def init_state(self, m__ssa_v0: pl.Out[pl.Tensor[[16, 1], pl.FP32]], l__ssa_v0: pl.Out[pl.Tensor[[16, 1], pl.FP32]], acc__ssa_v0: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> tuple[pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 64], pl.FP32]]:
        _tmp1__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.full(-1e+30, shape=[16, 1], dtype=pl.FP32)
        m__ssa_v1: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(_tmp1__ssa_v0, [0, 0], m__ssa_v0)
        _tmp2__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.full(0.0, shape=[16, 1], dtype=pl.FP32)
        l__ssa_v1: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(_tmp2__ssa_v0, [0, 0], l__ssa_v0)
        _tmp3__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.full(0.0, shape=[16, 64], dtype=pl.FP32)
        acc__ssa_v1: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(_tmp3__ssa_v0, [0, 0], acc__ssa_v0)
        return m__ssa_v1, l__ssa_v1, acc__ssa_v1

    @pl.function(type=pl.FunctionType.AIC)
    def qk(self, q__ssa_v0: pl.Tensor[[2, 16, 64], pl.FP32], kj__ssa_v0: pl.Tensor[[1, 64, 16], pl.FP32], s__ssa_v0: pl.Out[pl.Tensor[[16, 16], pl.FP32]], b__ssa_v0: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        tq__ssa_v0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(q__ssa_v0, [b__ssa_v0, 0, 0], shapes=[1, 16, 64], target_memory=pl.Mem.Mat)
        tk__ssa_v0: pl.Tile[[64, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(kj__ssa_v0, [0, 0, 0], shapes=[1, 64, 16], target_memory=pl.Mem.Mat)
        _tmp1__ssa_v0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(tq__ssa_v0, target_memory=pl.Mem.Left)
        _tmp2__ssa_v0: pl.Tile[[64, 16], pl.FP32, pl.Mem.Right] = pl.tile.move(tk__ssa_v0, target_memory=pl.Mem.Right)
        sij__ssa_v0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(_tmp1__ssa_v0, _tmp2__ssa_v0)
        _ret3__ssa_v0: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(sij__ssa_v0, [0, 0], s__ssa_v0)
        return _ret3__ssa_v0

    @pl.function(type=pl.FunctionType.AIV)
    def softmax(self, s__ssa_v0: pl.Tensor[[16, 16], pl.FP32], m__ssa_v0: pl.InOut[pl.Tensor[[16, 1], pl.FP32]], l__ssa_v0: pl.InOut[pl.Tensor[[16, 1], pl.FP32]], p__ssa_v0: pl.Out[pl.Tensor[[16, 16], pl.FP32]], alpha__ssa_v0: pl.Out[pl.Tensor[[16, 1], pl.FP32]], scale__ssa_v0: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32]]:
        _tmp1__ssa_v0: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(s__ssa_v0, [0, 0], shapes=[16, 16])
        t__ssa_v0: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(_tmp1__ssa_v0, scale__ssa_v0)
        m_old__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(m__ssa_v0, [0, 0], shapes=[16, 1])
        _tmp2__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.row_max(t__ssa_v0)
        m_new__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.maximum(m_old__ssa_v0, _tmp2__ssa_v0)
        _tmp3__ssa_v0: pl.Tile[[16, 16], pl.FP32] = pl.tile.row_expand_sub(t__ssa_v0, m_new__ssa_v0)
        pij__ssa_v0: pl.Tile[[16, 16], pl.FP32] = pl.tile.exp(_tmp3__ssa_v0)
        _tmp4__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.sub(m_old__ssa_v0, m_new__ssa_v0)
        a__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.exp(_tmp4__ssa_v0)
        _tmp5__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(l__ssa_v0, [0, 0], shapes=[16, 1])
        _tmp6__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.mul(_tmp5__ssa_v0, a__ssa_v0)
        _tmp7__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.row_sum(pij__ssa_v0)
        l_new__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.add(_tmp6__ssa_v0, _tmp7__ssa_v0)
        p__ssa_v1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(pij__ssa_v0, [0, 0], p__ssa_v0)
        m__ssa_v1: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(m_new__ssa_v0, [0, 0], m__ssa_v0)
        l__ssa_v1: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(l_new__ssa_v0, [0, 0], l__ssa_v0)
        alpha__ssa_v1: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(a__ssa_v0, [0, 0], alpha__ssa_v0)
        return p__ssa_v1, m__ssa_v1, l__ssa_v1, alpha__ssa_v1

    @pl.function(type=pl.FunctionType.AIC)
    def pv(self, p__ssa_v0: pl.Tensor[[16, 16], pl.FP32], vj__ssa_v0: pl.Tensor[[1, 16, 64], pl.FP32], o__ssa_v0: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        tp__ssa_v0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(p__ssa_v0, [0, 0], shapes=[16, 16], target_memory=pl.Mem.Mat)
        tv__ssa_v0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(vj__ssa_v0, [0, 0, 0], shapes=[1, 16, 64], target_memory=pl.Mem.Mat)
        _tmp1__ssa_v0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.tile.move(tp__ssa_v0, target_memory=pl.Mem.Left)
        _tmp2__ssa_v0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(tv__ssa_v0, target_memory=pl.Mem.Right)
        oij__ssa_v0: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(_tmp1__ssa_v0, _tmp2__ssa_v0)
        _ret3__ssa_v0: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(oij__ssa_v0, [0, 0], o__ssa_v0)
        return _ret3__ssa_v0

    @pl.function(type=pl.FunctionType.AIV)
    def update(self, oj__ssa_v0: pl.Tensor[[16, 64], pl.FP32], alpha__ssa_v0: pl.Tensor[[16, 1], pl.FP32], acc__ssa_v0: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        _tmp1__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(acc__ssa_v0, [0, 0], shapes=[16, 64])
        _tmp2__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(alpha__ssa_v0, [0, 0], shapes=[16, 1])
        scaled__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.row_expand_mul(_tmp1__ssa_v0, _tmp2__ssa_v0)
        _tmp3__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(oj__ssa_v0, [0, 0], shapes=[16, 64])
        _tmp4__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.add(scaled__ssa_v0, _tmp3__ssa_v0)
        _ret5__ssa_v0: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(_tmp4__ssa_v0, [0, 0], acc__ssa_v0)
        return _ret5__ssa_v0

    @pl.function(type=pl.FunctionType.AIV)
    def normalize(self, acc__ssa_v0: pl.Tensor[[16, 64], pl.FP32], l__ssa_v0: pl.Tensor[[16, 1], pl.FP32], out__ssa_v0: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]], b__ssa_v0: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, 16, 64], pl.FP32]:
        _tmp1__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(acc__ssa_v0, [0, 0], shapes=[16, 64])
        _tmp2__ssa_v0: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(l__ssa_v0, [0, 0], shapes=[16, 1])
        o__ssa_v0: pl.Tile[[16, 64], pl.FP32] = pl.tile.row_expand_div(_tmp1__ssa_v0, _tmp2__ssa_v0)
        _ret3__ssa_v0: pl.Tensor[[2, 16, 64], pl.FP32] = pl.tile.store(o__ssa_v0, [b__ssa_v0, 0, 0], out__ssa_v0)
        return _ret3__ssa_v0

    @pl.function(type=pl.FunctionType.Orchestration)
    def paged_attention(self, q__ssa_v0: pl.Tensor[[2, 16, 64], pl.FP32], k_cache__ssa_v0: pl.Tensor[[8, 64, 16], pl.FP32], v_cache__ssa_v0: pl.Tensor[[8, 16, 64], pl.FP32], block_table__ssa_v0: pl.Tensor[[2, 4], pl.INT32], context_lens__ssa_v0: pl.Tensor[[2], pl.INT32], out__ssa_v0: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]], scale__ssa_v0: pl.Scalar[pl.FP32]) -> pl.Tensor[[2, 16, 64], pl.FP32]:
        for b__ssa_v0, (out__ssa_v1,) in pl.range(0, 2, 1, init_values=(out__ssa_v0,)):
            _tmp1__ssa_v0: pl.Scalar[pl.INT32] = pl.tensor.read(context_lens__ssa_v0, [b__ssa_v0])
            n_blocks__ssa_v0: pl.Scalar[pl.INT32] = _tmp1__ssa_v0 // 16
            m__ssa_v0: pl.Tensor[[16, 1], pl.FP32] = pl.tensor.create(shape=[16, 1], dtype=pl.FP32)
            l__ssa_v0: pl.Tensor[[16, 1], pl.FP32] = pl.tensor.create(shape=[16, 1], dtype=pl.FP32)
            acc__ssa_v0: pl.Tensor[[16, 64], pl.FP32] = pl.tensor.create(shape=[16, 64], dtype=pl.FP32)
            m__ssa_v1, l__ssa_v1, acc__ssa_v1 = self.init_state(m__ssa_v0, l__ssa_v0, acc__ssa_v0)
            for j__ssa_v0, (m__ssa_v2, l__ssa_v2, acc__ssa_v2,) in pl.range(0, n_blocks__ssa_v0, 1, init_values=(m__ssa_v1, l__ssa_v1, acc__ssa_v1,)):
                blk__ssa_v0: pl.Scalar[pl.INT32] = pl.tensor.read(block_table__ssa_v0, [b__ssa_v0, j__ssa_v0])
                kj__ssa_v0: pl.Tensor[[1, 64, 16], pl.FP32] = pl.tensor.slice(k_cache__ssa_v0, [blk__ssa_v0, 0, 0], shape=[1, 64, 16])
                vj__ssa_v0: pl.Tensor[[1, 16, 64], pl.FP32] = pl.tensor.slice(v_cache__ssa_v0, [blk__ssa_v0, 0, 0], shape=[1, 16, 64])
                s__ssa_v0: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create(shape=[16, 16], dtype=pl.FP32)
                s__ssa_v1: pl.Tensor[[16, 16], pl.FP32] = self.qk(q__ssa_v0, kj__ssa_v0, s__ssa_v0, b__ssa_v0, attrs={"dump_vars": [q__ssa_v0]})
                p__ssa_v0: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create(shape=[16, 16], dtype=pl.FP32)
                alpha__ssa_v0: pl.Tensor[[16, 1], pl.FP32] = pl.tensor.create(shape=[16, 1], dtype=pl.FP32)
                p__ssa_v1, m__ssa_v3, l__ssa_v3, alpha__ssa_v1 = self.softmax(s__ssa_v1, m__ssa_v2, l__ssa_v2, p__ssa_v0, alpha__ssa_v0, scale__ssa_v0)
                oj__ssa_v0: pl.Tensor[[16, 64], pl.FP32] = pl.tensor.create(shape=[16, 64], dtype=pl.FP32)
                oj__ssa_v1: pl.Tensor[[16, 64], pl.FP32] = self.pv(p__ssa_v1, vj__ssa_v0, oj__ssa_v0)
                acc__ssa_v3: pl.Tensor[[16, 64], pl.FP32] = self.update(oj__ssa_v1, alpha__ssa_v1, acc__ssa_v2)
                m__ssa_v4, l__ssa_v4, acc__ssa_v4 = pl.yield_(m__ssa_v3, l__ssa_v3, acc__ssa_v3)
            out__ssa_v2: pl.Tensor[[2, 16, 64], pl.FP32] = self.normalize(acc__ssa_v4, l__ssa_v4, out__ssa_v1, b__ssa_v0, attrs={"dump_vars": [out__ssa_v1]})
            out__ssa_v3 = pl.yield_(out__ssa_v2)
        return out__ssa_v3
