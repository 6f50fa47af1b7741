// The shell of the page: sign-in (signin.js), routing by location hash, settings, banner.
//
// Contract with the lobby / status bar / badges / staff modules (their own files):
//   lobby.js     mountLobby(container, ctx, roomId)          route #/lobby/<roomId>
//   staff.js     mountStaff(container, ctx, page)            route #/staff/guard|memory|jobs
//   users_page.js mountUsers(container, ctx)                 route #/staff/users
//                (the staff nav shows only when ctx.me.role == "staff")
//   badges.js    renderChainBadges(message, ctx) -> HTMLElement | null, appended under each
//                finished assistant message (messages.js)
//   A mount function may return a cleanup function, called when the route changes. Modules are
//   loaded with a dynamic import: a missing one shows "view not available", nothing crashes.
//   ctx = {
//     api(path, options) -> Promise<json>  (options: fetch init + `json` body; throws an
//                                           ApiError with .status and .problem)
//     apiStream(path, body, {message, delta, error, done}, {signal})  (SSE over fetch)
//     t(key, vars), lang, me (GET /v1/me), events: {subscribe(filter, handler, extraTypes?)
//     -> unsubscribe} (one shared EventSource on /v1/events), renderMarkdown(text) -> safe
//     HTML, renderMessage(message) -> HTMLElement (the chat's message element),
//     reportError(error)
//   }
//   i18n.js exports registerTranslations({en: {...}, fr: {...}}) for their own labels.

import { makeApi } from "./api.js";
import { createBanner } from "./banner.js";
import { createChatStore, mountChat } from "./chat.js";
import { createEvents } from "./events.js";
import { focusMessage } from "./focus.js";
import { mountAttachments } from "./attachments.js";
import { mountInstructions } from "./instructions.js";
import { detectLang, getLang, setLang, t, translateTree } from "./i18n.js";
import { renderMarkdown } from "./markdown.js";
import { createMessageElement } from "./messages.js";
import { createRoomList, roomHref } from "./rooms.js";
import { createSearch } from "./search.js";
import { createSettings } from "./settings.js";
import { createSignin } from "./signin.js";

const $ = (id) => document.getElementById(id);

const banner = createBanner($("banner"), t);
// The session's CSRF token (the session itself is an HttpOnly cookie the page cannot read).
let csrf = null;
const { api, apiStream } = makeApi(() => csrf, { onNetwork: (ok) => banner.network(ok) });

function reportError(error) {
  if (error?.name === "AbortError") return;
  if (error?.status === 0) return; // the banner says it
  if (error?.status === 401) {
    // The session expired or was signed out elsewhere: back to the sign-in form.
    location.reload();
    return;
  }
  console.warn("eko:", error);
}

setLang(detectLang(navigator.language));
translateTree(document);

// ---- sign in / out ---------------------------------------------------------------------------

const signin = createSignin(api, {
  onSignedIn: (session) => {
    csrf = session.csrf_token;
    start(session.user);
  },
});

$("signout").addEventListener("click", async () => {
  try {
    await api("/v1/auth/signout", { method: "POST" });
  } catch (error) {
    if (error?.status !== 401) console.warn("eko:", error);
  }
  csrf = null;
  history.replaceState(null, "", location.pathname);
  location.reload();
});

// ---- signed in -------------------------------------------------------------------------------

function start(me) {
  const ctx = {
    api,
    apiStream,
    t,
    lang: getLang(),
    me,
    events: createEvents(api),
    renderMarkdown,
    renderMessage: (message) => createMessageElement(message, ctx),
    reportError,
    chainBadges: null,
  };
  const serverLang = me.settings?.language;
  if (serverLang && !localStorage.getItem("eko.lang")) applyLang(ctx, serverLang, false);
  import("./badges.js")
    .then((module) => (ctx.chainBadges = module.renderChainBadges))
    .catch(() => {});

  const store = createChatStore(ctx, {
    onStored: (roomId, first) => {
      if (first) rooms.reload().catch(reportError); // its title is its first message now
    },
    onSource: (source) => banner.answer(source),
  });
  const rooms = createRoomList($("room-list"), ctx, {
    onDeleted: (id) => {
      store.forget(id);
      if (currentRoute().id === id) location.hash = "";
      else route();
    },
  });
  const settings = createSettings($("settings-dialog"), ctx, {
    onSaved: (updated) => {
      ctx.me = updated;
      $("me-name").textContent = updated.display_name;
      applyLang(ctx, updated.settings?.language || ctx.lang, true);
      rooms.render();
      route();
    },
  });

  createSearch($("search"), $("search-results"), $("room-list"), ctx);

  let cleanup = null;
  let unfocus = null;
  async function route() {
    cleanup?.();
    cleanup = null;
    unfocus?.();
    const { view, id, focus } = currentRoute();
    // #/chat/<room>/<message>: opened at that message (a search result).
    unfocus = focus && (view === "chat" || view === "lobby") ? focusMessage($("view"), focus) : null;
    const container = $("view");
    closeRoomsOnPhone();
    if (view === "chat" && id) {
      rooms.setActive(id);
      const unmountChat = mountChat(container, ctx, store, id);
      const unmountInstructions = mountInstructions(container, ctx, id);
      const unmountAttachments = mountAttachments(container, ctx, id);
      cleanup = () => {
        unmountAttachments();
        unmountInstructions();
        unmountChat();
      };
    } else if (view === "lobby" && id) {
      rooms.setActive(id);
      cleanup = await mountModule(container, "./lobby.js", (m) => m.mountLobby(container, ctx, id));
    } else if (view === "staff" && id === "users" && me.role === "staff") {
      rooms.setActive(null);
      cleanup = await mountModule(container, "./users_page.js", (m) => m.mountUsers(container, ctx));
    } else if (view === "staff" && ["guard", "memory", "jobs"].includes(id) && me.role === "staff") {
      rooms.setActive(null);
      cleanup = await mountModule(container, "./staff.js", (m) => m.mountStaff(container, ctx, id));
    } else {
      const first = rooms.rooms()[0];
      if (first) location.replace(roomHref(first));
      else showPick(container);
    }
  }

  // A direct room is one person and Eko; a lobby is a room others join (members are added
  // from the lobby view by name, with suggestions).
  for (const [id, kind] of [["new-room", "direct"], ["new-lobby", "lobby"]]) {
    $(id).addEventListener("click", async () => {
      try {
        const room = await api("/v1/rooms", { method: "POST", json: { kind } });
        await rooms.reload();
        location.hash = roomHref(room);
      } catch (error) {
        reportError(error);
      }
    });
  }
  $("settings-open").addEventListener("click", () => settings.open());
  $("rooms-toggle").addEventListener("click", () => {
    const open = !document.body.classList.contains("rooms-open");
    document.body.classList.toggle("rooms-open", open);
    $("rooms-toggle").setAttribute("aria-expanded", String(open));
  });
  window.addEventListener("hashchange", route);

  $("signin").hidden = true;
  $("shell").hidden = false;
  $("me-name").textContent = me.display_name;
  $("staff-nav").hidden = me.role !== "staff";
  banner.start();
  rooms.reload().then(route, (error) => {
    reportError(error);
    route();
  });
}

function applyLang(ctx, lang, remember) {
  setLang(lang, { remember });
  ctx.lang = getLang();
  translateTree(document);
  banner.render();
}

function closeRoomsOnPhone() {
  document.body.classList.remove("rooms-open");
  $("rooms-toggle").setAttribute("aria-expanded", "false");
}

function currentRoute() {
  const [, view = "", id = "", focus = ""] = location.hash.split("/");
  return { view, id: decodeURIComponent(id), focus: decodeURIComponent(focus) };
}

async function mountModule(container, path, mount) {
  container.replaceChildren();
  container.className = "view";
  try {
    const module = await import(path);
    const cleanup = await mount(module);
    return typeof cleanup === "function" ? cleanup : null;
  } catch (error) {
    reportError(error);
    const p = document.createElement("p");
    p.className = "muted empty";
    p.textContent = t("view.missing");
    container.replaceChildren(p);
    return null;
  }
}

function showPick(container) {
  const p = document.createElement("p");
  p.className = "muted empty";
  p.textContent = t("chat.pick");
  container.className = "view";
  container.replaceChildren(p);
}

signin.boot();
