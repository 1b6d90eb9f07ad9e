/* The view's side of the MCP Apps protocol (SEP-1865): JSON-RPC 2.0 over postMessage with the host only.
   view.request(method, params) -> Promise; view.on(method, handler) for host notifications;
   view.start(appInfo) runs ui/initialize, then ui/notifications/initialized; size changes are reported. */
const view = (() => {
  const pending = new Map();
  const handlers = {};
  let nextId = 1;
  const send = (message) => window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message || "request failed"));
      else waiting.resolve(message.result);
    } else if (message.id !== undefined) {
      send({ id: message.id, result: {} });  // ui/resource-teardown, ping: nothing to keep
    } else if (handlers[message.method]) {
      handlers[message.method](message.params || {});
    }
  });
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params: params || {} });
  });
  const notify = (method, params) => send({ method, params: params || {} });
  const reportSize = () => notify("ui/notifications/size-changed", {
    width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight),
  });
  return {
    request,
    notify,
    on: (method, handler) => { handlers[method] = handler; },
    callTool: (name, args) => request("tools/call", { name, arguments: args }),
    start: async (appInfo) => {
      const result = await request("ui/initialize", {
        appInfo, appCapabilities: {}, protocolVersion: "2026-01-26",
      });
      notify("ui/notifications/initialized", {});
      if (window.ResizeObserver) new ResizeObserver(reportSize).observe(document.documentElement);
      return result;
    },
  };
})();
