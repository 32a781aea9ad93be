"""Every setting octomem has: its section, default, range, cost group and description.

The sections (:class:`PipelineSettings`, :class:`RetrievalSettings`, ...) and
:class:`Settings` that holds them, and a dotted key's field and cost group
(:func:`setting_field`, :func:`setting_group`). Reading the layers into a
:class:`Settings` is :mod:`octomem.engine.settings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationInfo, field_validator

#: What changing a setting costs, shown by ``octomem config`` and docs/settings.md:
#: identity — the stored index depends on it (changing it means re-indexing or
#: re-embedding); runtime — where and how octomem runs, results unchanged;
#: retrieval — reorders the next answer only.
GROUPS = ("identity", "runtime", "retrieval")


def _field(default: Any, group: str, description: str, **constraints: Any) -> Any:
    """Declare a setting with its cost group (see :data:`GROUPS`)."""
    factory = {"default_factory": default} if callable(default) else {"default": default}
    return Field(
        **factory, description=description, json_schema_extra={"group": group}, **constraints
    )


class PipelineSettings(BaseModel, extra="forbid", allow_inf_nan=False):
    """Which arm of each kind the pipeline is assembled from, by registered name."""

    storage: str = _field("sqlite", "identity", "storage arm (documents, chunks, metadata)")
    keyword: str | None = _field("fts5", "identity", "keyword (BM25) arm; empty for none")
    embedder: str | None = _field(
        "fastembed", "identity", "embedder; each model's vectors are kept side by side, keyed "
        "by model id: switching to one with missing vectors needs `octomem reindex`; empty for "
        "keyword-only",
    )
    semantic: str | None = _field("sqlite-vec", "identity", "vector index arm; empty for none")
    reranker: str | None = _field(
        "conversation", "retrieval", "reranker arm: 'conversation' re-ranks conversation "
        "turns by their neighbours, session and speaker and leaves other chunks in place; "
        "'cross-encoder' with a local model; empty for none",
    )
    dedup: str | None = _field("cosine", "retrieval", "dedup arm; empty for none")


class RetrievalSettings(BaseModel, extra="forbid", allow_inf_nan=False):
    """How runs are fused and cut. Changing these reorders the next answer only."""

    top_k: int = _field(10, "retrieval", "hits in an answer", ge=1, le=1000)
    candidate_k: int = _field(
        100, "retrieval", "hits each arm returns before fusion (BEIR's usual depth of 100; "
        "at most 4096, sqlite-vec's largest k)", ge=1, le=4096,
    )
    fusion: Literal["rrf", "weighted"] = _field("rrf", "retrieval", "how runs are combined")
    document_fusion: Literal["rrf", "weighted"] = _field(
        "weighted", "retrieval", "how runs are combined for hits that are not conversation "
        "turns: `weighted` re-orders them among the places they hold by weighted score "
        "fusion (turns keep `fusion`). Chosen on SciFact train qrels (809 claims, fts5 + "
        "MiniLM): nDCG@10 0.7345 vs 0.7293 for RRF k=2; `weighted` for turns too cost "
        "LongMemEval tune 0.033 (benchmarks/results/conversations/scifact-fusion.md)",
    )
    rrf_k: int = _field(
        2, "retrieval", "RRF constant k in sum 1/(k + rank) (Cormack, Clarke & Buettcher, "
        "SIGIR 2009, used k=60). Default 2: chosen on SciFact train qrels (809 claims) with "
        "fts5 + MiniLM, nDCG@10 0.7296 vs 0.7153 at k=60 "
        "(benchmarks/results/scifact/tuning.md); on SciFact test 0.7187 vs 0.7120",
        ge=1, le=10_000,
    )
    weights: dict[str, float] = _field(
        dict, "retrieval", "per-arm weight by arm name for either fusion (default 1.0 each)"
    )
    parallel_arms: bool = _field(
        True, "runtime", "overlap the keyword arm with the query's embedding on two threads "
        "(a pipeline's search: the keyword arm on a worker while the query is embedded and "
        "the semantic arm searches, the half that ends first reading its run's first chunks "
        "ahead; a recall: the bundled model's query tokenized and run on the calling "
        "thread while the keyword arm searches on a worker, another embedder's on a worker "
        "while the keyword arm searches here); same answer, on 2+ cores",
    )
    rerank_top_n: int = _field(
        20, "retrieval", "fused hits the reranker re-scores", ge=1, le=1000
    )
    embed_batch_size: int = _field(
        64, "runtime", "texts per embedder call during ingest", ge=1, le=4096
    )
    recency_weight: float = _field(
        0.01, "retrieval", "largest recency bonus, a fraction of the fused score: breaks ties "
        "toward newer statements, never lifts a match weaker by more than this",
        ge=0.0, le=0.1,
    )
    recency_half_life_days: float = _field(
        30.0, "retrieval", "days after which the recency bonus halves", gt=0.0, le=36_500.0
    )
    relevance_floor: float = _field(
        0.033, "retrieval", "recall and search return no hits (with a reason) when the best "
        "hit's relevance is below this; 0 never abstains. 0.033 (with the unheard-word weight "
        "-0.5 and the assistant-aside weight -3.0 of engine/relevance.json): chosen on the "
        "tune splits (LoCoMo conv-26/30/41/42/43, LongMemEval --split tune, hybrid with "
        "MiniLM cosines), each question asked of its own group and of every other one, as "
        "nearest issue 12's targets on both: own questions keeping their evidence LoCoMo "
        "97.4%, LongMemEval 96.6%; asked of another conversation, no hits 93.5%, 93.0% "
        "(benchmarks/fit_turn_relevance.py); below 100 reachable chunks small_store of "
        "engine/relevance.json raises turns' relevance first (chosen after this floor); with "
        "full runs the keyword strength term of engine/relevance.json (weight 0.75, centre "
        "1.56, fts5 only) moves it instead, chosen after it with this floor kept "
        "(benchmarks/fit_strength.py, every other group asked): LongMemEval tune own "
        "kept 93.1 -> 96.6%, other empty 92.5 -> 92.8%; LoCoMo tune 97.6 -> 96.8%, "
        "93.6 -> 96.4%",
        ge=0.0, le=1.0,
    )
    document_relevance_floor: float = _field(
        0.07, "retrieval", "the floor of a DOC hit (files, BEIR corpora; document weights of "
        "engine/relevance.json when the store has more chunks than the runs ask for, else "
        "turn weights and floor; the runs taken at their first candidate_k entries whatever "
        "top_k; also turn weights and floor when all candidate_k entries of the keyword run "
        "score as its best, trial 16 F16): no hits when no hit reaches its kind's floor; 0 never "
        "abstains on documents. 0.07: chosen on SciFact train qrels (809 claims, fts5 + MiniLM) as "
        "the highest floor at which 95% of the claims whose cited abstract made the top 10 "
        "keep an answer (95.0%); asked with their cited abstracts hidden, 25.3% then get no "
        "hits (16.8% with the turn weights and floor), benchmarks/fit_relevance.py",
        ge=0.0, le=1.0,
    )
    relative_floor: float = _field(
        0.04, "retrieval", "a hit below retrieval.relevance_floor is also left out of an "
        "answer when its relevance is below this fraction of the best hit's (the answer says "
        "how many); 0 keeps every hit. 0.04: the largest fraction that leaves out no "
        "evidence turn from the top 10 of the tune splits (LoCoMo conv-26/30/41/42/43: "
        "98.1% of own evidence kept either way, hits shown 9.70 -> 9.48; LongMemEval "
        "--split tune: 89.7% either way, hits shown 8.67 -> 7.17); a cut at the floor "
        "itself would lose 14% (LoCoMo) and 7% (LongMemEval) of the evidence",
        ge=0.0, le=1.0,
    )
    weak_answer_floor: float = _field(
        0.005, "retrieval", "a hit below retrieval.relevance_floor is also left out of an "
        "answer whose best hit is weak (below the medium band's 0.07) when its relevance is "
        "below this (the answer says how many); 0 keeps them. 0.005: the largest cut that "
        "leaves out at most 2% of the evidence the relative cut keeps in such answers on "
        "every tune set (benchmarks/fit_bands.py: LongMemEval --split tune and LoCoMo "
        "conv-26/30/41/42/43, whole groups and one-session stores; trial 16 F12: a best hit "
        "of 0.055 came with 8 hits of 0.00-0.03)",
        ge=0.0, le=1.0,
    )
    assistant_aside: bool = _field(
        True, "retrieval", "lower the relevance of an assistant's turn (role assistant) when "
        "the question speaks of its asker (I, my) and does not address the assistant (you), "
        "by assistant_aside of engine/relevance.json (-3.0 logit, chosen with "
        "retrieval.relevance_floor on the tune splits, benchmarks/fit_turn_relevance.py): "
        "on LongMemEval --split tune 39 of the 89 questions asked of another haystack that "
        "passed the floor did so through an assistant's reply on the question's topic. "
        "Claude Code turns (source claude-code) are never lowered: their assistant does the "
        "user's work. false: for other transcripts where the assistant's turns hold the "
        "user's facts (another coding agent's 'why did my build fail?')",
    )
    duplicate_threshold: float = _field(
        0.85, "retrieval", "cosine at or above which remember reports an existing statement "
        "as a near duplicate (MiniLM: near-copies ~0.94, paraphrases ~0.79)", gt=0.0, le=1.0,
    )


class SessionStartSettings(BaseModel, extra="forbid", allow_inf_nan=False):
    """What ``octomem://session-start`` and ``octomem session-start`` show."""

    max_bytes: int = _field(
        8192, "retrieval", "largest session-start rendering in UTF-8 bytes (rules and "
        "preferences, handoff, recent and most recalled statements; what does not fit is "
        "counted): 8 KB, about 2,000 tokens of an agent's context", ge=512, le=1_000_000,
    )


class LimitsSettings(BaseModel, extra="forbid", allow_inf_nan=False):
    """The largest inputs octomem accepts. Beyond one: a clear error naming the argument
    and this setting; nothing is stored (a 1.1 MB remember once took 420 s and held the
    server's writes; a 10 MB query ran 67 s)."""

    remember_chars: int = _field(
        20_000, "runtime", "longest statement `remember` stores, in characters: a statement "
        "is a few sentences (20,000 characters is ~20 MiniLM chunks, embedded in well under a "
        "second); a longer text is a document: `ingest` it", ge=1, le=100_000_000,
    )
    query_chars: int = _field(
        4_096, "runtime", "longest recall query, in characters: MiniLM reads its first 256 "
        "tokens (~1,000 characters) and the keyword arm keeps at most `arms.fts5.max_terms` "
        "terms, so a longer query only costs time", ge=1, le=100_000_000,
    )
    file_bytes: int = _field(
        10_000_000, "runtime", "largest file (or text) `ingest` reads, in bytes: 10 MB of "
        "text is ~10,000 chunks, a few minutes of embedding on one core; split a larger one",
        ge=1, le=10_000_000_000,
    )
    top_k: int = _field(
        1000, "runtime", "largest `top_k` a recall may ask for (the MCP tool's and "
        "`--top-k`'s ceiling); answers past a few dozen hits are for evaluation runs",
        ge=1, le=4096,
    )
    tags: int = _field(
        32, "runtime", "most tags one statement or document carries (`remember`, `ingest`): "
        "every hit returns its tags, so each costs every answer that holds it room (20,000 "
        "tags once made a 100-token recall answer 0.5 MB); labels to filter on are a few",
        ge=1, le=100_000,
    )
    tag_chars: int = _field(
        100, "runtime", "longest tag, in characters: a tag is a label (`billing-api`, "
        "`2025-q3`); what needs more words belongs in the statement's text",
        ge=1, le=100_000,
    )
    filter_values: int = _field(
        100, "runtime", "most kinds, and most tags, one recall filter lists: each tag is one "
        "more condition on every candidate (40,000 filter tags once took 13.7 s of CPU)",
        ge=1, le=100_000,
    )


class IngestSettings(BaseModel, extra="forbid", allow_inf_nan=False):
    """How ``ingest`` treats folders and which paths the MCP ``ingest`` tool may read."""

    on_missing: Literal["forget", "keep"] = _field(
        "forget", "runtime", "a folder ingested again without a file it held before, or a "
        "transcript without a turn it held before: `forget` its document (with the reason, "
        "in the forget log) or `keep` it; both report it",
    )
    allowed_roots: list[Path] = _field(
        list, "runtime", "folders the MCP `ingest` tool may read besides the project root "
        "(the CLI, run by the user, reads any path)",
    )


def _default_data_dir() -> Path:
    return platformdirs.user_data_path("octomem")


class Settings(BaseModel):
    """Every octomem setting. Nested keys are dotted (``retrieval.rrf_k``) in ``--set`` and
    joined by ``__`` in environment variables (``OCTOMEM_RETRIEVAL__RRF_K=40``).

    ``arms.<name>`` holds the options of the arm of that name (validated by the arm's
    own options model when the pipeline is assembled). A plain model with pydantic-settings'
    ``BaseSettings`` configuration: :func:`~.settings.load_settings` reads every layer itself, and
    pydantic-settings (with asyncio and dotenv, ~0.1 s of a fresh process) is imported only
    to read ``OCTOMEM_*`` variables when there are any (:mod:`.settings_env`).
    """

    model_config = ConfigDict(extra="forbid", validate_default=True, allow_inf_nan=False,
                              arbitrary_types_allowed=True)

    data_dir: Path = _field(_default_data_dir, "runtime", "where data lives")
    global_root: Path | None = _field(
        None, "runtime", "the global scope's directory (--global-root); empty: data_dir"
    )
    call_log: bool = _field(
        False, "runtime", "keep a summary of each MCP tool call (tool, outcome, latency, hits, "
        "allowlisted arguments; never texts) in the scope's storage; `octomem log tail`",
    )
    http_token: SecretStr | None = _field(
        None, "runtime", "bearer token `serve --http` requires (printable ASCII; at least 16 "
        "characters beyond loopback; empty: none on loopback, a generated one elsewhere); "
        "shown masked",
    )
    http_session_idle_s: float = _field(
        1800.0, "runtime", "seconds an MCP session of `serve --http` may go without a request "
        "before the server closes it and frees what it holds (a client that comes back is "
        "answered 404 and starts a new session, as the MCP spec says)", ge=1, le=604_800,
    )
    ui_token: SecretStr | None = _field(
        None, "runtime", "access token a browser view with --allow-remote requires (at least "
        "16 characters; empty: a generated one, printed at start); shown masked",
    )
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    session_start: SessionStartSettings = Field(default_factory=SessionStartSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    arms: dict[str, dict[str, Any]] = _field(
        dict, "identity", "options of each arm by arm name (validated by the arm)"
    )

    @field_validator("data_dir", "global_root", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        """An empty path (``OCTOMEM_GLOBAL_ROOT=`` from an unset shell variable,
        ``--data-dir ""``) is the default, as documented, not the current folder: trial 15
        F6 wrote the global memory into whatever folder the command ran in."""
        if isinstance(value, str) and not value.strip():
            return _default_data_dir() if info.field_name == "data_dir" else None
        return value



#: Group of ``arms.<name>.<option>`` by the arm's kind, unless the option declares one:
#: options of arms that build the index are identity, the others reorder answers only.
ARM_KIND_GROUPS = {
    "storage": "identity", "keyword": "identity", "embedder": "identity",
    "semantic": "identity", "reranker": "retrieval", "dedup": "retrieval",
}


def _declared_group(field: Any) -> str | None:
    extra = field.json_schema_extra
    return str(extra["group"]) if isinstance(extra, dict) and "group" in extra else None


def setting_field(dotted_key: str, arm_specs: dict[str, Any] | None = None) -> Any | None:
    """Return the pydantic field that holds a dotted setting key, or None when none does.

    ``retrieval.top_k`` is a field of :class:`Settings`; ``arms.<name>.<option>`` a field
    of the arm's options model (given ``arm_specs``); a key below a field that is not a
    model (a table's entry) belongs to that field.
    """
    parts = dotted_key.split(".")
    if parts[0] == "arms" and len(parts) >= 2:
        spec = (arm_specs or {}).get(parts[1]) if len(parts) > 2 else None
        return spec.options_model.model_fields.get(parts[2]) if spec is not None else None
    model: type[BaseModel] = Settings
    for i, part in enumerate(parts):
        field = model.model_fields.get(part)
        annotation = field.annotation if field is not None else None
        if field is None or i + 1 == len(parts) or not (
                isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return field
        model = annotation
    return None


def setting_group(dotted_key: str, arm_specs: dict[str, Any] | None = None) -> str:
    """Return the cost group (:data:`GROUPS`) of a dotted setting key.

    :param arm_specs: arm name -> :class:`~octomem.engine.arms.ArmSpec`, to place
        ``arms.<name>.<option>`` keys by the option's declared group or the arm's kind
        (:data:`ARM_KIND_GROUPS`); without it such keys are ``identity``.
    :raises KeyError: the key is not a setting.
    """
    field = setting_field(dotted_key, arm_specs)
    parts = dotted_key.split(".")
    if parts[0] == "arms" and len(parts) >= 2:
        spec = (arm_specs or {}).get(parts[1])
        if spec is None:
            return "identity"
        return (field and _declared_group(field)) or ARM_KIND_GROUPS[spec.kind]
    if field is None:
        raise KeyError(dotted_key)
    return _declared_group(field) or "runtime"
