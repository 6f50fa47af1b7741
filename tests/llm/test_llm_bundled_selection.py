"""The words `eko doctor` and the serve banner use for the active local model."""

from __future__ import annotations

from pathlib import Path

from eko.llm.bundled import describe_local_model, switch_hint


def test_the_bundled_default_is_named_with_its_licence_and_the_others_offered() -> None:
    name = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert describe_local_model(name, None) == (
        "qwen2.5-coder-1.5b-instruct-q4_k_m (instruction-tuned, 1.1 GB, best answers; Apache-2.0)"
    )
    hint = switch_hint(name, None)
    assert "EKO_LOCAL_MODEL=qwen2.5-coder-0.5b-instruct-q4_k_m or gemma-3-270m-q4_k_m" in hint
    assert f"={name}" not in hint  # not offered as a switch to itself
    assert "EKO_LOCAL_MODEL_PATH" in hint


def test_a_configured_file_wins_and_the_hint_says_how_to_go_back() -> None:
    path = Path("/models/mine.gguf")
    assert describe_local_model("gemma-3-270m-q4_k_m", path) == (
        "/models/mine.gguf (EKO_LOCAL_MODEL_PATH)"
    )
    assert switch_hint("gemma-3-270m-q4_k_m", path).startswith(
        "switch: unset EKO_LOCAL_MODEL_PATH for a bundled model"
    )
