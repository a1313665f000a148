"""The openai system's request body (issue 26: a live call's client CPU): msgspec writes it, ~10x faster
than json's encoder; the server reads the same JSON value json.dumps(..., ensure_ascii=False) wrote."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from clineval.core import Case, CaseInput, Reference
from clineval.systems import build_system
from clineval.systems.openai_chat import OpenAIChatSystem

QUESTIONS = [
    "A 45-year-old man has chest pain. Which drug?",
    'Quotes " and \\ backslashes, tabs\tand\nnew lines',
    "Unicode: µg/dL, β-blocker, 37 °C, “curly”, emoji 🫀, line separator \u2028 and NUL \x00",
]


def _system(tmp_path: Path, **options: Any) -> tuple[OpenAIChatSystem, list[Any]]:
    system = build_system("openai", {"base_url": "http://127.0.0.1:9/v1", "model": "m", **options}, tmp_path)
    assert isinstance(system, OpenAIChatSystem)
    sent: list[Any] = []

    async def post_json(
        url: str, payload: Any, headers: Mapping[str, str], *, secrets: Iterable[str] = ()
    ) -> Any:
        sent.append(payload)
        return {"choices": [{"message": {"content": "A"}}]}

    system._client.post_json = post_json  # type: ignore[method-assign]
    return system, sent


def _case(question: str) -> Case:
    options = {"A": "alpha é", "B": "beta", "C": "γ", "D": "delta"}
    return Case(id="1", input=CaseInput(question=question, options=options), reference=Reference(answer="A"))


@pytest.mark.parametrize("prompt", ["mcq_cot_v1", "mcq_select_v1"])
@pytest.mark.parametrize("options", [{}, {"temperature": 0.7, "max_tokens": 5, "seed": 2**70}])
def test_the_body_sent_is_the_json_of_the_request(
    tmp_path: Path, prompt: str, options: dict[str, Any]
) -> None:
    system, sent = _system(tmp_path, prompt=prompt, system_prompt="Be brief. ü", **options)
    for question in QUESTIONS:
        case = _case(question)
        asyncio.run(system.call(case))
        expected = json.dumps(system._body(system.messages(case)), ensure_ascii=False)
        assert isinstance(sent[-1], bytes)
        assert json.loads(sent[-1]) == json.loads(expected)


def test_a_body_msgspec_cannot_write_goes_to_json_as_before(tmp_path: Path) -> None:
    system, sent = _system(tmp_path)
    case = _case("a lone surrogate \ud800")
    asyncio.run(system.call(case))
    assert sent[-1] == system._body(system.messages(case))  # the dict: json's encoder fails on it, as it did
