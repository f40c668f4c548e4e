"""A fake that declares, in its ``start`` answer, the capabilities of protocol 1.1: it is called
only between complete rounds and its framework keeps the system prompt outside the list
(SPEC Part A, Declarations), and a trigger of 20 messages. It returns every history unchanged."""

from __future__ import annotations

from typing import Any

from _fake import Request, hello, serve


def start(request: Request) -> dict[str, Any]:
    answer = hello("declares")
    answer["capabilities"] |= {"called": "between_rounds", "system_prompt": "outside", "trigger": {"messages": 20}}
    return answer


serve("declares", lambda request: {"seq": request["seq"], "messages": request["messages"]}, on_start=start)
