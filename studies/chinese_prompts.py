"""The Chinese answer prompt against the English one, on the Chinese demo's dev questions.

Before ``answer_zh`` a Chinese question was answered with the English answer prompt. This
reads the two replayed reports scripts/demo.sh writes over data/zh_demo/questions.jsonl (six
dev questions written for the demo, naive RAG and local search): ``reports/zh_demo`` (the
packaged prompts, so answer_zh) and ``reports/zh_demo_english_prompt`` (answer_zh given the
English text, data/zh_demo/english_prompt.toml), and prints per arm and method the share of
answers written in Chinese, the share citing a context item shown to the model (the records'
``cited``, as the workbench parsed the markers), and keyword hits (docs/languages.md quotes
the table).

    python -m studies.chinese_answer_prompt
"""

from __future__ import annotations

import re

import pandas as pd

from graphrag.settings import REPO_ROOT
from graphrag.text.lang.chinese import HAN
from workbench.report.tables import table as markdown

ARMS = {"answer_zh (Chinese)": "zh_demo", "answer (English)": "zh_demo_english_prompt"}


def in_chinese(text: str) -> bool:
    """Whether most of ``text``'s non-space characters are Han characters."""
    visible = re.sub(r"\s", "", text)
    return bool(visible) and len(HAN.findall(visible)) > len(visible) / 2


def table() -> pd.DataFrame:
    rows = []
    for arm, folder in ARMS.items():
        records = pd.read_parquet(REPO_ROOT / "reports" / folder / "records.parquet")
        for method, group in records.groupby("method", sort=False):
            answers = group["answer"].fillna("")
            rows.append(
                {
                    "prompt": arm,
                    "method": method,
                    "n": len(group),
                    "in Chinese": answers.map(in_chinese).mean(),
                    "cites a shown item": group["cited"].map(len).gt(0).mean(),
                    "keyword hits": group["keyword_hit_rate"].mean(),
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    frame = table()
    rows = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row] for row in frame.values]
    print("\n".join(markdown(list(frame.columns), rows)))


if __name__ == "__main__":
    main()
