"""Validated, immutable configuration records shared by the golden model, the RTL
generators and the simulation flow.

Every unit's parameters are one frozen dataclass deriving from :class:`Config`:
checks run at construction (``__post_init__``), variants are made with
:meth:`Config.replace`, named presets taken from the papers live in the class's
``PRESETS`` dict, and :meth:`Config.to_json` is written next to every generated
Verilog file so that the driver, the model and the RTL can never disagree.
"""
from __future__ import annotations

import dataclasses
import json
import re
import typing
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["ConfigError", "Config", "check_int", "check_choice", "check_pow2", "check"]


def parse_int(text: str) -> int | None:
    """An integer as the command line and graph specs write it: decimal (a sign and
    leading zeros allowed) or hexadecimal with ``0x``; ``None`` otherwise (Python's
    other spellings, ``1_0``, ``0o7``, ``0b1``, are not taken at face value)."""
    t = text.strip()
    if re.fullmatch(r"[+-]?[0-9]+", t):
        return int(t, 10)
    if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+", t):
        return int(t, 16)
    return None


class ConfigError(ValueError):
    """An impossible or out-of-range configuration parameter."""


def check(cond: bool, message: str) -> None:
    """Raise :class:`ConfigError` with ``message`` unless ``cond`` holds."""
    if not cond:
        raise ConfigError(message)


def check_int(owner: str, name: str, value: Any, lo: int | None = None, hi: int | None = None) -> None:
    """Check that ``value`` is an ``int`` (not a bool) in ``[lo, hi]``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"{owner}.{name} must be an integer, not {value!r}")
    if lo is not None and value < lo or hi is not None and value > hi:
        lo_s = "-inf" if lo is None else str(lo)
        hi_s = "inf" if hi is None else str(hi)
        raise ConfigError(f"{owner}.{name} must be in the range [{lo_s}, {hi_s}], not {value!r}")


def check_choice(owner: str, name: str, value: Any, choices) -> None:
    """Check that ``value`` is one of ``choices`` and of the same type (``4.0``
    is not the choice ``4``; a bool is not an int)."""
    if isinstance(value, bool) or not any(value == c and type(value) is type(c) for c in choices):
        allowed = ", ".join(repr(c) for c in choices)
        raise ConfigError(f"{owner}.{name} must be one of {allowed}, not {value!r}")


def check_pow2(owner: str, name: str, value: Any, lo: int = 1, hi: int | None = None) -> None:
    """Check that ``value`` is a power of two in ``[lo, hi]``."""
    check_int(owner, name, value, lo, hi)
    if value & (value - 1):
        raise ConfigError(f"{owner}.{name} must be a power of two, not {value!r}")


@dataclasses.dataclass(frozen=True)
class Config:
    """Base of every configuration record.

    Subclasses are ``@dataclasses.dataclass(frozen=True)``, implement
    :meth:`validate` and may define ``PRESETS = {"name": {field: value}}``.
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:  # pragma: no cover - overridden
        """Raise :class:`ConfigError` if a parameter is impossible."""

    # -- variants and presets ----------------------------------------------------
    def replace(self, **changes: Any):
        """A copy with some fields changed (validated again)."""
        self._check_fields(changes)
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str, **changes: Any):
        """The preset ``name``, optionally with some fields changed."""
        if name not in cls.PRESETS:
            allowed = ", ".join(sorted(cls.PRESETS))
            raise ConfigError(f"{cls.__name__} has no preset {name!r}; presets: {allowed}")
        fields = dict(cls.PRESETS[name])
        cls._check_fields(changes)
        fields.update(changes)
        return cls.from_dict(fields)

    @classmethod
    def preset_names(cls) -> list[str]:
        return sorted(cls.PRESETS)

    @classmethod
    def _check_fields(cls, changes: dict[str, Any]) -> None:
        names = {f.name for f in dataclasses.fields(cls)}
        for key in changes:
            if key not in names:
                allowed = ", ".join(sorted(names))
                raise ConfigError(f"{cls.__name__} has no parameter {key!r}; parameters: {allowed}")

    # -- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Config):
                v = v.to_dict()
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    def to_json(self) -> str:
        """JSON text of the configuration, with its type name and derived values."""
        doc = {"type": type(self).__name__, "params": self.to_dict(), "derived": self.derived()}
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"

    def derived(self) -> dict[str, Any]:
        """Values computed from the parameters (written to JSON for drivers)."""
        return {}

    @classmethod
    def from_dict(cls, fields: dict[str, Any]):
        cls._check_fields(fields)
        hints = typing.get_type_hints(cls)
        kwargs = {}
        for key, value in fields.items():
            hint = hints.get(key)
            if isinstance(hint, type) and issubclass(hint, Config) and isinstance(value, dict):
                value = hint.from_dict(value)
            elif isinstance(value, list):
                value = tuple(value)
            kwargs[key] = value
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str):
        """The configuration of a JSON text as :meth:`to_json` writes it: ``type``, and
        ``params`` with every field (a key given twice, or a field missing, is an
        error: the file would not say which design it is)."""
        def no_repeats(pairs):
            keys = [k for k, _ in pairs]
            twice = sorted({k for k in keys if keys.count(k) > 1})
            if twice:
                raise ConfigError(f"a {cls.__name__} JSON gives {', '.join(map(repr, twice))} twice")
            return dict(pairs)
        doc = json.loads(text, object_pairs_hook=no_repeats)
        if not isinstance(doc, dict):
            raise ConfigError(f"a {cls.__name__} JSON must be an object with \"type\" and \"params\", "
                              f"not a {type(doc).__name__}")
        if "type" not in doc:
            raise ConfigError(f"a {cls.__name__} JSON needs a \"type\" key (\"{cls.__name__}\") beside \"params\"")
        if doc.get("type") != cls.__name__:
            raise ConfigError(f"JSON holds a {doc.get('type')!r}, not a {cls.__name__}")
        if not isinstance(doc.get("params"), dict):
            raise ConfigError(f"a {cls.__name__} JSON needs a \"params\" object (field: value), "
                              f"not {doc.get('params')!r}")
        cfg = cls.from_dict(doc["params"])            # the values given, checked first
        missing = [f.name for f in dataclasses.fields(cls) if f.name not in doc["params"]]
        if missing:
            raise ConfigError(f"a {cls.__name__} JSON holds every parameter (as graphunits writes it); missing: "
                              f"{', '.join(missing)}")
        return cfg

    @classmethod
    def from_file(cls, path):
        """The configuration in the JSON file ``path`` (as written next to the
        Verilog); every problem is a :class:`ConfigError` that names the file."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"configuration file {path} " + ("is not a file" if path.exists() else "does not exist"))
        try:
            return cls.from_json(path.read_text(encoding="utf-8-sig"))
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not a text (UTF-8) JSON file") from None
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
        except ConfigError as e:
            raise ConfigError(f"{path}: {e}") from None

    @classmethod
    def from_cli(cls, preset: str | None, config_file: str | None, overrides: list[str] | None = None):
        """The configuration a command line asks for: ``--preset`` (default
        ``"default"``) or ``--config FILE`` (not both: a file holds every
        parameter), then the ``--set KEY=VALUE`` ``overrides``."""
        if preset is not None and config_file:
            raise ConfigError(f"give --preset {preset} or --config {config_file}, not both "
                              "(the configuration file holds every parameter; change one with --set)")
        fields = cls.parse_overrides(overrides or [])
        if config_file:
            cfg = cls.from_file(config_file)
            return cfg.replace(**fields) if fields else cfg
        return cls.preset(preset or "default", **fields)

    @classmethod
    def parse_overrides(cls, items: list[str], option: str = "--set") -> dict[str, Any]:
        """Parse ``["key=value", ...]`` (CLI ``--set``, or the command-line ``option``
        named in the errors) into typed field values."""
        hints = typing.get_type_hints(cls)
        out: dict[str, Any] = {}
        given: dict[str, str] = {}
        for item in items:
            if "=" not in item:
                raise ConfigError(f"{option} expects KEY=VALUE, not {item!r}")
            key, text = item.split("=", 1)
            key = key.strip()
            cls._check_fields({key: None})
            if key in out:
                raise ConfigError(f"{option} {key} is given twice ({given[key]!r} and {item.strip()!r}): "
                                  f"give each parameter once")
            given[key] = item.strip()
            hint = hints[key]
            try:
                if hint is bool:
                    if text.lower() not in ("0", "1", "true", "false", "yes", "no"):
                        raise ValueError
                    value: Any = text.lower() in ("1", "true", "yes")
                elif hint is int:
                    value = parse_int(text)
                    if value is None:
                        raise ValueError
                elif hint is float:
                    value = float(text)
                elif hint is str:
                    value = text
                else:
                    value = json.loads(text)
            except ValueError:
                raise ConfigError(f"{cls.__name__}.{key}: cannot read {text!r} as {getattr(hint, '__name__', hint)}") from None
            out[key] = value
        return out
