"""In a git repository without a memory yet, the repository's top folder is the project
(trial 17 G5: the first write from ``repo/src/deep/`` made that subfolder the project, and a
write from ``repo/`` then started a second memory), and the write that creates a store says
where it is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.project import find_project_root


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository ``repo/`` with the empty folder ``repo/src/deep/``."""
    top = tmp_path / "repo"
    (top / "src" / "deep").mkdir(parents=True)
    _git("init", "-q", cwd=top)
    return top


def test_the_first_write_from_a_subfolder_creates_the_memory_at_the_repository_top(
        repo: Path) -> None:
    deep = repo / "src" / "deep"
    status = octomem(deep, "status").out  # before any write: the repository's top
    assert status.startswith(f"project {repo}\n") and "that holds .git)" in status, status
    ran = octomem(deep, "add", "Tests run with make check", "--kind", "FACT")
    assert f"created {repo / '.octomem'} (the local scope)" in ran.err, ran.err
    assert f"note: the local scope is {repo / '.octomem'} (the nearest folder above {deep} " \
        "that holds .git)" in ran.err, ran.err
    assert not (deep / ".octomem").exists()
    again = octomem(repo, "add", "The repo uses pnpm", "--kind", "FACT")
    assert "created" not in again.err, again.err  # the same store: nothing new
    assert sorted(repo.rglob("octomem.sqlite3")) == [repo / ".octomem" / "octomem.sqlite3"]
    assert "Tests run with make check" in octomem(repo, "search", "how do tests run?").out
    assert "that holds .octomem/)" in octomem(deep, "status").out


def test_a_memory_already_in_a_subfolder_is_still_found_there(repo: Path) -> None:
    sub = repo / "src"
    octomem(sub, "--project-root", str(sub), "add", "Kept in src", "--kind", "FACT")
    assert find_project_root(sub / "deep") == sub.resolve()  # .octomem/ wins over .git
    assert "Kept in src" in octomem(sub / "deep", "search", "kept in src").out


def test_a_worktree_whose_git_is_a_file_is_a_repository_top(repo: Path) -> None:
    _git("commit", "-q", "--allow-empty", "-m", "first", cwd=repo)
    tree = repo.parent / "tree"
    _git("worktree", "add", "-q", str(tree), cwd=repo)
    (tree / "pkg").mkdir()
    assert (tree / ".git").is_file()
    assert find_project_root(tree / "pkg") == tree.resolve()


def test_a_home_folder_kept_in_git_is_not_every_folders_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "code" / "app").mkdir(parents=True)
    _git("init", "-q", cwd=home)  # dotfiles
    monkeypatch.setenv("HOME", str(home))
    assert find_project_root(home / "code" / "app") == (home / "code" / "app").resolve()
    assert find_project_root(home) == home.resolve()


def test_outside_a_repository_the_current_folder_is_the_project(tmp_path: Path) -> None:
    lone = tmp_path / "lone" / "sub"
    lone.mkdir(parents=True)
    ran = octomem(lone, "add", "A fact of its own")
    assert f"created {lone / '.octomem'} (the local scope)" in ran.err, ran.err
    assert "note:" not in ran.err


def test_the_first_global_write_says_where_the_global_scope_is(tmp_path: Path) -> None:
    root = tmp_path / "account"
    ran = octomem(tmp_path, "--global-root", str(root), "add", "The user likes tabs",
                  "--scope", "global")
    assert f"created {root} (the global scope)" in ran.err, ran.err
    assert not (tmp_path / ".octomem").exists()
