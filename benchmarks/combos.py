"""Arm combinations to benchmark: parsing ``NAME=arm+arm+...`` and the default set.

A combination names at most one arm of each kind, by its registered name, joined by ``+``.
Besides arm names a part may be a fusion (``rrf``, ``weighted``) or a setting override
``dotted.key=value`` (as ``--set`` takes it), e.g.::

    hybrid=fts5+sqlite-vec
    hybrid-k20=fts5+sqlite-vec+retrieval.rrf_k=20
    fts5-all-words=fts5+arms.fts5.stopwords=false
    hashing=sqlite-vec+hashing

A semantic arm without an embedder uses the configured ``pipeline.embedder``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from octomem.engine.errors import OctomemError
from octomem.engine.manager import ArmRegistry
from octomem.engine.settings import Settings, parse_overrides

FUSIONS = ("rrf", "weighted")
#: Arm kinds a combination can name (the storage is the configured one).
COMBO_KINDS = ("keyword", "embedder", "semantic", "reranker", "dedup")
#: Name of the substring baseline arm (:mod:`octomem.benchmarks.baseline`).
GREP = "grep"


@dataclass(frozen=True, slots=True)
class Combo:
    """One row of the table: which arms run, how runs are fused, and setting overrides.

    :param embedder: the embedder of the semantic arm, ``None`` when no semantic arm runs.
    :param chunker: the embedder whose tokenizer chunked the stored corpus this row reads
        (the combination's embedder, else the configured one); ``None``: word counts.
    :param overrides: nested ``--set``-style overrides applied for this row only.
    """

    name: str
    keyword: str | None = None
    semantic: str | None = None
    embedder: str | None = None
    reranker: str | None = None
    dedup: str | None = None
    fusion: str | None = None
    chunker: str | None = None
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def retrieval_arms(self) -> list[str]:
        """Names of the arms that produce runs (keyword, semantic)."""
        return [a for a in (self.keyword, self.semantic) if a]

    @property
    def single_arm(self) -> bool:
        """True when exactly one retrieval arm runs (a candidate for "best single arm")."""
        return len(self.retrieval_arms) == 1 and self.keyword != GREP

    def spec(self) -> str:
        """Return the ``arm+arm+...`` form of this combination (without its name)."""
        parts = [
            p
            for p in (
                self.keyword,
                self.semantic,
                self.embedder,
                self.reranker,
                self.dedup,
                self.fusion,
            )
            if p
        ]
        parts += [f"{k}={v}" for k, v in _flatten(self.overrides)]
        return "+".join(parts)

    def settings_overrides(self) -> dict[str, Any]:
        """Return the nested overrides that assemble this row's pipeline."""
        out: dict[str, Any] = {
            k: (dict(v) if isinstance(v, dict) else v) for k, v in self.overrides.items()
        }
        out["pipeline"] = {
            **out.get("pipeline", {}),
            "keyword": self.keyword,
            "semantic": self.semantic,
            "embedder": self.embedder,
            "reranker": self.reranker,
            "dedup": self.dedup,
        }
        if self.fusion:
            out["retrieval"] = {**out.get("retrieval", {}), "fusion": self.fusion}
        return out


def _flatten(tree: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in tree.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _kinds_of(name: str, registry: ArmRegistry) -> list[str]:
    return [k for k in COMBO_KINDS if name in registry.names(k)]  # type: ignore[arg-type]


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _assign(arms: dict[str, str], kind: str, name: str, text: str) -> None:
    if kind in arms:
        raise OctomemError(
            f"--combo {text!r}: two {kind} arms ({arms[kind]!r}, {name!r}); a pipeline has one"
        )
    arms[kind] = name


def _part(
    part: str, text: str, registry: ArmRegistry, arms: dict[str, str], overrides: dict[str, Any]
) -> str | None:
    """Read one ``+``-separated part; return it when it is a fusion name."""
    if "=" in part:
        _merge(overrides, parse_overrides([part]))
        return None
    if part in FUSIONS:
        return part
    kind, _, name = part.rpartition(":")
    kinds = [kind] if kind else _kinds_of(name, registry)
    if kind and kind not in COMBO_KINDS:
        raise OctomemError(
            f"--combo {text!r}: {kind!r} is not an arm kind ({', '.join(COMBO_KINDS)})"
        )
    if not kinds or (kind and name not in registry.names(kind)):  # type: ignore[arg-type]
        known = sorted({n for k in COMBO_KINDS for n in registry.names(k)})  # type: ignore[arg-type]
        raise OctomemError(
            f"--combo {text!r}: no arm named {name!r}; installed: {', '.join(known)}; "
            f"fusions: {', '.join(FUSIONS)}"
        )
    if len(kinds) > 1:
        raise OctomemError(
            f"--combo {text!r}: {name!r} is a {' and a '.join(kinds)} arm; write kind:{name}"
        )
    _assign(arms, kinds[0], name, text)
    return None


def parse_combo(text: str, registry: ArmRegistry, settings: Settings) -> Combo:
    """Parse ``NAME=arm+arm+...`` (or just ``arm+arm+...``, named by itself).

    :raises OctomemError: an unknown or ambiguous arm name, two arms of one kind, no
        keyword or semantic arm, or a semantic arm with no embedder configured.
    """
    name, sep, spec = text.partition("=")
    if not sep or "+" in name or "." in name:
        name, spec = text, text
    name, spec = name.strip(), spec.strip()
    if not name or not spec:
        raise OctomemError(
            f"--combo {text!r}: expected NAME=arm+arm+..., e.g. hybrid=fts5+sqlite-vec"
        )
    arms: dict[str, str] = {}
    overrides: dict[str, Any] = {}
    fusion = None
    for part in (p.strip() for p in spec.split("+")):
        if not part:
            raise OctomemError(f"--combo {text!r}: empty part between '+'")
        fusion = _part(part, text, registry, arms, overrides) or fusion
    if "keyword" not in arms and "semantic" not in arms:
        raise OctomemError(f"--combo {text!r}: names no keyword or semantic arm")
    embedder = arms.get("embedder")
    if "semantic" in arms and embedder is None:
        embedder = settings.pipeline.embedder
        if not embedder:
            raise OctomemError(
                f"--combo {text!r}: semantic arm {arms['semantic']!r} needs an embedder; "
                "name one (e.g. +fastembed) or set pipeline.embedder"
            )
    if "semantic" not in arms:
        embedder = None
    return Combo(
        name=name,
        keyword=arms.get("keyword"),
        semantic=arms.get("semantic"),
        embedder=embedder,
        reranker=arms.get("reranker"),
        dedup=arms.get("dedup"),
        fusion=fusion,
        chunker=embedder or settings.pipeline.embedder,
        overrides=overrides,
    )


def _fits(requires: frozenset[str], storage: str) -> bool:
    return not requires or storage in requires


def default_combos(registry: ArmRegistry, settings: Settings) -> list[Combo]:
    """Return the default rows, from what is installed and configured.

    The substring baseline; each keyword arm that works with the configured storage,
    alone; the configured semantic arm alone;
    hybrid (configured keyword + semantic) with RRF, with weighted-score fusion, with the
    configured dedup (the shipped default pipeline), and with the configured reranker
    when ``pipeline.reranker`` is set.
    """
    pipe = settings.pipeline
    chunker = pipe.embedder
    keywords = [
        k
        for k in registry.names("keyword")
        if k != GREP and _fits(registry.get("keyword", k).requires_storage, pipe.storage)
    ]
    rows = [Combo(GREP, keyword=GREP, chunker=chunker)] if GREP in registry.names("keyword") else []
    rows += [Combo(k, keyword=k, chunker=chunker) for k in keywords]
    if not (pipe.semantic and pipe.embedder):
        return rows
    sem = dict(semantic=pipe.semantic, embedder=pipe.embedder, chunker=chunker)
    rows.append(Combo(pipe.semantic, **sem))  # type: ignore[arg-type]
    keyword = pipe.keyword or (keywords[0] if keywords else None)
    if keyword is None:
        return rows
    rows.append(Combo("hybrid-rrf", keyword=keyword, fusion="rrf", **sem))  # type: ignore[arg-type]
    rows.append(Combo("hybrid-weighted", keyword=keyword, fusion="weighted", **sem))  # type: ignore[arg-type]
    if pipe.dedup:
        rows.append(
            Combo(
                f"hybrid-rrf+{pipe.dedup}", keyword=keyword, fusion="rrf", dedup=pipe.dedup, **sem
            )
        )  # type: ignore[arg-type]
    if pipe.reranker:
        rows.append(
            Combo(
                f"hybrid-rrf+{pipe.reranker}",
                keyword=keyword,
                fusion="rrf",
                reranker=pipe.reranker,
                **sem,
            )
        )  # type: ignore[arg-type]
    return rows
