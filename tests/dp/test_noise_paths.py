"""No public function draws noise outside the mechanism contract (and so outside the ledger).

A noise draw is a call of a :class:`~attrpriv.dp.noise.NoiseSampler` draw method (``laplace``,
``gaussian``, ``discrete_laplace``, ``discrete_gaussian``) or a randomized-response bit source
(``_BitSource``). The mechanism contract draws only in ``_add_noise``, which ``Mechanism._release``
calls after charging the ledger (``tests/dp/test_mechanism.py`` checks that order). This test
reads the package's source and follows every draw up its callers, by name: each path must
reach an ``_add_noise`` method before it reaches a public function. A public function that draws
noise itself (or through private helpers) is reported with the path.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import attrpriv

PACKAGE = Path(attrpriv.__file__).parent
DRAWS = {"laplace", "gaussian", "discrete_laplace", "discrete_gaussian"}
NUMPY = {"np", "numpy", "rng", "random"}  # numpy's own generators: not privacy noise
SAMPLERS = "dp/noise.py"  # the samplers themselves


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The module's functions and its classes' methods, by name; a function nested in one is
    part of it (its draws and calls are its enclosing function's)."""
    found = []
    for node in tree.body:
        body = node.body if isinstance(node, ast.ClassDef) else [node]
        found += [
            (item.name, item)
            for item in body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
    return found


def _called(node: ast.AST) -> set[str]:
    """The names called inside ``node`` (``f(...)`` and ``x.f(...)`` both give ``f``)."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            if isinstance(call.func, ast.Name):
                names.add(call.func.id)
            elif isinstance(call.func, ast.Attribute):
                names.add(call.func.attr)
    return names


def _draws(node: ast.AST) -> bool:
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name) and func.id == "_BitSource":
            return True
        if isinstance(func, ast.Attribute) and func.attr in DRAWS:
            owner = func.value
            if not (isinstance(owner, ast.Name) and owner.id in NUMPY):
                return True
    return False


def unguarded_draws(sources: dict[str, str]) -> list[str]:
    """The paths from a noise draw up to a public function that do not pass an ``_add_noise``.

    ``sources`` maps a file name to its text. Names are matched across files (a private
    helper called ``_f`` anywhere counts as a caller of every ``_f``): a conservative graph.
    """
    callers: dict[str, set[str]] = defaultdict(set)
    drawing: set[str] = set()
    for name, text in sources.items():
        tree = ast.parse(text, filename=name)
        for function, node in _functions(tree):
            if _draws(node) and not name.endswith(SAMPLERS):
                drawing.add(function)
            for callee in _called(node):
                callers[callee].add(function)
    found = []
    for start in sorted(drawing):
        stack, seen = [(start, (start,))], {start}
        while stack:
            function, path = stack.pop()
            if function == "_add_noise":
                continue  # the contract: charged before it runs
            if not function.startswith("_") or function.startswith("__"):
                found.append(" <- ".join(path))
                continue
            for caller in sorted(callers[function] - seen):
                seen.add(caller)
                stack.append((caller, (*path, caller)))
    return found


def test_every_noise_draw_of_the_package_is_reached_through_add_noise_only() -> None:
    sources = {
        str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8")
        for path in PACKAGE.rglob("*.py")
    }
    assert unguarded_draws(sources) == []


def test_a_public_function_that_draws_is_reported() -> None:
    """The check itself: a public helper drawing Laplace noise, directly or through a private
    one, is found; the same draw inside ``_add_noise`` is not."""
    broken = """
def noisy_counts(counts, sampler):
    return _add(counts, sampler)

def _add(counts, sampler):
    return sampler.laplace(counts, 1.0)

class Fine:
    def _add_noise(self, private, plan):
        return plan.sampler.discrete_laplace(private, 2.0)

def uses_numpy(rng):
    return rng.laplace(0.0, 1.0)
"""
    assert unguarded_draws({"broken.py": broken}) == ["_add <- noisy_counts"]
    assert (
        unguarded_draws(
            {"fine.py": broken.split("class Fine:")[0].replace("def noisy", "def _noisy")}
        )
        == []
    )


def test_add_noise_is_called_only_by_release_after_the_charge() -> None:
    """``_add_noise`` has one caller, ``Mechanism._release``, and it comes after the charge."""
    sites = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function, node in _functions(tree):
            if "_add_noise" in _called(node):
                sites.append((str(path.relative_to(PACKAGE)), function, node))
    assert [(where, function) for where, function, _ in sites] == [("dp/mechanism.py", "_release")]
    body = ast.unparse(sites[0][2])
    assert 0 < body.index("ledger.charge(") < body.index("self._add_noise(")
