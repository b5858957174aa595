"""Text and HTML sections for kernel kinds, collectives, shardings and partitioning.

They read the plain dicts of :mod:`hlodiff.analysis.kernels` / ``collectives`` (the same
ones the diff JSON carries under ``kernels`` and ``collectives``), so ``hlodiff show`` and
the diff reports print the same thing. Everything from the dump is escaped.
"""

from __future__ import annotations

from html import escape as _h

from rich import box
from rich.console import Console
from rich.markup import escape as _e
from rich.table import Table

from ..hlo.model import Module


def _mb(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def _flops(n: int) -> str:
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                 pad_edge=False, padding=(0, 1), show_edge=False, expand=False)


def _kinds(kinds: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in kinds.items())


def _groups(c: dict) -> str:
    if c.get("source_target_pairs"):
        pairs = c["source_target_pairs"]
        text = c.get("pattern") or f"{len(pairs)} pairs"
        return text + " " + ",".join(f"{s}->{t}" for s, t in pairs[:4]) + (
            " ..." if len(pairs) > 4 else "")
    groups = c.get("replica_groups") or []
    if not groups:
        return "(all)"
    text = f"{len(groups)}x{c.get('group_size', 0)}"
    first = "{" + ",".join(map(str, groups[0])) + "}"
    return f"{text} {first}" + (" ..." if len(groups) > 1 else "")


def _axes(c: dict) -> str:
    axes = c.get("mesh_axes")
    if axes is None:
        return "?"
    return ",".join(axes) or "-"


def _notes(c: dict) -> str:
    out = []
    if c.get("merged", 1) > 1:
        out.append(f"merged {c['merged']} into one")
    if c.get("decomposition"):
        out.append(c["decomposition"])
    if c.get("async"):
        ov = c.get("overlap") or []
        out.append(f"async, overlaps {len(ov)} kernel" + ("s" if len(ov) != 1 else "")
                   + (f" ({', '.join(ov[:3])}{' ...' if len(ov) > 3 else ''})" if ov else ""))
    origin = c.get("source") or c.get("op_name")
    if origin:
        out.append("from " + origin)
    return "; ".join(out)


def kernels_text(kd: dict, console: Console, limit: int = 10) -> None:
    """Kernel kinds, totals, and the heaviest kernels (FLOPs, then bytes)."""
    if not kd or not kd.get("kernels"):
        return
    console.print(_e("  kernel kinds: " + _kinds(kd["kinds"])), overflow="fold")
    ws = kd.get("workspace_bytes", 0)
    console.print(f"  FLOPs {_flops(kd['flops'])}, bytes moved {_mb(kd['bytes_moved'])}"
                  + (f" (library workspaces {_mb(ws)} not counted)" if ws else ""))
    heavy = sorted(kd["kernels"], key=lambda k: (-k["flops"], -(k["bytes_read"] + k["bytes_written"])))
    if not heavy or limit <= 0:
        return
    t = _table("Heaviest kernels")
    for col, just in (("kernel", "left"), ("kind", "left"), ("FLOPs", "right"), ("read", "right"),
                      ("written", "right"), ("FLOP/B", "right"), ("detail", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for k in heavy[:limit]:
        inten = k.get("intensity")
        detail = k.get("detail", "")
        if k.get("split_k"):
            detail = (f"split-K {k['split_k']}; " + detail).strip("; ")
        if k.get("workspace_bytes"):
            detail = (detail + f"; workspace {_mb(k['workspace_bytes'])}").strip("; ")
        t.add_row(_e(k["name"]), _e(k["kind"]), _flops(k["flops"]) if k["flops"] else "",
                  _mb(k["bytes_read"]), _mb(k["bytes_written"]),
                  f"{inten:.1f}" if inten is not None else "", _e(detail))
    console.print(t)


def collectives_text(cd: dict, console: Console, limit: int = 40,
                     shardings: list | None = None,
                     title: str = "Shardings (before partitioning)") -> None:
    """Collectives with bytes, groups, axes and overlap; per-step totals; shardings."""
    if shardings:
        t = _table(title)
        for col in ("instruction", "role", "shape", "sharding"):
            t.add_column(col, overflow="fold")
        for s in shardings[:limit]:
            t.add_row(_e(s["instruction"]), s["role"], _e(s["shape"]),
                      _e(s["description"] or s["sharding"]))
        console.print(t)
        if len(shardings) > limit:
            console.print(f"  ... {len(shardings) - limit} more")
    if not cd or not cd.get("collectives"):
        return
    mesh = cd.get("mesh")
    mesh_text = (" mesh {" + ", ".join(f"{a}={n}" for a, n in mesh.items()) + "}") if mesh else ""
    console.print(_e(f"  collectives: {cd['count']}, {_mb(cd['bytes_per_device'])} per device "
                     f"per step;{mesh_text}"), overflow="fold")
    console.print(_e("    by kind: " + ", ".join(f"{k} {_mb(v)}" for k, v in cd["by_kind"].items())
                     + "; by mesh axis: " + ", ".join(f"{k} {_mb(v)}" for k, v in
                                                      cd["by_mesh_axis"].items())), overflow="fold")
    t = _table("Collectives")
    for col, just in (("name", "left"), ("kind", "left"), ("bytes/device", "right"),
                      ("groups", "left"), ("axes", "left"), ("notes", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for c in cd["collectives"][:limit]:
        t.add_row(_e(c["name"]), c["kind"], _mb(c["bytes"]), _e(_groups(c)), _e(_axes(c)),
                  _e(_notes(c)))
    console.print(t)
    if len(cd["collectives"]) > limit:
        console.print(f"  ... {len(cd['collectives']) - limit} more collectives")


def module_sections(module: Module, console: Console, before: Module | None = None,
                    limit: int = 10) -> None:
    """``hlodiff show``: kernel kinds and collectives of one module."""
    from ..analysis.collectives import analyze_collectives
    from ..analysis.kernels import analyze_kernels
    from ..analysis.sharding import annotated_shardings, module_mesh

    kd = analyze_kernels(module).to_dict()
    if kd["kernels"]:
        console.print("[bold]kernels[/bold]")
        kernels_text(kd, console, limit)
    src = before if before is not None else module
    shard = annotated_shardings(src, module_mesh(src))
    cd = analyze_collectives(module, before).to_dict()
    if cd["collectives"] or shard:
        console.print("[bold]devices[/bold]")
        title = ("Shardings (before partitioning, from " + (before.path or before.name) + ")"
                 if before is not None else "Shardings (as written in this module)")
        collectives_text(cd, console, 40, shard, title)


def render_devices(result, console: Console, limit: int = 40) -> None:
    """The diff's device section: partitioning, kernel kinds, collectives, shardings."""
    dev = getattr(result, "devices", None) or {}
    s = result.summary
    if not dev:
        return
    if s.get("partitioned"):
        console.print(f"[bold]Partitioned[/bold] {s['partitioned']} ways (SPMD): before shapes "
                      "are global, after shapes per device; the same data, not reshapes or "
                      "layout changes. bytes moved before is per device (global "
                      f"{_mb(s.get('bytes_before_global', 0))}).")
    kd = (dev.get("kernels") or {}).get("after")
    if kd and kd.get("kernels"):
        console.print("[bold]Kernels (after)[/bold]")
        kernels_text(kd, console, min(limit, 10))
    col = dev.get("collectives") or {}
    ca = col.get("after") or {}
    if ca.get("collectives") or col.get("shardings"):
        console.print("[bold]Collectives and shardings[/bold]")
        cb = col.get("before") or {}
        if cb.get("collectives"):
            console.print(f"  before: {cb['count']} collectives, {_mb(cb['bytes_per_device'])} "
                          "per device per step")
        collectives_text(ca, console, limit, col.get("shardings"))
    console.print()


def devices_html(result) -> list[str]:
    """The HTML section (one <section>), or nothing."""
    dev = getattr(result, "devices", None) or {}
    if not dev:
        return []
    s = result.summary
    kd = (dev.get("kernels") or {}).get("after") or {}
    ca = (dev.get("collectives") or {}).get("after") or {}
    shard = (dev.get("collectives") or {}).get("shardings") or []
    out = ["<section id='devices'><h2>Kernels and collectives</h2>"]
    if s.get("partitioned"):
        out.append(f"<p>Partitioned {int(s['partitioned'])} ways (SPMD): before shapes are "
                   "global, after shapes per device; bytes before are counted per device "
                   f"(global {_h(_mb(s.get('bytes_before_global', 0)))}).</p>")
    if kd.get("kernels"):
        out.append(f"<p>Kernel kinds: {_h(_kinds(kd['kinds']))}. FLOPs {_h(_flops(kd['flops']))}, "
                   f"bytes moved {_h(_mb(kd['bytes_moved']))}"
                   + (f", library workspaces {_h(_mb(kd['workspace_bytes']))} not counted"
                      if kd.get("workspace_bytes") else "") + ".</p>")
        heavy = sorted(kd["kernels"], key=lambda k: (-k["flops"], -(k["bytes_read"] + k["bytes_written"])))
        out.append("<table><thead><tr><th>kernel</th><th>kind</th><th>FLOPs</th><th>read</th>"
                   "<th>written</th><th>FLOP/B</th><th>detail</th></tr></thead><tbody>")
        for k in heavy[:15]:
            inten = k.get("intensity")
            out.append(f"<tr><td class='mono'>{_h(k['name'])}</td><td>{_h(k['kind'])}</td>"
                       f"<td class='n'>{_h(_flops(k['flops']))}</td><td class='n'>{_h(_mb(k['bytes_read']))}</td>"
                       f"<td class='n'>{_h(_mb(k['bytes_written']))}</td>"
                       f"<td class='n'>{'' if inten is None else f'{inten:.1f}'}</td>"
                       f"<td>{_h(k.get('detail', ''))}</td></tr>")
        out.append("</tbody></table>")
    if ca.get("collectives"):
        out.append(f"<p>Collectives: {int(ca['count'])}, {_h(_mb(ca['bytes_per_device']))} per "
                   "device per step. By kind: " + _h(", ".join(f"{k} {_mb(v)}" for k, v in
                                                              ca["by_kind"].items()))
                   + ". By mesh axis: " + _h(", ".join(f"{k} {_mb(v)}" for k, v in
                                                       ca["by_mesh_axis"].items())) + ".</p>")
        out.append("<table><thead><tr><th>name</th><th>kind</th><th>bytes/device</th>"
                   "<th>groups</th><th>axes</th><th>notes</th></tr></thead><tbody>")
        for c in ca["collectives"]:
            out.append(f"<tr><td class='mono'>{_h(c['name'])}</td><td>{_h(c['kind'])}</td>"
                       f"<td class='n'>{_h(_mb(c['bytes']))}</td><td class='mono'>{_h(_groups(c))}</td>"
                       f"<td>{_h(_axes(c))}</td><td>{_h(_notes(c))}</td></tr>")
        out.append("</tbody></table>")
    if shard:
        out.append("<table><thead><tr><th>instruction</th><th>role</th><th>shape</th>"
                   "<th>sharding</th></tr></thead><tbody>")
        for x in shard:
            out.append(f"<tr><td class='mono'>{_h(x['instruction'])}</td><td>{_h(x['role'])}</td>"
                       f"<td class='mono'>{_h(x['shape'])}</td><td>{_h(x['description'] or x['sharding'])}</td></tr>")
        out.append("</tbody></table>")
    out.append("</section>")
    return out
