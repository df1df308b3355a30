"""Evaluation: question sets, RAGAS and judge-free metrics, judges, statistics, the runs that
produce records (the report folders are written from them by ``workbench.report``)."""
