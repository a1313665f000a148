"""Clinical scope and drug vocabulary of the guard: which actions are outside scope, which name a drug.

Scope (``data/scope_terms.yaml``, cardiopulmonary by default): an action is **out of scope** when its
text names an ``out_of_scope`` term and no ``in_scope`` term ("Refer to oncology for chemotherapy" is
out; "Hold chemotherapy, start heparin for the PE" is in). Drugs: a list of common cardiopulmonary and
general drugs plus the generic-name stems of drug classes (WHO INN stems: -pril, -sartan, -olol...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from clineval.cds.guard.terms import TermIndex
from clineval.core.helpers.safe_yaml import safe_load

# WHO International Nonproprietary Names stems (WHO/EMP/RHT/TSN/2018.1) of common drug classes.
DRUG_SUFFIXES: tuple[str, ...] = (
    "pril", "sartan", "olol", "alol", "parin", "statin", "dipine", "xaban", "gatran", "grel",
    "teplase", "plase", "arone", "semide", "thiazide", "tiazide", "gliflozin", "gliptin", "glutide",
    "terol", "tropium", "sonide", "casone", "olone", "mycin", "micin", "cillin", "cycline", "floxacin",
    "penem", "azole", "prazole", "tidine", "triptan", "coxib", "profen", "vir", "mab", "tinib",
    "zepam", "zolam", "barbital", "caine", "dronate", "lukast", "phylline",
)  # fmt: skip

DRUG_TERMS: tuple[str, ...] = (
    "aspirin", "clopidogrel", "ticagrelor", "prasugrel", "heparin", "unfractionated heparin",
    "enoxaparin", "dalteparin", "fondaparinux", "warfarin", "apixaban", "rivaroxaban", "dabigatran",
    "edoxaban", "alteplase", "tenecteplase", "streptokinase", "metoprolol", "bisoprolol", "carvedilol",
    "atenolol", "propranolol", "labetalol", "esmolol", "ramipril", "lisinopril", "enalapril",
    "perindopril", "losartan", "valsartan", "candesartan", "sacubitril", "spironolactone",
    "eplerenone", "dapagliflozin", "empagliflozin", "atorvastatin", "rosuvastatin", "simvastatin",
    "ezetimibe", "nitroglycerin", "glyceryl trinitrate", "GTN", "isosorbide", "furosemide",
    "bumetanide", "torsemide", "hydrochlorothiazide", "indapamide", "amlodipine", "nifedipine",
    "diltiazem", "verapamil", "amiodarone", "digoxin", "adenosine", "atropine", "flecainide",
    "dronedarone", "ivabradine", "hydralazine", "noradrenaline", "norepinephrine", "adrenaline",
    "epinephrine", "dobutamine", "dopamine", "vasopressin", "milrinone", "salbutamol", "albuterol",
    "ipratropium", "tiotropium", "salmeterol", "formoterol", "budesonide", "fluticasone",
    "beclomethasone", "montelukast", "theophylline", "aminophylline", "magnesium sulfate",
    "magnesium sulphate", "prednisolone", "prednisone", "methylprednisolone", "hydrocortisone",
    "dexamethasone", "amoxicillin", "co-amoxiclav", "clarithromycin", "azithromycin", "doxycycline",
    "ceftriaxone", "cefuroxime", "piperacillin", "tazobactam", "meropenem", "vancomycin",
    "levofloxacin", "moxifloxacin", "gentamicin", "metronidazole", "oseltamivir", "morphine",
    "fentanyl", "paracetamol", "acetaminophen", "ibuprofen", "naproxen", "insulin", "metformin",
    "calcium gluconate", "calcium chloride", "sodium bicarbonate", "potassium chloride",
    "sodium zirconium cyclosilicate", "patiromer", "calcium resonium", "lidocaine",
    "nicotine replacement", "varenicline", "acetazolamide", "colchicine", "iron", "antibiotic",
    "antibiotics", "anticoagulant", "anticoagulation", "antiplatelet", "beta blocker", "ACE inhibitor",
    "diuretic", "statin", "nitrate", "vasopressor", "inotrope", "bronchodilator", "steroid",
    "corticosteroid", "thrombolytic", "thrombolysis", "fibrinolytic", "chemotherapy", "sertraline",
    "fluoxetine", "citalopram", "olanzapine", "quetiapine", "haloperidol", "lithium",
)  # fmt: skip

MEDICATION_CATEGORIES = frozenset({"medication", "medications", "drug", "prescription", "pharmacotherapy"})


@dataclass(frozen=True, slots=True)
class Scope:
    """An in-scope and an out-of-scope term index (one clinical scope)."""

    name: str
    in_scope: TermIndex
    out_of_scope: TermIndex

    @classmethod
    def from_data(cls, data: Mapping[str, Any], *, origin: str = "<data>") -> Scope:
        inside = data.get("in_scope") or []
        outside = data.get("out_of_scope") or []
        if not isinstance(inside, list) or not isinstance(outside, list) or not outside:
            raise ValueError(f"{origin}: a scope needs lists 'in_scope' and (non-empty) 'out_of_scope'")
        return cls(
            str(data.get("name") or "custom"), TermIndex(map(str, inside)), TermIndex(map(str, outside))
        )

    @classmethod
    def load(cls, path: str | Path | None = None) -> Scope:
        """The packaged cardiopulmonary scope (``path`` None) or the scope of a YAML file."""
        if path is None:
            text = (
                resources.files("clineval.cds.guard").joinpath("data", "scope_terms.yaml").read_text("utf-8")
            )
            origin = "clineval/cds/guard/data/scope_terms.yaml"
            return cls.from_data(safe_load(text, path="scope_terms.yaml"), origin=origin)
        return cls.from_data(safe_load(Path(path).read_bytes(), path=path), origin=str(path))

    def offending_terms(self, text: str) -> list[str]:
        """The out-of-scope terms ``text`` names, or [] when it names none or also names an in-scope one."""
        outside = self.out_of_scope.find(text)
        if not outside or self.in_scope.names(text):
            return []
        return outside


DEFAULT_SCOPE = Scope.load()
DRUGS = TermIndex(DRUG_TERMS, suffixes=DRUG_SUFFIXES)


def drugs_named(action: str, category: str | None, drugs: TermIndex = DRUGS) -> list[str]:
    """The drugs an action names; ``["(category medication)"]`` if it names none but is a medication."""
    found = drugs.find(action)
    if not found and category is not None and category.strip().lower() in MEDICATION_CATEGORIES:
        return [f"(category {category})"]
    return found
