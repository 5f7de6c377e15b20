"""The ``anthropic`` backend: the official SDK behind the one-method model interface (DESIGN §6).

The SDK is imported inside the constructor, so nothing on the client or hook path pays for it.
``base_url`` points the same code at any server that speaks the Messages API: a proxy, a local
model server (Ollama ≥ 0.14, llama.cpp's ``llama-server``), the test fixture in
``tests/fake_anthropic.py``. ``docs/models.md`` has tested example configs.

What the daemon relies on:

- credentials: ``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN`` (sent as
  ``Authorization: Bearer``, what gateways and some local servers want). With ``base_url`` set
  neither is required: a local server needs no key, and then no credential header is sent at
  all. Against the default endpoint a missing key is a :class:`~memory.errors.ConfigError`.
  Neither value ever appears in an error message;
- errors come out as the product hierarchy, split by what to do about them: timeouts,
  connection failures, 408/409/429, 529 and other 5xx (after the SDK's own ``max_retries``)
  are :class:`~memory.errors.TransientError` (defer the job); 400/401/403/404 mean the model
  is misconfigured (:class:`~memory.errors.ModelMisconfigured`: a bad key, no such model, a
  request the server will never accept) and other 4xx and answers the SDK cannot parse are
  :class:`~memory.errors.PermanentError`;
- the answer is *not* judged here: text, tool calls and ``stop_reason`` are passed through
  as they came and the strict gate (``memory.model.answer_gate``) decides;
- prompt caching: the system prompt and the stable prefix of the user prompt
  (:func:`dreamd.models.prompts.split_for_cache`) carry ``cache_control: ephemeral``; a server
  that ignores it (and leaves the cache fields out of ``usage``) counts as zero cached tokens.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from dreamd.models.options import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_TIMEOUT,
    common_options,
    string,
)
from dreamd.models.prompts import split_for_cache
from memory.errors import ConfigError, ModelMisconfigured, PermanentError, TransientError
from memory.model.llm import Completion, ToolCall, Usage
from memory.textutil import one_line

API_KEY_ENV = "ANTHROPIC_API_KEY"
AUTH_TOKEN_ENV = "ANTHROPIC_AUTH_TOKEN"

_CACHE = {"type": "ephemeral"}
_TRANSIENT_STATUS = frozenset({408, 409, 429})
MISCONFIGURED_STATUS = frozenset({400, 401, 403, 404})
"""Statuses that say the model is set up wrong (key, permissions, model id, request shape):
the same call will be refused again, so they are neither retried nor judged as answers."""


def _api_message(exc: Any) -> str:
    """The server's own error message (``{"error": {"message": …}}``) when there is one."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return one_line(err["message"], 200)
    return one_line(getattr(exc, "message", "") or type(exc).__name__, 200)


class AnthropicModel:
    """:class:`memory.model.llm.Model` over the Messages API."""

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        base_url: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        environ = os.environ if env is None else env
        api_key = environ.get(API_KEY_ENV, "").strip()
        auth_token = "" if api_key else environ.get(AUTH_TOKEN_ENV, "").strip()
        if not api_key and not auth_token and not base_url:
            raise ConfigError(
                f'[model] backend = "anthropic" needs an API key: set the {API_KEY_ENV} '
                f"(or {AUTH_TOKEN_ENV}) environment variable (neither is set), or point "
                "[model] base_url at a server that needs none"
            )
        if not model.strip():
            raise ConfigError(
                f"[model] model: empty; name an Anthropic model id such as {DEFAULT_MODEL!r}"
            )
        import anthropic  # lazy: the client and hook paths never import the SDK

        self._anthropic = anthropic
        self.name = model
        self.max_tokens = max_tokens
        self.base_url = base_url
        self.credential = API_KEY_ENV if api_key else AUTH_TOKEN_ENV if auth_token else None
        """Which variable the credential came from (None: no credential sent)."""
        credentials: dict[str, Any]
        if api_key:
            credentials = {"api_key": api_key}
        elif auth_token:
            credentials = {"auth_token": auth_token}
        else:
            # A keyless local server: send no credential header at all (and do not let the
            # SDK go looking for one to send to a server that is not Anthropic's).
            omit = anthropic.Omit()
            credentials = {"default_headers": {"Authorization": omit, "X-Api-Key": omit}}
        self._client = anthropic.Anthropic(
            base_url=base_url or None,
            timeout=timeout,
            max_retries=max_retries,
            **credentials,
        )

    @classmethod
    def from_config(
        cls, section: Mapping[str, Any], *, env: Mapping[str, str] | None = None
    ) -> AnthropicModel:
        """From a ``[model]`` config section (missing keys take the documented defaults)."""
        opts = common_options(section)
        return cls(
            model=opts.model,
            base_url=string(section, "base_url", ""),
            timeout=opts.timeout,
            max_retries=opts.max_retries,
            max_tokens=opts.max_tokens,
            env=env,
        )

    def request(self, system: str, prompt: str, max_tokens: int) -> dict[str, Any]:
        """The Messages API request body for one call (exposed for tests and ``doctor``)."""
        stable, volatile = split_for_cache(prompt)
        content: list[dict[str, Any]] = []
        if stable:
            content.append({"type": "text", "text": stable, "cache_control": dict(_CACHE)})
        if volatile:
            content.append({"type": "text", "text": volatile})
        return {
            "model": self.name,
            "max_tokens": max_tokens,
            "system": [{"type": "text", "text": system, "cache_control": dict(_CACHE)}],
            "messages": [{"role": "user", "content": content}],
        }

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        """One call; the SDK retries transient failures ``max_retries`` times before we map them."""
        sdk = self._anthropic
        started = time.monotonic()
        try:
            response = self._client.messages.create(**self.request(system, prompt, max_tokens))
        except sdk.APITimeoutError:
            raise TransientError(
                f"model {self.name}: request timed out after {self._client.timeout}s "
                f"({self._client.max_retries} retries)"
            ) from None
        except sdk.APIConnectionError as exc:
            raise TransientError(
                f"model {self.name}: cannot connect to {self._client.base_url}: {_api_message(exc)}"
            ) from None
        except sdk.APIStatusError as exc:
            status = exc.status_code
            detail = _api_message(exc)
            if status in _TRANSIENT_STATUS or status >= 500:
                raise TransientError(f"model {self.name}: HTTP {status}: {detail}") from None
            if status in MISCONFIGURED_STATUS:
                raise ModelMisconfigured(self._misconfigured(status, detail)) from None
            raise PermanentError(f"model {self.name}: HTTP {status}: {detail}") from None
        except sdk.APIError as exc:
            raise PermanentError(
                f"model {self.name}: unusable API response ({type(exc).__name__}): {_api_message(exc)}"
            ) from None
        duration_ms = (time.monotonic() - started) * 1000.0
        return self._completion(response, duration_ms)

    def _misconfigured(self, status: int, detail: str) -> str:
        """What a refusal means for this setup, naming the thing to fix (never the key)."""
        where = self.base_url or "api.anthropic.com"
        if status in (401, 403):
            if self.credential is None:
                what = f"{where} wants a credential: set {API_KEY_ENV} or {AUTH_TOKEN_ENV}"
            elif status == 401:
                what = f"the credential in {self.credential} was refused (invalid or revoked)"
            else:
                what = f"the credential in {self.credential} lacks permission for this request"
        elif status == 404:
            what = f"no model {self.name!r} (or no such endpoint) at {where}; check [model] model and base_url"
        else:
            what = "the server refuses the request as malformed; check [model] model and max_tokens"
        return f"model {self.name}: HTTP {status}, {what}: {detail}"

    def _completion(self, response: Any, duration_ms: float) -> Completion:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in response.content or ():
            kind = getattr(block, "type", None)
            if kind == "text":
                texts.append(block.text)
            elif kind in ("tool_use", "server_tool_use"):
                calls.append(ToolCall(name=str(block.name), input=block.input))
        usage = response.usage
        return Completion(
            text="".join(texts),
            stop_reason=response.stop_reason,
            tool_calls=tuple(calls),
            usage=Usage(
                input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
                output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
                cache_read_input_tokens=int(getattr(usage, "cache_read_input_tokens", 0) or 0),
                cache_creation_input_tokens=int(
                    getattr(usage, "cache_creation_input_tokens", 0) or 0
                ),
            ),
            model=str(response.model or self.name),
            duration_ms=duration_ms,
        )
