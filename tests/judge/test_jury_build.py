"""Bad panel settings (``judge_llm.jury``, ``jury_min``, ``jury_aggregate``, ``samples``) are refused at
``ultra build``, naming the parameter file and the line, before any step runs; a good jury builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ultra

MEMBERS = """\
    jury:
      - {base_url: http://a.example/v1, model_id: judge-a, api_key: "${A_KEY}"}
      - {base_url: http://b.example/v1, model_id: judge-b, api_key: "${B_KEY}"}
"""


def built(tmp_path: Path, judge_llm: str) -> tuple[int, str, Path]:
    pipeline = tmp_path / "jury.yaml"
    pipeline.write_text("servers:\n  judge: servers/judge\npipeline:\n  - judge.umbrela_judge\n", encoding="utf-8")
    params = tmp_path / "parameters" / "jury_parameter.yaml"
    params.parent.mkdir(exist_ok=True)
    params.write_text("judge:\n  judge_llm:\n    api_key: ${OPENAI_API_KEY}\n" + judge_llm, encoding="utf-8")
    done = run_ultra("build", str(pipeline), cwd=ROOT, env={"OPENAI_API_KEY": ""})
    return done.returncode, done.stderr, params


@pytest.mark.parametrize(
    ("judge_llm", "line", "message"),
    [
        ("    jury:\n      - {base_url: http://a.example/v1, model_id: judge-a, api_key: '${A_KEY}'}\n", 4,
         "judge_llm.jury must be a list of 2 or more members"),
        (MEMBERS + "    jury_min: 3\n", 7, "judge_llm.jury_min must be between 1 and the 2 members"),
        (MEMBERS + "    jury_aggregate: mode\n", 7, "judge_llm.jury_aggregate must be one of"),
        ("    samples: 3\n", 4, "judge_llm.samples 3 needs judge_llm.temperature > 0"),
        ("    temperature: 0\n    samples: 3\n", 5, "judge_llm.samples 3 needs judge_llm.temperature > 0"),
    ],
)  # fmt: skip
def test_ultra_build_refuses_bad_panel_settings_at_file_and_line(tmp_path, judge_llm, line, message) -> None:
    code, stderr, params = built(tmp_path, judge_llm)
    assert code == 1, stderr
    assert f"judge.judge_llm: {params}:{line}: {message}" in stderr


def test_ultra_build_accepts_a_good_jury_with_variables(tmp_path) -> None:
    code, stderr, params = built(tmp_path, MEMBERS + "    jury_aggregate: median\n    samples: 2\n"
                                 "    temperature: 0.7\n")  # fmt: skip
    assert code == 0, stderr
    assert "${A_KEY}" in params.read_text(encoding="utf-8")  # the variables stay variables
