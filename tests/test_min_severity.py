"""`arbitro audit --min-severity`: what each level lists, the summary that still counts everything, info lines that
say what happened (no "atteso/trovato")."""
from __future__ import annotations

import json
import re

import pytest

from engine.report import Selection, hidden_note, render_markdown, render_text, select
from server.cli import main
from tests.plugins.common import FIXTURES
from tests.test_report_resources import bundled_audits

PAGES = [str(FIXTURES / "forumfree" / f"topic_62345678_st{n}.html") for n in (0, 15)]
REGISTRY = str(FIXTURES / "registry" / "hollow_vs_quincy.toml")
SUMMARY = "18 post · 10 errori · 3 avvisi · 19 info"


def _audit_cli(capsys, *extra: str) -> str:
    assert main(["audit", *PAGES, "--registry", REGISTRY, "--no-color", *extra]) == 0
    return capsys.readouterr().out


def _listed(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"(?m)^#(\d+) post ", text)]


def test_default_hides_info_and_skips_posts_left_empty(capsys):
    out = _audit_cli(capsys)
    assert out.splitlines()[2:4] == [SUMMARY, "19 info nascoste: --min-severity info per vederle"]
    # the posts with an error or a warning; #3 (only a successful Protezione) and the clean posts are not listed
    assert _listed(out) == [4, 5, 6, 8, 9, 11, 12, 14, 15, 16]
    assert "· info" not in out and "nessuna osservazione" not in out
    assert "Stato finale\n  Hollow: PV 47/52, PE 25/40\n  Quincy: PV 8/48, PE 22/46\n" in out


def test_error_hides_warnings_too(capsys):
    out = _audit_cli(capsys, "--min-severity", "error")
    assert out.splitlines()[2:4] == [SUMMARY, "3 avvisi e 19 info nascosti: --min-severity info per vederli"]
    assert _listed(out) == [4, 5, 6, 8, 9, 15, 16]
    assert "! avviso" not in out


def test_info_shows_every_post_and_info_lines_say_what_happened(capsys):
    out = _audit_cli(capsys, "--min-severity", "info")
    lines = out.splitlines()
    assert lines[2] == SUMMARY and "nascost" not in out
    assert _listed(out) == list(range(1, 19))
    assert "#1 post 600110 · Niccolò\n  nessuna osservazione\n" in out
    # an info verdict: the message tells the numbers, no "(atteso …, trovato …)" that would read as a mismatch
    assert ("  · info    outcome.defended lancio 1  Schivata riuscita (17 ≥ 14) contro l'Attacco di Hollow [Cero]: "
            "nessun Danno.") in lines
    assert ("  · info    outcome.power_clash lancio 1  Confronto di Potenza: Freccia Sacra di Quincy 15 contro "
            "Artigli Affilati di Hollow 14: differenza 1, sotto la soglia 3 della categoria B di Artigli Affilati di "
            "Hollow: annullate entrambe.") in lines
    assert not [ln for ln in lines if " info " in ln and "atteso" in ln]
    # errors and warnings keep the numbers compared
    assert ("  ✗ errore  dice.wrong_die lancio 2  Azione Offensiva in Fase Offensiva si lancia con 1d12, non con "
            "1d20. (atteso 1d12, trovato 1d20)") in lines


def test_json_keeps_everything_unless_asked(capsys):
    doc = json.loads(_audit_cli(capsys, "--format", "json"))
    assert sum(len(p["verdicts"]) for p in doc["posts"]) == 32
    doc = json.loads(_audit_cli(capsys, "--format", "json", "--min-severity", "warning"))
    assert len(doc["posts"]) == 18 and sum(len(p["verdicts"]) for p in doc["posts"]) == 13
    assert {v["severity"] for p in doc["posts"] for v in p["verdicts"]} == {"error", "warning"}


def test_markdown_follows_the_same_selection(capsys):
    md = _audit_cli(capsys, "--format", "markdown")
    assert "\n19 info nascoste: --min-severity info per vederle\n" in md
    assert re.findall(r"(?m)^### #(\d+) ", md) == ["4", "5", "6", "8", "9", "11", "12", "14", "15", "16"]
    md = _audit_cli(capsys, "--format", "markdown", "--min-severity", "info")
    # an info row leaves atteso/trovato empty; an error row fills them
    assert ("| info | outcome.defended | 1 | Schivata riuscita \\(17 ≥ 14\\) contro l'Attacco di Hollow \\[Cero\\]: "
            "nessun Danno. |  |  | Successo e Fallimento delle Azioni › Fattore Casualità › Schivata |") in md
    assert "| errore | dice.wrong\\_die | 2 | Azione Offensiva in Fase Offensiva si lancia con 1d12, non con 1d20. " \
           "| 1d12 | 1d20 |" in md


def test_a_fight_without_warnings_says_so():
    audit = bundled_audits()["duel_short/forumfree/ff-classic"]
    text = render_text(audit)
    assert text.splitlines()[2:6] == ["6 post · 0 errori · 0 avvisi · 5 info",
                                      "5 info nascoste: --min-severity info per vederle", "",
                                      "Nessun avviso né errore."]
    assert "Nessun avviso né errore." in render_markdown(audit)
    assert "Nessun avviso né errore." not in render_text(audit, min_severity="info")


def test_character_filter_and_severity_together():
    audit = bundled_audits()["hollow_vs_quincy/forumfree/ff-current"]
    sel = select(audit, "quincy", "warning")
    assert [i for i, _p, _v in sel.posts] == [5, 9, 12, 14, 16]
    assert sel.counts == {"error": 10, "warning": 3, "info": 19}  # the summary counts the whole fight
    assert all((p.character or p.author) == "Quincy" for _i, p, _v in sel.posts)


@pytest.mark.parametrize("hidden,how,text", [
    ({"info": 1}, True, "1 info nascosta: --min-severity info per vederla"),
    ({"info": 12}, True, "12 info nascoste: --min-severity info per vederle"),
    ({"warning": 1}, True, "1 avviso nascosto: --min-severity warning per vederlo"),
    ({"warning": 3, "info": 19}, True, "3 avvisi e 19 info nascosti: --min-severity info per vederli"),
    ({"info": 19}, False, "19 info non riportate qui"),
    ({"warning": 1, "info": 1}, False, "1 avviso e 1 info non riportati qui"),
])
def test_hidden_note_reads_as_italian(hidden, how, text):
    assert hidden_note(Selection((), {}, hidden, "error"), how=how) == text


def test_unknown_level_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["audit", *PAGES, "--min-severity", "debug"])
    assert "--min-severity" in capsys.readouterr().err
    with pytest.raises(ValueError):
        select(bundled_audits()["duel_short/forumfree/ff-classic"], None, "debug")
