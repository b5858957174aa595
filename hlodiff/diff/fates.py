"""What happened to each before instruction (optimization mode), from a Matching."""

from __future__ import annotations

from .match import Matching
from .result import InstructionFate
from .view import Node, View

_NO_VALUE = {"parameter", "rng", "rng-bit-generator", "infeed", "recv", "custom-call",
             "after-all", "partition-id", "replica-id", "while", "conditional", "call",
             "all-reduce", "all-gather", "send", "recv-done", "send-done"}
_SIDE_EFFECTS = {"send", "send-done", "outfeed", "infeed", "recv", "recv-done",
                 "custom-call", "all-reduce", "after-all"}
# constant folding leaves these alone (they would only make big literals)
_NOT_FOLDED = {"parameter", "constant", "iota", "broadcast", "reshape", "tuple"}
_LAYOUT_LIKE = {"reshape", "transpose", "copy", "bitcast", "bitcast-convert"}


def constant_valued(view: View) -> bytearray:
    """1 where a node's value can be computed at compile time (no parameter reaches it)."""
    nodes = view.nodes
    cv = bytearray(len(nodes))
    for n in nodes:
        if n.alias >= 0:
            continue
        if n.opcode in ("constant", "iota"):
            cv[n.idx] = 1
        elif n.operands and n.opcode not in _NO_VALUE:
            cv[n.idx] = all(cv[o] for o in n.operands)
    for n in nodes:
        if n.alias >= 0:
            cv[n.idx] = cv[view.resolve(n.idx)]
    return cv


def live_nodes(view: View) -> bytearray:
    """1 where something a node computes reaches an output (entry root, side effects)."""
    nodes = view.nodes
    live = bytearray(len(nodes))
    stack = [view.resolve(view.entry_root)]
    for n in nodes:
        if n.alias < 0 and n.opcode in _SIDE_EFFECTS:
            stack.append(n.idx)
    bodies: dict[int, list[int]] = {}
    for ctl, _role, _c, root, params in view.bodies:
        bodies.setdefault(ctl, []).append(view.resolve(root))
    while stack:
        i = stack.pop()
        if live[i]:
            continue
        live[i] = 1
        n = nodes[i]
        stack.extend(o for o in n.operands if not live[o])
        for r in bodies.get(i, ()):
            stack.append(r)
    for n in nodes:
        if n.alias >= 0:
            live[n.idx] = live[view.resolve(n.idx)]
    return live


def cse_survivors(m: Matching) -> dict[int, int]:
    """Before node -> the node CSE keeps in its place (same exact-subgraph fingerprint in the
    same computation once calls are inlined). Survivors prefer matched, then non-inlined,
    then earlier nodes."""
    B = m.before
    groups: dict[tuple, list[int]] = {}
    for n in B.nodes:
        if n.alias < 0 and n.opcode not in _NO_CSE:
            groups.setdefault((n.fp, n.ctx), []).append(n.idx)
    out = {}
    for g in groups.values():
        if len(g) < 2:
            continue
        nodes = B.nodes
        keep = min(g, key=lambda i: (nodes[i].site is not None, i))
        if m.b2a[keep] < 0:
            matched = [i for i in g if m.b2a[i] >= 0]
            if matched and nodes[keep].opcode != "constant":
                keep = matched[0]
        for i in g:
            if i != keep:
                out[i] = keep
    return out


_NO_CSE = {"parameter", "rng", "rng-bit-generator", "custom-call", "infeed", "recv", "send",
           "outfeed", "after-all", "while", "conditional", "call", "all-reduce"}


class FateBuilder:
    def __init__(self, m: Matching):
        self.m = m
        self.B = m.before
        self.A = m.after
        self.cv_b = constant_valued(self.B)
        self.cv_a = constant_valued(self.A)
        self.live = live_nodes(self.B)
        self.survivor = cse_survivors(m)

    def where(self, a: Node) -> tuple[str | None, str | None]:
        if a.fusion >= 0:
            f = self.A.nodes[a.fusion]
            return f.name, f.inst.fusion_kind
        return None, None

    def kernel_of(self, a: Node) -> str:
        return self.A.nodes[a.home].name

    def _new_constant(self, b: Node) -> str | None:
        """The after constant a folded before node became part of (via its users)."""
        A, m = self.A, self.m
        frontier, seen = [b.idx], set()
        for _ in range(3):
            nxt = []
            for x in frontier:
                for u in self.B.nodes[x].users:
                    if u in seen:
                        continue
                    seen.add(u)
                    y = m.b2a[u]
                    if y < 0:
                        nxt.append(u)
                        continue
                    for o in A.nodes[y].operands:
                        on = A.nodes[o]
                        if self.cv_a[o] and m.a2b[o] < 0:
                            while on.opcode != "constant" and on.operands:
                                on = A.nodes[on.operands[0]]
                            if on.opcode == "constant":
                                return on.name
            frontier = nxt
        return None

    def _replacement(self, b: Node) -> Node | None:
        """The after node that now does b's job: a see-through op at b's place, else the
        partner of b's nearest matched user."""
        A, m = self.A, self.m
        for u in b.users:
            y = m.b2a[u]
            if y < 0:
                continue
            for r in A.nodes[y].raw_operands:
                rn = A.nodes[r]
                if rn.opcode in ("bitcast", "copy", "transpose") and m.a2b[r] < 0:
                    return rn
            return A.nodes[y]
        for o in b.operands:
            y = m.b2a[o]
            if y >= 0:
                return A.nodes[y]
        return None

    def fate(self, b: Node) -> InstructionFate:
        B, A, m = self.B, self.A, self.m
        f = InstructionFate(before=b.name, computation=b.comp, fate="removed",
                            opcode=b.opcode, op_name=b.op_name,
                            source=B.location(b), call_site=b.site)
        if b.alias >= 0:
            if b.opcode == "call":
                f.fate, f.reason = "inlined", "call inlined into its caller"
                return f
            if b.opcode == "parameter":
                f.fate, f.reason = "inlined", f"parameter of inlined call {b.site}"
                return f
            r = B.resolve(b.idx)
            y = m.b2a[r]
            f.fate = "rewritten"
            f.reason = "tuple plumbing simplified away"
            if y >= 0:
                self._set_after(f, A.nodes[y])
            return f
        s = self.survivor.get(b.idx)
        if s is not None:
            f.fate = "merged"
            sb = B.nodes[s]
            f.into = sb.name
            ys = m.b2a[s]
            if ys < 0:
                ys = m.b2a[b.idx]
            if ys >= 0:
                self._set_after(f, A.nodes[ys])
            f.reason = f"identical to {sb.name} (CSE)"
            return f
        y = m.b2a[b.idx]
        if y >= 0:
            a = A.nodes[y]
            self._set_after(f, a)
            changed_attrs = a.opcode == b.opcode and b.sig is not None and a.sig is not None \
                and b.sig[6] != a.sig[6] and b.opcode in ("dot", "convolution", "reduce")
            if a.opcode != b.opcode or changed_attrs:
                f.fate = "rewritten"
                what = a.opcode
                if a.inst.custom_call_target:
                    what += f" {a.inst.custom_call_target}"
                f.reason = f"{b.opcode} became {what}"
                if changed_attrs:
                    f.reason = f"{b.opcode} rewritten (operand transposes/reshapes folded into it)"
                if f.fusion:
                    f.reason += f" inside {f.fusion_kind} fusion"
            elif a.fusion >= 0:
                f.fate = "fused"
                f.reason = f"computed inside {f.fusion_kind} fusion"
            else:
                f.fate = "kept"
                f.reason = "unchanged" if b.dims == a.dims else f"shape {b.dims} -> {a.dims}"
                lb, la = b.inst.shape.layout, a.inst.shape.layout
                if lb is not None and la is not None and lb != la:
                    f.reason = f"layout {lb} -> {la}"
            return f
        if not self.live[b.idx]:
            f.fate, f.reason = "removed", "dead: nothing it computes reaches an output"
            return f
        if self.cv_b[b.idx] and b.opcode not in _NOT_FOLDED:
            f.fate = "folded"
            f.after = self._new_constant(b)
            f.reason = "evaluated at compile time" + (f" into {f.after}" if f.after else "")
            return f
        r = self._replacement(b)
        f.fate = "rewritten"
        if r is not None:
            self._set_after(f, r)
        if b.opcode in _LAYOUT_LIKE:
            f.reason = f"{b.opcode} became a layout change / bitcast"
            if r is not None and r.opcode in ("bitcast", "copy", "transpose"):
                f.reason = f"{b.opcode} became {r.opcode} {r.name}"
        else:
            f.reason = "simplified away (algebraic simplification)"
            if r is not None:
                f.reason += f"; its effect is now in {r.name}"
        return f

    def _set_after(self, f: InstructionFate, a: Node) -> None:
        f.after = a.name
        f.fusion, f.fusion_kind = self.where(a)

    def all(self) -> list[InstructionFate]:
        return [self.fate(b) for b in self.B.nodes]
