"""The assess attacks on Adult and German credit, with ART's attribute attacks as the anchor.

    python benchmarks/assess_attacks.py                       # ours only
    PYTHONPATH=/path/to/art python benchmarks/assess_attacks.py  # + IBM ART 1.20 (not a dep)

Prints four tables (markdown; `--tables` picks some, `--property-sample-size N` sets the
shadows' training-set size of table 3):

1. membership: per dataset and model, train/test accuracy, the overfitting gap, and the
   loss-threshold and shadow-model attacks (AUC with its 95% CI, advantage, TPR at 1% / 0.1% FPR);
2. attribute inference on the training records (Adult: the 2,000 members; German credit: a
   model trained on 500 rows, attacked on them): our attackers, the baselines
   without the model, the score (best attack minus best baseline, 95% CI) and, on the same fitted
   model, records and halves, ART's ``AttributeInferenceBlackBox`` (gradient boosting attack
   model, given the model's predicted class and the true label) and ART's two baselines;
3. property inference: meta-classifier accuracy, the shuffled-feature control, their difference;
4. property inference on a random column the shadows never see (10 seeds): the null.

Splits: Adult, 8,000 rows sampled (seed 0): 2,000 train (members), 2,000 non-members, 4,000 aux
(shadow data). German credit, 1,000 rows shuffled: 250 / 250 / 500. Attribute inference is run
on the members. All on one thread (threadpoolctl), every model seeded.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from attrpriv import datasets
from attrpriv.assess.inference import attribute_inference
from attrpriv.assess.membership import ShadowModelAttack, loss_threshold_attack, overfitting_gap
from attrpriv.assess.models import make_model
from attrpriv.assess.property import property_inference
from attrpriv.stats import Score

SETUP = {
    "adult": {"target": "income", "rows": 8000, "cuts": (2000, 4000), "drop": ["fnlwgt", "split"]},
    "german_credit": {"target": "credit_risk", "rows": 1000, "cuts": (250, 500), "drop": []},
}
ATTRIBUTES = {
    "adult": ["sex", "race", "relationship", "marital_status"],
    "german_credit": ["personal_status_sex", "foreign_worker", "housing"],
}
PROPERTIES = {
    "adult": [
        {"feature": "sex", "property": "share", "category": "Female", "low": 0.2, "high": 0.5},
        {"feature": "age", "property": "mean", "low": 35.0, "high": 42.0},
        {
            "feature": "relationship",
            "property": "share",
            "category": "Husband",
            "low": 0.1,
            "high": 0.7,
            "drop": ["relationship", "sex", "marital_status"],
        },
    ],
    "german_credit": [
        {"feature": "age", "property": "mean", "low": 32.0, "high": 40.0},
        {"feature": "housing", "property": "share", "category": "own", "low": 0.5, "high": 0.9},
    ],
}


def parts(name: str) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """Members (train), non-members and aux of a bundled dataset, as in the module docstring."""
    spec = SETUP[name]
    frame = datasets.load(name).frame
    frame = frame.sample(min(spec["rows"], len(frame)), random_state=0).reset_index(drop=True)
    y = frame.pop(spec["target"]).astype(str).to_numpy()
    X = frame.drop(columns=spec["drop"])
    a, b = spec["cuts"]
    cuts = {"train": (0, a), "non_members": (a, 2 * a), "aux": (2 * a, 2 * a + b)}
    return {k: (X.iloc[i:j].reset_index(drop=True), y[i:j]) for k, (i, j) in cuts.items()}


def ci(score: Score) -> str:
    return f"{score.difference:+.3f} [{score.ci[0]:+.3f}, {score.ci[1]:+.3f}]"


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


# -- 1. membership -------------------------------------------------------------------------------


def membership_rows(name: str, data: dict[str, Any]) -> list[str]:
    rows = []
    for model_name in ("logreg", "rf", "hgb"):
        model = make_model(model_name, seed=0).fit(*data["train"])
        gap = overfitting_gap(model, data["train"], data["non_members"])
        loss, t_loss = timed(
            lambda m=model: loss_threshold_attack(m, data["train"], data["non_members"])
        )
        shadow = ShadowModelAttack(n_shadows=4, seed=0)
        result, t_shadow = timed(
            lambda m=model, s=shadow, n=model_name: s.fit(
                make_model(n, seed=1), *data["aux"]
            ).attack(m, data["train"], data["non_members"])
        )
        for attack, res, seconds in (("loss", loss, t_loss), ("shadow x4", result, t_shadow)):
            rows.append(
                f"| {name} | {model_name} | {gap.attack:.3f} | {gap.baseline:.3f} | {ci(gap)} "
                f"| {attack} | {res.auc:.3f} | {ci(res.score)} | {res.advantage:.3f} "
                f"| {res.tpr_at_1pct_fpr:.3f} | {res.tpr_at_01pct_fpr:.3f} | {seconds:.1f} |"
            )
    return rows


# -- 2. attribute inference ----------------------------------------------------------------------


def numeric_view(X: pd.DataFrame, feature: str) -> tuple[pd.DataFrame, list[int]]:
    """ART needs numbers: the feature as integer codes in column 0, the rest one-hot/numeric."""
    codes = pd.Categorical(X[feature].astype(str))
    rest = pd.get_dummies(X.drop(columns=[feature]), dtype=float).fillna(0.0)
    frame = pd.concat([pd.Series(codes.codes, name=feature, dtype=float), rest], axis=1)
    frame.columns = [str(c) for c in frame.columns]
    return frame, list(range(len(codes.categories)))


def numeric_model(model_name: str) -> Any:
    if model_name == "logreg":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=1)


def art_rates(
    model: Any,
    Xn: pd.DataFrame,
    y: np.ndarray,
    values: list[int],
    learn: np.ndarray,
    judge: np.ndarray,
) -> dict[str, float] | None:
    """ART's black-box attack and two baselines on the same model, records and halves."""
    try:
        from art.attacks.inference.attribute_inference import (
            AttributeInferenceBaseline,
            AttributeInferenceBaselineTrueLabel,
            AttributeInferenceBlackBox,
        )
        from art.estimators.classification.scikitlearn import ScikitlearnClassifier
    except ImportError:
        return None
    x = Xn.to_numpy(dtype=float)
    classes = np.unique(y)
    y_codes = np.searchsorted(classes, y)
    wrapped = ScikitlearnClassifier(model)
    truth = x[judge, 0]
    x_rest = np.delete(x[judge], 0, axis=1)
    pred = np.argmax(wrapped.predict(x[judge]), axis=1).reshape(-1, 1)
    black = AttributeInferenceBlackBox(wrapped, attack_model_type="gb", attack_feature=0)
    black.fit(x[learn], y=y_codes[learn])
    base = AttributeInferenceBaseline(attack_model_type="gb", attack_feature=0)
    base.fit(x[learn])
    label = AttributeInferenceBaselineTrueLabel(attack_model_type="gb", attack_feature=0)
    label.fit(x[learn], y_codes[learn])
    return {
        "black_box": float(
            np.mean(black.infer(x_rest, y=y_codes[judge], pred=pred, values=values) == truth)
        ),
        "baseline": float(np.mean(base.infer(x_rest, values=values) == truth)),
        "true_label": float(np.mean(label.infer(x_rest, y=y_codes[judge], values=values) == truth)),
    }


def gain_ratio(our_gain: float, art: dict[str, float] | None) -> str:
    """Our gain over our best baseline / ART's black-box gain over its best baseline."""
    if art is None:
        return "n/a"
    art_gain = art["black_box"] - max(art["baseline"], art["true_label"])
    return f"{our_gain / art_gain:.2f}" if art_gain > 0 else "ART gain <= 0"


def attribute_rows(name: str, data: dict[str, Any]) -> list[str]:
    from attrpriv.assess.inference import _halves

    X, y = data["train"]
    if name == "german_credit":  # 250 members leave 125 judged records: use 500
        X = pd.concat([X, data["non_members"][0]], ignore_index=True)
        y = np.concatenate([y, data["non_members"][1]])
    learn, judge = _halves(len(X), 0.5, 0)
    rows = []
    for model_name in ("logreg", "rf"):
        for feature in ATTRIBUTES[name]:
            Xn, values = numeric_view(X, feature)
            model = numeric_model(model_name).fit(Xn, y)
            ours, seconds = timed(
                lambda m=model, Xn=Xn, f=feature: attribute_inference(
                    m, Xn, y, f, kind="categorical", seed=0
                )
            )
            art = art_rates(model, Xn, y, values, learn, judge)
            art_cells = (
                f"{art['black_box']:.3f} | {art['baseline']:.3f} | {art['true_label']:.3f}"
                if art
                else "n/a | n/a | n/a"
            )
            ratio = gain_ratio(ours.score.difference, art)
            rows.append(
                f"| {name} | {model_name} | {feature} | {ours.attacks['learned']:.3f} "
                f"| {ours.attacks['learned_with_label']:.3f} "
                f"| {ours.attacks.get('query', float('nan')):.3f} "
                f"| {ours.baselines['features_only']:.3f} "
                f"| {ours.baselines['features_and_label']:.3f} "
                f"| {ours.baselines['prior']:.3f} | {ci(ours.score)} | {art_cells} | {ratio} "
                f"| {seconds:.1f} |"
            )
    return rows


# -- 3. property inference -----------------------------------------------------------------------


def property_rows(name: str, data: dict[str, Any], sample_size: int | None = None) -> list[str]:
    X = pd.concat([data["train"][0], data["non_members"][0], data["aux"][0]], ignore_index=True)
    y = np.concatenate([data["train"][1], data["non_members"][1], data["aux"][1]])
    rows = []
    for spec in PROPERTIES[name]:
        result, seconds = timed(
            lambda s=spec: property_inference(
                make_model("logreg"),
                X,
                y,
                n_shadows=8,
                seed=0,
                sample_size=sample_size,
                **s,
            )
        )
        what = spec["feature"] + (f"={spec['category']}" if "category" in spec else "")
        dropped = ",".join(spec.get("drop", [])) or "-"
        rows.append(
            f"| {name} | {what} {spec['property']} {spec['low']:g} vs {spec['high']:g} "
            f"| {dropped} | {result.parts['sample_size']:.0f} "
            f"| {result.score.attack:.3f} | {result.score.baseline:.3f} "
            f"| {ci(result.score)} | {seconds:.1f} |"
        )
    return rows


def calibration_rows(name: str, data: dict[str, Any]) -> list[str]:
    """Property inference on a random column the shadows never see, over 10 seeds."""
    X = pd.concat([data["train"][0], data["non_members"][0], data["aux"][0]], ignore_index=True)
    y = np.concatenate([data["train"][1], data["non_members"][1], data["aux"][1]])
    X["noise"] = np.random.default_rng(1).choice(["a", "b"], size=len(X))
    attack, control, covered = [], [], 0
    for seed in range(10):
        result = property_inference(
            make_model("logreg"),
            X,
            y,
            "noise",
            property="share",
            category="a",
            low=0.3,
            high=0.7,
            n_shadows=8,
            seed=seed,
            drop=["noise"],
        )
        attack.append(result.score.attack)
        control.append(result.score.baseline)
        covered += result.score.ci[0] <= 0 <= result.score.ci[1]
    return [
        f"| {name} | noise=a share 0.3 vs 0.7 (never seen) | {result.parts['sample_size']:.0f} "
        f"| {np.mean(attack):.3f} | {np.mean(control):.3f} | {covered}/10 |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SETUP), choices=list(SETUP))
    parser.add_argument(
        "--tables",
        nargs="+",
        default=None,
        help="tables to print: membership attribute property (null: 'property' prints both)",
    )
    parser.add_argument(
        "--property-sample-size",
        type=int,
        default=None,
        help="shadow training-set size for the property table (default: the library's)",
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    tables = {
        "membership": (
            "| dataset | model | train acc | test acc | gap [95% CI] | attack | AUC "
            "| AUC - 0.5 [95% CI] | advantage | TPR@1%FPR | TPR@0.1%FPR | s |",
            membership_rows,
        ),
        "attribute": (
            "| dataset | model | feature | learned | learned+label | query | features only "
            "| features+label | prior | score [95% CI] | ART black box | ART baseline "
            "| ART true-label | ours/ART gain | s |",
            attribute_rows,
        ),
        "property": (
            "| dataset | property | shadows trained without | sample size | attack acc "
            "| control acc | difference [95% CI] | s |",
            partial(property_rows, sample_size=args.property_sample_size),
        ),
        "property null (10 seeds)": (
            "| dataset | property | sample size | mean attack acc | mean control acc "
            "| CIs holding 0 |",
            calibration_rows,
        ),
    }
    with threadpool_limits(1):
        data = {name: parts(name) for name in args.datasets}
        for title, (header, make_rows) in tables.items():
            if args.tables and title.split()[0] not in args.tables:
                continue
            print(f"\n### {title}\n\n{header}")
            print("|" + "---|" * (header.count("|") - 1))
            for name in args.datasets:
                for row in make_rows(name, data[name]):
                    print(row, flush=True)


if __name__ == "__main__":
    main()
