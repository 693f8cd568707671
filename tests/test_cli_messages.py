"""What the command line says when something is wrong: Italian, naming the file or value at fault, one code for one
fault across commands (issue #14, "The CLI a master types")."""
from __future__ import annotations

import pytest

from server.cli import italian, main


def run(capsys, *argv):
    try:
        status = main(list(argv))
    except SystemExit as exc:  # argparse exits by itself
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("argv,needle", [
    ((), "arbitro: errore: mancano gli argomenti obbligatori: COMANDO"),
    (("audit",), "arbitro audit: errore: mancano gli argomenti obbligatori: SOURCE"),
    (("audit", "x.html", "--format", "pdf"),
     "arbitro audit: errore: argomento --format: scelta non valida: 'pdf' (scegli tra"),
    (("audit", "x.html", "--max-bytes", "-3"),
     "arbitro audit: errore: argomento --max-bytes: serve un numero intero positivo di byte: '-3'"),
    (("scrape", "x.html", "--nessuna"), "arbitro: errore: argomenti non riconosciuti: --nessuna"),
    (("scrape", "x.html", "--allow-private", "169.254.169.254:80"),
     "arbitro scrape: errore: argomento --allow-private: '169.254.169.254:80' non può essere ammesso"),
    (("scrape", "x.html", "--allow-private", "forum.lan"),
     "arbitro scrape: errore: argomento --allow-private: voce di private_allowlist non valida: 'forum.lan'"),
    (("bogus",), "arbitro: errore: argomento COMANDO: scelta non valida: 'bogus'"),
])
def test_argument_errors_are_italian(capsys, argv, needle):
    status, _, err = run(capsys, *argv)
    assert status == 2 and needle in err, err
    assert err.startswith("uso: arbitro")
    assert "error:" not in err and "usage:" not in err and "the following" not in err


def test_help_is_italian(capsys):
    status, out, _ = run(capsys, "audit", "--help")
    assert status == 0 and out.startswith("uso: arbitro audit")
    assert "\nopzioni:\n" in out and "\nargomenti:\n" in out and "mostra questo aiuto ed esce" in out
    assert "show this help" not in out and "positional arguments" not in out


def test_an_unknown_message_passes_unchanged():
    assert italian("qualcosa di nostro") == "qualcosa di nostro"


@pytest.mark.parametrize("command", ["scrape", "audit", "inspect"])
def test_a_missing_file_is_not_found_with_its_name_in_every_command(capsys, command, tmp_path):
    missing = tmp_path / "pagina.html"
    status, _, err = run(capsys, command, str(missing))
    assert status == 2
    assert f"arbitro {command}: errore [not_found]: file non trovato: {missing}" in err


def test_a_directory_is_named_in_italian(capsys, tmp_path):
    status, _, err = run(capsys, "audit", str(tmp_path))
    assert status == 2 and f"{tmp_path}: è una cartella, non un file" in err and "Is a directory" not in err


def test_an_unwritable_output_names_the_file(capsys, fixtures_dir, tmp_path):
    page = str(fixtures_dir / "forumfree" / "api_62345678_st0.json")
    target = tmp_path / "manca" / "h.json"
    status, _, err = run(capsys, "scrape", page, "-o", str(target))
    assert status == 2 and f"impossibile scrivere {target}: file o cartella non trovati" in err


def test_an_unknown_character_names_the_fight_s_characters(capsys, fixtures_dir):
    pages = [str(fixtures_dir / "forumfree" / f"api_62345678_st{s}.json") for s in (0, 15)]
    status, out, err = run(capsys, "audit", *pages, "--character", "Nobody")
    assert status == 2 and out == ""
    assert ("arbitro audit: errore [unknown_character]: personaggio sconosciuto 'Nobody': in questo combattimento "
            "ci sono Hollow, Quincy") in err
    status, out, _ = run(capsys, "audit", *pages, "--character", "quincy")  # the fight's own spelling is found
    assert status == 0 and "(Quincy vs Hollow)" in out


@pytest.mark.parametrize("command", ["scrape", "audit", "inspect"])
def test_a_host_refusal_names_the_option_that_lifts_it_in_every_command(capsys, command):
    status, _, err = run(capsys, command, "https://gdr.example.org/viewtopic.php?t=1")
    assert status == 2 and "[host_not_allowed]" in err and "--allow-host HOST lo ammette" in err


def test_engine_errors_are_italian(capsys, fixtures_dir):
    pages = [str(fixtures_dir / "forumfree" / f"api_62345678_st{s}.json") for s in (0, 15)]
    status, _, err = run(capsys, "audit", *pages, "--ruleset", "dnd")
    assert status == 2 and "regolamento sconosciuto 'dnd' (noti: cosmo, guida, poteri, starfinder)" in err
    status, _, err = run(capsys, "audit", *pages, "--setting", "colore=1")
    assert status == 2 and "il regolamento 'guida' non ha l'impostazione 'colore' (ha: " in err


def test_a_malformed_history_file_says_what_is_wrong_in_italian(capsys, tmp_path):
    bad = tmp_path / "h.json"
    bad.write_text('{"format": "arbitro.history/1", "thread": {"url": 3}, "posts": []}', encoding="utf-8")
    status, _, err = run(capsys, "audit", str(bad))
    assert status == 2 and "[bad_history]" in err and "documento arbitro.history/1 non valido" in err
    assert "expected" not in err
