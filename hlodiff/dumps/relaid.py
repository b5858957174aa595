"""Instructions a pass rebuilt on another shape of the same data (the oracle's walk).

XLA:GPU's ``layout_normalization`` gives every instruction with a non-default layout a
twin on the physical shape: ``multiply(a, b)`` of ``f32[1,8,2,8]{1,0,3,2}`` becomes
``multiply.68 = f32[2,8,1,8]{3,2,1,0} multiply(bitcast(a'), bitcast(b'))`` and a bitcast
back to the old shape for readers that were not rebuilt. A chain of such instructions is
rebuilt at once, so no reader survives to say what took an instruction's place
(:func:`hlodiff.dumps.replacement.replacement` finds nothing), and the walk had lost the
values there: fresh 9 qk_norm_softcap_attention on 8 H100s, ``mul.143`` "rewritten" at
``layout_normalization`` with no destination, though ``multiply.68`` computes it and is
fused later.

So does ``move_copy_to_users``: ``multiply(copy(a), copy(b))`` becomes
``copy(multiply(a, b))``, the new multiply on the other layout (``mul.181`` there).

The new instruction keeps the opcode, the op_name, the element type and count; its
operands are the old operands' successors, seen through the views the pass put between
or took out.
Instructions are matched in post order (operands first), so a rebuilt operand is known
when its reader is matched; where several added instructions fit, the operands decide,
and where they do not decide, nothing is claimed.
"""

from __future__ import annotations

_VIEWS = ("bitcast", "copy", "transpose", "reshape")


def _key(i) -> tuple | None:
    md = i.metadata
    sh = i.shape
    if md is None or not md.op_name or sh is None or sh.is_tuple:
        return None
    return (i.computation, i.opcode, md.op_name, sh.element_type, sh.num_elements)


def rebuilt_on_new_shapes(prev, cur, lost: list[str], added: set[str],
                          p2c: dict[str, str]) -> dict[str, str]:
    """Removed instruction (in ``lost``, the step's removed instructions in text order) ->
    the added instruction that computes its values on another shape. ``prev``/``cur`` are passstep's snapshots,
    ``p2c`` maps surviving names across the pass."""
    cands: dict[tuple, list[str]] = {}
    for n in added:
        i = cur.top.get(n)
        if i is None or i.opcode in _VIEWS:
            continue
        k = _key(i)
        if k is not None:
            cands.setdefault(k, []).append(n)
    if not cands:
        return {}

    def source(o: str) -> str:  # back through the views the pass added
        for _ in range(4):
            i = cur.top.get(o)
            if i is None or o not in added or i.opcode not in _VIEWS or len(i.operands) != 1:
                break
            o = i.operands[0]
        return o

    out: dict[str, str] = {}
    taken: set[str] = set()

    def was(o: str) -> str:  # an operand's successor; a view the pass took out: its source
        for _ in range(4):
            c = out.get(o) or p2c.get(o)
            if c is not None:
                return source(c)
            i = prev.top.get(o)
            if i is None or i.opcode not in _VIEWS or len(i.operands) != 1:
                break
            o = i.operands[0]
        return "\0"

    for n in lost:  # in text order, which is post order: operands first
        i = prev.top[n]
        k = _key(i)
        lst = [c for c in cands.get(k, ()) if c not in taken] if k is not None else []
        if not lst:
            continue
        want = sorted(was(o) for o in i.operands)
        fits = [c for c in lst if sorted(source(o) for o in cur.top[c].operands) == want]
        if len(fits) == 1 and i.operands:
            out[n] = fits[0]
            taken.add(fits[0])
    return out


def rebuilt_once(memo: dict[str, str] | None, prev, cur, lost: list[str], added: set[str],
                 p2c: dict[str, str]) -> dict[str, str]:
    """:func:`rebuilt_on_new_shapes`, computed once per pass step (``memo``: its result so
    far, None before the first call)."""
    return memo if memo is not None else rebuilt_on_new_shapes(prev, cur, lost, added, p2c)
