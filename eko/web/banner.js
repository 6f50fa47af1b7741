// The banner: server unreachable (a failed request, or /health not answering), model down
// (every provider's circuit open), model busy (people wait in the local model's line, or its
// call runs long: slow, not broken), or the last answer was a fallback.

const POLL_MS = 10000;
const POLL_OFFLINE_MS = 3000;

export function createBanner(el, t) {
  const state = { offline: false, modelDown: false, modelBusy: false, fallback: false };
  let timer = null;
  let stopped = false;

  function render() {
    const key = state.offline
      ? "banner.offline"
      : state.modelDown
        ? "banner.model_down"
        : state.modelBusy
          ? "banner.model_busy"
          : state.fallback
          ? "banner.fallback"
          : null;
    el.hidden = key === null;
    el.dataset.kind = key ? key.slice(7) : "";
    el.textContent = key ? t(key) : "";
  }

  function set(change) {
    Object.assign(state, change);
    render();
    if (change.offline === true) schedule(POLL_OFFLINE_MS);
  }

  async function poll() {
    timer = null;
    if (stopped) return;
    try {
      const response = await fetch("/health", { cache: "no-store" });
      const health = await response.json();
      const providers = health?.model?.providers || [];
      set({
        offline: false,
        modelDown: providers.length > 0 && providers.every((p) => p.circuit === "open"),
        modelBusy: health?.model?.status === "busy",
      });
    } catch {
      state.offline = true;
      render();
    }
    schedule(state.offline ? POLL_OFFLINE_MS : POLL_MS);
  }

  function schedule(ms) {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  return {
    start: () => poll(),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
    network: (ok) => {
      if (ok === state.offline) set({ offline: !ok });
    },
    answer: (source) => set({ fallback: source === "fallback" }),
    render,
  };
}
