"""Where and how to ask an LLM: one mapping (``judge_llm``, ``generation_llm`` ...) checked into ``LLMSettings``.

The mapping holds the endpoint (``backend``, ``base_url``, ``model_id``, ``api_key``) or a pool of
them (``endpoints``: each with ``base_url``, ``model_id``, ``api_key``, ``max_concurrency`` and an
optional ``weight``), the model's kind (``reasoning``, ``structured_output``, ``embedding_model``),
the client's limits (``timeout``, ``max_retries``, ``max_workers``; a pool's ``drain_after`` and
``cool_down``) and, where a server offers it, ``mode: batch`` with the Batch API's limits. A server
passes the name its users know the mapping by, so every error message names that setting.

The judge's panel keys (``temperature``, ``samples``, ``jury``, ``jury_aggregate``, ``jury_min``) say how
often and by which models each item is judged: ``jury`` members are different models, each a mapping like a
pool entry (``JURY_MEMBER_KEYS``) that inherits every other key; ``LLMSettings.members()`` lists the
models that judge (``ultra_llm.panel`` runs them). A server whose parameter.yaml lacks them refuses them
(``complete_mapping``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ultra_base.errors import InputError, shown
from ultra_base.variable_counts import recorded, total, whole_count

BACKENDS = ("openai", "local")
MODES = ("online", "batch")
ENDPOINT_KEYS = ("backend", "base_url", "model_id", "api_key", "reasoning", "structured_output", "embedding_model",
                 "tokenizer")  # fmt: skip
LIMIT_KEYS = ("timeout", "max_retries", "max_workers")
POOL_KEYS = ("endpoints", "drain_after", "cool_down")
BATCH_KEYS = ("mode", "batch_max_requests", "batch_max_bytes", "batch_poll_interval", "batch_completion_window")
PANEL_KEYS = ("temperature", "samples", "jury", "jury_aggregate", "jury_min")
LLM_KEYS = frozenset(ENDPOINT_KEYS + LIMIT_KEYS + POOL_KEYS + BATCH_KEYS + PANEL_KEYS)
JURY_MEMBER_KEYS = ("base_url", "model_id", "api_key", "endpoints", "max_workers", "reasoning", "structured_output",
                    "tokenizer")  # fmt: skip
MODEL_OWN_KEYS = ("base_url", "model_id", "api_key", "endpoints", "tokenizer")  # a jury member does not inherit them
JURY_AGGREGATES = ("majority", "mean", "median")
POOL_ENTRY_KEYS = ("base_url", "model_id", "api_key", "max_concurrency", "weight")
# Retry pacing is the client's own policy, not a user setting; tests shorten it.
BACKOFF_BASE = 0.5
BACKOFF_MAX = 30.0


@dataclass(frozen=True)
class Endpoint:
    """One server of a pool: where it is, the name it serves the model under, and how much it takes at once."""

    base_url: str
    model_id: str
    api_key: str = field(repr=False)
    max_concurrency: int
    weight: float = 1.0

    def public(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("api_key")
        data["max_concurrency"] = recorded(data["max_concurrency"])  # one read from ${VAR} by its name
        return data


@dataclass(frozen=True)
class BatchLimits:
    """``mode: batch``: the Batch API's per-batch limits, the polling pace and the completion window."""

    max_requests: int
    max_bytes: int
    poll_interval: float
    completion_window: str


@dataclass(frozen=True)
class LLMSettings:
    """A checked LLM mapping: endpoint(s), model kind, client limits and mode."""

    model_id: str
    base_url: str
    api_key: str = field(repr=False)
    backend: Literal["openai", "local"]
    reasoning: bool
    structured_output: bool
    embedding_model: str
    timeout: float
    max_retries: int
    max_workers: int
    backoff_base: float = BACKOFF_BASE
    backoff_max: float = BACKOFF_MAX
    # A pool (empty: the one endpoint above); drain_after 0 never drains an endpoint.
    endpoints: tuple[Endpoint, ...] = ()
    drain_after: int = 0
    cool_down: float = 0.0
    mode: Literal["online", "batch"] = "online"
    batch: BatchLimits | None = None
    # The panel: None = each request's own temperature; a jury of other models' settings; samples per item.
    temperature: float | None = None
    jury: tuple[LLMSettings, ...] = ()
    jury_aggregate: str = "majority"
    jury_min: int = 2
    samples: int = 1
    tokenizer: str = ""  # the model's tokenizer.json (or its folder): ultra run --estimate counts prompt tokens with it

    @classmethod
    def from_mapping(cls, mapping: Any, *, name: str, **pacing: float) -> LLMSettings:
        """Check ``mapping`` (the setting called ``name``); unknown, missing or bad keys raise InputError.

        ``backend``, ``api_key``, ``reasoning``, ``structured_output``, ``embedding_model`` and ``tokenizer``
        may be left out (openai, none, off, off, the chat model, none); ``model_id`` and the limits may not. The local
        backend always has structured output (it decodes under the schema: ``local_schema``), so it is on there. A
        non-empty ``endpoints`` list needs ``drain_after`` and ``cool_down``; ``mode: batch`` needs the
        ``batch_*`` keys. ``pacing`` sets ``backoff_base`` / ``backoff_max`` (tests).
        """
        if not isinstance(mapping, dict):
            raise InputError(f"{name} must be a mapping with keys {sorted(LLM_KEYS)}, got {type(mapping).__name__}")
        unknown = set(mapping) - LLM_KEYS
        if unknown:
            raise InputError(f"{name} has unknown keys {sorted(unknown)}; known keys: {sorted(LLM_KEYS)}")
        missing = [key for key in LIMIT_KEYS if mapping.get(key) is None]
        if missing:
            raise InputError(f"{name} needs {missing} (seconds per request, retries, requests in flight)")
        backend = mapping.get("backend") or "openai"
        if backend not in BACKENDS:
            raise InputError(f"{name}.backend must be one of {list(BACKENDS)}, got {backend!r}")
        retries, workers = (
            _count(mapping["max_retries"], f"{name}.max_retries"),
            _count(mapping["max_workers"], f"{name}.max_workers"),
        )
        try:
            timeout = float(mapping["timeout"])
        except (TypeError, ValueError):
            raise InputError(f"{name}.timeout must be a number of seconds, got {shown(mapping['timeout'])}") from None
        if not math.isfinite(timeout) or timeout <= 0:  # NaN passes no comparison: it would time out every request
            raise InputError(f"{name}.timeout must be a finite number of seconds > 0, got {shown(mapping['timeout'])}")
        if workers < 1 or retries < 0:
            raise InputError(f"{name}.max_workers must be >= 1 and {name}.max_retries >= 0")
        endpoints = _pool(mapping, name=name, workers=workers) if backend == "openai" else ()
        model_id = endpoints[0].model_id if endpoints else str(mapping.get("model_id") or "")
        base_url = str(mapping.get("base_url") or "")
        if backend == "openai" and not endpoints and not (model_id and base_url) and not mapping.get("jury"):
            raise InputError(
                f"{name} needs base_url and model_id for the openai backend (any OpenAI-compatible server)"
            )
        mode = mapping.get("mode") or "online"
        if mode not in MODES:
            raise InputError(f"{name}.mode must be one of {list(MODES)}, got {mode!r}")
        if mode == "batch" and backend != "openai":
            raise InputError(f"{name}.mode batch needs the openai backend (an endpoint with /v1/batches)")
        drain_after, cool_down = _drain(mapping, name=name) if len(endpoints) > 1 else (0, 0.0)
        panel = _panel(cls, mapping, name=name, **pacing)
        return cls(
            model_id=model_id,
            base_url=endpoints[0].base_url if endpoints else base_url,
            api_key=endpoints[0].api_key if endpoints else str(mapping.get("api_key") or ""),
            backend=backend,
            reasoning=bool(mapping.get("reasoning") or False),
            structured_output=backend == "local" or bool(mapping.get("structured_output") or False),
            embedding_model=str(mapping.get("embedding_model") or ""),
            tokenizer=str(mapping.get("tokenizer") or ""),
            timeout=timeout,
            max_retries=retries,
            max_workers=total([e.max_concurrency for e in endpoints]) if endpoints else workers,
            endpoints=endpoints,
            drain_after=drain_after,
            cool_down=cool_down,
            mode=mode,
            batch=_batch_limits(mapping, name=name) if mode == "batch" else None,
            **panel,
            **pacing,
        )

    def public(self) -> dict[str, Any]:
        """The settings as they may be written to a result: without the API keys."""
        data = asdict(self)
        data.pop("api_key")
        data.update({key: recorded(data[key]) for key in ("max_retries", "max_workers")})  # a ${VAR}'s by name
        data["endpoints"] = [endpoint.public() for endpoint in self.endpoints]
        data["jury"] = [member.public() for member in self.jury]
        return data

    def members(self) -> tuple[LLMSettings, ...]:
        """The models that judge each item: the jury's, or this one."""
        return self.jury or (self,)

    def pool(self) -> tuple[Endpoint, ...]:
        """The endpoints requests go to: the pool, or the one endpoint of ``base_url``."""
        if self.endpoints:
            return self.endpoints
        return (Endpoint(self.base_url, self.model_id, self.api_key, self.max_workers),)


def check_entry(entry: Any, where: str, keys: tuple[str, ...]) -> None:
    """Refuse a pool endpoint or jury member that is not a mapping of ``keys``."""
    if not isinstance(entry, dict):
        raise InputError(f"{where} must be a mapping with keys {list(keys)}")
    unknown = set(entry) - set(keys)
    if unknown:
        raise InputError(f"{where} has unknown keys {sorted(unknown)}; known keys: {list(keys)}")


def _pool(mapping: dict[str, Any], *, name: str, workers: int) -> tuple[Endpoint, ...]:
    """The checked ``endpoints`` list; every endpoint must serve the same model (results never depend on routing)."""
    entries = mapping.get("endpoints") or []
    if not isinstance(entries, list):
        raise InputError(f"{name}.endpoints must be a list of mappings with keys {list(POOL_ENTRY_KEYS)}")
    endpoints = []
    for i, entry in enumerate(entries):
        where = f"{name}.endpoints[{i}]"
        check_entry(entry, where, POOL_ENTRY_KEYS)
        model_id = str(entry.get("model_id") or mapping.get("model_id") or "")
        if not entry.get("base_url") or not model_id:
            raise InputError(f"{where} needs base_url and model_id ({name}.model_id is used when it has none)")
        capacity = _count(workers if entry.get("max_concurrency") is None else entry["max_concurrency"],
                          f"{where}.max_concurrency")  # fmt: skip
        try:
            weight = float(entry.get("weight", 1.0))
        except (TypeError, ValueError):
            raise InputError(f"{where}.weight must be a number, got {shown(entry.get('weight'))}") from None
        if capacity < 1 or not math.isfinite(weight) or weight <= 0:
            raise InputError(f"{where}.max_concurrency must be >= 1 and .weight > 0")
        # A key is sent only to the endpoint it is written for: an entry without api_key sends none.
        endpoints.append(Endpoint(str(entry["base_url"]), model_id, str(entry.get("api_key") or ""), capacity, weight))
    models = sorted({e.model_id for e in endpoints})
    if len(models) > 1:
        raise InputError(
            f"{name}.endpoints serve different models {models}: a pool serves one model, so that results "
            "(and the cache) do not depend on which endpoint answered"
        )
    return tuple(endpoints)


def _count(value: Any, what: str) -> int:
    """A limit as a whole number (one read from ``${VAR}`` keeps its name for ``public``), refused as
    ``ultra_kit.limits.caps.count`` refuses it before a step (``1.5``, ``true``, ``"3"``)."""
    return whole_count(value, what)


def _drain(mapping: dict[str, Any], *, name: str) -> tuple[int, float]:
    if mapping.get("drain_after") is None or mapping.get("cool_down") is None:
        raise InputError(f"{name} with several endpoints needs drain_after (failures in a row) and cool_down (s)")
    try:
        drain_after, cool_down = int(mapping["drain_after"]), float(mapping["cool_down"])
    except (TypeError, ValueError):
        raise InputError(f"{name}.drain_after and .cool_down must be numbers") from None
    if drain_after < 0 or not math.isfinite(cool_down) or cool_down < 0:
        raise InputError(f"{name}.drain_after and .cool_down must be >= 0 (.cool_down finite)")
    return drain_after, cool_down


def _batch_limits(mapping: dict[str, Any], *, name: str) -> BatchLimits:
    keys = BATCH_KEYS[1:]
    missing = [key for key in keys if mapping.get(key) in (None, "")]
    if missing:
        raise InputError(f"{name}.mode batch needs {missing}")
    try:
        limits = BatchLimits(
            int(mapping["batch_max_requests"]),
            int(mapping["batch_max_bytes"]),
            float(mapping["batch_poll_interval"]),
            str(mapping["batch_completion_window"]),
        )
    except (TypeError, ValueError):
        raise InputError(
            f"{name}.batch_max_requests, .batch_max_bytes and .batch_poll_interval must be numbers"
        ) from None
    if limits.max_requests < 1 or limits.max_bytes < 1024 or not 0 < limits.poll_interval < math.inf:
        raise InputError(f"{name}: batch_max_requests >= 1, batch_max_bytes >= 1024 and batch_poll_interval > 0")
    return limits


def _whole(value: Any, what: str, default: int) -> int:
    """A count of the panel (``samples``, ``jury_min``): a whole number, ``default`` when null; ``1.5``, ``true``,
    NaN or a string are refused, not rounded."""
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be a whole number, got {shown(value)}")
    return value


def _panel(cls: type[LLMSettings], mapping: dict[str, Any], *, name: str, **pacing: float) -> dict[str, Any]:
    """The checked panel keys (see the module): temperature, samples and the jury with its members' settings."""
    temperature = mapping.get("temperature")
    try:
        temperature = None if temperature in (None, "") else float(temperature)
    except (TypeError, ValueError):
        raise InputError(f"{name}.temperature must be a number between 0 and 2 (or null)") from None
    samples = _whole(mapping.get("samples"), f"{name}.samples", 1)
    jury_min = _whole(mapping.get("jury_min"), f"{name}.jury_min", 2)
    if temperature is not None and not 0 <= temperature <= 2:
        raise InputError(f"{name}.temperature must be between 0 and 2 (or null: each judge's own), got {temperature}")
    if samples < 1:
        raise InputError(f"{name}.samples must be >= 1, got {samples}")
    if samples > 1 and not (temperature or 0) > 0:
        raise InputError(
            f"{name}.samples {samples} needs {name}.temperature > 0: at temperature "
            f"{temperature if temperature is not None else 'null (the judges use 0)'} every sample is the same "
            "answer; set e.g. temperature: 0.7"
        )
    aggregate = mapping.get("jury_aggregate") or "majority"
    if aggregate not in JURY_AGGREGATES:
        raise InputError(f"{name}.jury_aggregate must be one of {list(JURY_AGGREGATES)}, got {aggregate!r}")
    entries = mapping.get("jury") or []
    if not isinstance(entries, list) or len(entries) == 1:
        raise InputError(
            f"{name}.jury must be a list of 2 or more members {{{', '.join(JURY_MEMBER_KEYS[:3])}}} (different "
            "models); [] for no jury (one member is judge_llm itself)"
        )
    if entries and not 1 <= jury_min <= len(entries):
        raise InputError(f"{name}.jury_min must be between 1 and the {len(entries)} members of {name}.jury")
    inherited = {k: v for k, v in mapping.items() if k not in (*PANEL_KEYS, *MODEL_OWN_KEYS)}
    jury = []
    for i, entry in enumerate(entries):
        where = f"{name}.jury[{i}]"
        check_entry(entry, where, JURY_MEMBER_KEYS)
        if not entry.get("model_id"):
            raise InputError(f"{where} needs a model_id (and base_url, or endpoints: a pool for this member)")
        # A key goes only to the member it is written for: a member without api_key sends none.
        member = {**inherited, "api_key": "", **entry, "temperature": temperature}
        jury.append(cls.from_mapping(member, name=where, **pacing))
    models = [member.model_id for member in jury]
    twice = sorted({m for m in models if models.count(m) > 1})
    if twice:
        raise InputError(
            f"{name}.jury names the model {twice} twice: jury members are different models (to spread one model "
            f"over several servers, give that member endpoints: a pool)"
        )
    return {"temperature": temperature, "jury": tuple(jury), "jury_aggregate": aggregate, "jury_min": jury_min,
            "samples": samples}  # fmt: skip
