"""YAML text as Go's ``sigs.k8s.io/yaml.Marshal`` writes it (v1.6: JSON, then go.yaml.in/yaml/v2).

Upstream stores text produced this way (the v2.3 runtime snapshot), and a golden compares that text
byte for byte, so the layout matters, not just the data. go-yaml v2 and PyYAML both port libyaml's
emitter (block style, indentless sequences under a key, 80-column folding, same plain/quoted
analysis), so PyYAML does the emitting; what differs is decided here:

* map keys are sorted with go-yaml's ``keyList.Less`` (non-letters before letters, digit runs
  compared as numbers), not by code point;
* a string is written plain unless it would read back as something else under go-yaml's resolver
  (bool ``y``/``on``..., null, int incl. ``0x``/``0o``/``0b``, float, timestamp, base-60 float), in
  which case it is double-quoted (PyYAML would pick single quotes); a string with a newline is a
  literal block.
"""

from __future__ import annotations

import functools
import re

import yaml

_SPECIAL = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
            "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
            "", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
            "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"}
# strconv.ParseInt/ParseUint with base 0 (after go-yaml removed underscores).
_GO_INT = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_FLOAT_DOT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")  # ParseFloat of what starts with '.'
_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
# The timestamp layouts go-yaml tries (short date fields allowed), checked by shape.
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
                        r"(([Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2}))"
                        r"|( [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?))?")


def _reads_as_non_string(s: str) -> bool:
    """go-yaml v2 ``resolve("", s)`` gives a tag other than !!str, or ``isBase60Float(s)``."""
    if s in _SPECIAL:
        return True
    first = s[0]
    if first == ".":
        return bool(_GO_FLOAT_DOT.fullmatch(s))
    if first in "+-0123456789":
        if _TIMESTAMP.fullmatch(s):
            return True
        plain = s.replace("_", "")
        if _GO_INT.fullmatch(plain) or _YAML_FLOAT.fullmatch(plain):  # _GO_INT covers go-yaml's "0b"/"-0b" too
            return True
        return bool(_BASE60_FLOAT.fullmatch(s))
    return False


def _go_key_less(a: str, b: str) -> bool:
    """go-yaml v2 ``keyList.Less`` for two string keys."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


_KEY_ORDER = functools.cmp_to_key(lambda a, b: -1 if _go_key_less(a, b) else (1 if _go_key_less(b, a) else 0))


class _Resolver(yaml.resolver.BaseResolver):
    """No implicit types: every scalar is emitted as text in the style chosen below."""


class _Dumper(yaml.emitter.Emitter, yaml.serializer.Serializer, yaml.representer.BaseRepresenter, _Resolver):
    # The emitter's defaults are go-yaml's: indent 2, lines folded past column 80. The representer's
    # default_flow_style/sort_keys are never read: the representers below build every node themselves.
    def __init__(self, stream, **kwargs):
        yaml.emitter.Emitter.__init__(self, stream, allow_unicode=True)
        yaml.serializer.Serializer.__init__(self)
        yaml.representer.BaseRepresenter.__init__(self)
        _Resolver.__init__(self)


def _scalar(text: str, style: str | None = None):
    return yaml.ScalarNode("tag:yaml.org,2002:str", text, style=style)


def _represent_str(dumper, value: str):
    if "\n" in value:
        return _scalar(value, "|")
    return _scalar(value, '"' if _reads_as_non_string(value) else None)


# Block style; an empty map or list comes out as {} / [] (PyYAML's emitter writes an empty collection
# in flow style whatever its node says, as go-yaml does).
def _represent_dict(dumper, value: dict):
    items = sorted(value.items(), key=lambda kv: _KEY_ORDER(kv[0]))
    return yaml.MappingNode("tag:yaml.org,2002:map",
                            [(dumper.represent_data(k), dumper.represent_data(v)) for k, v in items])


def _represent_list(dumper, value: list):
    return yaml.SequenceNode("tag:yaml.org,2002:seq", [dumper.represent_data(v) for v in value])


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(bool, lambda d, v: _scalar("true" if v else "false"))
_Dumper.add_representer(int, lambda d, v: _scalar(str(v)))
# A float only reaches here from a field the runtime's schema leaves open; Go prints float64 with
# strconv.FormatFloat(f, 'g', -1, 64) (2.5, 1e+30), which Python's repr matches for finite values.
_Dumper.add_representer(float, lambda d, v: _scalar(repr(v)))
_Dumper.add_representer(type(None), lambda d, v: _scalar("null"))


def dump(value) -> str:
    """``sigs.k8s.io/yaml.Marshal`` of JSON-shaped data (dicts, lists, str, int, bool, None)."""
    return yaml.dump(value, Dumper=_Dumper)
