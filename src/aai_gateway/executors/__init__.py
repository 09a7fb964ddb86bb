"""Executors: one module per execution type behind the small `Executor` protocol."""

from .base import Executor, Invocation, ProgressReporter
from .registry import ExecutorRegistry

__all__ = ["Executor", "ExecutorRegistry", "Invocation", "ProgressReporter"]
