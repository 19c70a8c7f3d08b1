# DSL annotations (pl.Tensor[[...], dtype], pl.Out[...]) are parsed, not Python types.
# mypy: ignore-errors
"""Paged attention (decode) in the DSL, with the seed's selective dump: ``pl.dump_tag(q)`` and
``pl.dump_tag(out)`` mark the query and the output, so a run with ``enable_dump_args=1``
dumps every task that reads ``q`` or writes ``out`` and nothing of the KV cache.

Per batch ``b``: ``out[b] = softmax(scale * q[b] @ K_b^T) @ V_b`` where ``K_b`` / ``V_b`` are
the cache blocks listed in ``block_table[b]`` (``context_lens[b] // BS`` of them; context
lengths are whole blocks). The keys are cached transposed (``k_cache[blk]`` is ``[D, BS]``)
so ``q @ K^T`` is a plain matmul. The orchestration reads the block table with ``pl.read``
and runs an online softmax over the blocks, four tasks per block: ``qk`` (AIC) → ``softmax``
(AIV: running max ``m``, running sum ``l``, rescale ``alpha``) → ``pv`` (AIC) → ``update``
(AIV: ``acc = acc * alpha + p @ v``); ``normalize`` (AIV) writes ``out[b] = acc / l``.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

import pypto.language as pl

B = 2  # batches
H = 16  # query heads (rows of one query)
D = 64  # head dimension
BS = 16  # block size
NB = 8  # blocks in the cache
MAXB = 4  # blocks per sequence at most

RTOL = 1e-4
ATOL = 1e-5


@pl.program
class PagedAttention:
    @pl.function(type=pl.FunctionType.AIV)
    def init_state(
        self,
        m: pl.Out[pl.Tensor[[H, 1], pl.FP32]],
        l: pl.Out[pl.Tensor[[H, 1], pl.FP32]],
        acc: pl.Out[pl.Tensor[[H, D], pl.FP32]],
    ) -> pl.Tuple[pl.Tensor[[H, 1], pl.FP32], pl.Tensor[[H, 1], pl.FP32], pl.Tensor[[H, D], pl.FP32]]:
        m = pl.store(pl.full([H, 1], dtype=pl.FP32, value=-1.0e30), [0, 0], m)
        l = pl.store(pl.full([H, 1], dtype=pl.FP32, value=0.0), [0, 0], l)
        acc = pl.store(pl.full([H, D], dtype=pl.FP32, value=0.0), [0, 0], acc)
        return m, l, acc

    @pl.function(type=pl.FunctionType.AIC)
    def qk(
        self,
        q: pl.Tensor[[B, H, D], pl.FP32],
        kj: pl.Tensor[[1, D, BS], pl.FP32],
        s: pl.Out[pl.Tensor[[H, BS], pl.FP32]],
        b: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[H, BS], pl.FP32]:
        tq = pl.load(q, [b, 0, 0], [1, H, D], target_memory=pl.Mem.Mat)
        tk = pl.load(kj, [0, 0, 0], [1, D, BS], target_memory=pl.Mem.Mat)
        sij = pl.matmul(pl.move(tq, target_memory=pl.Mem.Left), pl.move(tk, target_memory=pl.Mem.Right))
        return pl.store(sij, [0, 0], s)

    @pl.function(type=pl.FunctionType.AIV)
    def softmax(
        self,
        s: pl.Tensor[[H, BS], pl.FP32],
        m: pl.InOut[pl.Tensor[[H, 1], pl.FP32]],
        l: pl.InOut[pl.Tensor[[H, 1], pl.FP32]],
        p: pl.Out[pl.Tensor[[H, BS], pl.FP32]],
        alpha: pl.Out[pl.Tensor[[H, 1], pl.FP32]],
        scale: pl.Scalar[pl.FP32],
    ) -> pl.Tuple[
        pl.Tensor[[H, BS], pl.FP32], pl.Tensor[[H, 1], pl.FP32], pl.Tensor[[H, 1], pl.FP32], pl.Tensor[[H, 1], pl.FP32]
    ]:
        t = pl.mul(pl.load(s, [0, 0], [H, BS]), scale)
        m_old = pl.load(m, [0, 0], [H, 1])
        m_new = pl.maximum(m_old, pl.row_max(t))
        pij = pl.exp(pl.row_expand_sub(t, m_new))
        a = pl.exp(pl.sub(m_old, m_new))
        l_new = pl.add(pl.mul(pl.load(l, [0, 0], [H, 1]), a), pl.row_sum(pij))
        p = pl.store(pij, [0, 0], p)
        m = pl.store(m_new, [0, 0], m)
        l = pl.store(l_new, [0, 0], l)
        alpha = pl.store(a, [0, 0], alpha)
        return p, m, l, alpha

    @pl.function(type=pl.FunctionType.AIC)
    def pv(
        self,
        p: pl.Tensor[[H, BS], pl.FP32],
        vj: pl.Tensor[[1, BS, D], pl.FP32],
        o: pl.Out[pl.Tensor[[H, D], pl.FP32]],
    ) -> pl.Tensor[[H, D], pl.FP32]:
        tp = pl.load(p, [0, 0], [H, BS], target_memory=pl.Mem.Mat)
        tv = pl.load(vj, [0, 0, 0], [1, BS, D], target_memory=pl.Mem.Mat)
        oij = pl.matmul(pl.move(tp, target_memory=pl.Mem.Left), pl.move(tv, target_memory=pl.Mem.Right))
        return pl.store(oij, [0, 0], o)

    @pl.function(type=pl.FunctionType.AIV)
    def update(
        self,
        oj: pl.Tensor[[H, D], pl.FP32],
        alpha: pl.Tensor[[H, 1], pl.FP32],
        acc: pl.InOut[pl.Tensor[[H, D], pl.FP32]],
    ) -> pl.Tensor[[H, D], pl.FP32]:
        scaled = pl.row_expand_mul(pl.load(acc, [0, 0], [H, D]), pl.load(alpha, [0, 0], [H, 1]))
        return pl.store(pl.add(scaled, pl.load(oj, [0, 0], [H, D])), [0, 0], acc)

    @pl.function(type=pl.FunctionType.AIV)
    def normalize(
        self,
        acc: pl.Tensor[[H, D], pl.FP32],
        l: pl.Tensor[[H, 1], pl.FP32],
        out: pl.Out[pl.Tensor[[B, H, D], pl.FP32]],
        b: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[B, H, D], pl.FP32]:
        o = pl.row_expand_div(pl.load(acc, [0, 0], [H, D]), pl.load(l, [0, 0], [H, 1]))
        return pl.store(o, [b, 0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def paged_attention(
        self,
        q: pl.Tensor[[B, H, D], pl.FP32],
        k_cache: pl.Tensor[[NB, D, BS], pl.FP32],
        v_cache: pl.Tensor[[NB, BS, D], pl.FP32],
        block_table: pl.Tensor[[B, MAXB], pl.INT32],
        context_lens: pl.Tensor[[B], pl.INT32],
        out: pl.Out[pl.Tensor[[B, H, D], pl.FP32]],
        scale: pl.Scalar[pl.FP32],
    ) -> pl.Tensor[[B, H, D], pl.FP32]:
        pl.dump_tag(q)
        pl.dump_tag(out)
        for b in pl.range(B):
            n_blocks = pl.read(context_lens, [b]) // BS
            m = pl.create_tensor([H, 1], dtype=pl.FP32)
            l = pl.create_tensor([H, 1], dtype=pl.FP32)
            acc = pl.create_tensor([H, D], dtype=pl.FP32)
            m, l, acc = self.init_state(m, l, acc)
            for j in pl.range(n_blocks):
                blk = pl.read(block_table, [b, j])
                kj = k_cache[blk : blk + 1, :, :]
                vj = v_cache[blk : blk + 1, :, :]
                s = pl.create_tensor([H, BS], dtype=pl.FP32)
                s = self.qk(q, kj, s, b)  # q dumped on every qk task
                p = pl.create_tensor([H, BS], dtype=pl.FP32)
                alpha = pl.create_tensor([H, 1], dtype=pl.FP32)
                p, m, l, alpha = self.softmax(s, m, l, p, alpha, scale)
                oj = pl.create_tensor([H, D], dtype=pl.FP32)
                oj = self.pv(p, vj, oj)
                acc = self.update(oj, alpha, acc)
            out = self.normalize(acc, l, out, b)  # out dumped on every normalize task
        return out


def make_inputs() -> List[Any]:
    """Deterministic inputs, one per orchestration parameter."""
    rng = np.random.default_rng(2)
    q = rng.standard_normal((B, H, D)).astype(np.float32)
    k_cache = rng.standard_normal((NB, D, BS)).astype(np.float32)
    v_cache = rng.standard_normal((NB, BS, D)).astype(np.float32)
    block_table = np.array([[5, 2, 7, 0], [1, 6, 3, 4]], dtype=np.int32)
    context_lens = np.array([3 * BS, 4 * BS], dtype=np.int32)
    out = np.zeros((B, H, D), dtype=np.float32)
    scale = np.float32(1.0 / np.sqrt(D))
    return [q, k_cache, v_cache, block_table, context_lens, out, float(scale)]


def reference(tensors: Dict[str, Any], params: Dict[str, Any]) -> None:
    """Direct softmax attention over each batch's blocks, in float64."""
    q = np.asarray(tensors["q"], dtype=np.float64)
    k_cache = np.asarray(tensors["k_cache"], dtype=np.float64)
    v_cache = np.asarray(tensors["v_cache"], dtype=np.float64)
    block_table = np.asarray(tensors["block_table"])
    context_lens = np.asarray(tensors["context_lens"])
    scale = float(getattr(tensors["scale"], "value", tensors["scale"]))
    block_size = k_cache.shape[2]
    for b in range(q.shape[0]):
        blocks = block_table[b, : int(context_lens[b]) // block_size]
        k = np.concatenate([k_cache[i].T for i in blocks], axis=0)
        v = np.concatenate([v_cache[i] for i in blocks], axis=0)
        s = scale * (q[b] @ k.T)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        tensors["out"][b] = ((p / p.sum(axis=-1, keepdims=True)) @ v).astype(np.float32)
