"""The Docker daemon as the container runner uses it (side effects: talks to dockerd).

One connection per job, refused at once in one line when no daemon answers (before anything
is built); the labels every Tidemark container carries, so that the containers of a killed run
(kill -9 leaves them running or exited) are found and removed by the next run and by
`tidemark machine reset`; and the ContainerSpec a run context holds.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, Interrupted, RunnerError
from ..liveness import is_gone, this_process

RUNNERS = ("host", "docker")
BASES = ("scratch",)
LABEL = "tidemark"  # every Tidemark container has it; the value is the run id
OWNER_LABEL = "tidemark.owner"  # JSON of liveness.this_process() of the run that started it
DEFAULT_HOST = "unix:///var/run/docker.sock"


@dataclass(frozen=True)
class ImageRef:
    """An image built for one binary: its tag (from the build key), id and base."""

    kind: str  # engine | harness
    tag: str
    image_id: str
    base: str
    size_bytes: int
    built_s: float | None = None  # None: the tag existed, nothing was built

    def record(self) -> dict[str, Any]:
        return {"tag": self.tag, "id": self.image_id, "base": self.base,
                "size_bytes": self.size_bytes, "built": self.built_s is not None}


@dataclass(frozen=True)
class ContainerSpec:
    """How a run's processes are containerised: the images by binary, the limits, and the
    daemon (the client object rides along for the step runner)."""

    images: dict[str, ImageRef]  # the recipe's binary name → its image
    memory_bytes: int | None
    grace_s: float
    daemon: dict[str, Any]  # version facts, recorded with the run
    client: Any = field(default=None, compare=False, repr=False)
    paths: dict[str, str] = field(default_factory=dict)  # a binary's path → its name

    def image_for(self, argv0: str) -> ImageRef:
        """The image of the binary a process starts; only the recipe's binaries have one."""
        name = self.paths.get(argv0)
        if name is None:
            raise ConfigError(f"runner=docker runs the engine recipe's binaries, and {argv0!r} is "
                              f"not one; start the command with {{binary:NAME}} or use runner=host")
        return self.images[name]

    def record(self) -> dict[str, Any]:
        """What the run record keeps (runs.machine_state.container)."""
        return {"runner": "docker", "daemon": self.daemon, "memory_bytes": self.memory_bytes,
                "images": {fmt: ref.record() for fmt, ref in self.images.items()}}


def check_runner_conf(name: str, base: str, memory_mb: int | None, shield: str,
                      cgroup_limits: dict[str, int] | None = None, grace_s: float = 20.0) -> None:
    """Refuse a runner setting that cannot run, before anything is built (pure).
    `cgroup_limits`: the machine profile's limits of the run's cgroup (machine.cgroup=true)."""
    if name not in RUNNERS:
        raise ConfigError(f"runner.name={name!r}; use runner=host or runner=docker")
    if name == "host":
        return
    if base not in BASES:
        raise ConfigError(f"runner.base={base!r} is not built here; use runner.base="
                          f"{' or '.join(BASES)} (docker/engine.Dockerfile)")
    if memory_mb is not None and memory_mb < 6:
        raise ConfigError(f"runner.memory_mb={memory_mb}; Docker needs at least 6 MB "
                          f"(null for no limit)")
    if grace_s < 0:
        raise ConfigError(f"runner.grace_s={grace_s:g}; give the seconds a container may take "
                          f"past timeout_s to start and stop (0 or more; default 20)")
    if shield != "none":
        raise ConfigError(f"machine.shield={shield} moves host tasks into cpusets, and a "
                          f"container's processes are the daemon's, not Tidemark's: use "
                          f"machine.shield=none with runner=docker (its cpuset pins the engine)")
    if cgroup_limits:
        key, value = next(iter(cgroup_limits.items()))
        raise ConfigError(f"machine.{key}={value} limits the run's cgroup, which a container "
                          f"never joins (it has its own): with runner=docker set "
                          f"machine.cgroup=false and the container's memory with runner.memory_mb")


def _reason(exc: BaseException) -> str:
    """The innermost cause of a docker-py connection error, in a few words."""
    seen: BaseException | None = exc
    while seen is not None:
        for arg in getattr(seen, "args", ()):
            if isinstance(arg, OSError) and arg.strerror:
                return arg.strerror
            if isinstance(arg, tuple):
                inner = next((a for a in arg if isinstance(a, OSError) and a.strerror), None)
                if inner is not None:
                    return inner.strerror
        if isinstance(seen, OSError) and seen.strerror:
            return seen.strerror
        seen = seen.__cause__ or seen.__context__
    return str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__


def daemon_address() -> str:
    return os.environ.get("DOCKER_HOST") or DEFAULT_HOST


def daemon_lost(client: Any, exc: BaseException, during: str) -> Interrupted | None:
    """When a docker-py call failed because the daemon stopped answering (it was stopped or
    restarted mid-run), the error that ends the run: every later step would fail alike, and
    the run, marked interrupted, can be resumed. None when the daemon still answers (the
    failure was this step's own)."""
    from requests.exceptions import ConnectionError as Disconnected

    # A ping alone is not enough: a daemon shutting down still answers on a kept-alive
    # connection after it stopped taking new ones; a refused connection says it all.
    if not isinstance(exc, Disconnected):
        try:
            client.ping()
            return None
        except Exception:  # noqa: BLE001 - whatever the connection raises, the daemon is gone
            pass
    return Interrupted(f"the Docker daemon at {daemon_address()} stopped answering "
                       f"({_reason(exc)}) during {during}; start it again ('make setup' "
                       f"starts dockerd)")


def connect_docker(timeout_s: float = 60) -> Any:
    """A docker-py client whose daemon answered a ping; RunnerError in one line otherwise."""
    import docker
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    where = daemon_address()
    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
    except (DockerException, RequestException, OSError) as exc:
        raise RunnerError(f"runner=docker: no Docker daemon answers at {where} ({_reason(exc)}); "
                          f"start one with 'make setup' (scripts/setup-system.sh starts dockerd), "
                          f"or use runner=host") from None
    return client


def daemon_facts(client: Any) -> dict[str, Any]:
    version = client.version()
    info = client.info()
    return {"version": version.get("Version"), "api": version.get("ApiVersion"),
            "cgroup_version": info.get("CgroupVersion"), "cgroup_driver": info.get("CgroupDriver"),
            "storage_driver": info.get("Driver")}


def container_labels(run_id: str) -> dict[str, str]:
    return {LABEL: run_id, OWNER_LABEL: json.dumps(this_process(), sort_keys=True)}


def remove_leftover_containers(client: Any) -> list[str]:
    """Remove Tidemark containers whose run's process is gone (a run killed outright); names."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        try:
            owner = json.loads(container.labels.get(OWNER_LABEL) or "{}")
        except ValueError:
            owner = {}
        if is_gone(owner):
            container.remove(force=True)
            removed.append(f"{container.name} (run {container.labels.get(LABEL)})")
    return removed


def reset_containers(timeout_s: float = 60) -> list[str]:
    """Leftover containers removed (`tidemark machine reset`, and every host run before it
    measures: a killed docker run's container runs on until its timeout); [] without a daemon."""
    try:
        client = connect_docker(timeout_s)
    except RunnerError:
        return []  # no daemon: no container of ours can be running either
    try:
        return [f"removed leftover container {name}" for name in remove_leftover_containers(client)]
    finally:
        client.close()
