"""Kernels a fusion pass cloned whole into a consumer (the oracle's extra destinations).

XLA's priority fusion may fuse a producer that is itself a fusion into a consumer while
keeping it for its other users: the producer's fused computation is cloned into the
consumer's. On 8 H100s, mlp_mixer's layer norm (jax 0.10.2, deviceless): the Triton
softmax rewriter builds ``triton_softmax.5 = fusion(param)`` (x - mean(x), dump 0081);
at dump 0092 the variance reads it, ``integer_pow.32.0 = multiply(triton_softmax.5,
triton_softmax.5)``; priority fusion (dump 0093) fuses the variance into
``fusion.186 = fusion(param)``, whose computation recomputes x - mean(x)
(``reduce.133``, ``div.124``, ``sub.226``: clones of the softmax's ``reduce.77``,
``div.68``, ``sub.115``), while ``triton_softmax.5`` stays for its other users. Every
value the producer held is now in both kernels, and the variance's instructions read the
clone of the producer's root.

:class:`ProducerClones` recognises such a clone inside a new fused computation: an
instruction whose subgraph, down to the values the kernel reads, is the producer's fused
computation applied to the producer's operands. The fusion walk
(``passstep._match_fusions``) then treats the clone's root as the producer (its users
match the instructions that read the producer) and records the kernel as a copy of it."""

from __future__ import annotations

from collections.abc import Callable

from ..hlo.model import Instruction, Module


def _print(x: Instruction, key: Callable, fps: dict[str, int]) -> int:
    return hash((key(x), tuple(fps.get(o, hash(("?", o))) for o in x.operands)))


class ProducerClones:
    """The prev snapshot's top-level fusions by the fingerprint of their computation."""

    def __init__(self, module: Module, top: dict[str, Instruction], key: Callable):
        self.key = key
        self.by_print: dict[int, str | None] = {}
        for f in top.values():
            if f.opcode != "fusion" or not f.calls:
                continue
            body = module.by_name.get(f.calls[0])
            if body is None or len(body.instructions) < 3:
                continue  # (a lone wrapped op: the fusion walk matches it by its key)
            fps: dict[str, int] = {}
            for x in body.instructions:  # operands first (HLO text order)
                if x.opcode == "parameter":
                    n = x.parameter_number
                    fps[x.name] = self.leaf(f.operands[n] if n is not None and
                                            n < len(f.operands) else x.name)
                else:
                    fps[x.name] = _print(x, key, fps)
            p = fps.get(body.root)
            if p is not None:
                # identical kernels on the same inputs: which one was cloned is unknown
                self.by_print[p] = None if p in self.by_print else f.name

    @staticmethod
    def leaf(prev_name: str) -> int:
        """The fingerprint of a value read from the prev snapshot's top level."""
        return hash(("N", prev_name))


class BodyPrints:
    """Fingerprints of one new fused computation's instructions, in text order, two ways:
    down to the kernel's operands, and down to the instructions the fusion walk matched
    to the prev snapshot's top level (a producer of the clone fused in the same pass: the
    prev kernel read it as an operand). Constants (and what is computed from them alone)
    stay structural: the walk matches them to any top-level look-alike."""

    def __init__(self, clones: ProducerClones):
        self.clones = clones
        self.plain: dict[str, int] = {}
        self.leafy: dict[str, int] = {}
        self.data: set[str] = set()  # instructions that read a kernel operand

    def param(self, name: str, prev_name: str) -> None:
        self.plain[name] = self.leafy[name] = ProducerClones.leaf(prev_name)
        self.data.add(name)

    def look(self, x: Instruction) -> str | None:
        """The prev fusion ``x`` clones the root of, if any."""
        if any(o in self.data for o in x.operands):
            self.data.add(x.name)
        by = self.clones.by_print
        key = self.clones.key
        self.plain[x.name] = p = _print(x, key, self.plain)
        self.leafy[x.name] = q = _print(x, key, self.leafy)
        return by.get(p) or by.get(q)

    def matched(self, x: Instruction, prev_name: str) -> None:
        if x.name in self.data:
            self.leafy[x.name] = ProducerClones.leaf(prev_name)
