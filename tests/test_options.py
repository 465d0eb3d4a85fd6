"""The options read and checked as units: the parsers of options.py, and ``read_run_config`` on a
command line parsed by pytest's own parser, with no pytest session per case (a whole run's
usage errors, as a user sees them, are test_plugin.py's and each room's). Each refusal is the
one line a user reads after ``ERROR:``."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from _pytest.config.argparsing import Parser

from pytest_ambigqa import options
from pytest_ambigqa.errors import UsageError
from pytest_ambigqa.session.config import read_run_config


class CommandLine:
    """What ``read_run_config`` reads of a ``pytest.Config``: the plugin's options as pytest's
    parser takes them from ``args`` (no ini file: each ini value is the option's default)."""

    def __init__(self, *args: str, base: Path) -> None:
        parser = Parser(_ispytest=True)
        options.add_options(parser)
        self.option = parser.parse(list(args))
        self._ini = {name: default for name, (_, _, default) in parser._inidict.items()}
        self.invocation_params = pytest.Config.InvocationParams(args=args, plugins=None, dir=base)

    def getoption(self, name: str):
        return getattr(self.option, name)

    def getini(self, name: str):
        return self._ini[name]


def refusal(call, *args) -> str:
    with pytest.raises(UsageError) as caught:
        call(*args)
    return str(caught.value)


def run_config(tmp_path: Path, *args: str):
    return read_run_config(cast(pytest.Config, CommandLine(*args, base=tmp_path)))


@pytest.mark.parametrize(
    "text, kwargs, expected",
    [
        ("3", {"kind": int, "low": 1}, 3),
        ("0.5", {"low": 0, "high": 1}, 0.5),
        ("1e3", {}, 1000.0),
    ],
)
def test_number_takes_what_is_in_bounds(text, kwargs, expected):
    assert options.number("--x", text, **kwargs) == expected


@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("three", {"kind": int}, "--x: 'three' is not an integer"),
        ("1.5", {"kind": int}, "--x: '1.5' is not an integer"),
        ("abc", {}, "--x: 'abc' is not a number"),
        ("nan", {}, "--x: 'nan' is not a finite number"),
        ("inf", {"low": 0}, "--x: 'inf' is not a finite number"),
        ("0", {"kind": int, "low": 1, "high": 10**9}, "--x: 0 must be between 1 and 1e+09"),
        ("-1", {"low": 0}, "--x: -1 must be at least 0"),
    ],
)
def test_number_refuses_in_one_line(text, kwargs, message):
    assert refusal(lambda: options.number("--x", text, **kwargs)) == message


def test_pairs_price_and_prices():
    assert options.pairs("--x", " a = 1 ,, b=2 ") == [("a", "1"), ("b", "2")]
    assert refusal(options.pairs, "--x", "a=1,b") == "--x: expected KEY=VALUE, got 'b'"
    assert refusal(options.pairs, "--x", "=1") == "--x: expected KEY=VALUE, got '=1'"
    assert options.price("--p", "") is None
    assert options.price("--p", "2.5, 10") == (2.5, 10.0)
    assert refusal(options.price, "--p", "1") == "--p: expected IN,OUT ($ per million tokens), got '1'"
    assert refusal(options.price, "--p", "1,-2") == "--p: -2 must be between 0 and 1e+06"
    assert options.prices("--p", "1,2", 3) == ((1.0, 2.0),) * 3
    assert options.prices("--p", "1,2;3,4", 2) == ((1.0, 2.0), (3.0, 4.0))
    assert refusal(options.prices, "--p", "1,2;3,4", 3) == (
        "--p: 2 prices for 3 judges; give one IN,OUT for all, or one per judge"
    )


def test_sample_shard_and_workers():
    assert options.sample(None) is None
    assert options.sample("25") == 25
    assert options.sample("0.1") == 0.1
    assert refusal(options.sample, "1.5") == (
        "--ambig-sample: 1.5 is neither a count of items nor a fraction between 0 and 1"
    )
    assert refusal(options.sample, "0") == "--ambig-sample: 0 must be between 1 and 1e+09"
    assert options.shard("2/3") == (2, 3)
    for bad in ("3/2", "0/2", "1", "a/b"):
        assert refusal(options.shard, bad) == f"--ambig-shard: expected I/N with 1 <= I <= N, got '{bad}'"
    assert options.workers("--w", " Auto ") is None
    assert options.workers("--w", "4") == 4
    assert refusal(options.workers, "--w", "2000") == "--w: 2000 must be between 0 and 1024"


def test_the_defaults_are_what_an_empty_command_line_reads(tmp_path):
    """Every option's default reaches the run as its help states it."""
    cfg = run_config(tmp_path, "--ambig-suite=march")
    assert cfg is not None
    assert (cfg.suites, cfg.seed, cfg.repeats, cfg.timeout) == (("march",), 0, 1, 300.0)
    assert cfg.loader == {"split": "dev", "march_fields": {}}
    assert (cfg.protocol, cfg.profile, cfg.device, cfg.concurrency) == ("single-shot", "alce", "auto", 1)
    assert (cfg.limit, cfg.sample, cfg.shard, cfg.report_dir) == (None, None, None, None)
    assert cfg.executor.name == "local" and cfg.executor.to_dict() == {}
    assert cfg.settings == {"march": "open-retrieval", "condambigqa": "main"}
    assert cfg.max_text == int(options.default("--ambig-max-text"))


def test_values_are_read_from_either_spelling_and_relative_to_the_invocation(tmp_path):
    cfg = run_config(
        tmp_path,
        "--ambig-suite", "MARCH,asqa,march",
        "--ambig-limit", "3",
        "--ambig-timeout=",
        "--ambig-report=out",
        "--ambig-data=asqa=a.json,march=m.json",
        "--ambig-metrics=str_em,rouge_lsum",
        "--ambig-setting=march=oracle-evidence",
        "--ambig-shard=1/2",
        "--ambig-gate=LOWER-CI",
    )  # fmt: skip
    assert cfg is not None
    assert cfg.suites == ("march", "asqa") and cfg.limit == 3 and cfg.timeout is None
    assert cfg.report_dir == tmp_path / "out"
    assert cfg.data == {"asqa": tmp_path / "a.json", "march": tmp_path / "m.json"}
    assert cfg.metrics == ("str_em", "rouge_lsum") and cfg.shard == (1, 2)
    assert cfg.settings["march"] == "oracle-evidence" and cfg.gates.gate == "lower-ci"


def test_a_judge_panel_takes_one_url_and_price_each(tmp_path):
    cfg = run_config(
        tmp_path,
        "--ambig-suite=march",
        "--ambig-judge=a, b",
        "--ambig-judge-base-url=http://x/v1,http://y/v1",
        "--ambig-judge-price=1,2;3,4",
        "--ambig-retriever=Dense",
        "--ambig-top-k=5",
    )
    assert cfg is not None
    assert [(s.model, s.base_url) for s in cfg.models.judge_settings(0)] == [
        ("a", "http://x/v1"),
        ("b", "http://y/v1"),
    ]
    assert cfg.models.judge_prices == ((1.0, 2.0), (3.0, 4.0))
    assert (cfg.retrieval.retriever, cfg.retrieval.top_k) == ("dense", 5)


def test_options_without_a_suite_say_so_and_an_idle_run_reads_nothing(tmp_path):
    assert run_config(tmp_path) is None
    assert refusal(run_config, tmp_path, "--ambig-system=oracle", "--ambig-limit=3") == (
        "--ambig-limit, --ambig-system: choose the benchmark with --ambig-suite (march, condambigqa, asqa); "
        "without it the plugin runs nothing"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ambig-suite=marsh"], "--ambig-suite: unknown suite 'marsh' (valid: march, condambigqa, asqa)"),
        (["--ambig-limit=0"], "--ambig-limit: 0 must be between 1 and 1e+09"),
        (["--ambig-timeout=1e20"], "--ambig-timeout: 1e20 must be between 0 and 604800"),
        (["--ambig-concurrency=100000"], "--ambig-concurrency: 100000 must be between 1 and 1024"),
        (["--ambig-seed=-1"], "--ambig-seed: -1 must be between 0 and 4.29497e+09"),
        (["--ambig-repeats=0"], "--ambig-repeats: 0 must be between 1 and 1000"),
        (["--ambig-max-text=10"], "--ambig-max-text: 10 must be between 200 and 2.14748e+09"),
        (["--ambig-rate=0"], "--ambig-rate: 0 must be between 0.001 and 1e+06"),
        (["--ambig-gate=median"], "--ambig-gate: 'median' is not one of mean, lower-ci"),
        (["--ambig-device=tpu"], "--ambig-device: 'tpu' is not auto, cpu, cuda or cuda:N"),
        (
            ["--ambig-suite=march,asqa", "--ambig-data=x.json"],
            "--ambig-data: with several suites, name each file as SUITE=PATH (suites: march, asqa)",
        ),
        (
            ["--ambig-data=asqa=x.json"],
            "--ambig-data: suite 'asqa' is not selected by --ambig-suite (march)",
        ),
        (
            ["--ambig-march-fields=answers=a"],
            "--ambig-march-fields: unknown field 'answers' (valid: *",
        ),
        (
            ["--ambig-metrics=str_em,rouge"],
            "--ambig-metrics: unknown metric 'rouge' for march (valid: *",
        ),
        (
            ["--ambig-suite=march,asqa", "--ambig-metrics=rouge_lsum"],
            "--ambig-metrics: none of rouge_lsum is a metric of march (its metrics: str_em, *",
        ),
        (
            ["--ambig-suite=asqa", "--ambig-metrics=str_em", "--ambig-fail-under=rouge_lsum=30"],
            "--ambig-fail-under: rouge_lsum is not computed in this run (--ambig-metrics)",
        ),
        (["--ambig-fail-under=rouge=3"], "--ambig-fail-under: unknown metric 'rouge' for march (valid: *"),
        (
            ["--ambig-fail-under=str_em=0.3"],
            "--ambig-fail-under: str_em=0.3 is on the printed 0-100 scale (a percentage); did you mean str_em=30?",
        ),
        (
            ["--ambig-suite=asqa", "--ambig-fail-under=dr=120"],
            "--ambig-fail-under: dr=120 is outside DR's printed scale [0, 100]: no run could pass it",
        ),
        (["--ambig-item-min=str_em=50"], "--ambig-item-min: str_em=50 is outside the item scale [0, 1]*"),
        (
            ["--ambig-reader=llm"],
            "--ambig-reader=llm: the LLM reader is the judge model; set --ambig-judge",
        ),
        (["--ambig-judge=m", "--ambig-judge-price=1"], "--ambig-judge-price: expected IN,OUT*"),
        (["--ambig-judge=a,,b"], "--ambig-judge=a,,b: an empty model name in the list"),
        (["--ambig-judge=a,a"], "--ambig-judge: a named twice on the same server"),
        (
            ["--ambig-judge=a,b", "--ambig-judge-base-url=http://x/v1,http://y/v1,http://z/v1"],
            "--ambig-judge-base-url: 3 URLs for 2 judges; give one URL for every judge, or one per judge "
            "in the order of --ambig-judge",
        ),
        (["--ambig-judge-panel=mode"], "--ambig-judge-panel: 'mode' is not one of mean, median"),
        (["--ambig-judge-disagreement=2"], "--ambig-judge-disagreement: 2 must be between 0 and 1"),
        (["--ambig-llm-temperature=3"], "--ambig-llm-temperature: 3 must be between 0 and 2"),
        (["--ambig-retriever=tfidf"], "--ambig-retriever: 'tfidf' is not one of bm25, dense, hybrid, none"),
        (["--ambig-top-k=0"], "--ambig-top-k: 0 must be between 1 and 10000"),
        (
            ["--ambig-condambigqa-setting=closed"],
            "--ambig-condambigqa-setting: 'closed' is not a CondAmbigQA setting (valid: main, *",
        ),
        (
            ["--ambig-setting=asqa=x"],
            "--ambig-setting: suite 'asqa' has no settings (suites with settings: march, condambigqa)",
        ),
        (
            ["--ambig-march-setting=oracle-evidence", "--ambig-setting=march=open-retrieval"],
            "--ambig-march-setting=oracle-evidence and --ambig-setting=march=open-retrieval disagree",
        ),
        (
            ["--ambig-system=llm:direct"],
            "--ambig-system=llm:direct: name the model with --ambig-llm-model (and its server with "
            "--ambig-llm-base-url)",
        ),
        (["--ambig-sample=5", "--ambig-limit=3"], "--ambig-sample: not with --ambig-limit (*"),
        (
            ["--ambig-repeats=2", "--ambig-protocol=interactive"],
            "--ambig-repeats: only with the single-shot protocol, not --ambig-protocol=interactive",
        ),
        (
            ["--ambig-fail-under=str_hit^k=50"],
            "--ambig-fail-under: pass^k (METRIC^k) needs repeated trials, --ambig-repeats=K with K > 1",
        ),
        (["--ambig-shard-count=3"], "--ambig-shard-count: only with --ambig-shard=auto"),
        (
            ["--ambig-human-labels-system=x"],
            "--ambig-human-labels-system: only with --ambig-human-labels",
        ),
        (
            ["--ambig-human-labels=l.jsonl"],
            "--ambig-human-labels: the labels are compared with the judge's scores; set --ambig-judge",
        ),
        (["--ambig-protocol=chat"], "--ambig-protocol: 'chat' is not one of single-shot, interactive"),
        (["--ambig-costs=0:0.1"], "--ambig-costs: only with --ambig-protocol=interactive"),
        (
            ["--ambig-protocol=interactive", "--ambig-costs=0"],
            "--ambig-costs: expected ALPHA:BETA, got '0'",
        ),
        (
            ["--ambig-protocol=interactive", "--ambig-costs=0:0.1,0:0.1000001"],
            "--ambig-costs: 0:0.1000001 is given twice (costs count to 6 decimal places)",
        ),
        (
            ["--ambig-protocol=interactive", "--ambig-user=llm"],
            "--ambig-user=llm: the simulated user is the judge model; set --ambig-judge",
        ),
        (["--ambig-ray-actors=3"], "--ambig-ray-actors: only with --ambig-executor=ray or ray://HOST:PORT"),
        (["--ambig-executor=spark"], "--ambig-executor: 'spark' is not local, ray or ray://HOST:PORT"),
        (
            ["--ambig-executor=ray://user:pw-of-test-options@head:10001"],
            "--ambig-executor=ray://head:10001: Ray Client takes ray://HOST:PORT, no user, password or query",
        ),
        (
            ["--ambig-executor=ray://head"],
            "--ambig-executor=ray://head: name the cluster, ray://HOST:PORT (its Ray Client port)",
        ),
        (["--ambig-sequential", "--ambig-shard=1/2"], "--ambig-sequential: *"),
    ],
)
def test_a_bad_value_is_one_line_naming_its_option(tmp_path, args, message):
    """The checks test_plugin.py's whole runs show, each read here without a run."""
    if not any(a.startswith("--ambig-suite") for a in args):
        args = ["--ambig-suite=march", *args]
    got = refusal(run_config, tmp_path, *args)
    # A password, once read, is scrubbed from every output of the process: one no other test writes.
    assert "\n" not in got and "pw-of-test-options" not in got
    assert got == message if "*" not in message else got.startswith(message.split("*")[0]), got
