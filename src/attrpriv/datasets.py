"""Bundled offline datasets: ``df, schema = attrpriv.datasets.load("adult")``."""

from attrpriv.data.datasets import Dataset, info, load, names

__all__ = ["Dataset", "info", "load", "names"]
