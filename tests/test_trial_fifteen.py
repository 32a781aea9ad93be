"""Trial 15 (a fresh user's break-it pass), what it found and these fixes:

- F6: an empty ``OCTOMEM_GLOBAL_ROOT=`` / ``OCTOMEM_DATA_DIR=`` (an unset shell variable in
  a wrapper) or ``--global-root ""`` made the current folder the global scope, and wrote
  the user's global memory there;
- F8: a settings file that is not UTF-8 (a Latin-1 comment, a UTF-16 file) ended every
  command in a traceback; a UTF-8 file with a byte-order mark was "not valid TOML".
"""

from __future__ import annotations

import os
from pathlib import Path

from cli_run import octomem


def test_an_empty_global_root_or_data_dir_is_the_default(project: Path) -> None:
    data = Path(os.environ["XDG_DATA_HOME"]) / "octomem"  # the test's isolated default
    for variable in ("OCTOMEM_GLOBAL_ROOT", "OCTOMEM_DATA_DIR"):
        ran = octomem(project, "add", "Tabs for indentation", "--scope", "global",
                      **{variable: ""})
        assert ran.out.startswith("stored ") or "already stored" in ran.out, ran.out
    assert not list(project.glob("*.sqlite3"))  # nothing in the folder the command ran in
    assert (data / "octomem.sqlite3").is_file()
    for option in ("--data-dir", "--global-root", "--project-root", "--config"):
        for argv in ([option, ""], [f"{option}="], [option, "  "]):
            ran = octomem(project, *argv, "status", ok=False)
            assert (ran.code, ran.err.strip()) == (2, (
                f"error: {option}: the path is empty; leave the option out for its default; "
                "see `octomem --help`")), (argv, ran.err)
    ran = octomem(project, "serve", "--global-root", "", ok=False)
    assert ran.code == 2 and "--global-root: the path is empty" in ran.err
    assert not list(project.glob("*.sqlite3"))


def test_a_settings_file_that_is_not_utf8_is_one_line(project: Path) -> None:
    config = project / "latin1.toml"
    config.write_bytes(b"# r\xe9glages\n[retrieval]\ntop_k = 5\n")
    ran = octomem(project, "--config", str(config), "search", "tabs", ok=False)
    assert (ran.code, ran.err.strip()) == (1, (
        f"error: --config {config}: not UTF-8 text (byte 0xe9 at offset 3); save it as "
        "UTF-8")), ran.err
    config.write_bytes(b"\xff\xfe[\x00x\x00]\x00")  # UTF-16, as Windows Notepad's "Unicode"
    ran = octomem(project, "--config", str(config), "status", ok=False)
    assert ran.code == 1 and "not UTF-8 text (byte 0xff at offset 0)" in ran.err
    config.write_bytes(b"\xef\xbb\xbf[retrieval]\ntop_k = 3\n")  # UTF-8 with a BOM: read
    assert "top_k = 3" in " ".join(octomem(project, "--config", str(config), "config").out.split())
