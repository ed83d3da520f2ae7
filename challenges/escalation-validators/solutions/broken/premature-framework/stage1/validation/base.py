"""The building blocks: a result type, the Validator base class and its combinators."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class ValidationResult:
    """The outcome of a validation, with the reasons when it failed."""

    ok: bool
    errors: tuple[str, ...] = ()

    @classmethod
    def success(cls) -> ValidationResult:
        """A passing result."""
        return cls(ok=True)

    @classmethod
    def failure(cls, *errors: str) -> ValidationResult:
        """A failing result with its reasons."""
        return cls(ok=False, errors=errors)

    def merge(self, other: ValidationResult) -> ValidationResult:
        """Both results together: ok only when both are."""
        return ValidationResult(self.ok and other.ok, self.errors + other.errors)


class Validator(ABC):
    """Anything that can check a value; calling it answers True or False."""

    @abstractmethod
    def validate(self, value: object) -> ValidationResult:
        """Check ``value``."""

    def __call__(self, value: object) -> bool:
        return self.validate(value).ok


class AllOf(Validator):
    """Passes when every validator passes; stops at the first failure."""

    def __init__(self, *validators: Validator) -> None:
        self.validators = validators

    def validate(self, value: object) -> ValidationResult:
        """Run the validators in order until one fails."""
        result = ValidationResult.success()
        for validator in self.validators:
            result = result.merge(validator.validate(value))
            if not result.ok:
                break
        return result


class AnyOf(Validator):
    """Passes when at least one validator passes."""

    def __init__(self, *validators: Validator) -> None:
        self.validators = validators

    def validate(self, value: object) -> ValidationResult:
        """Run the validators until one passes."""
        errors: list[str] = []
        for validator in self.validators:
            result = validator.validate(value)
            if result.ok:
                return result
            errors.extend(result.errors)
        return ValidationResult.failure(*errors)
