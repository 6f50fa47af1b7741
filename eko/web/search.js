// The search box over the conversation list: titles and message text (GET /v1/search).
// While it holds a query, its results replace the list; a message result opens its room at
// that message (#/chat/<room>/<message>, see focus.js).
//
// createSearch(inputEl, resultsEl, listEl, ctx) -> {clear()}

import { registerTranslations } from "./i18n.js";
import { roomHref } from "./rooms.js";

registerTranslations({
  en: {
    "search.placeholder": "Search conversations",
    "search.rooms": "Conversations",
    "search.messages": "Messages",
    "search.none": "Nothing found.",
    "search.you": "You",
  },
  fr: {
    "search.placeholder": "Rechercher dans les conversations",
    "search.rooms": "Conversations",
    "search.messages": "Messages",
    "search.none": "Aucun résultat.",
    "search.you": "Vous",
  },
});

const DEBOUNCE_MS = 250;

export function messageHref(hit) {
  const base = roomHref({ id: hit.room_id, kind: hit.room_kind });
  return `${base}/${encodeURIComponent(hit.message_id)}`;
}

export function createSearch(inputEl, resultsEl, listEl, ctx) {
  let timer = null;
  let asked = 0; // the latest query's number: older answers arriving late are dropped

  function item(href, title, detail, testid) {
    const li = document.createElement("li");
    li.className = "search-result";
    const link = document.createElement("a");
    link.href = href;
    link.dataset.testid = testid;
    const strong = document.createElement("span");
    strong.className = "search-title";
    strong.textContent = title;
    link.append(strong);
    if (detail) {
      const small = document.createElement("span");
      small.className = "search-snippet muted";
      small.textContent = detail;
      link.append(small);
    }
    li.append(link);
    return li;
  }

  function heading(key) {
    const li = document.createElement("li");
    li.className = "search-heading muted";
    li.textContent = ctx.t(key);
    return li;
  }

  function render(found) {
    const items = [];
    if (found.rooms.length) {
      items.push(heading("search.rooms"));
      for (const room of found.rooms) items.push(item(roomHref(room), room.title, "", "search-room"));
    }
    if (found.messages.length) {
      items.push(heading("search.messages"));
      for (const hit of found.messages) {
        const who = hit.role === "assistant" ? "Eko" : ctx.t("search.you");
        items.push(item(messageHref(hit), hit.room_title, `${who}: ${hit.snippet}`, "search-message"));
      }
    }
    if (!items.length) {
      const li = document.createElement("li");
      li.className = "muted empty";
      li.dataset.testid = "search-none";
      li.textContent = ctx.t("search.none");
      items.push(li);
    }
    resultsEl.replaceChildren(...items);
  }

  async function run(query) {
    const mine = ++asked;
    try {
      const found = await ctx.api(`/v1/search?q=${encodeURIComponent(query)}&limit=30`);
      if (mine === asked) render(found);
    } catch (error) {
      if (mine === asked) resultsEl.replaceChildren();
      ctx.reportError(error);
    }
  }

  function update() {
    clearTimeout(timer);
    const query = inputEl.value.trim();
    resultsEl.hidden = !query;
    listEl.hidden = !!query;
    if (!query) {
      asked++;
      resultsEl.replaceChildren();
      return;
    }
    timer = setTimeout(() => run(query), DEBOUNCE_MS);
  }

  function clear() {
    inputEl.value = "";
    update();
  }

  inputEl.placeholder = ctx.t("search.placeholder");
  inputEl.setAttribute("aria-label", ctx.t("search.placeholder"));
  inputEl.addEventListener("input", update);
  inputEl.addEventListener("keydown", (event) => {
    if (event.key === "Escape") clear();
  });
  return { clear };
}
