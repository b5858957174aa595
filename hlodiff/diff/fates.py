"""What happened to each before instruction (optimization mode), from a Matching."""

from __future__ import annotations

from . import (anchors, duplicates, folding, forwarding, gemm_fates, gpu_cse,  # noqa: F401
               lookalikes, partition, reshard)  # partition: SPMD shard relation
from . import cse_first, cse_walk, folded_target, identities, spmd_cse  # old2; shard4; cse4
from . import cudnn_fused, folded_views, inplace, loop_pairs, normalization, onecell  # various
from . import gemm_converts, library_results, splitk, spmd_reshapes, sunk_broadcasts  # gpu8n..
from . import algsimp_twins, loop_twins, meta_survivors, onednn_softmax  # old5
from . import barrier_forward, cpu_cse_order, named_copies, narrow_dots  # cpu5; fresh 27
from . import comp_dedup, dead_pairs, flattened, layout_tuples, shared_bodies, strength_reduced  # cpu6; flat
from . import bitcast_views, first_dce, negated_sums  # oldh2
from . import folded_scales  # old3
from .canonical_twins import CanonicalTwins
from .dotrewrites import transposed_dots
from .fused_copies import copy_keys, kept_apart
from .reciprocals import rebuilt_reciprocals
from .regrouped_divides import regrouped, regrouped_reason
from .dotmerge import merged_reason  # twins3: dots the dot merger combined
from .match import Matching
from .shardmatch import cse_before_simplification, early_cse
from . import branch_rebuilds, loop_rebuilds
from .branch_rebuilds import rebuilt_branches
from .single_trip import single_trip_loops
from .result import InstructionFate
from .view import Node
from .value_facts import (ELEMENTWISE, LAYOUT_LIKE, NOT_FOLDED, PLUMBING, call_result,
                          constant_valued, cse_survivors, inliner_before_dce, live_nodes,
                          inlined_sum, sums_nothing, untraced_by_inlining, upcast_only)


class FateBuilder:
    def __init__(self, m: Matching):
        self.m = m
        self.B = m.before
        self.A = m.after
        self.cv_b = constant_valued(self.B)
        self.fold_b = constant_valued(self.B, iota=False)
        self.cv_a = constant_valued(self.A)
        self.live = live_nodes(self.B)
        self.flat_dead = flattened.dead_originals(self.B.module, self.B.nodes, self.live)
        self.cse_first = cse_before_simplification(self.A.module)  # (cse4: used below)
        self.recip, self.shared_div = spmd_cse.shared_divisors(  # cse4: CSE met them first
            m, rebuilt_reciprocals(m), self.cse_first)  # divisors algsimp made reciprocals
        self.sunk_dead = sunk_broadcasts.dead_scalar_broadcasts(m)  # cpu4
        # gpu helper: CSE inside the simplification loop, calls inlined first (gpu_cse.py)
        self.gpu_cse = gpu_cse.cse_in_simplification(self.A.module)
        # old2: CPU CSE walks the live graph in post order too (cse_walk.py)
        self.order = gpu_cse.post_order(self.B) if self.gpu_cse else \
            cse_walk.post_order(self.B, live_nodes(self.B))
        self.onednn = onednn_softmax.patterns(m)  # old5: rewritten before CSE
        self.survivor = cse_survivors(m, self.recip | set(self.onednn), self.order)
        self.sunk_dead |= algsimp_twins.sunk_twin_broadcasts(m, self.survivor, self.live)
        self.after_names: set[str] | None = None
        self._sf_cache: dict[int, InstructionFate] = {}
        self._tu: dict[int, list[int]] | None = None
        self.untraced = untraced_by_inlining(self.B.nodes)
        # gpu helper: SPMD per-device shapes are the global data partitioned (partition.py)
        self.nparts = partition.num_partitions(self.B.module, self.A.module)
        self.rebuilt = loop_rebuilds.rebuilt_loops(self)
        self.once = single_trip_loops(self.B)  # old: scans of length 1
        self.deduped = comp_dedup.replaced(self.B, self.rebuilt)  # gpu: identical bodies
        self.branches = rebuilt_branches(self.B, self.A, m.b2a)  # conditional simplifier
        gone = self._vanished()
        self.with_identity = identities.removed_with_identities(  # old2: x + 0 ...; gpu: max(x, -inf)
            self.B, self.A, self.nparts > 1 or self.gpu_cse)
        gone |= self.with_identity
        self.survivor = cse_first.sharded_apart(m, cse_survivors(  # shard4, cse4: sharded apart
            m, gone | self.recip | set(self.onednn), self.order) if gone else self.survivor,
            self.cse_first)
        self.borrowed = self._borrowed()
        self.sunk_copies = {} if self.gpu_cse or self.cse_first else \
            sunk_broadcasts.sunk_copies(m, self.survivor)  # cpu5: each copy sunk first
        if self.sunk_copies:
            self.sunk_dead = sunk_broadcasts.dead_scalar_broadcasts(m, set(self.sunk_copies))
        self.copy_ops = cpu_cse_order.copy_operands(self) if self.sunk_copies else {}
        self.early_cse = early_cse(self.B) if self.cse_first else {}
        self.upcast = normalization.upcast(self)
        self.dot_t, self.dot_ties = transposed_dots(m)
        self.dot_t.update(strength_reduced.reduced_transposed_dots(m, self.dot_t))
        self.inline_first = inliner_before_dce(self.A.module)
        self.first_dead = set() if self.inline_first else first_dce.first_dce_dead(self.B.module)
        self.views = forwarding.alias_views(self.A)
        self.fed_fold = folding.consumed_by_folding(self.B, self.fold_b, self.live, m.after.module)
        self.chain_twin = gpu_cse.chain_twins(self.B, self.nparts) if self.gpu_cse else {}
        self.canon = CanonicalTwins(m)  # old3: identical once algsimp normalized them
        self.late_views: set[int] = set()  # became a view after layout assignment
        self._named: tuple | None = None  # cpu5

    def _borrowed(self) -> dict[int, int]:
        """CSE survivor the matcher left open -> the after partner of a copy merged into it.
        Identical copies are interchangeable: the matcher may pair any of them with the one
        instruction left after CSE, but that instruction is the survivor's."""
        b2a = self.m.b2a
        out: dict[int, int] = {}
        for c, keep in self.survivor.items():  # copies in instruction order
            if b2a[keep] < 0 and b2a[c] >= 0 and keep not in out:
                out[keep] = b2a[c]
        return out

    def _sharded_tuple(self, b: Node, a: Node) -> bool:
        """A tuple of a partitioned program whose elements are the same or shards of the
        before's (the per-device program's root tuple, say): not rebuilt."""
        sb, sa = b.inst.shape, a.inst.shape
        if self.nparts <= 1 or not sb.is_tuple or not sa.is_tuple:
            return False
        lb, la = list(sb.leaves()), list(sa.leaves())
        return len(lb) == len(la) and all(
            x.dims_text == y.dims_text or partition.shard_ways(x, y, self.nparts) > 0
            for x, y in zip(lb, la))

    def _vanished(self) -> set[int]:
        """Constant-valued nodes (constants, their broadcasts) whose every user is simplified
        away: algsimp deletes them together with their users, before CSE could merge them.
        Seeds: open, live, non-foldable nodes that CSE does not explain."""
        B, m, cv, live, surv = self.B, self.m, self.cv_b, self.live, self.survivor
        fold = self.fold_b
        nodes = B.nodes
        gone: set[int] = set()
        out: set[int] = set()
        grouped = set(surv) | set(surv.values())  # gpu2
        spmd = spmd_cse.EarlyMerges(B, surv) if self.cse_first else None  # cse4
        # old2: copies CSE would have met before the copy that survived (cse_walk.py)
        early = cse_walk.gone_before_survivor(B, m, surv, self.order) if self.order else {}
        for n in reversed(nodes):
            i = n.idx
            if n.alias >= 0 or m.b2a[i] >= 0 or not live[i] or n.opcode == "parameter":
                continue
            if fold[i] and (n.opcode not in NOT_FOLDED or self._folds_reshape(n)):
                continue  # folded, not simplified
            if cv[i] and not fold[i] and gpu_cse.iota_rebuilt(B, n):
                gone.add(i)  # gpu2: algsimp turns reshape/broadcast(iota) into an iota
                out.add(i)
                continue
            if self.gpu_cse and folding.divisor_only(B, cv, n):
                gone.add(i)  # gpu2: algsimp makes it a reciprocal before CSE (folding.py)
                out.add(i)
                continue
            if cv[i] and not fold[i] and (self.gpu_cse and i in grouped and not gpu_cse.iota_view(
                    B, n) or spmd and spmd.merged(i)):  # cse4: 8 CPUs, CSE first (spmd_cse.py)
                continue  # gpu2: the first algsimp round leaves it; CSE merges (gpu_cse.py)
            if cv[i] and not fold[i] and i in early:
                if early[i]:
                    gone.add(i)
                    out.add(i)
                continue
            if cv[i] and not fold[i]:
                k = surv.get(i)
                if k is not None and m.b2a[k] >= 0 and \
                        self.A.nodes[m.b2a[k]].opcode == B.nodes[k].opcode:
                    # an identical copy lives on unchanged: CSE merged this one into it
                    continue
                # index arithmetic on iotas: algsimp rewrites it (before CSE runs)
                gone.add(i)
                out.add(i)
            elif cv[i]:
                if n.users and all(u in gone for u in n.users):
                    gone.add(i)
                    out.add(i)
            elif i not in surv and not (self.untraced[i] and (self.gpu_cse or inlined_sum(
                    B, n))) and not layout_tuples.loop_init(B, n, m.b2a):  # gpu2: inlined;
                # cpu6: loop state; old3: a reduce inlined with its call keeps its init
                gone.add(i)
        return out

    def named_index(self) -> tuple:
        """cpu5: literal copies by op_name, before loop computations (named_copies.py)."""
        if self._named is None:
            self._named = (named_copies.FusedCopies(self.A, self.m.a2b),
                           named_copies.loop_comps(self.B))
        return self._named

    def _folds_reshape(self, n: Node, computed: bool = False) -> bool:
        """A reshape of a constant, or of a value constant folding evaluates, is folded
        with it (a reshape of a reshape is merged into one by algsimp first). ``computed``:
        only the latter (algsimp makes a reshape of a literal a literal of its own)."""
        if n.opcode != "reshape" or not n.raw_operands:
            return False
        B = self.B
        o = B.nodes[B.resolve(n.raw_operands[0])]
        for _ in range(4):  # through reshapes and identity broadcasts algsimp takes out first
            if o.raw_operands and (o.opcode == "reshape" or o.opcode == "broadcast" and
                                   o.mdims == B.nodes[o.raw_operands[0]].mdims):
                o = B.nodes[B.resolve(o.raw_operands[0])]
        return (o.opcode == "constant" and not computed) or \
            (self.fold_b[o.idx] and o.opcode not in NOT_FOLDED)

    def where(self, a: Node) -> tuple[str | None, str | None]:
        if a.fusion >= 0:
            f = self.A.nodes[a.fusion]
            return f.name, f.inst.fusion_kind
        return None, None

    def kernel_of(self, a: Node) -> str:
        return self.A.nodes[a.home].name

    def _replacement(self, b: Node) -> Node | None:
        """The after node that now does b's job: a see-through op at b's place, else the
        partner of b's nearest matched user."""
        A, m = self.A, self.m
        # forwarded value: a user's partner reads the partner of one of b's operands
        # directly (an identity removed, a get-tuple-element forwarded): that holds b's value
        for u in b.users:
            y = m.b2a[u]
            if y < 0:
                continue
            uops = A.nodes[y].operands
            todo, seen = list(b.operands), 0
            while todo and seen < 8:  # through operands algsimp removed as well
                o = todo.pop(0)
                seen += 1
                yo = m.b2a[o]
                if yo >= 0:
                    if yo in uops and A.nodes[yo].mdims == b.mdims:
                        return A.nodes[yo]
                elif not self.cv_b[o]:
                    todo.extend(self.B.nodes[o].operands)
        for u in b.users:
            y = m.b2a[u]
            if y < 0:
                continue
            for r in A.nodes[y].raw_operands:
                rn = A.nodes[r]
                if rn.opcode in ("bitcast", "copy", "transpose") and m.a2b[r] < 0:
                    return rn
            return forwarding.tuple_slot(self.B, A, b, u, y) or A.nodes[y]  # shard4
        if b.opcode in ("dot", "convolution"):  # (fresh 19 mh_moe on 8 H100s: a dot's
            return None  # weight never holds the dot's value; a reduce's operand can)
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
        if m.how.get(b.idx) == "identical":  # the same program on both sides
            f.fate, f.reason = "kept", "unchanged (the modules hold the same program)"
            self._set_after(f, A.nodes[m.b2a[b.idx]])
            return f
        if not self.live[b.idx] and not self.inline_first and (  # oldh2 (first_dce.py)
                (b.comp, b.name) in self.first_dead or flattened.dead_original(self.flat_dead, b)):
            f.reason = "dead: removed by dead-code elimination before the call inliner ran"
            return f
        if self.untraced[b.idx] and b.opcode not in ("parameter", "call") and \
                (self.live[b.idx] or b.opcode != "get-tuple-element") and \
                not flattened.dead_original(self.flat_dead, b):
            f.fate = "inlined"
            f.reason = f"inlined from {b.comp} at call {b.site}; rebuilt on the inlined call's inputs"
            y = m.b2a[b.idx]
            if y >= 0:
                self._set_after(f, A.nodes[y])
            return f
        if b.idx in self.onednn:  # old5 (after the inliner's own fate)
            f.fate, f.reason = "rewritten", "softmax rewritten into a oneDNN custom call"
            self._set_after(f, A.nodes[self.onednn[b.idx]])
            return f
        x = self.dot_t.get(b.idx)
        if x is not None and x < 0 and self.live[b.idx]:
            f.fate = "uncertain"
            f.candidates = [A.nodes[c].name for c in self.dot_ties.get(b.idx, ())]
            f.reason = ("transpose(dot(a, b)) rebuilt as dot(b, a) by algebraic simplification; "
                        "several new dots read the same values: " + ", ".join(f.candidates))
            return f
        if x is not None and self.live[b.idx]:
            a = A.nodes[x]
            f.fate = "rewritten"
            self._set_after(f, a)
            f.reason = (f"transpose(dot(a, b)) rebuilt as one {a.name} = dot(b, a) by algebraic "
                        f"simplification: the {'transpose is' if b.opcode == 'transpose' else 'dot lives on as'} "
                        f"{'folded into ' + a.name if b.opcode == 'transpose' else a.name}")
            if self.nparts > 1 and (rs := reshard.summed_transpose(m, b, a)) is not None:
                self._set_after(f, rs)  # cpu8: the partials' sum, in the all-reduce
                f.reason += f"; the summed value is in {rs.name} (each device's dot is partial)"
            if a.opcode == "multiply":  # then dot strength reduction (strength_reduced.py)
                f.reason = strength_reduced.reason(b, B, a, self.nparts)
            return f
        once = self.once.get(b.idx)  # a loop that runs once: replaced by its body
        if once is not None and b.opcode not in ("parameter", "constant") and self.live[b.idx]:
            f.fate = "rewritten"
            f.reason = (f"{once} runs once: the while-loop simplifier replaced it by its "
                        f"body, inlined where the loop stood")
            if m.b2a[b.idx] >= 0 and b.opcode != "while":
                self._set_after(f, A.nodes[m.b2a[b.idx]])
            return f
        loop = self.rebuilt.get(b.idx) or self.branches.get(b.idx)
        if loop is not None and self.cse_first and (b.idx in self.survivor or
                                                    b.idx in self.early_cse):
            loop = None  # 8 CPUs: the partitioner's cleanup CSE merged it before loop passes
            # (also a no-op view there: fresh 27 paged_attention's rotary sin/cos broadcasts)
        if loop is not None and b.opcode not in ("parameter", "call") and self.live[b.idx]:
            if b.ctx in self.deduped:  # gpu: identical bodies (comp_dedup.py)
                return comp_dedup.fate(f, b, self.deduped[b.ctx])
            f.fate = "rewritten"
            f.reason = f"while loop rebuilt (loop-invariant code motion / simplifier) as {loop}"
            if b.idx not in self.rebuilt:
                f.reason = f"conditional branch rebuilt by the conditional simplifier as {loop}"
            y = m.b2a[b.idx]
            if y >= 0:
                self._set_after(f, A.nodes[y])
            return f
        if b.opcode == "tuple" and b.site is not None and not self.live[b.idx] and \
                m.b2a[b.idx] >= 0 and any(self.live[u] for u in self._tuple_users().get(b.idx, ())):
            # old5: an inlined callee's root tuple read only through get-tuple-elements,
            # which algsimp forwards (dropout_ln_rng tuple.83, rewritten at algsimp)
            f.fate, f.reason = "rewritten", "tuple plumbing simplified away (get-tuple-element forwarded)"
            return f
        if b.alias >= 0 and b.idx in self.early_cse:  # shard helper (shardmatch.early_cse)
            sb = B.nodes[self.early_cse[b.idx]]
            f.fate, f.into = "merged", sb.name
            f.reason = (f"identical to {sb.name}: merged by CSE, which the partitioner's "
                        "cleanup runs before algebraic simplification")
            return f
        t = self.chain_twin.get(b.idx)
        if t is not None and self.live[b.idx]:
            tb = B.nodes[t]
            f.fate, f.into = "merged", tb.name
            f.reason = (f"identical to {tb.name} once the first algebraic simplification "
                        "removed the identity ops under both (CSE)")
            y = m.b2a[B.resolve(t)]
            if y >= 0:
                self._set_after(f, A.nodes[y])
            return f
        if b.alias >= 0:
            if b.opcode == "call":
                f.fate, f.reason = "inlined", "call inlined into its caller"
                return f
            if b.opcode == "parameter":
                f.fate, f.reason = "inlined", f"parameter of inlined call {b.site}" if b.site \
                    else "parameter of a conditional branch inlined by the conditional simplifier"
                return f
            if b.opcode == "reshape" and self.fold_b[b.idx] and self._folds_reshape(b, True) \
                    and b.mdims != B.nodes[b.raw_operands[0]].mdims:  # folded with what it views
                # (of a literal, algsimp makes it a literal first: rewritten, below)
                f.fate, f.after = "folded", folded_target.new_constant(self, b)
                f.reason = "evaluated at compile time" + (f" into {f.after}" if f.after else "")
                return f
            r = B.resolve(b.idx)
            y = m.b2a[r]
            f.fate = "rewritten"
            if loop_pairs.keeps_call_element(B, b, r):  # loops4: the outer name stays
                f.fate, f.reason = "kept", "get-tuple-element of an inlined call, forwarded"
            elif b.opcode == "get-tuple-element" or b.opcode == "tuple":
                f.reason = "tuple plumbing simplified away"
                if b.site is None and b.opcode == "get-tuple-element" and b.raw_operands and \
                        B.nodes[b.raw_operands[0]].opcode == "parameter":  # inlined_branches.py
                    f.reason = ("conditional branch inlined by the conditional simplifier; "
                                "this parameter element is now the operand's")
            else:
                f.reason = f"no-op {b.opcode} removed (algebraic simplification)"
            if y >= 0:
                rs = reshard.reduced_output(A, A.nodes[y], B.nodes[r].op_name) \
                    if self.nparts > 1 else None  # shard2: the collective's summed value
                self._set_after(f, rs or A.nodes[y])
            elif r != b.idx and (sf := self._survivor_fate(B.nodes[r])).fate != "folded":
                f.after, f.fusion, f.fusion_kind = sf.after, sf.fusion, sf.fusion_kind
            return f
        if b.idx in self.with_identity and self.live[b.idx] and self.gpu_cse and self.nparts <= 1:
            identities.removed_fate(self, f, b)  # deleted with the identity it fed
            return f
        if branch_rebuilds.passed_through(B, b):
            f.reason = ("the computation hands back its parameter unchanged: tuple "
                        "simplification returns the parameter itself, and this element of it "
                        "was left without readers")
            return f
        if b.idx in self.sunk_dead:  # cpu4: left for DCE by broadcast sinking
            return sunk_broadcasts.dead_fate(f, b, m)
        if b.idx in self.sunk_copies and self.live[b.idx]:  # cpu5: sunk before CSE ran
            return sunk_broadcasts.copy_fate(f, b, B.nodes[self.sunk_copies[b.idx]], m)
        if b.idx in self.copy_ops and self.live[b.idx]:  # cpu5 (cpu_cse_order.py)
            return cpu_cse_order.merged_operand_fate(self, f, b, B.nodes[self.copy_ops[b.idx]])
        if barrier_forward.kept_read(self, f, b):  # gpu8: barrier expanded after tuple simp.
            return f
        x = barrier_forward.forwarded_element(B, b) if b.opcode == "get-tuple-element" and \
            m.b2a[b.idx] < 0 and self.live[b.idx] and not self.gpu_cse else -1
        if x >= 0 and barrier_forward.barriers_gone(A) and \
                barrier_forward.forwarded_fate(self, f, b, B.nodes[x]):  # cpu5
            return f
        if b.idx in self.recip:
            f.fate = "rewritten"
            f.reason = ("divisor rebuilt as a reciprocal: algebraic simplification turned "
                        "x / f(y) into x * f'(y) (e.g. x / broadcast(y) -> x * broadcast(1/y))")
            y = m.b2a[b.idx]
            if y >= 0:
                self._set_after(f, A.nodes[y])
            return f
        nf = normalization.normalized(self, b)
        if nf is not None:
            f.fate = nf
            f.reason = {"folded": "narrow-float constant converted to f32 and folded "
                                  "(float normalization)",
                        "removed": "narrow-float broadcast replaced by a broadcast of the "
                                   "converted value (float normalization); DCE deleted it",
                        "rewritten": "no-op convert: its operand is computed in f32 after "
                                     "float normalization",
                        "merged": "identical to the convert float normalization inserted "
                                  "for an earlier user (CSE)"}[nf]
            y = m.b2a[b.idx]
            if y >= 0 and nf != "removed":
                self._set_after(f, A.nodes[y])
            return f
        if spmd_reshapes.operand_value(self, f, b) or spmd_reshapes.moved_fate(self, f, b):
            return f  # gpu8b: gone or rebuilt before partitioning (spmd_reshapes.py)
        # GPU: CSE runs inside the first simplification round, beside constant folding,
        # and meets an identical literal before the folder takes its readers away
        cse_first = (self.gpu_cse or self.cse_first and b.opcode == "constant") and \
            b.idx in self.survivor  # cpu8: the Shardy round trip merges literals first
        if not cse_first and self.fed_fold[b.idx] and (
                m.b2a[b.idx] < 0 or A.nodes[m.b2a[b.idx]].fusion >= 0):
            f.fate = "folded"
            f.after = folded_target.new_constant(self, b)
            f.reason = ("read only by values constant folding evaluated at compile time"
                        + (f" (into {f.after})" if f.after else "") + "; it went with them")
            return f
        s = self.survivor.get(b.idx)
        if s is not None and cpu_cse_order.own_partner_iota(self, b):
            s = None  # cpu5: CSE merges no iota as such
        s = None if s is not None and not self.live[b.idx] and dead_pairs.deleted(B, b) else s
        if s is not None and not (self.gpu_cse or self.cse_first) and kept_apart(m, b.idx, s):
            s = None  # both live on: CPU's late CSE met them no longer identical (fused_copies)
        if s is not None and self.live[b.idx] and cpu_cse_order.rewritten_copy(self, b):
            return cpu_cse_order.rewritten_copy_fate(self, f, b, B.nodes[s])
        if s is not None:
            sb = B.nodes[s]
            sf = self._survivor_fate(sb)
            if algsimp_twins.removed_like_survivor(self, s, sf):  # old5: each copy sunk
                f.fate = "removed"
                f.reason = (f"identical to {sb.name}, which algebraic simplification left "
                            f"without users before CSE could merge them: {sf.reason}")
                return f
            if sf.fate in ("rewritten", "folded") and not self.cse_first and not (
                    self.gpu_cse and gpu_cse.late_rewrite(sb, sf.fate, self.recip, self.nparts,
                                                     m.b2a[b.idx] >= 0, B, b, m.partner(s))) and \
                    (s not in self.late_views or gpu_cse.spmd_early(B, sb, b, self.nparts)):
                # (a partitioned CPU module meets CSE first: spmd-cleanup runs it before
                # algsimp; shard helper)
                # algsimp and constant folding run before CSE: each identical copy is
                # rewritten (folded) on its own, and CSE only meets the results
                f.fate = sf.fate
                f.into = sb.name
                y = m.b2a[b.idx]
                if y >= 0:
                    self._set_after(f, A.nodes[y])
                elif sf.after:
                    f.after, f.fusion, f.fusion_kind = sf.after, sf.fusion, sf.fusion_kind
                f.reason = (f"identical to {sb.name}, which was {sf.fate} before CSE could "
                            f"merge them: {sf.reason}")
                return f
            f.fate = "merged"
            f.into = sb.name
            ys = m.b2a[s]
            if ys < 0:
                ys = m.b2a[b.idx]
            if ys >= 0:
                self._set_after(f, A.nodes[ys])
            elif sf.fate == "rewritten" and (sf.after or sf.fusion):  # gpu4: where it lives
                f.after, f.fusion, f.fusion_kind = sf.after, sf.fusion, sf.fusion_kind
            f.reason = f"identical to {sb.name} (CSE)"
            if self.nparts > 1 and self.gpu_cse and sf.fate == "rewritten":  # gpu4
                f.reason = gpu_cse.merged_before_main_algsimp(sb.name)
            elif self.nparts > 1 and b.opcode in ("constant", "broadcast") and self.cv_b[b.idx]:
                f.reason = (f"identical to {sb.name}: merged by the Shardy round trip "
                            f"(it keeps one of identical {b.opcode}s)")
            return f
        y = m.b2a[b.idx]
        y = -1 if y >= 0 and not self.live[b.idx] and dead_pairs.look_alike(B, b, A.nodes[y]) else y
        if self.gpu_cse:  # gpu helper: fused constant look-alikes (lookalikes.py)
            y = lookalikes.partner_or_lookalike(B, A, m.b2a, m.a2b, b, y, self.survivor,
                                                copy_keys(m))
        if y < 0 and self.nparts > 1 and self.live[b.idx] and onecell.folded_fate(self, f, b):
            return f  # cpu8b: a scalar broadcast to one element per device (onecell.py)
        # (oldjax) a same-valued partner that the partners of b's users do not read is a
        # look-alike, not b
        if b.opcode == "constant" and self.live[b.idx] and \
                (y < 0 or A.nodes[y].inst.literal != b.inst.literal or
                 lookalikes.partner_or_lookalike(B, A, m.b2a, m.a2b, b, y) < 0 or
                 lookalikes.top_level_lookalike(B, A, m.b2a, b, y)) and folding.reassociated(self.B, self.fold_b, b):
            # a literal consumed by constant folding: algsimp regrouped (x*c1)*c2 as
            # x*(c1*c2) and folding evaluated the constant part (a look-alike constant
            # after is not this one)
            nc = folded_target.new_constant(self, b)
            f.fate, f.after = "folded", nc
            f.reason = ("regrouped with another constant by algebraic simplification and "
                        "evaluated by constant folding" + (f" into {nc}" if nc else ""))
            return f
        if y < 0:
            y = self.borrowed.get(b.idx, -1)
        if y < 0 and b.opcode == "while" and loop_twins.merged_fate(self, f, b):  # old5
            return f
        if y < 0 and b.opcode == "while" and self.live[b.idx]:  # gpu2: loop state changed
            y = loop_rebuilds.loop_partner(self, b)
        if y < 0 and self.live[b.idx]:  # gpu helper (old2: any backend): fused constant copies
            y = lookalikes.fused_copy(B, A, m.b2a, m.a2b, b)
        if y < 0 and self.live[b.idx] and not self.gpu_cse:  # cpu5: readers untraced
            y = named_copies.fused_copy_by_name(B, A, m.b2a, *self.named_index(), b)
        if y >= 0:
            a = A.nodes[y]
            self._set_after(f, a)
            if self.gpu_cse and gemm_fates.in_gemm_kernel(m, b, a):  # gpu helper
                f.fate = "fused"
                f.reason = (f"computed inside {f.fusion_kind} fusion {f.fusion} (gemm "
                            "kernel; the dot reads the same operands, perhaps swapped)")
                return f
            if lookalikes.rebuilt_on_new_constant(B, A, b, a):  # gpu helper
                f.fate = "rewritten"
                f.reason = (f"broadcast rebuilt as {a.name} of another constant: algebraic "
                            "simplification regrouped (x*c1)*c2 as x*(c1*c2)")
                return f
            same_dims = a.dims == b.dims or upcast_only(b.dims, a.dims)
            part = None if same_dims else partition.note(b.inst, a.inst, self.nparts)  # gpu
            # shard: a per-device shape of the same rank; a squeezed/reshaped shard is the
            # partitioned op rebuilt on reshaped operands (shard helper, partition.py)
            same_dims = same_dims or partition.plain(part) or self._sharded_tuple(b, a)
            changed_attrs = a.opcode == b.opcode and b.sig is not None and a.sig is not None \
                and b.sig[6] != a.sig[6] and b.opcode in ("dot", "convolution", "reduce")
            moved = a.opcode == b.opcode and not same_dims and b.opcode in ELEMENTWISE \
                and not b.inst.shape.is_tuple and not a.inst.shape.is_tuple \
                and b.inst.shape.num_elements != a.inst.shape.num_elements and part is None
            if moved:
                # not the same values on a reshaped operand: algsimp moved the operation
                # across a reduce or broadcast (reduce(neg(x)) -> neg(reduce(x))) with a new
                # instruction; the original lost its users and DCE deleted it
                f.fate = "removed"
                f.reason = (f"{b.opcode} moved across a reduce/broadcast by algebraic "
                            f"simplification ({b.dims} -> {a.dims}); the original became dead")
            elif self.gpu_cse and a.opcode == b.opcode and not same_dims and \
                    gemm_fates.flattened_in_gemm(A, b, a, self.nparts):  # gpu2, gpu4
                f.fate = "fused"
                f.reason = (f"computed inside {f.fusion_kind} fusion {f.fusion} (the gemm "
                            f"kernel's copy, flattened {b.dims} -> {a.dims})")
            elif a.opcode == b.opcode and not same_dims and not changed_attrs:
                # same operation on a reshaped value: reshape-mover/algsimp rebuilt it
                f.fate = "rewritten"
                f.reason = f"{b.opcode} rebuilt on reshaped operands ({b.dims} -> {a.dims})"
                if b.opcode == "while":  # gpu2
                    f.reason = (f"while loop rebuilt as {a.name} by the while-loop "
                                f"simplifier (loop state {b.dims} -> {a.dims})")
                if part:
                    f.reason = f"{b.opcode} rebuilt on reshaped operands; {part}"
                if f.fusion:
                    f.reason += f" inside {f.fusion_kind} fusion"
            elif changed_attrs and (a.name == b.name and b.site is None and a.fusion < 0
                                    and self.nparts <= 1 or self.nparts > 1 and
                                    inplace.transpose_folded(m, b, a)):  # cpu8: partitioned
                # old2: names are never reused; transpose folding replaced it in place
                # under its own name (the pass dumps show the same instruction)
                f.fate = "kept"
                f.reason = (f"{b.opcode} kept; operand transposes/reshapes folded into its "
                            "dimension numbers (transpose folding, same instruction)")
            elif changed_attrs and inplace.nothing_to_fold(B, b, a):  # lead
                f.fate, f.reason = "fused", inplace.swapped_reason(f)
            elif changed_attrs and self.nparts <= 1 and inplace.fused_in_place(b, a):
                f.fate = "fused"  # cpu2: changed in place (transpose folding), then fused
                f.reason = (f"computed inside {f.fusion_kind} fusion {f.fusion}; operand "
                            "transposes/reshapes folded into its dimension numbers first "
                            "(transpose folding, same instruction)")
            elif a.opcode != b.opcode or changed_attrs:
                f.fate = "rewritten"
                what = a.opcode
                if a.inst.custom_call_target:
                    what += f" {a.inst.custom_call_target}"
                f.reason = f"{b.opcode} became {what}"
                if changed_attrs:
                    f.reason = f"{b.opcode} rewritten (operand transposes/reshapes folded into it)"
                if m.how.get(b.idx) == "merged dot":  # twins3 (dotmerge.py)
                    f.reason = merged_reason(m, a)
                if f.fusion:
                    f.reason += f" inside {f.fusion_kind} fusion"
            elif a.fusion >= 0:
                f.fate = "fused"
                f.reason = f"computed inside {f.fusion_kind} fusion" + (f"; {part}" if part else "")
            elif self._recreated(b, a):
                f.fate = "rewritten"
                f.reason = (f"{b.opcode} re-created as {a.name} (a pass rebuilt it, e.g. "
                            "algsimp folding operand transposes/reshapes into it)")
            else:
                f.fate = "kept"
                f.reason = "unchanged" if b.dims == a.dims else (part or f"shape {b.dims} -> {a.dims}")
                lb, la = b.inst.shape.layout, a.inst.shape.layout
                if lb is not None and la is not None and lb != la:
                    f.reason = f"layout {lb} -> {la}"
            return f
        if not self.live[b.idx]:
            if self.inline_first and b.opcode not in ("parameter", "call") and \
                    b.site is not None:
                f.fate = "inlined"
                f.reason = ("dead code of an inlined call: the call inliner, which runs "
                            "before dead-code elimination here, copies only what is used")
                return f
            if b.opcode == "tuple" and any(self.live[u] for u in self._tuple_users().get(b.idx, ())):
                # its elements are read through get-tuple-elements: algsimp forwards them
                f.fate, f.reason = "rewritten", "tuple plumbing simplified away (get-tuple-element forwarded)"
                return f
            f.fate, f.reason = "removed", "dead: nothing it computes reaches an output"
            return f
        if self.fold_b[b.idx] and (b.opcode not in NOT_FOLDED or self._folds_reshape(b)):
            f.fate = "folded"
            f.after = folded_target.new_constant(self, b)
            f.reason = "evaluated at compile time" + (f" into {f.after}" if f.after else "")
            return f
        rs = reshard.reduced_operand(m, self.views, b, 0, self.survivor) if self.nparts > 1 else None
        if rs is not None:  # shard2: the value lives in the partitioner's collective
            f.fate = "rewritten"
            self._set_after(f, rs)
            f.reason = (f"{b.opcode} of {B.nodes[b.operands[0]].name} removed by algebraic "
                        f"simplification; the summed value is in {rs.name} (partitioned: "
                        f"each device computes a partial result, a collective adds them)")
            return f
        src = forwarding.view_source(B, b, m)
        bc = forwarding.became_view(m, self.views, b, src) if src is not None else None
        if bc is not None:  # the reshape decomposer runs after CSE (late_views)
            self.late_views.add(b.idx)
            f.fate = "rewritten"
            self._set_after(f, bc)
            f.reason = f"{b.opcode} became {bc.opcode} {bc.name} (a view of the same data)"
            if f.fusion:
                f.reason += f" inside {f.fusion_kind} fusion"
            return f
        if src is not None:
            sf = self._survivor_fate(src)
            if sf.after and sf.fate in ("kept", "fused", "rewritten", "merged", "folded"):
                # an identity view removed by algsimp: its value is its operand's
                f.fate, f.after, f.fusion, f.fusion_kind = "rewritten", sf.after, sf.fusion, \
                    sf.fusion_kind
                ng = meta_survivors.negated(m, src, self.survivor)  # old5: negate moved out
                if ng is not None:
                    self._set_after(f, ng)
                f.reason = (f"{b.opcode} of {src.name} changed nothing and was removed "
                            f"(algebraic simplification); the value is in {f.fusion or f.after}")
                return f
        x = identities.identity_operand(B, b, self.nparts > 1 or self.gpu_cse, A)
        if x is not None and (sf := self._survivor_fate(x)).after and \
                sf.fate in ("kept", "fused", "rewritten", "merged"):  # x + 0, max(x, -inf)
            f.fate, f.after, f.fusion, f.fusion_kind = "rewritten", sf.after, sf.fusion, \
                sf.fusion_kind
            f.reason = (f"an identity on {x.name}, replaced by it (algebraic simplification); "
                        f"the value is in {f.fusion or f.after}")
            return f
        fd = reshard.flipped_dot(m, b) if self.nparts > 1 else None
        if fd is not None:  # shard2: transpose(dot(a, b)) rebuilt as dot(b, a)
            f.fate = "rewritten"
            self._set_after(f, fd)
            f.reason = (f"transpose(dot(a, b)) rebuilt as dot(b, a) by algebraic "
                        f"simplification: {fd.name} computes the transposed value")
            return f
        fv = None if self.nparts > 1 else folded_views.folded_transpose(m, b)  # cpu4
        if fv is not None:
            return folded_views.fill(f, b, fv, m, self._set_after)
        r = self._replacement(b)
        if b.opcode == "opt-barrier" and b.operands and m.b2a[b.operands[0]] >= 0:
            # the barrier expander forwards the barrier's operand to its users
            r = A.nodes[m.b2a[b.operands[0]]]
        if self.gpu_cse and gemm_fates.folded_into_dots(B, b):  # gpu helper
            uf = self._survivor_fate(B.nodes[b.users[0]])
            if uf.after is not None:
                f.fate, f.after, f.fusion, f.fusion_kind = "rewritten", uf.after, uf.fusion, \
                    uf.fusion_kind
                f.reason = (f"transpose folded into the dot {B.nodes[b.users[0]].name} "
                            f"({uf.fusion or uf.after})")
                return f
        s = negated_sums.moved_negation(B, A, m.b2a, b, r)  # old: reduce(-x) -> -reduce(x)
        if s is not None:
            self._set_after(f, s)
            f.fate = "fused" if f.fusion else "kept"
            f.reason = (f"algebraic simplification moved the negation out of the sum "
                        f"(reduce(-x) = -reduce(x)): {s.name} sums x"
                        + (f" inside {f.fusion}" if f.fusion else "") + f"; {r.name} negates it")
            return f
        tw = self.canon.twin(b, self.live, self.cv_b)
        if tw is not None:  # old3: identical once algsimp normalized both (canonical_twins)
            f.fate, f.into = "merged", tw.name
            self._set_after(f, A.nodes[m.b2a[tw.idx]])
            f.reason = (f"identical to {tw.name} once algebraic simplification removed the "
                        f"views between them: merged by CSE")
            return f
        k = folded_scales.folded_scale(self, b) if r is None and not (
            self.gpu_cse or self.cse_first) else None  # (there CSE meets literals first)
        if k is not None:  # old3: (x * 2) * (g / N): 2 / N folded
            return folded_scales.fill(f, b, k, self._set_after)
        f.fate = "rewritten"
        if r is not None:
            self._set_after(f, r)
        held = self._reviewed_operand(b, r)
        if held is not None:
            f.after, f.fusion, f.fusion_kind = held.after, held.fusion, held.fusion_kind
        if b.opcode in LAYOUT_LIKE:
            f.reason = f"{b.opcode} became a layout change / bitcast"
            if r is not None and r.opcode in ("bitcast", "copy", "transpose"):
                f.reason = f"{b.opcode} became {r.opcode} {r.name}"
            if gpu_cse.iota_view(B, b, wraps=True):
                f.reason = f"{b.opcode} of an iota rebuilt as an iota (algebraic simplification)"
        elif held is not None and b.opcode == "reduce":
            f.reason = (f"reduce over size-1 dimensions only (a reshape) removed by algebraic "
                        f"simplification; the value is {B.nodes[b.operands[0]].name}'s, in "
                        f"{f.fusion or f.after}")
        else:
            f.reason = "simplified away (algebraic simplification)"
            if r is not None:
                f.reason += f"; its effect is now in {r.name}"
            if b.opcode == "dot" and r is not None and r.opcode == "slice":  # dot merger
                f.reason = merged_reason(m, r)
            elif b.opcode == "opt-barrier" and r is not None:
                f.reason = f"jax.checkpoint barrier removed; what it held lives on as {r.name}"
            elif regrouped(m, b):
                f.reason = regrouped_reason(m, b, r)
        return f

    def _tuple_users(self) -> dict[int, list[int]]:
        """tuple node -> the get-tuple-elements reading it (before aliasing)."""
        if self._tu is None:
            nodes = self.B.nodes
            self._tu = {}
            for n in nodes:
                if n.opcode == "get-tuple-element" and n.raw_operands:
                    t = self.B.resolve(n.raw_operands[0])  # through call -> callee root
                    if nodes[t].opcode == "tuple":
                        self._tu.setdefault(t, []).append(n.idx)
        return self._tu

    def _reviewed_operand(self, b: Node, r: Node | None) -> InstructionFate | None:
        """A reshape that is gone re-views its operand's data: the survivor of the operand
        holds b's values (reshape-mover sinks the reshape below the operand's users, layout
        assignment makes it a bitcast of the operand), not the reader the fallback found.
        So does a transpose that moves no byte under the layouts it already has (layout
        normalization makes it a bitcast: gemm_fates.transpose_is_bitcast)."""
        # (not of a dot: algsimp rebuilds transpose(dot(a, b)) first, dotrewrites.py)
        no_byte = b.opcode == "transpose" and len(b.operands) == 1 and \
            self.B.nodes[b.operands[0]].opcode != "dot" and \
            gemm_fates.transpose_is_bitcast(self.B, b)
        if not no_byte and (b.opcode not in ("reshape", "bitcast") or len(b.operands) != 1):
            # (a reduce over size-1 dimensions is a reshape; not of a twin whose kernel
            # mark_uncertain_twins will withdraw: fresh 22 colbert under JAX 0.4.30)
            if not sums_nothing(self.B, b) or b.operands[0] in self.m.twins:
                return None
        o = self.B.nodes[b.operands[0]]
        if o.inst.shape.num_elements != b.inst.shape.num_elements:
            return None
        sf = self._survivor_fate(o)
        if sf.after is None or sf.fate not in ("kept", "fused", "rewritten", "merged"):
            return None
        return sf

    def _survivor_fate(self, sb: Node) -> InstructionFate:
        c = self._sf_cache.get(sb.idx)
        if c is None:
            c = self._sf_cache[sb.idx] = narrow_dots.widened(self, sb, self.fate(sb))
        return c

    def _recreated(self, b: Node, a: Node) -> bool:
        """A top-level instruction XLA kept keeps its name (names are unique and never
        reused; only call-inliner renames, and loop passes clone whole bodies). A compute
        instruction outside inlined calls and rebuilt loops that lives on under another
        name, while its own name is gone from the module, was re-created by a pass. A
        get-tuple-element of a tuple producer that became another opcode (topk -> TopK
        custom-call) is a projection of the new instruction: re-created with it."""
        if b.site is not None or a.fusion >= 0 or a.name == b.name:
            return False
        if self.nparts > 1:  # shard helper: the Shardy round trip renames everything
            return False
        if b.opcode == "get-tuple-element":
            if not b.raw_operands:
                return False
            t = self.B.nodes[self.B.resolve(b.raw_operands[0])]
            y = self.m.b2a[t.idx]
            return t.opcode not in PLUMBING and y >= 0 and \
                self.A.nodes[y].opcode != t.opcode
        if b.opcode in PLUMBING or b.opcode in NOT_FOLDED:
            return False
        if self.after_names is None:
            self.after_names = {i.name for c in self.A.module.computations
                                for i in c.instructions}
        return b.name not in self.after_names

    def _set_after(self, f: InstructionFate, a: Node) -> None:
        f.after = a.name
        f.fusion, f.fusion_kind = self.where(a)

    def all(self) -> list[InstructionFate]:
        out = [narrow_dots.widened(self, b, self.fate(b)) for b in self.B.nodes]  # fresh 27
        folded_target.locate(self.A, out)  # old2: the kernel holding a folded constant
        cudnn_fused.bias_adds(self.m, out)  # gpu4: bias adds inside cuDNN's fused conv
        library_results.name_results(self.m, out)  # gpu8n: element 0 of a library call
        gemm_converts.fuse_round_trips(self.m, out)  # fp8 round trips in a gemm kernel
        splitk.explain(self.A, out)  # h100: what a split-K reduce sums
        bitcast_views.name_viewed_bytes(self.m, out, self.where)
        identities.renamed_survivors(self, out)  # x - 0 on a subtract: x takes the name
        duplicates.annotate(self.m, out)
        spmd_cse.place_shared(self, out)  # cse4
        anchors.mark_uncertain_twins(self.m, out)
        shared_bodies.mark(self.m, out)  # cpu6: loop bodies cloned per call site
        layout_tuples.mark(self.m, out)  # cpu6: a loop's init tuple relaid out
        dead_pairs.unused_arguments(self.B, self.live, out)  # cpu6: unread call arguments
        return out
