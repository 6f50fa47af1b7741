// The chat: per-room state kept outside the DOM (a reply streaming into a room the user left
// still lands there), and the view of one room (messages, composer, stop, regenerate, scroll).

import { ApiError, newId } from "./api.js";
import { createMessageElement, updateMessageElement } from "./messages.js";

// ---- state ---------------------------------------------------------------------------------

class RoomState {
  constructor(id) {
    this.id = id;
    this.messages = [];
    this.loaded = null; // the loading promise
    this.streaming = null; // {userMessageId, placeholderId} while a reply is written
    this.listeners = new Set();
  }
  emit(change) {
    for (const listener of this.listeners) listener(change);
  }
  find(id) {
    return this.messages.find((m) => m.id === id);
  }
  // Replace the message `id` with `message` (or add it), keeping the order.
  put(id, message) {
    const index = this.messages.findIndex((m) => m.id === id);
    if (index >= 0) this.messages[index] = message;
    else this.messages.push(message);
    this.emit({ type: "put", id, message });
  }
  remove(id) {
    this.messages = this.messages.filter((m) => m.id !== id);
    this.emit({ type: "remove", id });
  }
}

export function createChatStore(ctx, { onStored = () => {}, onSource = () => {} } = {}) {
  const rooms = new Map();

  function room(id) {
    if (!rooms.has(id)) rooms.set(id, new RoomState(id));
    return rooms.get(id);
  }

  async function load(state) {
    state.loaded ??= ctx
      .api(`/v1/rooms/${encodeURIComponent(state.id)}/messages?limit=200`)
      .then((page) => {
        const local = state.messages; // optimistic ones added while loading stay after
        state.messages = page.items.map((m) => ({ ...m, state: "done" }));
        for (const m of local) if (!state.find(m.id)) state.messages.push(m);
        state.emit({ type: "reset" });
      })
      .catch((error) => {
        state.loaded = null;
        throw error;
      });
    return state.loaded;
  }

  // Streams one exchange into `state`: handlers update the placeholder `exchange.placeholderId`.
  async function stream(state, exchange, path, body, { onUserMessage } = {}) {
    const { placeholderId } = exchange;
    let done = false;
    await ctx.apiStream(path, body, {
      message(stored) {
        exchange.userMessageId = stored.id;
        onUserMessage?.(stored);
        state.emit({ type: "streaming" });
      },
      // Waiting in the local model's line: the pending bubble says where (position 0: the
      // turn came, back to the plain pending bubble).
      queued({ position, estimate_s }) {
        const current = state.find(placeholderId);
        const queued = position > 0 ? { position, seconds: Math.max(1, Math.round(estimate_s)) } : null;
        if (current) state.put(placeholderId, { ...current, queued });
      },
      delta({ text }) {
        const current = state.find(placeholderId);
        if (current) state.put(placeholderId, { ...current, queued: null, content: current.content + text });
      },
      error({ detail }) {
        const current = state.find(placeholderId);
        if (current) state.put(placeholderId, { ...current, streamError: detail });
      },
      done({ message, source }) {
        done = true;
        if (message) state.put(placeholderId, { ...message, source, state: "done" });
        else state.remove(placeholderId);
        onSource(source, state.id);
        // The reply is shown whole: the next message may go now, not when the stream closes.
        release(state, exchange);
      },
    });
    return done;
  }

  async function send(roomId, content) {
    const state = room(roomId);
    if (state.streaming) return;
    const clientId = newId();
    const ownId = `local-${clientId}`;
    const placeholderId = `reply-${clientId}`;
    state.put(ownId, { id: ownId, role: "user", content, state: "pending" });
    const exchange = { userMessageId: null, placeholderId };
    state.streaming = exchange;
    state.put(placeholderId, { id: placeholderId, role: "assistant", content: "", state: "streaming" });
    try {
      const done = await stream(
        state,
        exchange,
        `/v1/rooms/${encodeURIComponent(roomId)}/messages`,
        { content, client_message_id: clientId },
        {
          onUserMessage: (stored) => {
            state.put(ownId, { ...stored, state: "done" });
            onStored(roomId, state.messages.filter((m) => m.role === "user").length === 1);
          },
        },
      );
      if (!done) await reloadAfterFailure(state, placeholderId);
    } catch (error) {
      if (exchange.userMessageId) {
        // Stored, then the stream broke (network): the server still answers; show what it has.
        reloadAfterFailure(state, placeholderId).catch(() => {});
      } else {
        const own = state.find(ownId);
        if (own) state.put(ownId, { ...own, state: "failed", error: messageOf(error) });
        state.remove(placeholderId);
      }
      if (!(error instanceof ApiError)) throw error;
    } finally {
      release(state, exchange);
    }
  }

  // The exchange is over: the composer sends again (unless a newer exchange already began).
  function release(state, exchange) {
    if (state.streaming !== exchange) return;
    state.streaming = null;
    state.emit({ type: "streaming" });
  }

  // A stream that ended without `done` (failed answer): the stored state is the truth.
  async function reloadAfterFailure(state, placeholderId) {
    state.remove(placeholderId);
    state.loaded = null;
    await load(state);
  }

  // The reply written again in place: regenerated, or for an edited message (`edit`: the
  // message's new text, shown at once, then as stored).
  async function rewrite(roomId, reply, edit) {
    const state = room(roomId);
    if (state.streaming) return;
    const exchange = { userMessageId: reply.reply_to_id, placeholderId: reply.id };
    state.streaming = exchange;
    const mine = edit && state.find(reply.reply_to_id);
    if (mine) state.put(mine.id, { ...mine, content: edit, state: "pending" });
    state.put(reply.id, { ...reply, content: "", state: "streaming", version: undefined });
    try {
      const messages = `/v1/rooms/${encodeURIComponent(roomId)}/messages`;
      const base = `${messages}/${encodeURIComponent(reply.id)}`;
      const path = edit ? `${messages}/${encodeURIComponent(reply.reply_to_id)}/edit` : `${base}/regenerate`;
      const done = await stream(state, exchange, path, edit ? { content: edit } : undefined, {
        onUserMessage: (stored) => edit && state.put(stored.id, { ...stored, state: "done" }),
      });
      if (!done) await reloadAfterFailure(state, reply.id);
      else if (edit) return;
      else {
        const versions = await ctx.api(`${base}/versions`);
        const current = state.find(reply.id);
        if (current) state.put(reply.id, { ...current, version: versions.previous.length + 1 });
      }
    } catch (error) {
      if (mine) state.put(mine.id, mine);
      state.put(reply.id, { ...reply, state: "failed", error: messageOf(error) });
      if (!(error instanceof ApiError)) throw error;
    } finally {
      release(state, exchange);
    }
  }

  async function stop(roomId) {
    const state = room(roomId);
    const id = state.streaming?.userMessageId;
    if (!id) return;
    await ctx.api(
      `/v1/rooms/${encodeURIComponent(roomId)}/messages/${encodeURIComponent(id)}/stop`,
      { method: "POST" },
    );
  }

  const regenerate = (roomId, reply) => rewrite(roomId, reply);
  // Edit the user message `message` (its reply is in the room) and ask again.
  async function edit(roomId, message, content) {
    const reply = room(roomId).messages.find((m) => m.reply_to_id === message.id);
    if (reply) await rewrite(roomId, reply, content);
  }

  return { room, load, send, regenerate, edit, stop, forget: (id) => rooms.delete(id) };
}

function messageOf(error) {
  return error?.problem?.detail || error?.problem?.title || error?.message || String(error);
}

// ---- view ----------------------------------------------------------------------------------

const NEAR_BOTTOM_PX = 48;

export function mountChat(container, ctx, store, roomId) {
  const state = store.room(roomId);
  container.replaceChildren();
  container.className = "view view-chat";
  const list = document.createElement("div");
  list.className = "messages";
  list.dataset.testid = "messages";
  list.setAttribute("aria-live", "polite");
  const empty = document.createElement("p");
  empty.className = "empty muted";
  empty.textContent = ctx.t("chat.empty");
  const pill = document.createElement("button");
  pill.type = "button";
  pill.className = "new-messages";
  pill.dataset.testid = "new-messages";
  pill.textContent = ctx.t("chat.new_messages");
  pill.hidden = true;
  const form = document.createElement("form");
  form.className = "composer";
  const input = document.createElement("textarea");
  input.rows = 2;
  input.dataset.testid = "composer";
  input.placeholder = ctx.t("chat.placeholder");
  input.setAttribute("aria-label", ctx.t("chat.placeholder"));
  const sendButton = document.createElement("button");
  sendButton.type = "submit";
  sendButton.className = "send";
  sendButton.textContent = "➤";
  sendButton.setAttribute("aria-label", ctx.t("chat.send"));
  sendButton.title = ctx.t("chat.send");
  const stopButton = document.createElement("button");
  stopButton.type = "button";
  stopButton.className = "stop";
  stopButton.textContent = "■";
  stopButton.setAttribute("aria-label", ctx.t("chat.stop"));
  stopButton.title = ctx.t("chat.stop");
  form.append(input, sendButton, stopButton);
  const scroller = document.createElement("div");
  scroller.className = "chat-body";
  scroller.append(list, pill);
  container.append(scroller, form);

  const elements = new Map();

  function lastAssistantId() {
    for (let i = state.messages.length - 1; i >= 0; i--) {
      if (state.messages[i].role === "assistant") return state.messages[i].id;
    }
    return null;
  }

  function actionsFor(message) {
    if (message.role === "user") return editableActions(message);
    if (message.id !== lastAssistantId() || !message.reply_to_id || state.streaming) return {};
    return {
      onRegenerate: (reply) => store.regenerate(roomId, reply).catch(ctx.reportError),
      // A reply cut at its length limit: ask for the rest, as a new message.
      onContinue: (prompt) => {
        list.scrollTop = list.scrollHeight;
        store.send(roomId, prompt).catch(ctx.reportError);
      },
    };
  }

  // One's own message, answered, and the last exchange of the room: it can be edited.
  function editableActions(message) {
    const last = state.messages.at(-1);
    if (state.streaming || !ctx.me || message.sender_public_id !== ctx.me.public_id) return {};
    if (!last || last.reply_to_id !== message.id || last.state !== "done") return {};
    return { onEdit: (m, content) => store.edit(roomId, m, content).catch(ctx.reportError) };
  }

  function nearBottom() {
    return list.scrollHeight - list.scrollTop - list.clientHeight <= NEAR_BOTTOM_PX;
  }

  function afterChange(wasNearBottom, grew) {
    if (wasNearBottom) {
      list.scrollTop = list.scrollHeight;
      pill.hidden = true;
    } else if (grew) pill.hidden = false;
  }

  function renderAll() {
    elements.clear();
    list.replaceChildren(
      ...state.messages.map((m) => {
        const el = createMessageElement(m, ctx, actionsFor(m));
        elements.set(m.id, el);
        return el;
      }),
    );
    empty.hidden = state.messages.length > 0;
    list.append(empty);
    afterChange(true, false);
    renderControls();
  }

  function renderControls() {
    const busy = !!state.streaming;
    stopButton.hidden = !busy;
    stopButton.disabled = !state.streaming?.userMessageId;
    sendButton.hidden = busy;
    container.classList.toggle("is-streaming", busy);
  }

  function refreshActions() {
    for (const m of state.messages) {
      const el = elements.get(m.id);
      if (el) updateMessageElement(el, m, ctx, actionsFor(m));
    }
  }

  function onChange(change) {
    const wasNearBottom = nearBottom();
    if (change.type === "reset") return renderAll();
    if (change.type === "streaming") {
      renderControls();
      refreshActions();
      return;
    }
    if (change.type === "remove") {
      elements.get(change.id)?.remove();
      elements.delete(change.id);
    } else if (change.type === "put") {
      const { id, message } = change;
      const existing = elements.get(id);
      if (existing) {
        updateMessageElement(existing, message, ctx, actionsFor(message));
        if (id !== message.id) {
          elements.delete(id);
          elements.set(message.id, existing);
        }
      } else {
        const el = createMessageElement(message, ctx, actionsFor(message));
        elements.set(message.id, el);
        list.insertBefore(el, empty);
      }
    }
    empty.hidden = state.messages.length > 0;
    afterChange(wasNearBottom, true);
  }

  list.addEventListener("scroll", () => {
    if (nearBottom()) pill.hidden = true;
  });
  pill.addEventListener("click", () => {
    list.scrollTop = list.scrollHeight;
    pill.hidden = true;
  });

  function submit() {
    const content = input.value;
    if (!content.trim() || state.streaming) return;
    input.value = "";
    list.scrollTop = list.scrollHeight; // one's own message brings the view down
    store.send(roomId, content).catch(ctx.reportError);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  stopButton.addEventListener("click", () => store.stop(roomId).catch(ctx.reportError));

  state.listeners.add(onChange);
  renderAll();
  store.load(state).catch(ctx.reportError);
  input.focus();
  return () => state.listeners.delete(onChange);
}
