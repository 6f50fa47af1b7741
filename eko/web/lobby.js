// The lobby: many people in one room, live over the shared events stream. Messages of others
// appear without a reload; the assistant's spontaneous messages (a reflection's, metadata
// `proactive`) are marked; the status bar shows the assistant's reflections live.
//
// mountLobby(container, ctx, roomId) -> unmount()

import { mountAttachments } from "./attachments.js";
import { renderChainBadges } from "./badges.js";
import { clientId, el, ensureCss, errorText, label, registerLabels } from "./lobby_labels.js";
import { createStatusBar } from "./statusbar.js";

const PAGE = 100;
const CATCH_UP_MS = 15000;

function personaName(room) {
  const persona = (room && room.persona) || "eko";
  return persona.charAt(0).toUpperCase() + persona.slice(1);
}

export async function mountLobby(container, ctx, roomId) {
  await registerLabels();
  ensureCss("lobby.css");
  const path = `/v1/rooms/${encodeURIComponent(roomId)}`;
  const root = el("section", "lobby", null, { "data-testid": "lobby", "data-room-id": roomId });
  container.replaceChildren(root);

  let room;
  try {
    room = await ctx.api(path);
  } catch (error) {
    root.appendChild(el("p", "lobby-error", label(ctx, "lobby.loadError", { error: errorText(error) }), { role: "alert" }));
    return () => {};
  }
  const name = personaName(room);
  const names = new Map(); // public id -> display name
  const rendered = new Map(); // message id -> element
  let lastSeq = 0;
  let alive = true;

  // --- layout ------------------------------------------------------------------------------
  const header = el("header", "lobby-header");
  const title = el("h2", "lobby-title", room.name || label(ctx, "lobby.title"));
  const count = el("span", "lobby-members", "", { "data-testid": "lobby-members" });
  const statusbar = createStatusBar(ctx, roomId, { assistantName: name });
  header.append(title, count, statusbar.element);
  const list = el("div", "lobby-messages", null, { "data-testid": "lobby-messages", "aria-live": "polite" });
  const notice = el("p", "lobby-notice", "", { role: "alert", hidden: true });
  const form = el("form", "lobby-composer", null, { "data-testid": "lobby-composer" });
  const input = el("textarea", "lobby-input", null, {
    rows: 2,
    "data-testid": "lobby-input",
    placeholder: label(ctx, "lobby.placeholder", { name }),
    "aria-label": label(ctx, "lobby.placeholder", { name }),
  });
  const send = el("button", "lobby-send", label(ctx, "lobby.send"), { type: "submit", "data-testid": "lobby-send" });
  form.append(input, send);
  const invite = el("form", "lobby-invite");
  const suggestionsId = `lobby-suggestions-${roomId}`;
  const inviteInput = el("input", "", null, {
    type: "text",
    placeholder: label(ctx, "lobby.addMember"),
    "aria-label": label(ctx, "lobby.addMember"),
    maxlength: 200,
    autocomplete: "off",
    list: suggestionsId,
    "data-testid": "lobby-add-member",
  });
  const suggestions = el("datalist", "", null, { id: suggestionsId, "data-testid": "lobby-member-suggestions" });
  invite.append(
    inviteInput,
    suggestions,
    el("button", "", label(ctx, "lobby.add"), { type: "submit", "data-testid": "lobby-add-member-submit" }),
  );
  root.append(header, list, notice, form, invite);
  const unmountAttachments = mountAttachments(root, ctx, roomId, form);

  // `ok`: a confirmation, not in the error colour (#37).
  function say(text, { ok = false } = {}) {
    notice.textContent = text;
    notice.hidden = !text;
    notice.classList.toggle("ok", ok);
  }

  // --- members -----------------------------------------------------------------------------
  async function loadMembers() {
    try {
      const members = await ctx.api(`${path}/members`);
      for (const member of members) names.set(member.public_id, member.display_name);
      count.textContent =
        members.length === 1 ? label(ctx, "lobby.member") : label(ctx, "lobby.members", { n: members.length });
    } catch {
      // Names are a comfort: messages still show without them.
    }
  }

  function senderOf(message) {
    if (message.role === "assistant") return name;
    const id = message.sender_public_id;
    if (!id) return "";
    if (ctx.me && id === ctx.me.public_id) return label(ctx, "lobby.you");
    return names.get(id) || id.slice(0, 8);
  }

  // --- messages ----------------------------------------------------------------------------
  function decorate(node, message) {
    node.classList.add("lobby-msg");
    node.dataset.messageId = message.id;
    node.dataset.role = message.role;
    const mine = ctx.me && message.sender_public_id === ctx.me.public_id;
    node.classList.toggle("lobby-mine", Boolean(mine));
    const who = el("div", "lobby-sender", senderOf(message), { "data-testid": "lobby-sender" });
    const meta = message.metadata || {};
    if (message.role === "assistant" && meta.proactive) {
      node.classList.add("spontaneous");
      node.dataset.spontaneous = "true";
      who.appendChild(
        el("span", "badge badge-spontaneous", label(ctx, "lobby.spontaneous"), {
          "data-testid": "spontaneous-badge",
          title: label(ctx, "lobby.spontaneousTitle", { name }),
        }),
      );
    }
    node.prepend(who);
    if (message.role === "assistant" && !node.querySelector(".chain-badges")) {
      const badges = renderChainBadges(message, ctx);
      if (badges) node.appendChild(badges);
    }
    return node;
  }

  function render(message) {
    if (message.sender_public_id && !names.has(message.sender_public_id)) loadMembers();
    const node = decorate(ctx.renderMessage({ ...message, state: "done" }), message);
    const existing = rendered.get(message.id);
    if (existing) existing.replaceWith(node);
    else {
      // Keep the room's order: insert before the first message with a higher seq.
      const after = [...list.children].find((child) => Number(child.dataset.seq) > message.seq);
      list.insertBefore(node, after || null);
    }
    node.dataset.seq = String(message.seq);
    rendered.set(message.id, node);
    lastSeq = Math.max(lastSeq, message.seq);
  }

  function atBottom() {
    return list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  }

  function addAll(messages) {
    const follow = atBottom();
    for (const message of messages) render(message);
    if (follow && messages.length) list.scrollTop = list.scrollHeight;
  }

  // New messages since the last one shown (the event only says that something arrived; the
  // page of messages carries the sender and the metadata).
  let fetching = null;
  let again = false;
  async function catchUp() {
    if (fetching) {
      again = true;
      return fetching;
    }
    fetching = (async () => {
      do {
        again = false;
        try {
          const page = await ctx.api(`${path}/messages?after=${lastSeq}&limit=${PAGE}`);
          if (!alive) return;
          addAll(page.items || []);
          if ((page.items || []).length === PAGE) again = true;
        } catch (error) {
          say(label(ctx, "lobby.loadError", { error: errorText(error) }));
        }
      } while (again && alive);
    })();
    try {
      await fetching;
    } finally {
      fetching = null;
    }
  }

  async function refresh(messageId, seq) {
    try {
      const page = await ctx.api(`${path}/messages?after=${Math.max(0, seq - 1)}&limit=1`);
      const message = (page.items || []).find((m) => m.id === messageId);
      if (message && alive) render(message);
    } catch {
      // the next catch-up will do
    }
  }

  // --- the events stream -------------------------------------------------------------------
  function onEvent(event) {
    if (!alive || !root.isConnected) return unmount();
    if (event.type === "message.created") catchUp();
    else if (event.type === "message.updated") {
      const message = (event.data && event.data.message) || {};
      if (rendered.has(message.id)) refresh(message.id, Number(message.seq) || 1);
    } else if (event.type.startsWith("reflection:")) statusbar.onEvent(event);
  }
  const unsubscribe = ctx.events
    ? ctx.events.subscribe((event) => event && event.room_id === roomId, onEvent)
    : () => {};
  // A safety net for a stream that was down or not yet open when a message arrived.
  const poll = setInterval(() => {
    if (!root.isConnected) unmount();
    else if (document.visibilityState === "visible") catchUp();
  }, CATCH_UP_MS);

  // --- composer ----------------------------------------------------------------------------
  async function post() {
    const content = input.value;
    if (!content.trim()) return;
    input.value = "";
    say("");
    try {
      const exchange = await ctx.api(`${path}/messages`, {
        method: "POST",
        json: { content, client_message_id: clientId() },
      });
      if (!alive) return;
      // Usually shown already through the stream; this covers a stream that is down.
      const shown = [exchange.user_message, exchange.assistant_message].filter(Boolean);
      addAll(shown.filter((m) => !rendered.has(m.id)));
    } catch (error) {
      if (!input.value) input.value = content;
      say(label(ctx, "lobby.sendError", { error: errorText(error) }));
    }
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    post();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      post();
    }
  });
  // Suggestions: users whose name contains what is typed (GET …/member-suggestions); a name
  // several people share is sent as the suggestion's public id.
  let suggested = [];
  let suggestTimer = null;
  inviteInput.addEventListener("input", () => {
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(async () => {
      const q = inviteInput.value.trim();
      try {
        suggested = await ctx.api(`${path}/member-suggestions?q=${encodeURIComponent(q)}`);
      } catch {
        suggested = [];
      }
      suggestions.replaceChildren(...suggested.map((s) => el("option", "", null, { value: s.display_name })));
    }, 150);
  });
  function who(text) {
    const same = suggested.filter((s) => s.display_name === text);
    if (same.length === 1) return { public_id: same[0].public_id };
    if (/^[0-9a-f]{32}$/.test(text)) return { public_id: text };
    return { name: text };
  }
  invite.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wanted = inviteInput.value.trim();
    if (!wanted) return;
    try {
      await ctx.api(`${path}/members`, { method: "POST", json: who(wanted) });
      inviteInput.value = "";
      say(label(ctx, "lobby.added"), { ok: true });
      loadMembers();
    } catch (error) {
      say(label(ctx, "lobby.sendError", { error: errorText(error) }));
    }
  });

  // --- first load --------------------------------------------------------------------------
  function unmount() {
    if (!alive) return;
    alive = false;
    clearInterval(poll);
    clearTimeout(suggestTimer);
    unsubscribe();
    statusbar.destroy();
    unmountAttachments();
  }

  await loadMembers();
  try {
    const page = await ctx.api(`${path}/messages?limit=${PAGE}`);
    addAll(page.items || []);
    list.scrollTop = list.scrollHeight;
  } catch (error) {
    say(label(ctx, "lobby.loadError", { error: errorText(error) }));
  }
  root.dataset.ready = "true";
  ctx.api(`${path}/reflection/status`).then(statusbar.resume, () => {});
  // Anything that arrived while the first page loaded.
  catchUp();
  return unmount;
}
