"""The pages' glossary: one line per term; :meth:`Glossary.link` links each term's first use."""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["TERMS", "Glossary", "Term"]


@dataclass(frozen=True)
class Term:
    """One glossary line: ``name``, ``definition`` and the literal ``forms`` it is written in."""

    key: str
    name: str
    definition: str
    forms: tuple[str, ...]

    @property
    def anchor(self) -> str:
        """The ``id`` of the term's line on a page."""
        return f"term-{self.key}"


def _term(key: str, name: str, definition: str, *forms: str) -> Term:
    return Term(key, name, definition, forms or (name,))


TERMS: tuple[Term, ...] = (
    _term("epsilon", "epsilon (\u03b5)",
          "how much one person's data can change what anyone learns from a release: anything "
          "anyone concludes is at most e^epsilon times more (or less) likely with that person's "
          "true data than with any other. Smaller is more private; at epsilon = 1 the factor "
          "is at most 2.72.", "epsilon", "\u03b5", "&epsilon;"),
    _term("delta", "delta",
          "the small probability that the epsilon bound fails; 0 means never. It should be far "
          "below one over the number of people.", "delta"),
    _term("rho", "rho (zCDP)",
          "zero-concentrated differential privacy, a measure of privacy loss for Gaussian noise: "
          "the rho of several releases add up exactly, and rho converts to an epsilon at any "
          "chosen delta.", "rho", "zCDP"),
    _term("privacy-unit", "privacy unit",
          "what one unit of protection covers (one person's row, one answer, one property of "
          "the whole data) under which definition; budgets are spent, and add up, within one "
          "unit only.", "privacy unit", "privacy units"),
    _term("ledger", "ledger",
          "the file that records every release and each privacy unit's budget, and refuses a "
          "release that would go over budget.", "ledger", "ledgers"),
    _term("budget", "budget",
          "the total epsilon (and delta) a privacy unit may spend over all its releases.",
          "budget"),
    _term("noise-interval", "noise interval",
          "value \u00b1 half-width: with the stated probability the noise on that one value is "
          "smaller than the half-width, so the true value lies in this range (for each value "
          "on its own, not for all of them at once).", "noise interval", "noise intervals"),
    _term("laplace", "Laplace noise",
          "random noise that is most often small, its chance falling off exponentially with its "
          "size; the discrete version adds whole numbers, so counts stay whole.",
          "discrete laplace", "discrete Laplace", "Laplace", "laplace"),
    _term("gaussian", "Gaussian noise",
          "random noise from the bell curve (the normal distribution), its spread set from "
          "epsilon and delta.", "Gaussian", "gaussian"),
    _term("sensitivity", "sensitivity",
          "how far one protected change (one person, one answer) can move the exact statistic; "
          "the noise is scaled to it.", "sensitivity"),
    _term("add-remove", "add-remove",
          "two data sets are neighbours when they differ by one person's row being in or out: "
          "this hides whether someone is in the data at all.", "add-remove"),
    _term("dp", "differential privacy (DP)",
          "a guarantee that a release changes little when one person's row changes, whatever "
          "else anyone knows.", "differential privacy", "dp", "DP"),
    _term("dependent-dp", "dependent differential privacy",
          "differential privacy for one answer of one respondent, counting the respondent's "
          "other answers that depend on it.", "dependent differential privacy", "dependent-dp",
          "dependent DP"),
    _term("attribute-privacy", "attribute privacy",
          "protection of a property of the whole data set (such as the share of high earners) "
          "rather than of any one person.", "attribute-privacy", "attribute privacy"),
    _term("pufferfish", "Pufferfish privacy",
          "a privacy framework that names the secrets to hide, the pairs of them that must look "
          "alike, and the beliefs about the data an adversary may hold.", "Pufferfish",
          "pufferfish"),
    _term("pufferfish-prior", "Pufferfish prior",
          "the set of models of the data (Theta) that an adversary's beliefs are assumed to be "
          "in; the guarantee holds against those adversaries.", "Pufferfish prior"),
    _term("theta", "Theta (\u0398)",
          "the set of data models the guarantee assumes: the Pufferfish prior.", "Theta"),
    _term("x-i", "X_i",
          "the value at position i of a sequence (one state of the Markov chain); the secret is "
          "the value of any single one.", "X_i"),
    _term("pmf", "pmf",
          "probability mass function: the probability of each possible value of a quantity "
          "that takes separate values.", "pmf", "pmfs"),
    _term("g-test", "G-test",
          "a likelihood-ratio test, from counts, of whether two groups of answers are "
          "independent.", "G-test", "G-tests"),
    _term("bonferroni", "Bonferroni correction",
          "running each of many tests at the overall level divided by their number, so that "
          "the chance of any false alarm stays within that level.", "Bonferroni"),
    _term("dirichlet", "Dirichlet-smoothed",
          "frequencies with a small pseudo-count added to every cell, so that no probability "
          "is estimated as exactly 0.", "Dirichlet-smoothed"),
    _term("markov-chain", "Markov chain",
          "a sequence in which each value depends on the past only through the value just "
          "before it.", "Markov chain"),
    _term("markov-tree", "Markov on a tree",
          "each answer depends on the other answers only through its neighbours in the tree "
          "(the tree links).", "Markov on the tree", "Markov tree"),
    _term("markov-quilt", "Markov quilt",
          "the nearby positions whose values, once known, cut a position off from the far part "
          "of the sequence; the noise is set by the worst one.", "Markov quilt",
          "Markov quilts"),
    _term("bayesian-network", "Bayesian network",
          "a model of how variables depend on one another: a graph with a probability table "
          "per variable.", "Bayesian network", "Bayesian networks"),
    _term("module", "module",
          "a group of questions whose answers are assumed independent of the answers in every "
          "other group.", "module", "modules"),
    _term("data-model", "data model",
          "the public model of how the data's values depend on one another, named by eight hex "
          "digits; releases add up under the same model only.", "data model"),
    _term("any-law", "law of the data",
          "the probability distribution the data are drawn from; 'for any law' means no "
          "assumption about it.", "law of the data", "any law"),
    _term("composition", "basic composition",
          "adding up the epsilons (and deltas) of the releases charged to a unit: the simplest "
          "valid total.", "basic composition", "basic"),
    _term("post-processing", "post-processing",
          "any computation on a released output that does not look at the data again; it "
          "cannot weaken the guarantee.", "post-processing"),
    _term("non-negative", "non-negative counts",
          "the noisy counts with negatives set to 0 and rounded to whole numbers: "
          "post-processing, at no privacy cost.", "non-negative"),
    _term("ci", "confidence interval (CI)",
          "a range that holds the true value with the stated probability, over the randomness "
          "of the measurement.", "confidence interval", "confidence intervals", "CI", "CIs"),
    _term("auc", "AUC",
          "area under the ROC curve: the chance that an attack scores a true case above a false "
          "one; 0.5 is a guess, 1 is perfect.", "AUC", "AUCs"),
    _term("roc", "ROC curve",
          "the true-positive rate against the false-positive rate of an attack, over all its "
          "thresholds.", "ROC"),
    _term("membership-attack", "membership attack",
          "an attack that guesses, from a model's outputs, whether a row was in its training "
          "data.", "membership attack"),
    _term("rmia", "RMIA",
          "robust membership inference attack: compares the model's confidence on a row with "
          "that of reference models trained without it.", "rmia", "RMIA"),
    _term("overfitting", "overfitting gap",
          "train score minus test score: how much better the model does on the rows it was "
          "trained on.", "overfitting gap", "overfitting"),
    _term("y-s", "y_S",
          "the sensitive attribute that the sanitizer hides.", "y_S"),
    _term("z-s", "z_S",
          "the part of the decoupler's latent code that carries the sensitive attribute; the "
          "samplers replace it.", "z_S"),
    _term("delong", "DeLong's method",
          "a confidence interval for an AUC.", "DeLong"),
    _term("newcombe", "Newcombe's method",
          "a confidence interval for a difference of two rates.", "Newcombe"),
    _term("rubin", "Rubin's rules",
          "pooling an estimate and its uncertainty over several repeated fits (here, seeds).",
          "Rubin"),
)  # fmt: skip

_SKIP = frozenset({"a", "code", "h1", "h2", "h3", "title", "style"})
_TAG = re.compile(r"(<[^>]*>)")
_NAME = re.compile(r"</?([a-zA-Z0-9]+)")


class Glossary:
    """The terms one page uses: :meth:`link` links them, :meth:`terms` lists them."""

    def __init__(self, terms: tuple[Term, ...] = TERMS) -> None:
        self._by_form = {form: term for term in terms for form in term.forms}
        forms = sorted(self._by_form, key=len, reverse=True)  # the longest form first
        alternatives = "|".join(re.escape(form) for form in forms)
        self._pattern = re.compile(rf"(?<![\w./&;-])(?:{alternatives})(?![\w/-])")
        self._used: dict[str, Term] = {}

    def link(self, html: str) -> Markup:
        """``html`` (escaped) as ``Markup``, the first use of each term linked to its line."""
        out, skipped = [], 0
        for piece in _TAG.split(html):
            name = _NAME.match(piece)
            if name is not None:
                if name.group(1).lower() in _SKIP:
                    skipped += -1 if piece.startswith("</") else 1
                out.append(piece)
            else:
                out.append(piece if skipped else self._pattern.sub(self._first_use, piece))
        return Markup("".join(out))

    def _first_use(self, match: re.Match[str]) -> str:
        term = self._by_form[match.group(0)]
        if term.key in self._used:
            return match.group(0)
        self._used[term.key] = term
        return f'<a class="term" href="#{term.anchor}">{match.group(0)}</a>'

    def terms(self) -> list[Term]:
        """The terms linked so far, alphabetically."""
        return sorted(self._used.values(), key=lambda term: term.name.lower())
