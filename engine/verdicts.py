"""Verdicts: what the engine says about a post, each explaining itself."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


class UnknownVerdictCode(KeyError):
    """A ruleset tried to emit a code that is not in CODE_SEVERITY: a bug of the ruleset, never of the input."""


# Every stable code (extend, never rename) → its one severity, whichever ruleset emits it. A case that needs
# another severity gets its own code. Generic codes are documented in docs/verdicts.md, `<ruleset>.*` codes in
# docs/rulesets/<ruleset>.md (tests/test_docs.py checks both, and that the rulesets emit no code missing here).
CODE_SEVERITY: dict[str, Severity] = {
    # generic: the list and the `guida` additions
    "schema.missing_part": "warning",
    "dice.wrong_die": "error",
    "dice.unexpected_roll": "error",
    "dice.modifier_mismatch": "error",
    "dice.modifiers_unlisted": "warning",
    "dice.factor_out_of_range": "error",
    "dice.stat_mismatch": "error",
    "dice.stat_unverifiable": "warning",
    "dice.missing_modifier": "error",
    "dice.bonus_not_taken": "info",
    "dice.undue_bonus": "error",
    "dice.unknown_action": "warning",
    "dice.not_authentic": "warning",
    "dice.no_total": "warning",
    "turn.extra_main_action": "error",
    "turn.extra_defense": "error",
    "turn.out_of_turn": "error",
    "turn.extra_liberazione": "error",
    "outcome.action_annulled": "info",
    "outcome.hit": "info",
    "outcome.defended": "info",
    "outcome.power_clash": "info",
    "outcome.suspended": "info",
    "outcome.stacks": "info",
    "outcome.liberated": "info",
    "outcome.hidden": "info",
    "outcome.detected": "info",
    "outcome.not_detected": "info",
    "outcome.sbalzo": "info",
    "outcome.area": "info",
    "registro.pv_mismatch": "error",
    "registro.pe_mismatch": "error",
    "registro.missing_damage": "error",
    "registro.missing_expense": "error",
    "damage.miscalculated": "error",
    "damage.missing_calc": "warning",
    "damage.no_hit": "error",
    "stacks.over_limit": "error",
    "stacks.undue": "error",  # a condition the Calcolo reports that no rule gives the hit (the state ignores it)
    "damage.missing_condition": "warning",  # a condition the hit gave that the Calcolo does not report
    "dice.distance_on_cure": "warning",  # a Fattore Distanza on a Cura while the forum has not set `distanza_cura`
    "ruling.needed": "info",
    "ruling.applied": "info",
    "engine.internal_error": "warning",
    # every ruleset (engine.evidence): a post edited after the next post was written
    "post.edited_after_reply": "warning",  # it holds rolls, a damage calculation or a schema
    "post.narrative_edited_after_reply": "info",  # narrative only
    # every ruleset, from the service's earlier reading of the thread (engine.evidence): evidence, kept for good
    "dice.changed_after_publication": "error",  # the rolls read earlier are not the rolls the post shows now
    "schema.changed_after_publication": "warning",  # its schema, Registro or damage calculation changed
    "post.deleted": "warning",  # a post read earlier is no longer in the thread
    # generic: used by `cosmo`, `poteri`, `starfinder`
    "outcome.damage": "info",
    "outcome.damage_rolled": "info",
    "outcome.oneshot": "warning",
    "outcome.counter_success": "info",
    "outcome.counter_insufficient": "info",
    "outcome.counter_failed": "info",
    "outcome.counter_mixed": "info",
    "outcome.power_success": "info",
    "outcome.power_failure": "info",
    "outcome.power_critical": "info",
    "outcome.resisted": "info",
    "outcome.resistance_failed": "info",
    "outcome.partial_damage": "info",
    "outcome.cure": "info",
    "outcome.liberation_failed": "info",
    "outcome.miss": "info",
    "outcome.save_success": "info",
    "outcome.save_failure": "info",
    "registro.max_mismatch": "warning",
    "registro.pool_mismatch": "error",
    "registro.pf_mismatch": "error",
    "registro.pd_mismatch": "error",
    "registro.ps_mismatch": "error",
    "registro.pr_mismatch": "error",
    # cosmo
    "cosmo.attack": "info",
    "cosmo.band_declared": "info",
    "cosmo.basic_cosmo_no_bonus": "info",
    "cosmo.basic_no_bonus": "error",
    "cosmo.block_expired": "info",
    "cosmo.blocked": "info",  # a legal Bloccante hit: what happened, not a fault
    "cosmo.blocked_action": "error",
    "cosmo.burning": "info",
    "cosmo.cancel_not_allowed": "error",
    "cosmo.cosmo_exceeded": "error",
    "cosmo.counter_level_mismatch": "warning",
    "cosmo.counter_limit": "error",
    "cosmo.counter_not_targeted": "error",
    "cosmo.counter_others_taken": "info",
    "cosmo.counter_roll_missing": "error",
    "cosmo.counter_threshold_mismatch": "error",
    "cosmo.damage_roll_missing": "error",
    "cosmo.defeated": "info",
    "cosmo.defeated_immune": "info",
    "cosmo.defence_not_described": "warning",
    "cosmo.entrance_allowed": "info",
    "cosmo.entrance_artefact": "info",
    "cosmo.entrance_attack": "error",
    "cosmo.fainted": "info",
    "cosmo.fatigued_action": "error",
    "cosmo.fight_over": "warning",
    "cosmo.forced_incasso": "info",
    "cosmo.freed": "info",
    "cosmo.grip_damage": "info",
    "cosmo.level_mismatch": "error",
    "cosmo.malus_lowered": "info",
    "cosmo.master_status": "info",
    "cosmo.natural_defence_mismatch": "error",
    "cosmo.not_blocked": "warning",
    "cosmo.nothing_to_defend": "info",
    "cosmo.other_actor": "info",
    "cosmo.out_of_fight": "error",
    "cosmo.pool_mismatch": "error",
    "cosmo.reflected_block_cancelled": "info",
    "cosmo.released": "info",
    "cosmo.skill_missing": "error",
    "cosmo.special_defence_other_nature": "warning",
    "cosmo.surrender_refused": "error",
    "cosmo.target_defeated": "error",
    "cosmo.target_missing": "warning",
    "cosmo.unexpected_damage_roll": "warning",
    "cosmo.wrong_band": "error",
    "cosmo.wrong_stat": "error",
    # poteri
    "poteri.action_prevented": "error",
    "poteri.already_active": "info",
    "poteri.attack_forbidden": "error",
    "poteri.critical_damage_missing": "error",
    "poteri.cure_capped": "info",
    "poteri.damage_after_failure": "warning",
    "poteri.damage_capped": "info",
    "poteri.damage_missing": "warning",
    "poteri.defensive_ended": "info",
    "poteri.effect_ended": "info",
    "poteri.effect_expired": "info",
    "poteri.effect_started": "info",
    "poteri.fatigue_wrong_payer": "error",
    "poteri.forced_without_control": "warning",
    "poteri.liberation_not_allowed": "error",
    "poteri.liberation_without_effect": "warning",
    "poteri.margin_mismatch": "warning",
    "poteri.narrative": "info",
    "poteri.narrative_no_mechanics": "error",
    "poteri.no_fatigue": "error",
    "poteri.partial_damage_mismatch": "warning",
    "poteri.pf_exceeded": "error",
    "poteri.pf_missing": "error",
    "poteri.pf_out_of_range": "error",
    "poteri.resistance_missing": "warning",
    "poteri.resistance_not_allowed": "warning",
    "poteri.slots_exceeded": "error",
    "poteri.stray_damage": "warning",
    "poteri.target_protected": "error",
    "poteri.timing": "warning",
    "poteri.wrong_resistance": "error",
    # starfinder
    "starfinder.ac_mismatch": "warning",
    "starfinder.acts_while_unconscious": "error",
    "starfinder.damage_missing": "warning",
    "starfinder.damage_on_miss": "warning",
    "starfinder.damage_roll_count": "error",
    "starfinder.damage_without_attack": "warning",
    "starfinder.dc_mismatch": "error",
    "starfinder.dead": "info",
    "starfinder.dying": "info",
    "starfinder.half_damage": "info",
    "starfinder.minimum_damage": "info",
    "starfinder.multiplied_not_rolled": "error",
    "starfinder.multipliers_combined": "info",
    "starfinder.natural_one": "info",
    "starfinder.natural_twenty": "info",
    "starfinder.non_proficient": "error",
    "starfinder.other_actor": "info",
    "starfinder.proficiency_mismatch": "warning",
    "starfinder.reroll_late": "error",
    "starfinder.reroll_limit": "error",
    "starfinder.reroll_worse": "info",
    "starfinder.roll_twice_cancelled": "info",
    "starfinder.save_missing": "warning",
    "starfinder.save_renounced": "info",
    "starfinder.save_required": "info",
    "starfinder.stabilised": "info",
    "starfinder.strength_on_ranged": "error",
    "starfinder.wrong_ability": "error",
    "starfinder.wrong_ac": "error",
    "starfinder.wrong_save": "error",
    "starfinder.wrong_save_ability": "error",
}


def severity_of(code: str) -> Severity:
    """The one severity of a stable code; UnknownVerdictCode for a code nobody registered."""
    try:
        return CODE_SEVERITY[code]
    except KeyError:
        raise UnknownVerdictCode(code) from None


@dataclass(frozen=True)
class Verdict:
    """One finding about one post (and roll).

    `rule` is the rule paragraph it comes from ("Successo e Fallimento delle Azioni › Fattore Mira");
    `expected`/`found` are the numbers compared; `assumption` names the ruleset setting whose
    default (ours, not the rule text's) the verdict depends on, if any.
    """

    code: str
    severity: Severity
    message: str  # Italian, shown to forum readers
    rule: str
    post: str
    roll: int | None = None
    expected: Any = None
    found: Any = None
    details: dict[str, Any] = field(default_factory=dict)
    assumption: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "rule": self.rule,
            "post": self.post,
            "roll": self.roll,
            "expected": self.expected,
            "found": self.found,
        }
        if self.details:
            d["details"] = self.details
        if self.assumption:
            d["assumption"] = self.assumption
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(
            code=d["code"], severity=d["severity"], message=d["message"], rule=d["rule"],
            post=d["post"], roll=d.get("roll"), expected=d.get("expected"), found=d.get("found"),
            details=d.get("details") or {}, assumption=d.get("assumption"),
        )


def make_verdict(code: str, message: str, rule: str, post: str, *, roll: int | None = None, expected: Any = None,
                 found: Any = None, details: dict[str, Any] | None = None, assumption: str | None = None) -> Verdict:
    """A Verdict whose severity is the code's own (CODE_SEVERITY): rulesets never choose it per case."""
    return Verdict(code=code, severity=severity_of(code), message=message, rule=rule, post=post, roll=roll,
                   expected=expected, found=found, details=dict(details or {}), assumption=assumption)
