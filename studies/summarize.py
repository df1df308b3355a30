"""``python -m studies.summarize REPORT_DIR... --out reports/SUMMARY.md``: one cross-corpus
summary of report folders written by ``graphrag eval`` (``results_pages.write_summary``);
``--results docs/results.md`` also writes the results page's generated block, ``--readme
README.md`` the README's short summary.

Run from the repository root (scripts/demo.sh does, after writing the reports)."""

from __future__ import annotations

import argparse
import sys

from graphrag.settings import repo_relative
from studies.cross_corpus import SummaryError
from studies.results_pages import write_summary
from workbench.eval.retrieval import RetrievalEvalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studies.summarize",
        description="one cross-corpus summary of report folders written by `graphrag eval`",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT_DIR", help="report folders")
    parser.add_argument("--out", required=True, help="Markdown file, e.g. reports/SUMMARY.md")
    parser.add_argument(
        "--results",
        help="also write the headline, reading and retrieval sections into this page's "
        "generated block (docs/results.md)",
    )
    parser.add_argument(
        "--readme",
        help="also write the short summary (each corpus's best graph method against the "
        "baseline) into this file's summary block (README.md)",
    )
    parser.add_argument(
        "--baseline", default="naive", help="method every other is tested against (naive)"
    )
    parser.add_argument(
        "--retrieval",
        nargs="+",
        metavar="RETRIEVAL_DIR",
        help="also summarize these folders written by `graphrag retrieval`",
    )
    parser.add_argument(
        "--index",
        nargs="+",
        metavar="INDEX_DIR",
        help="also show these indexes' cost beside the report of the corpus each was built from",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        out = write_summary(
            args.reports,
            args.out,
            baseline=args.baseline,
            command="python -m studies.summarize " + " ".join(argv),
            readme=args.readme,
            results=args.results,
            retrieval_folders=args.retrieval or (),
            index_folders=args.index or (),
        )
    except (SummaryError, RetrievalEvalError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"cross-corpus summary written to {repo_relative(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
