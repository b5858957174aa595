"""Colours: the Okabe-Ito palette (safe for the common colour-vision deficiencies).

Fills are light tints of the Okabe-Ito hues so black text stays readable on every one of
them; the full-strength hue is used for the border. Fates also differ in border style
(removed: dashed, folded: dotted, merged: double) so nothing depends on colour alone.
"""

from __future__ import annotations

OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7",
}


def tint(hex_colour: str, amount: float = 0.55) -> str:
    """Mix a colour with white (amount 0: the colour, 1: white)."""
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02X}" for c in mix)


# fate -> (fill, border, style, legend text)
FATES: dict[str, tuple[str, str, str, str]] = {
    "kept": ("#FFFFFF", "#555555", "solid", "kept (same instruction after)"),
    "fused": (tint(OKABE_ITO["sky_blue"]), OKABE_ITO["blue"], "solid", "fused into a fusion"),
    "folded": (tint(OKABE_ITO["yellow"], 0.45), "#9A8F00", "dotted", "folded (constant folding)"),
    "merged": (tint(OKABE_ITO["reddish_purple"]), "#A0467E", "solid", "merged (CSE: duplicate)"),
    "rewritten": (tint(OKABE_ITO["orange"]), "#B37A00", "solid", "rewritten (other ops after)"),
    "inlined": (tint(OKABE_ITO["bluish_green"]), OKABE_ITO["bluish_green"], "solid",
                "inlined (call removed)"),
    "removed": (tint(OKABE_ITO["vermillion"], 0.6), OKABE_ITO["vermillion"], "dashed",
                "removed (dead or no-op)"),
    "uncertain": ("#F4F4F4", "#555555", "dashed", "uncertain (the modules cannot decide)"),
    "unknown": ("#EEEEEE", "#888888", "solid", "no fate recorded"),
}

# opcode category -> (fill, border, legend text), for single-module pictures
CATEGORIES: dict[str, tuple[str, str, str]] = {
    "io": ("#EEEEEE", "#666666", "parameter / constant"),
    "fusion": (tint(OKABE_ITO["sky_blue"]), OKABE_ITO["blue"], "fusion"),
    "compute": (tint(OKABE_ITO["orange"]), "#B37A00", "dot / convolution / custom-call"),
    "reduce": (tint(OKABE_ITO["bluish_green"]), OKABE_ITO["bluish_green"], "reduce / scatter"),
    "movement": (tint(OKABE_ITO["yellow"], 0.45), "#9A8F00", "layout / data movement"),
    "control": (tint(OKABE_ITO["reddish_purple"]), "#A0467E", "control flow / call"),
    "collective": (tint(OKABE_ITO["vermillion"], 0.6), OKABE_ITO["vermillion"], "collective"),
    "elementwise": ("#FFFFFF", "#555555", "elementwise / other"),
}

_CAT = {
    "io": "parameter constant iota",
    "compute": "dot convolution custom-call fft triangular-solve cholesky ragged-dot scaled-dot",
    "reduce": "reduce reduce-window scatter select-and-scatter sort reduce-precision topk",
    "movement": ("transpose copy reshape broadcast slice dynamic-slice dynamic-update-slice "
                 "concatenate pad reverse bitcast gather copy-start copy-done tuple "
                 "get-tuple-element dynamic-reshape"),
    "control": "while conditional call async-start async-update async-done opt-barrier",
    "collective": ("all-reduce all-gather all-to-all reduce-scatter collective-permute "
                   "all-reduce-start all-reduce-done all-gather-start all-gather-done "
                   "collective-permute-start collective-permute-done send recv send-done "
                   "recv-done collective-broadcast ragged-all-to-all"),
}
OPCODE_CATEGORY = {op: cat for cat, ops in _CAT.items() for op in ops.split()}
OPCODE_CATEGORY["fusion"] = "fusion"


def category(opcode: str) -> str:
    return OPCODE_CATEGORY.get(opcode, "elementwise")


CLUSTER_BORDER = OKABE_ITO["blue"]
CLUSTER_FILL = "#F3F8FC"
CALL_BORDER = OKABE_ITO["reddish_purple"]
FOCUS_BORDER = OKABE_ITO["black"]
