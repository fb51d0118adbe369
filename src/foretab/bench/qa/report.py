"""Markdown report and bar chart of QA benchmark runs (like the paper's Table 3 / Figure 3).

Input is one or more ``foretab bench run --json`` files. The report has the overall table
(forecasting MSE/MAE/MRE/VCR, reasoning Acc/P/R/F1, retrieval F1, latency), the chart of
reasoning accuracy and F1 per ablation (one panel per model), and per-template accuracy,
lowest first, so weak question families stand out.
"""

from __future__ import annotations

import json
from pathlib import Path

from foretab.bench.qa.evaluate import ABLATIONS
from foretab.bench.qa.family_templates import FAMILY_TEMPLATES_BY_ID
from foretab.bench.qa.templates import TEMPLATES_BY_ID
from foretab.errors import ForetabError

RunJson = dict[str, object]
# The paper's Figure 3 order: no forecast, golden captions, golden history, oracle, full.
ORDER = ("gh-nf", "gtc", "gh-pf", "gh-gf", "none")
WEAK = 50.0
WEAK_MRE = 20.0  # percent
# The paper's Table 3, TimeFore rows: (model, MSE, MAE, MRE, Acc, P, R, F1).
PAPER_TABLE3 = (
    ("Qwen3 30B", 31572410.36, 2788.20, 0.1326, 31.59, 61.78, 58.80, 60.25),
    ("Qwen3 Next 80B", 22442845.96, 2588.87, 0.1181, 36.31, 55.86, 61.21, 58.41),
    ("GPT OSS 20B", 29757828.58, 2887.44, 0.1280, 27.80, 53.61, 45.31, 49.11),
    ("GPT OSS 120B", 18493634.83, 2501.18, 0.1151, 31.37, 57.35, 47.32, 51.86),
    ("GLM4.5 Air", 90865440.59, 2709.25, 0.1172, 35.46, 63.73, 58.93, 61.24),
)


class ReportError(ForetabError):
    """A run file cannot be read for the report."""


def load_runs(paths: list[Path]) -> list[RunJson]:
    """Read run JSON files written by ``foretab bench run --json``."""
    runs: list[RunJson] = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ReportError(
                f"Cannot read run file {path} ({exc}); pass files written by "
                "`foretab bench run --json OUT`."
            ) from exc
        if not isinstance(data, dict) or "reasoning" not in data:
            raise ReportError(f"{path} is not a `foretab bench run` result (no 'reasoning').")
        runs.append(data)
    return sorted(runs, key=_order_key)


def _order_key(run: RunJson) -> tuple[str, int]:
    ablation = str(run.get("ablation", "none"))
    rank = ORDER.index(ablation) if ablation in ORDER else len(ORDER)
    return (str(run.get("model") or ""), rank)


def run_label(run: RunJson) -> str:
    """``"GH + GF"`` or ``"GH + GF (model)"``."""
    ablation = str(run.get("ablation", "none"))
    label = ABLATIONS[ablation].label if ablation in ABLATIONS else ablation
    model = run.get("model")
    engine = run.get("engine")
    if engine and engine != "rules":
        label = f"{engine} {label}"
    return f"{label} ({model})" if model else label


def _num(value: object, digits: int = 2, *, sci: bool = False) -> str:
    if value is None or not isinstance(value, int | float):
        return "–"
    if sci:
        return f"{value:.2e}"
    return f"{value:,.{digits}f}"


def _section(run: RunJson, key: str) -> dict[str, object]:
    value = run.get(key)
    return value if isinstance(value, dict) else {}


def render_markdown(runs: list[RunJson], chart: str | None = None) -> str:
    """The report text; ``chart`` is the PNG file name to embed, if any."""
    lines = [
        "# QA benchmark (ODTQA-FoRe protocol)",
        "",
        "Forecasting: MSE, MAE, MRE over numeric answer items matched by (project, month); "
        "VCR = valid completion rate (%). Reasoning: Acc = every item right (%), micro "
        "item-level P/R/F1 (%). Retrieval: table F1 (%).",
        "",
        "| Run | Questions | MSE | MAE | MRE | VCR | Acc | P | R | F1 | Retrieval F1 "
        "| History MAE | p50 ms | p95 ms | Seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        fc, rs = _section(run, "forecasting"), _section(run, "reasoning")
        rt, hist, lat = (
            _section(run, "retrieval"),
            _section(run, "history"),
            _section(run, "latency_ms"),
        )
        lines.append(
            "| "
            + " | ".join(
                [
                    run_label(run),
                    str(run.get("questions", "–")),
                    _num(fc.get("mse"), sci=True),
                    _num(fc.get("mae")),
                    _num(fc.get("mre"), 4),
                    _num(fc.get("valid_completion_rate")),
                    _num(rs.get("accuracy")),
                    _num(rs.get("precision")),
                    _num(rs.get("recall")),
                    _num(rs.get("f1")),
                    _num(rt.get("f1")),
                    _num(hist.get("mae")),
                    _num(lat.get("p50"), 1),
                    _num(lat.get("p95"), 1),
                    _num(run.get("seconds"), 1),
                ]
            )
            + " |"
        )
    lines += _interval_table(runs)
    llm_runs = [r for r in runs if _section(r, "llm").get("calls")]
    if llm_runs:
        lines += [
            "",
            "## LLM usage",
            "",
            "| Run | Calls / question | Tokens / question | LLM seconds / question |",
            "|---|---:|---:|---:|",
        ]
        for run in llm_runs:
            llm = _section(run, "llm")
            lines.append(
                f"| {run_label(run)} | {_num(llm.get('calls_per_question'))} | "
                f"{_num(llm.get('tokens_per_question'), 1)} | "
                f"{_num(llm.get('seconds_per_question'), 3)} |"
            )
    if chart:
        lines += ["", f"![Reasoning accuracy and F1 per ablation]({chart})"]
    lines += ["", *_paper_section(), "", *_family_table(runs), "", *_template_table(runs)]
    errors = [(run_label(r), _section(r, "errors")) for r in runs]
    if any(e.get("total") for _, e in errors):
        lines += ["", "## Engine errors", ""]
        for label, err in errors:
            by_type = err.get("by_type") or {}
            detail = ", ".join(f"{k}: {v}" for k, v in dict(by_type).items())  # type: ignore[call-overload]
            lines.append(f"* {label}: {err.get('total', 0)} ({detail or 'none'})")
    return "\n".join(lines) + "\n"


def _interval_table(runs: list[RunJson]) -> list[str]:
    """How sure each run's reasoning scores are (runs of older versions have no intervals)."""
    sure = [(r, _section(r, "reasoning_ci")) for r in runs if _section(r, "reasoning_ci")]
    if not sure:
        return []
    level = sure[0][1].get("level")
    share = f"{100 * level:.0f}%" if isinstance(level, float) else "95%"
    lines = [
        "",
        f"Reasoning, {share} bootstrap intervals over the items "
        "(`foretab bench compare` tests a difference between two runs of the same split):",
        "",
        "| Run | Reasoning items | Acc | Acc interval | F1 | F1 interval |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for run, ci in sure:
        rs = _section(run, "reasoning")
        lines.append(
            f"| {run_label(run)} | {rs.get('n', '–')} | {_num(rs.get('accuracy'))} | "
            f"{_span(ci.get('accuracy'))} | {_num(rs.get('f1'))} | {_span(ci.get('f1'))} |"
        )
    return lines


def _span(bounds: object) -> str:
    if not isinstance(bounds, list | tuple) or len(bounds) != 2:
        return "–"
    return f"{_num(bounds[0])}–{_num(bounds[1])}"


def _paper_section() -> list[str]:
    lines = [
        "## The paper, for orientation (different data)",
        "",
        "ODTQA-FoRe Table 3, TimeFore rows (LLM agents + TimeXer; 10 cities, 2022-2024, "
        "R = 2023-12, 5,821 LLM-rewritten test questions). Our runs use another corpus "
        "(8 cities, 2019-2022, R = 2021-12), our own templates and phrasings, and a "
        "deterministic parser/analyzer, so the numbers are not directly comparable.",
        "",
        "| Model (paper) | MSE | MAE | MRE | Acc | P | R | F1 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for model, mse, mae, mre, acc, p, r, f1 in PAPER_TABLE3:
        lines.append(
            f"| {model} | {mse:.2e} | {mae:,.2f} | {mre:.4f} | {acc:.2f} | {p:.2f} | {r:.2f} "
            f"| {f1:.2f} |"
        )
    lines += [
        "",
        "Paper Figure 3 (reasoning accuracy per ablation): GH (NF) lowest; +GTC and GH + PF "
        "only marginally above the full pipeline; GH + GF by far the largest gain — the "
        "forecaster is the bottleneck.",
    ]
    return lines


def _per_template_value(run: RunJson, template_id: str, key: str) -> float | None:
    row = _section(run, "per_template").get(template_id)
    value = row.get(key) if isinstance(row, dict) else None
    return float(value) if isinstance(value, int | float) else None


def _family_table(runs: list[RunJson]) -> list[str]:
    """Exact-answer accuracy per family (ODTQA-FoRe tasks and the issue-10 families)."""
    names = sorted({f for run in runs for f in _section(run, "per_family")})
    if not names:
        return []
    header = "| Family | " + " | ".join(f"{run_label(r)} Acc (n)" for r in runs) + " |"
    lines = [
        "## Accuracy per family (exact answers, %; scope mixes picks and numbers)",
        "",
        header,
        "|---|" + "---:|" * len(runs),
    ]
    for name in names:
        cells = []
        for run in runs:
            row = _section(run, "per_family").get(name) or {}
            value = row.get("accuracy")
            cells.append(f"{_num(value, 1)} ({row.get('n', 0)})" if value is not None else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _template_table(runs: list[RunJson]) -> list[str]:
    ids = sorted({t for run in runs for t in _section(run, "per_template")})
    if not ids:
        return []
    # Sorted by the full pipeline when it is there: its weak families are the ones to fix.
    key_run = next((r for r in runs if r.get("ablation") == "none"), runs[0])
    header = "| Template | Family | " + " | ".join(run_label(r) for r in runs) + " |"
    rule = "|---|---|" + "---:|" * len(runs)

    def family(template_id: str) -> str:
        template = TEMPLATES_BY_ID.get(template_id) or FAMILY_TEMPLATES_BY_ID.get(template_id)
        return f"{template.task.value}: {template.description}" if template else ""

    def is_forecast(template_id: str) -> bool:
        # Numeric forecasts (MRE); a future scope pick or which-month is scored exactly.
        row = _section(key_run, "per_template").get(template_id) or {}
        return row.get("task") == "forecast" and "mre" in row and "f1" not in row

    exact = [t for t in ids if not is_forecast(t)]
    exact.sort(key=lambda t: (_per_template_value(key_run, t, "accuracy") or 0.0, t))
    lines = [
        f"## Accuracy per template (reasoning and history; exact answers, %; lowest first "
        f"by {run_label(key_run)}; **bold** below {WEAK:.0f})",
        "",
        header,
        rule,
    ]
    for template_id in exact:
        cells = []
        for run in runs:
            value = _per_template_value(run, template_id, "accuracy")
            text = _num(value, 1)
            cells.append(f"**{text}**" if value is not None and value < WEAK else text)
        lines.append(f"| {template_id} | {family(template_id)} | " + " | ".join(cells) + " |")
    forecast = [t for t in ids if is_forecast(t)]
    if forecast:
        forecast.sort(key=lambda t: (-(_per_template_value(key_run, t, "mre") or 0.0), t))
        lines += [
            "",
            f"## Forecasting error per template (MRE, %; highest first by "
            f"{run_label(key_run)}; **bold** above {WEAK_MRE:.0f})",
            "",
            header,
            rule,
        ]
        for template_id in forecast:
            cells = []
            for run in runs:
                value = _per_template_value(run, template_id, "mre")
                pct = None if value is None else 100.0 * value
                text = _num(pct, 2)
                cells.append(f"**{text}**" if pct is not None and pct > WEAK_MRE else text)
            lines.append(f"| {template_id} | {family(template_id)} | " + " | ".join(cells) + " |")
    return lines


def plot_runs(runs: list[RunJson], path: Path) -> Path:
    """Bar chart of reasoning accuracy and F1 per ablation, one panel per model."""
    from foretab.extras import require

    require("matplotlib", "bench")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models: dict[str, list[RunJson]] = {}
    for run in runs:
        models.setdefault(str(run.get("model") or "store default"), []).append(run)
    fig, axes = plt.subplots(
        1, len(models), figsize=(4.5 * len(models) + 1, 4), squeeze=False, sharey=True
    )
    for ax, (model, group) in zip(axes[0], models.items(), strict=True):
        labels = [
            ABLATIONS[str(r.get("ablation"))].label
            if str(r.get("ablation")) in ABLATIONS
            else str(r.get("ablation"))
            for r in group
        ]
        acc = [float(_section(r, "reasoning").get("accuracy") or 0.0) for r in group]  # type: ignore[arg-type]
        f1 = [float(_section(r, "reasoning").get("f1") or 0.0) for r in group]  # type: ignore[arg-type]
        xs = range(len(group))
        width = 0.38
        bars_acc = ax.bar(
            [x - width / 2 for x in xs], acc, width, label="Accuracy", color="#4C72B0"
        )
        bars_f1 = ax.bar([x + width / 2 for x in xs], f1, width, label="F1", color="#DD8452")
        ax.bar_label(bars_acc, fmt="%.1f", fontsize=8)
        ax.bar_label(bars_f1, fmt="%.1f", fontsize=8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=20, ha="right")
        ax.set_ylim(0, 110)
        trained = next(
            (
                str(r["future_source"])
                for r in group
                if str(r.get("future_source", "")).startswith("model:")
            ),
            "",
        )
        ax.set_title(f"forecaster: {trained.removeprefix('model:') or model}")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("Forecast-based reasoning (%)")
    axes[0][-1].legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_report(runs: list[RunJson], out: Path) -> tuple[Path, Path]:
    """Write ``out`` (markdown) and ``out`` with ``.png`` (chart) beside it."""
    if not runs:
        raise ReportError("No runs to report; pass at least one `foretab bench run --json` file.")
    out = Path(out)
    chart = plot_runs(runs, out.with_suffix(".png"))
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render_markdown(runs, chart.name)
    # Issue 11: reliability of the stated probabilities and accuracy per decision rule.
    from foretab.bench.qa.calibration import coverage_lines, decision_lines, plot_reliability

    reliability = plot_reliability(runs, out.with_name(out.stem + "_reliability.png"))
    if reliability is not None:
        extra = [*decision_lines(runs), "", f"![Reliability]({reliability.name})"]
        text += "\n" + "\n".join(extra) + "\n"
    # Issue 30: the same per kind of stated probability, with a panel per kind.
    from foretab.bench.qa.calibration import kind_lines, plot_reliability_by_kind

    kinds = plot_reliability_by_kind(runs, out.with_name(out.stem + "_reliability_by_kind.png"))
    if kinds is not None:
        text += "\n" + "\n".join([*kind_lines(runs), "", f"![Reliability by kind]({kinds.name})"])
        text += "\n"
    coverage = coverage_lines(runs)
    if coverage:
        text += "\n" + "\n".join(coverage) + "\n"
    out.write_text(text)
    return out, chart
