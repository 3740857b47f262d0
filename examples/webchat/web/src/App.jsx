import { useCallback, useEffect, useMemo, useState } from "react";
import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  ErrorPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
} from "@assistant-ui/react";
import { AssistantChatTransport, useChatRuntime } from "@assistant-ui/react-ai-sdk";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";
import { AddToolUI, CreateRecordTool, ToolFallback, WeatherToolUI } from "./tools.jsx";
import { ToolStatesPanel } from "./ToolStates.jsx";

// continueRun re-sends after the browser answered every tool call (the
// form) or every approval, so the server continues the run.
const continueRun = (opts) =>
  lastAssistantMessageIsCompleteWithToolCalls(opts) ||
  lastAssistantMessageIsCompleteWithApprovalResponses(opts);

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
    <div className="banner sim" data-testid="banner">
      Simulator: no language model runs here. The server plays a scripted demo ({info.model}).
    </div>
  ) : (
    <div className="banner" data-testid="banner">Model: {info.model}</div>
  );
}

const Reasoning = ({ text }) => (
  <details className="reasoning">
    <summary>Reasoning</summary>
    <div>{text}</div>
  </details>
);

const Text = ({ text }) => <span className="text">{text}</span>;

function UserMessage() {
  return (
    <MessagePrimitive.Root className="msg user" data-role="user">
      <MessagePrimitive.Parts />
    </MessagePrimitive.Root>
  );
}

function AssistantMessage() {
  return (
    <MessagePrimitive.Root className="msg assistant" data-role="assistant">
      <MessagePrimitive.Parts components={{ Text, Reasoning, tools: { Fallback: ToolFallback } }} />
      <MessagePrimitive.Error>
        <ErrorPrimitive.Root className="error" data-testid="error">
          <ErrorPrimitive.Message />
        </ErrorPrimitive.Root>
      </MessagePrimitive.Error>
    </MessagePrimitive.Root>
  );
}

function Composer() {
  return (
    <ComposerPrimitive.Root className="composer">
      <ComposerPrimitive.Input placeholder="Ask about the weather in Paris…" rows={1} autoFocus />
      <ThreadPrimitive.If running={false}>
        <ComposerPrimitive.Send className="send">Send</ComposerPrimitive.Send>
      </ThreadPrimitive.If>
      <ThreadPrimitive.If running>
        <ComposerPrimitive.Cancel className="stop">Stop</ComposerPrimitive.Cancel>
      </ThreadPrimitive.If>
    </ComposerPrimitive.Root>
  );
}

export function App() {
  const [chatId, setChatId] = useState("");
  const [runs, setRuns] = useState(0);
  const refresh = useCallback(() => setRuns((n) => n + 1), []);

  // The transport's fetch notes the chat id (the tool-state panel needs it)
  // and bumps runs when a response ends, so the panel refreshes.
  const transport = useMemo(
    () =>
      new AssistantChatTransport({
        api: "/api/chat",
        fetch: async (input, init) => {
          try {
            const id = JSON.parse(init?.body ?? "{}").id;
            if (id) setChatId(id);
          } catch {
            // not JSON: nothing to note
          }
          const res = await fetch(input, init);
          if (res.body) {
            res.clone().text().then(refresh, refresh);
          } else {
            refresh();
          }
          return res;
        },
      }),
    [refresh],
  );
  const runtime = useChatRuntime({ transport, sendAutomaticallyWhen: continueRun });

  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <CreateRecordTool />
      <WeatherToolUI />
      <AddToolUI />
      <div className="page">
        <main className="chat">
          <h1>agentloop webchat</h1>
          <Banner />
          <ThreadPrimitive.Root className="thread">
            <ThreadPrimitive.Viewport className="viewport">
              <ThreadPrimitive.Empty>
                <p className="hint">Try: “What is the weather in Paris, and what is 2 + 3?”</p>
              </ThreadPrimitive.Empty>
              <ThreadPrimitive.Messages components={{ UserMessage, AssistantMessage }} />
            </ThreadPrimitive.Viewport>
            <Composer />
          </ThreadPrimitive.Root>
        </main>
        <ToolStatesPanel chatId={chatId} version={runs} />
      </div>
    </AssistantRuntimeProvider>
  );
}
