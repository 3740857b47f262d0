import { useCallback, useEffect, useRef, useState } from "react";
import { CloseIcon } from "./icons.jsx";
import { trapTab } from "./focusTrap.js";

// ToolStatesPanel shows GET /agents/{chatId}/tool-states and resets them.
// version changes after each run, which reloads the panel. It is a drawer
// (style.css), shown while open is true, that keeps the focus inside it;
// onClose (its close button, or Escape inside it) asks to hide it.
export function ToolStatesPanel({ id, chatId, version, open, onClose }) {
  const [states, setStates] = useState(null);
  const [error, setError] = useState("");
  const closeRef = useRef(null);
  const asideRef = useRef(null);
  // Opening the drawer moves the focus into it, so a keyboard can use it.
  useEffect(() => {
    if (open) closeRef.current?.focus();
  }, [open]);

  // shown is the chat the panel shows: an answer for another one (the
  // page switched chats meanwhile) is dropped.
  const shown = useRef(chatId);
  shown.current = chatId;
  const load = useCallback(async () => {
    if (!chatId) {
      setStates(null);
      setError("");
      return;
    }
    try {
      const res = await fetch(`/agents/${encodeURIComponent(chatId)}/tool-states`);
      const body = await res.json().catch(() => null);
      if (shown.current !== chatId) return;
      if (!res.ok || !body?.success) {
        setError(body?.error ?? `HTTP ${res.status}`);
        setStates(null);
        return;
      }
      setError("");
      setStates(body.data?.toolStates ?? {});
    } catch (e) {
      if (shown.current === chatId) setError(String(e));
    }
  }, [chatId]);

  useEffect(() => {
    load();
  }, [load, version]);

  const reset = async () => {
    const res = await fetch(`/agents/${encodeURIComponent(chatId)}/tool-states/reset`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    if (!res.ok) setError(`reset failed: HTTP ${res.status}`);
    await load();
  };

  const names = states ? Object.keys(states).sort() : [];
  return (
    <aside id={id} ref={asideRef} className={"panel" + (open ? " open" : "")} data-testid="tool-states" aria-labelledby={id + "-title"}
      onKeyDown={(e) => {
        if (open) trapTab(e, asideRef.current);
        if (e.key === "Escape" && open) {
          e.preventDefault();
          onClose();
        }
      }}>
      <div className="panel-head">
        <h2 id={id + "-title"}>Tool states</h2>
        <button type="button" ref={closeRef} className="icon-btn panel-close" onClick={onClose} aria-label="Close tool states">
          <CloseIcon />
        </button>
      </div>
      {!chatId && <p className="hint">Send a message to start a conversation.</p>}
      {chatId && error && <p className="hint" role="status">Not available: {error}</p>}
      {states && names.length === 0 && <p className="hint">No tools seen yet.</p>}
      {names.length > 0 && (
        <table>
          <thead>
            <tr><th scope="col">Tool</th><th scope="col">Status</th><th scope="col">Why</th></tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <tr key={n} className={"st-" + states[n].status} data-tool={n} data-status={states[n].status}>
                <td>{n}</td>
                <td>{states[n].status}</td>
                <td className="reason">{states[n].reason ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chatId && (
        <div className="buttons">
          <button type="button" className="btn" onClick={load}>Refresh</button>
          <button type="button" className="btn" onClick={reset} disabled={!states}>Reset</button>
        </div>
      )}
    </aside>
  );
}
