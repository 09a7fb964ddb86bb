"""Executors: one module per execution type behind the small `Executor` protocol."""

from .base import Executor, ExecutorBase, ExecutorSettings, Invocation, ProgressReporter
from .registry import ExecutorRegistry

__all__ = [
    "Executor",
    "ExecutorBase",
    "ExecutorRegistry",
    "ExecutorSettings",
    "Invocation",
    "ProgressReporter",
]
