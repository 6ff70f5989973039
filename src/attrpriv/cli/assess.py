"""``attrpriv assess``: which features of a model leak, and what to do about them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from attrpriv._checks import check_choice, check_positive_int
from attrpriv.assess.choices import (
    BACKENDS,
    FLAG_ON,
    MEMBERSHIP_ATTACKS,
    MODEL_CHOICES,
    STRATEGY_FORMS,
)
from attrpriv.cli._common import (
    TABLE_SUFFIXES,
    DataArgument,
    HtmlFile,
    OutFile,
    console,
    epsilon_callback,
    examples,
    group,
    json_writer,
    ledger_callback,
    output_option,
    split_names,
    table_writer,
    text_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs, check_work_folder
from attrpriv.errors import InputError

if TYPE_CHECKING:  # the library is imported when a command runs, not for its --help
    from attrpriv.assess.mitigation import Mitigation, ModelMitigation
    from attrpriv.assess.report import RiskReport, SensitiveRisk
    from attrpriv.data.schema import Schema

app = group("assess")


def build_estimator(
    model: str, model_file: Path | None, trust: list[str], task: str, seed: int
) -> Any:
    """A built-in model, or a model from a skops file (ONNX is query-only: refused here)."""
    from attrpriv.assess.models import load_model, make_model

    if model_file is None:
        return make_model(model, task=task, seed=seed)
    estimator = load_model(model_file, trusted=trust)
    if not callable(getattr(estimator, "fit", None)):
        raise InputError(
            f"--model-file {str(model_file)!r} is query-only (ONNX); the differential attack "
            "retrains the model: give a skops file, or --model"
        )
    return estimator


def build_strategies(
    text: str | None, ldp_epsilon: float, schema: Schema | None
) -> list[Mitigation | ModelMitigation]:
    """Mitigation strategies from ``--mitigate``, in the given (escalation) order.

    A bare ``ldp`` takes ``--ldp-epsilon``; the schema gives local DP its public domains.
    """
    from attrpriv.assess.mitigation import parse_strategy

    names = split_names(text) or []
    return [parse_strategy(name, schema=schema, ldp_epsilon=ldp_epsilon) for name in names]


def summary_table(report: RiskReport, limit: int = 20) -> Table:
    """The ranked feature sets as a rich table."""
    attacks = [
        a
        for a in ("membership", "attribute", "property")
        if any(a in r.attacks for r in report.feature_sets)
    ]
    headers = [
        "membership (inconclusive)" if a == "membership" and report.membership_inconclusive else a
        for a in attacks
    ]
    percent = round(100 * float(report.settings.get("confidence", 0.95)))
    table = Table(
        "rank",
        "feature set",
        *(f"{h} [{percent}% CI]" for h in headers),
        "overall",
        f"modified [{percent}% CI]",
        "flagged",
        title=f"feature sets, flagged first, then by the strongest evidence ({percent}% CIs)",
    )
    for risk in report.feature_sets[:limit]:
        cells = [_value_and_ci(risk.attacks[a].difference, risk.attacks[a].ci) if a in risk.attacks
                 else "-" for a in attacks]  # fmt: skip
        table.add_row(
            str(risk.rank),
            risk.label,
            *cells,
            f"{risk.overall:+.3f}",
            _value_and_ci(risk.modified, risk.modified_ci),
            "[red]yes[/red]" if risk.flagged else "no",
        )
    return table


def _value_and_ci(value: float, ci: tuple[float, float]) -> str:
    return f"{value:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def sensitive_table(risk: SensitiveRisk, limit: int = 10) -> Table:
    """One sensitive attribute's proxies, strongest first, as a rich table."""
    table = Table(
        "proxy rank", "feature set", "inference drop [95% CI]", "model gain without it", "flagged"
    )
    for i, proxy in enumerate(risk.proxies[:limit], start=1):
        table.add_row(
            str(i),
            proxy.label,
            _value_and_ci(proxy.drop.difference, proxy.drop.ci),
            f"{proxy.gain_without.difference:+.3f}",
            "[red]yes[/red]" if proxy.flagged else "no",
        )
    return table


def _print(report: RiskReport) -> None:
    model = report.model
    membership = model.membership
    attack = ""
    if membership is not None:
        low, high = (v + membership.score.baseline for v in membership.score.ci)
        rates = [
            f"{rate:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
            for rate, ci in (
                (membership.tpr_at_1pct_fpr, membership.tpr_at_1pct_fpr_ci),
                (membership.tpr_at_01pct_fpr, membership.tpr_at_01pct_fpr_ci),
            )
        ]
        attack = (
            f", membership ({report.settings.get('membership_attack', '')}) AUC "
            f"{membership.auc:.3f} [{low:.3f}, {high:.3f}], TPR at 1% / 0.1% FPR "
            f"{rates[0]} / {rates[1]}"
        )
    console.print(
        f"model: test {model.metric} {model.utility_test:.3f}, train-test gap {model.gap:+.3f}"
        + attack,
        markup=False,
    )
    if membership is not None and membership.exposed:
        top = ", ".join(f"{r.row} (FPR {r.fpr:.4f})" for r in membership.exposed[:5])
        console.print(f"most exposed training rows (row number): {top}", markup=False)
    console.print(summary_table(report))
    for risk in report.sensitive:
        low, high = risk.gain.ci
        role = "a model input" if risk.model_input else "not a model input"
        console.print(
            f"sensitive {risk.attribute!r} ({role}): with the model an attacker infers it "
            f"{risk.gain.difference:+.3f} [{low:+.3f}, {high:+.3f}] better ({risk.metric}) than "
            "without it; its proxies:",
            markup=False,
        )
        console.print(sensitive_table(risk))
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    console.print(f"flagged (threshold {report.threshold:g}): {len(report.flagged) or 'none'}")
    for flagged in report.flagged:
        console.print(f"  {flagged.label}: {flagged.why}", markup=False)
    if report.flagged and report.mitigation is None:
        console.print(
            "next: mitigate the flagged sets and re-assess, e.g. --mitigate generalize,ldp,drop "
            "(docs/assess/mitigation.md)"
        )
    if report.mitigation is not None:
        for step in report.mitigation.steps[1:]:
            for why in step.skipped:
                console.print(f"step {step.step}: skipped {why}", markup=False)
            console.print(
                f"step {step.step}: {step.strategy} {'+'.join(step.feature_set or ())} -> "
                f"largest score {step.max_score:+.3f}, test {model.metric} {step.utility:.3f} "
                f"(paid {step.utility_paid:+.3f})"
            )
        console.print(f"mitigation stopped: {report.mitigation.stopped}")


@app.command(
    "run",
    epilog=examples(
        "attrpriv assess run german_credit --target credit_risk --model logreg --repeats 2",
        "attrpriv assess run adult --target income --model hgb --feature-sets singles "
        "--max-rows 5000 --threshold 0.02 --out report.json --html report.html",
        "attrpriv assess run adult --target income --feature-sets 'age,sex;race' "
        "--mitigate generalize,drop --max-steps 3",
    ),
)
def run(
    data: DataArgument,
    target: Annotated[str, typer.Option(help="The column the model predicts.")],
    model: Annotated[
        str, typer.Option(help=f"Built-in model: {', '.join(MODEL_CHOICES)}.")
    ] = "hgb",
    model_file: Annotated[
        Path | None, typer.Option(help="A .skops model to clone and retrain (never a pickle).")
    ] = None,
    trust: Annotated[
        list[str] | None, typer.Option(help="A type to trust in --model-file (repeatable).")
    ] = None,
    task: Annotated[str, typer.Option(help="auto, classification or regression.")] = "auto",
    feature_sets: Annotated[
        str,
        typer.Option(
            "--feature-sets",
            "--sets",
            help="singles | pairs | power:K[:N] | preselect:BY[:K] | 'a,b;c'.",
        ),
    ] = "singles",
    attacks: Annotated[
        str, typer.Option(help="Comma-separated: membership, attribute, property.")
    ] = "membership,attribute",
    threshold: Annotated[
        float, typer.Option(help="Flag sets whose modified score exceeds it.")
    ] = 0.05,
    flag_on: Annotated[
        str,
        typer.Option(help="Compare the score's 'estimate' or its CI's 'lower' end with it."),
    ] = "estimate",
    mitigate: Annotated[
        str | None,
        typer.Option(
            help=f"Comma-separated strategies (the ladder, or the candidates of --choose best) "
            f"of {STRATEGY_FORMS}."
        ),
    ] = None,
    max_steps: Annotated[int, typer.Option(help="At most this many mitigation steps.")] = 5,
    choose: Annotated[
        str,
        typer.Option(
            help="'ladder': the riskiest flagged set's next strategy in --mitigate order; "
            "'best': the strategy (on a flagged set or the model) that removes the most risk "
            "per utility lost, confirmed by a full re-assessment."
        ),
    ] = "ladder",
    max_utility_loss: Annotated[
        float | None,
        typer.Option(help="Stop before a step that would lose more test utility than this."),
    ] = None,
    mitigated_out: Annotated[
        Path | None, output_option("Write the mitigated data (.csv or .parquet; needs --mitigate).")
    ] = None,
    key_out: Annotated[
        Path | None,
        output_option("Write the AES-SIV key of an 'encrypt' strategy (hex, owner-only file)."),
    ] = None,
    ldp_epsilon: Annotated[
        float,
        typer.Option(help="Epsilon of a bare 'ldp' strategy.", callback=epsilon_callback),
    ] = 1.0,
    ledger: Annotated[
        Path | None,
        typer.Option(
            "--ledger",
            help="Charge every local-DP draw of the mitigation to this budget ledger, before "
            "it is drawn (a set's draw is charged once, however often the loop replays it).",
            callback=ledger_callback,
        ),
    ] = None,
    repeats: Annotated[int, typer.Option(help="Seeds each attack is repeated over.")] = 3,
    max_repeats: Annotated[
        int | None,
        typer.Option(help="Add repeats, up to this many, to sets whose CI holds the threshold."),
    ] = None,
    test_size: Annotated[float, typer.Option(help="Share of rows held out.")] = 0.3,
    membership_attack: Annotated[
        str,
        typer.Option(
            help=f"{', '.join(MEMBERSHIP_ATTACKS)}: offline RMIA (the strongest measured), "
            "online RMIA, offline LiRA, the loss threshold or shadow models."
        ),
    ] = "rmia",
    references: Annotated[
        int, typer.Option(help="Reference models per seed (rmia, rmia-online, lira).")
    ] = 2,
    max_attack_rows: Annotated[
        int | None,
        typer.Option(help="Attack at most this many members (and as many non-members)."),
    ] = 2000,
    sensitive: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated sensitive columns (or 'schema': the schema's sensitive role): "
            "what the model reveals of each, and which feature sets are its proxies."
        ),
    ] = None,
    checkpoint: Annotated[
        Path | None,
        typer.Option(help="Keep finished work in this folder; a rerun resumes from it."),
    ] = None,
    sensitive_input: Annotated[
        bool,
        typer.Option(
            "--sensitive-input/--sensitive-not-input",
            help="Whether the sensitive columns are model inputs (else only inferred).",
        ),
    ] = True,
    n_shadows: Annotated[
        int, typer.Option(help="Shadow models (shadow attack; per world in the property game).")
    ] = 4,
    attack_model: Annotated[
        str, typer.Option(help=f"Learner of the attribute attack: {', '.join(MODEL_CHOICES)}.")
    ] = "hgb",
    weights: Annotated[
        str | None,
        typer.Option(
            help="Score weights NAME=VALUE,... of membership, attribute, property, overfitting, "
            "utility (defaults 1, 1, 1, 0.5, 0.5)."
        ),
    ] = None,
    max_rows: Annotated[
        int | None, typer.Option(help="Use a random sample of this many rows.")
    ] = None,
    schema: Annotated[
        Path | None, typer.Option(help="Schema file: its ignored columns are left out.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of splits, models and attacks.")] = 0,
    jobs: Annotated[int, typer.Option(help="Worker processes (-1: one per CPU).")] = 2,
    backend: Annotated[str, typer.Option(help=f"{', '.join(BACKENDS)}.")] = "joblib",
    out: OutFile = None,
    html: HtmlFile = None,
) -> None:
    """Differential inference attacks per feature set, risk scores, threshold, mitigation."""
    from attrpriv.assess.assessor import FeatureRiskAssessor
    from attrpriv.assess.data import TASKS, load_task
    from attrpriv.assess.mitigation import Encrypt, LocalDPNoise
    from attrpriv.assess.mitigation.choice import CHOICES
    from attrpriv.assess.scoring import ScoreWeights, parse_weights
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.report import render_html

    check_choice(task, "--task", TASKS)
    if max_rows is not None:
        check_positive_int(max_rows, "--max-rows")
    check_choice(flag_on, "--flag-on", FLAG_ON)
    score_weights = ScoreWeights() if weights is None else parse_weights(weights)
    outputs = Outputs()
    for option, path in (("--out", out), ("--html", html), ("--mitigated-out", mitigated_out),
                         ("--key-out", key_out)):  # fmt: skip
        outputs.add(option, path, private=option == "--key-out")
    check_work_folder(checkpoint, "--checkpoint")
    found = load_task(data, target, schema=schema, max_rows=max_rows, task=task, seed=seed)
    X, y = found.X, found.y
    named = found.sensitive_columns(split_names(sensitive))
    strategies = build_strategies(mitigate, ldp_epsilon, found.schema)
    _check_mitigation_outputs(strategies, mitigated_out, key_out)
    check_choice(choose, "--choose", CHOICES)
    noisy = [s.name for s in strategies if isinstance(s, LocalDPNoise)]
    if noisy and ledger is None:
        raise InputError(
            f"--mitigate {noisy[0]} draws local-DP noise: give --ledger (a budget ledger "
            "covering the columns' unit) so that every draw is charged"
        )
    estimator = build_estimator(model, model_file, trust or [], found.task, seed)
    assessor = FeatureRiskAssessor(
        estimator,
        feature_sets=feature_sets,
        attacks=tuple(split_names(attacks) or ()),
        threshold=threshold,
        flag_on=flag_on,
        weights=score_weights,
        n_repeats=repeats,
        max_repeats=max_repeats,
        test_size=test_size,
        membership_attack=membership_attack,
        n_references=references,
        max_attack_rows=max_attack_rows,
        sensitive=named,
        sensitive_input=sensitive_input,
        checkpoint=checkpoint,
        n_shadows=n_shadows,
        attack_model=attack_model,
        backend=backend,
        n_jobs=jobs,
        progress=True,
        seed=seed,
    )
    if strategies:
        book = None if ledger is None else BudgetLedger(ledger, create=False)
        report = assessor.mitigate(X, y, strategies, max_steps=max_steps, ledger=book,
                                   choose=choose, max_utility_loss=max_utility_loss)  # fmt: skip
    else:
        report = assessor.assess(X, y)
    report = found.report_on_data(report)
    _print(report)
    # every output is ready before any file is written; then all are written, or none
    title = f"Feature privacy risk: {data} -> {target}"
    keys = [s.export_key() for s in strategies if isinstance(s, Encrypt)]
    write_outputs(
        outputs,
        {
            "--out": None if out is None else json_writer(report.to_dict()),
            "--html": None if html is None else text_writer(render_html(report, title=title)),
            "--mitigated-out": (
                None if mitigated_out is None else table_writer(assessor.mitigated_, mitigated_out)
            ),
            "--key-out": None if key_out is None else text_writer(keys[0].hex() + "\n"),
        },
    )
    if key_out is not None:
        console.print(f"keep {key_out} secret: it decrypts the encrypted columns")


def _check_mitigation_outputs(
    strategies: list[Mitigation | ModelMitigation], mitigated_out: Path | None, key_out: Path | None
) -> None:
    """--mitigated-out needs a ladder and a table suffix; encrypted output needs --key-out."""
    from attrpriv.assess.mitigation import Encrypt

    if mitigated_out is not None:
        if not strategies:
            raise InputError("--mitigated-out needs --mitigate (there is nothing mitigated)")
        if mitigated_out.suffix.lower() not in TABLE_SUFFIXES:
            raise InputError(
                f"--mitigated-out must end in one of {list(TABLE_SUFFIXES)}, got "
                f"{str(mitigated_out)!r}"
            )
    encrypts = [s for s in strategies if isinstance(s, Encrypt)]
    if key_out is not None and not encrypts:
        raise InputError("--key-out is for the key of an 'encrypt' strategy; --mitigate has none")
    if encrypts and mitigated_out is not None and key_out is None:
        raise InputError(
            "the mitigated data may hold encrypted columns: give --key-out to keep the key"
        )
