import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { AssistantRuntimeProvider } from "@assistant-ui/react";
import { useWebchatRuntime } from "./runtime.js";
import { Thread } from "./Thread.jsx";
import { ThreadList } from "./ThreadList.jsx";
import { AddToolUI, CreateRecordTool, WeatherToolUI } from "./tools.jsx";
import { ToolStatesPanel } from "./ToolStates.jsx";
import { FeedbackProvider } from "./Feedback.jsx";
import { MenuIcon, PanelIcon } from "./icons.jsx";
import { chatMarkdown, downloadText, fileName } from "./exportChat.js";
import {
  ChatNotFound,
  chatInURL,
  deleteChat,
  getChat,
  listChats,
  newChatId,
  renameChat,
  showChatInURL,
  stopChat,
} from "./chats.js";

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
  // One line: on a phone only its first word shows (style.css), the title
  // has it all.
  return info.simulator ? (
    <p className="banner sim" data-testid="banner" title={`Simulator: a scripted demo answers; no language model runs (${info.model}).`}>
      <b>Simulator</b><span className="banner-detail">: a scripted demo answers; no language model runs.</span>
    </p>
  ) : (
    <p className="banner" data-testid="banner">Model: {info.model}</p>
  );
}

// ChatSession is one chat on screen, with its own runtime: App keys it by
// the chat's id, so switching chats mounts a new one. chat is {id,
// messages, branches, resume, stoppedId, feedback}: branches are the other
// versions of its messages (edits, regenerations); stoppedId is the last reply's id
// when the server says the chat's last run was stopped; feedback the
// stored ratings of its answers. onNotice shows a short sentence.
// onResponse and onNoStream get the chat's id: a response can arrive for
// a chat that is no longer on screen.
function ChatSession({ chat, onResponse, onNoStream, onResponseEnd, onRunning, onNotice }) {
  useEffect(() => {
    if (chat.resume) onRunning(chat.id);
  }, [chat.resume, chat.id, onRunning]);
  const runtime = useWebchatRuntime({
    chatId: chat.id,
    messages: chat.messages,
    branches: chat.branches,
    resume: chat.resume,
    onResponse: useCallback(() => onResponse(chat.id), [onResponse, chat.id]),
    onNoStream: useCallback(() => onNoStream(chat.id), [onNoStream, chat.id]),
    onResponseEnd: useCallback(() => onResponseEnd(chat.id), [onResponseEnd, chat.id]),
  });
  const onStop = useCallback(() => {
    stopChat(chat.id).catch((e) => console.warn("webchat:", e.message));
  }, [chat.id]);
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <CreateRecordTool />
      <WeatherToolUI />
      <AddToolUI />
      <FeedbackProvider chatId={chat.id} initial={chat.feedback} onError={onNotice}>
        <Thread onStop={onStop} stoppedId={chat.stoppedId} />
      </FeedbackProvider>
    </AssistantRuntimeProvider>
  );
}

// undoSeconds is how long a deleted chat can be brought back.
const undoSeconds = 6;

const freshChat = () => ({ id: newChatId(), messages: [], resume: false, saved: false, feedback: {} });

// useChatList keeps the first pages of GET /api/chats; refresh reloads as
// many chats as are shown, more adds the next page, forget drops a chat
// at once (before the server confirms its deletion).
function useChatList() {
  const [list, setList] = useState({ chats: [], next: undefined, loading: true, error: "" });
  const latest = useRef(list);
  useEffect(() => {
    latest.current = list;
  });
  // Only the latest refresh's answer is shown (answers can overtake each
  // other).
  const refreshes = useRef(0);
  const refresh = useCallback(async () => {
    const n = ++refreshes.current;
    try {
      const page = await listChats({ limit: Math.min(Math.max(latest.current.chats.length, 30), 500) });
      if (n === refreshes.current) setList({ ...page, loading: false, error: "" });
    } catch (e) {
      if (n === refreshes.current) setList((l) => ({ ...l, loading: false, error: e.message }));
    }
  }, []);
  const more = useCallback(async () => {
    const cursor = latest.current.next;
    if (!cursor) return;
    setList((l) => ({ ...l, loading: true }));
    try {
      const page = await listChats({ cursor });
      setList((l) => {
        const known = new Set(l.chats.map((c) => c.id));
        return { chats: [...l.chats, ...page.chats.filter((c) => !known.has(c.id))], next: page.next, loading: false, error: "" };
      });
    } catch (e) {
      setList((l) => ({ ...l, loading: false, error: e.message }));
    }
  }, []);
  const forget = useCallback((id) => {
    setList((l) => ({ ...l, chats: l.chats.filter((c) => c.id !== id) }));
  }, []);
  return { list, refresh, more, forget };
}

export function App() {
  // chat is the chat on screen: {id, messages, resume, saved} (saved: the
  // server has it), or null while it loads.
  const [chat, setChat] = useState(null);
  const shown = useRef(chat);
  useEffect(() => {
    shown.current = chat;
  });
  const [notice, setNotice] = useState("");
  const [runs, setRuns] = useState(0);
  // drawer is the drawer open on a narrow screen: "chats", "states" or "".
  const [drawer, setDrawer] = useState("");
  const { list, refresh, more, forget } = useChatList();
  const chatsToggle = useRef(null);
  const statesToggle = useRef(null);
  const toggles = useMemo(() => ({ chats: chatsToggle, states: statesToggle }), []);
  const loads = useRef(0);

  // open shows the chat id ("" for a new one) and says so in the address
  // (a new history entry when push is true). A chat the server does not
  // have becomes a new chat, with a notice.
  // again is true when the chat on screen is loaded again (once; see
  // onNoStream).
  const open = useCallback(async (id, { push = false, again = false } = {}) => {
    const load = ++loads.current;
    setNotice("");
    if (!id) {
      setChat(freshChat());
      showChatInURL("", { push });
      return;
    }
    setChat(null);
    showChatInURL(id, { push });
    try {
      const view = await getChat(id);
      if (load !== loads.current) return;
      const last = view.messages.at(-1);
      const stoppedId = view.lastRun === "stopped" && last?.role === "assistant" ? last.id : undefined;
      setChat({ id, messages: view.messages, resume: view.streaming, saved: true, again, stoppedId, feedback: view.feedback, branches: view.branches });
    } catch (e) {
      if (load !== loads.current) return;
      setChat(freshChat());
      showChatInURL("");
      setNotice(e instanceof ChatNotFound ? "That chat no longer exists, so this is a new one." : `${e.message}. This is a new chat.`);
    }
  }, []);

  useEffect(() => {
    refresh();
    open(chatInURL());
    // Back and Forward move between the chats the address named.
    const onPop = () => open(chatInURL());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, [refresh, open]);

  // The first response of a new chat means the server has it: it joins
  // the list and the address.
  const chatId = chat?.id;
  // running: the chats whose reply this page saw start and not yet end.
  const [running, setRunning] = useState(() => new Set());
  const onRunning = useCallback((id) => setRunning((r) => (r.has(id) ? r : new Set(r).add(id))), []);
  const onResponse = useCallback((id) => {
    onRunning(id);
    const c = shown.current;
    if (c?.id === id && !c.saved) {
      showChatInURL(id);
      setChat({ ...c, saved: true });
    }
    refresh();
  }, [refresh, onRunning]);
  // A run the chat's view said was in progress can end before its stream
  // is asked for (204): the messages shown may then lack its end, so the
  // chat is loaded again, once.
  const onNoStream = useCallback((id) => {
    const c = shown.current;
    if (c?.id === id && c.resume && !c.again) open(id, { again: true });
  }, [open]);
  const onResponseEnd = useCallback((id) => {
    setRunning((r) => {
      if (!r.has(id)) return r;
      const next = new Set(r);
      next.delete(id);
      return next;
    });
    setRuns((n) => n + 1);
    refresh();
  }, [refresh]);

  // closeDrawer hides the drawer and gives the focus back to the button
  // that opened it.
  const closeDrawer = useCallback(() => {
    setDrawer("");
    toggles[drawer]?.current?.focus();
  }, [drawer, toggles]);
  const switchTo = (id) => {
    setDrawer("");
    if (id !== chatId) open(id, { push: true });
  };
  // Delete hides the chat at once and deletes it on the server after a
  // few seconds, unless Undo brings it back first; a page that closes
  // meanwhile sends the deletion as it goes.
  const [undo, setUndo] = useState(null); // {id, title, wasShown}
  const pending = useRef(new Map()); // chat id → timer
  const reallyDelete = useCallback(async (id, opts) => {
    clearTimeout(pending.current.get(id));
    pending.current.delete(id);
    setUndo((u) => (u?.id === id ? null : u));
    try {
      await deleteChat(id, opts);
    } catch (e) {
      setNotice(e.message);
    }
    refresh();
  }, [refresh]);
  useEffect(() => {
    const flush = () => {
      for (const id of pending.current.keys()) reallyDelete(id, { keepalive: true });
    };
    window.addEventListener("pagehide", flush);
    return () => window.removeEventListener("pagehide", flush);
  }, [reallyDelete]);
  const remove = (id) => {
    const title = list.chats.find((c) => c.id === id)?.title ?? "";
    forget(id);
    if (id === chatId) open("", { push: false });
    for (const other of pending.current.keys()) reallyDelete(other);
    pending.current.set(id, setTimeout(() => reallyDelete(id), undoSeconds * 1000));
    setUndo({ id, title, wasShown: id === chatId });
  };
  const undoDelete = () => {
    if (!undo) return;
    clearTimeout(pending.current.get(undo.id));
    pending.current.delete(undo.id);
    if (undo.wasShown) open(undo.id, { push: false });
    setUndo(null);
    refresh();
  };
  const rename = async (id, title) => {
    await renameChat(id, title);
    refresh();
  };
  const exportChat = async () => {
    if (!chatId) return;
    try {
      const view = await getChat(chatId);
      downloadText(fileName(view.title), chatMarkdown(view));
    } catch (e) {
      setNotice(e.message);
    }
  };

  // The tab's title follows the chat on screen.
  const title = chat?.saved ? list.chats.find((c) => c.id === chat.id)?.title : "";
  useEffect(() => {
    document.title = title ? `${title} · agentloop webchat` : "agentloop webchat";
  }, [title]);

  return (
    <div className="app">
      <header className="topbar">
        <button type="button" ref={chatsToggle} className="btn chats-toggle" aria-label="Chats" aria-expanded={drawer === "chats"} aria-controls="chat-list"
          onClick={() => setDrawer((d) => (d === "chats" ? "" : "chats"))}>
          <MenuIcon /> <span className="label">Chats</span>
        </button>
        <h1>agentloop webchat</h1>
        <Banner />
        <button type="button" ref={statesToggle} className="btn panel-toggle" aria-label="Tool states" aria-expanded={drawer === "states"} aria-controls="tool-states"
          onClick={() => setDrawer((d) => (d === "states" ? "" : "states"))}>
          <PanelIcon /> <span className="label">Tool states</span>
        </button>
      </header>
      <div className="body">
        <ThreadList id="chat-list" list={list} currentId={chat?.saved ? chat.id : ""} running={running} open={drawer === "chats"}
          onNew={() => switchTo("")} onSwitch={switchTo} onDelete={remove} onMore={more} onClose={closeDrawer} onExport={exportChat} onRename={rename} />
        <main className="chat" aria-label="Chat">
          {notice && <p className="notice" role="status" data-testid="notice">{notice}</p>}
          {chat ? (
            <ChatSession key={chat.id} chat={chat} onResponse={onResponse} onNoStream={onNoStream} onResponseEnd={onResponseEnd} onRunning={onRunning} onNotice={setNotice} />
          ) : (
            <p className="loading hint" role="status" data-testid="loading">Loading the chat…</p>
          )}
        </main>
        {drawer && <div className={"backdrop" + (drawer === "states" ? " all" : "")} aria-hidden="true" onClick={closeDrawer} />}
        {undo && (
          <div className="toast" role="status" data-testid="undo-delete">
            <span>Chat deleted.</span>
            <button type="button" className="btn" onClick={undoDelete}>Undo</button>
          </div>
        )}
        <ToolStatesPanel id="tool-states" chatId={chat?.saved ? chat.id : ""} version={runs} open={drawer === "states"} onClose={closeDrawer} />
      </div>
    </div>
  );
}
