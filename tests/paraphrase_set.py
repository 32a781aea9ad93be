"""A hand-written paraphrase check for small memories (issue 12, relevance; a fresh user's
trial): statements an agent would remember, questions that ask for each in other words
(few or no shared content words), and questions nothing stored answers. Written before
any weight was chosen with it; it chooses nothing (the weights come from the tune splits,
``benchmarks/fit_turn_relevance.py``), it only shows what a user sees."""

from __future__ import annotations

#: Statements, remembered one by one.
STATEMENTS = [
    "We run PostgreSQL 16 in production",
    "Releases go out on Thursday evenings",
    "Dana has the last word on anything touching privacy",
    "The user prefers dark mode in every editor",
    "The CI pipeline takes about twelve minutes",
    "Our API is written in Go and served behind nginx",
    "Tomás is on parental leave until the end of March",
    "Staging deploys happen automatically on every merge to main",
    "Backups are copied to an offsite disk every Sunday night",
    "The mobile app is built with Flutter",
    "Never store customer photos outside the EU",
    "The team's standup is at 9:30 every weekday",
]

#: (question, the statement that answers it), in other words than the statement's.
PARAPHRASES = [
    ("which postgres version do we use?", STATEMENTS[0]),
    ("what day of the week do we ship?", STATEMENTS[1]),
    ("who decides about privacy?", STATEMENTS[2]),
    ("which colour theme does the user like?", STATEMENTS[3]),
    ("how long does continuous integration run?", STATEMENTS[4]),
    ("what language is the backend in?", STATEMENTS[5]),
    ("when is Tomás back at work?", STATEMENTS[6]),
    ("how does code reach the staging environment?", STATEMENTS[7]),
    ("how often do we back up?", STATEMENTS[8]),
    ("what framework is the phone app made with?", STATEMENTS[9]),
    ("where may customer pictures be kept?", STATEMENTS[10]),
    ("what time is the daily meeting?", STATEMENTS[11]),
]

#: Questions nothing in :data:`STATEMENTS` answers.
OFF_TOPIC = [
    "what is the capital of Australia?",
    "how do I bake sourdough bread?",
    "which football team won the league last year?",
    "what's the name of my dentist?",
    "how many vacation days do employees get?",
    "what is the wifi password at the office?",
    "who is our accountant?",
    "what's the recommended dose of ibuprofen?",
    "when is the company holiday party?",
    "which cloud region hosts the search cluster?",
]
