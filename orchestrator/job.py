"""One `tidemark run` job (side effects): plan → build → machine → run loop → store."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rich.console import Console

from . import machine
from .cgroup import remove_cgroup
from .engine_versions import resolve_engine_version
from .errors import UserError
from .jobsetup import (build_engine_with_progress, build_harness_if_needed, check_machine,
                       check_machine_controls, check_pin_cpus, create_run_cgroup, machine_shield,
                       new_run_id, pin_orchestrator, remove_run_data, run_context, run_record)
from .plan import make_plan
from .progress import RunProgress, summary_table
from .record import STATUS_OK, Invocation
from .runners.interference import rejected_attempt
from .runners.loop import run_steps
from .schema import TidemarkConf
from .store import Store


def run_job(conf: TidemarkConf, overrides: list[str], config: dict[str, Any],
            console: Console) -> tuple[str, list[Invocation]]:
    """Run one job; every invocation is in the store when this returns or raises."""
    conf = dataclasses.replace(conf, engine=resolve_engine_version(conf.engine))
    plan = make_plan(conf)
    facts = machine.capture_facts(Path(conf.data_dir).expanduser())
    notes = check_machine(conf, facts)
    pin = check_pin_cpus(conf.machine.pin_cpus)
    check_machine_controls(conf, pin)
    pin_orchestrator(conf.machine.orchestrator_cpus)
    build = build_engine_with_progress(conf, console)
    harness = build_harness_if_needed(conf, plan, build, console)
    run_id = new_run_id()
    with machine_shield(conf, pin, console) as shielded:
        group = create_run_cgroup(conf, run_id, pin, shielded)
        store = Store(Path(conf.db))
        try:
            store.record_machine(facts)
            store.record_build(build)
            record = run_record(run_id, conf, plan, build, facts, overrides, config, notes, shielded)
            store.start_run(record)
            ctx = run_context(conf, run_id, plan, build, facts["fingerprint"], pin, group, harness,
                              shielded)
            status = "interrupted"
            try:
                with RunProgress(console, len(plan.steps)) as progress:
                    invocations = run_steps([(ctx, step) for step in plan.steps], store, progress)
                failed = sum(1 for i in invocations if i.status != STATUS_OK and not rejected_attempt(i))
                status = "ok" if failed == 0 else "partial"
            except KeyboardInterrupt:
                raise UserError(f"interrupted; the invocations finished so far are stored in "
                                f"{conf.db} under run {run_id}") from None
            finally:
                store.finish_run(run_id, status, {**record["machine_state"],
                                                  "after": machine.capture_state()})
                if not conf.keep_data:
                    remove_run_data(ctx)
        finally:
            store.close()
            if group:
                remove_cgroup(group)
    console.print(summary_table(invocations))
    console.print(f"run {run_id}: {status}; {len(invocations)} invocations in {conf.db}")
    return run_id, invocations
