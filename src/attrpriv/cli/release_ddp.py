"""``attrpriv release ddp``: survey histograms under dependent differential privacy.

Three tiers, each with a guarantee proved for a class of laws named in the record, beside the
one every law gets from the same noise: ``--modules`` (the structural tier: modules independent
of one another), ``--model`` or ``--aux`` alone (the model tier: a public Markov tree), and,
with neither, no assumption at all (row-level noise, and a line on how to gain).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from attrpriv.cli._common import (
    AcceptInferredOption,
    DataArgument,
    HistogramsEpsilon,
    InferOption,
    LedgerOption,
    OutFile,
    SchemaOption,
    check_reviewed,
    console,
    examples,
    json_writer,
    split_names,
    warnings_printed,
)
from attrpriv.cli.release import (
    CountsOption,
    ReleaseHtml,
    app,
    open_ledger,
    release_outputs,
    write_release,
)
from attrpriv.errors import InputError

PRIVATE = "private"  # attrpriv.release.ddp.model.PRIVATE, without importing the mechanisms

if TYPE_CHECKING:
    from attrpriv.release.ddp.answers import AnswerHistograms
    from attrpriv.release.ddp.model import ModelDiagnostics

GAIN_HINT = (
    "no structure given: every answer is protected for any law, at the row-level scale "
    "(Laplace on every histogram). To gain, declare modules of questions independent of one "
    "another (--modules 'a,b;c,d') or give public rows of the same population (--aux FILE: a "
    "dependence model is learned from them)."
)


@app.command(
    "ddp",
    epilog=examples(
        "attrpriv release ddp anes96 --epsilon 1 --modules 'popul,tv_news;self_lr,clin_lr,dole_lr'",
        "attrpriv release ddp survey.parquet --schema survey.yaml --epsilon 1 "
        "--aux public_sample.csv --save-model model.json --out hist.json",
        "attrpriv release ddp survey.parquet --schema survey.yaml --epsilon 1 --model model.json",
    ),
)
def ddp(
    data: DataArgument,
    epsilon: HistogramsEpsilon,
    modules: Annotated[
        str | None,
        typer.Option(
            help="The structural tier: modules of questions independent of one another, "
            "'a,b,c;d,e' (the columns no module names form one more), or 'aux' to learn them "
            "from --aux. Each answer gets epsilon for any adversary who believes the modules "
            "independent (any law inside each)."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="The model tier: 'aux' (learn a Markov tree from --aux; the default when "
            "--aux is given without --modules), 'private' (learn it from the private rows by a "
            "row-level DP step, --learn-epsilon/--learn-delta, charged first) or a model file "
            "written by --save-model. Each answer gets epsilon for any law Markov on the tree, "
            "no link more revealing than the model's in either direction."
        ),
    ] = None,
    aux: Annotated[
        str | None,
        typer.Option(
            help="Public rows of the same population (bundled name or CSV/Parquet file) to "
            "learn the modules or the model from; never the private rows."
        ),
    ] = None,
    learn_epsilon: Annotated[
        float | None,
        typer.Option(help="--model private: the DP learning step's epsilon (row-level)."),
    ] = None,
    learn_delta: Annotated[
        float | None, typer.Option(help="--model private: the DP learning step's delta.")
    ] = None,
    save_model: Annotated[
        Path | None,
        typer.Option(help="Write the model tier's tree (public) as JSON, to review or reuse."),
    ] = None,
    columns: Annotated[
        str | None, typer.Option(help="Comma-separated columns; default every one with a domain.")
    ] = None,
    max_levels: Annotated[int, typer.Option(help="Bin finer domains into this many levels.")] = 10,
    max_aux_rows: Annotated[
        int, typer.Option(help="Public rows sampled (DuckDB for files) to learn from.")
    ] = 20_000,
    seed: Annotated[int, typer.Option(help="Seed of the learning sample (not of the noise).")] = 0,
    schema: SchemaOption = None,
    infer_schema: InferOption = False,
    accept_inferred: AcceptInferredOption = False,
    ledger: LedgerOption = None,
    out: OutFile = None,
    html: ReleaseHtml = None,
    counts: CountsOption = "non-negative",
) -> None:
    """Histograms of every question; protects any one answer of any respondent, also through
    the answers that depend on it."""
    from attrpriv._progress import progress
    from attrpriv.data.read import read_data

    outputs = release_outputs(out, html)
    outputs.add("--save-model", save_model)
    if modules is not None and model is not None:
        raise InputError("give --modules or --model, not both: they are two classes of laws")
    if save_model is not None and (modules is not None or (model is None and aux is None)):
        raise InputError("--save-model writes the model tier's tree: it needs --model or --aux")
    with warnings_printed():
        source = read_data(data, schema, infer_schema=infer_schema)
    check_reviewed(source.schema, schema, accept_inferred)
    public = None if aux is None else read_data(aux, require_schema=False, what="aux").data
    names = split_names(columns)
    mechanism = _tier(epsilon, modules, model, public, names, max_levels, max_aux_rows, seed)
    if learn_epsilon is not None or learn_delta is not None:
        if model is None or model.strip() != PRIVATE:
            raise InputError("--learn-epsilon and --learn-delta go with --model private")
        mechanism.set_params(learn_epsilon=learn_epsilon, learn_delta=learn_delta)
    book = open_ledger(ledger)
    steps = ("calibrated the noise (public inputs only)", "counted the histograms")
    private = model is not None and model.strip() == PRIVATE
    with (
        progress("release ddp: the model's links (DP step)") as links,
        progress("release ddp", total=len(steps)) as advance,
    ):
        learning: dict[str, Any] = {}
        if private:
            learning["learn_progress"] = lambda done, total: links(done=done, total=total)
        result = mechanism.release(
            source.data,
            source.schema,
            ledger=book,
            label=f"ddp {data}",
            progress=lambda done, total: advance(done=done, total=total, detail=steps[done - 1]),
            **learning,
        )
    lines = result.diagnostics.summary_lines()
    # the conditional guarantee, then the one for any law
    lines += [f"guarantee: {guarantee.describe()}" for guarantee in result.record.guarantees]
    if modules is None and model is None and aux is None:
        lines.append(GAIN_HINT)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    model_file = None
    if save_model is not None:
        model_file = json_writer(cast("ModelDiagnostics", result.diagnostics).model.to_dict())
    write_release(
        outputs,
        result,
        book,
        title=f"Tabular-DDP histograms of {data}",
        extra={"--save-model": model_file},
        counts=counts,
    )


def _tier(
    epsilon: float,
    modules: str | None,
    model: str | None,
    public: Any,
    columns: list[str] | None,
    max_levels: int,
    max_aux_rows: int,
    seed: int,
) -> AnswerHistograms[Any, Any]:
    """The mechanism of the tier the options name."""
    from attrpriv.release.ddp.answers import AUX
    from attrpriv.release.ddp.model import ModelDDP
    from attrpriv.release.ddp.modules import ModularDDP

    common: dict[str, Any] = {
        "aux": public,
        "columns": columns,
        "max_levels": max_levels,
        "max_aux_rows": max_aux_rows,
        "seed": seed,
    }
    if modules is not None:
        if modules.strip() == AUX and public is None:
            raise InputError("--modules aux learns the modules from --aux: give public rows")
        declared: str | list[list[str]] = AUX
        if modules.strip() != AUX:
            declared = [split_names(part) or [] for part in modules.split(";") if part.strip()]
            if not declared:
                raise InputError(f"--modules must be 'a,b;c,d' or 'aux', got {modules!r}")
        return ModularDDP(epsilon, declared, **common)
    if model is not None and model.strip() == PRIVATE:
        return ModelDDP(epsilon, PRIVATE, **common)
    if model is not None or public is not None:
        chosen = AUX if model is None or model.strip() == AUX else model
        if chosen == AUX and public is None:
            raise InputError("--model aux learns the model from --aux: give public rows")
        return ModelDDP(epsilon, chosen, **common)
    return ModularDDP(epsilon, [], **common)  # one module: no assumption


__all__ = ["GAIN_HINT", "ddp"]
