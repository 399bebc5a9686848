"""Storage for the web app: users, invitations, logins, API tokens, conversations, answers, feedback.

SQLite in the data home by default (`<home>/app.sqlite3`), PostgreSQL with `EVIDENCEQA_DATABASE_URL`
(`postgresql+psycopg://user:pw@host/db`). `open_store(settings)` migrates the schema to the newest
version (Alembic, shipped in `migrations/`) before returning.

Notes for the web app (additions to the agreed API; nothing was renamed):
- `Store.transaction()` is a session in one transaction; `Store.clock` can be replaced in tests.
- Errors: `AccountError` (ValueError; message safe to show), `NotFound` (LookupError; a conversation or
  answer that does not exist or is someone else's: answer 404), `InvalidRating` (ValueError).
- Conversation and answer ids are ints. `messages_of` returns `Message`s whose `.answer` is the
  `AnswerRecord` for assistant messages (None for the user's); `to_answer(record)` rebuilds the `Answer`.
- Returned model objects are detached but readable (their columns are loaded).
- `RATINGS` maps "Excellent"/"Acceptable"/"Very poor" to 1.0/0.6/0.2.
- `labels`: failure labels of poor answers (`save_automatic_label`, `correct_label`, `failure_labels`).
- `review`: benchmark review (`load_candidates`, `review_items`, `review_item`, `record_decision`,
  `decisions_in_force`); tables `ReviewCandidate`, `ReviewDecision`.
- `accounts.password_hasher` is an argon2 `PasswordHasher`; tests may swap in a cheaper one.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from evidenceqa.store.options import StoreOptions

# The names below load on first use (PEP 562): importing the package, or its options that the core's
# Settings composes, needs neither SQLAlchemy nor the web extra.
if TYPE_CHECKING:
    from evidenceqa.store.accounts import (
        AccountError,
        accept_invite,
        api_tokens_of,
        authenticate,
        change_password,
        create_api_token,
        create_invite,
        create_password_reset,
        create_user,
        end_all_sessions,
        end_session,
        get_user,
        list_users,
        purge_expired_sessions,
        reset_password,
        revoke_api_token,
        session_user,
        set_active,
        set_password,
        start_session,
        token_owner,
        token_user,
    )
    from evidenceqa.store.conversations import (
        FeedbackRow,
        GapReportRow,
        InvalidRating,
        NotFound,
        StoredAnswer,
        answer_record,
        answers_between,
        conversations_of,
        delete_conversation,
        feedback_between,
        feedback_of,
        gap_reports_between,
        messages_of,
        record_exchange,
        record_feedback,
        rename_conversation,
        report_gap,
        start_conversation,
        to_answer,
    )
    from evidenceqa.store.db import Store, database_url, open_store
    from evidenceqa.store.entitlements import (
        Access,
        EntitlementError,
        access_of,
        grant,
        open_to_all,
        restrict,
        restricted_collections,
        withdraw,
    )
    from evidenceqa.store.labels import InvalidCategory, correct_label, failure_labels, save_automatic_label
    from evidenceqa.store.lookups import lookups_between, record_lookup
    from evidenceqa.store.models import (
        FAILURE_CATEGORIES,
        RATINGS,
        AnswerRecord,
        ApiToken,
        Channel,
        Conversation,
        FailureLabel,
        Feedback,
        GapReport,
        Invite,
        LoginSession,
        Lookup,
        LookupKind,
        Message,
        PasswordReset,
        ReviewCandidate,
        ReviewDecision,
        User,
    )

__all__ = [
    "FAILURE_CATEGORIES",
    "RATINGS",
    "Access",
    "AccountError",
    "AnswerRecord",
    "ApiToken",
    "Channel",
    "Conversation",
    "EntitlementError",
    "FailureLabel",
    "Feedback",
    "FeedbackRow",
    "GapReport",
    "GapReportRow",
    "InvalidCategory",
    "InvalidRating",
    "Invite",
    "LoginSession",
    "Lookup",
    "LookupKind",
    "Message",
    "NotFound",
    "PasswordReset",
    "ReviewCandidate",
    "ReviewDecision",
    "Store",
    "StoreOptions",
    "StoredAnswer",
    "User",
    "accept_invite",
    "access_of",
    "answer_record",
    "answers_between",
    "api_tokens_of",
    "authenticate",
    "change_password",
    "conversations_of",
    "correct_label",
    "create_api_token",
    "create_invite",
    "create_password_reset",
    "create_user",
    "database_url",
    "delete_conversation",
    "end_all_sessions",
    "end_session",
    "failure_labels",
    "feedback_between",
    "feedback_of",
    "gap_reports_between",
    "get_user",
    "grant",
    "list_users",
    "lookups_between",
    "messages_of",
    "open_store",
    "open_to_all",
    "purge_expired_sessions",
    "record_exchange",
    "record_feedback",
    "record_lookup",
    "rename_conversation",
    "report_gap",
    "reset_password",
    "restrict",
    "restricted_collections",
    "revoke_api_token",
    "save_automatic_label",
    "session_user",
    "set_active",
    "set_password",
    "start_conversation",
    "start_session",
    "to_answer",
    "token_owner",
    "token_user",
    "withdraw",
]

_MODULES = ("accounts", "conversations", "db", "entitlements", "labels", "lookups", "models")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for module in _MODULES:
            found = import_module(f"{__name__}.{module}")
            if name in vars(found):
                value = vars(found)[name]
                globals()[name] = value
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
