"""docs/rulesets/guida.md's Test column: every ✓/◐ row names existing small-history tests; worked examples asserted."""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rulesets" / "guida.md"
TESTS = ROOT / "tests"
STATUS = ("✓", "◐", "M")
_ID = re.compile(r"^(test_[\w]+\.py)::(test_\w+)$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


@lru_cache(maxsize=None)
def rows() -> tuple[tuple[str, str, str, tuple[str, ...]], ...]:
    """(section, status, rule, test ids) of every row of the doc's tables with a Test column; a row of the action
    table ("Azioni e dadi", no status column) counts as ✓."""
    out = []
    section = ""
    header: list[str] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            section, header = line.lstrip("# ").strip(), None
            continue
        if not line.startswith("|"):
            header = None
            continue
        if line.startswith("|---"):
            continue
        cells = _cells(line)
        if header is None:
            header = cells
            continue
        if header[-1] != "Test":
            continue
        assert len(cells) == len(header), f"{section}: {line[:80]}"
        if cells[0] in STATUS:
            status, rule = cells[0], cells[1]
        else:
            status, rule = "✓", cells[0]
        cell = cells[-1]
        ids = () if cell in ("—", "") else tuple(x.strip().strip("`") for x in cell.split(","))
        out.append((section, status, rule, ids))
    return tuple(out)


@lru_cache(maxsize=None)
def module(name: str) -> ast.Module | None:
    path = TESTS / name
    if not path.is_file():
        return None
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def function(test_id: str) -> ast.FunctionDef | None:
    """The test function a `file.py::name` id names (read with ast: nothing is imported)."""
    m = _ID.match(test_id)
    assert m, f"not a test id: {test_id!r}"
    tree = module(m.group(1))
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == m.group(2):
            return node
    return None


def constant(file: str, name: str):
    """A module-level constant of a test file (literal_eval of its assignment)."""
    tree = module(file)
    assert tree is not None, file
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{file} has no constant {name}")


def asserted_numbers(fn: ast.FunctionDef) -> set[int | float]:
    """The numbers written in the asserts of a test (what it compares the engine's results with)."""
    out: set[int | float] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assert):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Constant) and type(sub.value) in (int, float):
                    out.add(sub.value)
                elif (isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.USub)
                      and isinstance(sub.operand, ast.Constant) and type(sub.operand.value) in (int, float)):
                    out.add(-sub.operand.value)
    return out


def names_used(fn: ast.FunctionDef) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}


def row(rule_start: str) -> tuple[str, str, str, tuple[str, ...]]:
    found = [r for r in rows() if r[2].startswith(rule_start)]
    assert len(found) == 1, (rule_start, [r[2] for r in found])
    return found[0]


# --- the column ----------------------------------------------------------------------------------------------

def test_the_doc_has_the_test_column_on_every_rule_table():
    text = DOC.read_text(encoding="utf-8")
    tables = [line for line in text.splitlines() if line.startswith("| | Regola (IT)") or line.startswith("| Azione |")]
    assert tables and all(_cells(line)[-1] == "Test" for line in tables)
    kinds = {r[1] for r in rows()}
    assert kinds == {"✓", "◐", "M"}
    assert len(rows()) >= 90  # every rule of the text and every action of the table


@pytest.mark.parametrize("section,status,rule,ids", [r for r in rows() if r[1] != "M"],
                         ids=lambda x: x[:40] if isinstance(x, str) else None)
def test_every_checked_row_names_a_test(section, status, rule, ids):
    assert ids, f"{section} › {rule}: no test named"
    for test_id in ids:
        assert _ID.match(test_id), f"{rule}: {test_id!r} is not `file.py::test_name`"


@pytest.mark.parametrize("section,status,rule,ids", [r for r in rows() if r[1] == "M"],
                         ids=lambda x: x[:40] if isinstance(x, str) else None)
def test_master_rows_name_no_test(section, status, rule, ids):
    assert ids == ()


def test_every_named_test_exists():
    missing = sorted({t for r in rows() for t in r[3] if function(t) is None})
    assert missing == []


def test_named_tests_are_engine_fights_or_rule_examples():
    # a row is proven with a small history: the named tests live in the guida test files
    files = {t.split("::")[0] for r in rows() for t in r[3]}
    assert files and all(f.startswith("test_guida") for f in files), files


# --- the rule text's worked examples -------------------------------------------------------------------------

# Copied from the rule text (rules/000, "Lancio del Dado"): the two example labels.
TEXT_DEFENSIVE = "Protezione (Hollow vs Quincy): (+2 [Bonus Protezione] +4 [Destrezza])"
TEXT_OFFENSIVE = ("Attacco [Artigli Affilati, Sonìdo] (Hollow vs Quincy): (+2 [Raggio Corto], +2 [Bonus Arma] "
                  "-1 [Mirato Arti] +6 [Destrezza])")
# "Confronto di Potenza": category of [Y] → (difference for [X] dimezzato, for [X] intatto).
TEXT_CLASH = {"D": (2, 4), "C": (3, 5), "B": (3, 6), "A": (4, 6), "S": (4, 7)}


def test_offensive_lancio_example_is_flagged_by_a_named_test():
    tid = "test_guida_dice.py::test_rule_text_offensive_example_is_flagged"
    assert tid in row("Elencare personaggi")[3]
    fn = function(tid)
    assert fn is not None
    assert constant("test_guida_dice.py", "EX_OFF") == TEXT_OFFENSIVE and "EX_OFF" in names_used(fn)
    # the listed modifiers add to +9 under a +6 roll: dice.modifier_mismatch expected 9, found 6
    assert {9, 6} <= asserted_numbers(fn)
    assert "dice.modifier_mismatch" in ast.unparse(fn)


def test_defensive_lancio_example_is_clean_in_a_named_test():
    tid = "test_guida_dice.py::test_rule_text_defensive_example_is_clean"
    assert tid in row("Elencare personaggi")[3]
    fn = function(tid)
    assert fn is not None
    assert constant("test_guida_dice.py", "EX_DEF") == TEXT_DEFENSIVE and "EX_DEF" in names_used(fn)
    assert 'severity="error"' in ast.unparse(fn).replace("'", '"')


def test_confronto_di_potenza_boundaries_are_tested_at_every_category():
    tid = "test_guida_hits.py::test_power_clash_boundaries_through_the_engine"
    assert tid in row("Tabella D/C/B/A/S")[3]
    fn = function(tid)
    assert fn is not None
    # the fight test runs every category at both thresholds and one below each
    assert constant("test_guida_hits.py", "BOUNDARIES") == TEXT_CLASH
    deco = " ".join(ast.unparse(d) for d in fn.decorator_list)
    assert "BOUNDARIES" in deco and "half - 1" in deco and "intact - 1" in deco
    assert {"dimezzato", "intatto", "entrambe_annullate"} <= {
        n.value for n in ast.walk(fn.decorator_list[0]) if isinstance(n, ast.Constant)}
    # and the pure table, with the same numbers
    assert constant("test_guida_mechanics_clash.py", "TEXT") == TEXT_CLASH
    assert function("test_guida_mechanics_clash.py::test_table_boundaries") is not None


# the damage formulas of "Calcolo dei Danni" and "Calcolo delle Cure": rule row → the fight that checks its numbers
# (expected value written in the test) → numbers that must appear in its asserts
DAMAGE_EXAMPLES = {
    "Danno Normale": ("test_guida_damage.py::test_damage_miscalculated", {10, 12}),
    "Armatura = Potenziale": ("test_guida_rules_extra.py::test_armatura_three_cases_through_the_engine", {99}),
    "Danno Puro": ("test_guida_damage.py::test_pure_damage_ignores_resistenza", {8, 4}),
    "Danno Semi-Puro": ("test_guida_rules_extra.py::test_danno_semipuro_through_the_engine", {10, 11}),
    "Danno Aggiuntivo = Danno / 2": ("test_guida_rules_extra.py::test_danno_aggiuntivo_is_half_the_damage", {5, 10}),
    "Danno Ambientale": ("test_guida_damage.py::test_danno_ambientale_uses_its_own_formula", {1, 10}),
    "Moltiplicatori": ("test_guida_rules_extra.py::test_multipliers_apply_once_and_round_down", set()),
    "Cura Principale = ": ("test_guida_conditions_cures.py::test_a_wrong_cura_is_flagged_and_the_registro_asks_for_the_right_amount",
                        {4, 7}),
    "Armatura che blocca i Danni Puri blocca": (
        "test_guida_conditions_cures.py::test_an_armatura_that_blocks_danni_puri_halves_its_potenziale_off_the_cura", {3, 4}),
    "Rigenerazione per categoria": (
        "test_guida_conditions_cures.py::test_two_rigenerazioni_in_one_turn_only_the_strongest_counts", {2, 3, 5}),
    "PV non oltre il massimo": (
        "test_guida_conditions_cures.py::test_a_cura_never_lifts_pv_above_the_maximum_and_says_what_to_record", {2, 4, 60}),
}


@pytest.mark.parametrize("rule_start", sorted(DAMAGE_EXAMPLES))
def test_damage_formulas_have_a_fight_asserting_their_numbers(rule_start):
    tid, numbers = DAMAGE_EXAMPLES[rule_start]
    assert tid in row(rule_start)[3]
    fn = function(tid)
    assert fn is not None
    assert numbers <= asserted_numbers(fn)
    src = ast.unparse(fn)
    # numbers compared with the engine's: a verdict's expected / found, or the Registro the engine writes
    assert "expected" in src or "amount" in src or "multiplier" in src


def test_the_armatura_cases_cover_the_three_outcomes_of_the_text():
    fn = function("test_guida_rules_extra.py::test_armatura_three_cases_through_the_engine")
    assert fn is not None
    cases = ast.literal_eval(fn.decorator_list[0].args[1])
    assert [c[2].split()[2] for c in cases] == ["<", "=", ">"]
    assert [c[1] for c in cases] == [0, 0, 7]  # 14 − 4 − 6 // 2
