"""Trial 11, finding 7: a folder ingest honours ``.gitignore`` and ``.octomemignore`` files,
always leaves tool folders (``node_modules/``, virtual environments) out, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.memory.sources import find_sources


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def js_project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    _write(proj, {
        ".gitignore": "dist/\n*.log.md\n/build\n",
        "README.md": "# App\nThe app sends invoices every Monday.\n",
        "docs/deploy.md": "# Deploy\nDeploys happen on Tuesdays only.\n",
        "docs/build/notes.md": "# Nested build\nNot anchored: read.\n",
        "build/out.md": "# Build output\nGenerated.\n",
        "dist/bundle.md": "# Bundle\nGenerated bundle readme.\n",
        "debug.log.md": "# Log\nnoise\n",
        "node_modules/left-pad/README.md": "# left-pad\nreadme of a dependency package\n",
        "src/__pycache__/x.txt": "cache\n",
        "env/pyvenv.cfg": "home = /usr/bin\n",
        "env/lib/notes.txt": "a vendored package's notes\n",
    })
    (proj / ".git").mkdir()
    return proj


def _names(root: Path, files: list[Path]) -> set[str]:
    return {f.relative_to(root).as_posix() for f in files}


def test_a_folder_ingest_leaves_out_what_gitignore_and_tool_folders_say(js_project: Path) -> None:
    ran = octomem(js_project, "ingest", ".")
    assert "added 3" in ran.out, ran.out
    assert "left out: 5 folders, 1 file in the folders (build/ (.gitignore), " in ran.err, ran.err
    assert "node_modules/ (a tool's folder)" in ran.err
    assert "env/ (a virtual environment)" in ran.err
    assert "dist/ (.gitignore)" in ran.err and "and 1 more)" in ran.err
    assert "--include-ignored reads them" in ran.err
    found = octomem(js_project, "search", "left-pad dependency readme").out
    assert "no hits" in found and "readme of a dependency" not in found


def test_include_ignored_reads_them_but_hidden_files(js_project: Path) -> None:
    (js_project / ".git" / "description.md").write_text("git's own\n")
    ran = octomem(js_project, "ingest", "--include-ignored", ".")
    assert "added 9" in ran.out, ran.out
    assert "left out" not in ran.err
    assert "left-pad" in octomem(js_project, "search", "left-pad dependency readme").out


def test_octomemignore_wins_over_gitignore_and_reads_a_tool_folder(js_project: Path) -> None:
    (js_project / ".octomemignore").write_text("!dist/\nnode_modules/*\n!node_modules/left-pad/\n"
                                               "!node_modules/\ndocs/deploy.md\n")
    files, _ = find_sources([js_project])
    assert _names(js_project, files) == {
        "README.md", "docs/build/notes.md", "dist/bundle.md", "node_modules/left-pad/README.md"}


def test_ignore_files_above_a_named_subfolder_apply_up_to_the_repository(js_project: Path,
                                                                         tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("docs/\n")  # above the repository: not read
    (js_project / "docs" / "dist").mkdir()
    (js_project / "docs" / "dist" / "x.md").write_text("# x\nbuilt\n")
    left_out: list[tuple[Path, str]] = []
    files, _ = find_sources([js_project / "docs"], left_out=left_out)
    assert _names(js_project, files) == {"docs/deploy.md", "docs/build/notes.md"}
    assert left_out == [(js_project / "docs" / "dist", str(js_project / ".gitignore"))]


def test_a_named_file_is_always_read(js_project: Path) -> None:
    ran = octomem(js_project, "ingest", "node_modules/left-pad/README.md")
    assert "added 1" in ran.out, ran.out
    assert "left-pad" in octomem(js_project, "search", "left-pad dependency readme").out


def test_a_relative_folder_below_an_ignore_file_is_matched(js_project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (js_project / "docs" / "dist").mkdir()
    (js_project / "docs" / "dist" / "x.md").write_text("# x\nbuilt\n")
    monkeypatch.chdir(js_project)
    files, _ = find_sources([Path("docs")])
    assert {f.as_posix() for f in files} == {"docs/deploy.md", "docs/build/notes.md"}


def _locked(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make ``folder`` behave as one without read and search permission (as for a user
    other than its owner: the tests may run as root, which reads everything)."""
    import os

    scandir, is_file = os.scandir, Path.is_file

    def no_listing(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
        if Path(os.fsdecode(path)).resolve() == folder.resolve():
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return scandir(path, *args, **kwargs)

    def no_search(self: Path) -> bool:
        if self.parent.resolve() == folder.resolve():
            raise PermissionError(13, "Permission denied", str(self))
        return is_file(self)

    monkeypatch.setattr(os, "scandir", no_listing)
    monkeypatch.setattr(Path, "is_file", no_search)


@pytest.mark.parametrize("include_ignored", [False, True])
def test_a_folder_that_cannot_be_listed_is_skipped_named_and_the_rest_stored(
        js_project: Path, monkeypatch: pytest.MonkeyPatch, include_ignored: bool) -> None:
    locked = js_project / "docs" / "lockeddir"
    _write(js_project, {"docs/lockeddir/a.md": "# Locked\nThe puffin count is secret.\n"})
    _locked(monkeypatch, locked)
    ran = octomem(js_project, "ingest", *(["--include-ignored"] if include_ignored else []),
                  "docs", ok=False)
    assert ran.code == 1 and "added 2" in ran.out, (ran.out, ran.err)
    assert ran.err.endswith("error: 1 folder in the folders skipped for an error (each noted "
                            "above as skipped:); the rest was stored\n"), ran.err
    assert "skipped: docs/lockeddir/: cannot be read (Permission denied)" in ran.err, ran.err
    assert "pyvenv.cfg" not in ran.err
    assert "Tuesdays" in octomem(js_project, "search", "deploys Tuesdays").out


def test_the_mcp_ingest_lists_a_folder_that_cannot_be_listed_under_skipped(
        js_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from octomem.engine.memory.ingest import ingest_groups

    locked = js_project / "docs" / "lockeddir"
    _write(js_project, {"docs/lockeddir/a.md": "# Locked\nThe puffin count is secret.\n"})
    _locked(monkeypatch, locked)
    skipped: list[tuple[Path, str]] = []
    groups = ingest_groups("docs", js_project, roots=[js_project], skipped=skipped)
    assert sorted(d.title for d in groups[0]) == ["Deploy", "Nested build"]
    assert skipped == [(locked, f"{locked}/: cannot be read (Permission denied)")]
