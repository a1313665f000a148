"""The openai system's ``output: structured``: a chat reply holding a JSON object becomes a structured
output (a differential, a CDS recommendation), so `clineval eval` scores DDx and CDS tasks on chat models."""

from __future__ import annotations

from clineval.core.output import SystemOutput, Usage
from clineval.systems.openai_chat import json_reply

DIFF = (
    '{"differential": [{"diagnosis": "Pulmonary embolism", "reasoning": "pleuritic pain"}, '
    '{"diagnosis": "Pneumonia"}]}'
)


def test_bare_fenced_and_embedded_json_are_read() -> None:
    for text in (DIFF, f"```json\n{DIFF}\n```", f"Here is my answer:\n{DIFF}\nHope it helps."):
        out = json_reply(SystemOutput(text=text, usage=Usage(prompt_tokens=10)), "structured")
        assert out.structured is not None and out.structured.differential is not None
        assert [d.diagnosis for d in out.structured.differential] == ["Pulmonary embolism", "Pneumonia"]
        assert out.text == text and out.usage == Usage(prompt_tokens=10)  # the reply and its usage kept


def test_a_reply_without_a_json_object_stays_text() -> None:
    for text in ("I think it is a pulmonary embolism.", "{not json}", "[1, 2, 3]"):
        out = json_reply(SystemOutput(text=text), "structured")
        assert out.structured is None and out.text == text


def test_cds_recommendation() -> None:
    text = '{"recommended_actions": [{"action": "Start apixaban"}], "when_to_escalate": "Hypotension: ICU"}'
    out = json_reply(SystemOutput(text=text), "structured")
    assert out.structured is not None and out.structured.recommended_actions is not None
    assert out.structured.recommended_actions[0].action == "Start apixaban"
