"""The chat in a real headless Chromium against `evidenceqa serve` running as a real process: log in
as the first administrator it prints, ask, watch the answer stream in, open a citation, give feedback,
and use it on a phone-sized screen. Screenshots are saved as test artifacts."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from evidenceqa import DISCLAIMER
from evidenceqa.analytics.rows import EARLIEST, LATEST
from evidenceqa.settings import Settings
from evidenceqa.store import feedback_of, gap_reports_between, list_users, open_store
from tests.skips import unavailable
from tests.web.conftest import CEFAZOLIN, DOCS, SCRIPT, SHAVE

CHROMIUM = Path("/usr/bin/chromium")
ADMIN = "admin@example.org"
pytestmark = pytest.mark.slow


def _require_browser() -> Any:
    """Playwright's sync API, driving Debian's Chromium (never a downloaded browser)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    missing = [what for what, ok in [("python playwright", sync_playwright), (str(CHROMIUM), CHROMIUM.exists())]
               if not ok]  # fmt: skip
    if missing:
        message = (
            f"browser test needs {' and '.join(missing)} (pip install playwright; apt-get install chromium)"
        )
        unavailable(message, "CI must have them")
    return sync_playwright


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, settings: Settings, url: str, password: str, process: subprocess.Popen[str]) -> None:
        self.settings, self.url, self.password, self.process = settings, url, password, process


@pytest.fixture(scope="module")
def server(web_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`evidenceqa serve` on a free port over the small home, with its own new database."""
    settings = web_settings.model_copy(
        update={"database_url": f"sqlite:///{tmp_path_factory.mktemp('served') / 'app.sqlite3'}"}
    )
    with serve(settings) as served:
        yield served


@contextmanager
def serve(settings: Settings, **environment: str) -> Iterator[Server]:
    """`evidenceqa serve` on a free port over `settings`' home and database, with `environment`
    (EVIDENCEQA_… settings) on top; stopped on exit."""
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "EVIDENCEQA_MODELS_DIR": str(settings.models_path),
           "EVIDENCEQA_DATABASE_URL": settings.database_url, "EVIDENCEQA_ADMIN_EMAIL": ADMIN, **environment}  # fmt: skip
    command = [sys.executable, "-m", "evidenceqa", "--home", str(settings.home), "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        printed = _read_until(process, "password")
        url = re.search(r"evidenceqa: (http://\S+)", printed).group(1)
        password = first_admin_password(printed, ADMIN)
        _wait_healthy(url, process)
        yield Server(settings, url, password, process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def first_admin_password(printed: str, email: str) -> str:
    """The password serve wrote for its first administrator, from the file its output names."""
    found = re.search(rf"first administrator created: {re.escape(email)} · password in (\S+) ", printed)
    assert found is not None, printed
    return Path(found.group(1)).read_text(encoding="utf-8").strip()


def _read_until(process: subprocess.Popen[str], word: str, timeout_s: float = 120) -> str:
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if word in line:
            return "".join(lines)
    pytest.fail(f"evidenceqa serve did not print its {word}:\n{''.join(lines)}")


def _wait_healthy(url: str, process: subprocess.Popen[str], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + "readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail(f"evidenceqa serve never became healthy (exit code {process.poll()})")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _require_browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("artifacts")


def _keep(path: Path) -> None:
    """Screenshots stay in the pytest tmp dir, and are copied to $EVIDENCEQA_ARTIFACTS when it is set."""
    if os.environ.get("EVIDENCEQA_ARTIFACTS"):
        target = Path(os.environ["EVIDENCEQA_ARTIFACTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / path.name)


def _logged_in(server: Server, browser: Any) -> tuple[Any, Any]:
    """A desktop browser context logged in as the administrator, on the chat page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(server.url + "login")
    page.get_by_label("Email").fill(ADMIN)
    page.get_by_label("Password").fill(server.password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url)
    return context, page


# Records every piece of text the page appends to the streaming answer, before it is replaced.
RECORD_STREAM = """
window.__streamed = [];
new MutationObserver((records) => {
  for (const record of records) {
    if (record.target.classList?.contains("streaming")) {
      for (const node of record.addedNodes) window.__streamed.push(node.textContent);
    }
  }
}).observe(document, { childList: true, subtree: true });
"""


def test_ask_read_the_cited_passage_and_give_feedback(server: Server, browser: Any, artifacts: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.add_init_script(RECORD_STREAM)

    page.goto(server.url)
    assert page.url.startswith(server.url + "login")
    page.get_by_label("Email").fill(ADMIN)
    page.get_by_label("Password").fill(server.password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url)
    notice = page.get_by_role("note")
    assert notice.inner_text() == (
        "evidenceqa is a research and familiarisation tool. It is not for real-time clinical decisions."
    )

    page.get_by_label("Your question").fill(SHAVE)
    page.get_by_label("Your question").press("Enter")  # the keyboard asks
    answer = page.locator("article.answer[data-answer-id]").first
    answer.wait_for()
    text = answer.locator(".answer-text").inner_text()
    assert "Shaving the incision site" in text and re.search(r"\[\d\]", text)
    assert "".join(page.evaluate("window.__streamed")) == text  # it arrived as delta events first
    assert re.fullmatch(rf"{re.escape(server.url)}conversations/\d+", page.url)
    assert page.locator("#conversation-list [aria-current=page]").inner_text().startswith("Does shaving")

    # The marker [n] in the text opens its source: title, year, and the passage with the support marked.
    answer.locator(".cite-ref").first.click()
    source = answer.locator(".citations li").first
    assert source.locator("details").evaluate("d => d.open")
    assert "Hair removal before spinal surgery" in source.locator("summary").inner_text()
    assert "2007" in source.locator("summary").inner_text()
    mark = source.locator("mark")
    assert mark.is_visible() and "Shaving the incision site" in mark.inner_text()
    assert mark.inner_text() in source.locator("blockquote").inner_text()
    assert source.get_by_role("link", name="Open the source document").get_attribute("href") == (
        "https://example.org/shave"
    )

    feedback = answer.locator("form.feedback")
    feedback.get_by_label("Acceptable").check()
    feedback.get_by_label("Comment (optional)").fill("Clear, but cite the newer guideline.")
    feedback.get_by_role("button", name="Send feedback").click()
    feedback.get_by_text("Thank you: feedback saved.").wait_for()
    answer_id = int(answer.get_attribute("data-answer-id"))
    with open_store(server.settings) as store:
        admin = next(u for u in list_users(store) if u.email == ADMIN)
        stored = feedback_of(store, answer_id, admin)
    assert stored.rating == 0.6 and stored.comment == "Clear, but cite the newer guideline."

    shot = artifacts / "chat.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    _keep(shot)

    # A document holding a script: shown as text, never run, its javascript: address never a link.
    page.get_by_label("Your question").fill(CEFAZOLIN)
    page.get_by_role("button", name="Ask").click()
    page.locator("article.answer[data-answer-id]").nth(1).wait_for()
    second = page.locator("article.answer[data-answer-id]").nth(1)
    assert SCRIPT in second.locator(".answer-text").inner_text()
    assert second.locator("a[href^='javascript:']").count() == 0
    # One card per source, numbered from 1 without gaps, each named by its document, never its id.
    cards = page.locator(f"#answer-{answer_id} .citations > li.source")
    numbers = [text.strip("[]") for text in cards.locator(".cite-n").all_inner_texts()]
    assert numbers == [str(n) for n in range(1, len(numbers) + 1)]
    assert not set(cards.locator(".cite-title").all_inner_texts()) & {d["doc_id"] for d in DOCS}
    streamed_cards = cards.locator("summary").all_inner_texts()
    # The history, rendered by the server: the same sources, the rating given, a keyboard-opened citation.
    page.reload()
    first = page.locator(f"#answer-{answer_id}")
    assert first.locator(".citations > li.source summary").all_inner_texts() == streamed_cards
    assert first.get_by_label("Acceptable").is_checked()
    assert first.get_by_label("Comment (optional)").input_value() == "Clear, but cite the newer guideline."
    first.locator("summary").first.focus()
    page.keyboard.press("Enter")
    assert first.locator("mark").first.is_visible()
    assert SCRIPT in page.locator("article.answer").nth(1).locator("summary").first.inner_text()
    assert dialogs == []
    context.storage_state(path=str(artifacts / "state.json"))
    context.close()


def test_a_follow_up_is_answered_in_the_light_of_the_first_question(
    server: Server, browser: Any, artifacts: Path
) -> None:
    context, page = _logged_in(server, browser)
    answers = page.locator("article.answer[data-answer-id]")
    for n, question in enumerate(("Does tranexamic acid reduce blood loss after knee arthroplasty?",
                                  "Is it safe after knee arthroplasty?")):  # fmt: skip
        page.get_by_label("Your question").fill(question)
        page.get_by_role("button", name="Ask").click()
        answers.nth(n).wait_for()
    follow_up = answers.nth(1)
    searched = "Searched for: Is tranexamic acid safe after knee arthroplasty?"
    assert follow_up.locator(".searched-for").inner_text().replace("“", "").replace("”", "") == searched
    assert answers.nth(0).locator(".searched-for").count() == 0  # the first question stands alone
    assert (
        "Tranexamic acid in knee arthroplasty" in follow_up.locator(".citations summary").first.inner_text()
    )
    page.reload()  # the history, rendered by the server, says the same
    shown = page.locator("article.answer[data-answer-id]").nth(1).locator(".searched-for").inner_text()
    assert shown.replace("“", "").replace("”", "") == searched
    shot = artifacts / "follow-up.png"
    page.screenshot(path=str(shot), full_page=True)
    _keep(shot)
    context.close()


def test_the_limits_on_the_evidence_show_on_the_answer_and_an_empty_range_says_why(
    server: Server, browser: Any, artifacts: Path
) -> None:
    context, page = _logged_in(server, browser)
    page.locator("details.filters summary").click()
    page.get_by_label("Evidence from year").fill("2022")
    page.get_by_label("up to year").fill("2019")
    page.get_by_label("Your question").fill(SHAVE)
    page.get_by_role("button", name="Ask").click()
    refusal = page.get_by_role("alert")
    refusal.wait_for()
    assert refusal.inner_text() == (
        "No answer: the earliest year (2022) is after the latest (2019): no year is in that range"
    )
    page.get_by_label("up to year").fill("")
    page.get_by_label("Evidence from year").fill("2000")
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("article.answer[data-answer-id]").first
    answer.wait_for()
    limits = answer.get_by_role("list", name="Limits on the evidence")
    assert limits.get_by_role("listitem").inner_text().removesuffix("×").strip() == "Years from 2000"
    # Its × asks the same question again, in the same conversation, without that limit.
    limits.get_by_role("button", name="Lift the limit Years from 2000").click()
    again = page.locator("article.answer[data-answer-id]").nth(1)
    again.wait_for()
    assert again.get_by_role("list", name="Limits on the evidence").count() == 0
    assert page.locator(".messages .question").nth(1).inner_text() == SHAVE
    page.reload()  # the history, rendered by the server, lists the same limits, its × as live
    shown = page.locator("article.answer[data-answer-id]")
    assert shown.count() == 2 and shown.nth(1).locator(".filter-chips").count() == 0
    first = shown.first.get_by_role("list", name="Limits on the evidence")
    assert first.get_by_role("listitem").inner_text().removesuffix("×").strip() == "Years from 2000"
    # The other filters: a collection and a document type the library holds.
    page.locator("details.filters summary").click()
    page.get_by_label("Collection").select_option("guidelines")
    page.get_by_label("Document type").select_option("guideline")
    page.get_by_label("Kind of evidence").select_option("guideline")
    page.get_by_label("Prefer stronger evidence").check()
    page.get_by_label("Your question").fill("Does ondansetron reduce nausea after surgery?")
    page.get_by_role("button", name="Ask").click()
    chosen = page.locator("article.answer[data-answer-id]").nth(2)
    chosen.wait_for()
    chips = chosen.get_by_role("list", name="Limits on the evidence").get_by_role("listitem")
    assert [c.removesuffix("×").strip() for c in chips.all_inner_texts()] == [
        "Collection: guidelines", "Document type: guideline", "Evidence: Guideline or consensus statement",
        "Stronger evidence ranked first"]  # fmt: skip
    assert chosen.locator(".cite-meta").all_inner_texts() == ["2020 · Guideline"]  # the one source it may use
    assert chosen.locator(".evidence-type").all_inner_texts() == ["Guideline or consensus statement"]
    shot = artifacts / "limits.png"
    chosen.screenshot(path=str(shot))
    _keep(shot)
    context.close()


def test_an_abstention_shows_the_closest_passages_and_takes_a_gap_report(
    server: Server, browser: Any, artifacts: Path
) -> None:
    context, page = _logged_in(server, browser)
    page.get_by_label("Your question").fill("What humidity should an operating room have?")
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("article.answer[data-answer-id]").first
    answer.wait_for()
    assert answer.locator(".answer-text").inner_text().startswith("I don't have adequate information")
    nearest = answer.get_by_role("region", name="Closest passages")
    assert "They do not answer the question." in nearest.inner_text()
    assert nearest.locator("li").count() >= 1 and nearest.locator(".cite-n").count() == 0
    answer.get_by_label("What were you looking for? (optional)").fill("Theatre humidity ranges")
    answer.get_by_role("button", name="Tell the library team").click()
    answer.get_by_text("Thank you: the library team will see this in its content-gap report.").wait_for()
    answer_id = int(answer.get_attribute("data-answer-id"))
    with open_store(server.settings) as store:
        [report] = [r for r in gap_reports_between(store, EARLIEST, LATEST) if r.answer_id == answer_id]
    assert report.comment == "Theatre humidity ranges"
    shot = artifacts / "abstention.png"
    page.screenshot(path=str(shot), full_page=True)
    _keep(shot)
    context.close()


def test_an_answer_is_copied_with_its_references_and_its_conversation_renamed_then_deleted(
    server: Server, browser: Any
) -> None:
    context, page = _logged_in(server, browser)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url.rstrip("/"))
    page.get_by_label("Your question").fill("Is clipping or shaving better before spinal surgery?")
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("article.answer[data-answer-id]").first
    answer.wait_for()
    answer.get_by_role("button", name="Copy with references").click()
    answer.get_by_text("Copied.").wait_for()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(answer.locator(".answer-text").inner_text())
    assert "\n\nReferences:\n1. Hair removal before spinal surgery. 2007. https://example.org/shave" in copied
    page.reload()  # the conversation's own tools are on its page
    page.get_by_role("button", name="Rename").click()
    page.get_by_label("Title").fill("Hair removal, theatre 2")
    page.get_by_role("button", name="Save title").click()
    page.get_by_text("Title saved.").wait_for()
    assert page.locator('#conversation-list [aria-current="page"]').inner_text() == "Hair removal, theatre 2"
    assert page.get_by_role("link", name="Export (Markdown)").get_attribute("href").endswith("/export.md")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    page.wait_for_url(server.url)
    assert "Hair removal, theatre 2" not in page.locator("#conversation-list").inner_text()
    context.close()


def test_the_chat_fits_a_phone(server: Server, browser: Any, artifacts: Path) -> None:
    state = artifacts / "state.json"
    if not state.exists():
        pytest.skip("needs the logged-in session of the test before it")
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True, has_touch=True,
        storage_state=str(state),
    )  # fmt: skip
    page = context.new_page()
    page.goto(server.url)
    # The conversation list is a drawer: closed, it takes nothing from the thread.
    conversations = page.locator("#conversation-list a").first
    assert not conversations.is_visible()
    toggle = page.get_by_role("button", name="Conversations")
    toggle.click()
    conversations.wait_for(state="visible")
    assert toggle.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")  # closes it, and the focus goes back to its button
    conversations.wait_for(state="hidden")  # once it has slid away
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.classList.contains('drawer-toggle')")
    toggle.click()
    conversations.click()
    page.locator("article.answer").first.wait_for()
    assert not page.locator("#conversation-list a").first.is_visible()  # a new page: the drawer is shut
    page.locator("article.answer summary").first.click()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{overflow}px of horizontal scroll on a phone"
    assert page.get_by_label("Your question").is_visible()
    # The notice shows on first view and may then be hidden; the page's footer keeps saying it.
    assert page.get_by_role("note").is_visible()
    page.get_by_role("button", name="Hide").click()
    page.reload()
    page.locator("article.answer").first.wait_for()
    assert not page.get_by_role("note").is_visible()
    assert page.locator("footer").inner_text() == DISCLAIMER
    # Reading keeps at least three quarters of the screen: what stays in view (sticky) is small.
    reading = page.evaluate("""() => {
        const kept = [...document.querySelectorAll("body *")].filter((e) =>
            ["sticky", "fixed"].includes(getComputedStyle(e).position) && getComputedStyle(e).visibility !== "hidden");
        return 1 - kept.reduce((sum, e) => sum + e.getBoundingClientRect().height, 0) / innerHeight;
    }""")
    assert reading >= 0.75, f"reading gets {reading:.0%} of a phone's screen"
    shot = artifacts / "chat-phone.png"
    page.screenshot(path=str(shot), full_page=True)
    _keep(shot)
    context.close()


def test_the_page_is_dark_where_the_device_is(server: Server, browser: Any, artifacts: Path) -> None:
    state = artifacts / "state.json"
    if not state.exists():
        pytest.skip("needs the logged-in session of the test before it")

    def colours(scheme: str) -> tuple[float, float]:
        context = browser.new_context(color_scheme=scheme, storage_state=str(state))
        page = context.new_page()
        page.goto(server.url)
        page.locator("#conversation-list a").first.click()
        page.locator("article.answer").first.wait_for()
        found = page.evaluate("""() => [document.documentElement, document.querySelector("article.answer")].map(
            (e) => getComputedStyle(e)).map((s) => [s.backgroundColor, s.color])""")
        if scheme == "dark":
            shot = artifacts / "chat-dark.png"
            page.screenshot(path=str(shot), full_page=True)
            _keep(shot)
        context.close()
        (page_bg, _), (card_bg, card_ink) = [[_luminance(c) for c in pair] for pair in found]
        return min(page_bg, card_bg), card_ink

    light_bg, light_ink = colours("light")
    dark_bg, dark_ink = colours("dark")
    assert light_bg > 0.8 and light_ink < 0.2  # dark text on light paper
    assert dark_bg < 0.1 and dark_ink > 0.6  # and the other way round


def _luminance(css: str) -> float:
    """The relative luminance (WCAG) of an rgb()/rgba() colour."""
    red, green, blue = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_an_admin_reset_link_then_a_password_change(server: Server, browser: Any, artifacts: Path) -> None:
    """An administrator makes an account and hands its holder a reset link; the holder sets a password
    through it, then changes it on their account page and logs in with the new one."""
    nurse, first, second = "nurse@example.org", "first passphrase 123", "second passphrase 456"
    admin, page = _logged_in(server, browser)
    page.goto(server.url + "admin")
    page.locator("#user-email").fill(nurse)
    page.locator("#user-name").fill("Night Nurse")
    page.locator("#user-password").fill("a password she never sees")
    page.get_by_role("button", name="Create account").click()
    page.get_by_role("button", name=f"Password-reset link for {nurse}").click()
    link = page.locator("#reset-link").input_value()
    assert link.startswith(server.url.rstrip("/") + "/reset/")
    admin.close()

    holder = browser.new_context(viewport={"width": 1280, "height": 900})
    page = holder.new_page()
    page.goto(link)
    page.get_by_label("New password (at least 10 characters)").fill(first)
    page.get_by_label("New password again").fill(first)
    page.get_by_role("button", name="Set password and log in").click()
    page.wait_for_url(server.url)
    page.get_by_role("link", name="Account").click()
    page.get_by_label("Current password").fill(first)
    page.get_by_label("New password (at least 10 characters)").fill(second)
    page.get_by_label("New password again").fill(second)
    page.get_by_role("button", name="Change password").click()
    page.get_by_role("status").filter(has_text="Password changed").wait_for()
    shot = artifacts / "account.png"
    page.screenshot(path=str(shot), full_page=True)
    _keep(shot)
    page.get_by_role("button", name="Log out", exact=True).click()
    page.get_by_label("Email").fill(nurse)
    page.get_by_label("Password").fill(second)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url)
    holder.close()


AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
# Every page a reader or an administrator sees; {conversation} is one with answers, sources and chips.
AUDITED = ["login", "", "conversations/{conversation}", "conversations/{conversation}/print", "account",
           "tokens", "admin", "admin/pilot", "review"]  # fmt: skip


def test_every_page_passes_an_axe_core_audit_light_dark_and_on_a_phone(server: Server, browser: Any) -> None:
    """axe-core (npm, `make test` installs it) on each page: no serious or critical violation."""
    if not AXE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{AXE} is missing: `npm ci` installs it")
        pytest.skip(f"{AXE} is missing: run `npm ci`")
    context, page = _logged_in(server, browser)
    page.get_by_label("Your question").fill(SHAVE)
    page.get_by_role("button", name="Ask").click()
    page.locator("article.answer[data-answer-id]").first.wait_for()
    conversation = page.url.rstrip("/").rsplit("/", 1)[-1]
    state = context.storage_state()
    context.close()
    found: dict[str, list[str]] = {}
    for scheme, viewport in (("light", {"width": 1280, "height": 900}), ("dark", {"width": 1280, "height": 900}),
                             ("light", {"width": 390, "height": 844})):  # fmt: skip
        # The pages' CSP admits only their own script; the audit's is injected past it.
        audit = browser.new_context(viewport=viewport, color_scheme=scheme, bypass_csp=True,
                                    storage_state=state)  # fmt: skip
        for path in AUDITED:
            checked = audit if path != "login" else browser.new_context(viewport=viewport, color_scheme=scheme,
                                                                         bypass_csp=True)  # fmt: skip
            view = checked.new_page()
            view.goto(server.url + path.format(conversation=conversation))
            for details in view.locator("details").all():  # every source and filter open, to be audited
                details.evaluate("d => { d.open = true; }")
            view.add_script_tag(path=str(AXE))
            violations = view.evaluate("""async () => (await axe.run(document, {resultTypes: ["violations"]}))
                .violations.filter((v) => ["serious", "critical"].includes(v.impact))
                .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`)""")
            if violations:
                found[f"{path or 'chat'} ({scheme}, {viewport['width']}px)"] = violations
            view.close()
            if checked is not audit:
                checked.close()
        audit.close()
    assert found == {}, found
