"""Go's ``flag.FlagSet`` with ``ContinueOnError``, as Volcano's job plugins parse their arguments.

A plugin's arguments (``spec.plugins.<name>``) go through ``flagSet.Parse``; an error is only logged
and parsing stops there, so flags *before* the bad one keep their parsed values and the rest keep
their defaults - and the bad one itself keeps what strconv returned with the error (0 for
``--port=abc``, the int64 limit for an out-of-range number), since Go's flag stores it anyway. The rules below are those of Go's ``flag`` package (flag.go ``parseOne``):

* ``-name`` and ``--name`` are the same; ``-name=value`` or ``-name value`` (non-bool flags);
* a bool flag alone means true; ``-b=value`` takes ``strconv.ParseBool`` values;
* parsing stops without error at the first non-flag argument or after ``--``;
* ints use ``strconv.ParseInt(s, 0, 64)``: sign, ``0x``/``0o``/``0b`` prefixes, a leading ``0`` means
  octal, ``_`` separators only with base 0.

Error texts are Go's, e.g. ``invalid value "abc" for flag -port: parse error``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

INT64_MIN, INT64_MAX, UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1


class FlagError(Exception):
    pass


class _NumError(Exception):
    """strconv's error, as the flag package rewrites it (``numError``), with the value strconv returns
    beside it: Go's flag stores that value even when ``Set`` fails (``intValue.Set``: ``*i =
    intValue(v); return err``; ``boolValue.Set`` the same) - 0 / false for a syntax error, the
    nearest limit for an int out of range."""

    def __init__(self, message: str, value=0):
        super().__init__(message)
        self.value = value


def parse_bool(text: str) -> bool:
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise _NumError("parse error", False)


def parse_int(text: str) -> int:
    """``strconv.ParseInt(text, 0, 64)``; errors say "parse error" or "value out of range"."""
    if not text:
        raise _NumError("parse error")
    body, negative = text, False
    if body[0] in "+-":
        negative, body = body[0] == "-", body[1:]
    if not body:
        raise _NumError("parse error")
    digits, base = body, 10
    if body[0] == "0":
        prefix = body[1:2].lower()
        if len(body) >= 3 and prefix in ("b", "o", "x"):
            base, digits = {"b": 2, "o": 8, "x": 16}[prefix], body[2:]
        else:
            base, digits = 8, body[1:]
    value, underscores = 0, False
    for ch in digits:
        if ch == "_":
            underscores = True
            continue
        digit = int(ch, 36) if ch.isascii() and ch.isalnum() else 99
        if digit >= base:
            raise _NumError("parse error")
        value = value * base + digit
        if value > UINT64_MAX:  # ParseUint stops at the digit that overflows
            raise _NumError("value out of range", INT64_MIN if negative else INT64_MAX)
    if underscores and not _underscore_ok(text):
        raise _NumError("parse error")
    value = -value if negative else value
    if not INT64_MIN <= value <= INT64_MAX:
        raise _NumError("value out of range", INT64_MIN if negative else INT64_MAX)
    return value


def _underscore_ok(text: str) -> bool:
    # strconv.underscoreOK: "_" only between digits (a base prefix counts as a digit).
    saw, i = "^", 0
    if text[:1] in ("+", "-"):
        text = text[1:]
    hexa = False
    if len(text) >= 2 and text[0] == "0" and text[1].lower() in "box":
        i, saw, hexa = 2, "0", text[1].lower() == "x"
    for ch in text[i:]:
        if ch.isdigit() or (hexa and ch.lower() in "abcdef"):
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


@dataclass
class FlagSet:
    """Flags are declared with their defaults; :meth:`parse` fills :attr:`values`."""

    name: str
    values: dict[str, object] = field(default_factory=dict)
    _kinds: dict[str, str] = field(default_factory=dict)

    def string(self, name: str, default: str) -> None:
        self._declare(name, "string", default)

    def int(self, name: str, default: int) -> None:
        self._declare(name, "int", default)

    def bool(self, name: str, default: bool) -> None:
        self._declare(name, "bool", default)

    def _declare(self, name: str, kind: str, default) -> None:
        self._kinds[name] = kind
        self.values[name] = default

    def parse(self, args: list[str] | None) -> None:
        """Raises :class:`FlagError` at the first bad argument; earlier flags keep their values."""
        rest = list(args or [])
        while rest:
            arg = rest[0]
            if len(arg) < 2 or arg[0] != "-":
                return  # first non-flag argument: Go stops here without an error
            minuses = 2 if arg[1] == "-" else 1
            if arg == "--":
                return
            name = arg[minuses:]
            if not name or name[0] in "-=":
                raise FlagError(f"bad flag syntax: {arg}")
            rest = rest[1:]
            value, has_value = "", False
            if "=" in name[1:]:
                cut = name.index("=", 1)
                name, value, has_value = name[:cut], name[cut + 1:], True
            kind = self._kinds.get(name)
            if kind is None:
                if name in ("help", "h"):
                    raise FlagError("flag: help requested")
                raise FlagError(f"flag provided but not defined: -{name}")
            if kind == "bool":
                try:
                    self.values[name] = parse_bool(value if has_value else "true")
                except _NumError as exc:
                    self.values[name] = exc.value
                    raise FlagError(f"invalid boolean value {_go_quote(value)} for -{name}: {exc}") from None
                continue
            if not has_value and rest:
                value, has_value, rest = rest[0], True, rest[1:]
            if not has_value:
                raise FlagError(f"flag needs an argument: -{name}")
            if kind == "int":
                try:
                    self.values[name] = parse_int(value)
                except _NumError as exc:
                    self.values[name] = exc.value
                    raise FlagError(f"invalid value {_go_quote(value)} for flag -{name}: {exc}") from None
            else:
                self.values[name] = value


def _go_quote(text: str) -> str:
    """Go's %q for the plain ASCII values plugin arguments hold."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
