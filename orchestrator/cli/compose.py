"""Hydra's composition: the configs under conf/ composed onto the schemas (plan/schema.py),
every sweep value checked before anything runs, and Hydra's errors as one line. The CLI is the
only user of Hydra: here, and Hydra's app in run.py."""
from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING

from hydra.core.config_store import ConfigStore

from ..errors import ConfigError
from ..plan import schema

if TYPE_CHECKING:
    from omegaconf import DictConfig

    from ..plan.schema import TidemarkConf

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
GROUPS = ("machine", "engine", "build", "workload", "cache", "suite", "runner")


def override_key(override: str) -> str:
    """The key an override sets, without Hydra's +, ++ or ~ (add, force, delete)."""
    return override.split("=", 1)[0].lstrip("+~")


def is_hydra_option(override: str) -> bool:
    """An override of Hydra's own settings (hydra.job..., hydra/launcher=...), not of the config
    a run is made of. hydra.searchpath is not one: it adds a folder of the user's own config
    groups (an engine recipe and its workloads kept in the engine's repository), so every
    compose of the run's config needs it."""
    key = override_key(override)
    return key.startswith(("hydra.", "hydra/")) and key != "hydra.searchpath"


def parse_with_overrides(parser: argparse.ArgumentParser,
                         argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """`OPTIONS -- OVERRIDES` (tidemark ab, bisect, backfill): the options parsed, and the Hydra
    overrides after `--`, refused when one is an option."""
    shared: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, shared = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    if any(o.startswith("-") for o in shared):
        raise ConfigError(f"after '--' give Hydra overrides only, not {shared[0]!r}")
    return args, shared


def register_schemas() -> None:
    """Register the schemas with Hydra's ConfigStore; YAML files name them in their defaults."""
    cs = ConfigStore.instance()
    cs.store(name="tidemark_schema", node=schema.TidemarkConf)
    cs.store(group="machine", name="machine_schema", node=schema.MachineConf)
    cs.store(group="engine", name="engine_schema", node=schema.EngineConf)
    cs.store(group="build", name="build_schema", node=schema.BuildConf)
    cs.store(group="workload", name="workload_schema", node=schema.WorkloadConf)
    cs.store(group="cache", name="cache_schema", node=schema.CacheConf)
    cs.store(group="suite", name="suite_schema", node=schema.SuiteConf)
    cs.store(group="runner", name="runner_schema", node=schema.RunnerConf)


def _group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def explain_hydra_error(exc: Exception) -> str:
    """Hydra's multi-line composition errors → one line naming the bad value and the fix."""
    text = str(exc)
    missing = re.search(r"Could not find '(\w+)/([^']+)'", text)
    if missing and missing.group(1) in GROUPS:
        group, option = missing.groups()
        return f"unknown {group} {option!r}; valid {group}s: {', '.join(_group_options(group))}"
    override = re.search(r"Could not override '([^']+)'", text)
    if override:
        return f"unknown config key {override.group(1)!r}; {_valid_keys_hint(override.group(1))}"
    cause = exc.__cause__ or exc.__context__
    detail = str(cause).splitlines()[0] if cause else text.splitlines()[-1]
    merging = re.search(r"Error merging override (\S+)", text)
    if merging:
        return f"bad override {merging.group(1)!r}: {detail}"
    return " ".join(line.strip() for line in text.splitlines() if line.strip())[:400]


def _valid_keys_hint(key: str) -> str:
    node: type = schema.TidemarkConf
    parts = key.split(".")
    for part in parts[:-1]:
        fields = {f.name: f.type for f in dataclasses.fields(node)}
        type_name = str(fields.get(part, "")).replace("Optional[", "").rstrip("]")
        node = getattr(schema, type_name, None)
        if node is None or not dataclasses.is_dataclass(node):
            return "run 'tidemark run --cfg job' to see the keys"
    where = ".".join(parts[:-1]) or "top level"
    names = ", ".join(f.name for f in dataclasses.fields(node))
    return f"valid keys at {where}: {names}"


def _first_values(overrides: list[str]) -> list[list[str]]:
    """Each sweep value checked once, the other overrides at their first value."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser = OverridesParser.create()
    for override in overrides:  # one at a time, so a syntax error names its override
        try:
            parser.parse_overrides([override])
        except OverrideParseException as exc:
            key = override.split("=", 1)[0]
            raise ConfigError(f"bad override {override!r}: {str(exc).splitlines()[0]}; write "
                              f"KEY=VALUE, a list as {key}=[1,2] (quoted in the shell), a sweep "
                              f"as -m {key}=1,2") from None
    parsed = parser.parse_overrides(overrides)
    firsts = [f"{o.get_key_element()}={next(o.sweep_string_iterator())}" if o.is_sweep_override()
              else o.input_line for o in parsed]
    variants = [firsts]
    for index, o in enumerate(parsed):
        if o.is_sweep_override():
            for value in list(o.sweep_string_iterator())[1:]:
                variant = list(firsts)
                variant[index] = f"{o.get_key_element()}={value}"
                variants.append(variant)
    return variants


def validate_overrides(overrides: list[str]) -> DictConfig | None:
    """Compose the config for every sweep value before Hydra runs anything. Without a sweep,
    and with no Hydra option (is_hydra_option) among the overrides, that is the run's own
    config: returned, so the caller composes once (a compose is ~0.25 s of every command that
    runs one); None otherwise."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    register_schemas()  # what the YAML files' defaults name (again: it only replaces them)
    user = [o for o in overrides if not o.startswith("-") and not is_hydra_option(o)]
    composed = None
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            variants = _first_values(user)
            for variant in variants:
                try:
                    cfg = compose("tidemark", overrides=variant)
                    OmegaConf.to_object(cfg)
                except AssertionError:  # OmegaConf's, for a key under a value that is null
                    raise ConfigError(_key_under_nothing(variant)) from None
            if variants == [overrides]:
                composed = cfg
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(explain_hydra_error(exc)) from None
    finally:
        GlobalHydra.instance().clear()
    return composed


def _key_under_nothing(overrides: list[str]) -> str:
    """An override set a key inside a group no default selects (workload.params.num=5 with
    no workload=...): name it and the choice to make first."""
    keys = [o.split("=", 1)[0].lstrip("+~") for o in overrides if "=" in o]
    nested = [k for k in keys if "." in k and k.split(".", 1)[0] not in keys]
    key = nested[0] if nested else (keys[0] if keys else "?")
    group = key.split(".", 1)[0]
    choices = (f"; valid {group}s: {', '.join(_group_options(group))}" if group in GROUPS
               else "")
    return f"cannot set {key!r}: no {group} is chosen to set it in; choose one first " \
           f"({group}=NAME {key}=...){choices}"


def compose_conf(overrides: list[str]) -> tuple[TidemarkConf, dict]:
    """One side of `tidemark ab`: the composed config as a dataclass and as a resolved dict."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    cfg = validate_overrides(overrides)
    try:
        if cfg is None:  # a sweep or a Hydra option among them: composed as given
            with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
                cfg = compose("tidemark", overrides=overrides)
        return OmegaConf.to_object(cfg), OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(explain_hydra_error(exc)) from None
    finally:
        GlobalHydra.instance().clear()
