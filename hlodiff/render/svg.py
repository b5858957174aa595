"""Running Graphviz ``dot``: finding it, the time limit, the size cap, output formats."""

from __future__ import annotations

import os
import re
import shutil
import resource
import subprocess
import threading
from pathlib import Path

from ..errors import HlodiffError

DEFAULT_MAX_NODES = 1500
DEFAULT_TIMEOUT = 60.0
FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}
INSTALL_HINT = ("install Graphviz: `apt-get install graphviz` (Debian/Ubuntu), "
                "`brew install graphviz` (macOS), or set HLODIFF_DOT to the dot program")


class RenderError(HlodiffError):
    """A picture that cannot be drawn (exit status 2, one line)."""


class DotNotFound(RenderError):
    pass


class GraphTooLarge(RenderError):
    def __init__(self, nodes: int, max_nodes: int, what: str = "graph", hint: str | None = None):
        self.nodes, self.max_nodes = nodes, max_nodes
        hint = hint or ("draw part of it with --collapse-fusions, --fusion NAME, "
                        "--computation NAME or --focus INSTR --radius N, or raise --max-nodes")
        super().__init__(f"{what} has {nodes:,} nodes, more than the {max_nodes:,} that lay out "
                         f"readably (--max-nodes); {hint}")


def find_dot() -> str | None:
    """The dot program: $HLODIFF_DOT when set (a path or a name on PATH), else `dot` on PATH."""
    override = os.environ.get("HLODIFF_DOT")
    if override:
        if os.sep in override or (os.altsep and os.altsep in override):
            p = Path(override)
            return str(p) if p.is_file() and os.access(p, os.X_OK) else None
        return shutil.which(override)
    return shutil.which("dot")


def require_dot() -> str:
    dot = find_dot()
    if dot is None:
        where = os.environ.get("HLODIFF_DOT")
        what = f"Graphviz `dot` not found (HLODIFF_DOT={where})" if where else \
            "Graphviz `dot` not found on PATH"
        raise DotNotFound(f"{what}; {INSTALL_HINT}; `-o FILE.dot` writes DOT text without it")
    return dot


def format_for(path: str | os.PathLike) -> str:
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise RenderError(f"{path}: cannot tell the picture format from '{ext or 'no extension'}'"
                          "; name the output .svg, .png, .pdf or .dot")
    return FORMATS[ext]


def check_size(node_count: int, max_nodes: int, what: str = "graph") -> None:
    if max_nodes and node_count > max_nodes:
        raise GraphTooLarge(node_count, max_nodes, what)


DEFAULT_DOT_MEMORY_MB = 4096
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def _memory_cap() -> int:
    """Bytes of address space dot may use: $HLODIFF_DOT_MEMORY_MB (default 4096)."""
    try:
        mb = float(os.environ.get("HLODIFF_DOT_MEMORY_MB", DEFAULT_DOT_MEMORY_MB))
    except ValueError:
        mb = DEFAULT_DOT_MEMORY_MB
    return int(max(mb, 64) * 2**20)


def kill_running() -> None:
    """Kill every Graphviz process still running (on SIGINT/SIGTERM of hlodiff)."""
    with _running_lock:
        procs = list(_running)
    for p in procs:
        try:
            p.kill()
        except OSError:
            pass


def run_dot(source: str, fmt: str = "svg", timeout: float = DEFAULT_TIMEOUT,
            dot: str | None = None) -> bytes:
    """Lay out DOT text with Graphviz; the output bytes in ``fmt`` (svg, png, pdf).

    dot runs with a memory cap (``$HLODIFF_DOT_MEMORY_MB``) and ``timeout`` seconds, and is
    killed when hlodiff is interrupted or terminated."""
    dot = dot or require_dot()
    try:
        proc = subprocess.Popen([dot, f"-T{fmt}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except OSError as e:
        raise DotNotFound(f"cannot run Graphviz `{dot}`: {e.strerror}; {INSTALL_HINT}") from None
    with _running_lock:
        _running.add(proc)
    try:
        try:
            cap = _memory_cap()
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (cap, cap))
        except (OSError, ValueError, AttributeError):
            pass  # not Linux, or already gone: the time limit still holds
        try:
            out, err = proc.communicate(source.encode("utf-8"), timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RenderError(f"Graphviz took longer than {timeout:g} s to lay out the graph; "
                              "draw less of it (--collapse-fusions, --fusion, --focus) "
                              "or allow more time with --timeout") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        with _running_lock:
            _running.discard(proc)
    if proc.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        if proc.returncode < 0 or any("memory" in x.lower() for x in lines[-3:]):
            raise RenderError(f"Graphviz ran out of its memory cap or was killed "
                              f"(HLODIFF_DOT_MEMORY_MB={_memory_cap() // 2**20}); draw less of it")
        msg = lines[-1] if lines else f"exit status {proc.returncode}"
        raise RenderError(f"Graphviz failed: {msg}")
    return out


def write_picture(source: str, path: str | os.PathLike, fmt: str | None = None,
                  timeout: float = DEFAULT_TIMEOUT, inputs=()) -> None:
    """Write DOT text (fmt 'dot') or dot's rendering of it to ``path``, by the rules of
    :mod:`hlodiff.outputs` (atomic, never over an input)."""
    from ..outputs import check_not_input, write_output

    fmt = fmt or format_for(path)
    check_not_input(path, inputs)
    if fmt == "dot":
        write_output(path, source, inputs)
        return
    write_output(path, run_dot(source, fmt, timeout), inputs)


_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.S)
_ID = re.compile(r'\b(id|href|xlink:href)="(#?)([^"]*)"')
_URL = re.compile(r"url\(#([^)]*)\)")


def svg_for_html(svg: str, id_prefix: str) -> str:
    """SVG text to inline in an HTML page: no XML prolog/doctype, ids made unique per picture
    (so many pictures on one page do not collide), comments dropped."""
    svg = _PROLOG.sub("", svg, count=1)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = _ID.sub(lambda m: f'{m.group(1)}="{m.group(2)}{id_prefix}{m.group(3)}"', svg)
    svg = _URL.sub(lambda m: f"url(#{id_prefix}{m.group(1)})", svg)
    return svg.strip() + "\n"
