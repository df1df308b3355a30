"""What each command does: a few lines over :class:`workbench.session.Workbench` (the flags
are in the parser, ``workbench.cli``)."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import signal
import sys
from pathlib import Path

from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.incremental import update_index
from graphrag.index.store import Index, IndexLoadError
from graphrag.llm.progress import RunProgress
from graphrag.llm.usage import track_usage
from graphrag.query.citations import Tracer, source_list
from graphrag.query.registry import OPT_IN_METHODS, method_names
from graphrag.settings import load_settings
from graphrag.settings.reference import effective_settings
from graphrag.stores import default_graph_db_path, open_graph_db
from workbench.eval.benchmarks import convert_benchmark
from workbench.eval.declared import Gate, check_names, judge_gate, parse_primary
from workbench.eval.generate import KINDS
from workbench.eval.metrics import JUDGE_FREE_METRICS
from workbench.eval.power import headline_questions, power_lines
from workbench.eval.questions import load_questions
from workbench.eval.retrieval import SCORES
from workbench.eval.runner import planned_questions
from workbench.eval.unanswerable import plant
from workbench.project import init_project
from workbench.report.graph_page import write_interactive_graph
from workbench.report.headline import headline
from workbench.serve.mcp_server import serve
from workbench.session import Workbench


def _command() -> str:
    """The command line as the report records it."""
    return "python -m graphrag " + " ".join(sys.argv[1:])


def _bench(args: argparse.Namespace) -> Workbench:
    """The workbench of the project the command runs in (``--root``, ``--config``, ``--cache``)."""
    return Workbench(args.config, root=args.root, cache=args.cache)


def program() -> str:
    """Return how the user runs the workbench: ``python -m graphrag`` or the ``graphrag``
    script (what the README shows, and the answer when neither is known)."""
    ran = Path(sys.argv[0])
    return "python -m graphrag" if ran.parts[-2:] == ("graphrag", "__main__.py") else "graphrag"


def suggest(args: argparse.Namespace, command: str, *words: str) -> str:
    """Return ``command`` as this user types it: their program, their ``--root`` and
    ``--config`` (after the command, as ``init`` prints it), then ``words``."""
    given = [(f"--{flag}", getattr(args, flag, None)) for flag in ("root", "config")]
    options = [f"{flag} {shlex.quote(str(value))}" for flag, value in given if value]
    return " ".join([program(), command, *options, *words])


# the command load_index suggests (graphrag/index/store.py), reworded in the user's form
BUILD_COMMAND = re.compile(r"`python -m graphrag index [^`]*`")


def _load(bench: Workbench, args: argparse.Namespace) -> Index:
    """Load the index ``--index`` (default: the project's); a missing one's error names the
    command that builds it as this user types it."""
    try:
        return bench.load(args.index)
    except IndexLoadError as err:
        where = ["--input <corpus>", f"--out {shlex.quote(args.index)}"] if args.index else []
        command = f"`{suggest(args, 'index', *where)}`"
        raise IndexLoadError(BUILD_COMMAND.sub(command, str(err))) from None


def cmd_init(args: argparse.Namespace) -> int:
    written = init_project(args.folder)
    print(f"wrote a project in {args.folder} ({len(written)} files and folders):")
    print(f"  {args.folder}/graphrag.toml   every setting, commented out at its default")
    print(f"  {args.folder}/prompts/        an editable copy of every prompt")
    print(f"  {args.folder}/input/          put your .txt/.md documents (or one .jsonl) here")
    print("next:")
    print(f"  {program()} index --root {args.folder}")
    print(f'  {program()} query --root {args.folder} --method all "your question"')
    return 0


def cmd_settings(args: argparse.Namespace) -> int:
    overrides = {"cache": {"mode": args.cache}} if args.cache else None
    settings = load_settings(args.config, overrides=overrides, root=args.root)
    print("\n".join(effective_settings(settings, changed_only=args.changed)))
    return 0


def cmd_llm(args: argparse.Namespace) -> int:
    with _bench(args) as bench:
        llm, model = bench.llm, bench.settings.llm.model
        if args.question == "serve" and llm.server is None:
            print("llm.base_url is set: there is no embedded server to run", file=sys.stderr)
            return 2
        try:
            if args.question == "serve":
                url = llm.server.ensure_running()
                print(f"embedded model {model} serving at {url}; Ctrl-C stops it", flush=True)
                signal.pause()
            with track_usage() as usage:
                completion = llm.chat(
                    [{"role": "user", "content": args.question}], max_tokens=args.max_tokens
                )
            print(completion.text.strip())
            print(
                f"[{model}: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion "
                f"tokens, {'cached' if usage.cache_hits else f'{usage.seconds:.1f}s'}]",
                file=sys.stderr,
            )
        except KeyboardInterrupt:
            pass
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    with _bench(args) as bench:
        if args.method:
            bench.settings.index.method = args.method
        if args.lazy_reports:
            bench.settings.index.lazy_reports = True
        if args.dry_run:  # what --add or the input would cost
            print(bench.estimate_index(args.add or args.input, skip_bad=args.skip_bad).render())
            return 0
        if args.add or args.delete:  # only the added documents are extracted
            parts = bench.settings, bench.llm, bench.embedder
            out = bench.project_path("output", args.out)
            summary = update_index(out, *parts, args.add, args.delete or (), not args.quiet)
            print(summary.render())
            return 0
        summary = bench.index(
            args.input,
            args.out,
            progress=not args.quiet,
            skip_bad=args.skip_bad,
            all_artifacts=args.all_artifacts,
        )
        print(summary.render())
        if args.gold:
            index = bench.index_in_use
            quality = extraction_quality(
                index.entities, index.relationships, load_gold_graph(args.gold)
            )
            print("extraction quality vs gold: " + quality.render())
    return 1 if summary.failed and args.strict else 0


def _opt_in(args: argparse.Namespace) -> list[str]:
    """Return the opt-in methods that ``all`` (or the default evaluation) includes: every one
    with ``--opt-in``, else none (eval.methods may still name one)."""
    return list(OPT_IN_METHODS) if args.opt_in else []


def cmd_query(args: argparse.Namespace) -> int:
    with _bench(args) as bench:
        methods = method_names(args.method.split(","), _opt_in(args))
        tracer = Tracer(_load(bench, args))
        bench.methods(methods)  # an unknown method's error before the progress line
        lines = RunProgress(["query"], enabled=not args.quiet, unit="LLM calls")
        with lines.stage("query"):  # a live line: a question may take minutes on a CPU
            answers = bench.query_all(args.question, methods)
    traced = {m: tracer.trace(a) for m, a in answers.items()}
    if args.json:
        dump = {
            m: {**a.to_dict(), "citations": [c.to_dict() for c in traced[m]]}
            for m, a in answers.items()
        }
        print(json.dumps(dump, indent=2))
        return 0
    for method, answer in answers.items():
        usage = answer.usage
        print(
            f"=== {method}  ({len(answer.contexts)} contexts, {answer.context_tokens} context "
            f"tokens; cost: {usage.calls} LLM calls, {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion tokens, {answer.seconds:.1f}s)"
        )
        if answer.route:
            print(f"  route: {answer.route}")
        for failure in answer.failures:
            print(f"  degraded: {failure}")
        print(answer.text.strip())
        print("sources (* cited):\n" + source_list(traced[method], limit=8) + "\n")
    return 0


def _metric_names(given: str | None) -> list[str] | None:
    """``--metrics``: a comma list, ``none`` for judge-free metrics only, or unset (defaults)."""
    if not given:
        return None
    return [] if given.strip().lower() == "none" else given.split(",")


def _declare(
    bench: Workbench, args: argparse.Namespace, methods: list[str], metrics: list[str]
) -> None:
    """Take ``--primary`` over ``eval.primary``; check it and ``--gate`` name what will run
    (the run checks the primary again: it may be started from Python)."""
    if args.primary:
        bench.settings.eval.primary = args.primary
    check_names("primary hypothesis", parse_primary(args.primary), methods, metrics)
    check_names("gate", args.gate, methods, metrics)


def _judge_gate(bench: Workbench, gate: Gate, records) -> int:
    """Print the gate's one line (on the headline questions); return the exit status."""
    passed, line = judge_gate(gate, headline(records)[0], seed=bench.settings.eval.seed)
    print(line)
    return 0 if passed else 1


def cmd_eval(args: argparse.Namespace) -> int:
    with _bench(args) as bench:
        opt_in = _opt_in(args)
        asked = args.methods.split(",") if args.methods else [*bench.settings.eval.methods, *opt_in]
        methods = method_names(asked, opt_in)
        index = _load(bench, args)
        judged = _metric_names(args.metrics)
        judged = bench.settings.eval.metrics if judged is None else judged
        _declare(bench, args, methods, [*JUDGE_FREE_METRICS, *judged])
        options = dict(
            methods=methods,
            metrics=_metric_names(args.metrics),
            limit=args.limit,
            pairwise_pairs=args.pairwise,
            judge_controls=args.judge_controls,
            keep_controls=args.keep_controls,
            judge_sample=args.judge_sample,
            pairwise_controls=args.pairwise_controls,
            types=args.types.split(",") if args.types else None,
            method_limits=args.method_limits or {},
        )
        if args.dry_run:
            print(bench.estimate_evaluation(args.questions, **options).render())
            where = bench.project_path("questions", args.questions)
            n = headline_questions(planned_questions(index, where, options["types"], args.limit))
            lines = power_lines(n, args.pilot, args.paired_sd, args.detect, methods)
            print("\n".join(lines))
            return 0
        result = bench.evaluate(
            args.questions,
            out=args.out,
            progress=not args.quiet,
            command=_command(),
            gold_graph=args.gold,
            **options,
        )
        print(result.render())
        return _judge_gate(bench, args.gate, result.records) if args.gate else 0


def cmd_plant(args: argparse.Namespace) -> int:
    """Write unanswerable twins of ``--from``'s questions (eval/unanswerable.py)."""
    if not args.source or not args.out:
        print("error: questions plant needs --from QUESTIONS and --out FILE", file=sys.stderr)
        return 2
    source, out = Path(args.source), Path(args.out)
    if out.resolve() == source.resolve():
        print(
            f"error: --out {out} is --from's file: write the planted set beside it", file=sys.stderr
        )
        return 2
    with _bench(args) as bench:
        planted = plant(load_questions(source), _load(bench, args), args.count, args.seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(planted.to_json(orient="records", lines=True, force_ascii=False))
    splits = planted["split"].value_counts().to_dict() if len(planted) else {}
    print(f"{len(planted)} unanswerable questions written to {out} (splits: {splits})")
    print(f"evaluate them beside the answerable ones: cat {source} {out} > both.jsonl")
    return 0


def cmd_questions(args: argparse.Namespace) -> int:
    if args.action == "plant":
        return cmd_plant(args)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        print(f"error: --kinds takes {', '.join(KINDS)}; not {unknown}", file=sys.stderr)
        return 2
    with _bench(args) as bench:
        out = bench.project_path("questions", args.out)
        if args.out is None and out.exists():  # never over a question set the user wrote
            print(
                f"error: {out} exists (setting project.questions): name another file with "
                "--out, or move it away",
                file=sys.stderr,
            )
            return 2
        _load(bench, args)
        generated = bench.generate_questions(
            out, kinds=kinds, count=args.count, seed=args.seed, split=args.split
        )
    print(generated.log_table())
    print(f"{len(generated.records)} questions written to {out} (split: {args.split})")
    print("\n".join(generated.dropped_lines()))
    words = [f"--index {shlex.quote(args.index)}"] if args.index else []
    words += [f"--kinds {args.kinds}", f"--count {2 * args.count}"]
    words += [f"--out {shlex.quote(args.out) if args.out else '<another .jsonl>'}"]
    more = suggest(args, "questions generate", *words)
    print(f"more questions: `{more}` (--count: candidates per kind before the filters)")
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    with _bench(args) as bench:
        _load(bench, args)
        _declare(bench, args, args.methods.split(","), list(SCORES))
        out = args.out or bench.project_path("reports") / "retrieval"
        records = bench.evaluate_retrieval(
            bench.project_path("questions", args.questions),
            out=out,
            methods=args.methods.split(","),
            limit=args.limit,
            progress=not args.quiet,
            command=_command(),
        )
        n = records["question_id"].nunique()
        print(f"{n} questions x {records['method'].nunique()} methods scored; see {out}/summary.md")
        seconds = records.groupby("method", sort=False)["seconds"].agg(["mean", "median"])
        timing = ", ".join(f"{m} {r['mean']:.3f}, {r['median']:.3f}" for m, r in seconds.iterrows())
        print(f"seconds a question (mean, median): {timing}")
        return _judge_gate(bench, args.gate, records) if args.gate else 0


def cmd_convert(args: argparse.Namespace) -> int:
    summary = convert_benchmark(
        args.format, args.source, args.out, args.questions, args.distractors, args.split_seed
    )
    print(summary.render())
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    if args.action == "export":
        return _export_graph(args)
    if not args.out:
        print("error: graph needs --out FILE.html (or: graph export --to ...)", file=sys.stderr)
        return 2
    communities = [int(c) for c in args.communities.split(",")] if args.communities else None
    with _bench(args) as bench:
        index = _load(bench, args)
    out = write_interactive_graph(index, args.out, level=args.level, communities=communities)
    print(f"wrote {out} (open it in a browser; it needs no network)")
    return 0


def _export_graph(args: argparse.Namespace) -> int:
    """Load the index into the graph database ``--to``; print each kind's rows and changes."""
    with _bench(args) as bench:
        index = _load(bench, args)
    target = args.to
    if target == "ladybug":
        target = args.db or default_graph_db_path(index.path)
    with open_graph_db(target) as db:
        changed = db.load(index)
        counts = db.counts()
        print(f"graph database {db.target} ({db.engine}), from the index {index.path}:")
    print(f"  {'label or type':<14}{'rows':>7}{'added':>7}{'updated':>9}{'removed':>9}")
    for name, change in changed.items():
        numbers = f"{change['added']:>7}{change['updated']:>9}{change['removed']:>9}"
        print(f"  {name:<14}{counts[name]:>7}{numbers}")
    if not any(n for change in changed.values() for n in change.values()):
        print("nothing changed: the database already held this index")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    with _bench(args) as bench:
        serve(bench, args.index, args.transport, args.host, args.port)
    return 0
