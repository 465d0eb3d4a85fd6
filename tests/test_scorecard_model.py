"""The scorecard's one format (``card/model.py``): an older file read through its migration,
the published JSON Schema true of every file written, and no other module writing or naming
the format's fields on its own."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest
from test_unchanged import _timeless  # as the goldens are kept: without timings and versions

from pytest_ambigqa.card import migrations, model
from pytest_ambigqa.card.saved import read_scorecard
from pytest_ambigqa.card.scorecard import Scorecard
from pytest_ambigqa.errors import ScorecardError

TESTS = Path(__file__).parent
PACKAGE = TESTS.parent / "pytest_ambigqa"
GOLDEN = sorted((TESTS / "golden").glob("*/scorecard.json"))
# tests/golden/shard1/scorecard.json as the last version-1 writer wrote it
VERSION_1 = TESTS / "v1" / "scorecard.json"


def _load(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))


def test_a_version_1_scorecard_reads_through_its_migration():
    """The same run written as version 1 and as version 2 differs in its version alone, and the
    version-1 file read back writes the version-2 file byte for byte."""
    old, new = _load(VERSION_1), _load(TESTS / "golden" / "shard1" / "scorecard.json")
    assert old["schema_version"] == 1 and new["schema_version"] == model.SCHEMA_VERSION == 2
    read = read_scorecard(VERSION_1)
    assert read == new
    again = Scorecard.from_json({**old, "versions": {}}).to_json()
    assert _timeless(json.loads(json.dumps(again))) == new


def test_a_version_1_card_from_before_its_data_was_judged_is_judged_by_the_migration():
    """``protocol.unlike`` (why the data is not the papers') is absent from the oldest
    version-1 cards; version 2 always has it, so the migration supplies it."""
    old = _load(VERSION_1)
    for suite in old["suites"]:
        del suite["protocol"]["unlike"]
    bare = copy.deepcopy(old)
    del bare["suites"][0]["protocol"]  # older still: no protocol recorded, open retrieval
    migrated = migrations.migrate(old)
    assert migrated["schema_version"] == 2 and old["schema_version"] == 1  # the input is left as it was
    assert [s["protocol"]["unlike"] for s in migrated["suites"]] == [
        "the bundled sample of 13 items written for this project, not the benchmark's"
    ] * len(old["suites"])
    protocol = migrations.migrate(bare)["suites"][0]["protocol"]
    assert protocol["name"] == "open-retrieval" and protocol["unlike"].startswith("the bundled sample")


def test_a_damaged_version_1_file_is_refused_after_its_migration_in_one_line(tmp_path):
    """Migrating repairs nothing: a version-1 file's bad score is refused as a version-2 file's
    would be, naming the item and the field."""
    old = _load(VERSION_1)
    old["items"][2]["scores"]["str_em"] = float("nan")
    path = tmp_path / "scorecard.json"
    path.write_text(json.dumps(old), encoding="utf-8")  # NaN, as Python's json writes it
    key = f"{old['items'][2]['suite']}-{old['items'][2]['item_id']}"
    with pytest.raises(ScorecardError) as raised:
        read_scorecard(path)
    assert str(raised.value) == (
        f"{path} is not a readable scorecard.json (item {key}, field scores.str_em: nan is not a finite number)"
    )


def test_every_version_below_this_one_has_its_migration():
    assert sorted(migrations.MIGRATIONS) == list(range(1, model.SCHEMA_VERSION))
    for old, step in migrations.MIGRATIONS.items():
        assert step({"schema_version": old, "suites": []})["schema_version"] == old + 1


@pytest.mark.parametrize(
    ("version", "why"), [(3, "written by a newer pytest-ambigqa"), (0, "not a version 1 to 2")]
)
def test_a_version_it_cannot_read_is_refused_in_one_line(tmp_path, version, why):
    path = tmp_path / "scorecard.json"
    path.write_text(json.dumps({**_load(VERSION_1), "schema_version": version}), encoding="utf-8")
    with pytest.raises(ScorecardError) as raised:
        read_scorecard(path)
    assert str(raised.value) == f"{path} is not a readable scorecard.json (schema_version {version}: {why})"


@pytest.mark.parametrize("path", GOLDEN, ids=[p.parent.name for p in GOLDEN])
def test_the_published_json_schema_holds_every_golden_scorecard(path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = model.json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    card = _load(path)
    assert list(validator.iter_errors(card)) == []
    # and it is a schema that says something: a renamed field, a wrong type, an old version
    suite = dict(card["suites"][0])
    suite["metric"] = suite.pop("metrics")
    renamed = {**card, "suites": [suite]}
    assert not validator.is_valid(renamed)
    assert not validator.is_valid({**card, "items": [{**card["items"][0], "status": "fine"}]})
    assert not validator.is_valid({**card, "schema_version": 1})


def test_the_written_fields_are_the_records_fields():
    """What :func:`model.write` writes at the top and in each suite is what the records
    declare (a suite's protocol section aside, keyed by the protocol's name), so the file and
    its schema cannot drift apart."""
    from pytest_ambigqa.protocols import PROTOCOLS

    schema = model.json_schema()
    sections = {p.name for p in PROTOCOLS.values() if p.has_section}
    for path in GOLDEN:
        card = _load(path)
        assert set(card) <= set(schema["properties"]), path
        for suite in card["suites"]:
            assert set(suite) - sections <= set(schema["$defs"]["Suite"]["properties"]), path


def test_only_the_model_module_names_the_format():
    """No module but ``card/model.py`` (and ``card/migrations.py``, which reads older
    versions) spells the version field or builds the scorecard's top-level dict: the format is
    written, read and checked from one place."""
    top = {"schema_version", "suites", "gates", "items", "timing"}
    owners = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        built = any(
            isinstance(n, ast.Dict) and top <= {k.value for k in n.keys if isinstance(k, ast.Constant)}
            for n in ast.walk(tree)
        )
        if "schema_version" in named or built:
            owners.append(path.relative_to(PACKAGE).as_posix())
    assert owners == ["card/migrations.py", "card/model.py"]


def test_writing_reads_no_file():
    """The papers' rows are compared when the card is built; writing it is pure."""
    source = ast.parse(Path(model.__file__).read_text("utf-8"))
    write = next(n for n in source.body if isinstance(n, ast.FunctionDef) and n.name == "write")
    suite = next(n for n in source.body if isinstance(n, ast.FunctionDef) and n.name == "_suite")
    called = {ast.unparse(c.func) for f in (write, suite) for c in ast.walk(f) if isinstance(c, ast.Call)}
    assert not {name for name in called if "published" in name or "open" in name or "read" in name}
