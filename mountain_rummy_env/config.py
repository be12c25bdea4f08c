"""Validation helpers for variant configurations: each bad option gets an error naming it."""

from __future__ import annotations


class ConfigError(ValueError):
    """An invalid option value or an unknown option name."""


def check_choice(name: str, value, choices) -> None:
    if value not in choices or isinstance(value, bool) != isinstance(choices[0], bool):
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")


def check_int(name: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{name} must be an integer in {low}..{high}; got {value!r}")


def config_from_dict(cls, options: dict):
    """Build config dataclass ``cls`` from a dict, rejecting unknown names with the valid ones."""
    known = set(cls.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)} for {cls.__name__}; "
                          f"valid: {', '.join(sorted(known))}")
    return cls(**options)
