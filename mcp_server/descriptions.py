"""What the tools and resources tell an agent: when to call them and what goes where.

Kept beside each other so that the advice stays consistent (and docs/mcp.md says the
same for people).
"""

from __future__ import annotations

INSTRUCTIONS = """\
octomem is your long-term memory across sessions, stored locally in two scopes: `local` \
(this project: its facts, conventions, decisions; stored in the project's .octomem/ folder, \
no other project sees it) and `global` (the user across every project: who they are, their \
preferences, standing rules). `recall` at the start of a task and before you answer \
anything past work could inform; it searches both scopes. `recall` before `remember`, to \
avoid duplicates. `remember` one self-contained, durable statement per call, in the right \
scope. When a statement changes, `remember` the new one with `supersedes` set to the old id \
(history is kept); `forget` what is wrong or must not be kept. At the end of a session, \
`remember` a HANDOFF for the next one. `ingest` documents and conversation transcripts to \
search them too. Read the resource octomem://session-start first in a new session."""

WHERE = """\
`scope`: `local` (the default) for this project: its layout, commands, conventions, \
decisions and their reasons, known problems; `global` for the user in every project: who \
they are, their preferences, standing rules."""

REMEMBER = f"""\
Store one durable statement in long-term memory so that a later session can recall it.

Call `recall` first with the gist: if a memory already says it, do not store it again. \
Store what will matter next time (preferences, decisions and why, conventions, corrections, \
facts learned the hard way), one self-contained statement per call (name the subject \
instead of "it"); not a transcript, never secrets. {WHERE} `event_time`: when what it says \
happened, if not now.

When it replaces an older statement, pass that statement's id as `supersedes`: the old one \
is kept as history (recall's `as_of` still finds it) but no longer current. Kind HANDOFF is \
a note to the next session: it replaces the scope's previous handoff (the answer lists it).

The answer has the stored item with its id and scope, `embedded: false` if it is found by \
its words only for now, and `near_duplicates`: up to 3 statements that say nearly the same \
(never refused for them: `forget` one the new statement makes obsolete). The exact text of \
a current statement of the scope is not stored twice: `already_stored: true` with its id and \
kind (to change its kind, remember it with the new kind and `supersedes` its id)."""

RECALL = """\
Search long-term memory: the stored statements and document passages that best match the \
query, best first, each naming its `scope` (local: this project; global: every project); \
both scopes are searched and ranked together unless `scope` picks one.

Call it at the start of a task, whenever past context could help (what the user prefers, \
what was decided, how this project does something), and always before `remember`, to avoid \
duplicates. Plain language works: it matches words (BM25) and meaning (embeddings). Only \
current statements are returned unless `as_of` or `include_superseded` asks for history; \
newer statements win ties; repetitions are collapsed (`collapsed`).

Each hit has a `relevance` (probability 0..1 that it answers the query, comparable across \
queries) and a `band`: high (likely answers), medium (may answer: read it), low (unlikely \
to; when every hit is low, say the memory may not hold it rather than take it as the \
answer). Hits far weaker than the best are left out (`weak_left_out`). A conversation turn \
hit carries `turn` (conversation, session, position, speaker, time) and is ranked with its \
neighbouring turns; `context: 1` returns the turn before and after it. `max_tokens` keeps \
the best hits that fit (the rest listed in `budget.cut`); an answer over 512 KiB is cut the \
same way (a `warnings` entry says so).

No hits with `abstained` set: memory holds nothing that answers this; say you do not know \
(or ask) rather than guess or retry with the same words. It is judged on the best 10 \
candidates whatever `top_k` is. No hits with `nothing_to_rank` set: nothing stored passes \
the filters (it says which). A scope in `scopes_unavailable` could not be read (the reason \
says what the user should do): tell the user. `explain: true` also gives, when nothing \
passed, the best match left out (`best_rejected`)."""

FORGET = """\
Remove one stored statement or document for good, given its id (from `recall` or \
`remember`) or its exact full text; both scopes are searched unless `scope` is given.

Use it when a memory is wrong, obsolete without a successor, or the user asks you to \
forget something (when a statement merely changed, `remember` the new one with \
`supersedes`: that keeps the history). `reason` is kept in the forget log; the text is \
deleted, from the store's files too, and never comes back in any recall. When the text \
matches several statements none is removed: the answer lists them (`matches`); call again \
with one id. Given a path something was ingested from (it need not exist any more), it \
forgets all of it: a file, a transcript's turns, everything below a folder \
(`files_forgotten`, `turns_forgotten`), and an ingest keeps them out."""

INGEST = f"""\
Add documents to memory so that recall searches them: a file or folder path (absolute, or \
relative to the project root; .md, .txt, .rst), the text itself, or a conversation: a chat \
transcript in JSON Lines (one turn a line: text, speaker or role, session, time) or a \
Claude Code session file (~/.claude/projects/<project>/<session>.jsonl, or that folder), \
stored as turns that know their conversation, position, speaker and time.

Ingesting again is safe: identical content does nothing; changed content becomes a new \
revision (the old kept as history for `as_of`); a transcript that grew adds its new turns. \
To revise a text, give it the same `uri` (a text without one is identified by its content). \
A malformed transcript line is an error naming it; in a folder, a file that cannot be read \
(malformed, empty, not UTF-8, too large) is listed under `skipped` and the rest is stored. \
Hidden files, tool folders (node_modules/, virtual environments) and what .gitignore and \
.octomemignore name are not read. A Markdown file's front matter gives its title, tags and \
date. What `forget` removed stays out (`forgotten_left_out`) unless `readd: true`. The \
answer counts everything (`counts`) and lists the first 10 ids and 50 problems of each \
list. {WHERE}"""

STATUS = """\
Report what each scope holds and how retrieval is assembled.

Gives the project root, for each scope (local, global) its directory and counts (documents, \
chunks, current, superseded, forgotten, chunks still without a vector), the arm used for \
each kind, the embedding model, whether semantic search is available, and the model's \
warm-up state (`model_state`). Use it to explain empty or keyword-only answers; it is not \
needed before ordinary use."""

MEMORY_RESOURCE = """\
The current statements of one scope (`local` or `global`) as Markdown, newest first by \
when each happened, with ids, kinds, tags and supersede links; ingested documents and \
conversation turns are counted, not listed. For reading; recall searches it better."""

ITEM_RESOURCE = """\
One stored statement or document with its provenance as JSON: scope and store, kind, tags, \
times, revision, supersede links, recall count and its chunks. `{+id}` is a statement or \
document id as recall gives it (`2025/trip:0` as it is; only a `?` or `#` in an id is \
written `%3F` / `%23`), or `local:<chunk_id>` / `global:<chunk_id>` for one chunk of a \
recall hit. A long document is cut to fit one message (512 KiB): `cut` then says what was \
left out; read the rest one chunk at a time by `<scope>:<chunk_id>`."""

SESSION_START_RESOURCE = """\
Read this at the start of every session: the standing rules and preferences, the current \
handoff, and the most recent and most recalled statements of both scopes, as Markdown \
within session_start.max_bytes (8 KB by default); what did not fit is counted at the end \
(recall it, or read octomem://memory/{scope}). It counts the ingested documents and \
conversation turns that recall searches besides."""
