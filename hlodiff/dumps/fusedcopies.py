"""Fusions copied whole into other fusions (h100 helper, issue 9).

GPU priority fusion fuses a producer into every consumer it can, duplicating it. When the
producer is itself a fusion (a Triton softmax kernel the softmax rewriter made earlier), the
consumer's new fused computation holds a copy of the producer's *body*, not of a top-level
instruction, so the pass walk (``passstep._match_fusions``) matched nothing of it and the
trace knew only the one consumer the producer's name went to.

fresh4 hmm_forward_scan (deviceless H100, jax 0.10.2), dump 0048 -> 0049 (priority-fusion):
``triton_softmax.3 = fusion(a_0___B__.1), kind=kCustom`` (max, broadcast, subtract) is read
by ``exp.6.0`` and ``sub.51.0``; after the pass ``fusion.38`` (the forward log-softmax) and
``fusion.52`` (the backward pass, ``fusion(while.26.0, a_0___B__.1)``) each hold a copy of
its body (``reduce_max.45``/``sub.80`` and ``reduce_max.91``/``sub.172``). The values
fused into triton_softmax.3 live in both.

:class:`BodyIndex` keys every instruction of the prev snapshot's fusions that the pass took
out (or renamed) by its own key and its operands, read the way ``_match_fusions`` reads a new
body: a body parameter as the fusion's operand, an operand-less instruction by content, any
other by a token naming it. A new body instruction that finds its twin there continues the
chain; one that is a copy of the producer's root stands for the producer: the consumer is a
copy of it, and the producer's top-level consumers match through it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..hlo.model import Instruction


class BodyIndex:
    """The bodies of the prev snapshot's fusions in ``names`` (built on first use)."""

    def __init__(self, prev, names: set[str], key: Callable[[Instruction], tuple]) -> None:
        self._prev, self._names, self._key = prev, names, key
        self._index: dict[tuple, tuple[str, str, bool]] | None = None

    def _build(self) -> dict[tuple, tuple[str, str, bool]]:
        prev, key = self._prev, self._key
        out: dict[tuple, tuple[str, str, bool]] = {}
        dup: set[tuple] = set()
        for n in self._names:
            p = prev.top.get(n)
            if p is None or p.opcode != "fusion" or not p.calls:
                continue
            body = prev.module.by_name.get(p.calls[0])
            if body is None:
                continue
            tok: dict[str, object] = {}
            for y in body.instructions:
                if y.opcode == "parameter":
                    k = y.parameter_number
                    if k is not None and k < len(p.operands):
                        o = p.operands[k]
                        tok[y.name] = prev.canon(prev.param_arg.get(o, o))
                    continue
                if not y.operands:  # by content, as the new body's leaves are read
                    tok[y.name] = key(y)
                    continue
                t = "\1" + p.name + "/" + y.name
                tok[y.name] = t
                if y.opcode == "tuple":
                    continue
                ops = tuple(tok.get(o, "\0" + o) for o in y.operands)
                k = key(y) + (ops,)
                if k in out:
                    dup.add(k)
                out[k] = (p.name, t, body.root == y.name)
        for k in dup:  # identical instructions in two bodies: no telling whose copy
            del out[k]
        return out

    def find(self, x: Instruction, ops: tuple) -> tuple[str, str, bool] | None:
        """(producer fusion, token, whether it is the producer's root) for a new body
        instruction ``x`` reading ``ops`` that copies an instruction of such a body."""
        if not self._names:
            return None
        if self._index is None:
            self._index = self._build()
        return self._index.get(self._key(x) + (ops,))
