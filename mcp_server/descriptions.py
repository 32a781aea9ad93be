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
Where it goes (`scope`): facts about this repository or project — its layout, commands, \
conventions, decisions and their reasons, known problems — are `local` (the default). Who \
the user is, their preferences and standing rules that hold in every project are `global`."""

REMEMBER = f"""\
Store one durable statement in long-term memory so that a later session can recall it.

Call `recall` first with the gist: if a memory already says it, do not store it again. \
Store what will matter next time: preferences, decisions and why, conventions, corrections, \
facts learned the hard way. One self-contained statement per call (name the subject instead \
of "it"); not a transcript, never secrets.

{WHERE}

`kind` is one word, stored in capitals: FACT, PREFERENCE, DECISION, RULE, TODO, ... (default \
ITEM). `tags` are short labels recall can filter on. `event_time` (ISO date) is when what it \
says happened, if that differs from now. When it replaces an older statement, pass that \
statement's id as `supersedes`: the old one is kept as history (recall's `as_of` still finds \
it) but no longer returned as current; the new statement goes to the old one's scope. Kind \
HANDOFF is reserved for a note to the next session: recording one replaces the previous \
handoff of the scope, and the answer lists what it replaced.

The answer has the stored item with its id and scope, `embedded: false` if it is found by \
its words only for now, and `near_duplicates`: up to 3 existing statements that say nearly \
the same. The write is never refused for them; if the new statement makes one obsolete, \
`forget` it or, next time, use `supersedes`. The exact text of a current statement of the \
same scope is not stored twice, whatever its kind: `already_stored: true`, that statement's \
id and stored kind, and a `message` saying how to change its kind (remember it again with \
the new kind and `supersedes` its id)."""

RECALL = """\
Search long-term memory: returns the stored statements and document passages that best \
match the query, best first, each naming its `scope` (local: this project; global: every \
project). Both scopes are searched and ranked together unless `scope` picks one.

Call it at the start of a task and whenever past context could help (what the user prefers, \
what was decided, how this project does something), and always before `remember`, to avoid \
duplicates. Plain natural language works: it matches exact words (BM25) and meaning \
(embeddings), fused by reciprocal rank; any text is a valid query. Filters apply inside the \
search: `kinds` (any of), `tags` (all of), `since`/`until` (ISO dates, on when the statement \
became true). Only current statements are returned: pass `as_of` (ISO date) to see what was \
current then, or `include_superseded: true` for history too. Newer statements win ties \
(a small, bounded recency bonus). Repetitions are collapsed and listed in `collapsed`. \
`per: "document"` returns each document's best passage once. `explain: true` adds each \
arm's rank and score and what each hit's relevance came from (and, when nothing passed, \
the best match left out: `best_rejected`). A conversation turn hit \
carries `turn` (conversation, session, position, speaker, time); turns are ranked with \
their neighbouring turns, session and speaker; `context: 1` adds the turn before and after \
it, so you read the answer where it was said. `max_tokens` keeps the best hits that fit in \
about that many tokens and lists the rest in `budget.cut`; an answer larger than 512 KiB \
is cut the same way (a `warnings` entry says so). Each hit has a `relevance` \
(probability 0..1 that it answers the query, comparable across queries) and a `band`: \
high (likely answers), medium (may answer: read it), low (unlikely to; when every hit is \
low the match is weak: say the memory may not hold it rather than take it as the \
answer); hits far weaker than the best are left out (`weak_left_out` says how many). No \
hits with `abstained` set means memory holds nothing that answers this: say you do not \
know (or ask) rather than guess or retry with the same words. That is judged on the best \
10 candidates whatever `top_k` is, so a different `top_k` will not change it. No hits \
with `nothing_to_rank` set means nothing stored passes the filters (it says which one). \
A scope listed in `scopes_unavailable` could not be read (its store is damaged; the \
reason says what the user should do) and was not searched: tell the user."""

FORGET = """\
Remove one stored statement or document for good, given its id (from `recall` or \
`remember`) or its exact full text. Searches both scopes unless `scope` is given.

Use it when a memory is wrong, obsolete without a successor, or the user asks you to \
forget something. (When a statement merely changed, prefer `remember` with `supersedes`: \
that keeps the history.) `reason` is kept in the forget log; the text itself is deleted, \
from the store's files too, and never comes back in any recall, `as_of` included. When \
the text matches several statements none is removed: the answer lists them (`matches`) \
with their ids and scopes; call again with one id. Given a path something was ingested \
from (it need not exist any more), it forgets all of it: a file, every turn of a \
transcript, every file and turn below a folder (`files_forgotten`, `turns_forgotten`), \
and an ingest keeps them out."""

INGEST = f"""\
Add a document to memory so that recall searches it: a file or folder path (absolute, or \
relative to the project root; .md, .txt, .rst) or the text itself; or a conversation: a \
chat transcript in JSON Lines (one turn a line: text, speaker or role, session, time) or \
a Claude Code session file (~/.claude/projects/<project>/<session>.jsonl, or that folder), \
stored as turns that know their conversation, position, speaker and time. Ingesting a \
transcript again after it grew adds only its new turns; a malformed line is an error \
naming the line, and nothing of the file is stored. In a folder, a file that cannot be \
read (a malformed line, empty, not UTF-8, too large) is left out and listed under `skipped` with \
why; the rest of the folder is stored. A folder's hidden files, tool folders \
(node_modules/, __pycache__/, virtual environments) and what its .gitignore and \
.octomemignore files name are not read.

Long text is split into passages that recall returns individually (or, with \
`per: "document"`, each document's best passage). Ingesting the same path or `uri` \
again with identical content does nothing; with changed content it becomes a new revision \
that supersedes the old passages (kept as history for `as_of`): to revise a text, give it \
the same `uri`. A text without a `uri` is identified by its content, so texts under one \
`title` are documents of their own. `title` and `uri` label a text (or a single file); \
`tags` apply to every document. A Markdown file's front matter \
(YAML between `---` lines at its top) gives its title, tags and date (event time) and is \
not stored as text. What `forget` removed stays \
out: a forgotten file (even changed since) and a forgotten turn's text (wherever its line \
now is) are not stored again, each listed under `forgotten_left_out`; `readd: true` stores \
them again (listed under `readded`). The answer counts everything (`counts`) and lists \
the first 10 ids of each kind and the first 50 problems of each list. {WHERE}"""

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
