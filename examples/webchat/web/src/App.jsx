import { useCallback, useEffect, useRef, useState } from "react";
import { AssistantRuntimeProvider } from "@assistant-ui/react";
import { useWebchatRuntime } from "./runtime.js";
import { Thread } from "./Thread.jsx";
import { AddToolUI, CreateRecordTool, WeatherToolUI } from "./tools.jsx";
import { ToolStatesPanel } from "./ToolStates.jsx";
import { PanelIcon } from "./icons.jsx";

// Banner says what answers: the simulator's scripted demo, or a model.
function Banner() {
  const [info, setInfo] = useState(null);
  useEffect(() => {
    fetch("/api/info")
      .then((r) => (r.ok ? r.json() : null))
      .then(setInfo)
      .catch(() => setInfo(null));
  }, []);
  if (!info) return null;
  return info.simulator ? (
    <p className="banner sim" data-testid="banner" title={info.model}>
      <b>Simulator:</b> a scripted demo answers; no language model runs.
    </p>
  ) : (
    <p className="banner" data-testid="banner">Model: {info.model}</p>
  );
}

export function App() {
  const [chatId, setChatId] = useState("");
  const [runs, setRuns] = useState(0);
  const [panelOpen, setPanelOpen] = useState(false);
  const refresh = useCallback(() => setRuns((n) => n + 1), []);
  const toggleRef = useRef(null);
  // Closing the drawer gives the focus back to the button that opened it.
  const closePanel = useCallback(() => {
    setPanelOpen(false);
    toggleRef.current?.focus();
  }, []);
  const runtime = useWebchatRuntime({ onChatId: setChatId, onResponseEnd: refresh });

  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <CreateRecordTool />
      <WeatherToolUI />
      <AddToolUI />
      <div className="app">
        <header className="topbar">
          <h1>agentloop webchat</h1>
          <Banner />
          <button type="button" ref={toggleRef} className="btn panel-toggle" aria-expanded={panelOpen} aria-controls="tool-states"
            onClick={() => setPanelOpen((o) => !o)}>
            <PanelIcon /> Tool states
          </button>
        </header>
        <div className="body">
          <main className="chat" aria-label="Chat">
            <Thread />
          </main>
          {panelOpen && <div className="backdrop" aria-hidden="true" onClick={closePanel} />}
          <ToolStatesPanel id="tool-states" chatId={chatId} version={runs} open={panelOpen} onClose={closePanel} />
        </div>
      </div>
    </AssistantRuntimeProvider>
  );
}
