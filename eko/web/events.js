// One shared EventSource on /v1/events (opened on the first subscription, with a short-lived
// token from POST /v1/events/token, since EventSource cannot send an Authorization header).

const TYPES = [
  "message.created", "message.updated", "message.delta", "reply.stop",
  "reflection:phase", "reflection:update",
  "job.started", "job.succeeded", "job.failed", "job.deferred", "job.retrying",
  "stream.connected", "stream.dropped", "stream.expired",
];

export function createEvents(api) {
  const subscribers = new Set();
  const types = new Set(TYPES);
  let source = null;
  let closed = false;
  let retry = null;

  function deliver(event) {
    let item;
    try {
      item = JSON.parse(event.data);
    } catch {
      return;
    }
    item.type ??= event.type;
    for (const { filter, handler } of subscribers) {
      if (!filter || filter(item)) handler(item);
    }
  }

  function listen(type) {
    source?.addEventListener(type, deliver);
  }

  async function open() {
    if (source || closed) return;
    try {
      const { token } = await api("/v1/events/token", { method: "POST" });
      if (closed) return;
      source = new EventSource(`/v1/events?token=${encodeURIComponent(token)}`);
      for (const type of types) listen(type);
      // The server ends the stream when its token expires: open again now, with a new token.
      source.addEventListener("stream.expired", () => {
        source?.close();
        source = null;
        open();
      });
      source.onerror = () => {
        // The token is short-lived: a closed source reconnects with a fresh one.
        if (source?.readyState === EventSource.CLOSED) reopenLater();
      };
    } catch {
      reopenLater();
    }
  }

  function reopenLater() {
    source?.close();
    source = null;
    if (!closed && !retry) retry = setTimeout(() => ((retry = null), open()), 5000);
  }

  // subscribe(filter(event) -> bool, handler(event), extraTypes?) -> unsubscribe
  function subscribe(filter, handler, extraTypes = []) {
    for (const type of extraTypes) {
      if (!types.has(type)) {
        types.add(type);
        listen(type);
      }
    }
    const entry = { filter, handler };
    subscribers.add(entry);
    open();
    return () => subscribers.delete(entry);
  }

  function close() {
    closed = true;
    clearTimeout(retry);
    source?.close();
    source = null;
  }

  return { subscribe, close };
}
