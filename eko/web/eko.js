"use strict";
// A small client of Eko's HTTP API. No build step, no framework.
const state = { key: localStorage.getItem("eko.key") || "", room: null };
const $ = (id) => document.getElementById(id);

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${state.key}`, ...(options.headers || {}) },
  });
  const body = response.status === 204 ? null : await response.json();
  if (!response.ok) throw new Error(body && (body.detail || body.title) || response.statusText);
  return body;
}

function renderMessage(m) {
  const div = document.createElement("div");
  div.className = `msg ${m.role}`;
  div.textContent = m.content;
  const meta = document.createElement("span");
  meta.className = "meta";
  const md = m.metadata || {};
  meta.textContent = m.role === "assistant"
    ? [m.type === "cached_response" ? "from memory (no model call)" : md.provider, md.model,
       md.intent ? `intent: ${md.intent}` : "", md.fallback ? `fallback: ${md.fallback}` : ""]
        .filter(Boolean).join(" · ")
    : new Date(m.created_at).toLocaleTimeString();
  div.appendChild(meta);
  if (m.role === "assistant") div.appendChild(feedbackButtons(m));
  $("messages").appendChild(div);
  $("messages").scrollTop = $("messages").scrollHeight;
}

// A thumbs-up validates an answer: the memory guard may then serve it again without a model.
function feedbackButtons(m) {
  const box = document.createElement("span");
  box.className = "feedback";
  for (const [rating, label] of [["up", "good answer"], ["down", "bad answer"]]) {
    const button = document.createElement("button");
    button.textContent = label;
    button.title = rating === "up" ? "Good answer" : "Bad answer";
    button.onclick = async () => {
      try {
        const result = await api(`/v1/messages/${m.id}/feedback`, {
          method: "POST", body: JSON.stringify({ rating }),
        });
        box.textContent = result.learned ? "thanks — remembered" : "thanks";
      } catch (error) { box.textContent = `error: ${error.message}`; }
    };
    box.appendChild(button);
  }
  return box;
}

async function openRoom(room) {
  state.room = room;
  document.querySelectorAll("#rooms li").forEach((li) => li.classList.toggle("active", li.dataset.id === room.id));
  $("messages").textContent = "";
  const page = await api(`/v1/rooms/${room.id}/messages?limit=100`);
  page.items.forEach(renderMessage);
}

async function loadRooms() {
  const rooms = await api("/v1/rooms");
  $("rooms").textContent = "";
  rooms.forEach((room) => {
    const li = document.createElement("li");
    li.dataset.id = room.id;
    li.textContent = `${room.name} (${room.kind})`;
    li.onclick = () => openRoom(room);
    $("rooms").appendChild(li);
  });
  if (rooms.length) await openRoom(rooms[0]);
}

async function connect() {
  const me = await api("/v1/me");
  $("status").textContent = `connected as ${me.display_name}`;
  $("login").hidden = true;
  $("app").hidden = false;
  await loadRooms();
}

$("login-form").onsubmit = async (event) => {
  event.preventDefault();
  state.key = $("api-key").value.trim();
  try { await connect(); localStorage.setItem("eko.key", state.key); }
  catch (error) { $("status").textContent = `error: ${error.message}`; }
};

$("new-room").onclick = async () => {
  const room = await api("/v1/rooms", { method: "POST", body: JSON.stringify({ kind: "direct" }) });
  await loadRooms();
  await openRoom(room);
};

$("send-form").onsubmit = async (event) => {
  event.preventDefault();
  if (!state.room) return;
  const content = $("content").value.trim();
  if (!content) return;
  $("send").disabled = true;
  $("status").textContent = "Eko is thinking…";
  try {
    const exchange = await api(`/v1/rooms/${state.room.id}/messages`, {
      method: "POST", body: JSON.stringify({ content, client_message_id: crypto.randomUUID() }),
    });
    $("content").value = "";
    renderMessage(exchange.user_message);
    if (exchange.assistant_message) renderMessage(exchange.assistant_message);
    $("status").textContent = "ready";
  } catch (error) {
    $("status").textContent = `error: ${error.message}`;
  } finally {
    $("send").disabled = false;
  }
};

if (state.key) connect().catch(() => { $("status").textContent = "key rejected"; });
