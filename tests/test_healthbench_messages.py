"""HealthBench conversations reach the model as the reference sends them (issue 23 item 6).

openai/simple-evals ``healthbench_eval.py`` calls ``sampler(row["prompt"])``: the conversation's messages,
roles and contents unchanged; its ``ChatCompletionSampler`` puts its ``system_message`` first when it has
one ("You are a helpful assistant." for the chat models, temperature 0.5, max_tokens 2048). Here the
``openai`` system sends the case's conversation the same way (the prompt template adds only its system
message), ``conversation: text`` keeps the flattened single user message, judge prompts are unaffected,
the ``http`` system sends the conversation inside the case input, and the response cache key is the
request, messages included. The request bodies shown in docs/judging/tier4_judge.md are asserted here
verbatim.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from clineval.catalogue.build import task_mapping
from clineval.catalogue.entries import CATALOGUE
from clineval.catalogue.models import parse_model
from clineval.core import Case, CaseInput, DataFileError
from clineval.datasets import DATASETS
from clineval.systems import build_system, load_prompt
from clineval.systems.prompts import conversation_messages
from clineval.testing import Script
from tests.conftest import StartServer
from tests.helpers import shared_data

DOC = Path(__file__).resolve().parents[1] / "docs" / "judging" / "tier4_judge.md"
SAMPLE_ID = "6d5f483c-3e86-456d-bfd5-4e28de699ae5"  # 3 turns: "Act as a hematologist" ...
REFERENCE_SAMPLER = {"system_prompt": "You are a helpful assistant.", "temperature": 0.5, "max_tokens": 2048}


def healthbench_cases() -> list[Case]:
    path = shared_data("healthbench", "healthbench_oss_eval_first30.jsonl")
    return list(DATASETS.get("healthbench")({"path": str(path)}, Path(".")).cases)


def eval_system_options(base_url: str, **extra: Any) -> dict[str, Any]:
    """The openai system exactly as ``clineval eval healthbench --model openai/gpt-4.1`` builds it."""
    data = shared_data("healthbench").parent
    model = parse_model("openai/gpt-4.1", base_url)
    task = task_mapping(CATALOGUE["healthbench"], model, data, parse_model("openai/gpt-4.1-mini", base_url))
    system = {k: v for k, v in task["system"].items() if k != "type"}
    return {**system, **extra}


def send_all(options: dict[str, Any], cases: list[Case], srv: Any) -> list[dict[str, Any]]:
    """Call the system once per case; the request bodies as the server received them."""
    system = build_system("openai", options, Path("."))
    bodies: list[dict[str, Any]] = []

    async def go() -> None:
        await system.start(1)
        try:
            for case in cases:
                await system.call(case)
                bodies.append(srv.stats["last_request"])
        finally:
            await system.close()

    asyncio.run(go())
    return bodies


def documented_bodies() -> list[dict[str, Any]]:
    """The JSON request bodies shown in docs/judging/tier4_judge.md, section "What the model receives"."""
    section = DOC.read_text(encoding="utf-8").split("### What the model receives", 1)[1].split("\n#", 1)[0]
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", section, re.DOTALL)]


def test_every_conversation_is_sent_as_its_messages(start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0, answer_format="Take iron with vitamin C."))
    cases = healthbench_cases()
    bodies = send_all(eval_system_options(srv.base_url), cases, srv)
    assert len(bodies) == 30 and srv.stats["by_path"] == {"/v1/chat/completions": 30}
    for case, body in zip(cases, bodies, strict=True):
        turns = [{"role": t["role"], "content": t["content"]} for t in case.input.data["conversation"]]
        assert body["messages"] == turns  # roles and contents exactly, nothing added or merged
        assert body["model"] == "gpt-4.1" and body["temperature"] == 0.0
    # 9 of the 30 are multi-turn (3 to 9 messages, user and assistant alternating)
    multi = [b["messages"] for b in bodies if len(b["messages"]) > 1]
    assert len(multi) == 9 and max(len(m) for m in multi) == 9
    assert all([m["role"] for m in ms] == ["user", "assistant"] * (len(ms) // 2) + ["user"] for ms in multi)


def test_the_documented_request_bodies_are_what_is_sent(start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0))
    [case] = [c for c in healthbench_cases() if c.id == SAMPLE_ID]
    [as_eval] = send_all(eval_system_options(srv.base_url), [case], srv)
    [as_reference] = send_all(eval_system_options(srv.base_url, **REFERENCE_SAMPLER), [case], srv)
    assert documented_bodies() == [as_eval, as_reference]
    # the reference sampler's system message comes first, then the conversation unchanged
    assert as_reference["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    assert as_reference["messages"][1:] == as_eval["messages"]
    assert [m["role"] for m in as_eval["messages"]] == ["user", "assistant", "user"]


def test_a_template_system_block_is_put_first_and_text_mode_flattens(start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0))
    [case] = [c for c in healthbench_cases() if c.id == SAMPLE_ID]
    conversation = case.input.data["conversation"]
    options = {"base_url": srv.base_url, "model": "m", "prompt": "mcq_cot_v1"}
    [templated] = send_all(options, [case], srv)
    assert templated["messages"][0]["role"] == "system"
    assert "multiple-choice" in templated["messages"][0]["content"]
    assert templated["messages"][1:] == conversation
    [flat] = send_all({**eval_system_options(srv.base_url), "conversation": "text"}, [case], srv)
    assert flat["messages"] == [{"role": "user", "content": case.input.question}]
    assert flat["messages"][0]["content"].startswith("user: Act as a hematologist\n\nassistant: Sure!")


def test_cache_key_is_the_request_with_its_messages(start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0))
    system = build_system("openai", eval_system_options(srv.base_url), Path("."))
    [case] = [c for c in healthbench_cases() if c.id == SAMPLE_ID]
    conversation = case.input.data["conversation"]
    earlier_turn_changed = [{**conversation[0], "content": "Act as a cardiologist"}, *conversation[1:]]
    data = {**case.input.data, "conversation": earlier_turn_changed}
    changed = case.model_copy(update={"input": case.input.model_copy(update={"data": data})})
    assert system.cache_key(case) == system.cache_key(case.model_copy())
    assert system.cache_key(changed) != system.cache_key(case)  # only a non-final turn differs
    flat = build_system("openai", {**eval_system_options(srv.base_url), "conversation": "text"}, Path("."))
    assert flat.cache_key(case) != system.cache_key(case)


def test_judge_cases_are_rendered_by_their_template_not_sent_as_the_conversation() -> None:
    conversation = [{"role": "user", "content": "Is 39.5 C a fever?"}]
    judge_case = Case(
        id="c#judge0.0",
        input=CaseInput(
            data={"conversation": conversation, "response": "Yes.", "criterion": "Says yes", "points": 5}
        ),
    )
    assert conversation_messages(judge_case) is None
    messages = load_prompt("rubric_item_v1").render(judge_case)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Says yes" in messages[-1]["content"] and "Is 39.5 C a fever?" in messages[-1]["content"]


def test_a_malformed_conversation_turn_is_a_clear_error() -> None:
    bad = Case(id="x", input=CaseInput(data={"conversation": [{"role": "user"}], "send_conversation": True}))
    with pytest.raises(DataFileError, match="case x: a conversation turn should be"):
        conversation_messages(bad)


def test_http_system_sends_the_conversation_inside_the_case_input(start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0, answer_format="ok"))
    [case] = [c for c in healthbench_cases() if c.id == SAMPLE_ID]
    system = build_system("http", {"url": f"{srv.url}/predict"}, Path("."))

    async def go() -> None:
        await system.start(1)
        try:
            await system.call(case)
        finally:
            await system.close()

    asyncio.run(go())
    sent = srv.stats["last_request"]
    assert sent["id"] == SAMPLE_ID
    assert sent["input"]["data"]["conversation"] == case.input.data["conversation"]
    assert [t["role"] for t in sent["input"]["data"]["conversation"]] == ["user", "assistant", "user"]
    assert sent["input"]["data"]["send_conversation"] is True
