"""Command line: ``python -m graphrag index | query | eval | retrieval | crossfit | convert |
graph | llm``.

Each command is a few lines over :class:`graphrag.workbench.Workbench`; the module is over
400 lines because every command's flags and their help texts live here, in one parser, which
is what ``--help`` shows and what a reader looks for first.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import TYPE_CHECKING

from graphrag.query.registry import (
    ALL_METHODS,
    METHODS,
    OPT_IN_METHODS,
    UnknownMethodError,
    method_names,
)
from graphrag.settings import Settings, SettingsError

if TYPE_CHECKING:
    from graphrag.workbench import Workbench


def _workbench(args: argparse.Namespace) -> Workbench:
    """The one front door, with the CLI's --config and --cache."""
    from graphrag.workbench import Workbench

    return Workbench(args.config, cache=getattr(args, "cache", None))


def cmd_llm(args: argparse.Namespace) -> int:
    from graphrag.llm.usage import track_usage

    with _workbench(args) as bench:
        llm, model = bench.llm, bench.settings.llm.model
        try:
            if args.question == "serve":
                if llm.server is None:
                    print(
                        "llm.base_url is set: there is no embedded server to run", file=sys.stderr
                    )
                    return 2
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
    with _workbench(args) as bench:
        if args.method:
            bench.settings.index.method = args.method
        if args.lazy_reports:
            bench.settings.index.lazy_reports = True
        if args.add or args.delete:
            return _update_index(args, bench)
        if not args.input:
            print("error: index needs --input (a new index) or --add/--delete", file=sys.stderr)
            return 2
        summary = bench.index(args.input, args.out, progress=not args.quiet, skip_bad=args.skip_bad)
        print(summary.render())
        if args.gold:
            from graphrag.index.extract.quality import extraction_quality, load_gold_graph

            index = bench.index_in_use
            quality = extraction_quality(
                index.entities, index.relationships, load_gold_graph(args.gold)
            )
            print("extraction quality vs gold: " + quality.render())
    return 1 if summary.failed and args.strict else 0


def _update_index(args: argparse.Namespace, bench: Workbench) -> int:
    """Add or delete documents in the index ``--out`` (graphrag/index/incremental.py)."""
    from graphrag.index.incremental import update_index

    summary = update_index(
        args.out,
        bench.settings,
        bench.llm,
        bench.embedder,
        args.add,
        args.delete or (),
        not args.quiet,
    )
    print(summary.render())
    return 0


def _opt_in(args: argparse.Namespace, settings: Settings) -> list[str]:
    """Return the opt-in methods that ``all`` (or the default evaluation) includes."""
    return [*settings.eval.opt_in_methods, *(OPT_IN_METHODS if args.opt_in else [])]


def cmd_query(args: argparse.Namespace) -> int:
    with _workbench(args) as bench:
        methods = method_names(args.method.split(","), _opt_in(args, bench.settings))
        bench.load(args.index)
        answers = bench.query_all(args.question, methods)
    if args.json:
        print(json.dumps({m: a.to_dict() for m, a in answers.items()}, indent=2))
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
            print(f"  dropped: {failure}")
        print(answer.text.strip())
        print(
            f"sources: {', '.join(answer.sources[:12])}{' …' if len(answer.sources) > 12 else ''}\n"
        )
    return 0


def _metric_names(given: str | None) -> list[str] | None:
    """``--metrics``: a comma list, ``none`` for judge-free metrics only, or unset (defaults)."""
    if not given:
        return None
    return [] if given.strip().lower() == "none" else given.split(",")


def _method_limits(text: str) -> dict[str, int]:
    from graphrag.eval.runner import parse_method_limits

    try:
        return parse_method_limits(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def cmd_eval(args: argparse.Namespace) -> int:
    with _workbench(args) as bench:
        settings = bench.settings
        opt_in = _opt_in(args, settings)
        asked = args.methods.split(",") if args.methods else [*settings.eval.methods, *opt_in]
        methods = method_names(asked, opt_in)
        bench.load(args.index)
        # The control counts' defaults live in the eval package (judge_validity.DEFAULT_PAIRS,
        # pairwise.DEFAULT_CONTROLS), which the CLI does not import at start-up: unset, the
        # runner's defaults apply.
        counts = {
            "judge_controls": args.judge_controls,
            "pairwise_controls": args.pairwise_controls,
        }
        result = bench.evaluate(
            args.questions,
            out=args.out,
            methods=methods,
            metrics=_metric_names(args.metrics),
            limit=args.limit,
            progress=not args.quiet,
            command="python -m graphrag " + " ".join(sys.argv[1:]),
            pairwise_pairs=args.pairwise,
            **{name: n for name, n in counts.items() if n is not None},
            types=args.types.split(",") if args.types else None,
            gold_graph=args.gold,
            method_limits=args.method_limits or {},
        )
    print(result.render())
    return 0


def cmd_retrieval(args: argparse.Namespace) -> int:
    with _workbench(args) as bench:
        bench.load(args.index)
        records = bench.evaluate_retrieval(
            args.questions,
            out=args.out,
            methods=args.methods.split(","),
            limit=args.limit,
            progress=not args.quiet,
            command="python -m graphrag " + " ".join(sys.argv[1:]),
        )
    n = records["question_id"].nunique()
    print(
        f"{n} questions x {records['method'].nunique()} methods scored; see {args.out}/summary.md"
    )
    return 0


def cmd_crossfit(args: argparse.Namespace) -> int:
    from graphrag.report.crossfit import cross_fit

    selection = cross_fit(
        args.runs,
        args.method,
        args.out,
        select=args.select,
        folds=args.folds,
        command="python -m graphrag " + " ".join(sys.argv[1:]),
        **({} if args.seed is None else {"seed": args.seed}),
    )
    chosen = selection[selection["chosen"]]
    print(
        "; ".join(f"fold {r.fold}: {r.folder}" for r in chosen.itertuples(index=False))
        + f"; see {args.out}/summary.md"
    )
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from graphrag.eval.benchmarks import convert_benchmark

    summary = convert_benchmark(
        args.format, args.source, args.out, args.questions, args.distractors
    )
    print(summary.render())
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from graphrag.index.store import load_index
    from graphrag.report.graph_page import write_interactive_graph

    communities = [int(c) for c in args.communities.split(",")] if args.communities else None
    out = write_interactive_graph(
        load_index(args.index), args.out, level=args.level, communities=communities
    )
    print(f"wrote {out} (open it in a browser; it needs no network)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphrag", description="GraphRAG research workbench: index, query, evaluate."
    )
    parser.add_argument("--config", help="settings TOML file (default: ./graphrag.toml if present)")
    parser.add_argument(
        "--cache",
        choices=["on", "off", "replay"],
        help="LLM response cache mode (overrides GRAPHRAG_CACHE)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "llm",
        help="ask the configured LLM one question, or `serve` to keep the embedded model running",
    )
    p.add_argument("question", help="the question, or the word `serve`")
    p.add_argument("--max-tokens", type=int, default=200)
    p.set_defaults(func=cmd_llm)

    p = sub.add_parser("index", help="build an index from a folder of .txt/.md or a .jsonl")
    p.add_argument("--input", help="corpus folder, text file or .jsonl")
    p.add_argument("--out", required=True, help="index folder to write (or to update)")
    p.add_argument("--add", help="add these documents to the index --out (only they are extracted)")
    p.add_argument(
        "--delete", action="append", metavar="DOC_ID", help="delete a document from --out"
    )
    p.add_argument(
        "--method", choices=["llm", "nlp"], help="graph extraction (setting index.method)"
    )
    p.add_argument(
        "--lazy-reports",
        action="store_true",
        help="write LLM community reports when a query first reads them (index.lazy_reports)",
    )
    p.add_argument("--gold", help="gold_graph.json: also report extraction quality")
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip (and report) unusable documents instead of stopping",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when any item failed")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("query", help="answer a question with one or all retrieval methods")
    p.add_argument("question")
    p.add_argument("--index", required=True, help="index folder")
    p.add_argument(
        "--method",
        default="local",
        help=f"{', '.join(ALL_METHODS)}, a comma list, or all (the default methods "
        f"{', '.join(METHODS)}, plus eval.opt_in_methods)",
    )
    p.add_argument(
        "--opt-in",
        action="store_true",
        help=f"`all` also includes the opt-in methods ({', '.join(OPT_IN_METHODS)})",
    )
    p.add_argument("--json", action="store_true", help="print answers as JSON")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("eval", help="score methods on a question set and write a report")
    p.add_argument("--index", required=True)
    p.add_argument("--questions", required=True, help="questions .jsonl")
    p.add_argument(
        "--methods", help="comma list, or all (default: eval.methods + eval.opt_in_methods)"
    )
    p.add_argument(
        "--opt-in",
        action="store_true",
        help=f"also evaluate the opt-in methods ({', '.join(OPT_IN_METHODS)})",
    )
    p.add_argument("--metrics", help="comma list of RAGAS metrics, or none (default: eval.metrics)")
    p.add_argument("--out", required=True, help="report folder, e.g. reports/kestrel_bay")
    p.add_argument("--types", help="only questions of these types, comma list (e.g. global)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument(
        "--method-limits",
        type=_method_limits,
        metavar="METHOD=N,...",
        help="answer only the first N of those questions with METHOD (one still being "
        "recorded, e.g. drift=10); its n is its own and paired tests use the common questions",
    )
    p.add_argument(
        "--judge-controls",
        type=int,
        metavar="N",
        help="planted control pairs per RAGAS metric that measure the judge (default: "
        "graphrag.eval.judge_validity.DEFAULT_PAIRS; 0: none)",
    )
    p.add_argument(
        "--pairwise",
        nargs="?",
        const="all",
        metavar="PAIRS",
        help="also judge answers head to head: all method pairs, or A:B,C:D",
    )
    p.add_argument(
        "--pairwise-controls",
        type=int,
        metavar="N",
        help="with --pairwise: planted pairs per method of the pairs (a question's own answer "
        "against another question's) that measure the pairwise judge (default: "
        "graphrag.eval.pairwise.DEFAULT_CONTROLS; 0: none)",
    )
    p.add_argument(
        "--gold", help="gold_graph.json for gold entities (default: the one beside --questions)"
    )
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "retrieval",
        help="score the contexts methods would build (evidence recall, recall@k), no answers",
    )
    p.add_argument("--index", required=True)
    p.add_argument("--questions", required=True, help="questions .jsonl with support ids")
    p.add_argument(
        "--methods", default="naive,ppr,local", help="comma list of chunk-ranking methods"
    )
    p.add_argument("--out", required=True, help="folder for summary.md and retrieval.parquet")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_retrieval)

    p = sub.add_parser(
        "crossfit",
        help="choose a query setting per fold on the other folds' questions (retrieval runs)",
    )
    p.add_argument(
        "--runs",
        nargs="+",
        required=True,
        metavar="RETRIEVAL_DIR",
        help="`retrieval` folders of the same questions, one per candidate (first: default)",
    )
    p.add_argument("--method", required=True, help="the method whose setting was varied")
    p.add_argument("--select", default="evidence_recall", help="score the choice maximizes")
    p.add_argument("--folds", type=int, default=2)
    p.add_argument(
        "--seed", type=int, help="seed of the fold split (default: graphrag.eval.stats')"
    )
    p.add_argument("--out", required=True, help="folder for the cross-fitted report")
    p.set_defaults(func=cmd_crossfit)

    p = sub.add_parser(
        "convert", help="turn a multi-hop QA benchmark into a corpus folder and a question set"
    )
    p.add_argument("format", choices=["musique", "hotpotqa"])
    p.add_argument("--source", required=True, help="the benchmark .json (or MuSiQue's folder)")
    p.add_argument("--out", required=True, help="folder to write docs/ and questions.jsonl into")
    p.add_argument("--questions", type=int, default=50, help="keep the first N questions")
    p.add_argument("--distractors", type=int, default=3, help="distractor paragraphs per question")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("graph", help="write the index's entity graph as an interactive HTML page")
    p.add_argument("--index", required=True, help="index folder")
    p.add_argument("--out", required=True, help="HTML file to write, e.g. graph.html")
    p.add_argument("--level", type=int, default=0, help="community level that colours the nodes")
    p.add_argument(
        "--communities", help="comma list of community numbers (at --level) to keep; default all"
    )
    p.set_defaults(func=cmd_graph)
    return parser


def _exit_on_sigterm(signum: int, frame: object) -> None:
    # SystemExit runs the atexit hooks, which stop the embedded server this process started.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SettingsError as err:
        print(f"settings error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - the CLI's job is to show it plainly
        from graphrag.eval.benchmarks import BenchmarkError
        from graphrag.eval.questions import QuestionSetError
        from graphrag.eval.retrieval import RetrievalEvalError
        from graphrag.index.extract.quality import GoldGraphError
        from graphrag.index.incremental import IncrementalError
        from graphrag.index.store import IndexLoadError
        from graphrag.llm.cache import LLMError
        from graphrag.llm.embedded.server import EmbeddedServerError
        from graphrag.text.documents import DocumentError
        from graphrag.text.embeddings import EmbeddingError

        known = (
            BenchmarkError,
            DocumentError,
            EmbeddingError,
            QuestionSetError,
            RetrievalEvalError,
            GoldGraphError,
            IndexLoadError,
            LLMError,
            EmbeddedServerError,
            UnknownMethodError,
            IncrementalError,
        )
        if isinstance(err, known):
            print(f"error: {err}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
