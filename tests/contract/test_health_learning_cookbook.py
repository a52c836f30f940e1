"""The health and learning assistant recipes run offline, as a user would start them, and print
the answers they promise."""

from __future__ import annotations

import re

import pytest
from cookbook_runner import run_recipe


@pytest.mark.slow
def test_health_assistant_answers_from_each_kind_of_memory() -> None:
    out = run_recipe("health_assistant.py", "--offline")
    run, now, nutrients, week, breakfast = out.split("Q: ")[1:6]
    assert "'last Wednesday' as Wed 17 Jan" in run
    assert run.split("\n")[2].endswith("2024-01-17  Ran 5 km along the river in 31 minutes.")
    assert "A: Last Wednesday (17 January) you ran 5 km" in run
    assert "recall: Latest heart rate reading (current heart rate): 76 bpm at 09:25" in now
    assert "A: 76 bpm at 09:25 (normal), from mem.sensors.latest()" in now
    assert nutrients.split("\n")[1].split("  ", 2)[2].startswith("Vegetarians often lack vitamin B12")
    assert "A: Vegetarians most often lack vitamin B12" in nutrients
    average = re.search(r"average (\d+\.\d) bpm over (\d+) readings", week)
    assert average is not None and 60 <= float(average.group(1)) <= 100
    assert "highest 151 bpm (Wed 07:30)" in week and "steps: 56,800 in total" in week
    assert "from 07:10 to 07:40 on 2024-01-17 (UTC): 4 readings, peak 151 bpm at 07:30." in week
    assert "user] For breakfast today I had oatmeal with soy milk and a banana." in breakfast


@pytest.mark.slow
def test_learning_assistant_prints_the_report() -> None:
    out = run_recipe("learning_assistant.py", "--offline")
    assert "study time 2.1 hours, 4 questions, 3 notes, 1 document(s)" in out
    assert "strengths: Backpropagation;" in out
    assert (
        "- [high] Attention Mechanism: never asked about or took notes on it -> Study: Self-Attention, "
        "Multi-Head Attention" in out
    )
    assert re.search(r"- \[high\] Encoder: learned 4 days ago, not reviewed \(retention ~\d+%\)", out)
    assert "(phrased by offline scripted model: llm)" in out
    assert "Overview: You asked 4 questions and wrote 3 notes this week." in out
    assert '"questions_asked": 4' in out
