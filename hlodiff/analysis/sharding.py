"""Shardings, meshes and device groups as XLA writes them in HLO text.

* ``sharding={replicated}``, ``{maximal device=0}``, ``{manual}``, ``{devices=[2,4]<=[8]}``,
  ``{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}``, ``{devices=[2,2]0,2,1,3}``,
  tuple shardings ``{{...}, {...}}``: decoded into tile dims (per array dimension: how many
  ways it is split) and the device order.
* The mesh of a JAX program: the before module's ``frontend_attributes`` carry Shardy's
  ``xla.sdy.meshes={mesh = #sdy.mesh<["data"=2, "model"=4]>}``; the optimized module's
  collectives may name groups by mesh axes: ``mesh['axis_0'=8,'axis_1'=1] {'axis_0'}``.
* Device lists (``replica_groups``): explicit ``{{0,1},{2,3}}``, iota ``[2,4]<=[8]`` and
  ``[2,4]<=[4,2]T(1,0)``, and the mesh-axes form, decoded into lists of device ids.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from ..hlo.model import Module

_IOTA = re.compile(r"\[([\d,\s]*)\]\s*<=\s*\[([\d,\s]*)\](?:\s*T\(([\d,\s]*)\))?")
_SDY_MESH = re.compile(r'(\w+)\s*=\s*#sdy\.mesh<\s*\[([^\]]*)\](?:\s*,\s*device_ids\s*=\s*\[([\d,\s]*)\])?')
_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
_MESH_GROUPS = re.compile(r"mesh\[([^\]]*)\]\s*(?:,\s*device_ids=(\((?:[^()]|\([^()]*\))*\)"
                          r"|\[[^\]]*\]))?\s*\{([^}]*)\}")
_DEV_IOTA = re.compile(r"\[([\d,\s]*)\](?:\s*T\(([\d,\s]*)\))?")
_MESH_AXIS = re.compile(r"'([^']+)'\s*=\s*(\d+)")


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def iota_devices(reshape: list[int], transpose: list[int] | None = None) -> list[int]:
    """The device order of ``<=[reshape]T(perm)``: iota, reshaped, transposed, flattened."""
    n = 1
    for d in reshape:
        n *= d
    perm = transpose if transpose else list(range(len(reshape)))
    if sorted(perm) != list(range(len(reshape))):
        return list(range(n))
    strides = [1] * len(reshape)
    for i in range(len(reshape) - 2, -1, -1):
        strides[i] = strides[i + 1] * reshape[i + 1]
    tdims = [reshape[p] for p in perm]
    out = []
    for idx in itertools.product(*(range(d) for d in tdims)):
        out.append(sum(idx[k] * strides[perm[k]] for k in range(len(perm))))
    return out


@dataclass
class Mesh:
    """Named mesh axes (major to minor) and the device id at each mesh position."""

    axes: list[tuple[str, int]]
    device_ids: list[int] | None = None  # None: iota

    @property
    def size(self) -> int:
        n = 1
        for _, s in self.axes:
            n *= s
        return n

    def __str__(self) -> str:
        return "{" + ", ".join(f"{a}={s}" for a, s in self.axes) + "}"

    def groups_over(self, axis_idx: tuple[int, ...]) -> list[list[int]]:
        """Device groups in which the given axes vary and the others are fixed."""
        sizes = [s for _, s in self.axes]
        ids = self.device_ids or list(range(self.size))
        strides = [1] * len(sizes)
        for i in range(len(sizes) - 2, -1, -1):
            strides[i] = strides[i + 1] * sizes[i + 1]
        others = [i for i in range(len(sizes)) if i not in axis_idx]
        groups = []
        for fixed in itertools.product(*(range(sizes[i]) for i in others)):
            base = sum(f * strides[i] for f, i in zip(fixed, others))
            g = []
            for var in itertools.product(*(range(sizes[i]) for i in axis_idx)):
                g.append(ids[base + sum(v * strides[i] for v, i in zip(var, axis_idx))])
            groups.append(g)
        return groups

    def axes_of(self, groups: list[list[int]]) -> list[str] | None:
        """The mesh axes whose groups are exactly ``groups``, or None."""
        if not groups or sum(len(g) for g in groups) != self.size:
            return None
        want = sorted(sorted(g) for g in groups)
        for r in range(0, len(self.axes) + 1):
            for combo in itertools.combinations(range(len(self.axes)), r):
                got = sorted(sorted(g) for g in self.groups_over(combo))
                if got == want:
                    names = [self.axes[i][0] for i in combo if self.axes[i][1] > 1]
                    return names or [self.axes[i][0] for i in combo]
        # XLA may split an axis into sub-axes (data=8 as 4x2): groups inside one axis's groups
        size = len(groups[0])
        for i, (name, n) in enumerate(self.axes):
            if n <= size or any(len(g) != size for g in groups):
                continue
            homes = [set(h) for h in self.groups_over((i,))]
            if all(any(set(g) <= h for h in homes) for g in groups):
                return [f"{name}[{size} of {n}]"]
        return None


def module_mesh(module: Module) -> Mesh | None:
    """The Shardy mesh a JAX program declares in its module attributes, when present."""
    fa = module.attributes.get("frontend_attributes", "")
    m = _SDY_MESH.search(fa.replace('\\"', '"'))
    if not m:
        return None
    axes = [(a, int(s)) for a, s in _AXIS.findall(m.group(2))]
    if not axes:
        return None
    ids = _ints(m.group(3)) if m.group(3) else None
    return Mesh(axes, ids if ids and len(ids) == Mesh(axes).size else None)


def parse_groups(text: str | None, num_devices: int | None = None) -> tuple[list[list[int]], Mesh | None, list[str] | None]:
    """Decode replica_groups text: (groups, mesh of a mesh-form, the axes it names)."""
    if text is None:
        return [], None, None
    t = text.strip()
    m = _MESH_GROUPS.match(t)
    if m:
        axes = [(a, int(s)) for a, s in _MESH_AXIS.findall(m.group(1))]
        mesh = Mesh(axes)
        ids_text = m.group(2)
        if ids_text and ids_text.startswith("("):  # ([2,4]T(1,0)): an iota device order
            di = _DEV_IOTA.search(ids_text)
            if di:
                mesh.device_ids = iota_devices(_ints(di.group(1)), _ints(di.group(2) or ""))
        elif ids_text:
            mesh.device_ids = _ints(ids_text)
        if mesh.device_ids is not None and len(mesh.device_ids) != mesh.size:
            mesh.device_ids = None
        named = re.findall(r"'([^']+)'", m.group(3))
        idx = tuple(i for i, (a, _) in enumerate(axes) if a in named)
        return mesh.groups_over(idx), mesh, named
    m = _IOTA.fullmatch(t)
    if m:
        shape = _ints(m.group(1))
        devs = iota_devices(_ints(m.group(2)), _ints(m.group(3) or ""))
        if len(shape) == 2 and shape[0] * shape[1] == len(devs):
            return [devs[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])], None, None
        return [devs], None, None
    inner = re.findall(r"\{([\d,\s]*)\}", t)
    groups = [_ints(g) for g in inner if g.strip()]
    if not groups and num_devices:
        return [list(range(num_devices))], None, None
    return groups, None, None


def parse_pairs(text: str | None) -> list[tuple[int, int]]:
    """source_target_pairs={{0,1},{1,2}} as a list of (source, target)."""
    if not text:
        return []
    return [(p[0], p[1]) for p in (_ints(x) for x in re.findall(r"\{([\d,\s]+)\}", text))
            if len(p) == 2]


@dataclass
class Sharding:
    """A decoded array sharding."""

    text: str
    kind: str  # replicated | maximal | manual | tiled | tuple | unknown
    tile_dims: list[int] = field(default_factory=list)  # ways each array dim is split
    replicated_ways: int = 1  # last_tile_dim_replicate / replicated subgroup
    device: int | None = None
    devices: list[int] = field(default_factory=list)
    elements: list["Sharding"] = field(default_factory=list)

    @property
    def ways(self) -> int:
        """Into how many distinct pieces the data is cut."""
        n = 1
        for d in self.tile_dims:
            n *= d
        return n

    def describe(self, mesh: Mesh | None = None) -> str:
        if self.kind == "tuple":
            return "(" + ", ".join(e.describe(mesh) for e in self.elements) + ")"
        if self.kind == "maximal":
            return f"on device {self.device}"
        if self.kind in ("replicated", "manual", "unknown"):
            return self.kind
        split = [f"dim {i} {d} ways" for i, d in enumerate(self.tile_dims) if d > 1]
        text = "split " + ", ".join(split) if split else "not split"
        if self.replicated_ways > 1:
            text += f", replicated {self.replicated_ways} ways"
        return text


def parse_sharding(text: str | None) -> Sharding | None:
    """Decode a ``sharding={...}`` value (None when absent)."""
    if not text:
        return None
    t = text.strip()
    if t.startswith("{{") or (t.startswith("{") and t[1:].lstrip().startswith("{")):
        parts, depth, cur = [], 0, ""
        for ch in t[1:-1]:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            parts.append(cur)
        elems = [parse_sharding(p.strip()) for p in parts]
        return Sharding(t, "tuple", elements=[e for e in elems if e is not None])
    body = t.strip("{} ")
    if body.startswith("replicated"):
        return Sharding(t, "replicated")
    if body.startswith("manual"):
        return Sharding(t, "manual")
    if body.startswith("maximal"):
        d = re.search(r"device=(\d+)", body)
        return Sharding(t, "maximal", device=int(d.group(1)) if d else None)
    m = re.match(r"devices=\[([\d,\s]+)\]\s*(.*)", body)
    if not m:
        return Sharding(t, "unknown")
    dims = _ints(m.group(1))
    rest = m.group(2)
    iota = _IOTA.match("[" + m.group(1) + "]" + rest) if rest.startswith("<=") else None
    if iota:
        devices = iota_devices(_ints(iota.group(2)), _ints(iota.group(3) or ""))
    else:
        devices = _ints(re.split(r"[a-z_]", rest, maxsplit=1)[0]) if rest else []
    s = Sharding(t, "tiled", tile_dims=dims, devices=devices)
    if "last_tile_dim_replicate" in rest and dims:
        s.replicated_ways = dims[-1]
        s.tile_dims = dims[:-1]
    elif "last_tile_dims" in rest:
        n = len(re.search(r"last_tile_dims=\{([^}]*)\}", rest).group(1).split(",")) \
            if re.search(r"last_tile_dims=\{([^}]*)\}", rest) else 0
        s.tile_dims = dims[:len(dims) - n]
        for d in dims[len(dims) - n:]:
            s.replicated_ways *= d
    return s


def annotated_shardings(module: Module, mesh: Mesh | None = None) -> list[dict]:
    """The ``sharding`` of the entry's parameters, its outputs (root) and any other
    annotated instruction (``custom-call`` Sharding markers, sharded intermediates)."""
    out = []
    for comp in module.computations:
        for inst in comp.instructions:
            text = inst.attrs.get("sharding")
            if text is None:
                continue
            if comp.name == module.entry and inst.opcode == "parameter":
                role = "parameter"
            elif comp.name == module.entry and inst.is_root:
                role = "output"
            else:
                role = "annotated"
            sh = parse_sharding(text)
            out.append({"instruction": inst.name, "computation": comp.name, "role": role,
                        "shape": inst.shape.dims_text, "sharding": text,
                        "description": sh.describe(mesh) if sh else "",
                        "ways": sh.ways if sh else 1, "source": inst.source})
    return out
