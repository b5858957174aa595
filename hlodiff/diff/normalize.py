"""One form for the metadata that JAX/XLA versions write differently.

Two optimized modules of the same program, compiled by different JAX/XLA versions, name
the same operation differently:

* op_name: ``jit(f)/jit(main)/jvp(jit(relu))/max`` (jax 0.4) is ``jit(f)/jvp()/jit(relu)/max``
  (jax 0.10); primitive parameters were dropped (``reduce_sum[axes=(1,)]`` -> ``reduce_sum``);
  ``pjit`` became ``jit``; autodiff wrappers (``jvp``, ``transpose``, ``vmap``) moved around
  the named scopes. :func:`canon_op_name` keeps what every version agrees on: the named
  scopes under the jitted function, in order, and the primitive.
* source location: ``source_file``/``source_line`` (old) or a ``stack_frame_id`` into the
  module's StackFrames table (new; innermost frame first). :func:`canon_src` keeps the
  innermost user frame as ``((file, line, None),)`` for both.

Regression mode applies both to every node of both views before matching, so the matcher's
metadata buckets and its "no contradicting source frame" rule compare like with like.
"""

from __future__ import annotations

import re

from .view import View

# scopes that carry no identity of their own: the jitted function's ``jit(main)`` body and
# the transformation wrappers whose placement changed between versions
_WRAPPERS = {"jvp", "transpose", "vmap", "pmap", "remat", "checkpoint", "rematted_computation",
             "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "linearize",
             "while", "cond", "body", "branch_0", "branch_1", "scan", "shard_map", "xla_call",
             "closed_call", "core_call", "custom_lin"}
_SCOPE_CALLS = {"jit", "pjit", "named_call", "core_call", "remat", "checkpoint"}
# primitives renamed between versions: old -> new
_PRIM_ALIASES = {"pjit": "jit", "xla_call": "jit", "custom_jvp_call_jaxpr": "custom_jvp_call",
                 "remat2": "checkpoint", "add_any": "add_any"}
_CALL_RE = re.compile(r"([\w.\-<>]+)\(")


def _split(op_name: str) -> list[str]:
    """Split at '/' outside parentheses and brackets."""
    out, depth, cur = [], 0, []
    for ch in op_name:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "/" and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def _scopes(part: str) -> list[str]:
    """Named scopes of one path component: ``jvp(jit(relu))`` -> ['relu']."""
    names = []
    pos = 0
    while True:
        m = _CALL_RE.search(part, pos)
        if m is None:
            break
        head = m.group(1)
        pos = m.end()
        if head in _SCOPE_CALLS:
            end = part.find(")", pos)
            inner = part[pos:end if end >= 0 else len(part)]
            if inner and "(" not in inner and inner != "main":
                names.append(inner)
    if not names and "(" not in part and part and part != "main":
        names.append(part)  # a plain name scope (jax.named_scope)
    return names


_CACHE: dict[str, str] = {}


def canon_op_name(op_name: str | None) -> str | None:
    """The version-independent part of an op_name: named scopes + primitive."""
    if not op_name:
        return op_name
    got = _CACHE.get(op_name)
    if got is not None:
        return got
    parts = _split(op_name)
    prim = parts[-1]
    b = prim.find("[")
    if b > 0:
        prim = prim[:b]
    prim = _PRIM_ALIASES.get(prim, prim)
    scopes: list[str] = []
    for i, part in enumerate(parts[:-1]):
        if i == 0 and (part.startswith("jit(") or part.startswith("pjit(")):
            continue  # the jitted function itself: the module's name says it
        if part.split("(", 1)[0] in _WRAPPERS and "jit(" not in part:
            continue
        scopes.extend(s for s in _scopes(part) if s not in _WRAPPERS)
    out = "/".join(scopes + [prim])
    if len(_CACHE) < 200_000:
        _CACHE[op_name] = out
    return out


def primitive(op_name: str | None) -> str | None:
    """The primitive of a canonical op_name (its last component): the part every version
    agrees on even where newer JAX adds helper scopes (``jit(dynamic_index_in_dim)``)."""
    if not op_name:
        return op_name
    return op_name.rsplit("/", 1)[-1]


def canon_src(src):
    """Innermost frame only, without column: ``((file, line, None),)`` or None."""
    if not src:
        return None
    f, line, _ = src[0]
    return ((f, line, None),)


def normalize_view(view: View) -> None:
    """Rewrite every node's op_name and source to the canonical forms, in place."""
    for n in view.nodes:
        if n.op_name:
            n.op_name = canon_op_name(n.op_name)
        if n.src:
            n.src = canon_src(n.src)
