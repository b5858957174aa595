"""A reduce over size-1 dimensions only, taken out by algsimp (issue 9, the oracle).

JAX's gradient of a bias added as ``b[None, None, None, :]`` sums the output gradient
(reduce_sum.14), reshapes it to ``[1, 1, 1, C]`` and sums that over the three size-1
dimensions (reduce_sum.15): a sum of one element each. XLA's algebraic simplifier takes it
out in the same pass as the division by the loss scale that reads it. The trace of XLA's
pass dumps had followed it only into the divide's rewrite (``multiply``) and its consumer
kernels, not to the kernel that computes its values, and so marked wrong the engine's
"no-op reduce removed", whose value is reduce_sum.14's:
- CPU: the reduce is gone with no rebuild; its values stay in reduce_sum.14 (views.py).
- H100: algsimp rebuilds it as a reshape of reduce_sum.14 beside the rewritten divide; the
  trace reads that rebuild past the reshape the pass took out too (replacement.py).

Fixture: fixtures/noop_reduce (fixtures/generate_noop_reduce.py: jax 0.10.2, CPU and one
deviceless H100, pass dumps; copied unedited, unchanged snapshots left out).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

import hlodiff
from hlodiff.diff import diff_modules
from hlodiff.dumps.passes import find_before_file, find_pass_dumps, trace

D = Path(__file__).resolve().parent.parent / "fixtures" / "noop_reduce"


@lru_cache(maxsize=None)
def _run(mode: str, program: str = "bias_grad_scaled"):
    d = D / mode / program
    snaps = find_pass_dumps(d, f"jit_{program}")
    bf = find_before_file(snaps)
    before = hlodiff.load(bf)
    af = next(d.glob("*_after_optimizations.txt"))
    return before, diff_modules(before, hlodiff.load(af)), trace(snaps, before)


@pytest.mark.parametrize("mode", ["cpu", "gpu"])
def test_the_reduce_sums_over_size_one_dimensions(mode):
    top = {x.name: x for c in _run(mode)[0].computations for x in c.instructions}
    i = top["reduce_sum.15"]
    view = top[i.operands[0]]
    assert view.opcode == "reshape" and view.shape.dims == (1, 1, 1, 8)
    assert i.dimensions == (0, 1, 2)


@pytest.mark.parametrize("mode", ["cpu", "gpu"])
def test_its_values_stay_in_the_kernel_of_the_sum_it_reshaped(mode):
    _, res, orc = _run(mode)
    f = orc.info("reduce_sum.15")
    assert (f.fate, f.pass_name) == ("rewritten", "algsimp")
    home = orc.destinations("reduce_sum.14")
    assert len(home) == 1 and home[0] in orc.destinations("reduce_sum.15")
    g = res.fate_of(f.computation, "reduce_sum.15")
    assert g.fate == "rewritten" and g.fusion == home[0], g


def test_on_the_gpu_the_rebuild_is_read_past_the_reshape():
    """The dump's algsimp step adds ``reshape.3 = f32[8] reshape(reduce_sum.14)`` with the
    reduce's op_name; the divide that read reduce_sum.15 became a multiply at the same time,
    so no surviving user names the replacement."""
    orc = _run("gpu")[2]
    assert orc.chain("reduce_sum.15")[0] == ("rewritten", "algsimp", "reshape.3")
    assert orc.destinations("reduce_sum.15") == orc.destinations("reduce_sum.14")


def test_a_reduce_that_only_reshapes_lives_where_what_it_reshaped_lives():
    """channel_gate_grad: reduce_sum.31 sums the backward convolution's f32[8,32,1] output over
    its size-1 dimension, a real reshape to f32[8,32] (not a chain that comes back to its own
    shape, which the engine's view already reads through). XLA's dumps: algsimp makes it
    reshape.7, reshape-mover folds that into the convolution, which stays top-level. The
    engine had named the consumer kernel of the rewritten gate ("simplified away; its effect
    is now in multiply.5", in multiply_subtract_fusion)."""
    _, res, orc = _run("cpu", "channel_gate_grad")
    f = orc.info("reduce_sum.31")
    assert (f.fate, f.pass_name) == ("rewritten", "algsimp")
    assert orc.destinations("reduce_sum.31") == ["convolution"]
    g = res.fate_of(f.computation, "reduce_sum.31")
    assert g.fate == "rewritten" and (g.fusion or g.after) == "convolution", g
    assert "size-1 dimensions" in g.reason
