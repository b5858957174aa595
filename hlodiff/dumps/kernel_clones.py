"""Kernels merged into another under their instructions' clone names (oracle helper for
passstep.py's fusion matching)."""

from __future__ import annotations

import re

_CLONE = re.compile(r"^(.+)\.clone(?:\.\d+)?$")


class KernelClones:
    """Removed kernels of one pass step found again by their instructions' clone names.

    Multi-output fusion clones a producer kernel's instructions into its consumer's or
    sibling's kernel, and ``Clone`` names each copy ``<name>.clone`` (uniquified: ``.1``
    ...). Names are unique in a module and never reused, so such a copy comes from that
    instruction. Fresh 15 fcos_centerness_giou_head on one H100, dumps 0063 -> 0064:
    ``fusion.169``, holding ``slice.8.13``, went into ``fusion.156`` as
    ``slice.8.13.clone.1``; the structural match missed it and the trace lost every value
    the kernel held."""

    def __init__(self, prev, removed: set[str]) -> None:
        self._prev, self._removed = prev, removed
        self._owner: dict[str, str] | None = None  # body instruction -> removed kernel

    def _owners(self) -> dict[str, str]:
        """Built once per step, on the first clone name met."""
        if self._owner is None:
            self._owner = {}
            for r in self._removed:
                i = self._prev.top.get(r)
                if i is None or i.opcode != "fusion" or not i.calls:
                    continue
                comp = self._prev.module.by_name.get(i.calls[0])
                if comp is not None:
                    for y in comp.instructions:
                        self._owner[y.name] = r
        return self._owner

    def follow(self, body, inner: dict[str, str], fusion: str, fused_into: dict[str, str],
               copies: dict[str, list[str]]) -> None:
        """A removed kernel whose body the structural match did not find in ``fusion``
        (its instructions not in ``inner``), but whose instructions are there under their
        clone names: merged into ``fusion``."""
        for x in body.instructions:
            if x.name in inner or x.opcode == "parameter":
                continue
            hit = _CLONE.match(x.name)
            if hit is None:
                continue
            r = self._owners().get(hit.group(1))
            if r is None or r in fused_into:
                continue
            fused_into[r] = fusion
            lst = copies.setdefault(r, [])
            if fusion not in lst:
                lst.append(fusion)
