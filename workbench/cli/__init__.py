"""Command line: ``python -m graphrag init | settings | index | query | eval | questions |
retrieval | convert | graph | llm | mcp``. Every command's flags and help texts are here, in
one parser (what ``--help`` shows); what each command does is in ``workbench.cli.commands``."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from graphrag.index.extract.quality import GoldGraphError
from graphrag.index.incremental import IncrementalError
from graphrag.index.store import IndexLoadError
from graphrag.llm.cache import LLMError
from graphrag.llm.embedded.server import EmbeddedServerError
from graphrag.prompts.loader import PromptTemplateError
from graphrag.query.registry import ALL_METHODS, METHODS, OPT_IN_METHODS, UnknownMethodError
from graphrag.settings import SettingsError
from graphrag.stores import GraphDatabaseError, GraphQueryError
from graphrag.text.documents import DocumentError
from graphrag.text.embeddings import EmbeddingError
from workbench.cli import commands
from workbench.eval.benchmarks import BenchmarkError
from workbench.eval.declared import GATE_FORM, PRIMARY_FORM, DeclarationError, parse_gate
from workbench.eval.generate import KINDS
from workbench.eval.generate_filter import DEFAULT_SEED, SPLIT_CHOICES
from workbench.eval.judge_validity import DEFAULT_PAIRS
from workbench.eval.pairwise import DEFAULT_CONTROLS
from workbench.eval.power import PowerPlanError
from workbench.eval.questions import DEFAULT_SPLIT, QuestionSetError, parse_method_limits
from workbench.eval.retrieval import RetrievalEvalError
from workbench.project import ProjectExistsError

# Errors in what the user gave (a file, a setting, an endpoint): one line, not a traceback.
USER_ERRORS = (
    BenchmarkError,
    DeclarationError,
    PowerPlanError,
    DocumentError,
    EmbeddingError,
    QuestionSetError,  # and a kept judge_controls.csv that is not one
    RetrievalEvalError,
    GoldGraphError,
    IndexLoadError,
    LLMError,
    EmbeddedServerError,
    UnknownMethodError,
    IncrementalError,
    ProjectExistsError,
    PromptTemplateError,
    GraphDatabaseError,
    GraphQueryError,
)


def _method_limits(text: str) -> dict[str, int | str]:
    try:
        return parse_method_limits(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _gate(text: str) -> object:
    try:
        return parse_gate(text)
    except DeclarationError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


# Options of every command, before or after its name (``graphrag --root DIR index`` or
# ``graphrag index --root DIR``); the nearer one wins.
GLOBAL_OPTIONS = {
    "--root": dict(
        help="project folder: its graphrag.toml is read and relative paths are taken from it "
        "(default: $GRAPHRAG_ROOT or the current folder)"
    ),
    "--config": dict(help="a settings TOML file layered over the project's graphrag.toml"),
    "--cache": dict(
        choices=["on", "off", "replay"],
        help="LLM response cache: on (replay recorded replies, record new ones), off (ask the "
        "model every time, record nothing), replay (recorded replies only: a call never "
        "recorded is an error naming it); default: setting cache.mode or $GRAPHRAG_CACHE",
    ),
    "--quiet": dict(action="store_true", help="no progress lines"),
}


def _add_global_options(parser: argparse.ArgumentParser, **defaults: object) -> None:
    for flag, options in GLOBAL_OPTIONS.items():
        parser.add_argument(flag, **options, **defaults)


def _switch(text: str) -> dict[str, str]:
    return {"action": "store_true", "help": text}


INDEX = "index folder (default: setting project.output)"
LIMIT = {"type": int, "help": "only the first N questions"}
PRIMARY = {
    "metavar": "HYPOTHESIS",
    "help": f"the primary hypothesis, declared before the run: {PRIMARY_FORM}; tested alone "
    "and printed first (default: setting eval.primary)",
}
GATE = {
    "type": _gate,
    "metavar": "EXPRESSION",
    "help": f"a quality gate, {GATE_FORM}: exit 1 unless the 95%% CI of METHOD − BASELINE on "
    "the headline questions has its lower bound at or above −MARGIN (docs/evaluation.md)",
}

# command -> (its help, its arguments in order: each a help text or add_argument's keywords);
# ``graphrag X`` runs ``commands.cmd_X``.
COMMANDS: dict[str, tuple[str, dict[str, str | dict[str, Any]]]] = {
    "init": (
        "write a new project folder: graphrag.toml with every setting, prompts/, input/",
        {"folder": "the project folder to create (or to fill, if it has no project)"},
    ),
    "settings": (
        "print the settings in effect and where each came from",
        {"--changed": _switch("only the settings not at their default")},
    ),
    "llm": (
        "ask the configured LLM one question, or `serve` to keep the embedded model running",
        {
            "question": "the question, or the word `serve`",
            "--max-tokens": {"type": int, "default": 200},
        },
    ),
    "index": (
        "build an index from a folder of .txt/.md or a .jsonl",
        {
            "--input": "corpus folder, text file or .jsonl (default: setting project.input)",
            "--out": "index folder to write or update (default: setting project.output)",
            "--add": "add these documents to the index --out (only they are extracted)",
            "--delete": dict(
                help="delete a document from --out", action="append", metavar="DOC_ID"
            ),
            "--method": dict(
                help="graph extraction (setting index.method)", choices=["llm", "nlp"]
            ),
            "--lazy-reports": _switch(
                "write LLM community reports when a query first reads them (index.lazy_reports)"
            ),
            "--all-artifacts": _switch(
                "also embed what no configured method reads (e.g. ppr's facts; else built on use)"
            ),
            "--gold": "gold_graph.json: also report extraction quality",
            "--skip-bad": _switch("skip (and report) unusable documents instead of stopping"),
            "--strict": _switch("exit 1 when any item failed"),
            "--dry-run": _switch(
                "estimate the LLM calls, tokens and time (what the cache already holds costs "
                "nothing) and stop; no model is called (an endpoint gets one small timing request)"
            ),
        },
    ),
    "query": (
        "answer a question with one or all retrieval methods",
        {
            "question": {},
            "--index": INDEX,
            "--method": dict(
                help=f"{', '.join(ALL_METHODS)}, a comma list, or all (the default methods "
                f"{', '.join(METHODS)}); METHOD+rerank adds the rerank stage ([query.rerank])",
                default="local",
            ),
            "--opt-in": _switch(
                f"`all` also includes the opt-in methods ({', '.join(OPT_IN_METHODS)})"
            ),
            "--json": _switch("print answers as JSON"),
        },
    ),
    "eval": (
        "score methods on a question set and write a report",
        {
            "--index": INDEX,
            "--questions": "questions .jsonl (default: setting project.questions)",
            "--methods": "comma list, or all (default: eval.methods); METHOD+rerank reranks",
            "--opt-in": _switch(f"also evaluate the opt-in methods ({', '.join(OPT_IN_METHODS)})"),
            "--metrics": "comma list of RAGAS metrics, or none (default: eval.metrics)",
            "--out": "report folder (default: setting project.reports)",
            "--types": "only questions of these types, comma list (e.g. global)",
            "--limit": LIMIT,
            "--method-limits": dict(
                help="answer only the first N of those questions, or those of one split, with "
                "METHOD (one still being recorded, e.g. drift=10, or costly: hipporag=test); its "
                "n is its own and paired tests use the common questions",
                type=_method_limits,
                metavar="METHOD=N|SPLIT,...",
            ),
            "--judge-controls": dict(
                help="planted control pairs per RAGAS metric that measure the judge (default: "
                "%(default)s; 0: none)",
                type=int,
                default=DEFAULT_PAIRS,
                metavar="N",
            ),
            "--keep-controls": dict(
                help="keep an earlier run's judge_controls.csv cases; draw the rest", metavar="FILE"
            ),
            "--judge-sample": dict(
                help="judge faithfulness and context recall on a seeded sample of N questions "
                "(from the test split when the set has one; default: eval.judge_sample; 0: all)",
                type=int,
                metavar="N",
            ),
            "--pairwise": dict(
                help="also judge answers head to head: all method pairs, or A:B,C:D",
                nargs="?",
                const="all",
                metavar="PAIRS",
            ),
            "--pairwise-controls": dict(
                help="with --pairwise: planted pairs per method of the pairs (a question's own "
                "answer against another question's) that measure the pairwise judge (default: "
                "%(default)s; 0: none)",
                type=int,
                default=DEFAULT_CONTROLS,
                metavar="N",
            ),
            "--gold": "gold_graph.json for gold entities (default: the one beside --questions)",
            "--primary": PRIMARY,
            "--gate": GATE,
            "--dry-run": _switch(
                "estimate the LLM calls, tokens and time of answering and judging, and the "
                "smallest difference the run can detect (--pilot or --paired-sd), and stop"
            ),
            "--pilot": dict(
                help="with --dry-run: a previous report whose per-question spread sizes the "
                "power (eval or retrieval report folder)",
                metavar="REPORT_DIR",
            ),
            "--paired-sd": dict(
                help="with --dry-run: a stated standard deviation of the paired differences",
                type=float,
                metavar="SD",
            ),
            "--detect": dict(
                help="with --dry-run: the difference whose question count is printed "
                "(default %(default)s)",
                type=float,
                default=0.05,
            ),
        },
    ),
    "questions": (
        "generate a question set from an index (no questions yet), or plant unanswerable ones",
        {
            "action": dict(
                help="generate: new questions with the model; plant: unanswerable twins of "
                "--from's questions (an entity swapped for a name the corpus never writes), "
                "no model call",
                choices=["generate", "plant"],
            ),
            "--from": dict(help="plant: the question set to make twins of", dest="source"),
            "--index": INDEX,
            "--out": "questions .jsonl to write, its filter log beside (default: setting "
            "project.questions)",
            "--count": dict(
                help="candidates per kind, before the filters (default 8); plant: how many",
                type=int,
                default=8,
            ),
            "--kinds": dict(
                help=f"comma list of {', '.join(KINDS)} (default: all)", default=",".join(KINDS)
            ),
            "--seed": dict(help="sampling and split seed", type=int, default=DEFAULT_SEED),
            "--split": dict(
                help="the split the questions get: test (the default: nothing was tuned on "
                "them), dev (you will choose settings on them), or dev+test (dealt alternately "
                "per kind, seeded)",
                choices=SPLIT_CHOICES,
                default=DEFAULT_SPLIT,
            ),
        },
    ),
    "retrieval": (
        "score the contexts methods would build (evidence recall, recall@k), no answers",
        {
            "--index": INDEX,
            "--questions": "questions .jsonl with support ids (default: setting project.questions)",
            "--methods": dict(
                help="comma list of chunk-ranking methods", default="naive,ppr,local"
            ),
            "--out": "folder for summary.md and retrieval.parquet (default: retrieval/ in the "
            "project's reports folder)",
            "--limit": LIMIT,
            "--primary": PRIMARY,
            "--gate": GATE,
        },
    ),
    "convert": (
        "turn a QA benchmark into a corpus folder and a question set",
        {
            "format": {"choices": ["musique", "hotpotqa", "cmrc2018", "graphrag-bench"]},
            "--source": dict(
                help="the benchmark .json (or MuSiQue's or GraphRAG-Bench's folder)", required=True
            ),
            "--out": dict(help="folder to write docs/ and questions.jsonl into", required=True),
            "--questions": dict(help="keep the first N questions", type=int, default=50),
            "--distractors": dict(help="distractor paragraphs per question", type=int, default=3),
            "--split-seed": dict(
                help="deal the questions dev/test by document with this seed",
                type=int,
                default=None,
            ),
        },
    ),
    "graph": (
        "write the index's entity graph as an interactive HTML page, or `export` it into a "
        "graph database",
        {
            "action": dict(
                help="export: load the index into a Cypher graph database "
                "(docs/graph-databases.md); re-running writes only what changed",
                nargs="?",
                choices=["export"],
            ),
            "--index": INDEX,
            "--out": "HTML file to write, e.g. graph.html (the page; not with export)",
            "--to": dict(
                help="with export: ladybug (the embedded database, a file) or a Neo4j URL "
                "bolt://host:7687 (user and password from $NEO4J_USERNAME, $NEO4J_PASSWORD)",
                default="ladybug",
            ),
            "--db": "with export --to ladybug: the database file (default: beside the index "
            "folder, <index>.lbug)",
            "--level": dict(help="community level that colours the nodes", type=int, default=0),
            "--communities": "comma list of community numbers (at --level) to keep; default all",
        },
    ),
    "mcp": (
        "serve the project's index over the Model Context Protocol (docs/mcp.md)",
        {
            "--index": INDEX,
            "--transport": dict(
                help="stdio (the client starts this command) or streamable "
                "HTTP at http://HOST:PORT/mcp (default: stdio)",
                choices=["stdio", "http"],
                default="stdio",
            ),
            "--host": dict(
                help="HTTP: the address to listen on (default: %(default)s, this machine only)",
                default="127.0.0.1",
            ),
            "--port": dict(help="HTTP: the port (default: %(default)s)", type=int, default=8000),
        },
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphrag", description="GraphRAG research workbench: index, query, evaluate."
    )
    _add_global_options(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (text, arguments) in COMMANDS.items():
        command = sub.add_parser(name, help=text)
        for flag, spec in arguments.items():
            command.add_argument(flag, **({"help": spec} if isinstance(spec, str) else spec))
        command.set_defaults(func=getattr(commands, f"cmd_{name}"))
        # unset after the command: the value before it stands
        _add_global_options(command, default=argparse.SUPPRESS)
    return parser


_terminated: list[int] = []  # the SIGTERM received, if one was


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    """Stop as Ctrl-C does (asyncio cancels its running task cleanly), then exit 128+15; the
    exit runs the atexit hooks, which stop the embedded server this process started."""
    _terminated.append(signum)
    signal.raise_signal(signal.SIGINT)


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # A job started with `&` by a script ignores SIGINT, so the SIGTERM above (turned into
        # SIGINT) would be ignored too and `kill` would not stop the run: stop as Ctrl-C does.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SettingsError as err:
        print(f"settings error: {err}", file=sys.stderr)
        return 2
    except USER_ERRORS as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (_interrupt_on_sigterm)
        where = "; ".join(getattr(err, "__notes__", [])) or "interrupted"
        print(
            f"graphrag: {where}; replies already recorded stay in the LLM cache (unless "
            "--cache off): the same command resumes from them",
            file=sys.stderr,
        )
        return 128 + (_terminated[-1] if _terminated else signal.SIGINT)
