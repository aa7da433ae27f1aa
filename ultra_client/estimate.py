"""``ultra run --estimate``: what a run would ask its LLMs and cost, without asking them.

The pipeline runs with ``ultra_llm``'s estimate mode on (``ultra_llm.estimate``): every tool renders
its real prompts and reads the answer cache, but a request the cache cannot answer is written to a
ledger instead of being sent, and the tool gets a stand-in reply (below). Per LLM step:

- requests: the distinct requests the cache could not answer (a request asked twice, or by an
  earlier step, counts once: the real run answers it from the cache);
- tokens in: for a model of the local backend, or one whose LLM mapping names a ``tokenizer``, counted
  with that tokenizer; else the characters of the rendered messages divided by the characters per
  token of the answers the same cache holds for the model (calibrated), else 4 per token (an
  approximation, said so); the cost's low-high takes -20 % / +25 % of an approximate count;
- tokens out: the mean reply of the cached answers to the same prompt (calibrated), the low end; the
  request's ``max_tokens`` budget, the high end;
- cost: low and high, priced with ``ultra_llm.prices`` per model ("unknown" for a model without a price).

An unsent request gets a stand-in reply (``ultra_llm.standins``: another model's cached answer to the
same request, else a cached answer to a like one, else a placeholder), so the requests a tool makes from
its replies (nuggets scored after they are created) and the steps after an LLM step are counted too. A
count that follows placeholders, in the step or in a step its inputs come from, is marked ``~`` and the
notes say why. Result files go to a scratch folder; no file a setting names is written from stand-ins
(``ultra_llm.estimate``), so a step that reads one may be "not estimated", with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.variable_counts import STAND_IN
from ultra_client.errors import UltraError
from ultra_client.pipeline.dataflow import tool_for
from ultra_client.pipeline.model import ToolStep
from ultra_client.pipeline.runner import Memory, Runner
from ultra_client.summary.costs import asked_no_model, usage_in
from ultra_llm.estimate import (
    DEFAULT_CHARS_PER_TOKEN,
    ESTIMATE_ENV,
    cache_rows,
    chars_per_token,
    read_ledger,
    typical_reply,
)
from ultra_llm.prices import dollars, models_of, price_of

IN_LOW, IN_HIGH = 0.8, 1.25  # the range around an approximate count of prompt tokens


@dataclass
class StepEstimate:
    """One LLM step's predicted requests, tokens and cost, and what the prediction rests on."""

    step: str
    model: str
    requests: int = 0
    chars: int = 0
    tokens_in: int = 0
    tokens_out_low: int = 0
    tokens_out_high: int | None = 0
    cost_low: float | None = None
    cost_high: float | None = None
    counted: bool = False  # tokens in counted with the model's own tokenizer (a local model), not approximated
    guessed: bool = False  # the request count follows placeholder replies: a guess
    notes: list[str] = field(default_factory=list)


class EstimateRunner(Runner):
    """A runner whose LLM steps write their requests to ``ledger`` instead of sending them."""

    def __init__(self, *args: Any, ledger: Path, **kwargs: Any) -> None:
        super().__init__(*args, echo=False, **kwargs)
        self.ledger = ledger
        self.offset = 0
        self.seen: set[str] = set()
        self.estimates: list[StepEstimate] = []
        self.guessing: dict[str, str] = {}  # step -> the step whose placeholder replies its outputs rest on

    async def run_steps(self, steps: list[Any], memory: Memory) -> Memory:
        """Each step in turn; a loop or branch that cannot run without answers leaves its LLM steps unestimated."""
        for step in steps:
            try:
                memory = await step.run(self, memory)
            except UltraError as exc:
                done = {e.step for e in self.estimates}
                for inner in step.tool_steps():
                    if inner.name not in done and self._models(inner):
                        note = f"not estimated: {str(exc).splitlines()[0]}"
                        self.estimates.append(StepEstimate(inner.name, ", ".join(self._models(inner)), notes=[note]))
        return memory

    def _models(self, step: ToolStep) -> list[str]:
        server = self.settings.get(step.server, {})
        info = tool_for(self.pipeline, step, self.tools)
        return models_of({name: server[name] for name in info.settings if name in server})

    async def call(self, step: ToolStep, memory: Memory) -> Memory:
        origins = self._placeholder_origins(step, memory)
        stopped = ""
        try:
            outputs = await super().call(step, memory)
        except UltraError as exc:
            outputs, stopped = {}, str(exc).splitlines()[0]
        records, self.offset = read_ledger(self.ledger, self.offset)
        records = self._first_asked(records)
        models = self._models(step)
        if any(r.get("standin") == "placeholder" for r in records):
            origins.append(step.name)
        if origins:
            self.guessing[step.name] = origins[0]
        usage = usage_in(outputs)
        if not records and not stopped and usage is not None and asked_no_model(usage):
            return outputs  # an offline judge (judge.toxicity): it would ask no model, so no row (as in a run's)
        if records or models:
            estimate = step_estimate(step.name, models, records)
            if stopped and not records:
                estimate.cost_low = estimate.cost_high = None
                estimate.notes.append(f"not estimated: {stopped}")
            elif stopped:
                estimate.notes.append(f"stopped: {stopped}; the requests it would make after this are not counted")
            _note_standins(estimate, records, origins)
            self.estimates.append(estimate)
        return outputs

    def _first_asked(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records of requests no earlier record asked (a request asked again is answered by the cache)."""
        fresh = []
        for record in records:
            if record["key"] not in self.seen:
                self.seen.add(record["key"])
                fresh.append(record)
        return fresh

    def _placeholder_origins(self, step: ToolStep, memory: Memory) -> list[str]:
        """The steps with placeholder replies that the variables ``step`` reads come from."""
        info = tool_for(self.pipeline, step, self.tools)
        read = [step.inputs.get(name, name) for name in info.variables]
        producers = [self.producers.get(variable) for variable in read if variable in memory]
        return list(dict.fromkeys(self.guessing[p] for p in producers if p in self.guessing))


def step_estimate(step: str, models: list[str], records: list[dict[str, Any]]) -> StepEstimate:
    """The step's estimate: each model's requests (a jury's members, an embeddings model) counted and priced
    on their own, then added up."""
    if not records:
        return StepEstimate(step, ", ".join(models) or "?", cost_low=0.0, cost_high=0.0)
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["model"], []).append(record)
    parts = [_model_estimate(step, model, group) for model, group in groups.items()]
    total = StepEstimate(step, " + ".join(groups), requests=len(records), counted=all(p.counted for p in parts))
    for part in parts:
        total.chars += part.chars
        total.tokens_in += part.tokens_in
        total.tokens_out_low += part.tokens_out_low
        total.notes += [note for note in part.notes if note not in total.notes]
    highs = [p.tokens_out_high for p in parts]
    total.tokens_out_high = None if None in highs else sum(highs)  # type: ignore[arg-type]
    lows, tops = [p.cost_low for p in parts], [p.cost_high for p in parts]
    total.cost_low = None if None in lows else sum(lows)  # type: ignore[arg-type]
    total.cost_high = None if None in tops else sum(tops)  # type: ignore[arg-type]
    return total


def _model_estimate(step: str, model: str, fresh: list[dict[str, Any]]) -> StepEstimate:
    """Tokens and cost of one model's unsent requests, calibrated on the cache they were asked with."""
    estimate = StepEstimate(step, model, requests=len(fresh), chars=sum(r["chars"] for r in fresh))
    rows = cache_rows(fresh[0]["cache"], model.removeprefix("local:"))
    if not rows and (rows := cache_rows(fresh[0]["cache"], None)):  # another model's answers calibrate too
        estimate.notes.append("tokens calibrated on the cached answers of other models")
    if all(isinstance(r.get("tokens"), int) for r in fresh):
        estimate.tokens_in = sum(r["tokens"] for r in fresh)  # the model's own tokenizer: exact
        estimate.counted = True
    else:
        ratio = chars_per_token(rows)
        if ratio is None:
            ratio = DEFAULT_CHARS_PER_TOKEN
            estimate.notes.append(f"tokens in approximated at {ratio:g} characters per token (no cache)")
        estimate.tokens_in = round(estimate.chars / ratio)
    high: int | None = 0
    for record in fresh:
        typical = typical_reply(rows, record["prompt"])
        estimate.tokens_out_low += round(typical) if typical is not None else 1
        budget = record["max_tokens"] or (round(typical) if typical is not None else None)
        high = None if high is None or budget is None else high + budget
    estimate.tokens_out_high = high
    price = price_of(model)
    if price is not None:
        estimate.cost_low = price.cost(estimate.tokens_in * IN_LOW, estimate.tokens_out_low)
        estimate.cost_high = price.cost(estimate.tokens_in * IN_HIGH, high) if high is not None else None
    return estimate


async def estimate_run(
    pipeline_file: str, param_file: str | None, timeout: float | None, stdio: bool, gate: list[Any]
) -> list[StepEstimate]:
    """Run the pipeline in estimate mode; its LLM steps' estimates. The ``gate`` conditions' variables are
    checked as ``ultra run`` checks them (a gate is judged only after a real run). A NeMo job is compiled and
    built first, as ``ultra run`` does, and its pipeline estimated."""
    from ultra_client.building import build
    from ultra_client.calls import locate
    from ultra_client.calls.described import described_servers
    from ultra_client.calls.server_pool import ServerPool, parameter_references, server_parameters
    from ultra_client.compat.nemo import compile_if_job
    from ultra_client.pipeline.model import load_pipeline, require_file
    from ultra_client.pipeline.params import expand_settings, parameter_path, read_parameter_file
    from ultra_client.pipeline.setting_checks import setting_kinds

    job = compile_if_job(pipeline_file, param_file)
    if job is not None:
        job.export_secrets()
        await build(str(job.pipeline), stdio)
        pipeline_file, param_file = str(job.pipeline), str(job.parameters)
    pipeline = load_pipeline(require_file(pipeline_file))
    target = Path(param_file) if param_file else parameter_path(pipeline.path)
    if not target.is_file():
        raise UltraError(f"{target}: no parameter file; run `ultra build {pipeline_file}` first")
    locations = locate.pipeline_locations(pipeline, stdio)
    known = {location.alias: server_parameters(location) for location in locations}
    raw = read_parameter_file(target, list(pipeline.servers), known)
    scratch = Path(tempfile.mkdtemp(prefix="ultra-estimate-"))
    ledger = scratch / "requests.jsonl"
    before = os.environ.get(ESTIMATE_ENV)
    os.environ[ESTIMATE_ENV] = str(ledger)  # before the servers start: a stdio server inherits it
    unset = _stand_in_unset_variables(raw)  # nothing is sent, so a key need not be set
    try:
        (scratch / "logs").mkdir()
        described = described_servers(locations)  # stdio servers: checked on their SPECs, before any starts
        if described is not None:
            _check(pipeline, described, raw, target, gate)
        async with ServerPool(locations, scratch / "logs", parameter_references(target), target) as pool:
            if described is None:
                _check(pipeline, pool, raw, target, gate)
            settings = {alias: expand_settings(values, target, kinds=setting_kinds(pool.servers.get(alias)))
                        for alias, values in raw.items()}  # fmt: skip
            runner = EstimateRunner(pipeline, pool, settings, default_timeout=timeout, ledger=ledger)
            await runner.run()
    finally:
        for name in unset:
            os.environ.pop(name, None)
        if before is None:
            os.environ.pop(ESTIMATE_ENV, None)
        else:
            os.environ[ESTIMATE_ENV] = before
        shutil.rmtree(scratch, ignore_errors=True)
    if unset and runner.estimates:
        sending = [e for e in runner.estimates if e.requests]  # recorded judgments and cached replies send nothing
        names = ", ".join(sorted(unset))
        (sending or runner.estimates)[0].notes.append(
            f"{names} not set: an estimate sends nothing, so it ran without; a run needs it"
            if sending
            else f"{names} not set: an estimate sends nothing, so it ran without; no step would send a request"
        )
    return runner.estimates


def _check(pipeline: Any, servers: Any, raw: dict[str, Any], target: Path, gate: list[Any]) -> None:
    """As ``ultra run`` checks before its first step, on the started pool or the servers' description
    (``ultra_client.calls.described``): the dataflow, the setting values (a bad one is an error, not a 0), the
    gate's variables."""
    from ultra_client.calls.locate import tool_table
    from ultra_client.gates.spec import check_gate_variables
    from ultra_client.pipeline.dataflow import check_dataflow, produced_variables
    from ultra_client.pipeline.setting_checks import check_setting_values

    check_dataflow(pipeline, tool_table(servers), raw)
    check_setting_values(servers.servers, target)
    check_gate_variables(gate, produced_variables(pipeline, tool_table(servers), raw))


def _stand_in_unset_variables(raw: dict[str, Any]) -> list[str]:
    """Set every ``${VAR}`` the parameter file names but the environment lacks to a stand-in value (for
    this process and the servers it starts); the names set, for the caller to remove afterwards."""
    from ultra_kit.settings import env_references

    unset = sorted(env_references(raw) - set(os.environ))
    for name in unset:
        os.environ[name] = STAND_IN
    return unset


def estimate_lines(estimates: list[StepEstimate]) -> list[str]:
    """The estimate as a table, a row per LLM step and the total, with the notes under it."""
    from ultra_base.redact import redact_text
    from ultra_client.summary.lines import align

    if not estimates:  # a retriever, an offline judge: nothing would be sent
        return ["estimate (nothing was sent): no step would ask a model; nothing to pay"]
    rows = [["step", "model", "requests", "tokens in", "tokens out", "cost"]]
    for e in estimates:
        out = f"{e.tokens_out_low}-{e.tokens_out_high if e.tokens_out_high is not None else '?'}"
        rows.append(
            [
                e.step,
                redact_text(e.model),  # a model id from a ${VAR} shows as ***
                f"{'~' if e.guessed else ''}{e.requests}",
                f"{'' if e.counted else '~'}{e.tokens_in}",
                out,
                _range(e.cost_low, e.cost_high),
            ]
        )
    lows = [e.cost_low for e in estimates]
    highs = [e.cost_high for e in estimates]
    total_low = None if None in lows else sum(lows)
    total_high = None if None in highs else sum(highs)
    sent = [e for e in estimates if e.requests]  # a step with nothing to send counts exactly
    guessed, approximate = any(e.guessed for e in sent), any(not e.counted for e in sent)
    requests, tokens = sum(e.requests for e in estimates), sum(e.tokens_in for e in estimates)
    rows.append(["total", "", f"{'~' if guessed else ''}{requests}", f"{'~' if approximate else ''}{tokens}", "",
                 _range(total_low, total_high)])  # fmt: skip
    lines = align(rows, [False, False, True, True, True, True])
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(-1, "-" * len(lines[0]))
    notes = [  # a note per line of at most 100 columns (a path or a word longer than that stays whole)
        line
        for e in estimates
        for note in e.notes
        for line in textwrap.wrap(
            f"{e.step}: {note}",
            width=100,
            initial_indent="  ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    ]
    head = "estimate (nothing was sent; tokens are approximate, cost is low-high):"
    return [head, *lines, *(["notes:", *notes] if notes else [])]


def _note_standins(estimate: StepEstimate, records: list[dict[str, Any]], origins: list[str]) -> None:
    """Say what stood in for the step's unsent replies, and mark a count that follows placeholders as a guess."""
    kinds = [r.get("standin") for r in records]
    shown = {"same": "the same request's cached answer from another model", "like": "a like request's cached answer",
             "placeholder": "a placeholder (nothing cached to stand in)"}  # fmt: skip
    parts = [f"{kinds.count(kind)} by {text}" for kind, text in shown.items() if kind in kinds]
    if parts:
        estimate.notes.append("replies stood in: " + "; ".join(parts))
    prompts_after: set[str] = set()  # prompts first asked after a placeholder reply to another prompt
    first = next((i for i, kind in enumerate(kinds) if kind == "placeholder"), None)
    if first is not None:
        before = {r["prompt"] for r in records[: first + 1]}
        prompts_after = {r["prompt"] for r in records[first:]} - before
    inherited = [origin for origin in origins if origin != estimate.step]
    if prompts_after or inherited:
        estimate.guessed = True
        why = (f"its inputs rest on placeholder replies of {', '.join(inherited)}" if inherited
               else "its later requests follow placeholder replies")  # fmt: skip
        estimate.notes.append(f"requests are a guess: {why}; a run (or a smaller run) first makes them exact")


def _range(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return "unknown"
    return f"{dollars(low)}-{dollars(high)}"
