"""Evaluation: datasets, metrics and the runner behind `thinkgraph eval`."""
