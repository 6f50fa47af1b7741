// The conversation list: titles, new, rename, export, delete. Lobby rooms open as #/lobby/<id>.

import { exportButton } from "./export.js";

export function roomHref(room) {
  return room.kind === "lobby" ? `#/lobby/${room.id}` : `#/chat/${room.id}`;
}

export function createRoomList(listEl, ctx, { onDeleted = () => {} } = {}) {
  let rooms = [];
  let activeId = null;

  async function reload() {
    rooms = await ctx.api("/v1/rooms");
    render();
    listEl.dataset.loaded = "true";
    return rooms;
  }

  function titleOf(room) {
    return room.title || room.name;
  }

  function iconButton(className, labelKey, symbol, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `icon ${className}`;
    b.textContent = symbol;
    b.setAttribute("aria-label", ctx.t(labelKey));
    b.title = ctx.t(labelKey);
    b.addEventListener("click", onClick);
    return b;
  }

  function render() {
    const items = rooms.map((room) => {
      const li = document.createElement("li");
      li.className = `room room-${room.kind}` + (room.id === activeId ? " active" : "");
      li.dataset.roomId = room.id;
      const link = document.createElement("a");
      link.className = "room-title";
      link.href = roomHref(room);
      link.textContent = titleOf(room);
      if (room.kind === "lobby") {
        const tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = ctx.t("rooms.lobby");
        link.prepend(tag, " ");
      }
      if (room.id === activeId) link.setAttribute("aria-current", "page");
      li.append(
        link,
        iconButton("rename", "rooms.rename", "✎", () => rename(room).catch(ctx.reportError)),
        exportButton(room, ctx),
        iconButton("delete", "rooms.delete", "✕", () => remove(room).catch(ctx.reportError)),
      );
      return li;
    });
    if (!items.length) {
      const li = document.createElement("li");
      li.className = "muted empty";
      li.textContent = ctx.t("rooms.empty");
      items.push(li);
    }
    listEl.replaceChildren(...items);
  }

  async function rename(room) {
    const name = window.prompt(ctx.t("rooms.rename.prompt"), titleOf(room));
    if (name === null || !name.trim()) return;
    await ctx.api(`/v1/rooms/${encodeURIComponent(room.id)}`, {
      method: "PATCH",
      json: { name: name.trim().slice(0, 200) },
    });
    await reload();
  }

  async function remove(room) {
    if (!window.confirm(ctx.t("rooms.delete.confirm", { title: titleOf(room) }))) return;
    await ctx.api(`/v1/rooms/${encodeURIComponent(room.id)}`, { method: "DELETE" });
    await reload();
    onDeleted(room.id);
  }

  function setActive(id) {
    activeId = id;
    render();
  }

  return { reload, render, setActive, rooms: () => rooms };
}
