"""The heap of temporaries in the memory estimate (analysis/heapfit.py, memassign.pack): XLA's
heap simulator clock, its two orders and best fit, and the temporary allocations combined
end to end. Checked against XLA's own files of committed fixtures (real XLA dumps)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlodiff.analysis.heapfit import HeapValue, place
from hlodiff.analysis.memassign import _temporaries_in_order, combined_size
from hlodiff.analysis.memsim import simulate
from hlodiff.dumps.loader import load

ROOT = Path(__file__).resolve().parent.parent
# fixtures whose estimate was off before the heap replayed XLA's (tuple tables pinned in the
# heap, one size order): XLA's total to the byte now
EXACT = ["fixtures/cpu/cond_branch", "fixtures/cpu/cumsum_scan", "fixtures/cpu/linalg_solve",
         "fixtures/cpu/scan_rnn", "fixtures/memory/cpu/cond_branch",
         "fixtures/memory/cpu/mlp_b64_nofusion", "fixtures/memory/gpu/bn_step",
         "fixtures/memory/gpu/scan_rnn", "fixtures/versions/gpt2_step/0.7.2",
         # 8 sharded H100s: a tuple-shaped all-gather-done has a table of its own; a loop
         # fusion's result takes over an operand's allocation read through a bitcast
         "fixtures/memheap/gpu8_vae_step",
         # H100: temporal packing kept, tables combined after the heap (was 1.101 of XLA's)
         "fixtures/memheap/gpu_diffusion_block",
         # H100, kernels only inside a loop's body: GPU alignment still
         "fixtures/memheap/gpu_kv_decode_loop"]


def _after(d: Path) -> Path:
    return next(p for p in d.iterdir() if p.name.endswith("after_optimizations.txt"))


def _total(d: Path) -> int:
    text = next(d.glob("*after_optimizations-buffer-assignment.txt")).read_text()
    return sum(int(m) for m in re.findall(r"^allocation \d+: size (\d+)", text, re.M))


@pytest.mark.parametrize("rel", EXACT)
def test_estimate_is_xla_total_to_the_byte(rel):
    d = ROOT / rel
    assert simulate(load(_after(d))).peak_bytes == _total(d)


def _xla_heap(d: Path) -> tuple[int, list[tuple[str, int, int, int, int]]]:
    """XLA's temporary allocation of a dump: (its size, [(value, size, start, end, offset)])
    with the live ranges of the live-range file; tuple tables left out (allocations of
    their own, combined after the heap)."""
    after = _after(d)
    stem = str(after)[: -len(".txt")]
    ranges = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"^    (\S+?\{[\d,]*\}):(\d+)-(\d+)$", Path(stem + "-live-range.txt").read_text(),
        re.M)}
    text = Path(stem + "-buffer-assignment.txt").read_text()
    block = re.search(r"^allocation \d+: size (\d+), preallocated-temp:\n((?: value:.*\n)*)",
                      text, re.M)
    values = []
    for m in re.finditer(r"<\d+ (\S+?)(\{[\d,]*\})? @\d+> \(size=(\d+),offset=(\d+)\): (\S+)",
                         block.group(2)):
        name = m.group(1) + (m.group(2) or "{}")
        if m.group(5).startswith("(") or name not in ranges:
            continue
        values.append((name, int(m.group(3)), *ranges[name], int(m.group(4))))
    return int(block.group(1)), values


@pytest.mark.parametrize("rel", ["memory/cpu/gpt_noremat", "memory/gpu/gpt_remat",
                                 "memory/gpu/bn_step", "memheap/gpu_diffusion_block"])
def test_heap_replayed_on_xla_live_ranges_gives_xla_offsets(rel):
    """On XLA's own live ranges (no loops here), the heap gives every temporary XLA's offset
    (12 to 91 values a dump); diffusion_block needs the temporal order (a small long-lived
    value at offset 0, under the large ones), which a size-only order cannot give."""
    d = ROOT / "fixtures" / rel
    _size, rows = _xla_heap(d)
    hv = [HeapValue((k,), size, s, e) for k, (_n, size, s, e, _o) in enumerate(rows)]
    for v, (_n, _size, _s, _e, off) in zip(hv, rows):  # in-place reuse: same place, back to back
        for o, (_n2, _size2, _s2, _e2, off2) in zip(hv, rows):
            if o is not v and off2 == off and o.size == v.size and o.end == v.start:
                v.takes = o
    place(hv, 256 if "gpu" in rel else 64)
    got = {n: v.offset for v, (n, *_r) in zip(hv, rows) if v.size}
    want = {n: off for n, size, _s, _e, off in rows if size}
    assert len(want) >= 12 and got == want


def test_temporal_order_wins_when_smaller():
    # largest first: the 768-byte value at 0, the 512-byte ones around it (1792 bytes);
    # longest first: the 512-byte ones stacked, the short 768-byte one beside (1536)
    a, b = HeapValue((0,), 512, 5, 9), HeapValue((1,), 768, 2, 2)
    c, d = HeapValue((2,), 512, 3, 9), HeapValue((3,), 512, 1, 8)
    assert place([a, b, c, d], 256) == 1536
    # (a and c tie on ticks and size: the lower value id first)
    assert (d.offset, a.offset, c.offset, b.offset) == (0, 512, 1024, 512)


def test_smaller_of_the_two_orders_kept():
    # a small value live all along and two large ones one after another: placed largest
    # first, the large ones share offset 0 and the small one goes on top at 256 (288 bytes);
    # placed longest first, the small one is at 0 and the large ones at 256 (512): XLA keeps
    # the smaller heap
    vals = [HeapValue((0,), 32, 0, 10), HeapValue((1,), 256, 1, 3), HeapValue((2,), 256, 4, 6)]
    assert place(vals, 256) == 288
    assert [v.offset for v in vals] == [256, 0, 0]


def test_in_place_result_shares_its_operands_chunk():
    a = HeapValue((0,), 512, 0, 2)
    b = HeapValue((1,), 512, 2, 4, takes=a)  # written over a, which dies where b starts
    c = HeapValue((2,), 512, 1, 3)
    assert place([a, b, c], 256) == 1024
    assert a.offset == b.offset != c.offset


def test_temporaries_combined_in_partition_order():
    # std::partition swaps the first temporary from the front with the last other allocation
    # from the back: tables made before the heap end up behind it, in reverse
    seq = [None, 1, 2, None, -1, None, None]
    assert _temporaries_in_order(seq) == [-1, 2, 1]
    assert _temporaries_in_order([None, 1, None, 2, -1]) == [1, 2, -1]
    assert combined_size([100, 16, 24], 64) == 128 + 64 + 24
