"""A registry of named validators, so new kinds of field can plug in."""

from __future__ import annotations

from validation.base import Validator


class ValidatorRegistry:
    """Validators by name."""

    def __init__(self) -> None:
        self._validators: dict[str, Validator] = {}

    def register(self, name: str, validator: Validator) -> Validator:
        """Add ``validator`` under ``name`` (replacing any earlier one)."""
        self._validators[name] = validator
        return validator

    def get(self, name: str) -> Validator:
        """The validator called ``name``; KeyError if there is none."""
        return self._validators[name]

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._validators)


registry = ValidatorRegistry()
