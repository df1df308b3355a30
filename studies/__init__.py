"""The workbench's own research, beside the package: the cross-corpus summary of the committed
reports (and docs/results.md and the README's summary generated from it), the demo's
recording bookkeeping, the lean pipeline's names and the benchmark scripts. It uses
``graphrag`` as any user would; run its entry points from the repository root, e.g.
``python -m studies.summarize``."""
