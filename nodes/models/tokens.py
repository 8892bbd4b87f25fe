"""Token counting for the context budget.

With an OpenAI model configured, tiktoken counts the model input when its encoding file is in
tiktoken's local cache (the setting ``tiktoken_cache_dir``: ``TIKTOKEN_CACHE_DIR``, else
``DATA_GYM_CACHE_DIR``, else the temporary folder's ``data-gym-cache``), loaded once when the
process opens its resources (``load_encoding``): counting never downloads it, so a closed network
never stalls a turn.
Otherwise LangChain's ``count_tokens_approximately`` estimates: one token per four characters of
text (tool calls included), plus four tokens of framing per message. Which of the two counts is
decided once per model a process. The estimate errs high for English text, so a budget trips early
rather than late.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import structlog
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

log = structlog.get_logger(__name__)

CHARS_PER_TOKEN = 4
FRAMING_TOKENS = 4


def _text(message: BaseMessage) -> str:
    text = str(message.content)
    calls = getattr(message, "tool_calls", None)
    return text + (str(calls) if calls else "")


def estimate_tokens(messages: Sequence[BaseMessage]) -> int:
    """The estimate: characters / 4 + 4 per message."""
    return count_tokens_approximately(
        messages, chars_per_token=CHARS_PER_TOKEN, extra_tokens_per_message=FRAMING_TOKENS
    )


ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
"""Where tiktoken fetches an encoding's file; its cache names the file by this address."""
_LOADED: dict[str, Any] = {}
"""The encodings loaded, by model: the models whose tokens tiktoken counts in this process."""


def cached_file(encoding_name: str, cache_dir: str | None) -> Path:
    """Where tiktoken keeps ``encoding_name``'s file once it has fetched it."""
    url = ENCODING_URL.format(name=encoding_name)
    key = hashlib.sha1(url.encode(), usedforsecurity=False).hexdigest()
    return Path(cache_dir or Path(tempfile.gettempdir()) / "data-gym-cache") / key


@lru_cache(maxsize=8)
def load_encoding(model_name: str | None, cache_dir: str | None = None) -> bool:
    """Decide once whether tiktoken counts ``model_name``'s tokens: only when its encoding file
    is in tiktoken's cache ``cache_dir`` (then it is loaded now: it reads files, so call this off
    the event loop). Nothing is ever fetched.
    """  # noqa: D205
    if not model_name:
        return False
    import tiktoken

    try:
        name = tiktoken.encoding_name_for_model(model_name)
    except KeyError:
        name = "o200k_base"
    if not cached_file(name, cache_dir).is_file():
        log.warning("tiktoken_not_cached", model=model_name, encoding=name, counting="estimate")
        return False
    try:
        _LOADED[model_name] = tiktoken.get_encoding(name)
    except Exception as exc:  # a damaged cache file: the estimate, decided once
        log.warning("tiktoken_unavailable", model=model_name, error=type(exc).__name__)
        return False
    return True


def fits(messages: Sequence[BaseMessage], budget: int, model_name: str | None = None) -> bool:
    """``messages`` take at most ``budget`` tokens.

    A bound from their length settles it without counting while they are far below: no token is
    shorter than a byte (tiktoken) or than a quarter of a character (the estimate), and the bound
    allows each message twice its length and framing.
    """
    length = sum(len(_text(m).encode("utf-8", "surrogatepass")) for m in messages)
    if 2 * (length + FRAMING_TOKENS * len(messages)) <= budget:
        return True
    return count_tokens(messages, model_name) <= budget


def count_tokens(messages: Sequence[BaseMessage], model_name: str | None = None) -> int:
    """Tokens of ``messages`` for ``model_name`` (tiktoken, when ``load_encoding`` loaded it), or
    the estimate.
    """  # noqa: D205
    encoding = _LOADED.get(model_name) if model_name else None
    if encoding is None:
        return estimate_tokens(messages)
    return sum(len(encoding.encode(_text(m))) + FRAMING_TOKENS for m in messages)
