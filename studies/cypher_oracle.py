"""How far Text-to-Cypher could go on the demo's graph: each graph question's gold Cypher query
run on the extracted graph (its rows are recorded in data/kestrel_bay/graph_questions.jsonl and
checked against the live database by tests/test_cypher.py), scored by the answer keywords the
rows hold. This separates the two limits of the `cypher` method: the model's Cypher, and the
graph the 1.5B model extracted.

    python -m studies.cypher_oracle
"""

from __future__ import annotations

import json

from graphrag.settings import REPO_ROOT

QUESTIONS = REPO_ROOT / "data" / "kestrel_bay" / "graph_questions.jsonl"


def main() -> None:
    totals: dict[str, list[int]] = {}
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        rows = json.dumps(record["graph_rows"], ensure_ascii=False).lower()
        keywords = record["answer_keywords"]
        hit = sum(k.lower() in rows for k in keywords)
        print(f"{record['id']} ({record['split']}): {hit}/{len(keywords)}  {record['question']}")
        for split in (record["split"], "all"):
            total = totals.setdefault(split, [0, 0])
            total[0] += hit
            total[1] += len(keywords)
    for split, (hit, n) in totals.items():
        print(f"{split}: the gold query's rows hold {hit} of {n} answer keywords ({hit / n:.3f})")


if __name__ == "__main__":
    main()
