"""The Chinese prompts against the English ones, on the Chinese demo (docs/languages.md).

Before the ``_zh`` prompts a Chinese corpus was indexed and answered with the English prompts.
scripts/demo.sh replays both arms over data/zh_demo: ``output/zh_demo`` and ``reports/zh_demo``
(the packaged prompts, so the Chinese ones) and ``output/zh_demo_english`` and
``reports/zh_demo_english_prompt`` (each ``_zh`` prompt given the English text,
data/zh_demo/english_prompt.toml). This prints two tables from them:

- the index against data/zh_demo/gold_graph.json (entity recall and precision, relationship
  recall, as ``index --gold`` measures them), the share of entity descriptions written in
  Chinese, and the entities whose description names a worked example's people or places (the
  example leaking into the graph);
- per arm and method over the six dev questions (data/zh_demo/questions.jsonl): the share of
  answers in Chinese, the share citing a context item shown to the model (the records'
  ``cited``), and keyword hits.

    python -m studies.chinese_prompts
"""

from __future__ import annotations

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.extract.records import parse_records
from graphrag.prompts import packaged_template
from graphrag.settings import REPO_ROOT
from graphrag.text import lang
from workbench.report.tables import table as markdown

# arm -> (its index in output/, its report in reports/), as scripts/demo.sh writes them
ARMS = {
    "Chinese (_zh)": ("zh_demo", "zh_demo"),
    "English": ("zh_demo_english", "zh_demo_english_prompt"),
}
GOLD = REPO_ROOT / "data" / "zh_demo" / "gold_graph.json"
EXAMPLES = [
    f"{name}{suffix}"
    for name in ("extract_graph_records", "extract_graph_records_again")
    for suffix in ("", "_zh")
]


def in_chinese(text: str) -> bool:
    """Whether ``text`` is Chinese by the workbench's own rule (``lang.detect``: at least as
    many Han characters as Latin-script words), so "约四百万元。[12]" is Chinese."""
    return lang.detect(text) == lang.CHINESE


def example_names() -> set[str]:
    """The names of every packaged worked example's entities, English and Chinese."""
    return {
        entity["name"]
        for name in EXAMPLES
        for entity in parse_records(packaged_template(name).text("example_reply")).entities
    }


def index_table() -> pd.DataFrame:
    gold, leaked_names = load_gold_graph(GOLD), example_names()
    rows = []
    for arm, (index, _) in ARMS.items():
        entities = pd.read_parquet(REPO_ROOT / "output" / index / "entities.parquet")
        relationships = pd.read_parquet(REPO_ROOT / "output" / index / "relationships.parquet")
        quality = extraction_quality(entities, relationships, gold)
        descriptions = entities[S.DESCRIPTION].fillna("")
        leaked = descriptions.map(lambda d: any(name in d for name in leaked_names))
        rows.append(
            {
                "prompts": arm,
                "entities": len(entities),
                "relationships": len(relationships),
                "entity recall": quality.entity_recall,
                "entity precision": quality.entity_precision,
                "relationship recall": quality.relationship_recall,
                "descriptions in Chinese": descriptions.map(in_chinese).mean(),
                "example names in descriptions": int(leaked.sum()),
            }
        )
    return pd.DataFrame(rows)


def answer_table() -> pd.DataFrame:
    rows = []
    for arm, (_, report) in ARMS.items():
        records = pd.read_parquet(REPO_ROOT / "reports" / report / "records.parquet")
        for method, group in records.groupby("method", sort=False):
            answers = group["answer"].fillna("")
            rows.append(
                {
                    "prompts": arm,
                    "method": method,
                    "n": len(group),
                    "in Chinese": answers.map(in_chinese).mean(),
                    "cites a shown item": group["cited"].map(len).gt(0).mean(),
                    "keyword hits": group["keyword_hit_rate"].mean(),
                }
            )
    return pd.DataFrame(rows)


def _print(frame: pd.DataFrame) -> None:
    rows = [[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row] for row in frame.values]
    print("\n".join(markdown(list(frame.columns), rows)))


def main() -> None:
    _print(index_table())
    print()
    _print(answer_table())


if __name__ == "__main__":
    main()
