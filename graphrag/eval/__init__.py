"""Evaluation: question sets, RAGAS and judge-free metrics, statistics, reports."""
