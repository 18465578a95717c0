"""`tidemark machine check|tune|reset` (thin wiring over system_check, shield and the docker
leftovers); the profile is composed by cli/compose.py."""
from __future__ import annotations

import argparse

from rich.console import Console


def machine_command(argv: list[str], console: Console) -> None:
    from rich.table import Table

    from ..machine import shield, system_check
    from .compose import compose_conf

    parser = argparse.ArgumentParser(prog="tidemark machine", description=(
        "check: is this machine ready to benchmark (ok / not ok / not available here, with the "
        "command that fixes it); tune: write the fixes that are plain kernel settings (saved "
        "for reset); reset: put back what tune changed and remove a shield and containers left "
        "by a killed run. Overrides pick the profile: tidemark machine check machine=ci-2core"))
    parser.add_argument("action", choices=("check", "tune", "reset"))
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. machine=ci-2core")
    args = parser.parse_args(argv)
    conf, _ = compose_conf(args.overrides)
    bench = tuple(conf.machine.pin_cpus)
    if args.action == "tune":
        for line in system_check.tune(bench) or ["nothing to tune"]:
            console.print(line, markup=False)
    elif args.action == "reset":
        from ..machine.docker_client import reset_containers

        removed = shield.remove_leftover_shields()
        lines = system_check.reset() + [f"removed leftover shield {r}" for r in removed] + \
            reset_containers()
        for line in lines or ["nothing to reset"]:
            console.print(line, markup=False)
    table = Table("Item", "Status", "Value", "Fix")
    for item in system_check.check(bench):
        table.add_row(item.name, item.status, item.value, item.fix)
    console.print(f"machine profile {conf.machine.name!r}, benchmark CPUs "
                  f"{list(bench) or 'all (unpinned)'}", markup=False)
    console.print(table)
