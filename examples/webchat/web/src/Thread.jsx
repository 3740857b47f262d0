// The chat thread: welcome screen with suggestions, messages (Markdown
// answers and reasoning, tool UIs, per-message actions, edit in place),
// the scroll-to-bottom button and the composer.
import { createContext, useCallback, useContext, useEffect, useMemo, useState } from "react";
import {
  ActionBarPrimitive,
  AuiIf,
  BranchPickerPrimitive,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
  useAui,
  useAuiState,
} from "@assistant-ui/react";
import { MarkdownText } from "./LazyMarkdown.jsx";
import { ToolFallback } from "./tools.jsx";
import { ToolGroup } from "./ToolGroup.jsx";
import { SubagentRun, SubrunState } from "./SubagentRun.jsx";
import { AgentName } from "./AgentName.jsx";
import { FeedbackButtons } from "./Feedback.jsx";
import { friendlyError } from "./errors.js";
import { AttachButton, AttachmentDropzone, AttachmentError, ComposerAttachments, MessageAttachments } from "./attachments.jsx";
import {
  ArrowDownIcon,
  ArrowUpIcon,
  CheckIcon,
  ChevronLeftIcon,
  ChevronRightIcon,
  CopyIcon,
  PencilIcon,
  RefreshIcon,
  StopIcon,
} from "./icons.jsx";

// suggestions are the welcome screen's one-click prompts: each shows a
// different part of the demo.
const suggestions = [
  {
    prompt: "What is the weather in Paris, and what is 2 + 3?",
    title: "Weather in Paris, and 2 + 3",
    detail: "server tools, a form in this page, an approval",
  },
  {
    prompt: "Show me what Markdown answers look like.",
    title: "Show me some Markdown",
    detail: "formatting, a table and highlighted code",
  },
];

function Welcome() {
  return (
    <div className="welcome" data-testid="welcome">
      <h2>What shall we try?</h2>
      <p className="hint">Ask anything, or start with one of these.</p>
      <div className="suggestions">
        {suggestions.map((s) => (
          <ThreadPrimitive.Suggestion key={s.prompt} prompt={s.prompt} send className="suggestion">
            <span className="suggestion-title">{s.title}</span>
            <span className="suggestion-detail">{s.detail}</span>
          </ThreadPrimitive.Suggestion>
        ))}
      </div>
    </div>
  );
}

// dataParts renders the server's data parts: a sub-agent's run, and
// nothing for a paused sub-agent's state.
const dataParts = { by_name: { subagent: SubagentRun, subrun: SubrunState } };

const Reasoning = () => (
  <details className="reasoning">
    <summary>Reasoning</summary>
    <MarkdownText />
  </details>
);

function BranchPicker() {
  return (
    <BranchPickerPrimitive.Root hideWhenSingleBranch className="branch-picker">
      <BranchPickerPrimitive.Previous className="icon-btn" aria-label="Previous version">
        <ChevronLeftIcon />
      </BranchPickerPrimitive.Previous>
      <span className="branch-count">
        <BranchPickerPrimitive.Number /> / <BranchPickerPrimitive.Count />
      </span>
      <BranchPickerPrimitive.Next className="icon-btn" aria-label="Next version">
        <ChevronRightIcon />
      </BranchPickerPrimitive.Next>
    </BranchPickerPrimitive.Root>
  );
}

function UserMessage() {
  return (
    <MessagePrimitive.Root className="msg user" data-role="user">
      <div className="bubble">
        <MessageAttachments />
        <MessagePrimitive.Parts />
      </div>
      <div className="msg-footer">
        <BranchPicker />
        <ActionBarPrimitive.Root hideWhenRunning className="actions">
          <ActionBarPrimitive.Edit className="icon-btn" aria-label="Edit message" title="Edit">
            <PencilIcon />
          </ActionBarPrimitive.Edit>
        </ActionBarPrimitive.Root>
      </div>
    </MessagePrimitive.Root>
  );
}

// EditComposer replaces a user message while it is edited; Send replaces
// the message and asks again (a new branch), Cancel or Escape keeps it.
// The message's files come along as chips, each removable.
function EditComposer() {
  return (
    <MessagePrimitive.Root className="msg user editing" data-role="user">
      <ComposerPrimitive.Root className="edit-composer">
        <ComposerAttachments />
        <ComposerPrimitive.Input className="edit-input" aria-label="Edit your message" autoFocus />
        <div className="edit-buttons">
          <ComposerPrimitive.Cancel className="btn">Cancel</ComposerPrimitive.Cancel>
          <ComposerPrimitive.Send className="btn primary">Send</ComposerPrimitive.Send>
        </div>
      </ComposerPrimitive.Root>
    </MessagePrimitive.Root>
  );
}

// RunError shows a failed run as one short sentence: the server's text for
// the page (errors.js); the raw error stays in the server's log.
function RunError() {
  const error = useAuiState((s) =>
    s.message.status?.type === "incomplete" && s.message.status.reason === "error" ? s.message.status.error ?? "error" : null,
  );
  if (error == null) return null;
  return (
    <div className="run-error" role="alert" data-testid="error">
      {friendlyError(error)}
    </div>
  );
}

// Stopping: the runtime marks a stopped message "incomplete, cancelled"
// only when no tool call was left open; a reply stopped while a tool ran
// stays "requires-action", and later the open call is cancelled for good.
// So the page remembers which replies the user stopped in this page, and
// a loaded chat whose last run was stopped (the server's view says so:
// lastRun "stopped", on any browser) starts with its last reply marked
// (stoppedId). Cancelling the run in the page only closes its stream;
// onStop stops it on the server.
const StopContext = createContext({ stop: () => {}, stoppedIds: new Set() });

function useStopState(onStop, stoppedId) {
  const aui = useAui();
  const [stoppedIds, setStoppedIds] = useState(() => new Set(stoppedId ? [stoppedId] : []));
  const stop = useCallback(() => {
    const last = aui.thread().getState().messages.at(-1);
    if (last?.role === "assistant") {
      setStoppedIds((prev) => new Set(prev).add(last.id));
    }
    onStop?.();
    aui.thread().cancelRun();
  }, [aui, onStop]);
  return useMemo(() => ({ stop, stoppedIds }), [stop, stoppedIds]);
}

// stoppedOnServer: a stored reply whose tool call the server answered
// "cancelled: stopped" was stopped (the page that stopped it may have been
// reloaded since).
const stoppedOnServer = (message) =>
  message.parts.some((p) => p.type === "tool-call" && p.isError && p.result?.error === "cancelled: stopped");

function StoppedMark() {
  const { stoppedIds } = useContext(StopContext);
  const stopped = useAuiState(
    (s) =>
      stoppedIds.has(s.message.id) ||
      (s.message.status?.type === "incomplete" && s.message.status.reason === "cancelled") ||
      stoppedOnServer(s.message),
  );
  const running = useAuiState((s) => s.message.status?.type === "running");
  if (!stopped || running) return null;
  return <div className="stopped" data-testid="stopped">Stopped: you stopped this reply.</div>;
}

const waiting = (s) => s.message.status?.type === "running" && s.message.parts.length === 0;

function AssistantMessage() {
  return (
    <MessagePrimitive.Root className="msg assistant" data-role="assistant">
      <div className="bubble">
        <AgentName />
        <MessagePrimitive.Parts components={{ Text: MarkdownText, Reasoning, ToolGroup, tools: { Fallback: ToolFallback }, data: dataParts }} />
        <AuiIf condition={waiting}>
          <span className="typing" role="status" aria-label="The assistant is answering">
            <span />
            <span />
            <span />
          </span>
        </AuiIf>
        <StoppedMark />
        <RunError />
      </div>
      <div className="msg-footer">
        <BranchPicker />
        <ActionBarPrimitive.Root hideWhenRunning className="actions">
          <ActionBarPrimitive.Copy className="icon-btn copy" aria-label="Copy answer" title="Copy">
            <AuiIf condition={(s) => s.message.isCopied}>
              <CheckIcon />
            </AuiIf>
            <AuiIf condition={(s) => !s.message.isCopied}>
              <CopyIcon />
            </AuiIf>
          </ActionBarPrimitive.Copy>
          <ActionBarPrimitive.Reload className="icon-btn" aria-label="Regenerate answer" title="Regenerate">
            <RefreshIcon />
          </ActionBarPrimitive.Reload>
          <FeedbackButtons />
        </ActionBarPrimitive.Root>
      </div>
    </MessagePrimitive.Root>
  );
}

// Composer is the message box. Enter sends; while a reply runs, Enter does
// nothing (no new line either) and the line below says why (onBusyEnter).
// Files are attached with the clip button, by paste or by drop
// (attachments.jsx); their chips sit above the text.
function Composer({ onBusyEnter }) {
  const { stop } = useContext(StopContext);
  const running = useAuiState((s) => s.thread.isRunning);
  return (
    <AttachmentDropzone>
      <ComposerPrimitive.Root className="composer">
        <ComposerAttachments />
        <AttachButton />
        <ComposerPrimitive.Input
          className="composer-input"
          placeholder="Message the assistant…"
          aria-label="Message the assistant"
          rows={1}
          autoFocus
          cancelOnEscape={false}
          onKeyDown={(e) => {
            if (running && e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              onBusyEnter();
            }
          }}
        />
        <AuiIf condition={(s) => !s.thread.isRunning}>
          <ComposerPrimitive.Send className="send round-btn" aria-label="Send" title="Send (Enter)">
            <ArrowUpIcon />
          </ComposerPrimitive.Send>
        </AuiIf>
        <AuiIf condition={(s) => s.thread.isRunning}>
          <button type="button" className="stop round-btn" aria-label="Stop" title="Stop (Esc)" onClick={stop}>
            <StopIcon />
          </button>
        </AuiIf>
      </ComposerPrimitive.Root>
    </AttachmentDropzone>
  );
}

// ComposerHint is the line under the message box: the keys, or, after
// Enter while a reply runs, what to do instead (read out by screen
// readers).
function ComposerHint({ busyEnter }) {
  return (
    <p className={"composer-hint" + (busyEnter ? " busy" : " keys")} role="status" data-testid="composer-hint">
      {busyEnter ? "A reply is running: wait for it to end, or stop it (Esc), then send." : "Enter sends · Shift+Enter new line · Esc stops"}
    </p>
  );
}

// useEscapeStops makes Escape stop a running reply wherever the focus is
// (an edit's Cancel, and the tool-state drawer's close, come first: they
// mark the event handled).
function useEscapeStops(stop) {
  const running = useAuiState((s) => s.thread.isRunning);
  useEffect(() => {
    if (!running) return undefined;
    const onKey = (e) => {
      if (e.key !== "Escape" || e.defaultPrevented || e.isComposing) return;
      e.preventDefault();
      stop();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [stop, running]);
}

// Thread shows the runtime's thread. onStop, if set, is called when the
// user stops a running reply (the Stop button, Escape), before the page
// closes the reply's stream. stoppedId, if set, is the id of a loaded
// reply that was stopped.
export function Thread({ onStop, stoppedId }) {
  const stopState = useStopState(onStop, stoppedId);
  const running = useAuiState((s) => s.thread.isRunning);
  const [busyEnter, setBusyEnter] = useState(false);
  useEffect(() => {
    if (!running) setBusyEnter(false);
  }, [running]);
  useEscapeStops(stopState.stop);
  return (
    <StopContext.Provider value={stopState}>
      <ThreadPrimitive.Root className="thread">
        <ThreadPrimitive.Viewport className="viewport" data-testid="viewport">
          <AuiIf condition={(s) => s.thread.isEmpty}>
            <Welcome />
          </AuiIf>
          <ThreadPrimitive.Messages>
            {({ message }) =>
              message.composer.isEditing ? <EditComposer /> : message.role === "user" ? <UserMessage /> : <AssistantMessage />
            }
          </ThreadPrimitive.Messages>
          <ThreadPrimitive.ViewportFooter className="footer">
            <ThreadPrimitive.ScrollToBottom className="scroll-bottom round-btn" aria-label="Scroll to the latest message" title="Scroll to the latest message">
              <ArrowDownIcon />
            </ThreadPrimitive.ScrollToBottom>
            <Composer onBusyEnter={() => setBusyEnter(true)} />
            <AttachmentError />
            <ComposerHint busyEnter={busyEnter && running} />
          </ThreadPrimitive.ViewportFooter>
        </ThreadPrimitive.Viewport>
      </ThreadPrimitive.Root>
    </StopContext.Provider>
  );
}
