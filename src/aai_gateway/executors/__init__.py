"""Executors: one module per execution type behind the small `Executor` protocol."""

from .base import (
    Executor,
    ExecutorBase,
    ExecutorSettings,
    Invocation,
    ProgressReporter,
    ToolResult,
    UserAnswer,
    UserAsker,
    UserQuestion,
)
from .registry import ExecutorRegistry

__all__ = [
    "Executor",
    "ExecutorBase",
    "ExecutorRegistry",
    "ExecutorSettings",
    "Invocation",
    "ProgressReporter",
    "ToolResult",
    "UserAnswer",
    "UserAsker",
    "UserQuestion",
]
