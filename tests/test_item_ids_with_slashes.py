"""Trial 13, F6: ``octomem://item/{id}`` could not read the ids octomem itself gives
same-named transcripts (``2025/trip:0``): the template's simple ``{id}`` stops at ``/``,
so only ``2025%2Ftrip%3A0`` was found. The template is ``octomem://item/{+id}`` (RFC 6570
reserved expansion: the id as ``recall`` hands it out, slashes included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp_stdio import stdio_client

from octomem.mcp_server.server import create_server


def _transcripts(project: Path) -> None:
    for year, text in (("2024", "We took the night train to Porto."),
                       ("2025", "We flew to Madeira and hiked the levadas.")):
        folder = project / "coll" / year
        folder.mkdir(parents=True)
        (folder / "trip.jsonl").write_text(json.dumps({"speaker": "Ana", "text": text}) + "\n")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_item_template_takes_an_id_with_slashes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    server = create_server(overrides={"data_dir": str(tmp_path / "data"),
                                      "pipeline": {"embedder": "hashing"}},
                           project_root=project, global_root=tmp_path / "global")
    async with Client(server, read_timeout_seconds=60) as client:
        result = await client.call_tool("remember", {"text": "The kiln fires at dawn"})
        assert not result.is_error
        templates = (await client.list_resource_templates()).resource_templates
        assert "octomem://item/{+id}" in [t.uri_template for t in templates]
        with pytest.raises(Exception, match="no statement, document or chunk has the id "
                           "'2025/trip:0'"):  # matched, then looked up: not "Unknown resource"
            await client.read_resource("octomem://item/2025/trip:0")


@pytest.mark.slow
def test_a_recalled_id_with_a_slash_reads_as_it_is(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _transcripts(project)
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("ingest", path_or_text=str(project / "coll"))
        hit = mcp.ok("recall", query="Madeira levadas")["hits"][0]
        assert hit["id"] == "2025/trip:0"
        item = json.loads(mcp.read(f"octomem://item/{hit['id']}"))
        assert item["id"] == "2025/trip:0" and "Madeira" in item["text"]
        encoded = json.loads(mcp.read("octomem://item/2025%2Ftrip%3A0"))
        assert encoded["id"] == "2025/trip:0"
        assert json.loads(mcp.read("octomem://item/trip:0"))["id"] == "trip:0"
        templates = mcp.portal.call(mcp.client.list_resource_templates)
        assert "octomem://item/{+id}" in [t.uri_template for t in templates.resource_templates]
