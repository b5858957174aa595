"""One pass of XLA's pass-by-pass dumps: what a snapshot removed, added and renamed relative
to the one before, and where each removed instruction went (a fusion, a survivor, a
replacement). :mod:`hlodiff.dumps.passes` strings these steps into a trace."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..hlo.model import Instruction, Module
from .partitioning import clone_renames as _clone_renames, unsharded_key as _unsharded
from .partitioning import constant_like as _constant_like, loose_renames as _loose_renames
from .replacement import replacement
from .views import LAYOUT_ONLY, sums_nothing, surviving_source
from .relaid import rebuilt_once
from .passfiles import PassSnapshot
from .foldorphans import folding_orphans
from .fused_bodies import FusedBodies
from .kernel_clones import KernelClones
from .foldresults import folded_results
from .passorphans import inlined_projections, inlined_roots, multi_output_homes, outlined_calls, rebuilt_orphans
from .takeover import find_takeovers
from .tuplefwd import forwarded_element, hands_back
from .compsig import merged_key, same_computation
from .cooperands import align_leaf_ties, by_co_operands, repair_ties
from .loopstate import element_read_back, loop_element, own_candidates, rebuilt_element, rebuilt_elements
from .loopstate import init_tuples, rebuilt_loops, same_users
from .usertrees import deep_user_match
from .callsites import branch_arguments, inlined_metadata

# Opcodes whose called computations hold "real" top-level code (not fused, not reducers).
_CONTROL_FLOW = {"call", "while", "conditional", "async-start", "async-update", "async-done"}
# ops that only re-view their operand's values: a replaced instruction read back through
# one of them (of a new instruction) has its value computed by that new instruction
_VIEWS = {"slice", "reshape", "bitcast", "transpose", "copy", "get-tuple-element"}


# ---------------------------------------------------------------------------------------
# Classifying passes
# ---------------------------------------------------------------------------------------

_REMOVING = {"dce", "hlo-dce", "tuple-simplifier", "zero_sized_hlo_elimination",
             "zero-sized-hlo-elimination", "dead-computation-elimination",
             "computation-deduplicator", "optimization-barrier-expander"}


def classify_pass(pass_name: str) -> str:
    """The fate an instruction removed by this pass gets, judged from the name alone."""
    n = pass_name.lower()
    if "fusion" in n or "fusing" in n or n.endswith("fuser"):
        return "fused"
    if n in ("cse", "hlo-cse", "hlo_cse") or re.search(r"(^|[-_])cse$", n):
        return "merged"
    if "constant_folding" in n or "constant-folding" in n or n == "hlo-constant-folding":
        return "folded"
    if "inlin" in n:  # call-inliner, inliner, ...
        return "inlined"
    if n in _REMOVING or n.endswith("-dce") or n.endswith("_dce"):
        return "removed"
    return "rewritten"


# ---------------------------------------------------------------------------------------
# One parsed snapshot, indexed for the walk
# ---------------------------------------------------------------------------------------


def _reachable(module: Module, roots: list[str], follow=None) -> list[str]:
    """Computations reached from ``roots`` through the calls of their instructions (only of
    opcodes in ``follow`` when given), in the order first reached."""
    seen: dict[str, None] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in module.by_name:
            continue
        seen[name] = None
        for i in module.by_name[name].instructions:
            if follow is None or i.opcode in follow:
                todo.extend(i.calls)
    return list(seen)


def _fused_computations(module: Module) -> set[str]:
    """Computations that hold no top-level code: those reachable from a fusion instruction
    (fused bodies and their callees) and those unreachable from the entry."""
    out = set(_reachable(module, [c for i in module.instructions() if i.opcode == "fusion"
                                  for c in i.calls]))
    # computations nothing reaches from the entry (GPU priority fusion leaves the bodies
    # of fusions it merged away until DCE): their instructions are not top-level code
    reach = set(_reachable(module, [module.entry]))
    out.update(c.name for c in module.computations if c.name not in reach)
    return out


def _scope_computations(module: Module) -> list[str]:
    """The entry and the computations it reaches through call/while/conditional."""
    return _reachable(module, [module.entry], _CONTROL_FLOW)


def _ignored_attrs() -> set[str]:
    return {"metadata", "calls", "to_apply", "body", "condition", "branch_computations",
            "true_computation", "false_computation", "called_computations",
            "backend_config", "frontend_attributes", "statistics", "origin"}


_IGNORED = _ignored_attrs()


def _key(i: Instruction) -> tuple:
    """What must agree for two instructions to be the same computation on the same inputs."""
    attrs = tuple(sorted((k, v) for k, v in i.attrs.items() if k not in _IGNORED))
    return (i.opcode, i.shape.dims_text, i.literal, attrs,
            i.parameter_number if i.opcode == "parameter" else None)


def _loose_key(i: Instruction) -> tuple:
    md = i.metadata
    return (i.opcode, i.shape.dims_text, i.literal,
            md.op_name if md else None, md.stack_frame_id if md else None)


class _Snap:
    """A module reduced to what the walk needs: its top-level instructions and users."""

    __slots__ = ("module", "top", "fused", "users", "roots", "param_arg", "by_key", "by_loose",
                 "all_names", "call_site", "_lit", "lit_ids", "branch_arg")

    def __init__(self, module: Module, lit_ids: dict[tuple, int] | None = None) -> None:
        self.module = module
        self.fused = _fused_computations(module)
        self.top: dict[str, Instruction] = {}
        self.roots: dict[str, str] = {}  # computation -> root name
        self.all_names: set[str] = set()
        for c in module.computations:
            if c.name in self.fused:
                self.all_names.update(c.by_name)
                continue
            self.roots[c.name] = c.root
            for i in c.instructions:
                self.top[i.name] = i
        self.all_names.update(self.top)
        self.users: dict[str, list[tuple[str, int]]] = {}
        # a parameter of a callee with one call site stands for the call's operand (inlined)
        sites: dict[str, list[Instruction]] = {}
        for i in self.top.values():
            for k, o in enumerate(i.operands):
                self.users.setdefault(o, []).append((i.name, k))
            if i.opcode == "call":
                for cname in i.calls:
                    sites.setdefault(cname, []).append(i)
        self.param_arg: dict[str, str] = {}
        # computation -> its only call site (what call-inliner copies it into)
        self.call_site: dict[str, Instruction] = {
            c: calls[0] for c, calls in sites.items() if len(calls) == 1}
        for cname, calls in sites.items():
            if len(calls) != 1 or cname not in module.by_name:
                continue
            call = calls[0]
            for p in module.by_name[cname].parameters:
                n = p.parameter_number
                if n is not None and n < len(call.operands):
                    self.param_arg[p.name] = call.operands[n]
        self.branch_arg = branch_arguments(module, self.top.values(), sites)
        self.by_key: dict[tuple, list[Instruction]] | None = None
        self.by_loose: dict[tuple, list[Instruction]] | None = None
        self._lit: dict[str, object] = {}  # canon's memo
        self.lit_ids: dict[tuple, int] = lit_ids if lit_ids is not None else {}

    def canon(self, name: str):
        """An operand as matching sees it: values of literals alone (constants, iotas, and
        broadcasts and other ops of those only, through the arguments of a callee's one
        call site) by their content, since identical ones are interchangeable; others by
        name. Identical callees inlined at several sites each bring a ``broadcast(c)``:
        whichever copy one of them was renamed to, its readers' copies still match (fresh
        17 mobile_unet under JAX 0.4.30, dump 0003: three ``clip_17`` callees)."""
        k = self._lit.get(name)
        if k is None:
            self._settle(name)
            k = self._lit[name]
        return k

    def _settle(self, start: str) -> None:
        """canon's work: post order over operands, every instruction reached remembered.
        Contents are numbered in ``lit_ids``, shared by the snapshots of one trace, so that
        keys stay flat and equal contents get equal keys in every snapshot."""
        lit, pa, ids = self._lit, self.param_arg, self.lit_ids
        stack, entered = [start], set()
        while stack:
            n = stack[-1]
            if n in lit:
                stack.pop()
                continue
            i = self.top.get(n)
            if i is None or i.opcode == "parameter" or i.opcode in _IMPURE:
                lit[stack.pop()] = n
                continue
            if not i.operands:
                lit[stack.pop()] = _key(i)
                continue
            ops = [pa.get(o, o) for o in i.operands]
            todo = [o for o in ops if o not in lit]
            if todo and n not in entered:
                entered.add(n)
                stack.extend(todo)
                continue
            subs = [lit.get(o, o) for o in ops]  # (an operand still open: a cycle, no literal)
            stack.pop()
            lit[n] = n if any(isinstance(k, str) for k in subs) else \
                ("literal", ids.setdefault((_key(i), tuple(subs)), len(ids)))

    def norm_operands(self, i: Instruction) -> tuple:
        pa = self.param_arg
        return tuple(self.canon(pa.get(o, o)) for o in i.operands)

    def index(self) -> None:
        if self.by_key is not None:
            return
        self.by_key, self.by_loose = {}, {}
        for i in self.top.values():
            self.by_key.setdefault(_key(i), []).append(i)
            self.by_loose.setdefault(_loose_key(i), []).append(i)


# ---------------------------------------------------------------------------------------
# The trace
# ---------------------------------------------------------------------------------------

@dataclass(slots=True)
class Removal:
    """What happened to one top-level instruction that a pass removed."""

    name: str  # its name in the snapshot before the pass
    computation: str
    opcode: str
    fate: str
    fusion: str | None = None  # the fusion instruction it now lives in (fate "fused")
    into: str | None = None  # what took its place (name after the pass), when known


@dataclass(slots=True)
class PassStep:
    """One pass: the instructions it removed, added and renamed (snapshot-local names)."""

    index: int  # the dump's sequence number
    pipeline: str
    name: str  # the pass (after_pass of the snapshot)
    path: Path
    kind: str  # classify_pass(name)
    removed: list[Removal] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # old name -> new name
    fates: dict[str, str] = field(default_factory=dict)  # before-instruction -> fate here
    _by_name: dict[str, Removal] | None = None
    # instruction (snapshot-local name) -> fusions this pass copied it into; fusion passes
    # duplicate a producer into several consumers, and it may stay top-level as well
    copies: dict[str, list[str]] = field(default_factory=dict)
    # instruction -> fusion: a fusion pass copied it into fusions and fused all its users,
    # leaving the top-level original without users (GPU priority fusion leaves such
    # constants for the next DCE): its value now lives in the fusion
    orphaned: dict[str, str] = field(default_factory=dict)
    # instruction -> what its users were folded into: a constant-folding pass folded all
    # its users and left it without users for DCE (foldorphans.py)
    fold_orphans: dict[str, str | None] = field(default_factory=dict)
    # instruction -> the operand holding its value: rebuilt in place by this pass under its
    # own name and left without users (passorphans.py)
    rebuilt_orphans: dict[str, str | None] = field(default_factory=dict)

    def removed_by_name(self) -> dict[str, Removal]:
        if self._by_name is None or len(self._by_name) != len(self.removed):
            self._by_name = {r.name: r for r in self.removed}
        return self._by_name

    @property
    def num_removed(self) -> int:
        return len(self.removed)

    @property
    def num_added(self) -> int:
        return len(self.added)

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.added or self.renamed)

    def __str__(self) -> str:
        return (f"{self.index:04d} {self.pipeline}/{self.name}: -{self.num_removed} "
                f"+{self.num_added} ~{len(self.renamed)}")




def _diff_step(prev: _Snap, cur: _Snap, snap: PassSnapshot,
               partitioning: bool = False) -> PassStep:
    kind = classify_pass(snap.after_pass)
    step = PassStep(snap.index, snap.pipeline, snap.after_pass, snap.path, kind)
    ptop, ctop = prev.top, cur.top
    removed = [n for n, i in ptop.items()
               if n not in ctop or ctop[n].opcode != i.opcode]
    added = [n for n, i in ctop.items()
             if n not in ptop or ptop[n].opcode != i.opcode]
    if kind == "rewritten":  # gpu2: a view whose users were forwarded (passorphans.py)
        step.rebuilt_orphans = rebuilt_orphans(prev, cur, _same_values)
    if not removed and not added:
        return step
    same: dict[str, str] = {}
    if partitioning:
        # the Shardy round trip rebuilds the module and renumbers names: a name left in
        # place may now belong to another instruction. Only a name whose instruction is
        # identical and reads the same (kept) operands is kept; the rest is matched anew.
        for n, c in ctop.items():
            p = ptop.get(n)
            if p is not None and _key(p) == _key(c) and p.operands == c.operands and \
                    all(same.get(o) == o for o in c.operands):
                same[n] = n
        removed = [n for n in ptop if n not in same]
        added = [n for n in ctop if n not in same]
    step.added = added
    removed_set = set(removed)
    added_set = set(added)
    # a conditional removed with no conditional added: its branches were inlined (selects)
    gone = [n for n in prev.branch_arg if n in removed_set]
    if gone and not any(ctop[n].opcode == "conditional" for n in added):
        for n in gone:
            prev.param_arg.update(prev.branch_arg[n])
        prev._lit.clear()

    # cur name -> prev name for everything that survived or was renamed.
    c2p: dict[str, str] = {n: n for n in ctop if n not in added_set}

    def cur_leaf(o: str):
        k = cur.canon(o)
        return "\0" + o if isinstance(k, str) else k

    # Renames: an added instruction identical (opcode, shape, attributes, operands after
    # renaming) to a removed one. Text order is post order, so operands come first.
    if partitioning and added and removed:
        _clone_renames(prev, cur, removed, added, c2p, step.renamed)
    taken: dict[str, str] = {}
    if removed:
        cand: dict[tuple, list[Instruction]] = {}
        for n in removed:
            if n in step.renamed:
                continue
            i = ptop[n]
            cand.setdefault(_key(i) + (prev.norm_operands(i),), []).append(i)
        ties: dict[str, list[str]] = {}
        leaf_groups = [[i.name for i in v] for v in cand.values()
                       if len(v) > 1 and not v[0].operands]
        sigs: dict = {}
        # cpu5: a constant the folder made is not a rename of a look-alike it consumed
        fres = folded_results(ptop, ctop, removed, added) if kind == "folded" else set()
        for n in added:
            if n in c2p or n in fres:
                continue
            a = ctop[n]
            ops = tuple(prev.canon(c2p[o]) if o in c2p else cur_leaf(o) for o in a.operands)
            lst = cand.get(_key(a) + (ops,))
            if lst:
                k = 0
                if len(lst) > 1:  # identical candidates: prefer the one with a's metadata
                    # (the Shardy round trip merges identical constants: users mixed)
                    js = same_computation(prev.module, cur.module, a, lst, sigs) \
                        if partitioning else range(len(lst))  # cpu8b (compsig.py)
                    k = js[_best_candidate(prev, a, [lst[j] for j in js],
                                           None if partitioning else cur, c2p)]
                    if partitioning and a.operands and len(js) > 1:  # usertrees.py
                        deep = deep_user_match(prev.users, ptop, cur.users, ctop, a,
                                               [lst[j] for j in js])
                        if deep and js.index(k) not in deep:
                            k = js[deep[0]]
                    ties[n] = [x.name for x in lst]
                r = lst.pop(k)
                c2p[n] = r.name
                step.renamed[r.name] = n
        if ties and not partitioning:  # old5: a tie taken wrongly, seen from its users
            repair_ties(ties, added, c2p, step.renamed, cand, ptop, ctop,
                        lambda a, ops: cand.get(_key(a) + (ops,)),
                        lambda o: prev.canon(c2p[o]) if o in c2p else cur_leaf(o),
                        prev.canon, lambda i: _key(i) + (prev.norm_operands(i),), cur.users)
            align_leaf_ties(leaf_groups, c2p, step.renamed, ptop, ctop, cur.users)
        # a replacement printed under the name of the instruction it replaced
        taken = find_takeovers(
            ptop, ctop, added_set, cand, lambda i: _key(i) + (prev.norm_operands(i),),
            lambda a: _key(a) + (tuple(prev.canon(c2p[o]) if o in c2p else cur_leaf(o)
                                       for o in a.operands),))
        step.renamed.update(taken)
        c2p.update((n, r) for r, n in taken.items())  # the name n now computes what r did
        if kind == "inlined":  # gpu2: call#i -> inlined root#i (passorphans.py)
            for n, c in inlined_projections(prev, cur, removed, added_set,
                                            step.renamed).items():
                c2p[c] = n
                step.renamed[n] = c
            for n, c in inlined_roots(prev, cur, removed, added_set, step.renamed).items():
                c2p[c] = n  # the root's copy, where the call was read
                step.renamed[n] = c
    if partitioning and added and removed:
        _loose_renames(prev, cur, removed, added, c2p, step.renamed)
        for k in [k for k, v in step.renamed.items() if k == v]:
            del step.renamed[k]
        step.added = [n for n in added if c2p.get(n) != n]
        removed = [n for n in removed if c2p.get(step.renamed.get(n, n)) != n]
        removed_set = set(removed)
    p2c = {p: c for c, p in c2p.items()}

    # Fusion: follow removed instructions into fused computations, matching by structure.
    fused_into: dict[str, str] = {}
    truly_removed = [n for n in removed if n not in step.renamed]
    if truly_removed:
        _match_fusions(prev, cur, c2p, removed_set, fused_into, step.copies)
    if kind == "fused":
        for n, fus in step.copies.items():
            c = p2c.get(n)
            if c in ctop and fus and prev.users.get(n) and not cur.users.get(c) and \
                    cur.roots.get(ctop[c].computation) != c:
                step.orphaned[n] = fus[0]

    twins: dict[tuple, str] | None = None
    pure_twins: dict[tuple, str] | None = None
    sigc: dict = {}
    sigp: dict = {}
    loop_elems: dict[tuple, str | None] | None = None
    new_loops: dict[str, str] | None = None
    inits: dict[str, str] = {}
    elem_cache: dict = {}
    relaid: dict[str, str] | None = None
    for n in truly_removed:
        i = ptop[n]
        rem = Removal(n, i.computation, i.opcode, kind)
        if partitioning and _constant_like(prev, n):
            # the Shardy round trip merges identical constants (and their broadcasts)
            if twins is None:
                twins = {}
                for c in ctop.values():  # cpu8b: one survivor per computation (compsig.py)
                    twins.setdefault(_unsharded(_key(c)) + merged_key(cur.module, c, sigc) +
                                     (tuple(cur_leaf(o) for o in c.operands),), c.name)
            t = twins.get(_unsharded(_key(i)) + merged_key(prev.module, i, sigp) +
                          (tuple(prev.canon(o) for o in i.operands),))
            if t is not None:
                rem.fate, rem.into = "merged", t
                step.removed.append(rem)
                continue
        if partitioning and n not in fused_into:
            if pure_twins is None:
                pure_twins = _surviving_twins(prev, ptop, p2c, removed_set)
            t = pure_twins.get(_twin_key(prev, i))
            if t is not None:  # the round trip's import merges identical pure code too
                rem.fate, rem.into = "merged", t
                step.removed.append(rem)
                continue
        if n in fused_into:
            rem.fate, rem.fusion = "fused", fused_into[n]
        else:
            if new_loops is None:  # loops4: a loop a pass cloned or rebuilt, its init
                new_loops = rebuilt_loops(ptop, ctop, truly_removed, added)
                inits = init_tuples(ptop, ctop, prev.users, cur.users, new_loops)
                step.rebuilt_orphans.update((t, v) for t, v in inits.items() if t in ctop)
            rem.into = new_loops.get(n) or inits.get(n) or replacement(prev, cur, n, p2c)
            if rem.into is None and not partitioning:  # rebuilt on another shape (relaid.py)
                relaid = rebuilt_once(relaid, prev, cur, truly_removed, added_set, p2c)
                rem.into = relaid.get(n)
            if rem.into is None and i.opcode == "get-tuple-element":  # loops3
                if loop_elems is None:
                    loop_elems = rebuilt_elements(ptop, ctop, added)
                rem.into = rebuilt_element(ptop, n, removed_set, loop_elems) or \
                    loop_element(ptop, ctop, n, new_loops, elem_cache)  # loops4
                if rem.into is None and "tuple-simplifier" in snap.after_pass.lower():
                    rem.into = forwarded_element(ptop, ctop, n, p2c)  # cpu8b (tuplefwd.py)
            users = prev.users.get(n)
            is_root = prev.roots.get(i.computation) == n
            if kind == "fused" or (kind == "inlined" and i.computation not in cur.roots):
                pass  # (the callee the call inliner copied from is gone)
            elif not users and not is_root:
                rem.fate = "removed"  # dead code, whatever pass dropped it
            elif i.opcode == "get-tuple-element" and all(
                    u in removed_set and hands_back(ptop, u) for u, _ in users):
                rem.fate = "removed"  # its tuple became p: dead with it (tuplefwd.py)
            elif kind == "removed" and rem.into is not None and rem.into != n:
                # tuple-simplifier / barrier expansion forwarded the value it carried:
                # its users now read rem.into; it is not dead code
                rem.fate = "rewritten"
        if rem.into is not None and rem.into in added_set:
            rem.into = _canonical_rewrite(cur, added_set, i.opcode, rem.into)
        step.removed.append(rem)
    for n in taken.values():  # the replaced instruction: its value is now the survivor's
        i = ptop[n]
        step.removed.append(Removal(n, i.computation, i.opcode, "rewritten", into=n))
    # Merged into a bigger instruction and read back as a slice of it (dot-merger: two dots
    # with a common operand become one dot and two slices), or rebuilt as a new instruction
    # read back through a reshape or get-tuple-element (gather simplifier, reshape-mover,
    # cuDNN calls): the new instruction computes the value. A layout-only op a pass took
    # out holds its operand's values, re-viewed: the operand, still there, holds them too.
    for rem in step.removed:
        v = ctop.get(rem.into or "")
        if v is not None and v.opcode in _VIEWS and rem.into in added_set and \
                v.operands and v.operands[0] in added_set:
            lst = step.copies.setdefault(rem.name, [])
            if v.operands[0] not in lst:
                lst.append(v.operands[0])
        i = ptop[rem.name]
        if rem.fate == "rewritten" and i.operands and (
                i.opcode in LAYOUT_ONLY or sums_nothing(ptop, i)):
            o = surviving_source(ptop, p2c, i.operands[0])
            if o is not None and o in ctop:
                lst = step.copies.setdefault(rem.name, [])
                if o not in lst:
                    lst.append(o)
    # A value whose users were all rewritten in the same pass lives on where they do:
    # algsimp turns transpose(dot(a, b)) into dot(b, a), taking out both at once.
    by_name = {r.name: r for r in step.removed}
    if kind == "removed":
        # a tuple the tuple simplifier took apart: every get-tuple-element reading it was
        # forwarded to the element in the same pass, so it was not dead code; its values
        # live on in its elements
        for rem in step.removed:
            users = prev.users.get(rem.name)
            if rem.fate == "removed" and rem.opcode == "tuple" and users and all(
                    u in by_name and by_name[u].fate == "rewritten" for u, _ in users):
                rem.fate = "rewritten"
    _forward_views(prev, step.removed, by_name, p2c)
    if kind == "fused":  # gpu2: merged into a multi-output fusion (passorphans.py)
        multi_output_homes(cur, step.removed)
    outlined_calls(cur, step.removed)  # JAX 0.4.x XLA:CPU's parallel task assigner
    survivors: dict[tuple, str] | None = None
    wrappers: dict[tuple, list[str]] | None = None
    for rem in reversed(step.removed):  # post order reversed: users first
        if rem.into is not None or rem.fate not in ("rewritten", "merged"):
            continue
        if rem.fate == "merged":
            # CSE keeps the first of identical instructions; for operand-less ones
            # (constants, iotas) that is the first identical one left in the computation
            i = prev.top[rem.name]
            if not i.operands:
                if survivors is None:
                    survivors = {}
                    for c in cur.top.values():
                        if not c.operands:
                            survivors.setdefault((c.computation,) + _key(c), c.name)
                rem.into = survivors.get((i.computation,) + _key(i))
            continue
        users = prev.users.get(rem.name, ())
        back = element_read_back(prev, ctop, p2c, rem.name) if users else None
        if back is not None:  # shard4: read back out of a tuple taken apart
            rem.into = back
            continue
        i = prev.top[rem.name]
        if wrappers is None:
            wrappers = _wrappers(cur, added_set)
        own = wrappers.get(_wrapper_key(i))
        if own is not None and len(own) == 1:  # rebuilt on its own (dot_decomposer...)
            inner = _canonical_rewrite(cur, added_set, i.opcode, own[0])
            if inner != own[0]:
                rem.into = inner
                continue
        outs = {by_name[u].into for u, _ in users if u in by_name}
        if users and all(u in by_name for u, _ in users) and len(outs) == 1:
            rem.into = outs.pop()
    if kind == "folded":
        step.fold_orphans = folding_orphans(ptop, ctop, prev.users, cur.users, prev.roots,
                                            step.removed)
    return step


_VIEW_OPS = ("reshape", "bitcast", "transpose", "copy")


def _wrapper_key(i: Instruction) -> tuple:
    md = i.metadata
    return (i.computation, i.shape.text.split("{")[0], md.op_name if md else None,
            md.stack_frame_id if md else None)


def _wrappers(cur: _Snap, added: set[str]) -> dict[tuple, list[str]]:
    """New views that wrap a new instruction of another opcode, by (computation, shape,
    op_name, frame): canonicalizing passes rebuild each instruction on its own as
    ``reshape(op(reshape(a), reshape(b)))``, the wrapper giving back the old shape with the
    old metadata in the old computation. Found this way, a rebuilt dot whose user was
    rebuilt in the same pass lives on in its own new dot, not in its user's (zoo moe_top1
    on 8 H100s, dump 0023 dot_decomposer: ``dot.9 = f32[3,4,32]`` is
    ``reshape.45(dot.14)``; its user ``dot.10`` is ``reshape.48(dot.15)``), and an
    elementwise op layout normalization rebuilt on physical shapes lives on in its new op
    (zoo transformer_layer on 8 H100s: ``integer_pow.8``). Loop passes that rebuild a body
    make new computations: nothing there is keyed like a removed instruction."""
    out: dict[tuple, list[str]] = {}
    for n in added:
        x = cur.top.get(n)
        if x is None or x.opcode not in _VIEW_OPS or len(x.operands) != 1 or \
                x.metadata is None or not x.metadata.op_name:
            continue
        inner = cur.top.get(x.operands[0])
        if inner is None or inner.name not in added or inner.opcode in _VIEW_OPS:
            continue
        out.setdefault(_wrapper_key(x), []).append(n)
    return out


def _same_values(i: Instruction, o: Instruction) -> bool:
    """``i`` holds exactly the elements of its operand ``o`` in the same order: a reshape,
    bitcast or copy, or a broadcast/transpose that adds nothing and moves nothing."""
    if i.shape.is_tuple or o.shape.is_tuple or i.shape.num_elements != o.shape.num_elements:
        return False
    if i.opcode in ("reshape", "bitcast", "copy"):
        return True
    if i.opcode in ("broadcast", "transpose"):
        return i.dimensions == tuple(range(len(i.shape.dims)))
    return False


def _forward_views(prev: _Snap, removed: list[Removal], by_name: dict[str, Removal],
                   p2c: dict[str, str]) -> None:
    """An identity view (a reshape, a broadcast that adds nothing...) that a pass removed
    while no user of it survived holds its operand's value: algsimp folded it away and the
    value lives on where the operand's does (in the operand itself when that survived),
    not in the consumer that replaced its users. Post order: operands first."""
    for rem in removed:
        if rem.into is not None or rem.fate != "rewritten":
            continue
        i = prev.top.get(rem.name)
        if i is None or len(i.operands) != 1:
            continue
        o = prev.top.get(i.operands[0])
        if o is None or not _same_values(i, o):
            continue
        ro = by_name.get(o.name)
        if ro is None:
            rem.into = p2c.get(o.name)
        elif ro.fate in ("rewritten", "merged", "folded") and ro.into is not None:
            rem.into = ro.into


def _canonical_rewrite(cur: _Snap, added: set[str], opcode: str, into: str) -> str:
    """Canonicalizing passes (dot_decomposer, convolution-canonicalization, gemv and
    reduce rewriters) rebuild an instruction as a new one of the same opcode on reshaped
    or transposed operands, and wrap it in a new reshape/transpose giving the old shape:
    dot(a, b) -> reshape(dot(reshape(a), reshape(b))). The users read the wrapper, but the
    work (the dot) is the new instruction under it: that is where the value is computed."""
    x = cur.top.get(into)
    hops = 0
    while x is not None and x.opcode in _VIEW_OPS and x.name in added and \
            len(x.operands) == 1 and hops < 4:
        x = cur.top.get(x.operands[0])
        hops += 1
    if hops and x is not None and x.name in added and x.opcode == opcode:
        return x.name
    return into


_IMPURE = {"parameter", "rng", "rng-bit-generator", "custom-call", "infeed", "outfeed",
           "send", "recv", "after-all", "while", "conditional", "call", "all-reduce",
           "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "tuple",
           "get-tuple-element", "opt-barrier"}


def _twin_key(prev: _Snap, i: Instruction) -> tuple | None:
    if i.opcode in _IMPURE or not i.operands:
        return None
    return (i.computation,) + _key(i) + (prev.norm_operands(i),)


def _surviving_twins(prev: _Snap, ptop: dict, p2c: dict[str, str],
                     removed: set[str]) -> dict[tuple, str]:
    """(computation, key, operands) of each instruction the partitioning step kept ->
    its name after the step. The Shardy round trip (HLO -> MLIR -> HLO) merges identical
    side-effect-free instructions on import, not only literals: fresh 13
    performer_favor_causal_lm on 8 CPUs, dump 0003 -> 0004, Adam's bias correction
    ``div.143 = f32[16] broadcast(sub.114)`` is gone and its reader ``div.144`` reads
    ``div.11``, the round trip's name for the identical ``div.138``: merged, not rewritten.
    Instructions with operands only (literals are matched elsewhere)."""
    out: dict[tuple, str] = {}
    for n, i in ptop.items():
        if n in removed or n not in p2c:
            continue
        k = _twin_key(prev, i)
        if k is not None:
            out.setdefault(k, p2c[n])
    return out


def _best_candidate(prev: _Snap, a: Instruction, lst: list[Instruction],
                    cur: _Snap | None = None, c2p: dict[str, str] | None = None) -> int:
    """Among identical removed instructions, the one ``a`` is a renamed copy of: the one
    with ``a``'s metadata, else the one whose call site ``a``'s metadata names (identical
    constants of two inlined callees differ only in where they were inlined), else the
    first. Those in the computation ``a``'s was cloned from come first, and where the
    metadata tells nothing apart, the one read as ``a`` is (loopstate)."""
    # a computation new in this snapshot (a clone): its copies come from the original
    own = own_candidates(a, lst) if a.computation not in prev.roots else []
    if own:
        return own[_best_candidate(prev, a, [lst[j] for j in own], cur, c2p)]
    lk = _loose_key(a)
    js = [j for j, r in enumerate(lst) if _loose_key(r) == lk]
    if len(js) > 1 and cur is not None and c2p is not None:  # old5 (cooperands.py)
        co = by_co_operands(prev.users, prev.top, cur.users, cur.top, c2p, a,
                            [lst[j] for j in js])
        if co:
            js = [js[j] for j in co]
    if js:
        same = same_users(prev.users, prev.top, cur.users, cur.top, a,
                          [lst[j] for j in js]) if cur is not None and len(js) > 1 else []
        return js[same[0]] if same else js[0]
    am = a.metadata
    k = -1
    if am is not None:
        want = (am.op_name, am.stack_frame_id)
        k = next((j for j, r in enumerate(lst) if inlined_metadata(prev.call_site, r) == want), -1)
    if k < 0 and cur is not None and a.operands and len(lst) > 1:
        # twins with twin operands, metadata renumbered (fresh 14 grad_accum_fori_microbatches
        # dump 0007: the call inliner copies both ``i * 8`` index chains, of the inputs' and
        # of the labels' dynamic slice, with new stack frames): the users a few levels up
        # tell them apart, by shape (the inliner rewrote the op_names)
        same = deep_user_match(prev.users, prev.top, cur.users, cur.top, a, lst, by_shape=True)
        k = same[0] if same else -1
    return k if k >= 0 else 0


def _inner_leaf(o: str, body) -> object:
    i = body.by_name.get(o)
    if i is not None and not i.operands and i.opcode != "parameter":
        return _key(i)
    return "\0" + o


def _match_fusions(prev: _Snap, cur: _Snap, c2p: dict[str, str], removed: set[str],
                   fused_into: dict[str, str], copies: dict[str, list[str]]) -> None:
    """Map instructions of new or grown fused computations to the prev snapshot's."""
    pmod, cmod = prev.module, cur.module
    prev.index()
    by_key, by_loose = prev.by_key, prev.by_loose
    assert by_key is not None and by_loose is not None
    bodies, clones = FusedBodies(prev, removed, _key), KernelClones(prev, removed)  # copies

    def inner_op(o: str, inner: dict, body) -> object:
        if o in inner:
            return prev.canon(inner[o])
        return _inner_leaf(o, body)

    for f in cur.top.values():
        if f.opcode != "fusion" or not f.calls:
            continue
        old = prev.top.get(c2p.get(f.name, ""))
        body = cmod.by_name.get(f.calls[0])
        if body is None:
            continue
        if old is not None and old.opcode == "fusion" and old.calls:
            ob = pmod.by_name.get(old.calls[0])
            if ob is not None and len(ob.instructions) == len(body.instructions):
                continue  # unchanged fusion
        inner: dict[str, str] = {}
        prints = bodies.walk()
        for x in body.instructions:
            if x.opcode == "parameter":
                n = x.parameter_number
                if n is not None and n < len(f.operands):
                    o = f.operands[n]
                    inner[x.name] = c2p.get(o, o)
                    prints.param(x.name, inner[x.name])
                continue
            ops = tuple(inner_op(o, inner, body) for o in x.operands)
            prints.look(x)
            match = None
            for c in by_key.get(_key(x), ()):
                if prev.norm_operands(c) == ops:
                    if match is None or (c.computation == f.computation !=
                                         match.computation):
                        match = c  # identical ones in two computations: f's own
                    if c.computation == f.computation:
                        break
            if match is None:
                twin = prints.kept_clone(x)
                match = prev.top[twin] if twin is not None else None
            if match is None:
                hit = prints.body_copy(x)
                if hit is not None:  # a copy of a removed producer's body
                    producer, token, is_root = hit
                    inner[x.name] = producer if is_root else token
                    if is_root:
                        prints.matched(x, producer)
                        if producer in removed:
                            fused_into.setdefault(producer, f.name)
                        lst = copies.setdefault(producer, [])
                        if f.name not in lst:
                            lst.append(f.name)
                    continue
                loose = [c for c in by_loose.get(_loose_key(x), ()) if c.name in removed]
                if len(loose) == 1:
                    match = loose[0]
            if match is None:
                continue
            inner[x.name] = match.name
            prints.matched(x, match.name)
            if match.name in removed:
                fused_into.setdefault(match.name, f.name)
            lst = copies.setdefault(match.name, [])
            if f.name not in lst:
                lst.append(f.name)
        clones.follow(body, inner, f.name, fused_into, copies)
        # a new fusion stands for its root's instruction: later consumers match through it
        if f.name not in c2p and body.root in inner:
            c2p[f.name] = inner[body.root]
