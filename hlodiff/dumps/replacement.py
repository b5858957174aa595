"""What took a removed instruction's place, from one pass step's two snapshots.

``prev`` and ``cur`` are passstep's indexed snapshots (``top``: name -> instruction,
``users``: name -> (user, operand index), ``roots``: computation -> root name); ``p2c`` maps
a name before the pass to its name after it.
"""

from __future__ import annotations

from .views import LAYOUT_ONLY, sums_nothing


def replacement(prev, cur, name: str, p2c: dict[str, str]) -> str | None:
    """What took a removed instruction's place in its users (or as its computation's root).
    A user that now reads one of the instruction's own operands may have absorbed it
    (algsimp folds ``mul(div(x, c1), c2)`` into ``mul(x, c2 / c1)``) while another user
    reads the rewritten value (``div(x, c1)`` -> ``multiply(x, 1 / c1)``, fresh 16
    hrnet_two_branch_exchange_fusion's batch-norm means): such a user names what took its
    place only when no other does (an identity, ``x * 1`` -> ``x``, is forwarded to all)."""
    i = prev.top[name]
    ops = [p2c.get(o, o) for o in i.operands]
    own = set(ops)
    for user, _ in prev.users.get(name, ()):
        # XLA's ReplaceInstruction gives the replacement the old name when the opcodes
        # agree: algsimp replacing ``subtract(x, 0)`` by ``x = subtract(a, b)`` leaves
        # ``x``'s computation under the identity's name (fresh 22 remat_nfnet, JAX 0.4.30)
        # (it computes what the removed one did: same operands, shape and attributes; not
        # algsimp's ``slice(slice(x))`` -> ``slice(x)``, which keeps the outer one's slice)
        ui = cur.top.get(p2c.get(user, ""))
        if ui is not None and ui.opcode == i.opcode and list(ui.operands) == ops and \
                prev.top[user].opcode == i.opcode and ui.attrs == i.attrs and \
                ui.shape.dims_text == i.shape.dims_text:
            return ui.name
    first = None
    for user, k in prev.users.get(name, ()):
        cu = p2c.get(user)
        if cu is None:
            continue
        ui = cur.top.get(cu)
        if ui is not None and len(ui.operands) == len(prev.top[user].operands):
            if ui.operands[k] not in own:
                return ui.operands[k]
            if first is None:
                first = ui.operands[k]
    if first is not None:
        return _rewrite_beside(prev, cur, name, own) or first
    if prev.users.get(name) and (i.opcode in LAYOUT_ONLY or sums_nothing(prev.top, i)):
        # Every user was rewritten too. A view, or a reduce that sums nothing, is rebuilt
        # as a reshape of what it read, or past a view the pass took out with it (algsimp
        # makes ``reduce(reshape(x))`` over size-1 dimensions a reshape of ``x`` while it
        # rewrites the divide that read the reduce: fresh 16 bf16_vpred's and fresh 15
        # repvgg's bias gradients). Without this, the value would follow its users.
        read = i.operands[0]  # (not a reduce's initial value)
        beside = _rewrite_beside(prev, cur, name, {p2c.get(read, read)} |
                                 _through_views(prev, read, p2c))
        if beside is not None:
            return beside
    comp = prev.top[name].computation
    if prev.roots.get(comp) == name and comp in cur.roots:
        root = cur.roots[comp]
        if root != name:
            return root
    return None


def _through_views(prev, name: str, p2c: dict[str, str]) -> set[str]:
    """What ``name`` read, when it is a view the pass removed: its operand after the pass."""
    i = prev.top.get(name)
    if name in p2c or i is None or i.opcode not in LAYOUT_ONLY or not i.operands:
        return set()
    return {p2c.get(i.operands[0], i.operands[0])}


def _rewrite_beside(prev, cur, name: str, own: set[str]) -> str | None:
    """The one instruction the pass added beside ``name``'s operands with its op_name and
    shape: its rewrite, when no remaining user tells (they were rewritten too)."""
    i = prev.top[name]
    md = i.metadata
    if md is None or not md.op_name:
        return None
    alts = set()
    for o in own:
        for u, _ in cur.users.get(o, ()):
            ci = cur.top.get(u)
            if u not in prev.top and ci is not None and ci.metadata is not None and \
                    ci.metadata.op_name == md.op_name and ci.shape.dims_text == i.shape.dims_text:
                alts.add(u)
    return alts.pop() if len(alts) == 1 else None
