"""Command-line templates of `gbench` and `command` workloads (pure): named placeholders,
checked when a run is planned and filled in when a step runs.

| placeholder     | becomes                                                              |
|-----------------|----------------------------------------------------------------------|
| `{threads}`     | the step's thread count                                              |
| `{data_dir}`    | the point's data folder (setup steps write there; kept for the point) |
| `{binary:NAME}` | the path of the engine recipe's binary NAME (`engine.binaries`)       |
| `{param:NAME}`  | a workload param: a field of `params` or a key of `params.extra`      |
| `{out}`         | a result file the program writes (`output.source: out` reads it)      |
| `{source}`      | the engine's source tree, as built (e.g. its test data)               |
| `{repetition}`  | the repetition number (0 for a setup step)                            |

`{{` and `}}` are a literal brace. An unknown placeholder is refused in one line at planning
time, naming the template and the known ones; a string command is split as a shell would
(shlex), with each word filled in on its own, so a path with spaces stays one argument.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import ConfigError

PLAIN = ("threads", "data_dir", "out", "source", "repetition")
NAMED = ("binary", "param")
_FIELD = re.compile(r"\{\{|\}\}|\{([a-z_]+)(?::([A-Za-z0-9_.\-]+))?\}|\{[^{}]*\}?|\}")


@dataclass(frozen=True)
class Placeholder:
    name: str  # threads | data_dir | binary | param | ...
    arg: str = ""  # binary:NAME / param:NAME

    def text(self) -> str:
        return f"{{{self.name}:{self.arg}}}" if self.arg else f"{{{self.name}}}"


def placeholders(template: str, where: str) -> list[Placeholder]:
    """The placeholders of one template; ConfigError naming the first bad one."""
    found = []
    for match in _FIELD.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        name, arg = match.group(1), match.group(2) or ""
        ok = name is not None and ((name in PLAIN and not arg) or (name in NAMED and arg))
        if not ok:
            known = ", ".join([f"{{{p}}}" for p in PLAIN] + [f"{{{n}:NAME}}" for n in NAMED])
            raise ConfigError(f"{where}: unknown placeholder {token!r} in {template!r}; known: "
                              f"{known} (write {{{{ and }}}} for a literal brace)")
        found.append(Placeholder(name, arg))
    return found


def words(command: str | list[str]) -> list[str]:
    """A command as argv templates: a list as given, a string split as a shell would."""
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"command {command!r} does not split into words ({exc}); check "
                              f"its quotes") from None
    return [str(word) for word in command]


def referenced(templates: Iterable[str], kind: str, where: str) -> list[str]:
    """The NAMEs of `{kind:NAME}` placeholders in the templates, in order, once each."""
    names: list[str] = []
    for template in templates:
        for ph in placeholders(template, where):
            if ph.name == kind and ph.arg not in names:
                names.append(ph.arg)
    return names


def render(template: str, values: Mapping[str, Any], where: str = "template") -> str:
    """The template with its placeholders filled from `values` ('threads', 'binary:zstd', ...)."""
    def fill(match: re.Match) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        key = f"{match.group(1)}:{match.group(2)}" if match.group(2) else str(match.group(1))
        if key not in values:
            raise ConfigError(f"{where}: placeholder {token!r} in {template!r} has no value here; "
                              f"known: {', '.join(sorted(values))}")
        return str(values[key])
    placeholders(template, where)  # refuses a malformed one before anything is filled in
    return _FIELD.sub(fill, template)
