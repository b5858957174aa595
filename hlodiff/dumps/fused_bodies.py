"""Fused computations that a fusion pass copied into a new kernel (the oracle's extra
destinations of one instruction).

A fusion pass may fuse a producer that is itself a fusion into a consumer: the consumer's new
fused computation then holds a copy of the producer's *body*, not of a top-level instruction,
so the walk over new fused computations (``passstep._match_fusions``) finds nothing of it
among the prev snapshot's top-level instructions. Two cases, both seen in XLA's dumps:

* **The producer is gone**: priority fusion fused it into every consumer. fresh4
  hmm_forward_scan (deviceless H100, jax 0.10.2), dump 0048 -> 0049 (priority-fusion):
  ``triton_softmax.3 = fusion(a_0___B__.1), kind=kCustom`` (max, broadcast, subtract) is
  read by ``exp.6.0`` and ``sub.51.0``; after the pass ``fusion.38`` (the forward
  log-softmax) and ``fusion.52`` (the backward pass) each hold a copy of its body
  (``reduce_max.45``/``sub.80`` and ``reduce_max.91``/``sub.172``). The values fused into
  triton_softmax.3 live in both.
* **The producer stays** for its other users, and a clone of its whole computation is fused
  into one consumer. mlp_mixer on 8 H100s (jax 0.10.2): the Triton softmax rewriter builds
  ``triton_softmax.5 = fusion(param)`` (x - mean(x), dump 0081); priority fusion (dump 0093)
  fuses the variance that reads it into ``fusion.186 = fusion(param)``, whose computation
  recomputes x - mean(x) (``reduce.133``, ``div.124``, ``sub.226``: clones of the softmax's
  ``reduce.77``, ``div.68``, ``sub.115``), while ``triton_softmax.5`` stays.

Both are found the same way. Every instruction of every prev fused computation gets a
*print*: a hash of its key and its operands' prints, down to the values the kernel reads (a
body parameter is the fusion's operand, as matching sees it; a constant is its content).
The walk gives each instruction of a new fused computation the same kind of print, two ways:
down to the new kernel's operands (*plain*), and down to the instructions the walk already
matched to the prev top level (*leafy*: the clone's inputs were fused in the same pass; the
prev kernel read them as operands). A new instruction whose print is the print of

* a kept fusion's root is a clone of that kernel: it matches the fusion itself;
* an instruction of a removed fusion's body continues that body's copy, and a copy of its
  root stands for the producer: the consumer is a copy of it, and the instructions that read
  the producer at top level match through it.

Identical computations in two kernels leave no telling whose copy it is: such prints answer
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..hlo.model import Instruction

_AMBIGUOUS = None


def _leaf(value: Any) -> int:
    """The print of a value the kernel reads from the prev snapshot's top level."""
    return hash(("N", value))


def _print(x: Instruction, key: Callable[[Instruction], tuple], prints: dict[str, int]) -> int:
    return hash((key(x), tuple(prints.get(o, hash(("?", o))) for o in x.operands)))


class FusedBodies:
    """The prev snapshot's fused computations by print (built on first use).

    ``prev`` is the walk's snapshot (``passstep._Snap``: ``top``, ``module``, ``canon`` and
    ``param_arg``); ``removed`` the prev top-level instructions the pass took out."""

    def __init__(self, prev, removed: set[str], key: Callable[[Instruction], tuple]) -> None:
        self._prev, self._removed, self.key = prev, removed, key
        self._roots: dict[int, str | None] | None = None  # fusion root print -> fusion
        # every instruction of a removed fusion's body: print -> (fusion, token, is root)
        self._body: dict[int, tuple[str, str, bool] | None] = {}

    def leaf(self, prev_name: str) -> int:
        prev = self._prev
        return _leaf(prev.canon(prev.param_arg.get(prev_name, prev_name)))

    def _build(self) -> dict[int, str | None]:
        prev, key = self._prev, self.key
        roots: dict[int, str | None] = {}
        for f in prev.top.values():
            if f.opcode != "fusion" or not f.calls:
                continue
            body = prev.module.by_name.get(f.calls[0])
            if body is None:
                continue
            gone = f.name in self._removed
            prints: dict[str, int] = {}
            for y in body.instructions:  # operands first (HLO text order)
                if y.opcode == "parameter":
                    n = y.parameter_number
                    o = f.operands[n] if n is not None and n < len(f.operands) else y.name
                    prints[y.name] = self.leaf(o)
                    continue
                prints[y.name] = p = _print(y, key, prints)
                if gone and y.operands and y.opcode != "tuple":
                    hit = (f.name, "\1" + f.name + "/" + y.name, body.root == y.name)
                    self._body[p] = _AMBIGUOUS if p in self._body else hit
            p = prints.get(body.root)
            if p is not None and len(body.instructions) >= 3:
                # (a lone wrapped op: the walk matches it by its key)
                roots[p] = _AMBIGUOUS if p in roots else f.name
        return roots

    def walk(self) -> "NewBody":
        """A new, empty print table for one new fused computation."""
        if self._roots is None:
            self._roots = self._build()
        return NewBody(self)


class NewBody:
    """The prints of one new fused computation's instructions, in text order."""

    def __init__(self, bodies: FusedBodies) -> None:
        self._bodies = bodies
        self.plain: dict[str, int] = {}
        self.leafy: dict[str, int] = {}
        self.data: set[str] = set()  # instructions that read a kernel operand

    def param(self, name: str, prev_name: str) -> None:
        """A body parameter: the kernel's operand, ``prev_name`` in the prev snapshot."""
        self.plain[name] = self.leafy[name] = self._bodies.leaf(prev_name)
        self.data.add(name)

    def look(self, x: Instruction) -> None:
        """Print ``x`` (call for every non-parameter instruction, in text order)."""
        if any(o in self.data for o in x.operands):
            self.data.add(x.name)
        key = self._bodies.key
        self.plain[x.name] = _print(x, key, self.plain)
        self.leafy[x.name] = _print(x, key, self.leafy)

    def kept_clone(self, x: Instruction) -> str | None:
        """The kept prev fusion whose whole computation ``x`` is a clone of, if any."""
        roots = self._bodies._roots or {}
        removed = self._bodies._removed
        for p in (self.plain[x.name], self.leafy[x.name]):
            f = roots.get(p)
            if f is not None:
                return f if f not in removed else None
        return None

    def body_copy(self, x: Instruction) -> tuple[str, str, bool] | None:
        """(producer fusion, token, whether it is the producer's root) where ``x`` copies an
        instruction of a removed fusion's body."""
        body = self._bodies._body
        return body.get(self.leafy[x.name]) or body.get(self.plain[x.name])

    def matched(self, x: Instruction, prev_name: str) -> None:
        """``x`` holds the prev top-level ``prev_name``: its readers see that value.
        Constants (and what is computed from them alone) stay by content."""
        if x.name in self.data:
            self.leafy[x.name] = self._bodies.leaf(prev_name)
