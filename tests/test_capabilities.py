"""What a run asks of its protocol and its suites is what they declare (issue 42 §4): a
protocol's capabilities, never its name; a suite's loader options, read for it by the run."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ambigqa.card.gates import _sequential
from pytest_ambigqa.errors import UsageError
from pytest_ambigqa.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from pytest_ambigqa.protocols.base import Protocol
from pytest_ambigqa.session.config import _check_repeated, _loader
from pytest_ambigqa.suites import SUITES, LoaderOption, LoadOptions, loader_options
from pytest_ambigqa.suites.base import SPLIT


class Given:
    """A pytest config with these options given (by their dest) and no ini."""

    def __init__(self, **given: Any) -> None:
        self.given = given

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.given.get(name, default)

    def getini(self, name: str) -> str:
        return ""


def test_the_protocols_declare_their_capabilities():
    capabilities = {name: (p.suite_values_are_item_means, p.repeats_trials) for name, p in PROTOCOLS.items()}
    assert capabilities == {"single-shot": (True, True), "interactive": (False, False)}
    assert (Protocol.suite_values_are_item_means, Protocol.repeats_trials) == (True, True)
    assert DEFAULT_PROTOCOL == next(iter(PROTOCOLS))


def test_the_refusals_ask_the_capability_not_the_name(monkeypatch):
    """A protocol that declares otherwise is refused, or let through, whatever its name; the
    messages are the ones users have always read."""

    class Repeating(PROTOCOLS["interactive"]):
        repeats_trials = True

    class Unrepeatable(PROTOCOLS["single-shot"]):
        repeats_trials = False
        suite_values_are_item_means = False

    monkeypatch.setitem(PROTOCOLS, "interactive", Repeating)
    monkeypatch.setitem(PROTOCOLS, "single-shot", Unrepeatable)
    config: Any = Given()
    _check_repeated(config, "interactive", None, None, 3)  # its trials may repeat now
    with pytest.raises(UsageError, match=r"--ambig-repeats: only with the single-shot protocol, not --ambig-protocol=single-shot"):  # fmt: skip
        _check_repeated(config, "single-shot", None, None, 3)
    with pytest.raises(UsageError, match=r"--ambig-sample: only with the single-shot protocol"):
        _check_repeated(config, "single-shot", None, 0.5, 1)
    with pytest.raises(UsageError, match=r"only the single-shot protocol's suite values are means"):
        _sequential(Given(ambig_sequential="0.05"), [object()], [])


def test_a_suite_declares_its_loader_options_and_the_run_reads_them(monkeypatch):
    """Every registered suite's loader options are read, by key, as given, else from the saved
    run, else their default; the loader gets them by its declaration."""
    assert SPLIT in SUITES["asqa"].loader_options and SPLIT in SUITES["march"].loader_options
    assert LoadOptions().split == "dev" and LoadOptions({"split": "train"}).split == "train"
    assert _loader(Given(), {}) == {"split": "dev", "march_fields": {}}
    given = Given(ambig_split="train", ambig_march_fields="id=uid")
    assert _loader(given, {}) == {"split": "train", "march_fields": {"id": "uid"}}
    assert _loader(Given(), {"split": "test", "march_fields": {"id": "key"}}) == {
        "split": "test",
        "march_fields": {"id": "key"},
    }
    with pytest.raises(UsageError, match="--ambig-march-fields: unknown field 'answers'"):
        _loader(Given(ambig_march_fields="answers=a"), {})

    shout = LoaderOption("--ambig-shout", "shout", lambda text: (text or "no").upper(), "the shout")

    class Loud(type(SUITES["asqa"])):
        name = "loud"
        loader_options = (*SUITES["asqa"].loader_options, shout)

    monkeypatch.setitem(SUITES, "loud", Loud())  # a plugin's suite, registered
    assert "shout" in loader_options()
    assert _loader(Given(ambig_shout="yes"), {})["shout"] == "YES"  # its own option, not options.py's
    assert _loader(Given(), {})["shout"] == "NO"
    assert LoadOptions({"shout": "YES"}).get(shout) == "YES" and LoadOptions().get(shout) == "NO"


def test_a_suite_says_what_its_setting_gives_from_the_gold():
    """The run's description of a system lists the gold inputs it reads: what the suites'
    settings fill from the gold item, as each suite says (no module outside suites/ names one)."""
    from pytest_ambigqa.metrics.scoring import Scorers

    gold = Scorers(settings={"condambigqa": "gold-conditions"})
    assert SUITES["condambigqa"].gold_inputs(gold) == ("conditions",)
    assert SUITES["condambigqa"].gold_inputs(Scorers()) == ()
    assert SUITES["march"].gold_inputs(gold) == () and SUITES["asqa"].gold_inputs(gold) == ()


def test_stored_answers_keep_the_keys_their_settings_had():
    """The fingerprint of stored answers' inputs names each suite's setting by the suite's own
    key: CondAmbigQA's the one its answers were stored under before settings were any suite's."""
    keys = {name: suite.stored_setting_key for name, suite in SUITES.items() if suite.settings}
    assert keys == {"march": "march_setting", "condambigqa": "setting"}
