// The chat page: ask, stream the answer in, show cited passages, send feedback.
// Document text is untrusted: it only ever enters the page as text nodes (append/textContent),
// never as HTML. The server-rendered history (templates/_answer.html) has the same structure.
"use strict";

const csrfToken = document.querySelector('meta[name="csrf-token"]')?.content ?? "";

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children); // strings become text nodes
  return node;
}

function postJSON(url, body, accept = "application/json", method = "POST") {
  return fetch(url, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: accept, "X-CSRF-Token": csrfToken },
    body: JSON.stringify(body),
  });
}

async function errorText(response) {
  if (response.status === 401) {
    window.location.assign(`/login?next=${encodeURIComponent(window.location.pathname)}`);
    return "your session has ended";
  }
  try {
    const { detail } = await response.json();
    return typeof detail === "string" ? detail : `the request was refused (${response.status})`;
  } catch {
    return `the server answered ${response.status}`;
  }
}

// Server-sent events read from a fetch body: yields [event name, parsed data].
async function* serverEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replaceAll("\r\n", "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trimStart();
      }
      if (data) yield [name, JSON.parse(data)];
    }
  }
}

function answerText(answer) {
  const paragraph = el("p", { class: "answer-text" });
  let last = 0;
  for (const match of answer.answer.matchAll(/\[(\d+)\]/g)) {
    const link = el("a", { class: "cite-ref", href: `#cite-${answer.answer_id}-${match[1]}`,
                           "aria-label": `Source ${match[1]}` }, match[0]);
    paragraph.append(answer.answer.slice(last, match.index), link);
    last = match.index + match[0].length;
  }
  paragraph.append(answer.answer.slice(last));
  return paragraph;
}

// The chunk's text with the supporting passage marked: text node, <mark>, text node.
function passage(body, text) {
  const quote = el("blockquote", { class: "passage" });
  const at = body && text ? body.indexOf(text) : -1;
  if (at < 0) quote.append(el("mark", {}, text));
  else quote.append(body.slice(0, at), el("mark", {}, text), body.slice(at + text.length));
  return quote;
}

// A cited table as rows and columns, the rows the citation quotes marked: as templates/_answer.html.
function tablePassage(table) {
  const figure = el("figure", { class: "passage table-passage" });
  if (table.caption.length) figure.append(el("figcaption", {}, table.caption.join(" ")));
  const head = el("tr", {}, ...table.header.map((cell) => el("th", { scope: "col" }, cell)));
  const body = el("tbody", {});
  table.rows.forEach((row, i) => {
    const cited = table.cited.includes(i);
    body.append(el("tr", cited ? { class: "cited" } : {},
                   ...row.map((cell) => el("td", {}, cited ? el("mark", {}, cell) : cell))));
  });
  figure.append(el("table", {}, el("thead", {}, head), body));
  for (const note of table.notes) figure.append(el("p", { class: "table-note" }, note));
  return figure;
}

// A document type in words, as documents.doc_type_name gives it: none for the default type.
function docTypeName(docType) {
  const words = (docType ?? "").replaceAll(/[-_]/g, " ").trim();
  return words && words !== "document" ? words[0].toUpperCase() + words.slice(1) : "";
}

// A cited source ([n] in the text points at it): one document with its cited passages inside; or,
// `near`, an abstention's closest passages of one document (unnumbered). As templates/_answer.html's source_card.
function sourceCard(answerId, n, passages, near = false) {
  const first = passages[0];
  const summary = el("summary", {}, el("span", { class: "cite-title" }, first.label));
  if (!near) summary.prepend(el("span", { class: "cite-n" }, `[${n}]`), " ");
  const meta = [first.journal, first.year, docTypeName(first.doc_type)].filter(Boolean).join(" · ");
  if (meta) summary.append(" ", el("span", { class: "cite-meta" }, meta));
  if (first.evidence_name) summary.append(" ", el("span", { class: "evidence-type" }, first.evidence_name));
  if (first.superseded_by) {
    summary.append(" ", el("span", { class: "superseded" }, `Superseded by ${first.superseded_by.label}`));
  }
  const details = el("details", {}, summary);
  for (const cited of passages) {
    if (cited.section) details.append(el("p", { class: "cite-section" }, cited.section));
    details.append(cited.table ? tablePassage(cited.table) : passage(cited.body, cited.text));
  }
  if (first.url && /^https?:\/\//i.test(first.url)) {
    const link = el("a", { href: first.url, rel: "noopener noreferrer", target: "_blank" },
                    first.doi ? `doi:${first.doi}` : "Open the source document");
    details.append(el("p", { class: "source-link" }, link));
  }
  return el("li", { class: "source", id: `${near ? "near" : "cite"}-${answerId}-${n}`,
                    "data-reference": first.reference }, details);
}

// The citations (or closest passages) as sources: those sharing a number are one document's passages.
function sources(citations) {
  const byNumber = new Map();
  for (const cited of citations) byNumber.set(cited.n, [...(byNumber.get(cited.n) ?? []), cited]);
  return [...byNumber].sort(([a], [b]) => a - b);
}

const NEAREST_NOTE = "The closest passages the library holds. They do not answer the question.";  // answer.base.NEAREST_NOTE

// A form of templates/_answer.html (feedback, gap report) for one answer, its comment box labelled.
function answerForm(templateId, answerId, prefix) {
  const form = document.getElementById(templateId).content.firstElementChild.cloneNode(true);
  form.dataset.answerId = answerId;
  form.querySelector("textarea").id = `${prefix}-${answerId}`;
  form.querySelector(`.${prefix}-label`).htmlFor = `${prefix}-${answerId}`;
  return form;
}

// A limit on an answer's evidence; one the reader may lift has a button that asks again without it.
function chip(limit) {
  const item = el("li", {}, limit.label);
  if (limit.limit) {
    item.append(" ", el("button", { type: "button", class: "chip-remove", "data-limit": limit.limit,
                                    "data-value": limit.value ?? "", "aria-label": `Lift the limit ${limit.label}`,
                                    title: "Ask again without this limit" }, "×"));
  }
  return item;
}

function answerBlock(answer) {
  const article = el("article", { class: answer.abstained ? "answer abstained" : "answer",
                                  id: `answer-${answer.answer_id}`, "data-answer-id": answer.answer_id,
                                  "data-question": answer.question, "data-filters": JSON.stringify(answer.filters) });
  if (answer.searched_for) {  // a follow-up, resolved against the conversation
    article.append(el("p", { class: "searched-for" }, "Searched for: ", el("q", {}, answer.searched_for)));
  }
  if (answer.applied_filters.length) {  // as templates/_answer.html lists them
    article.append(el("ul", { class: "filter-chips", "aria-label": "Limits on the evidence" },
                      ...answer.applied_filters.map(chip)));
  }
  article.append(answerText(answer));
  if (answer.unsupported_sentences.length) {  // as templates/_answer.html marks them
    article.append(el("aside", { class: "flagged", role: "note" },
                      el("p", {}, "Not found in the passages they cite; check these against the sources:"),
                      el("ul", {}, ...answer.unsupported_sentences.map((text) => el("li", {}, text)))));
  }
  if (answer.citations.length) {
    article.append(el("h3", { class: "visually-hidden" }, "Sources"),
                   el("ol", { class: "citations" },
                      ...sources(answer.citations).map(([n, passages]) => sourceCard(answer.answer_id, n, passages))));
  }
  if (answer.nearest.length) {  // as templates/_answer.html shows them
    article.append(el("section", { class: "nearest", "aria-label": "Closest passages" },
                      el("p", {}, NEAREST_NOTE),
                      el("ul", { class: "citations" },
                         ...sources(answer.nearest).map(([n, passages]) => sourceCard(answer.answer_id, n, passages, true)))));
  }
  if (answer.citations.length) {  // as templates/_answer.html offers it
    article.append(el("p", { class: "copy" }, el("button", { type: "button", class: "link copy-answer" }, "Copy with references"),
                      " ", el("span", { class: "copy-status", role: "status" })));
  }
  if (answer.abstained) article.append(answerForm("gap-template", answer.answer_id, "gap"));
  article.append(answerForm("feedback-template", answer.answer_id, "comment"));
  return article;
}

// A new conversation gets its address and a place in the sidebar once its first answer is stored.
function adoptConversation(form, answer) {
  if (form.dataset.conversationId) return;
  form.dataset.conversationId = answer.conversation_id;
  const href = `/conversations/${answer.conversation_id}`;
  window.history.replaceState(null, "", href);
  for (const current of document.querySelectorAll('#conversation-list [aria-current="page"]')) {
    current.removeAttribute("aria-current");
  }
  const link = el("a", { href, "aria-current": "page" }, answer.question);
  document.getElementById("conversation-list").prepend(el("li", {}, link));
}

function filtersOf(form) {
  const filters = {};
  for (const name of ["year_min", "year_max"]) {
    if (form.elements[name].value) filters[name] = Number(form.elements[name].value);
  }
  for (const [name, field] of [["collections", "collection"], ["doc_types", "doc_type"],
                               ["evidence_types", "evidence_type"]]) {
    if (form.elements[field]?.value) filters[name] = [form.elements[field].value];
  }
  if (form.elements.prefer_evidence?.checked) filters.prefer_evidence = true;
  return Object.keys(filters).length ? filters : null;
}

// The filters an answer's evidence was held to, less the limit whose chip was removed: what the
// request may set (a reader's access is the server's to apply, not a filter to send).
function filtersWithout(applied, limit, value) {
  const filters = {};
  for (const name of ["year_min", "year_max", "collections", "doc_types", "evidence_types", "topics",
                      "prefer_evidence"]) {
    if (applied[name] !== undefined) filters[name] = applied[name];
  }
  if (limit === "years") {
    delete filters.year_min;
    delete filters.year_max;
  } else if (limit === "prefer_evidence") {
    delete filters.prefer_evidence;
  } else if (Array.isArray(filters[limit])) {
    filters[limit] = filters[limit].filter((item) => item !== value);
  }
  return filters;
}

function ask(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const question = form.elements.question.value.trim();
  if (!question) return;
  const filters = filtersOf(form);
  send(form, filters ? { question, filters } : { question }).then((answered) => {
    if (answered) form.elements.question.value = "";
  });
}

// A chip's ×: the same question asked again in this conversation, without that limit; its years
// are then only the ones the filters hold, not read from its words again.
function askWithout(button) {
  const article = button.closest("article.answer");
  const filters = filtersWithout(JSON.parse(article.dataset.filters || "{}"), button.dataset.limit,
                                 button.dataset.value);
  send(document.getElementById("ask"), { question: article.dataset.question, filters, question_years: false });
}

// Ask, stream the answer in under the question, store it in the conversation: true once answered.
async function send(form, body) {
  const question = body.question;
  if (form.dataset.conversationId) body.conversation_id = Number(form.dataset.conversationId);

  const status = document.getElementById("ask-status");
  const messages = document.getElementById("messages");
  messages.querySelector(".empty")?.remove();
  const streamed = el("p", { class: "answer-text streaming" });
  const reply = el("li", { class: "reply", "aria-busy": "true" }, el("article", { class: "answer" }, streamed));
  messages.append(el("li", { class: "question" }, el("p", {}, question)), reply);
  reply.scrollIntoView({ block: "nearest" });
  form.querySelector('button[type="submit"]').disabled = true;
  status.textContent = "Answering…";
  try {
    const response = await postJSON("/api/ask", body, "text/event-stream");
    if (!response.ok) throw new Error(await errorText(response));
    let answered = false;
    for await (const [name, data] of serverEvents(response)) {
      if (name === "delta") streamed.append(data.text);
      else if (name === "discard") streamed.replaceChildren();  // the LLM failed: its text is void
      else if (name === "error") throw new Error(data.detail);
      else if (name === "answer") {
        reply.replaceChildren(answerBlock(data));
        adoptConversation(form, data);
        answered = true;
      }
    }
    if (!answered) throw new Error("the connection ended before the answer was complete");
    status.textContent = "Answer ready.";
    return true;
  } catch (error) {
    reply.replaceChildren(el("p", { class: "error", role: "alert" }, `No answer: ${error.message}`));
    status.textContent = "";
    return false;
  } finally {
    reply.removeAttribute("aria-busy");
    form.querySelector('button[type="submit"]').disabled = false;
  }
}

async function sendFeedback(form) {
  const status = form.querySelector(".feedback-status");
  const rating = form.querySelector('input[name="rating"]:checked').value;
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  status.textContent = "Saving…";
  try {
    const response = await postJSON(`/api/answers/${form.dataset.answerId}/feedback`,
                                     { rating, comment: form.elements.comment.value });
    status.textContent = response.ok ? "Thank you: feedback saved." : `Not saved: ${await errorText(response)}`;
  } catch (error) {
    status.textContent = `Not saved: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

async function sendGap(form) {
  const status = form.querySelector(".gap-status");
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  status.textContent = "Sending…";
  try {
    const response = await postJSON(`/api/answers/${form.dataset.answerId}/gap`, { comment: form.elements.comment.value });
    status.textContent = response.ok ? "Thank you: the library team will see this in its content-gap report."
                                     : `Not sent: ${await errorText(response)}`;
  } catch (error) {
    status.textContent = `Not sent: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

// A citation marker [n] in the text opens its source below and moves focus there.
function openCitation(event) {
  const link = event.target.closest(".cite-ref");
  if (!link) return;
  const details = document.getElementById(link.hash.slice(1))?.querySelector("details");
  if (!details) return;
  event.preventDefault();
  details.open = true;
  details.querySelector("summary").focus();
}

// The notice may be hidden once read; the footer still says it, and a new wording shows again.
const NOTICE_KEY = "evidenceqa.notice-hidden";
function setUpNotice() {
  const bar = document.getElementById("notice-bar");
  const button = bar?.querySelector(".notice-hide");
  if (!button) return;
  const wording = bar.querySelector(".notice").textContent;
  if (localStorage.getItem(NOTICE_KEY) === wording) {
    bar.hidden = true;
    return;
  }
  button.hidden = false;
  button.addEventListener("click", () => {
    localStorage.setItem(NOTICE_KEY, wording);
    bar.hidden = true;
  });
}

// On a phone the conversation list is a drawer over the thread.
function setUpDrawer() {
  const toggle = document.querySelector(".drawer-toggle");
  const drawer = document.getElementById("conversations");
  if (!toggle || !drawer) return;
  const show = (open) => {
    drawer.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", String(open));
  };
  toggle.addEventListener("click", () => show(!drawer.classList.contains("open")));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && drawer.classList.contains("open")) {
      show(false);
      toggle.focus();
    }
  });
}

// An answer and its sources as text to paste into a note or a message: the [n] markers, then the
// references in Vancouver order.
async function copyAnswer(button) {
  const article = button.closest("article.answer");
  const references = [...article.querySelectorAll(".citations > li.source")].map(
    (card) => `${card.querySelector(".cite-n").textContent.replace(/[[\]]/g, "")}. ${card.dataset.reference}`);
  const text = `${article.querySelector(".answer-text").textContent}\n\nReferences:\n${references.join("\n")}\n`;
  const status = article.querySelector(".copy-status");
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = "Copied.";
  } catch {
    status.textContent = "Not copied: this browser does not allow it here.";
  }
}

// The current conversation's title, changed in place; and the conversation deleted, once confirmed.
function setUpConversationTools() {
  const open = document.getElementById("rename-open");
  const form = document.getElementById("rename");
  open?.addEventListener("click", () => {
    form.hidden = !form.hidden;
    open.setAttribute("aria-expanded", String(!form.hidden));
    if (!form.hidden) form.elements.title.focus();
  });
  form?.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = form.querySelector(".rename-status");
    const response = await postJSON(`/api/conversations/${form.dataset.conversationId}`,
                                     { title: form.elements.title.value }, "application/json", "PATCH");
    if (!response.ok) {
      status.textContent = `Not renamed: ${await errorText(response)}`;
      return;
    }
    const { title } = await response.json();
    document.title = `${title} · evidenceqa`;
    const current = document.querySelector('#conversation-list [aria-current="page"]');
    if (current) current.textContent = title;
    status.textContent = "Title saved.";
  });
  document.getElementById("delete")?.addEventListener("click", async (event) => {
    if (!window.confirm("Delete this conversation? It leaves your list for good.")) return;
    const id = event.currentTarget.dataset.conversationId;
    const response = await postJSON(`/api/conversations/${id}`, {}, "application/json", "DELETE");
    if (response.ok) window.location.assign("/");
    else document.getElementById("ask-status").textContent = `Not deleted: ${await errorText(response)}`;
  });
}

setUpNotice();
setUpDrawer();
setUpConversationTools();
document.getElementById("ask")?.addEventListener("submit", ask);
document.getElementById("ask")?.elements.question.addEventListener("keydown", (event) => {
  // Enter asks; Shift+Enter starts a new line.
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    event.currentTarget.form.requestSubmit();
  }
});
document.addEventListener("submit", (event) => {
  if (event.target.matches("form.feedback")) sendFeedback(event.target);
  else if (event.target.matches("form.gap-report")) sendGap(event.target);
  else return;
  event.preventDefault();
});
document.addEventListener("click", openCitation);
document.addEventListener("click", (event) => {
  const button = event.target.closest(".chip-remove, .copy-answer");
  if (button?.matches(".chip-remove")) askWithout(button);
  else if (button) copyAnswer(button);
});
