"""Reusable rules: type, length, regular expression and arbitrary predicate."""

from __future__ import annotations

import re
from collections.abc import Callable

from validation.base import ValidationResult, Validator


class TypeRule(Validator):
    """The value is an instance of ``kind``."""

    def __init__(self, kind: type) -> None:
        self.kind = kind

    def validate(self, value: object) -> ValidationResult:
        """Check the value's type."""
        if isinstance(value, self.kind):
            return ValidationResult.success()
        return ValidationResult.failure(f"expected {self.kind.__name__}")


class LengthRule(Validator):
    """The value's length is at most ``maximum``."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum

    def validate(self, value: object) -> ValidationResult:
        """Check the value's length."""
        if len(str(value)) <= self.maximum:
            return ValidationResult.success()
        return ValidationResult.failure(f"longer than {self.maximum}")


class RegexRule(Validator):
    """The whole value matches ``pattern``."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = re.compile(pattern, flags)

    def validate(self, value: object) -> ValidationResult:
        """Match the whole value."""
        if self.pattern.fullmatch(str(value)):
            return ValidationResult.success()
        return ValidationResult.failure(f"does not match {self.pattern.pattern}")


class PredicateRule(Validator):
    """Any callable that answers True or False."""

    def __init__(self, predicate: Callable[[object], bool], message: str) -> None:
        self.predicate = predicate
        self.message = message

    def validate(self, value: object) -> ValidationResult:
        """Ask the predicate."""
        if self.predicate(value):
            return ValidationResult.success()
        return ValidationResult.failure(self.message)
