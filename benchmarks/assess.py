"""Feature risk assessment: scale, a full audit, mitigation, and our membership attacks vs ART.

    python benchmarks/assess.py scale                  # Adult, singles, 3 seeds, hgb (minutes)
    python benchmarks/assess.py scale --max-rows 5000  # quicker
    python benchmarks/assess.py full                   # hgb and rf, 14 singles, 3 attacks
    python benchmarks/assess.py mitigate-rf            # rf, escalation ladder until under threshold
    PYTHONPATH=/path/to/art python benchmarks/assess.py anchor  # needs ART (not a dependency)
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

``anchor`` attacks the same fitted model, on the same evaluation members and non-members, with
our loss-threshold and shadow-model attacks and with IBM ART's ``MembershipInferenceBlackBox``
(a random-forest attack model trained on half of the known members / non-members, the other
half being the evaluation records) and ``MembershipInferenceBlackBoxRuleBased`` (member if the
model is right). ART is NOT a project dependency: the part is skipped when it does not import.

``audit-vs-art`` is the same work done both ways, in one process on one native thread: Adult
without missing values (45,222 rows, the 14 attributes with ``fnlwgt``, categories as ordinal
codes), half the rows the members of a ``RandomForestClassifier(100)``, the model retrained
without each single attribute. ART: each of the 15 models fitted and attacked by
``MembershipInferenceBlackBox`` (a random-forest attack model trained on half the members and
non-members, scored on the other half). Ours: ``FeatureRiskAssessor`` with the default
reference-model attack (membership only, sequential), one seed, then three seeds; the CPU of
fitting the 45 target models alone is measured beside it. Prints CPU and wall seconds, the full
model's AUC and TPR at 1% / 0.1% FPR, and every attribute's differential (full minus retrained
AUC) by both, with their Spearman correlation.

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
from sklearn.metrics import roc_curve
from threadpoolctl import threadpool_limits

from attrpriv import datasets
from attrpriv.assess.membership import ShadowModelAttack, loss_threshold_attack
from attrpriv.assess.models import make_model
from attrpriv.assess.reference import ReferenceAttack
from attrpriv.assess.report import RiskReport
from attrpriv.data.schema import Role
from attrpriv.stats import Score

TARGETS = {"adult": "income", "german_credit": "credit_risk"}
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


# -- anchor --------------------------------------------------------------------------------------


def _metrics(labels: np.ndarray, scores: np.ndarray) -> tuple[float, float, float]:
    """AUC, advantage (max TPR - FPR) and TPR at 1% FPR of membership scores."""
    fpr, tpr, _ = roc_curve(labels, scores)
    auc = float(np.trapezoid(tpr, fpr))
    low = fpr <= 0.01
    return auc, float(np.max(tpr - fpr)), float(tpr[low].max()) if low.any() else 0.0


def _halves(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(n)
    return np.sort(order[: n // 2]), np.sort(order[n // 2 :])


@dataclass(frozen=True, eq=False)
class Target:
    """A fitted target model, its data, and who is a member.

    Half the rows are the attacker's auxiliary data (shadow models); the other half is split
    into the target's training rows (members) and held-out rows (non-members). Members and
    non-members are each split again: one half trains ART's attack model (ART's threat model
    knows some members), the other half is the evaluation set of every attack.
    """

    X: pd.DataFrame
    y: pd.Series
    model: Any
    aux: np.ndarray
    train_in: np.ndarray
    train_out: np.ndarray
    eval_in: np.ndarray
    eval_out: np.ndarray

    def part(self, rows: np.ndarray) -> tuple[pd.DataFrame, pd.Series]:
        return self.X.iloc[rows], self.y.iloc[rows]

    @property
    def eval_rows(self) -> np.ndarray:
        return np.concatenate([self.eval_in, self.eval_out])

    @property
    def labels(self) -> np.ndarray:
        return np.concatenate([np.ones(self.eval_in.size), np.zeros(self.eval_out.size)])


def make_target(name: str, model_name: str, max_rows: int | None, seed: int = 0) -> Target:
    X, y = load(name, max_rows, seed)
    rng = np.random.default_rng(seed)
    pool, aux = _halves(len(X), rng)
    train, test = (pool[i] for i in _halves(pool.size, rng))
    n = min(train.size, test.size)
    members, non_members = train[:n], rng.permutation(test)[:n]
    model = make_model(model_name, seed=seed).fit(X.iloc[train], y.iloc[train])
    train_in, eval_in = (members[i] for i in _halves(n, rng))
    train_out, eval_out = (non_members[i] for i in _halves(n, rng))
    return Target(X, y, model, aux, train_in, train_out, eval_in, eval_out)


Row = tuple[str, float, tuple[float, float, float]]


def ours(target: Target, model_name: str, seed: int = 0) -> list[Row]:
    """Our loss-threshold, shadow-model and reference-model attacks on the evaluation records.

    The reference attack's population is every row (its threat model: the attacker holds the
    population, candidates included, but not who was trained on).
    """
    rows: list[Row] = []
    members, non_members = target.part(target.eval_in), target.part(target.eval_out)
    start = time.perf_counter()
    loss = loss_threshold_attack(target.model, members, non_members)
    metrics = (loss.auc, loss.advantage, loss.tpr_at_1pct_fpr)
    rows.append(("ours: loss threshold", time.perf_counter() - start, metrics))
    start = time.perf_counter()
    shadow = ShadowModelAttack(n_shadows=4, seed=seed)
    shadow.fit(make_model(model_name, seed=seed), *target.part(target.aux))
    result = shadow.attack(target.model, members, non_members)
    metrics = (result.auc, result.advantage, result.tpr_at_1pct_fpr)
    rows.append(("ours: shadow models (4)", time.perf_counter() - start, metrics))
    start = time.perf_counter()
    reference = ReferenceAttack(n_references=2, seed=seed).fit(
        make_model(model_name), target.X, target.y
    )
    result = reference.attack(target.model, members, non_members)
    metrics = (result.auc, result.advantage, result.tpr_at_1pct_fpr)
    rows.append(("ours: reference models (2), default", time.perf_counter() - start, metrics))
    return rows


def art_attacks(target: Target) -> list[Row]:
    """ART's black-box (rf attack model) and rule-based attacks on the same records."""
    from art.attacks.inference.membership_inference import (
        MembershipInferenceBlackBox,
        MembershipInferenceBlackBoxRuleBased,
    )
    from art.estimators.classification import SklearnClassifier

    encode = target.model[:-1].transform  # ART takes arrays: the pipeline's fitted encoding
    classes = {c: i for i, c in enumerate(target.model.classes_.tolist())}

    def arrays(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X, y = target.part(rows)
        return encode(X), np.array([classes[v] for v in y.tolist()])

    classifier = SklearnClassifier(target.model[-1])
    rows: list[Row] = []
    start = time.perf_counter()
    black_box = MembershipInferenceBlackBox(classifier, attack_model_type="rf")
    (x_in, y_in), (x_out, y_out) = arrays(target.train_in), arrays(target.train_out)
    black_box.fit(x=x_in, y=y_in, test_x=x_out, test_y=y_out)
    scores = black_box.infer(*arrays(target.eval_rows), probabilities=True)
    metrics = _metrics(target.labels, np.ravel(scores))
    rows.append(("ART black box (rf)", time.perf_counter() - start, metrics))
    start = time.perf_counter()
    guesses = MembershipInferenceBlackBoxRuleBased(classifier).infer(*arrays(target.eval_rows))
    metrics = _metrics(target.labels, np.ravel(guesses))
    rows.append(("ART rule based", time.perf_counter() - start, metrics))
    return rows


def anchor_rows(name: str, model_name: str, max_rows: int | None) -> list[str]:
    """One table row per attack on one (dataset, model)."""
    target = make_target(name, model_name, max_rows)
    results = ours(target, model_name) + art_attacks(target)
    art_auc = next(r for r in results if r[0].startswith("ART black box"))[2][0]
    return [
        f"| {name} ({len(target.X)}) | {model_name} | {attack} | {auc:.3f} | {auc / art_auc:.2f} "
        f"| {advantage:.3f} | {tpr:.3f} | {seconds:.1f} |"
        for attack, seconds, (auc, advantage, tpr) in results
    ]


def anchor(max_rows: int | None) -> None:
    try:
        import art  # noqa: F401
    except ImportError:
        print("adversarial-robustness-toolbox is not installed: anchor comparison skipped")
        return
    print(
        f"\nART {version('adversarial-robustness-toolbox')}; eval = {{half the members}} + "
        "{as many non-members}; members = target training rows"
    )
    print("| data (rows) | target | attack | AUC | x ART black box | advantage | TPR@1%FPR | s |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    with threadpool_limits(1):  # same native threads for every attack (a shared 2-core box)
        for name, rows in (("adult", max_rows or 12000), ("german_credit", None)):
            for model_name in ("rf", "hgb"):
                for line in anchor_rows(name, model_name, rows):
                    print(line)


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


def art_audit(X: pd.DataFrame, y: pd.Series, seed: int) -> dict[str, tuple[float, float]]:
    """ART's black-box attack on the full model and on each model retrained without one column.

    Returns ``{"(full)" or column: (AUC, TPR at 1% FPR)}``.
    """
    from art.attacks.inference.membership_inference import MembershipInferenceBlackBox
    from art.estimators.classification import SklearnClassifier
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(seed)
    train, test = _halves(len(X), rng)
    codes = y.to_numpy()
    fit_in, eval_in = (train[i] for i in _halves(train.size, rng))
    fit_out, eval_out = (test[i] for i in _halves(test.size, rng))
    labels = np.r_[np.ones(eval_in.size), np.zeros(eval_out.size)]
    results = {}
    for dropped in [None, *X.columns]:
        matrix = (X if dropped is None else X.drop(columns=[dropped])).to_numpy()
        model = RandomForestClassifier(100, random_state=seed).fit(matrix[train], codes[train])
        attack = MembershipInferenceBlackBox(SklearnClassifier(model), attack_model_type="rf")
        attack.fit(x=matrix[fit_in], y=codes[fit_in], test_x=matrix[fit_out], test_y=codes[fit_out])
        rows = np.r_[eval_in, eval_out]
        scores = np.ravel(attack.infer(matrix[rows], codes[rows], probabilities=True))
        auc, _, tpr = _metrics(labels, scores)
        results["(full)" if dropped is None else dropped] = (auc, tpr)
    return results


def fit_targets(X: pd.DataFrame, y: pd.Series, seeds: int) -> None:
    """Fit the audit's target models alone: per seed, the full model and one per dropped column."""
    from sklearn.ensemble import RandomForestClassifier

    for seed in range(seeds):
        train, _ = _halves(len(X), np.random.default_rng(seed))
        for dropped in [None, *X.columns]:
            part = X.iloc[train] if dropped is None else X.iloc[train].drop(columns=[dropped])
            RandomForestClassifier(100, random_state=seed).fit(part, y.iloc[train])


def our_audit(X: pd.DataFrame, y: pd.Series, seeds: int) -> RiskReport:
    from sklearn.ensemble import RandomForestClassifier

    from attrpriv.assess.assessor import FeatureRiskAssessor

    assessor = FeatureRiskAssessor(
        RandomForestClassifier(100),
        feature_sets="singles",
        attacks=("membership",),
        n_repeats=seeds,
        test_size=0.5,
        backend="sequential",
        n_jobs=1,
    )
    return assessor.assess(X, y)


def shared_vs_matched(n_references: int = 2) -> None:
    """The differential of each single with references shared (all features) or matched."""
    from sklearn.ensemble import RandomForestClassifier

    from attrpriv.assess.reference import fit_reference, reference_attack, reference_term
    from attrpriv.stats import delong_difference

    X, y = ordinal_adult()
    labels_all = y.to_numpy()
    rng = np.random.default_rng(0)
    train, test = _halves(len(X), rng)
    members, non_members = rng.choice(train, 2000, replace=False), rng.choice(test, 2000, False)
    rows = np.r_[members, non_members]
    labels = np.r_[np.ones(2000), np.zeros(2000)].astype(int)

    def term(drop: Sequence[str]) -> np.ndarray:
        losses = []
        for k in range(n_references):
            model = fit_reference(
                RandomForestClassifier(100, random_state=k + 1),
                X,
                labels_all,
                index=k,
                seed=0,
                drop=drop,
            )
            part = X.iloc[rows].drop(columns=list(drop))
            proba = model.predict_proba(part)[
                np.arange(rows.size), model.classes_.searchsorted(labels_all[rows])
            ]
            losses.append(-np.log(np.clip(proba, 1e-12, 1)))
        return reference_term(np.array(losses), "classification")

    def scores(drop: Sequence[str], normalizer: np.ndarray) -> np.ndarray:
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


def planted() -> None:
    """Issue 11: a planted row ID and a 5%-noise copy of sex in 2,400 Adult rows, defaults."""
    from attrpriv.assess.assessor import FeatureRiskAssessor

    X, y = load("adult", 2400, seed=1)
    rng = np.random.default_rng(1)
    X = X.assign(row_id=rng.permutation(len(X)).astype(float))
    flip = rng.random(len(X)) < 0.05
    other = np.where(X["sex"] == "Male", "Female", "Male")
    X = X.assign(sex_copy=np.where(flip, other, X["sex"].astype(str)))
    for model_name in ("hgb", "rf"):
        assessor = FeatureRiskAssessor(
            make_model(model_name), sensitive=("sex",), backend="sequential", n_jobs=1
        )
        report, spent = timed(lambda a=assessor: a.assess(X, y))
        m = report.model.membership
        assert m is not None
        print(
            f"\n{model_name}: {len(X)} rows, {spent.cpu:.1f} CPU s, full-model AUC {m.auc:.3f}, "
            f"TPR@1%FPR {m.tpr_at_1pct_fpr:.3f}"
        )
        print("| rank | feature set | membership differential [95% CI] | modified [95% CI] |")
        print("|---:|---|---:|---:|")
        for r in report.feature_sets[:3]:
            low, high = r.modified_ci
            print(
                f"| {r.rank} | {r.label} | {_score(r.attacks.get('membership'))} "
                f"| {r.modified:+.4f} [{low:+.4f}, {high:+.4f}] |"
            )
        (sex,) = report.sensitive
        print("\n| proxy rank of sex | feature set | inference drop [95% CI] |")
        print("|---:|---|---:|")
        for rank_, proxy in enumerate(sex.proxies[:3], start=1):
            print(f"| {rank_} | {proxy.label} | {_score(proxy.drop)} |")


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
    for label, report, spent in (("1 seed", one, one_time), ("3 seeds, CIs", three, three_time)):
        m = report.model.membership
        assert m is not None
        print(
            f"| attrpriv reference attack, {label} | {spent.cpu:.1f} | {spent.wall:.1f} "
            f"| {spent.cpu / art_time.cpu:.2f} | {m.auc:.3f} | {m.tpr_at_1pct_fpr:.3f} "
            f"| {m.tpr_at_01pct_fpr:.3f} |"
        )
    print(
        f"| fitting the 45 target models alone (3 seeds) | {fit_time.cpu:.1f} "
        f"| {fit_time.wall:.1f} | {fit_time.cpu / art_time.cpu:.2f} | - | - | - |"
    )
    print(f"\n3-seed audit / its target models' training: {three_time.cpu / fit_time.cpu:.2f}x CPU")
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
    parts = ["scale", "full", "mitigate-rf", "anchor", "audit-vs-art", "references", "learners"]
    parts += ["planted", "leak"]
    parts.append("_child")
    parser.add_argument("part", choices=parts)
    parser.add_argument("run", nargs="?", default="{}", help="_child only: a Run as JSON")
    parser.add_argument("--max-rows", type=int, default=None)
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
    else:
        anchor(args.max_rows)


if __name__ == "__main__":
    main()
