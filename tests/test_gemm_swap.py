"""A dot whose dimension numbers the gemm kernel changed after fusing it is "fused".

Fixture: fixtures/gpu_pass_pairs/mlp_gelu_adam (zoo mlp_gelu_adam on 8 deviceless H100s,
copied by fixtures/select_pass_pairs.py): the modules before and after optimization, and
the snapshots around gemm-fusion-swap-operands (dumps 0037 -> 0038)."""

from __future__ import annotations

from pathlib import Path

import hlodiff
from hlodiff.diff import diff_modules

D = Path(__file__).resolve().parent.parent / "fixtures" / "gpu_pass_pairs" / "mlp_gelu_adam"


def _dot_line(snapshot: str, fusion: str) -> str:
    text = next(D.glob(f"*.{snapshot}.*")).read_text()
    body = text.split(f"%{fusion}_computation", 1)[1].split("}\n", 1)[0]
    return next(line for line in body.splitlines() if " dot(" in line)


def test_swap_pass_changes_the_fused_dot():
    # the pass itself: the dot inside gemm_fusion_dot.5 reads its operands in another order
    assert _dot_line("0037", "gemm_fusion_dot.5") != _dot_line("0038", "gemm_fusion_dot.5")


def test_forward_dots_reading_parameters_are_fused_not_rewritten():
    before = hlodiff.load(next(D.glob("*.before_optimizations.txt")))
    after = hlodiff.load(next(D.glob("*gpu_after_optimizations.txt")))
    r = diff_modules(before, after)
    for name in ("dot_general.5", "dot_general.6"):  # x @ w1, h @ w2: nothing to fold
        f = r.fate_of("main.2", name)
        assert f is not None and f.fate == "fused", f
        assert f.fusion.startswith("gemm_fusion_dot") and "no operand view" in f.reason, f
