"""Meccaniche Avanzate of `guida`: Costrizione/Liberazione, Percezione/Mimetizzazione, Sbalzo/Reazione,
Aree di Controllo, Bersagli Multipli."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from engine.rulesets.guida import aree as A
from engine.rulesets.guida import bersagli as B
from engine.rulesets.guida import costrizione as C
from engine.rulesets.guida import percezione as P
from engine.rulesets.guida import sbalzo as Z
from engine.rulesets.guida import stacks as S
from engine.rulesets.guida.tables import SETTINGS, BadValue, NotAllowed, OutOfTable, UnknownCategory

# --- Costrizione e Liberazione ---------------------------------------------------------------------

CATENE = C.Costrizione("c1", "Catene", ("Blocco Braccia",), bonus_potenziale=6)


def test_valore_costrizione_once_then_half_bonus():
    s = C.applica(C.NESSUNA, CATENE, dado=7, bonus_statistica=3)
    assert s.valore == 7 + 6 + 3 and s.state.costretto
    # a second Costrizione adds half its Bonus Potenziale; its die is ignored
    s2 = C.applica(s.state, C.Costrizione("c2", "Rete", ("Blocco Gambe",), 5), dado=12, bonus_statistica=9)
    assert s2.valore == 16 + 2
    with pytest.raises(BadValue):
        C.applica(s2.state, CATENE, dado=1, bonus_statistica=0)


def test_costrizione_impropria():
    imp = C.Costrizione("c3", "Spada nel terreno", ("Blocco Spostamenti",), 6, impropria=True)
    assert C.bonus_potenziale_effettivo(imp) == 3
    s = C.applica(C.NESSUNA, imp, dado=5, bonus_statistica=2)
    assert s.valore == 5 + 3 + 2 and s.rule == "Costrizione e Liberazione › Costrizioni Improprie"
    s2 = C.applica(C.applica(C.NESSUNA, CATENE, dado=5, bonus_statistica=2).state, imp, dado=5, bonus_statistica=2)
    assert s2.valore == 13 + 1  # half of the halved bonus (3 // 2)
    assert C.IMPROPRIA_COLPIRE == -2


def test_liberazione_allentamento_and_one_attempt_per_turn():
    st_ = C.applica(C.NESSUNA, CATENE, dado=7, bonus_statistica=3).state  # Valore 16
    r1 = C.tentativo(st_, turn=2, dado=5, bonus_potenziale=4, bonus_statistica=3)
    assert (r1.success, r1.valore_liberazione, r1.allentamento) == (False, 12, 0)
    assert not C.puo_tentare(r1.state, 2)
    with pytest.raises(NotAllowed):
        C.tentativo(r1.state, turn=2, dado=12, bonus_potenziale=4, bonus_statistica=3)
    r2 = C.tentativo(r1.state, turn=3, dado=6, bonus_potenziale=4, bonus_statistica=3)
    assert (r2.success, r2.valore_liberazione, r2.allentamento) == (False, 15, 2)
    r3 = C.tentativo(r2.state, turn=4, dado=5, bonus_potenziale=4, bonus_statistica=3)
    assert (r3.success, r3.valore_liberazione, r3.allentamento) == (True, 16, 4)  # equal frees
    assert r3.liberate == (CATENE,)
    assert r3.state == C.CostrizioneState(None, (), 0, 4)
    with pytest.raises(NotAllowed):
        C.tentativo(r3.state, turn=5, dado=5, bonus_potenziale=4, bonus_statistica=3)
    # a new Costrizione starts a new Valore and the Allentamento from 0
    again = C.applica(r3.state, CATENE, dado=1, bonus_statistica=0).state
    assert (again.valore, again.allentamento) == (7, 0)


def test_liberazione_impropria_and_gigantismo():
    v = C.valore_liberazione(9, 7, 2, 0, impropria=True)
    assert v.value == 9 + 3 + 2
    v = C.valore_liberazione(9, 7, 2, 2, impropria=True, difensiva=True)
    assert v.value == 4 + 3 + 2 + 2
    # an improper Liberazione uses the technique's roll: a Protezione's 1d24 is fine, halved as a Difesa
    assert C.valore_liberazione(21, 7, 2, 0, impropria=True, difensiva=True).value == 10 + 3 + 2
    v = C.valore_liberazione(9, 7, 2, 0, impropria=True, gigantismo_taglie=2)
    assert v.value == 9 + 7 + 2
    assert [C.gigantismo_categoria(n) for n in (1, 2, 3)] == ["B", "A", "S"]
    with pytest.raises(OutOfTable):
        C.gigantismo_categoria(4)
    with pytest.raises(BadValue):
        C.valore_liberazione(13, 0, 0, 0)  # the die is 1d12
    st_ = C.applica(C.NESSUNA, CATENE, dado=12, bonus_statistica=9).state
    r = C.tentativo(st_, turn=1, dado=1, bonus_potenziale=0, bonus_statistica=0, gigantismo_taglie=1)
    assert not r.success and r.trasformazione_annullata


def test_rimuovi_and_type4_link():
    st_ = C.applica(C.NESSUNA, C.Costrizione("fiamme", "Fiamme", ("Limitazione Movimenti",), 4),
                    dado=3, bonus_statistica=1).state
    stacks = S.apply(S.StackSet("Q"), [("Incendio", 1)], turn=0, condition="fiamme").stacks
    f = S.fase_iniziale(S.fase_iniziale(stacks, 1).stacks, 2)
    assert f.broken == ("fiamme",)
    assert C.rimuovi(st_, f.broken[0]) == C.CostrizioneState(None, (), 0, None)


@pytest.mark.parametrize("effetti,malus,ruling", [
    ((), 0, False),
    (("Limitazione Distanza",), 0, False),
    (("Blocco Spostamenti",), -1, False),
    (("Limitazione Movimenti",), -1, False),
    (("Blocco Braccia",), -1, False),
    (("Blocco Gambe",), -2, False),
    (("Blocco Totale",), -4, False),
    (("Blocco Totale", "Blocco Braccia", "Blocco Gambe"), -4, False),
    (("Blocco Braccia", "Blocco Braccia"), -1, False),
    (("Blocco Braccia", "Blocco Gambe"), -3, True),
])
def test_destrezza_malus(effetti, malus, ruling):
    cs = [C.Costrizione(f"x{i}", "X", (e,)) for i, e in enumerate(effetti)]
    calc = C.destrezza_malus(cs)
    assert calc.value == malus and bool(calc.ruling) == ruling
    if ruling:
        assert calc.assumption == "costrizioni_effetti_cumulativi"
        assert C.destrezza_malus(cs, cumulativi=False).value == -2


def test_bad_costrizione_effect():
    with pytest.raises(BadValue):
        C.Costrizione("x", "X", ("Blocco Coda",))


# --- Percezione e Mimetizzazione -------------------------------------------------------------------

def test_concentrazione_sequence():
    c = P.Concentrazione()
    used = []
    for mim in (True, True, True, False):
        b, c = P.tentativo_percezione(c, mimetizzato=mim)
        used.append(b)
    assert used == [0, 2, 4, 6] and c.bonus == 6  # no growth when the target is not Mimetizzato
    c = P.turno_senza_mimetizzazione(c)
    assert c.bonus == 4
    assert P.turno_senza_mimetizzazione(P.turno_senza_mimetizzazione(P.turno_senza_mimetizzazione(c))).bonus == 0


def test_percezione_vs_mimetizzazione():
    p = P.valore_percezione(7, 3, 2)
    m = P.valore_mimetizzazione(9, 3)
    assert (p.value, m.value) == (12, 12)
    assert P.individua(p.value, m.value)  # "non supera": a tie is found
    assert not P.individua(11, 12)
    assert P.individua(1)  # without Mimetizzazione the value is 0
    with pytest.raises(BadValue):
        P.valore_percezione(13, 0)


# the text's table: radius band × kind → fails automatically with this die or less
CIECA = [
    (0, "mirato", 6), (25, "mirato", 6), (26, "mirato", 7), (60, "mirato", 7), (61, "mirato", 8), (100, "mirato", 8),
    (101, "mirato", 10), (500, "mirato", 10),
    (10, "area", 4), (25.5, "area", 5), (60, "area", 5), (80, "area", 6), (100, "area", 6), (250, "area", 8),
]


@pytest.mark.parametrize("raggio,tipo,soglia", CIECA)
def test_attacco_alla_cieca_table(raggio, tipo, soglia):
    assert P.attacco_alla_cieca(raggio, soglia, tipo).auto_fail
    r = P.attacco_alla_cieca(raggio, soglia + 1, tipo)
    assert not r.auto_fail and r.soglia == soglia


def test_attacco_alla_cieca_multipli_and_area_totale():
    assert P.attacco_alla_cieca(30, 7, "multiplo", colpi=3).auto_fail  # 1-5 colpi: Mirati
    assert not P.attacco_alla_cieca(30, 6, "multiplo", colpi=50).auto_fail  # 20-100: Area (5 o meno)
    assert not P.attacco_alla_cieca(500, 1, "multiplo", colpi=1000).auto_fail  # Area Totale
    assert not P.attacco_alla_cieca(500, 1, "area_totale").auto_fail
    assert P.attacco_alla_cieca(500, 12, "area totale", oltre_raggio_massimo=True).auto_fail
    with pytest.raises(OutOfTable):
        P.attacco_alla_cieca(30, 7, "multiplo", colpi=10)
    with pytest.raises(BadValue):
        P.attacco_alla_cieca(-1, 7, "mirato")


# --- Sbalzo e Reazione -----------------------------------------------------------------------------

@pytest.mark.parametrize("cat,mod", [("D", 1), ("C", Fraction(3, 2)), ("B", 2), ("A", 3), ("S", 4)])
def test_dms_modifier_table(cat, mod):
    r = Z.dms(8, 4, 3, 5, cat)  # (8 + 4 + 3 − 5) = 10
    assert r.value == 10 * mod


def test_dms_defence_halves_die_and_never_negative():
    assert Z.dms(9, 4, 3, 5, "B", da_difesa=True).value == (4 + 4 + 3 - 5) * 2
    assert Z.dms(1, 0, 0, 20, "S").value == 0
    with pytest.raises(UnknownCategory):
        Z.dms(1, 0, 0, 0, "Z")


def test_valore_sbalzo_and_reazione():
    s = Z.valore_sbalzo(9, 3, "C")
    assert s.value == Fraction(27, 2) and s.floor == 13  # 9 + 1.5 + 3
    assert Z.valore_sbalzo(9, 3, "A", da_difesa=True).value == 4 + 3 + 3
    r = Z.valore_reazione(7, 6)
    assert r.value == 13
    out = Z.reazione(r.value, s.value, 20)
    assert not out.success and out.danni_ambientali and not out.fase_offensiva and out.distanza == 20
    out = Z.reazione(14, s.value, 15)
    assert out.success and not out.danni_ambientali and out.fase_offensiva and out.distanza == Fraction(15, 2)
    assert Z.reazione(10, 10, 8).success  # equal is enough
    with pytest.raises(BadValue):
        Z.valore_reazione(13, 0)


def test_reazione_only_after_difesa_nulla_or_protezione_riuscita():
    assert Z.puo_reagire("Difesa Nulla")
    assert Z.puo_reagire("Protezione", True)
    assert not Z.puo_reagire("Protezione", False)
    for d in ("Parata", "Schivata", "Contrattacco", "Sbilanciamento", None):
        assert not Z.puo_reagire(d)


def test_sbalzo_dichiarato():
    assert Z.colpire_sbalzo(True) == -2
    assert Z.colpire_sbalzo(True, effetto=True) == 0
    assert Z.colpire_sbalzo(False) == 0


# --- Aree di Controllo -----------------------------------------------------------------------------

@pytest.mark.parametrize("raggio,malus", [(1, 0), (5, 0), (6, -1), (10, -1), (25, -2), (60, -3), (100, -4),
                                          (250, -5)])
def test_area_statica_malus(raggio, malus):
    assert A.malus_statico(raggio) == malus


def test_area_statica_out_of_table():
    with pytest.raises(OutOfTable):
        A.malus_statico(251)
    with pytest.raises(BadValue):
        A.malus_statico(0)


@pytest.mark.parametrize("stacks,raggio", [(0, None), (1, 5), (2, 5), (3, 10), (6, 25), (10, 60), (15, 100),
                                           (21, 250), (40, 250)])
def test_area_espansiva_raggio(stacks, raggio):
    assert A.raggio_espansivo(stacks) == raggio


def test_area_espansiva_potenziale_max_30():
    assert A.potenziale_espansivo(12) == 12 and A.potenziale_espansivo(45) == 30
    a = A.crea("Nebbia", "espansiva", "Q", turn=1, saturazione=33)
    assert (a.potenziale_area, a.raggio) == (30, 250)


@pytest.mark.parametrize("sat,lost_by_turn", [
    # 1-7: −1 every 2 turns; 8-15: −1 per turn; 16-24: −2; 25+: −3
    (7, {2: 0, 3: 1, 4: 0, 5: 1}),
    (8, {2: 1, 3: 0, 4: 1}),  # 8 → 7 then every 2 turns
    (15, {2: 1}), (16, {2: 2}), (24, {2: 2}), (25, {2: 3}), (40, {2: 3}),
])
def test_saturazione_decay(sat, lost_by_turn):
    a = A.crea("Nebbia", "espansiva", "Q", turn=1, saturazione=sat)
    for t in sorted(lost_by_turn):
        step = A.decadimento(a, t)
        assert step.removed == lost_by_turn[t], t
        a = step.area


def test_area_vanishes_at_zero():
    a = A.crea("Nebbia", "espansiva", "Q", turn=1, saturazione=1)
    assert A.decadimento(a, 2).area is a
    step = A.decadimento(a, 3)
    assert step.vanished and step.removed == 1
    step = A.colpita(A.crea("Nebbia", "espansiva", "Q", turn=1, saturazione=2), 3)
    assert step.vanished and step.removed == 2


@pytest.mark.parametrize("kw,removed", [
    ({}, 0), ({"categoria": "B"}, 0), ({"categoria": "A"}, 1), ({"categoria": "S"}, 2),
    ({"tipo": "area"}, 1), ({"tipo": "area_totale"}, 2),
    ({"tipo": "multiplo", "colpi": 3}, 0), ({"tipo": "multiplo", "colpi": 20}, 1), ({"tipo": "multiplo", "colpi": 100}, 1),
    ({"tipo": "multiplo", "colpi": 1000}, 2),
    ({"categoria": "S", "tipo": "area"}, 3), ({"categoria": "S", "tipo": "area", "cumulativa": False}, 2),
])
def test_saturazione_removed_by_attacks(kw, removed):
    assert A.rimozione_da_attacco(**kw).value == removed


def test_area_creation_destruction_escape():
    assert A.dado_creazione("principale") == "proprio"
    assert A.dado_creazione("Azione Secondaria") == "azione_principale"
    assert A.distrutta_in_creazione(True) and not A.distrutta_in_creazione(False)
    assert A.distrugge(14, 15, 0.5).value
    assert not A.distrugge(14, 14, 1).value
    assert not A.distrugge(14, 20, Fraction(2, 5)).value
    assert A.fuga(True, "Schivata").value
    assert not A.fuga(True, "Schivata", fuori_dall_area=False).value
    assert not A.fuga(True, "Parata").value
    assert A.fuga(False, "Spostamento").value
    assert not A.fuga(False, "Spostamento", contrattaccata=True).value
    r = A.fuga(False, "Schivata")
    assert not r.value and r.ruling


def test_cortine():
    assert [A.cortina_velenosa(n) for n in (0, 1, 2, 3, 6, 10, 15, 21, 30)] == [0, 1, 1, 2, 3, 4, 5, 6, 6]
    assert A.CORTINA_FUMOGENA_OLTRE_M == 5


# --- Bersagli Multipli -----------------------------------------------------------------------------

def test_bersagli_multipli():
    assert B.colpire_multipli("mirato", 1) == 0
    assert B.colpire_multipli("mirato", 3) == -2
    assert B.colpire_multipli("area", 3) == 0
    assert B.potenza_multipli(15, 1).value == 15
    assert B.potenza_multipli(15, 4).value == 12
    with pytest.raises(NotAllowed):
        B.potenza_multipli(15, 4, max_bersagli=3)
    assert B.fermato_per_tutti("mirato") is True
    assert B.fermato_per_tutti("area") is None and B.fermato_per_tutti("multiplo") is None
    with pytest.raises(BadValue):
        B.colpire_multipli("mirato", 0)


def test_difese_su_alleato():
    d = B.difesa_alleato("Difesa Nulla su Alleato", destrezza=14)
    assert d.dado == 24 and d.mods == ((2, "Bonus Protezione"), (2, "Destrezza su Alleato"))
    d = B.difesa_alleato("Protezione su Alleato", piu_lontano=True)
    assert d.dado == 24 and d.modifier == 0
    assert B.difesa_alleato("Contrattacco per Alleato").dado == 18
    assert B.difesa_alleato("Contrattacco per Alleato", fase="offensiva").dado == 12
    assert B.difesa_alleato("Parata per Alleato").dado == 18
    d = B.difesa_alleato("Schivata con Alleato", forza=12)
    assert d.dado == 18 and d.stats == {"Destrezza": -4}
    assert B.difesa_alleato("Schivata con Alleato", forza=40).stats == {"Destrezza": 0}
    with pytest.raises(NotAllowed):
        B.difesa_alleato("Schivata con Alleato", gigantismo_superiore=True)
    with pytest.raises(BadValue):
        B.difesa_alleato("Parata per Alleato", fase="offensiva")


def test_settings_are_ours_and_named():
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    assert all(s.ours and s.description for s in SETTINGS)


@settings(deadline=None)
@given(st.integers(1, 12), st.integers(0, 20), st.integers(0, 20), st.integers(0, 40), st.sampled_from(list("DCBAS")))
def test_dms_never_negative(d, bp, bs, forza, cat):
    assert Z.dms(d, bp, bs, forza, cat).value >= 0


@settings(deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=15), st.integers(1, 12), st.integers(0, 12))
def test_allentamento_grows_by_two_until_freed(dice, d0, bonus):
    state = C.applica(C.NESSUNA, CATENE, dado=d0, bonus_statistica=bonus).state
    for k, d in enumerate(dice):
        r = C.tentativo(state, turn=k + 1, dado=d, bonus_potenziale=0, bonus_statistica=0)
        assert r.allentamento == 2 * k
        assert r.valore_costrizione == d0 + 6 + bonus  # the Valore never changes with attempts
        state = r.state
        if r.success:
            assert not state.costretto and state.allentamento == 0
            break


@settings(deadline=None)
@given(st.integers(1, 40), st.lists(st.tuples(st.integers(1, 3), st.integers(0, 3)), max_size=20))
def test_saturazione_never_negative_never_grows(sat, events):
    area = A.crea("Nebbia", "espansiva", "Q", turn=0, saturazione=sat)
    turn = 0
    for step, hit in events:
        turn += step
        before = area.saturazione
        s = A.decadimento(area, turn)
        if s.area is None:
            break
        s = A.colpita(s.area, hit)
        if s.area is None:
            break
        area = s.area
        assert 0 < area.saturazione <= before
