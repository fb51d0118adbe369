"""The report's uncertainty section: reliability of stated probabilities, decision rules.

Reads the ``calibration`` section of ``foretab bench run --json`` files (per bin of stated
probability: answers, mean stated, share right) and the run's ``decision`` rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

RunJson = dict[str, Any]


def _calibrated(runs: list[RunJson]) -> list[RunJson]:
    return [r for r in runs if (r.get("calibration") or {}).get("n")]


def _label(run: RunJson) -> str:
    split = Path(str(run.get("dataset", ""))).stem or "?"
    label = f"{run.get('ablation_label', run.get('ablation'))}, {split}, {run.get('decision', '?')}"
    return f"{label}, copula {run['copula']}" if run.get("copula") else label


def decision_lines(runs: list[RunJson]) -> list[str]:
    """Markdown: reasoning accuracy / F1 and calibration per run and decision rule."""
    runs = _calibrated(runs)
    if not runs:
        return []
    lines = [
        "## Reasoning by decision rule",
        "",
        "| Run (split, decision) | Acc | F1 | stated P (mean) | right when stated | Brier | n |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        reasoning = run.get("reasoning") or {}
        cal = run["calibration"]
        lines.append(
            f"| {_label(run)} | {float(reasoning.get('accuracy') or 0):.2f} "
            f"| {float(reasoning.get('f1') or 0):.2f} | {float(cal['mean_stated']):.3f} "
            f"| {float(cal['accuracy']):.3f} | {float(cal['brier']):.4f} | {cal['n']} |"
        )
    return lines


def plot_reliability(runs: list[RunJson], path: Path) -> Path | None:
    """Reliability diagram: stated probability vs share of answers right, per run."""
    runs = _calibrated(runs)
    if not runs:
        return None
    from foretab.extras import require

    require("matplotlib", "bench")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect")
    for run in runs:
        bins = run["calibration"]["bins"]
        xs = [b["stated"] for b in bins]
        ys = [b["observed"] for b in bins]
        sizes = [max(8.0, 200.0 * b["n"] / run["calibration"]["n"]) for b in bins]
        ax.plot(xs, ys, marker="", linewidth=1)
        ax.scatter(xs, ys, s=sizes, label=_label(run))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("stated probability of the answer")
    ax.set_ylabel("share of answers exactly right")
    ax.set_title("Reliability of reasoning probabilities")
    ax.legend(loc="upper left", fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def coverage_lines(runs: list[RunJson]) -> list[str]:
    """Markdown: empirical coverage (and mean width) of the answers' intervals, by kind."""
    runs = [r for r in runs if (r.get("intervals") or {}).get("n")]
    if not runs:
        return []
    kinds = sorted({k for r in runs for k in r["intervals"].get("by_kind", {})})
    lines = [
        "## Interval coverage by kind of number",
        "",
        "| Run (split, decision) | " + " | ".join(kinds) + " |",
        "|---|" + "---:|" * len(kinds),
    ]
    for run in runs:
        cells = []
        for kind in kinds:
            row = run["intervals"]["by_kind"].get(kind)
            cells.append(
                f"{100 * row['coverage']:.1f}% (n {row['n']}, width {row['mean_width']:,.0f})"
                if row and row.get("n")
                else ""
            )
        lines.append(f"| {_label(run)} | " + " | ".join(cells) + " |")
    return lines


# --- per kind of stated probability (issue 30) ----------------------------------------------


def _by_kind(runs: list[RunJson]) -> list[RunJson]:
    return [r for r in runs if (r.get("calibration_by_kind") or {}).get("all")]


def _kind_label(run: RunJson) -> str:
    split = Path(str(run.get("dataset", ""))).stem or "?"
    how = run.get("calibration_methods") or run.get("probability_calibration") or "none"
    return f"{split}, calibration: {how}"


def kind_lines(runs: list[RunJson]) -> list[str]:
    """Markdown: per run and kind, n, mean stated, share right, z, Brier, ECE."""
    runs = _by_kind(runs)
    if not runs:
        return []
    lines = [
        "## Stated probabilities by kind",
        "",
        "| Run | kind | n | mean stated | share right | Spiegelhalter z | Brier | ECE |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        for kind, row in run["calibration_by_kind"].items():
            lines.append(
                f"| {_kind_label(run)} | {kind} | {row['n']} | {row['mean_stated']:.3f} "
                f"| {row['share_right']:.3f} | {row['spiegelhalter_z']:+.2f} "
                f"| {row['brier']:.4f} | {row['ece']:.3f} |"
            )
    return lines


def plot_reliability_by_kind(runs: list[RunJson], path: Path) -> Path | None:
    """One reliability panel per kind of stated probability, a line per run."""
    runs = _by_kind(runs)
    if not runs:
        return None
    from foretab.extras import require

    require("matplotlib", "bench")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = sorted({k for r in runs for k in r["calibration_by_kind"] if k != "all"})
    cols = min(len(kinds), 2)
    rows = (len(kinds) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4.6 * rows), squeeze=False)
    for ax, kind in zip(axes.flat, kinds, strict=False):
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
        for run in runs:
            row = run["calibration_by_kind"].get(kind)
            if not row:
                continue
            bins = row["bins"]
            xs = [b["stated"] for b in bins]
            ys = [b["observed"] for b in bins]
            sizes = [max(8.0, 300.0 * b["n"] / row["n"]) for b in bins]
            label = (
                f"{_kind_label(run)} (z {row['spiegelhalter_z']:+.2f}, Brier {row['brier']:.3f})"
            )
            ax.plot(xs, ys, linewidth=1)
            ax.scatter(xs, ys, s=sizes, label=label)
        n = max((r["calibration_by_kind"].get(kind) or {}).get("n", 0) for r in runs)
        ax.set_title(f"{kind} (n {n:,})")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("stated probability")
        ax.set_ylabel("share of answers right")
        ax.legend(loc="upper left", fontsize=6)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(kinds) :]:
        ax.set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
