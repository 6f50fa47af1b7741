// The signed-in shell: the room list, routing by location hash, settings, search. Started by
// app.js once a session exists. Only the list's modules come with the page; the others (the
// conversation: chat, messages, markdown and its sanitizer, code blocks...; the events stream,
// search, settings) are imported once the room list is shown: the list does not wait for them.
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
//   (events, renderMarkdown and renderMessage are there once the views' modules are loaded:
//   every view is mounted after that.)
//   i18n.js exports registerTranslations({en: {...}, fr: {...}}) for their own labels.
//
// startShell(me, {api, apiStream, banner, reportError})

import { getLang, setLang, t, translateTree } from "./i18n.js";
import { createRoomList, roomHref } from "./rooms.js";

const $ = (id) => document.getElementById(id);

// What the views need and the list does not: the conversation modules, the events stream,
// focus, search and settings, as one object.
async function loadViews() {
  const modules = await Promise.all([
    import("./chat.js"),
    import("./instructions.js"),
    import("./attachments.js"),
    import("./markdown.js"),
    import("./messages.js"),
    import("./events.js"),
    import("./focus.js"),
    import("./search.js"),
    import("./settings.js"),
  ]);
  return Object.assign({}, ...modules);
}

export function startShell(me, { api, apiStream, banner, reportError }) {
  let views = null; // the loaded modules of loadViews()
  const ctx = {
    api,
    apiStream,
    t,
    lang: getLang(),
    me,
    events: null, // set with the views, before any is mounted
    renderMarkdown: (text) => views.renderMarkdown(text),
    renderMessage: (message) => views.createMessageElement(message, ctx),
    reportError,
    chainBadges: null,
  };
  const serverLang = me.settings?.language;
  if (serverLang && !localStorage.getItem("eko.lang")) applyLang(ctx, serverLang, false);

  let store = null; // the chat's per-room state, once the views are loaded
  const rooms = createRoomList($("room-list"), ctx, {
    onDeleted: (id) => {
      store?.forget(id);
      if (currentRoute().id === id) location.hash = "";
      else route();
    },
  });
  // The list first (its request was preloaded with the page), then the other modules: fetched
  // and compiled earlier, they would hold the list back (the browser opens six connections to
  // a server: every request more on the way is a wait more).
  const listed = rooms.reload();
  const afterList = listed.catch(() => {}); // a failed list still opens a view
  let settings = null;
  const ready = afterList.then(loadViews).then((modules) => {
    views = modules;
    ctx.events = modules.createEvents(api);
    store = modules.createChatStore(ctx, {
      onStored: (roomId, first) => {
        if (first) rooms.reload().catch(reportError); // its title is its first message now
      },
      onSource: (source) => banner.answer(source),
    });
    settings = modules.createSettings($("settings-dialog"), ctx, {
      onSaved: (updated) => {
        ctx.me = updated;
        $("me-name").textContent = updated.display_name;
        applyLang(ctx, updated.settings?.language || ctx.lang, true);
        rooms.render();
        route();
      },
    });
    modules.createSearch($("search"), $("search-results"), $("room-list"), ctx);
  });
  afterList
    .then(() => import("./badges.js"))
    .then((module) => (ctx.chainBadges = module.renderChainBadges))
    .catch(() => {});

  let cleanup = null;
  let unfocus = null;
  let routing = 0; // the latest route() call: an earlier one still waiting gives way
  // Until a view is first shown, a route is the page's own (the first room opened by itself):
  // it leaves the list as the person may have opened it meanwhile (on a phone).
  let opening = true;
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
    unfocus =
      focus && (view === "chat" || view === "lobby") ? views.focusMessage($("view"), focus) : null;
    const container = $("view");
    if (!opening) closeRoomsOnPhone();
    if (view === "chat" && id) {
      rooms.setActive(id);
      const unmountChat = views.mountChat(container, ctx, store, id);
      const unmountInstructions = views.mountInstructions(container, ctx, id);
      const unmountAttachments = views.mountAttachments(container, ctx, id);
      cleanup = () => {
        unmountAttachments();
        unmountInstructions();
        unmountChat();
      };
    } else if (view === "lobby" && id) {
      rooms.setActive(id);
      const mount = (m, view) => m.mountLobby(view, ctx, id);
      const mounted = await mountModule(container, "./lobby.js", mount, turn);
      if (turn === routing) cleanup = mounted;
    } else if (view === "staff" && id === "users" && me.role === "staff") {
      rooms.setActive(null);
      const mount = (m, view) => m.mountUsers(view, ctx);
      const mounted = await mountModule(container, "./users_page.js", mount, turn);
      if (turn === routing) cleanup = mounted;
    } else if (view === "staff" && ["guard", "memory", "jobs"].includes(id) && me.role === "staff") {
      rooms.setActive(null);
      const mount = (m, view) => m.mountStaff(view, ctx, id);
      const mounted = await mountModule(container, "./staff.js", mount, turn);
      if (turn === routing) cleanup = mounted;
    } else if (rooms.rooms().length) {
      location.replace(roomHref(rooms.rooms()[0])); // routes again: still the page's opening
      return;
    } else showMessage(container, t("chat.pick"));
    opening = false;
  }

  // A view in its own module is mounted once the module has loaded, and by then a newer route
  // may have shown another view (a click on "New conversation" while the lobby's module was
  // still on its way, or while the lobby was loading its room): the older route then leaves the
  // view to the newer one. The module writes through `whileCurrent`, so a mount that became
  // stale changes nothing on the page: the newer view is never shown again from scratch (which
  // lost what the person had typed into it meanwhile).
  async function mountModule(container, path, mount, turn) {
    container.replaceChildren();
    container.className = "view";
    try {
      const module = await import(path);
      if (turn !== routing) return null;
      const unmount = await mount(module, whileCurrent(container, turn));
      const stop = typeof unmount === "function" ? unmount : null;
      if (turn !== routing) {
        stop?.(); // a newer route came while this view was mounting
        return null;
      }
      return stop;
    } catch (error) {
      reportError(error);
      showMessage(container, t("view.missing"));
      return null;
    }
  }

  // The view's element as a module's mount sees it: its changes reach the page only while the
  // route that mounts it is the latest one.
  function whileCurrent(container, turn) {
    return new Proxy(container, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        return (...args) =>
          turn === routing || !VIEW_WRITES.has(name) ? value.apply(target, args) : undefined;
      },
      set(target, name, value) {
        if (turn === routing) Reflect.set(target, name, value, target);
        return true;
      },
    });
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
  $("settings-open").addEventListener("click", () => {
    ready.then(() => settings.open(), reportError);
  });
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

// What a stale mount may not do to the view's element (whileCurrent).
const VIEW_WRITES = new Set([
  "replaceChildren", "append", "appendChild", "prepend", "insertBefore", "removeChild",
  "replaceChild", "replaceWith", "remove", "insertAdjacentElement", "insertAdjacentHTML",
  "insertAdjacentText", "setAttribute", "removeAttribute", "toggleAttribute",
]);

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
