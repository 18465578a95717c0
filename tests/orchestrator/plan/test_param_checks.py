"""Input ranges refused when a run is planned, each in one line naming the value (real configs)."""
import pytest

from orchestrator.plan.engine_versions import resolve_engine_version
from orchestrator.errors import ConfigError
from orchestrator.gate import GateConf, load_gate_conf
from orchestrator.plan.param_checks import check_thresholds
from orchestrator.plan.runplan import make_plan


@pytest.mark.parametrize("overrides,message", [
    (["workload.params.num=-5"], "workload.params.num=-5"),
    (["workload.params.num=0"], "workload.params.num=0"),
    (["workload.params.value_size=-1"], "workload.params.value_size=-1"),
    (["workload.params.reads=0"], "workload.params.reads=0"),
    (["timeout_s=0"], "timeout_s=0"),
    (["timeout_s=-1"], "timeout_s=-1"),
    (["threads=0"], "threads=0"),
    (["repetitions=0"], "repetitions=0"),
    (["warmups=-1"], "warmups=-1"),
    (["engine=leveldb", "workload.params.compression=zstd"], "leveldb cannot use compression='zstd'"),
    (["workload.params.compression=brotli"], "rocksdb cannot use compression='brotli'"),
])
def test_bad_values_are_refused_before_anything_runs(compose_conf, overrides, message):
    conf = compose_conf(["workload=readrandom", *overrides])
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        make_plan(conf)


def test_every_engine_knows_its_versions(compose_conf):
    with pytest.raises(ConfigError, match="unknown engine.version='0.0.1' for leveldb; known versions: 1.23"):
        resolve_engine_version(compose_conf(["engine=leveldb", "engine.version=0.0.1"]).engine)
    assert resolve_engine_version(compose_conf(["engine=leveldb"]).engine).version == "1.23"


@pytest.mark.parametrize("alpha,min_effect,message", [
    (2.0, 0.02, "alpha=2"), (-1.0, 0.02, "alpha=-1"), (0.0, 0.02, "alpha=0"),
    (0.05, -1.0, "min_effect=-1")])
def test_thresholds_in_range(tmp_path, alpha, min_effect, message):
    with pytest.raises(ConfigError, match=message):
        check_thresholds(alpha, min_effect, 2.0, 0.03)
    conf = tmp_path / "gate.yaml"
    conf.write_text(f"alpha: {alpha}\nmin_effect: {min_effect}\n")
    with pytest.raises(ConfigError, match=message):
        load_gate_conf(conf)
    check_thresholds(GateConf().alpha, GateConf().min_effect, 2.0, 0.03)


@pytest.mark.parametrize("quantile", ["1.5", "-0.1", ".nan", "nan", "true"])
def test_tail_quantile_in_range(tmp_path, quantile):
    conf = tmp_path / "gate.yaml"
    conf.write_text(f"tail_quantile: {quantile}\n")
    with pytest.raises(ConfigError, match=r"^tail_quantile=.*; use a quantile from 0 to 1"):
        load_gate_conf(conf)
    conf.write_text("tail_quantile: 0\n")  # the tail left out
    assert load_gate_conf(conf).thresholds.tail_quantile == 0
    assert GateConf().thresholds.tail_quantile == 0.9


def test_confirm_scope_is_one_of_the_scopes(tmp_path):
    conf = tmp_path / "gate.yaml"
    conf.write_text("confirm_scope: everything\n")
    with pytest.raises(ConfigError, match=r"^confirm_scope 'everything' in .*; use one of: "
                                          r"flagged, unresolved$"):
        load_gate_conf(conf)
    conf.write_text("confirm_scope: flagged\n")
    assert load_gate_conf(conf).confirm_scope == "flagged"
    assert GateConf().confirm_scope == "unresolved"
