"""Normalisation a clinician applies to a diagnosis name without thinking (issue 13 item 2).

Applied to the tokens of ``clineval.text.names.diagnosis_vocab.name_key`` (already lower-cased, accents and
punctuation folded, possessive 's dropped):

* **British -> American spelling**, by word-part rules rather than a word list: ``haem`` -> ``hem``
  (haemorrhage, haematoma, haemothorax), ``-aemia`` -> ``-emia`` (anaemia, septicaemia, hyperkalaemia),
  a word-initial ``oe`` -> ``e`` (oedema, oesophagitis, oestrogen), ``-rhoea`` / ``-noea`` -> ``-rhea`` /
  ``-nea`` (diarrhoea, gonorrhoea, dyspnoea, apnoea), ``paed`` / ``aet`` / ``caec`` / ``faec`` / ``gynaec``
  / ``ischaem`` / ``anaes`` / ``foet`` / ``coel`` / ``amoeb`` -> the American forms, ``-our`` -> ``-or``
  (tumour, tumours), ``sulph`` -> ``sulf``, ``-isation`` -> ``-ization`` and a short list of ``-re`` words
  (fibre, centre, litre). Each rule is anchored so it cannot reach into an unrelated word ("toe", "shoe",
  "aerobic" are untouched).
* **Hyphenated prefixes joined**: "pre-eclampsia", "pre eclampsia" and "preeclampsia" are one key, as are
  post-/peri-/para-/pseudo-/hyper-/hypo-/anti-/intra-/extra-/sub-/inter-/retro-/endo-/micro-/macro-/
  poly-/multi- + a word. "non" is not joined: it is a discriminator of the overlap tier ("non-Hodgkin").
* **State words** (``state_free``): "exacerbation", "flare", "flare-up", "decompensated" /
  "decompensation" and an "acute exacerbation of" prefix name a state of the same disease ("COPD
  exacerbation" is COPD, "acute decompensated heart failure" is heart failure), so a form without them is
  added. "attack" only for asthma, gout and migraine: "heart attack" (MI), "panic attack" (not panic
  disorder) and "transient ischemic attack" keep it. "acute-on-chronic" is not dropped: "acute on chronic
  kidney disease" is an acute kidney injury, a different diagnosis from the chronic disease.

Ward shorthand ("rhabdo", "afib", "mini-stroke", "strep throat") is curated data: synonym groups in
``data/diagnosis_synonyms.yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

# (pattern on one token, replacement): British -> American, anchored to the word part that differs
_SPELLING_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"haem", "hem"),
        (r"aemia(s?)$", r"emia\1"),
        (r"aemic$", "emic"),
        (r"^oe(?=[dsn])", "e"),  # oedema, oesophagus, oestrogen, oenophile
        (r"(rh|pn)oea(l?)$", r"\1ea\2"),  # diarrhoea, gonorrhoea, dyspnoea, apnoea, diarrhoeal
        (r"^paed", "ped"),
        (r"(?<=ortho)paed", "ped"),
        (r"^aet", "et"),  # aetiology
        (r"^(c|f)aec", r"\1ec"),  # caecum, faecal
        (r"gynaec", "gynec"),
        (r"ischaem", "ischem"),
        (r"anaes", "anes"),
        (r"^foet", "fet"),
        (r"^coel", "cel"),
        (r"amoeb", "ameb"),
        (r"(?<=[a-z]{3})our(s?)$", r"or\1"),  # tumour, humour, tumours (not "four", "hour")
        (r"sulph", "sulf"),
        (r"isation(s?)$", r"ization\1"),
        (r"^(fib|cent|lit|calib)re(s?)$", r"\1er\2"),
    )
)
_JOINED_PREFIXES = frozenset(
    {
        "pre", "post", "peri", "para", "pseudo", "hyper", "hypo", "anti", "intra", "extra", "sub", "inter",
        "retro", "endo", "micro", "macro", "poly", "multi",
    }
)  # fmt: skip
_STATE_WORDS = frozenset(
    {"exacerbation", "exacerbations", "flare", "flares", "decompensated", "decompensation"}
)
_ATTACK_DISEASES = frozenset({"asthma", "asthmatic", "gout", "gouty", "migraine"})
_FLARE_UP = re.compile(r"\bflare up\b")
_ACUTE_EXACERBATION_OF = re.compile(r"^(?:acute )?(?:exacerbation|flare|decompensation) of ")


_UNCOUNTABLE = frozenset(
    """diabetes herpes measles mumps rabies scabies rickets shingles tetanus caries series species lupus
    pemphigus mellitus insipidus syphilis hives lues yaws sepsis ascites stasis bends piles aids sars mers
    ards always various tabes pubes feces faeces varices testes menses biceps triceps forceps axis pelvis
    abscess""".split()
)
_PLURAL_ENDINGS_KEPT = ("ss", "us", "is", "os", "ics", "eas")


@lru_cache(maxsize=65536)
def singular(token: str) -> str:
    """A plural noun made singular ("stones" -> "stone", "allergies" -> "allergy", "crises" -> "crisis",
    "arrhythmias" -> "arrhythmia"); names that end in s (measles, diabetes, herpes, sepsis...) are kept."""
    if len(token) <= 4 or token in _UNCOUNTABLE or token.endswith(_PLURAL_ENDINGS_KEPT):
        return token
    if token.endswith("ies"):
        return token[:-3] + "y"
    if token.endswith(("sses", "eases")):  # abscesses, diseases
        return token[:-2] if token.endswith("sses") else token[:-1]
    if token.endswith(("oses", "ases", "ises", "yses")):  # psychoses, metastases, crises, paralyses
        return token[:-2] + "is"
    if token.endswith("as"):
        return token[:-1] if token.endswith(("ias", "mas", "nas", "las")) else token
    return token[:-1] if token.endswith("s") else token


@lru_cache(maxsize=65536)  # 19 patterns per token; a vocabulary has few distinct tokens
def american(token: str) -> str:
    """One token with its British spelling made American (the rules above)."""
    for pattern, replacement in _SPELLING_RULES:
        token = pattern.sub(replacement, token)
    return token


def join_prefixes(tokens: Sequence[str]) -> list[str]:
    """Tokens with a detached prefix joined to the next word ("pre", "eclampsia" -> "preeclampsia")."""
    out: list[str] = []
    skip = False
    for i, tok in enumerate(tokens):
        if skip:
            skip = False
            continue
        if tok in _JOINED_PREFIXES and i + 1 < len(tokens) and tokens[i + 1].isalpha():
            out.append(tok + tokens[i + 1])
            skip = True
        else:
            out.append(tok)
    return out


def state_free(key: str) -> str | None:
    """The key without words naming a state of the same disease, or None when it has none."""
    text = _ACUTE_EXACERBATION_OF.sub("", _FLARE_UP.sub("flare", key))
    tokens = text.split()
    kept = [
        t
        for i, t in enumerate(tokens)
        if t not in _STATE_WORDS
        and not (t in ("attack", "attacks") and any(w in _ATTACK_DISEASES for w in tokens[:i]))
        and not (t == "of" and i == 0)
    ]
    if kept and kept[0] == "acute" and len(tokens) != len(kept):  # "acute exacerbation": the acute goes too
        kept = kept[1:]
    result = " ".join(kept)
    return result if result and result != key else None
