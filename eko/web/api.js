// The native API from the browser: JSON calls, SSE replies over fetch, ids without crypto.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

// A network failure (no HTTP answer at all): status 0.
export class NetworkError extends ApiError {
  constructor(cause) {
    super(0, { title: "Network error", detail: String(cause?.message || cause) });
  }
}

// crypto.randomUUID exists only in secure contexts (https, localhost): over plain http on a LAN
// address it is missing, so fall back to getRandomValues, then to Math.random.
export function newId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  const bytes = new Uint8Array(16);
  if (globalThis.crypto?.getRandomValues) crypto.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const SAFE_METHODS = ["GET", "HEAD", "OPTIONS"];

// makeApi(getCsrf, {onNetwork(ok)}) -> {api, apiStream, close}
// The page is signed in by its HttpOnly session cookie (sent by the browser); every write
// carries the session's CSRF token in X-CSRF-Token, which the server checks.
// close(): the page signs out. The requests in flight are aborted and later ones refused, with
// an AbortError (which callers ignore): none of the views' requests is answered 401 once the
// session ends. A call with {afterClose: true} (the sign-out itself) still goes.
export function makeApi(getCsrf, { onNetwork = () => {} } = {}) {
  const closed = new AbortController();
  function headers(method, extra = {}) {
    const csrf = getCsrf();
    const write = !SAFE_METHODS.includes((method || "GET").toUpperCase());
    return { ...(write && csrf ? { "X-CSRF-Token": csrf } : {}), ...extra };
  }

  async function send(path, { afterClose = false, ...options } = {}) {
    if (closed.signal.aborted && !afterClose) {
      throw new DOMException("The page is signing out.", "AbortError");
    }
    const init = { ...options, headers: headers(options.method, options.headers) };
    if (!afterClose) {
      init.signal = options.signal ? AbortSignal.any([options.signal, closed.signal]) : closed.signal;
    }
    if (options.json !== undefined) {
      init.body = JSON.stringify(options.json);
      init.headers["Content-Type"] = "application/json";
      delete init.json;
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      if (error?.name === "AbortError") throw error;
      onNetwork(false);
      throw new NetworkError(error);
    }
    onNetwork(true);
    if (!response.ok) {
      let problem = null;
      try {
        problem = await response.json();
      } catch {
        problem = { title: response.statusText };
      }
      throw new ApiError(response.status, problem);
    }
    return response;
  }

  async function api(path, options = {}) {
    const response = await send(path, options);
    if (response.status === 204) return null;
    const type = response.headers.get("content-type") || "";
    return type.includes("json") ? response.json() : response.text();
  }

  // POST `body` and read the Server-Sent Events of the reply (eko/api/sse_reply.py).
  // handlers: {message(m), delta({index, text}), error({code, detail}), done({message, source})}
  async function apiStream(path, body, handlers = {}, { signal } = {}) {
    const response = await send(path, {
      method: "POST",
      json: body,
      headers: { Accept: "text/event-stream" },
      signal,
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (error?.name === "AbortError") throw error;
        onNetwork(false);
        throw new NetworkError(error);
      }
      if (chunk.done) break;
      buffer += chunk.value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        dispatch(frame, handlers);
      }
    }
  }

  return { api, apiStream, close: () => closed.abort() };
}

function dispatch(frame, handlers) {
  let event = "message";
  const data = [];
  for (const line of frame.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  if (!data.length || !handlers[event]) return;
  handlers[event](JSON.parse(data.join("\n")));
}
