"""A deterministic scan for text addressed to an LLM grader ("prompt injection"), after normalisation.

Text shown to a judge (the case and the response under judgement) is scanned before any call. It is first
normalised so that cheap evasions do not hide it: NFKC (full-width and mathematical letters become plain
ones), invisible characters removed (zero-width space / non-joiner / joiner U+200B-U+200D, word joiner
U+2060, BOM U+FEFF, soft hyphen U+00AD, Mongolian vowel separator U+180E, invisible operators
U+2061-U+2064), Cyrillic and Greek homoglyphs of Latin letters folded to Latin (``CONFUSABLES``: a small
hand-made map of the letters that look alike in common fonts; the Unicode ``confusables.txt`` packages
add a dependency for thousands of pairs that an attack on a Latin-script pattern does not need), accents
stripped (so the Spanish, French and German patterns need no accented variants), case folded, runs of
whitespace made one space. Chinese text is matched as it is (NFKC only).

The patterns (``INJECTION_PATTERNS``, name -> regex on the normalised text) cover English instructions
to the grader, a verdict written out (quoted ``"grade":`` or unquoted ``grade: 5`` / ``score = 10`` /
``criteria_met: true``), and "ignore the previous instructions" / "you are the grader" / "give it a 5" in
Spanish, French, German, Portuguese, Italian and Chinese. Dosing text ("give 5 mg", "dale 5 ml") and
clinical scales ("Power 5/5", "grade 5 chondrosarcoma", "GCS score 15") are not flagged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

INVISIBLE = dict.fromkeys(
    map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"), None
)
# Cyrillic and Greek letters drawn like a Latin letter (lower and upper case), folded to that letter.
CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏвкмнтАВЕКМНОРСТХУІЈЅ"  # Cyrillic
    "αοερτυνικχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",  # Greek
    "aeopcyxijsdqwhlbkmhtABEKMHOPCTXYIJSaoeptuvikxABEZHIKMNOPTYX",
)

_UNITS = (
    r"(?!\s*(?:mg|mcg|ug|g|kg|ml|l|units?|iu|%|mmol|meq|tablets?|tabs?|capsules?|doses?|puffs?|drops?"
    r"|times|x|days?|hours?|hrs?|h|minutes?|mins?|weeks?|months?|years?|percent|lit(?:er|re)s?"
    r"|unidades|gotas|dosis|comprimidos|gouttes|comprimes|tropfen|tabletten|einheiten)\b)"
)
_GRADER = r"(?:judge|grader|evaluator|assessor|rater)"
_OBJECT = r"(?:this|it|me|us|the (?:response|answer|output)|this (?:response|answer|output))"
_INSTRUCTIONS = (
    r"(?:instrucciones|instructions|consignes|anweisungen|instruktionen|anordnungen|befehle|istruzioni"
    r"|instrucoes|indicaciones|regeln|reglas|regles|regole|regras)"
)
_EARLIER = (
    r"(?:anteriores|previas|precedentes|anterieures|vorherigen|bisherigen|obigen|fruheren|vorigen"
    r"|precedenti|previe|anteriori)"
)
_GRADER_FOREIGN = (
    r"(?:evaluador(?:a)?|calificador(?:a)?|juez|correcteur|correctrice|evaluateur|evaluatrice|juge|notateur"
    r"|bewerter(?:in)?|prufer(?:in)?|richter(?:in)?|gutachter(?:in)?|valutatore|giudice|avaliador(?:a)?)"
)
INJECTION_PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern)
    for name, pattern in {
        "ignore_instructions": r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?"
        r"(?:the\s+|your\s+|these\s+|those\s+)?(?:previous\s+|prior\s+|above\s+|earlier\s+|grading\s+)?"
        r"(?:rubric|instructions?|criteria|criterion|rules|prompt|grading|(?:grading|scoring)\s+guidelines)\b",
        "previous_instructions": r"\b(?:previous|prior|above|earlier)\s+instructions\b",
        "give_top_grade": r"\bgive\s+(?:" + _OBJECT + r"\s+)?(?:a\s+)?(?:5|five)\b" + _UNITS,
        "give_full_marks": r"\b(?:give|assign|award)\s+(?:" + _OBJECT + r"\s+)?(?:a\s+|the\s+)?"
        r"(?:full\s+marks|perfect\s+(?:score|grade|rating)|(?:maximum|highest|top|max)\s+(?:score|grade|rating|marks?))",
        "grade_me": r"\b(?:grade|score|rate|mark)\s+"
        + _OBJECT
        + r"\s+(?:as\s+|a\s+|at\s+|with\s+)?(?:5|five)\b",
        "you_are_the_judge": r"\byou\s+are\s+(?:now\s+)?(?:the|a|an)\s+" + _GRADER + r"\b",
        "addresses_the_grader": r"\b(?:dear|attention|note\s+to\s+(?:the\s+)?|hey|to\s+the)\s*"
        r"(?:llm\s+)?(?:judge|grader|evaluator|assessor|rater)s?\b",
        "grader_must": r"\b(?:judge|grader|evaluator|rater)s?\b[^.\n]{0,30}\b(?:must|should|shall|will)\s+"
        r"(?:give|assign|award|rate|score|grade|output|answer|respond|mark)\b",
        "system_prompt": r"\bsystem\s+prompt\b",
        "new_instructions": r"\b(?:new|updated)\s+instructions?\s*:",
        "forged_verdict": r"[\"'](?:grade|criteria_met|equivalent|injection)[\"']\s*:",
        # A verdict written out without quotes: "grade: 5", "score = 10", "criteria_met: true", at the start
        # of the text, after punctuation or a grader's word ("final grade: 5"); not "Apgar score: 10",
        # "5/5", "5-6", "5.5", "5 mg".
        "unquoted_verdict": r"(?:^|[^\w\s]\s*"
        r"|\b(?:final|overall|your|my|suggested|deserved|correct|judge|grader)\s+)"
        r"(?:grade|score|rating)\s*[:=]\s*(?:5|10|100)(?![\w./+-])" + _UNITS,
        "unquoted_flag": r"\b(?:criteria_met|equivalent|injection)\s*[:=]\s*(?:true|false)\b",
        "mark_all_met": r"\bmark\s+(?:all|every|each)\s+(?:the\s+)?(?:criteria|criterion|items?)\b",
        # Other languages (accents stripped): "ignora las instrucciones anteriores", "ignorez les
        # instructions precedentes", "ignoriere alle vorherigen Anweisungen", "ignora le istruzioni
        # precedenti", "ignore as instrucoes anteriores"; "olvida / oublie / vergiss ... instructions".
        "ignore_instructions_foreign": r"\b(?:ignora|ignorar|ignore|ignorez|ignorer|ignoriere|ignorieren"
        r"|ignoriert|ignori|olvida|olvide|olviden|olvidar|oublie|oubliez|oublier|vergiss|vergesst|vergessen"
        r"|missachte|dimentica|dimenticare|esqueca|esquece|desconsidera|desconsidere|descarta)\s+"
        r"(?:(?:todas|todos|las|los|tus|sus|toutes|tous|les|vos|tes|alle|die|deine|ihre|tutte|tutti|le|tue"
        r"|as|os|suas|seus)\s+|" + _EARLIER + r"\s+){0,3}" + _INSTRUCTIONS + r"\b",
        "previous_instructions_foreign": r"\b"
        + _INSTRUCTIONS
        + r"\s+"
        + _EARLIER
        + r"\b|\b"
        + _EARLIER
        + r"\s+"
        + _INSTRUCTIONS
        + r"\b",
        "you_are_the_judge_foreign": r"\b(?:eres|tu\s+es|vous\s+etes|du\s+bist|sie\s+sind|sei|voce\s+e)\s+"
        r"(?:ahora\s+|maintenant\s+|jetzt\s+|ora\s+|agora\s+)?(?:el|la|un|una|le|l'|der|die|ein|eine|il|lo|o|a)"
        r"\s*" + _GRADER_FOREIGN + r"\b",
        "give_top_grade_foreign": r"\b(?:dale|dele|asigna(?:le)?|ponle|donne(?:z|-lui)?|attribue(?:z)?|gib"
        r"|vergib|assegna|assegnagli)\s+(?:\w+\s+){0,2}?(?:(?:un|una|une|eine|um|uma)\s+)?"
        r"(?:5|cinco|cinq|funf|cinque)\b" + _UNITS,
        "ignore_instructions_zh": r"(?:忽略|无视|忽视|不要理会|無視|忽略掉)[^。\n]{0,8}"
        r"(?:指令|指示|说明|說明|提示|规则|規則|评分标准|評分標準)",
        "you_are_the_judge_zh": r"你(?:现在)?是(?:一个|一名)?(?:评分者|评分员|评委|裁判|评审|評分者|評審)",
        "give_top_grade_zh": r"(?:给|給|打)(?:这个|這個|它|我)?(?:回答|答案)?(?:满分|滿分|5分|五分)",
    }.items()
}


def normalize(text: str) -> str:
    """``text`` as the patterns see it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(INVISIBLE).translate(CONFUSABLES)
    stripped = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return " ".join(stripped.casefold().split())


def injection_matches(text: str) -> list[str]:
    """The names of the injection patterns found in ``text`` (deterministic, in pattern order)."""
    flat = normalize(text)
    return [name for name, pattern in INJECTION_PATTERNS.items() if pattern.search(flat)]


def injection_hits(texts: Mapping[str, str]) -> list[dict[str, str]]:
    """Every pattern found in each of ``texts`` (where -> text, e.g. ``case`` / ``response``), as
    ``{"pattern": name, "where": where}`` in (where, pattern) order."""
    return [
        {"pattern": name, "where": where} for where, text in texts.items() for name in injection_matches(text)
    ]
