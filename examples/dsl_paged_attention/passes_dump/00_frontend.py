# IR of program PagedAttention frontend (pypto.ir passes_dump)
import pypto.language as pl


@pl.program
class PagedAttention:
    @pl.function(type=pl.FunctionType.AIV)
    def init_state(self, m: pl.Out[pl.Tensor[[16, 1], pl.FP32]], l: pl.Out[pl.Tensor[[16, 1], pl.FP32]], acc: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> tuple[pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 64], pl.FP32]]:
        _tmp1: pl.Tile[[16, 1], pl.FP32] = pl.tile.full(-1e+30, shape=[16, 1], dtype=pl.FP32)
        m: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(_tmp1, [0, 0], m)
        _tmp2: pl.Tile[[16, 1], pl.FP32] = pl.tile.full(0.0, shape=[16, 1], dtype=pl.FP32)
        l: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(_tmp2, [0, 0], l)
        _tmp3: pl.Tile[[16, 64], pl.FP32] = pl.tile.full(0.0, shape=[16, 64], dtype=pl.FP32)
        acc: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(_tmp3, [0, 0], acc)
        return m, l, acc

    @pl.function(type=pl.FunctionType.AIC)
    def qk(self, q: pl.Tensor[[2, 16, 64], pl.FP32], kj: pl.Tensor[[1, 64, 16], pl.FP32], s: pl.Out[pl.Tensor[[16, 16], pl.FP32]], b: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        tq: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(q, [b, 0, 0], shapes=[1, 16, 64], target_memory=pl.Mem.Mat)
        tk: pl.Tile[[64, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(kj, [0, 0, 0], shapes=[1, 64, 16], target_memory=pl.Mem.Mat)
        _tmp1: pl.Tile[[16, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(tq, target_memory=pl.Mem.Left)
        _tmp2: pl.Tile[[64, 16], pl.FP32, pl.Mem.Right] = pl.tile.move(tk, target_memory=pl.Mem.Right)
        sij: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(_tmp1, _tmp2)
        _ret3: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(sij, [0, 0], s)
        return _ret3

    @pl.function(type=pl.FunctionType.AIV)
    def softmax(self, s: pl.Tensor[[16, 16], pl.FP32], m: pl.InOut[pl.Tensor[[16, 1], pl.FP32]], l: pl.InOut[pl.Tensor[[16, 1], pl.FP32]], p: pl.Out[pl.Tensor[[16, 16], pl.FP32]], alpha: pl.Out[pl.Tensor[[16, 1], pl.FP32]], scale: pl.Scalar[pl.FP32]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32], pl.Tensor[[16, 1], pl.FP32]]:
        _tmp1: pl.Tile[[16, 16], pl.FP32] = pl.tile.load(s, [0, 0], shapes=[16, 16])
        t: pl.Tile[[16, 16], pl.FP32] = pl.tile.muls(_tmp1, scale)
        m_old: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(m, [0, 0], shapes=[16, 1])
        _tmp2: pl.Tile[[16, 1], pl.FP32] = pl.tile.row_max(t)
        m_new: pl.Tile[[16, 1], pl.FP32] = pl.tile.maximum(m_old, _tmp2)
        _tmp3: pl.Tile[[16, 16], pl.FP32] = pl.tile.row_expand_sub(t, m_new)
        pij: pl.Tile[[16, 16], pl.FP32] = pl.tile.exp(_tmp3)
        _tmp4: pl.Tile[[16, 1], pl.FP32] = pl.tile.sub(m_old, m_new)
        a: pl.Tile[[16, 1], pl.FP32] = pl.tile.exp(_tmp4)
        _tmp5: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(l, [0, 0], shapes=[16, 1])
        _tmp6: pl.Tile[[16, 1], pl.FP32] = pl.tile.mul(_tmp5, a)
        _tmp7: pl.Tile[[16, 1], pl.FP32] = pl.tile.row_sum(pij)
        l_new: pl.Tile[[16, 1], pl.FP32] = pl.tile.add(_tmp6, _tmp7)
        p: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(pij, [0, 0], p)
        m: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(m_new, [0, 0], m)
        l: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(l_new, [0, 0], l)
        alpha: pl.Tensor[[16, 1], pl.FP32] = pl.tile.store(a, [0, 0], alpha)
        return p, m, l, alpha

    @pl.function(type=pl.FunctionType.AIC)
    def pv(self, p: pl.Tensor[[16, 16], pl.FP32], vj: pl.Tensor[[1, 16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        tp: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(p, [0, 0], shapes=[16, 16], target_memory=pl.Mem.Mat)
        tv: pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(vj, [0, 0, 0], shapes=[1, 16, 64], target_memory=pl.Mem.Mat)
        _tmp1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.tile.move(tp, target_memory=pl.Mem.Left)
        _tmp2: pl.Tile[[16, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(tv, target_memory=pl.Mem.Right)
        oij: pl.Tile[[16, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(_tmp1, _tmp2)
        _ret3: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(oij, [0, 0], o)
        return _ret3

    @pl.function(type=pl.FunctionType.AIV)
    def update(self, oj: pl.Tensor[[16, 64], pl.FP32], alpha: pl.Tensor[[16, 1], pl.FP32], acc: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        _tmp1: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(acc, [0, 0], shapes=[16, 64])
        _tmp2: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(alpha, [0, 0], shapes=[16, 1])
        scaled: pl.Tile[[16, 64], pl.FP32] = pl.tile.row_expand_mul(_tmp1, _tmp2)
        _tmp3: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(oj, [0, 0], shapes=[16, 64])
        _tmp4: pl.Tile[[16, 64], pl.FP32] = pl.tile.add(scaled, _tmp3)
        _ret5: pl.Tensor[[16, 64], pl.FP32] = pl.tile.store(_tmp4, [0, 0], acc)
        return _ret5

    @pl.function(type=pl.FunctionType.AIV)
    def normalize(self, acc: pl.Tensor[[16, 64], pl.FP32], l: pl.Tensor[[16, 1], pl.FP32], out: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]], b: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, 16, 64], pl.FP32]:
        _tmp1: pl.Tile[[16, 64], pl.FP32] = pl.tile.load(acc, [0, 0], shapes=[16, 64])
        _tmp2: pl.Tile[[16, 1], pl.FP32] = pl.tile.load(l, [0, 0], shapes=[16, 1])
        o: pl.Tile[[16, 64], pl.FP32] = pl.tile.row_expand_div(_tmp1, _tmp2)
        _ret3: pl.Tensor[[2, 16, 64], pl.FP32] = pl.tile.store(o, [b, 0, 0], out)
        return _ret3

    @pl.function(type=pl.FunctionType.Orchestration)
    def paged_attention(self, q: pl.Tensor[[2, 16, 64], pl.FP32], k_cache: pl.Tensor[[8, 64, 16], pl.FP32], v_cache: pl.Tensor[[8, 16, 64], pl.FP32], block_table: pl.Tensor[[2, 4], pl.INT32], context_lens: pl.Tensor[[2], pl.INT32], out: pl.Out[pl.Tensor[[2, 16, 64], pl.FP32]], scale: pl.Scalar[pl.FP32]) -> pl.Tensor[[2, 16, 64], pl.FP32]:
        for b in pl.range(0, 2, 1):
            _tmp1: pl.Scalar[pl.INT32] = pl.tensor.read(context_lens, [b])
            n_blocks: pl.Scalar[pl.INT32] = _tmp1 // 16
            m: pl.Tensor[[16, 1], pl.FP32] = pl.tensor.create(shape=[16, 1], dtype=pl.FP32)
            l: pl.Tensor[[16, 1], pl.FP32] = pl.tensor.create(shape=[16, 1], dtype=pl.FP32)
            acc: pl.Tensor[[16, 64], pl.FP32] = pl.tensor.create(shape=[16, 64], dtype=pl.FP32)
            m, l, acc = self.init_state(m, l, acc)
            for j in pl.range(0, n_blocks, 1):
                blk: pl.Scalar[pl.INT32] = pl.tensor.read(block_table, [b, j])
                kj: pl.Tensor[[1, 64, 16], pl.FP32] = pl.tensor.slice(k_cache, [blk, 0, 0], shape=[1, 64, 16])
                vj: pl.Tensor[[1, 16, 64], pl.FP32] = pl.tensor.slice(v_cache, [blk, 0, 0], shape=[1, 16, 64])
                s: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create(shape=[16, 16], dtype=pl.FP32)
                s: pl.Tensor[[16, 16], pl.FP32] = self.qk(q, kj, s, b, attrs={"dump_vars": [q]})
                p: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create(shape=[16, 16], dtype=pl.FP32)
                alpha: pl.Tensor[[16, 1], pl.FP32] = pl.tensor.create(shape=[16, 1], dtype=pl.FP32)
                p, m, l, alpha = self.softmax(s, m, l, p, alpha, scale)
                oj: pl.Tensor[[16, 64], pl.FP32] = pl.tensor.create(shape=[16, 64], dtype=pl.FP32)
                oj: pl.Tensor[[16, 64], pl.FP32] = self.pv(p, vj, oj)
                acc: pl.Tensor[[16, 64], pl.FP32] = self.update(oj, alpha, acc)
            out: pl.Tensor[[2, 16, 64], pl.FP32] = self.normalize(acc, l, out, b, attrs={"dump_vars": [out]})
        return out
