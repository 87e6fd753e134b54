"""Replies that cannot be misread: where the provider supports a JSON schema (litellm's
``supports_response_schema``), localization, the LLM judge and QA ask for one (issue 34 §3).

Why: free-form replies need parsers that guess ("1) 2950 2) 2951", "Correctness: 5/5 … Overall: 4"); a reply
under a schema says its ids, score or final answer in one field. The free-form reading stays for every model that
cannot (and for a structured reply that comes back malformed anyway): :func:`unwrap` turns a structured reply into
the text the free-form readers already read exactly (a JSON list of ids, ``Score: N``, the answer itself). Whether a
run asked for the structured form is recorded with it (``structured`` in a run's config, ``+schema`` on a
judgment's prompt version).
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

LOCALIZE, JUDGE, QA = "localize", "judge", "qa"
SCHEMAS: dict[str, dict[str, Any]] = {
    LOCALIZE: {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
               "required": ["ids"], "additionalProperties": False},
    JUDGE: {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 5},
                                             "reason": {"type": "string"}},
            "required": ["score", "reason"], "additionalProperties": False},
    QA: {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
         "additionalProperties": False},
}
SUFFIX = "+schema"  # on a judgment's prompt version: the judge was asked for its score under the schema


def response_format(kind: str) -> dict[str, Any]:
    """The OpenAI-style ``response_format`` litellm passes on (``json_schema``, strict)."""
    return {"type": "json_schema", "json_schema": {"name": f"emb_s_{kind}", "schema": SCHEMAS[kind], "strict": True}}


def supported(gateway: Any) -> bool:
    """Does this gateway's model take a JSON schema? False for the local plumbing check, for models litellm does
    not know, and where the caller already set its own ``response_format``."""
    if getattr(gateway, "is_local", False) or "response_format" in gateway.params:
        return False
    from emb_s_core.llm.gateway import load_litellm

    try:
        return bool(load_litellm().supports_response_schema(model=gateway.model))
    except Exception:  # an unknown provider or model: litellm cannot say, so the free-form reading is used
        return False


def asking(gateway: Any, kind: str) -> tuple[Any, bool]:
    """(a gateway whose calls ask for ``kind``'s schema, True) where the model supports it, else (the gateway,
    False). The copy shares the original's usage counters and response cache file."""
    if not supported(gateway):
        return gateway, False
    return dataclasses.replace(gateway, params={**gateway.params, "response_format": response_format(kind)},
                               usage=gateway.usage), True


def unwrap(kind: str, text: str | None) -> str | None:
    """A structured reply as the text the free-form readers read exactly: ``[3, 7]`` for localization, ``Score: 4``
    for the judge, the answer itself for QA; any other text (free-form, malformed JSON) unchanged."""
    try:
        data = json.loads(text or "")
    except (TypeError, ValueError):
        return text
    if not isinstance(data, dict):
        return text
    if kind == LOCALIZE and isinstance(data.get("ids"), list) and \
            all(isinstance(i, int) and not isinstance(i, bool) for i in data["ids"]):
        return json.dumps(data["ids"])
    if kind == JUDGE and isinstance(data.get("score"), int) and not isinstance(data["score"], bool):
        return f"Score: {data['score']}"
    if kind == QA and isinstance(data.get("answer"), str):
        return data["answer"]
    return text
