"""A task's ``dataset.files_url`` -> local files, and the files the compiled pipeline reads besides them.

``file://`` paths resolve against the job file's folder and must lie inside the folders tools may
read; ``hf://`` is refused (this project never downloads a dataset). A BEIR task's qrels TSV (with
NeMo's header ``query-id corpus-id score``) becomes a TREC qrels file; a SQuAD task's paragraphs
become the retrieval corpus, each question judged relevant to its own paragraph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultra_base.errors import InputError, confined_reads, readable_path
from ultra_client.compat.nemo.job import Task
from ultra_client.errors import UltraError
from ultra_kit.files import atomic_write_text, compact_json
from ultra_kit.readers import SizeLimit, read_csv, read_json
from ultra_kit.settings import defaults

QRELS_HEADER = ("query-id", "corpus-id", "score")
# RAGAS columns, before 0.2 and from 0.2 on: our variable -> the column names it may have
RAGAS_KEYS = {
    "q_ls": ("question", "user_input"),
    "ctx_ls": ("contexts", "retrieved_contexts"),
    "pred_ls": ("answer", "response"),
    "gt_ls": ("ground_truths", "ground_truth", "reference"),
}


@dataclass
class TaskData:
    """What the pipeline reads: the dataset for ``get_data`` and, for retrieval, a corpus and TREC qrels."""

    path: Path  # benchmark.path
    format: str  # benchmark.format
    key_map: dict[str, str]
    corpus: Path | None = None  # retriever.corpus_path (None: the task retrieves nothing)
    qrels: Path | None = None  # evaluation.qrels_path
    provides: set[str] = field(default_factory=set)  # of: answers, reference, contexts, qrels
    files: dict[Path, str] = field(default_factory=dict)  # what ``write_files`` writes, once the job compiled

    def write_files(self) -> None:
        """Write the derived files (TREC qrels, a SQuAD corpus)."""
        for path, text in self.files.items():
            atomic_write_text(path, text)


def local_path(task: Task, job_file: Path) -> Path:
    """The local file or folder of ``files_url``, checked to be inside the read roots."""
    url, where = task.files_url, f"{job_file}: {task.where}.dataset.files_url"
    if url.startswith("hf://"):
        raise UltraError(
            f"{where}: {url!r} is on the Hugging Face Hub; this project never downloads datasets. Download it "
            "yourself (e.g. `huggingface-cli download --repo-type dataset NAME --local-dir DIR`) and point files_url "
            'at the local copy: "file://DIR" (relative to the job file\'s folder) or "file:///absolute/DIR"'
        )
    if not url.startswith("file://"):
        raise UltraError(f"{where}: {url!r}: expected file://PATH (a local file or folder)")
    raw = Path(url.removeprefix("file://")).expanduser()
    path = raw if raw.is_absolute() else job_file.resolve().parent / raw
    try:
        with confined_reads():
            readable_path(path, setting=f"{task.where}.dataset.files_url")
    except InputError as exc:
        raise UltraError(f"{job_file}: {exc}") from None
    if not path.exists():
        raise UltraError(f"{where}: {path} does not exist")
    return path


def prepare(task: Task, job_file: Path, folder: Path) -> TaskData:
    """Check the task's dataset; the files the pipeline needs besides it are to be written into ``folder``."""
    source = local_path(task, job_file)
    try:
        return {"beir": _beir, "squad": _squad, "ragas": _ragas}[task.type](source, folder)
    except InputError as exc:
        raise UltraError(f"{job_file}: {task.where}.dataset: {exc}") from None


def dataset_limit() -> SizeLimit:
    """The bytes a dataset file read here may have: the benchmark server's ``max_bytes`` (the limit ``get_data``
    reads the same files within), from its parameter.yaml."""
    return SizeLimit(
        defaults("benchmark")["benchmark"]["max_bytes"],
        "benchmark.max_bytes",
        where="in servers/benchmark/parameter.yaml: a NeMo job's dataset is read within it when compiled and run",
    )


def _beir(source: Path, folder: Path) -> TaskData:
    if not source.is_dir():
        raise InputError("a beir task names a folder with corpus.jsonl, queries.jsonl and qrels/", path=str(source))
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (source / name).is_file():
            raise InputError(f"the BEIR folder has no {name}", path=str(source))
    splits = sorted((source / "qrels").glob("*.tsv"))
    chosen = [p for p in splits if p.stem == "test"] or splits
    if len(chosen) != 1:
        found = [p.name for p in splits]
        raise InputError(f"expected qrels/test.tsv (or a single qrels/*.tsv); found {found}", path=str(source))
    rows = read_csv(chosen[0], delimiter="\t", max_bytes=dataset_limit())
    if not rows or tuple(rows[0]) != QRELS_HEADER:
        header = "<TAB>".join(QRELS_HEADER)
        raise InputError(f"expected the header row {header} and judgments below it", path=str(chosen[0]))
    lines = []
    for number, row in enumerate(rows, start=2):
        if not row["score"].lstrip("-").isdigit():
            raise InputError("the score is not an integer", path=str(chosen[0]), line=number)
        lines.append(f"{row['query-id']} 0 {row['corpus-id']} {int(row['score'])}\n")
    qrels = folder / "qrels.trec"
    key_map = {"q_ls": "question", "id_ls": "id"}
    return TaskData(source, "beir", key_map, source / "corpus.jsonl", qrels, {"qrels"}, {qrels: "".join(lines)})


def _single_json(source: Path) -> Path:
    if source.is_dir():
        files = sorted(source.glob("*.json"))
        if len(files) != 1:
            raise InputError(f"expected one .json file in the folder, found {len(files)}", path=str(source))
        return files[0]
    return source


def _squad(source: Path, folder: Path) -> TaskData:
    source = _single_json(source)
    data = read_json(source, max_bytes=dataset_limit())
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise InputError("expected SQuAD JSON: an object with a 'data' list", path=str(source))
    passages: list[dict[str, Any]] = []
    qrels: list[str] = []
    for a, article in enumerate(data["data"]):
        for p, paragraph in enumerate(article.get("paragraphs") or [] if isinstance(article, dict) else []):
            docid = f"p{a}_{p}"
            passages.append({"id": docid, "title": article.get("title") or "", "text": paragraph.get("context") or ""})
            for q, qa in enumerate(paragraph.get("qas") or []):
                if not isinstance(qa, dict) or not qa.get("id"):
                    raise InputError(f"data[{a}].paragraphs[{p}].qas[{q}] has no 'id'", path=str(source))
                qrels.append(f"{qa['id']} 0 {docid} 1\n")
    if not qrels:
        raise InputError("the SQuAD file holds no question", path=str(source))
    corpus, qrels_path = folder / "corpus.jsonl", folder / "qrels.trec"
    files = {corpus: "".join(compact_json(p) + "\n" for p in passages), qrels_path: "".join(qrels)}
    key_map = {"q_ls": "question", "id_ls": "id", "gt_ls": "answers"}
    return TaskData(source, "squad", key_map, corpus, qrels_path, {"qrels", "reference"}, files)


def _ragas(source: Path, folder: Path) -> TaskData:
    source = _single_json(source)
    data = read_json(source, max_bytes=dataset_limit())
    columns = set(data) if isinstance(data, dict) else set(data[0]) if isinstance(data, list) and data else set()
    key_map = {}
    for variable, names in RAGAS_KEYS.items():
        found = next((name for name in names if name in columns), None)
        if found:
            key_map[variable] = found
    if "q_ls" not in key_map:
        found = sorted(columns)
        raise InputError(f"RAGAS JSON needs a 'question' or 'user_input' column; found {found}", path=str(source))
    provides = {kind for kind, variable in (("answers", "pred_ls"), ("reference", "gt_ls"), ("contexts", "ctx_ls"))
                if variable in key_map}  # fmt: skip
    return TaskData(source, "ragas", key_map, provides=provides)
