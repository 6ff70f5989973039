"""Feature risk assessment: scale, a full audit, mitigation, and our membership attacks vs ART.

    python benchmarks/assess.py scale                  # Adult, singles, 3 seeds, hgb (minutes)
    python benchmarks/assess.py scale --max-rows 5000  # quicker
    python benchmarks/assess.py full                   # hgb and rf, 14 singles, 3 attacks
    python benchmarks/assess.py mitigate-rf            # rf, escalation ladder until under threshold
    PYTHONPATH=/path/to/art python benchmarks/assess.py anchor  # every attack, one split; + ART
    python benchmarks/assess.py anchor-seeds --tables census_kdd --learners mlp  # 5 splits
    python benchmarks/assess.py audit-vs-art           # issue 11: ART's RF audit, side by side
    python benchmarks/assess.py references             # shared vs matched reference models
    python benchmarks/assess.py learners               # attribute attackers: early stopping
    python benchmarks/assess.py planted                # a planted ID and a planted proxy
    python benchmarks/assess.py leak                   # a planted leak, ranked and mitigated

``scale`` runs ``FeatureRiskAssessor.assess`` once per backend, each in a fresh subprocess, and
prints wall time and peak memory (resident set of the process and its workers, sampled every
0.1 s) with the ratio to the sequential run, then the five riskiest features of the first run.

``full`` is the single-feature audit of issue #3: for histogram gradient boosting and a random
forest, every one of Adult's 14 attributes (``fnlwgt`` included) with the membership
differential, attribute and property attacks, 3 seeds, joblib on 2 processes, each model in a
fresh subprocess (wall time and peak memory as in ``scale``), then the full ranking.

``mitigate-rf`` runs the differential membership attack on a random forest's singles and the
mitigation loop (ladder generalize -> local DP -> drop) until no feature's score exceeds
``--threshold`` (default 0.01 AUC) or ``--max-steps``; ``--flag-on lower`` flags a feature
only when the lower end of its score's CI exceeds the threshold.

``anchor`` attacks one fitted target per (table, learner) on the assessor's default split
(repeat 0: 30% held out, 2,000 members + 2,000 non-members attacked) with every membership attack
on the same attacked rows: ours (offline RMIA, the default; online RMIA; offline LiRA; each with 2
reference models as the assessor trains them), a textbook offline RMIA written apart from ours
(the paper's pairwise test against 5,000 population records), the loss threshold, shadow models
(4, on the rows not attacked) and, when it imports, IBM ART's ``MembershipInferenceBlackBox``
(a random-forest attack model trained on known rows that are not attacked). Tables: Adult (all
rows, ``fnlwgt`` in) and a 20,000-row sample of census_kdd (held out: never tuned on);
``--tables`` and ``--learners`` pick some. ART is NOT a project dependency.

``audit-vs-art`` is the same work done both ways, in one process on one native thread: Adult
without missing values (45,222 rows, the 14 attributes with ``fnlwgt``, categories as ordinal
codes), half the rows the members of a ``RandomForestClassifier(100)``, the model retrained
without each single attribute. ART: each of the 15 models (ours: the same rows and seed)
attacked by ``MembershipInferenceBlackBox`` (a random-forest attack model trained on the rows
that are not attacked), scored on the same 2,000 + 2,000 attacked rows as ours. Ours:
``FeatureRiskAssessor`` with the default attack (membership only, sequential), one seed, then
three seeds; the CPU of fitting the 45 target models alone is measured beside it. Prints CPU
and wall seconds, the full model's AUC and TPR at 1% / 0.1% FPR, and every attribute's
differential (full minus retrained AUC) by both, with their Spearman correlation.

``references`` measures what sharing the reference models costs: for the same Adult forest,
each single attribute's differential with the references trained on all features (the default)
and with references retrained without the attribute (matched).

``leak`` adds a record identifier and a random coin to 5,000 Adult rows, assesses every single
feature of a one-hot logistic regression that can memorise the identifier, and runs the drop
loop: the table shows whether the differential attack singles out the identifier.
docs/benchmarks.md quotes the output.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import version
from typing import Any

import numpy as np
import pandas as pd
import psutil
from threadpoolctl import threadpool_limits

from attrpriv import datasets
from attrpriv.assess.membership import ShadowModelAttack, loss_threshold_attack
from attrpriv.assess.models import make_model
from attrpriv.assess.report import RiskReport
from attrpriv.data.schema import Role
from attrpriv.stats import Score

TARGETS = {"adult": "income", "german_credit": "credit_risk", "census_kdd": "income"}
ALL_ATTACKS = ("membership", "attribute", "property")
# Adult's 14 attributes: fnlwgt (a CPS sampling weight, schema role "ignore") is one of them and
# a feature of the usual Adult task; the ignored "split" column (train/test file) never is.
ADULT_14 = ("fnlwgt",)


def load(
    name: str, max_rows: int | None, seed: int = 0, keep: Sequence[str] = ()
) -> tuple[pd.DataFrame, pd.Series]:
    """Features (schema roles other than ignore/target, plus the ignored ``keep``) and target."""
    frame, schema = datasets.load(name)
    if max_rows is not None and max_rows < len(frame):
        frame = frame.sample(max_rows, random_state=seed).reset_index(drop=True)
    dropped = (set(schema.with_role(Role.IGNORE)) - set(keep)) | {TARGETS[name]}
    return frame[[c for c in frame.columns if c not in dropped]], frame[TARGETS[name]]


# -- shared printing -----------------------------------------------------------------------------


def _score(score: Score | None) -> str:
    """``+diff [low, high]``, or ``skipped`` when the attack did not run on the set."""
    if score is None or math.isnan(score.difference):
        return "skipped"
    return f"{score.difference:+.4f} [{score.ci[0]:+.4f}, {score.ci[1]:+.4f}]"


def print_model(report: RiskReport) -> None:
    """The model trained on all features: test metric, train-test gap, loss-attack AUC."""
    model = report.model
    auc = model.membership.auc if model.membership else float("nan")
    print(
        f"full model: test accuracy {model.utility_test:.4f}, "
        f"train-test gap {model.gap:+.4f}, loss-attack AUC {auc:.4f}"
    )


def print_ranking(report: RiskReport, limit: int | None = None) -> None:
    """The ranked feature sets: each attack's difference [95% CI], the scores, the flag."""
    attacks = list(report.settings["attacks"])
    head = " | ".join(f"{a} diff [95% CI]" for a in attacks)
    print(
        f"| rank | feature | {head} | overfitting | importance | overall | modified [95% CI] "
        "| flagged |"
    )
    print("|---:|---|" + "---|" * len(attacks) + "---:|---:|---:|---|---|")
    for r in report.feature_sets[:limit]:
        cells = " | ".join(_score(r.attacks.get(a)) for a in attacks)
        print(
            f"| {r.rank} | {r.label} | {cells} | {r.overfitting:+.4f} | {r.importance:+.4f} "
            f"| {r.overall:+.4f} | {r.modified:+.4f} [{r.modified_ci[0]:+.4f}, "
            f"{r.modified_ci[1]:+.4f}] | {'yes' if r.flagged else 'no'} |"
        )
    for note in report.notes:
        print(f"note: {note}")


def print_path(report: RiskReport) -> None:
    """The mitigation loop: one row per step, then why it stopped."""
    assert report.mitigation is not None
    print("\n| step | mitigated | test accuracy | utility paid | largest score | flagged |")
    print("|---:|---|---:|---:|---:|---|")
    for step in report.mitigation.steps:
        target = "+".join(step.feature_set) if step.feature_set else "-"
        flagged = ", ".join("+".join(f) for f in step.flagged) or "none"
        print(
            f"| {step.step} | {step.strategy or ''} {target} | {step.utility:.4f} "
            f"| {step.utility_paid:+.4f} | {step.max_score:+.4f} | {flagged} |"
        )
    print(f"stopped: {report.mitigation.stopped}")


# -- scale and full: assessments in child processes ----------------------------------------------


@dataclass(frozen=True)
class Run:
    """One assessment of Adult's single features, run by a child process (part ``_child``).

    ``threads``: native (OpenMP/BLAS) threads of the child, 0 = the library default; joblib's
    loky workers get ``cpus // n_jobs`` threads each whatever this is. ``keep``: ignored
    columns used as features all the same.
    """

    model: str = "hgb"
    backend: str = "sequential"
    n_jobs: int = 1
    threads: int = 0
    max_rows: int | None = None
    attacks: tuple[str, ...] = ("membership", "attribute")
    keep: tuple[str, ...] = ()
    n_shadows: int = 4


@dataclass(frozen=True)
class Measured:
    """What a child run gave: wall time of the assessment, rows, report, peak RSS (MiB)."""

    seconds: float
    rows: int
    report: RiskReport
    peak_mib: float


def _peak_rss(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """Sample the resident memory of a process tree until ``stop`` is set."""
    parent = psutil.Process(pid)
    while not stop.is_set():
        try:
            procs = [parent, *parent.children(recursive=True)]
            total = sum(p.memory_info().rss for p in procs if p.is_running())
            peak[0] = max(peak[0], total)
        except psutil.Error:
            pass
        stop.wait(0.1)


def _one_run(run: Run) -> dict[str, Any]:
    """Child process: one assessment; returns its timing and report (printed as JSON)."""
    from attrpriv.assess.assessor import FeatureRiskAssessor

    X, y = load("adult", run.max_rows, keep=run.keep)
    risk = FeatureRiskAssessor(
        make_model(run.model),
        feature_sets="singles",
        attacks=run.attacks,
        n_repeats=3,
        n_shadows=run.n_shadows,
        backend=run.backend,
        n_jobs=run.n_jobs,
    )
    start = time.perf_counter()
    with threadpool_limits(run.threads or None):
        report = risk.assess(X, y)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "rows": len(X), "report": report.to_dict()}


def measured(run: Run) -> Measured:
    """Run one assessment in a fresh subprocess while sampling its tree's peak memory."""
    command = [sys.executable, __file__, "_child", json.dumps(asdict(run))]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    stop, peak = threading.Event(), [0]
    sampler = threading.Thread(target=_peak_rss, args=(child.pid, stop, peak))
    sampler.start()
    out, _ = child.communicate()
    stop.set()
    sampler.join()
    if child.returncode != 0:
        raise SystemExit(f"{run} failed with exit code {child.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    report = RiskReport.from_dict(result["report"])
    return Measured(result["seconds"], result["rows"], report, peak[0] / 2**20)


def scale(max_rows: int | None) -> None:
    configs = [("sequential", 1, 1), ("joblib", 2, 0), ("sequential", 1, 0)]
    results = []
    for backend, n_jobs, threads in configs:
        result = measured(Run(backend=backend, n_jobs=n_jobs, threads=threads, max_rows=max_rows))
        label = f"{backend}, {'default' if threads == 0 else threads} native threads"
        results.append((label, n_jobs, result))
    base = results[0][2]
    n_sets = len(base.report.feature_sets)
    print(
        f"\nAdult, {base.rows} rows, feature sets = {n_sets} singles, 3 seeds, hgb, "
        "membership + attribute"
    )
    print("| backend | processes | wall s | x first | peak RSS MiB (all processes) | x first |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, n_jobs, result in results:
        print(
            f"| {label} | {n_jobs} | {result.seconds:.1f} | {result.seconds / base.seconds:.2f} "
            f"| {result.peak_mib:.0f} | {result.peak_mib / base.peak_mib:.2f} |"
        )
    top = [r.to_dict() for r in base.report.feature_sets[:5]]
    same = all([r.to_dict() for r in m.report.feature_sets[:5]] == top for _, _, m in results)
    print(f"\nsame top-5 scores on every backend: {same}")
    print_model(base.report)
    print_ranking(base.report, limit=5)


def full(max_rows: int | None) -> None:
    """The single-feature audit of issue #3: hgb and rf, 14 attributes, all three attacks.

    The property game runs 8 shadows per world and split (the library's default 4 gives each
    repeat 8 test guesses: a CI of about +-0.4).
    """
    for model in ("hgb", "rf"):
        run = Run(model, "joblib", 2, 0, max_rows, ALL_ATTACKS, ADULT_14, n_shadows=8)
        result = measured(run)
        print(
            f"\n{model}: Adult, {result.rows} rows, {len(result.report.feature_sets)} singles "
            f"(fnlwgt included), 3 seeds, {' + '.join(ALL_ATTACKS)} (8 property shadows per "
            "world); joblib, 2 processes: "
            f"{result.seconds:.1f} s wall, peak RSS {result.peak_mib:.0f} MiB (all processes); "
            f"load average {os.getloadavg()[0]:.1f} at the end"
        )
        print_model(result.report)
        print_ranking(result.report)


# -- leak and mitigate-rf ------------------------------------------------------------------------


def memorizer() -> Any:
    """One-hot (every category kept) + weakly regularised logistic regression."""
    from sklearn.compose import ColumnTransformer, make_column_selector
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    categories = make_column_selector(dtype_include=["object", "string", "category"])
    prepare = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), categories),
            ("num", StandardScaler(), make_column_selector(dtype_include="number")),
        ]
    )
    return make_pipeline(prepare, LogisticRegression(C=10.0, max_iter=2000))


def leak(max_rows: int | None) -> None:
    """A planted leak: a record identifier and a random coin added to Adult; singles; drop loop."""
    from attrpriv.assess.assessor import FeatureRiskAssessor
    from attrpriv.assess.mitigation import Drop

    X, y = load("adult", max_rows or 5000)
    rng = np.random.default_rng(0)
    X = X.assign(
        record_id=[f"id{i:05d}" for i in rng.permutation(len(X))],
        coin=rng.integers(0, 2, len(X)),
    )
    risk = FeatureRiskAssessor(memorizer(), feature_sets="singles", threshold=0.02, n_jobs=2)
    start = time.perf_counter()
    report = risk.mitigate(X, y, [Drop()], max_steps=3)
    seconds = time.perf_counter() - start
    print(
        f"\nAdult {len(X)} rows + record_id + coin; one-hot logistic regression (C=10); singles, "
        f"3 seeds, loss attack + attribute (hgb); joblib 2 processes; {seconds:.0f} s in all"
    )
    print_model(report)
    print_ranking(report)
    print_path(report)


# Public bounds for the Laplace mechanism on fnlwgt, which the schema leaves without a domain:
# Adult's largest weight (1,490,400) rounded up, so read off the data (documented as such).
FNLWGT_BOUNDS = {"fnlwgt": (0.0, 1_500_000.0)}


def mitigate_rf(max_rows: int | None, max_steps: int, threshold: float, flag_on: str) -> None:
    """Random forest on Adult: the differential membership attack on every single feature, then
    the ladder generalize -> local DP -> drop on the riskiest flagged one until none is flagged.

    Only the membership attack (claim 1) runs: a first run that also scored attribute inference,
    with a threshold picked between the 3rd and 4th scores, chased noise (docs/benchmarks.md).
    """
    from attrpriv.assess.assessor import FeatureRiskAssessor
    from attrpriv.assess.mitigation import Drop, Generalize, LocalDPNoise

    X, y = load("adult", max_rows, keep=ADULT_14)
    schema = datasets.load("adult").schema
    ladder = [Generalize(bins=5), LocalDPNoise(1.0, schema=schema, bounds=FNLWGT_BOUNDS), Drop()]
    risk = FeatureRiskAssessor(
        make_model("rf"),
        feature_sets="singles",
        attacks=("membership",),
        threshold=threshold,
        flag_on=flag_on,
    )
    start = time.perf_counter()
    report = risk.mitigate(X, y, ladder, max_steps=max_steps)
    seconds = time.perf_counter() - start
    print(
        f"\nrf: Adult, {len(X)} rows, {len(report.feature_sets)} singles (fnlwgt included), "
        f"3 seeds, {' + '.join(report.settings['attacks'])}; joblib, 2 processes; ladder "
        f"{' -> '.join(map(repr, ladder))}; threshold {threshold:.4f}, flag_on={flag_on}; "
        f"max_steps {max_steps}; "
        f"{seconds:.0f} s in all"
    )
    print_model(report)
    print_ranking(report)
    print_path(report)
    assert report.mitigation is not None
    final = report.mitigation.final
    print(
        f"test accuracy before {report.model.utility_test:.4f}, after {final.utility:.4f} "
        f"({final.utility_paid:+.4f} paid); largest score {report.max_score:+.4f} -> "
        f"{final.max_score:+.4f} (threshold {threshold:.4f})"
    )
    for step in report.mitigation.steps[1:]:
        print(f"step {step.step} applied: {json.dumps(step.applied, default=str)}")
    print("\nthe mitigated data's assessment (last step):")
    print_ranking(risk.final_report_)


# -- anchor: every membership attack on one split, one target, the same attacked rows ------------

ANCHOR_TABLES = {"adult": None, "census_kdd": 20_000}  # rows (None: all); census_kdd held out
ANCHOR_LEARNERS = ("rf", "hgb", "logreg", "mlp")
TEXTBOOK_POPULATION = 5000  # RMIA's population records z (the paper's pairwise test)


@dataclass(frozen=True)
class Attacked:
    """One table's assessor split (repeat 0 of the defaults) and its fitted target."""

    data: Any  # attrpriv.assess._grid.GridData
    split: Any
    model: Any
    pool: np.ndarray  # rows neither attacked member nor attacked non-member
    fit: Timed

    @property
    def candidates(self) -> Any:
        from attrpriv.assess.membership import candidates

        return candidates(self.split.members, self.split.non_members)


def attacked(name: str, model_name: str, seed: int = 0) -> Attacked:
    from attrpriv.assess import _grid

    X, y = load(name, ANCHOR_TABLES[name], keep=ADULT_14 if name == "adult" else ())
    X, y = X.reset_index(drop=True), y.reset_index(drop=True)
    data = _grid.GridData(
        X=X,
        y=y,
        estimator=make_model(model_name),
        classification=True,
        test_size=0.3,
        membership=True,
        membership_attack="rmia",
        n_shadows=4,
        n_references=2,
        attack_model="hgb",
        max_attack_rows=2000,
        confidence=0.95,
        seed=seed,
    )
    split = _grid.make_split(data, 0)
    model, spent = timed(lambda: _grid.reseeded(data.estimator, seed).fit(*split.train))
    return Attacked(data, split, model, _grid.population_rows(data, split), spent)


def _ci_text(score: Score, shift: float = 0.0) -> str:
    low, high = (v + shift for v in score.ci)
    return f"{score.attack:.3f} [{low:.3f}, {high:.3f}]"


def anchor_row(name: str, learner: str, attack: str, result: Any, spent: Timed, fit: Timed) -> str:
    from attrpriv.assess.membership import tpr_interval

    tpr1, tpr01 = tpr_interval(result, 0.01), tpr_interval(result, 0.001)
    return (
        f"| {name} | {learner} | {attack} | {_ci_text(result.score, 0.5)} "
        f"| {_ci_text(tpr1, 0.01)} | {_ci_text(tpr01, 0.001)} | {spent.cpu:.1f} "
        f"| {spent.wall:.1f} | {spent.cpu / fit.cpu:.2f} |"
    )


def ours_by_references(target: Attacked, attack: str) -> tuple[Any, Timed]:
    """One of our reference attacks exactly as the assessor runs it (its grid tasks)."""
    from attrpriv.assess import _grid
    from attrpriv.assess.reference import calibrate_a, reference_attack, reference_term

    def run() -> Any:
        data = _grid.GridData(**{**target.data.__dict__, "membership_attack": attack})
        found = [_grid.run_task(data, _grid.Task("reference", 0, index=k)) for k in range(2)]
        a = None
        if attack == "rmia":
            losses, trained = (
                np.array([f.population for f in found]),
                np.array([f.trained for f in found]),
            )
            a = calibrate_a(losses, trained)
        candidates = np.array([f.candidates for f in found])
        term = reference_term(candidates, "classification", attack, a=a)
        return reference_attack(target.model, target.split.members, target.split.non_members, term)

    return timed(run)


def textbook_rmia(target: Attacked, n_references: int = 2) -> tuple[Any, Timed]:
    """Offline RMIA as the paper states it, written apart from ours as a cross-check.

    References on uniform (unstratified) random samples of the non-attacked rows, as many as
    the target trained on (at most 80%); ``a`` by the paper's recipe, one reference playing the
    target for the other on the population records it did not train on (grid 0, 0.05, ..., 1,
    best AUC); the score is the paper's pairwise test against 5,000 population records ``z``
    with ``gamma = 1``: the share of ``z`` whose likelihood ratio is below the candidate's.
    """
    from sklearn.metrics import roc_auc_score

    from attrpriv.assess.membership import membership_result
    from attrpriv.assess.models import per_record_loss

    def run() -> Any:
        data, X, y = target.data, target.data.X, target.data.y
        rng = np.random.default_rng(2024)
        size = min(len(target.split.train[0]), int(0.8 * target.pool.size))
        z = rng.choice(target.pool, size=min(TEXTBOOK_POPULATION, target.pool.size), replace=False)
        both = target.candidates
        p_cand, p_z, trained = [], [], []
        for k in range(n_references):
            rows = rng.choice(target.pool, size=size, replace=False)
            model = make_model(_learner(data.estimator), seed=k + 1)
            model.fit(X.iloc[rows], y.iloc[rows])
            p_cand.append(np.exp(-per_record_loss(model, both.X, both.y)))
            p_z.append(np.exp(-per_record_loss(model, X.iloc[z], y.iloc[z].to_numpy())))
            trained.append(np.isin(z, rows))
        p_cand, p_z, trained = np.array(p_cand), np.array(p_z), np.array(trained)
        grid = np.round(np.linspace(0, 1, 21), 2)

        def prx(p_out: np.ndarray, a: float) -> np.ndarray:
            return ((1 + a) * p_out + (1 - a)) / 2

        out = ~trained[1]
        aucs = [roc_auc_score(trained[0, out], p_z[0, out] / prx(p_z[1, out], a)) for a in grid]
        a = float(grid[int(np.argmax(aucs))])
        target_z = np.exp(-per_record_loss(target.model, X.iloc[z], y.iloc[z].to_numpy()))
        ratio_z = np.sort(target_z / prx(p_z.mean(axis=0), a))
        own = np.exp(-per_record_loss(target.model, both.X, both.y))
        ratio_x = own / prx(p_cand.mean(axis=0), a)
        score = np.searchsorted(ratio_z, ratio_x, side="left") / ratio_z.size  # gamma = 1
        return membership_result(both.labels, score, attack="textbook offline RMIA")

    return timed(run)


def _learner(estimator: Any) -> str:
    """The built-in model name of a make_model pipeline (its final step's class)."""
    final = type(estimator.steps[-1][1]).__name__
    return {"RandomForestClassifier": "rf", "HistGradientBoostingClassifier": "hgb",
            "LogisticRegression": "logreg", "MLPClassifier": "mlp"}[final]  # fmt: skip


def art_black_box(target: Attacked) -> tuple[Any, Timed]:
    """ART's MembershipInferenceBlackBox (random-forest attack model), trained on known rows
    that are not attacked (as many members, from the training rows, as non-members), scored on
    the attacked rows: ART's threat model knows some members, ours does not."""
    from art.attacks.inference.membership_inference import MembershipInferenceBlackBox
    from art.estimators.classification import SklearnClassifier

    from attrpriv.assess.membership import membership_result

    def run() -> Any:
        data, model = target.data, target.model
        encode = model[:-1].transform
        classes = {c: i for i, c in enumerate(model.classes_.tolist())}
        attacked_rows = set(target.split.members[0].index) | set(target.split.non_members[0].index)
        known_in = [i for i in target.split.train[0].index if i not in attacked_rows]
        known_out = [i for i in target.split.test[0].index if i not in attacked_rows]
        n = min(len(known_in), len(known_out), 2000)

        def arrays(rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
            X, y = data.X.loc[list(rows)], data.y.loc[list(rows)]
            return np.asarray(encode(X)), np.array([classes[v] for v in y.tolist()])

        attack = MembershipInferenceBlackBox(SklearnClassifier(model[-1]), attack_model_type="rf")
        (x_in, y_in), (x_out, y_out) = arrays(known_in[:n]), arrays(known_out[:n])
        attack.fit(x=x_in, y=y_in, test_x=x_out, test_y=y_out)
        both = target.candidates
        x, codes = np.asarray(encode(both.X)), np.array([classes[v] for v in both.y.tolist()])
        scores = np.ravel(attack.infer(x, codes, probabilities=True))
        return membership_result(both.labels, scores, attack="ART black box (rf)")

    return timed(run)


def anchor_rows(name: str, learner: str) -> list[str]:
    """Every attack on one (table, learner): one target, one split, the same attacked rows."""
    target = attacked(name, learner)
    both = target.candidates
    rows = []
    for attack in ("rmia", "rmia-online", "lira"):
        label = "attrpriv rmia (default)" if attack == "rmia" else f"attrpriv {attack}"
        result, spent = ours_by_references(target, attack)
        rows.append(anchor_row(name, learner, f"{label}, 2 references", result, spent, target.fit))
    result, spent = textbook_rmia(target)
    rows.append(anchor_row(name, learner, "textbook offline RMIA, 2 references", result, spent,
                           target.fit))  # fmt: skip
    members, non_members = target.split.members, target.split.non_members
    result, spent = timed(lambda: loss_threshold_attack(target.model, members, non_members))
    rows.append(anchor_row(name, learner, "attrpriv loss threshold", result, spent, target.fit))
    pool = target.pool

    def shadows() -> Any:
        attack = ShadowModelAttack(n_shadows=4, seed=0)
        attack.fit(make_model(learner), target.data.X.iloc[pool], target.data.y.iloc[pool])
        return attack.attack(target.model, members, non_members)

    result, spent = timed(shadows)
    rows.append(anchor_row(name, learner, "attrpriv shadow models (4)", result, spent, target.fit))
    try:
        import art  # noqa: F401
    except ImportError:
        rows.append(f"| {name} | {learner} | ART black box | not installed | | | | | |")
    else:
        result, spent = art_black_box(target)
        rows.append(anchor_row(name, learner, "ART black box (rf)", result, spent, target.fit))
    print(f"({name} {learner}: {len(both.labels)} attacked rows, target fit {target.fit.cpu:.1f} "
          "CPU s)", file=sys.stderr, flush=True)  # fmt: skip
    return rows


def anchor(tables: Sequence[str], learners: Sequence[str]) -> None:
    print(
        "\nOne split per table (the assessor's defaults: 30% held out, 2,000 + 2,000 attacked), "
        "one target per learner, every attack on the same attacked rows; AUC and TPRs with 95% "
        "CIs (DeLong; stratified bootstrap, 200 resamples); CPU and wall s of the attack "
        "(references, shadows or attack model included) and its CPU's ratio to fitting the "
        "target once"
    )
    print("| table | learner | attack | AUC | TPR@1%FPR | TPR@0.1%FPR | CPU s | wall s "
          "| x target fit |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    with threadpool_limits(1):  # same native threads for every attack (a shared 2-core box)
        for name in tables:
            for learner in learners:
                for line in anchor_rows(name, learner):
                    print(line, flush=True)


def anchor_seeds(tables: Sequence[str], learners: Sequence[str], seeds: int) -> None:
    """The default attack and the textbook offline RMIA over ``seeds`` splits and targets (seed
    s: the assessor's split with seed s, the target seeded s), one row per seed, then the means
    and the per-seed AUC difference."""
    from attrpriv.assess.membership import tpr_interval

    print(f"\nThe default (offline RMIA, informed references) and the textbook offline RMIA, 2 "
          f"references each, over {seeds} splits and targets; AUC, TPR@1%FPR, TPR@0.1%FPR, "
          "CPU s of the attack")  # fmt: skip
    print("| table | learner | seed | default | textbook | AUC difference |")
    print("|---|---|---:|---|---|---:|")
    with threadpool_limits(1):
        for name in tables:
            for learner in learners:
                found: dict[str, list[tuple[float, ...]]] = {"default": [], "textbook": []}
                for seed in range(seeds):
                    target = attacked(name, learner, seed)
                    for label, attack in (("default", ours_by_references),
                                          ("textbook", _textbook)):  # fmt: skip
                        result, spent = attack(target, "rmia")
                        tprs = (tpr_interval(result, 0.01), tpr_interval(result, 0.001))
                        found[label].append((result.score.attack, tprs[0].attack,
                                             tprs[1].attack, spent.cpu))  # fmt: skip
                    ours, theirs = found["default"][-1], found["textbook"][-1]
                    print(f"| {name} | {learner} | {seed} | {_four(ours)} | {_four(theirs)} "
                          f"| {ours[0] - theirs[0]:+.3f} |", flush=True)  # fmt: skip
                mean = {k: tuple(np.mean(v, axis=0)) for k, v in found.items()}
                gaps = np.array(found["default"])[:, 0] - np.array(found["textbook"])[:, 0]
                spread = f"sd {gaps.std(ddof=1):.3f}, " if seeds > 1 else ""
                print(f"| {name} | {learner} | mean | {_four(mean['default'])} "
                      f"| {_four(mean['textbook'])} | {gaps.mean():+.3f} ({spread}default "
                      f"higher in {int((gaps > 0).sum())} of {seeds}) |", flush=True)  # fmt: skip


def _textbook(target: Attacked, attack: str) -> tuple[Any, Timed]:
    """:func:`textbook_rmia` called as :func:`ours_by_references` is (``attack`` unused)."""
    return textbook_rmia(target)


def _four(values: Sequence[float]) -> str:
    auc, tpr1, tpr01, cpu = values
    return f"{auc:.3f} / {tpr1:.3f} / {tpr01:.3f} / {cpu:.1f} s"


# -- audit-vs-art: ART's random-forest audit and ours, the same work ------------------------------


def ordinal_adult() -> tuple[pd.DataFrame, pd.Series]:
    """Adult without missing values: 14 attributes (``fnlwgt`` too), categories as codes."""
    frame, _ = datasets.load("adult")
    frame = frame.dropna().reset_index(drop=True)
    X = frame.drop(columns=["income", "split"])
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    codes = {c: X[c].astype("category").cat.codes.astype(float) for c in categorical}
    income = pd.Series(pd.factorize(frame["income"], sort=True)[0], name="income")
    return X.assign(**codes).astype(float), income  # codes for ART and us alike


@dataclass(frozen=True)
class Timed:
    """CPU (this process, every thread) and wall seconds of one block of work."""

    cpu: float
    wall: float


def timed(work: Any) -> tuple[Any, Timed]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return result, Timed(time.process_time() - cpu, time.perf_counter() - wall)


def audit_split(X: pd.DataFrame, y: pd.Series, seed: int) -> Any:
    """The split ``our_audit`` attacks in repeat 0 of seed ``seed`` (half the rows trained on,
    2,000 + 2,000 attacked), so that ART attacks the same target on the same rows."""
    from sklearn.ensemble import RandomForestClassifier

    from attrpriv.assess import _grid

    data = _grid.GridData(
        X=X, y=y, estimator=RandomForestClassifier(100), classification=True, test_size=0.5,
        membership=True, membership_attack="rmia", n_shadows=4, n_references=2,
        attack_model="hgb", max_attack_rows=2000, confidence=0.95, seed=seed,
    )  # fmt: skip
    return _grid.make_split(data, 0)


def art_audit(X: pd.DataFrame, y: pd.Series, seed: int) -> dict[str, tuple[float, float]]:
    """ART's black-box attack on the full model and on each model retrained without one column.

    The targets are ours (the same training rows and random_state); ART's attack model learns
    on the rows that are not attacked (as many training rows as held-out ones) and scores the
    attacked ones, ours: 2,000 members and 2,000 non-members. Returns
    ``{"(full)" or column: (AUC, TPR at 1% FPR)}``.
    """
    from art.attacks.inference.membership_inference import MembershipInferenceBlackBox
    from art.estimators.classification import SklearnClassifier
    from sklearn.ensemble import RandomForestClassifier

    from attrpriv.assess.membership import membership_result

    split = audit_split(X, y, seed)
    train, test = split.train[0].index.to_numpy(), split.test[0].index.to_numpy()
    eval_in, eval_out = split.members[0].index.to_numpy(), split.non_members[0].index.to_numpy()
    fit_in, fit_out = np.setdiff1d(train, eval_in), np.setdiff1d(test, eval_out)
    n = min(fit_in.size, fit_out.size)
    fit_in, fit_out = fit_in[:n], fit_out[:n]
    codes = y.to_numpy()
    labels = np.r_[np.ones(eval_in.size), np.zeros(eval_out.size)].astype(int)
    results = {}
    for dropped in [None, *X.columns]:
        matrix = (X if dropped is None else X.drop(columns=[dropped])).to_numpy()
        model = RandomForestClassifier(100, random_state=seed).fit(matrix[train], codes[train])
        attack = MembershipInferenceBlackBox(SklearnClassifier(model), attack_model_type="rf")
        attack.fit(x=matrix[fit_in], y=codes[fit_in], test_x=matrix[fit_out], test_y=codes[fit_out])
        rows = np.r_[eval_in, eval_out]
        scores = np.ravel(attack.infer(matrix[rows], codes[rows], probabilities=True))
        result = membership_result(labels, scores, attack="ART")
        results["(full)" if dropped is None else dropped] = (result.auc, result.tpr_at_1pct_fpr)
    return results


def fit_targets(X: pd.DataFrame, y: pd.Series, seeds: int) -> None:
    """Fit the audit's target models alone: per seed, the full model and one per dropped column."""
    from sklearn.ensemble import RandomForestClassifier

    for seed in range(seeds):
        train = audit_split(X, y, seed).train[0].index.to_numpy()
        for dropped in [None, *X.columns]:
            part = X.iloc[train] if dropped is None else X.iloc[train].drop(columns=[dropped])
            RandomForestClassifier(100, random_state=seed).fit(part, y.iloc[train])


def our_audit(X: pd.DataFrame, y: pd.Series, seeds: int, attack: str = "rmia") -> RiskReport:
    from sklearn.ensemble import RandomForestClassifier

    from attrpriv.assess.assessor import FeatureRiskAssessor

    assessor = FeatureRiskAssessor(
        RandomForestClassifier(100),
        feature_sets="singles",
        attacks=("membership",),
        n_repeats=seeds,
        test_size=0.5,
        membership_attack=attack,
        backend="sequential",
        n_jobs=1,
    )
    return assessor.assess(X, y)


def _halves(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(n)
    return np.sort(order[: n // 2]), np.sort(order[n // 2 :])


def shared_vs_matched(n_references: int = 2) -> None:
    """The differential of each single with references shared (all features) or matched."""
    from sklearn.ensemble import RandomForestClassifier

    from attrpriv.assess.reference import (
        ReferenceTerm,
        fit_reference,
        reference_attack,
        reference_rows,
        reference_term,
    )
    from attrpriv.stats import delong_difference

    X, y = ordinal_adult()
    labels_all = y.to_numpy()
    rng = np.random.default_rng(0)
    train, test = _halves(len(X), rng)
    members, non_members = rng.choice(train, 2000, replace=False), rng.choice(test, 2000, False)
    rows = np.r_[members, non_members]
    labels = np.r_[np.ones(2000), np.zeros(2000)].astype(int)
    pool = np.setdiff1d(np.arange(len(X)), rows)  # offline references: never an attacked row

    def term(drop: Sequence[str]) -> ReferenceTerm:
        losses = []
        for k in range(n_references):
            model = fit_reference(
                RandomForestClassifier(100, random_state=k + 1),
                X,
                labels_all,
                reference_rows(labels_all, train.size, index=k, seed=0, rows=pool),
                drop=drop,
            )
            part = X.iloc[rows].drop(columns=list(drop))
            proba = model.predict_proba(part)[
                np.arange(rows.size), model.classes_.searchsorted(labels_all[rows])
            ]
            losses.append(-np.log(np.clip(proba, 1e-12, 1)))
        return reference_term(np.array(losses), "classification", "rmia")

    def scores(drop: Sequence[str], normalizer: ReferenceTerm) -> np.ndarray:
        kept = [c for c in X.columns if c not in drop]
        model = RandomForestClassifier(100, random_state=0).fit(X.iloc[train][kept], y.iloc[train])
        given = ((X.iloc[r][kept], labels_all[r]) for r in (members, non_members))
        return reference_attack(model, *given, normalizer).scores

    shared = term(())
    full = scores((), shared)
    print(f"\nshared vs matched references ({n_references} per model), Adult ordinal, RF(100)")
    print("| attribute | differential, shared references | matched references |")
    print("|---|---:|---:|")
    for column in X.columns:
        a = delong_difference(labels, full, scores([column], shared))
        b = delong_difference(labels, full, scores([column], term([column])))
        print(f"| {column} | {a.difference:+.4f} | {b.difference:+.4f} |")


def learners() -> None:
    """The attribute attackers' boosting: 100 rounds at rate 0.05 vs early stopping, and the
    other features one-hot vs as codes split natively (the default)."""
    from attrpriv.assess.inference import _group_rare, attack_learner
    from attrpriv.assess.models import coded_columns, make_coder

    head = load("adult", 5000)[0].iloc[:1500]
    print("\n| feature | setting | rounds | CPU s | judged accuracy |")
    print("|---|---|---:|---:|---:|")
    for feature in ("education", "relationship", "marital_status", "occupation"):
        rows = head[head[feature].notna()]
        others = rows.drop(columns=[feature])
        values = rows[feature].astype(str).to_numpy()
        judged = slice(700, None)
        known = _group_rare(values[:700])
        _, index, counts = np.unique(known, return_inverse=True, return_counts=True)
        learn = np.flatnonzero(counts[index] > 1)  # as attribute_inference: no lone value
        known = known[learn]
        for label, early, rate in (
            ("100 rounds, rate 0.05", False, 0.05),
            ("early stopping, rate 0.05", True, 0.05),
            ("early stopping, rate 0.1", True, 0.1),
        ):
            learner = attack_learner("hgb", "classification", 0, early_stop=early)
            learner.set_params(model__learning_rate=rate)
            cpu = time.process_time()
            fitted = learner.fit(others.iloc[learn], known)
            spent = time.process_time() - cpu
            accuracy = float(np.mean(fitted.predict(others.iloc[judged]) == values[judged]))
            print(f"| {feature} | {label}, one-hot | {fitted[-1].n_iter_} | {spent:.2f} "
                  f"| {accuracy:.3f} |")  # fmt: skip
        cpu = time.process_time()
        coder = make_coder().fit(others.iloc[learn])
        model = attack_learner("hgb", "classification", 0, early_stop=True)[-1]
        model.set_params(categorical_features=coded_columns(coder))
        codes = pd.DataFrame(coder.transform(others), columns=coder.get_feature_names_out())
        model.fit(codes.iloc[learn], known)
        spent = time.process_time() - cpu
        accuracy = float(np.mean(model.predict(codes.iloc[judged]) == values[judged]))
        print(f"| {feature} | early stopping, rate 0.1, coded (default) | {model.n_iter_} "
              f"| {spent:.2f} | {accuracy:.3f} |")  # fmt: skip


PLANTED = {"adult": ("sex", 5000), "german_credit": ("personal_status_sex", None)}


def planted() -> None:
    """A planted numeric row ID and a 5%-noise copy of a sensitive column, the CLI defaults.

    Adult (5,000 rows, as the README's job) and German credit (all 1,000 rows), HGB and RF; the
    sensitive column is named (``--sensitive``). Prints, per run, the row ID's rank, score and
    whether (and why) it is flagged, and the copy's proxy rank and flag.
    """
    from attrpriv.assess.assessor import FeatureRiskAssessor

    print("\n| table | model | CPU s | full-model AUC | row_id rank | row_id membership "
          "[95% CI] | flagged | why | copy: proxy rank | drop [95% CI] | flagged |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---|---|---:|---:|---|")
    for name, (column, rows) in PLANTED.items():
        X, y = load(name, rows, seed=1)
        rng = np.random.default_rng(1)
        X = X.assign(row_id=rng.permutation(len(X)).astype(float))
        values = X[column].astype(str).to_numpy()
        other = rng.permutation(values)  # another row's value: a 5% noisy copy
        X = X.assign(copy=np.where(rng.random(len(X)) < 0.05, other, values))
        for model_name in ("hgb", "rf"):
            assessor = FeatureRiskAssessor(
                make_model(model_name), sensitive=(column,), backend="sequential", n_jobs=1
            )
            report, spent = timed(lambda a=assessor, X=X, y=y: a.assess(X, y))
            m = report.model.membership
            assert m is not None
            risk = report["row_id"]
            (exposed,) = report.sensitive
            proxies = [p.label for p in exposed.proxies]
            proxy = exposed.proxies[proxies.index("copy")]
            print(
                f"| {name} | {model_name} | {spent.cpu:.1f} | {m.auc:.3f} | {risk.rank} "
                f"| {_score(risk.attacks.get('membership'))} | {'yes' if risk.flagged else 'no'} "
                f"| {risk.why} | {proxies.index('copy') + 1} | {_score(proxy.drop)} "
                f"| {'yes' if proxy.flagged else 'no'} |",
                flush=True,
            )


def audit_vs_art() -> None:
    try:
        import art  # noqa: F401
    except ImportError:
        print("adversarial-robustness-toolbox is not installed: audit-vs-art skipped")
        return
    from scipy.stats import spearmanr

    X, y = ordinal_adult()
    with threadpool_limits(1):
        theirs, art_time = timed(lambda: art_audit(X, y, seed=0))
        one, one_time = timed(lambda: our_audit(X, y, seeds=1))
        online, online_time = timed(lambda: our_audit(X, y, seeds=1, attack="rmia-online"))
        three, three_time = timed(lambda: our_audit(X, y, seeds=3))
        _, fit_time = timed(lambda: fit_targets(X, y, seeds=3))
    print(
        f"\nAdult {len(X)} rows x {X.shape[1]} attributes (ordinal), RandomForest(100), half the "
        f"rows members, 15 models per seed; ART {version('adversarial-robustness-toolbox')}, "
        "one native thread"
    )
    print("| run | CPU s | wall s | CPU x ART | full-model AUC | TPR@1%FPR | TPR@0.1%FPR |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    art_full = theirs["(full)"]
    print(
        f"| ART black box (rf), 1 seed | {art_time.cpu:.1f} | {art_time.wall:.1f} | 1.00 "
        f"| {art_full[0]:.3f} | {art_full[1]:.3f} | - |"
    )
    runs = (
        ("offline RMIA (default), 1 seed", one, one_time),
        ("online RMIA, 1 seed", online, online_time),
        ("offline RMIA (default), 3 seeds, CIs", three, three_time),
    )
    for label, report, spent in runs:
        m = report.model.membership
        assert m is not None
        print(
            f"| attrpriv {label} | {spent.cpu:.1f} | {spent.wall:.1f} "
            f"| {spent.cpu / art_time.cpu:.2f} | {m.auc:.3f} | {m.tpr_at_1pct_fpr:.3f} "
            f"| {m.tpr_at_01pct_fpr:.3f} |"
        )
    print(
        f"| fitting the 45 target models alone (3 seeds) | {fit_time.cpu:.1f} "
        f"| {fit_time.wall:.1f} | {fit_time.cpu / art_time.cpu:.2f} | - | - | - |"
    )
    print(f"\n3-seed audit / its target models' training: {three_time.cpu / fit_time.cpu:.2f}x CPU")
    print(f"1-seed audit, offline / online RMIA: {one_time.cpu / online_time.cpu:.2f}x CPU")
    print("\n| attribute | ART: full - retrained AUC | ours, 1 seed | ours, 3 seeds [95% CI] |")
    print("|---|---:|---:|---:|")
    ours_one = {r.label: r.attacks["membership"] for r in one.feature_sets}
    ours_three = {r.label: r.attacks["membership"] for r in three.feature_sets}
    art_diff = {c: art_full[0] - theirs[c][0] for c in X.columns}
    for column in sorted(X.columns, key=lambda c: -ours_three[c].difference):
        print(
            f"| {column} | {art_diff[column]:+.4f} | {ours_one[column].difference:+.4f} "
            f"| {_score(ours_three[column])} |"
        )
    rho = spearmanr([art_diff[c] for c in X.columns], [ours_three[c].difference for c in X.columns])
    print(f"\nSpearman(ART, ours 3 seeds) over the 14 attributes: {rho.statistic:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["scale", "full", "mitigate-rf", "anchor", "anchor-seeds", "audit-vs-art"]
    parts += ["references", "learners"]
    parts += ["planted", "leak"]
    parts.append("_child")
    parser.add_argument("part", choices=parts)
    parser.add_argument("run", nargs="?", default="{}", help="_child only: a Run as JSON")
    parser.add_argument("--max-rows", type=int, default=None)
    parser.add_argument("--tables", default=",".join(ANCHOR_TABLES), help="anchor: tables")
    parser.add_argument("--learners", default=",".join(ANCHOR_LEARNERS), help="anchor: learners")
    parser.add_argument("--seeds", type=int, default=5, help="anchor-seeds: splits and targets")
    parser.add_argument("--max-steps", type=int, default=6, help="mitigate-rf: loop steps")
    parser.add_argument("--threshold", type=float, default=0.01, help="mitigate-rf: flag above")
    parser.add_argument(
        "--flag-on", choices=["estimate", "lower"], default="estimate", help="mitigate-rf: CI end"
    )
    args = parser.parse_args(argv)
    if args.part == "_child":
        spec = json.loads(args.run)
        run = Run(**{**spec, "attacks": tuple(spec["attacks"]), "keep": tuple(spec["keep"])})
        print(json.dumps(_one_run(run)))
        return
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(
        f"attrpriv assess benchmark: {python}, {os.cpu_count()} CPUs, "
        f"scikit-learn {version('scikit-learn')}, load average {os.getloadavg()[0]:.1f}"
    )
    if args.part == "scale":
        scale(args.max_rows)
    elif args.part == "full":
        full(args.max_rows)
    elif args.part == "mitigate-rf":
        mitigate_rf(args.max_rows, args.max_steps, args.threshold, args.flag_on)
    elif args.part == "leak":
        leak(args.max_rows)
    elif args.part == "audit-vs-art":
        audit_vs_art()
    elif args.part == "planted":
        with threadpool_limits(1):
            planted()
    elif args.part == "learners":
        with threadpool_limits(1):
            learners()
    elif args.part == "references":
        with threadpool_limits(1):
            shared_vs_matched()
    elif args.part == "anchor-seeds":
        anchor_seeds(args.tables.split(","), args.learners.split(","), args.seeds)
    else:
        anchor(args.tables.split(","), args.learners.split(","))


if __name__ == "__main__":
    main()
