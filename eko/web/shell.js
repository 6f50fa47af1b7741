// The signed-in shell: the room list, routing by location hash, settings, search. Started by
// app.js once a session exists. The conversation modules (chat, messages, markdown and its
// sanitizer, code blocks...) are imported when the shell starts, after the room list's request
// is sent: the list shows without waiting for them.
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
//   (renderMarkdown and renderMessage work once the conversation modules are loaded: every
//   view is mounted after they are.)
//   i18n.js exports registerTranslations({en: {...}, fr: {...}}) for their own labels.
//
// startShell(me, {api, apiStream, banner, reportError})

import { createEvents } from "./events.js";
import { focusMessage } from "./focus.js";
import { getLang, setLang, t, translateTree } from "./i18n.js";
import { createRoomList, roomHref } from "./rooms.js";
import { createSearch } from "./search.js";
import { createSettings } from "./settings.js";

const $ = (id) => document.getElementById(id);

// The conversation modules, as one object.
async function loadConversation() {
  const [chat, instructions, markdown, messages] = await Promise.all([
    import("./chat.js"),
    import("./instructions.js"),
    import("./markdown.js"),
    import("./messages.js"),
  ]);
  return { ...chat, ...instructions, ...markdown, ...messages };
}

export function startShell(me, { api, apiStream, banner, reportError }) {
  let conversation = null; // the loaded conversation modules
  const ctx = {
    api,
    apiStream,
    t,
    lang: getLang(),
    me,
    events: createEvents(api),
    renderMarkdown: (text) => conversation.renderMarkdown(text),
    renderMessage: (message) => conversation.createMessageElement(message, ctx),
    reportError,
    chainBadges: null,
  };
  const serverLang = me.settings?.language;
  if (serverLang && !localStorage.getItem("eko.lang")) applyLang(ctx, serverLang, false);

  let store = null; // the chat's per-room state, once the conversation modules are loaded
  const rooms = createRoomList($("room-list"), ctx, {
    onDeleted: (id) => {
      store?.forget(id);
      if (currentRoute().id === id) location.hash = "";
      else route();
    },
  });
  // The list's request goes first; the conversation modules load meanwhile.
  const listed = rooms.reload();
  const ready = loadConversation().then((modules) => {
    conversation = modules;
    store = modules.createChatStore(ctx, {
      onStored: (roomId, first) => {
        if (first) rooms.reload().catch(reportError); // its title is its first message now
      },
      onSource: (source) => banner.answer(source),
    });
  });
  import("./badges.js")
    .then((module) => (ctx.chainBadges = module.renderChainBadges))
    .catch(() => {});

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
  let routing = 0; // the latest route() call: an earlier one still waiting gives way
  async function route() {
    const turn = ++routing;
    try {
      await ready;
    } catch (error) {
      reportError(error);
      showMessage($("view"), t("view.missing"));
      return;
    }
    if (turn !== routing) return;
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
      const unmountChat = conversation.mountChat(container, ctx, store, id);
      const unmountInstructions = conversation.mountInstructions(container, ctx, id);
      cleanup = () => {
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
      else showMessage(container, t("chat.pick"));
    }
  }

  async function mountModule(container, path, mount) {
    container.replaceChildren();
    container.className = "view";
    try {
      const module = await import(path);
      const unmount = await mount(module);
      return typeof unmount === "function" ? unmount : null;
    } catch (error) {
      reportError(error);
      showMessage(container, t("view.missing"));
      return null;
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
  listed.then(route, (error) => {
    reportError(error);
    route();
  });

  function applyLang(context, lang, remember) {
    setLang(lang, { remember });
    context.lang = getLang();
    translateTree(document);
    banner.render();
  }
}

function closeRoomsOnPhone() {
  document.body.classList.remove("rooms-open");
  $("rooms-toggle").setAttribute("aria-expanded", "false");
}

function currentRoute() {
  const [, view = "", id = "", focus = ""] = location.hash.split("/");
  return { view, id: decodeURIComponent(id), focus: decodeURIComponent(focus) };
}

function showMessage(container, text) {
  const p = document.createElement("p");
  p.className = "muted empty";
  p.textContent = text;
  container.className = "view";
  container.replaceChildren(p);
}
