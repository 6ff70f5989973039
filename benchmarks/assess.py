"""Feature risk assessment: scale (sequential vs joblib) and our membership attacks vs ART.

    python benchmarks/assess.py scale                  # Adult, singles, 3 seeds, hgb (minutes)
    python benchmarks/assess.py scale --max-rows 5000  # quicker
    PYTHONPATH=/path/to/art python benchmarks/assess.py anchor  # needs ART (not a dependency)
    python benchmarks/assess.py leak                   # a planted leak, ranked and mitigated

``scale`` runs ``FeatureRiskAssessor.assess`` once per backend, each in a fresh subprocess, and
prints wall time and peak memory (resident set of the process and its workers, sampled every
0.1 s) with the ratio to the sequential run, then the five riskiest features of the first run.

``anchor`` attacks the same fitted model, on the same evaluation members and non-members, with
our loss-threshold and shadow-model attacks and with IBM ART's ``MembershipInferenceBlackBox``
(a random-forest attack model trained on half of the known members / non-members, the other
half being the evaluation records) and ``MembershipInferenceBlackBoxRuleBased`` (member if the
model is right). ART is NOT a project dependency: the part is skipped when it does not import.

``leak`` adds a record identifier and a random coin to 5,000 Adult rows, assesses every single
feature of a one-hot logistic regression that can memorise the identifier, and runs the drop
loop: the table shows whether the differential attack singles out the identifier.
docs/benchmarks.md quotes the output.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
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
from attrpriv.data.schema import Role

TARGETS = {"adult": "income", "german_credit": "credit_risk"}


def load(name: str, max_rows: int | None, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    """Features (schema roles other than ignore/target) and target of a bundled dataset."""
    frame, schema = datasets.load(name)
    if max_rows is not None and max_rows < len(frame):
        frame = frame.sample(max_rows, random_state=seed).reset_index(drop=True)
    dropped = set(schema.with_role(Role.IGNORE)) | {TARGETS[name]}
    return frame[[c for c in frame.columns if c not in dropped]], frame[TARGETS[name]]


# -- scale ---------------------------------------------------------------------------------------


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


def _one_run(backend: str, n_jobs: int, max_rows: int | None, threads: int) -> dict[str, Any]:
    """Child process: one assessment; prints its timing and top features as JSON.

    ``threads``: native (OpenMP/BLAS) threads of this process, 0 = the library default.
    joblib's loky workers get ``cpus // n_jobs`` threads each whatever this is.
    """
    from attrpriv.assess.assessor import FeatureRiskAssessor

    X, y = load("adult", max_rows)
    risk = FeatureRiskAssessor(
        make_model("hgb"), feature_sets="singles", n_repeats=3, backend=backend, n_jobs=n_jobs
    )
    start = time.perf_counter()
    with threadpool_limits(threads or None):
        report = risk.assess(X, y)
    seconds = time.perf_counter() - start
    top = [
        {
            "set": r.label,
            "membership": r.attacks["membership"].difference,
            "membership_ci": list(r.attacks["membership"].ci),
            "attribute": r.attacks["attribute"].difference,
            "overall": r.overall,
            "modified": r.modified,
        }
        for r in report.feature_sets[:5]
    ]
    model = report.model
    summary = {
        "auc": model.membership.auc if model.membership else None,
        "utility_test": model.utility_test,
        "gap": model.gap,
    }
    return {"seconds": seconds, "rows": len(X), "top": top, "model": summary}


def scale(max_rows: int | None) -> None:
    configs = [("sequential", 1, 1), ("joblib", 2, 0), ("sequential", 1, 0)]
    results = []
    for backend, n_jobs, threads in configs:
        command = [sys.executable, __file__, "_child", backend, str(n_jobs), str(threads)]
        if max_rows is not None:
            command += ["--max-rows", str(max_rows)]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        stop, peak = threading.Event(), [0]
        sampler = threading.Thread(target=_peak_rss, args=(child.pid, stop, peak))
        sampler.start()
        out, _ = child.communicate()
        stop.set()
        sampler.join()
        if child.returncode != 0:
            raise SystemExit(f"{backend} run failed with exit code {child.returncode}")
        result = json.loads(out.strip().splitlines()[-1])
        label = f"{backend}, {'default' if threads == 0 else threads} native threads"
        results.append((label, n_jobs, result, peak[0] / 2**20))
    base_time, base_mem = results[0][2]["seconds"], results[0][3]
    rows = results[0][2]["rows"]
    print(f"\nAdult, {rows} rows, feature sets = 13 singles, 3 seeds, hgb, membership + attribute")
    print("| backend | processes | wall s | x first | peak RSS MiB (all processes) | x first |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend, n_jobs, result, mem in results:
        seconds = result["seconds"]
        print(
            f"| {backend} | {n_jobs} | {seconds:.1f} | {seconds / base_time:.2f} "
            f"| {mem:.0f} | {mem / base_mem:.2f} |"
        )
    first = results[0][2]
    same = all(r[2]["top"] == first["top"] for r in results)
    print(f"\nsame top-5 scores on every backend: {same}")
    model = first["model"]
    print(
        f"full model: test accuracy {model['utility_test']:.4f}, "
        f"train-test gap {model['gap']:+.4f}, loss-attack AUC {model['auc']:.4f}"
    )
    print(
        "| rank | feature | membership diff (AUC) | 95% CI | attribute diff | overall | modified |"
    )
    print("|---:|---|---:|---|---:|---:|---:|")
    for i, top in enumerate(first["top"], start=1):
        low, high = top["membership_ci"]
        print(
            f"| {i} | {top['set']} | {top['membership']:+.4f} | [{low:+.4f}, {high:+.4f}] "
            f"| {top['attribute']:+.4f} | {top['overall']:+.4f} | {top['modified']:+.4f} |"
        )


# -- leak ----------------------------------------------------------------------------------------


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
    model = report.model
    print(
        f"\nAdult {len(X)} rows + record_id + coin; one-hot logistic regression (C=10); singles, "
        f"3 seeds, loss attack + attribute (hgb); joblib 2 processes; {seconds:.0f} s in all"
    )
    print(
        f"full model: test accuracy {model.utility_test:.4f}, gap {model.gap:+.4f}, "
        f"loss-attack AUC {model.membership.auc if model.membership else float('nan'):.4f}"
    )
    print("| rank | feature | membership diff [95% CI] | attribute diff | overfitting | importance "
          "| modified | flagged |")  # fmt: skip
    print("|---:|---|---|---:|---:|---:|---:|---|")
    for r in report.feature_sets:
        m, a = r.attacks["membership"], r.attacks.get("attribute")
        attribute = "skipped" if a is None else f"{a.difference:+.4f}"
        print(
            f"| {r.rank} | {r.label} | {m.difference:+.4f} [{m.ci[0]:+.4f}, {m.ci[1]:+.4f}] "
            f"| {attribute} | {r.overfitting:+.4f} | {r.importance:+.4f} "
            f"| {r.modified:+.4f} | {'yes' if r.flagged else 'no'} |"
        )
    for note in report.notes:
        print(f"note: {note}")
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
        return np.r_[self.eval_in, self.eval_out]

    @property
    def labels(self) -> np.ndarray:
        return np.r_[np.ones(self.eval_in.size), np.zeros(self.eval_out.size)]


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
    """Our loss-threshold and shadow-model attacks on the evaluation records."""
    rows: list[Row] = []
    members, non_members = target.part(target.eval_in), target.part(target.eval_out)
    start = time.perf_counter()
    loss = loss_threshold_attack(target.model, members, non_members, seed=seed)
    metrics = (loss.auc, loss.advantage, loss.tpr_at_1pct_fpr)
    rows.append(("ours: loss threshold", time.perf_counter() - start, metrics))
    start = time.perf_counter()
    shadow = ShadowModelAttack(n_shadows=4, seed=seed)
    shadow.fit(make_model(model_name, seed=seed), *target.part(target.aux))
    result = shadow.attack(target.model, members, non_members)
    metrics = (result.auc, result.advantage, result.tpr_at_1pct_fpr)
    rows.append(("ours: shadow models (4)", time.perf_counter() - start, metrics))
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
    art_auc = results[2][2][0]
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["scale", "anchor", "leak", "_child"])
    parser.add_argument("backend", nargs="?", default="sequential")
    parser.add_argument("n_jobs", nargs="?", type=int, default=1)
    parser.add_argument("threads", nargs="?", type=int, default=0)
    parser.add_argument("--max-rows", type=int, default=None)
    args = parser.parse_args(argv)
    if args.part == "_child":
        print(json.dumps(_one_run(args.backend, args.n_jobs, args.max_rows, args.threads)))
        return
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(
        f"attrpriv assess benchmark: {python}, {os.cpu_count()} CPUs, "
        f"scikit-learn {version('scikit-learn')}, load average {os.getloadavg()[0]:.1f}"
    )
    if args.part == "scale":
        scale(args.max_rows)
    elif args.part == "leak":
        leak(args.max_rows)
    else:
        anchor(args.max_rows)


if __name__ == "__main__":
    main()
