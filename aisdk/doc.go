// Package aisdk serves an [agentloop.Agent] to Vercel AI SDK front ends
// (useChat from @ai-sdk/react, and assistant-ui through
// @assistant-ui/react-ai-sdk) by speaking the AI SDK 7 "UI message stream"
// protocol, so that a Go server cannot be told from a JavaScript
// streamText(…).toUIMessageStreamResponse() route.
//
// Most programs need only one of two types: [Handler], the stateless
// mode, mounted at the chat route, or [ChatServer], the stored mode, whose
// Routes mount the chat route with the routes around it. The shortest
// server keeps nothing: the client posts the whole conversation
// each time, and Secret (at least [MinSecretSize] random bytes, the same on
// every replica and across restarts) signs what the server decided:
//
//	secret, err := base64.StdEncoding.DecodeString(os.Getenv("CHAT_SECRET")) // openssl rand -base64 32
//	if err != nil || len(secret) < aisdk.MinSecretSize {
//		log.Fatal("CHAT_SECRET must be 32 random bytes, base64-encoded")
//	}
//	chat := &aisdk.Handler{Agent: agent, Secret: secret}
//	http.Handle("POST /api/chat", chat)
//	log.Fatal(http.ListenAndServe("localhost:8080", nil))
//
// The stored server keeps each chat in a store (here SQLite; memstore and
// pgstore for PostgreSQL are the others): runs outlive their clients, a
// reload resumes the answer, and each user reaches their own chats only
// (userOf names the user of a request, from your session):
//
//	st, err := sqlitestore.Open(ctx, "chats.db", sqlitestore.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer st.Close()
//	chat := &aisdk.ChatServer{
//		Agent:     agent,
//		Store:     st,
//		Owner:     userOf,
//		Authorize: aisdk.OwnerAuthorizer(st, userOf),
//	}
//	http.Handle("/api/", chat.Routes("/api")) // chat, resume, stop, chat list, chat, delete
//	go store.ExpireStreams(ctx, st, time.Minute, 10*time.Minute, nil)
//	log.Fatal(http.ListenAndServe("localhost:8080", nil))
//
// Their pieces, for a handler of your own:
//
//   - [Chunk] and its types (StartChunk, TextDeltaChunk, …): every chunk of
//     the protocol; json.Marshal gives the wire JSON, [ParseChunk] reads one
//     back and checks it the way the client does.
//   - [Writer]: the server-sent-events framing (headers, "data: <json>",
//     keep-alive comments, "data: [DONE]"), buffered until Flush.
//   - [Mapper]: turns the items of a run into chunks (steps, text and
//     reasoning parts, tool input, progress, outputs, approvals,
//     sub-agents' work, finish or error).
//   - [DecodeRequest], [ToHistory] and [FromHistory]: the request body of
//     useChat and assistant-ui, and the conversion between UIMessages and
//     an [agentloop.History].
//   - [ChatStore] and [Reconcile]: the stored mode, below.
//
// Package aisdktest has a Go client that drives a chat route as useChat
// does, for tests.
//
// A call to a tool that runs in the browser ends the response (finish
// reason "tool-calls"); the client runs the tool and posts the conversation
// again with the output, and the handler continues the same assistant
// message. An approval works the same way, with the user's decision.
//
// # Sub-agents and handoffs
//
// A sub-agent's run ([agentloop.AgentTool], whose items reach the run as
// [*agentloop.Nested]) streams as a "data-subagent" part per sub-run, id
// the call path ("<callID>", "<callID>/<id>" one level down), data a
// [SubagentView] (agent, depth, state, text and tool calls so far) that
// each update replaces: the AI SDK client re-renders it while the parent
// call runs and keeps it afterwards, and it is no tool part, so it never
// holds up the client's automatic re-send. A sub-agent that pauses hands
// its calls to the client like any other (ids "<callID>/<id>"), in a step
// of their own at the end of the response; the answers resume the sub-run.
// In the stateless mode the sub-run's state travels as a signed
// "data-subrun" part ([SubrunState]) and an altered one is refused with a
// 403; the stored mode answers from the stored state. In a run with
// [agentloop.Agent.Handoffs] the message metadata {"agent": name} names
// the agent that speaks ([FromHistory] sets it too).
//
// # Stateless or stored
//
// With a [Handler] (the stateless mode) each request carries the whole
// conversation and the server keeps nothing. The client's own are user
// messages, client tool outputs, and approval decisions with their reasons
// (the system prompt and settings only with Handler.AllowClientSystem and
// AllowClientSettings). What the server decided (the assistant's text and
// reasoning, tool calls with their input, server tool results, approval
// requests) is signed with Handler.Secret, bound to its assistant message;
// a request whose copy of it is altered, invented, moved, or unsigned is
// refused with a 403 naming the part, before anything runs. Signing does
// not stop a client from leaving parts out (the model then sees less) or
// from posting an earlier state again: an approval posted twice runs its
// call twice, a server call whose result is dropped runs again. Text cut
// off mid-stream (Stop) was never signed and is not sent back to the
// model. Signatures verify only with their key: without a Secret, a random
// one per process, so a restart or another replica refuses the chats in
// progress.
//
// With a [ChatServer] (the stored mode) the server's history is authoritative: a request may only
// add a user message, or results and decisions for the calls the stored
// chat waits for ([Reconcile]), else it is a 409; nothing can be replayed
// or left out, and a chat runs one request at a time. Nothing is signed.
//
// Pick the stateless mode for one process, or replicas sharing a Secret,
// when a call running again does no harm (idempotent tools). Pick a ChatServer
// when an approval gates something that must happen at most once (a
// payment, a deletion), or when the server keeps the chats anyway.
//
// # The stored mode
//
// A ChatServer saves the request's user message (and the
// results and decisions it adds) before the run, the history at every turn
// end and with every tool result (a call still running is saved with
// [InterruptedResult] until its result comes), and the history the run
// ends with: its answer, its paused state (pending client calls and
// approvals, which thus survive a reload), or the history of its error.
// Every write names the version it read (store.ErrConflict otherwise).
//
// A run outlives its request: a client that goes away does not cancel it;
// it finishes within MaxRunTime and is saved. The client's next request,
// with the partial message it saw, is reconciled with the stored chat.
//
// The run's chunks go to the chat's stream log (store.Streams), which
// the resume route replays from the start chunk and follows live, on any
// replica; the stop route stops the run wherever it runs (store.Streams.StopStream). A run holds the chat's
// stream lease and renews it (ChatServer.StreamLease): a replica that dies
// mid-run leaves the chat to the next request, on any replica, once the
// lease ran out; the turn it never saved is dropped from the client's next
// request ([Reconcile]). Ended stream logs stay until deleted: run
// store.ExpireStreams. Call [ChatServer.Shutdown] before
// http.Server.Shutdown; for a deploy, call [ChatServer.Drain] with a
// deadline before it, to let the runs in progress finish while new chats
// are refused.
//
// With a [Runner] (ChatServer.Runner; durable/dbosrun's Runner is one, on
// DBOS), a run outlives its process too: the engine runs it, and hands its
// items to [ChatServer.RunItem], which saves the chat and writes the
// stream log wherever the run executes; the request follows the log. A run
// the engine recovers in a process started again takes its stream over
// and logs no completed step twice.
//
// [ChatServer.Routes] mounts the chat route with the resume, stop and chats
// routes (the chat list, one chat as [ChatView], delete); the view tells
// how the chat's last run ended ([ChatView.LastRun], kept in a document of
// the chat), rename (PATCH) and the user's rating of an answer (PUT
// …/feedback/{message}, [ChatView.Feedback], kept in a document of the
// chat). The view also returns the chat's other versions
// ([ChatView.Branches]): the messages an edit or a regeneration took out
// of the stored history, kept in a document of the chat. A chat's title is first
// the start of its first user message (its first 60 characters or fewer,
// cut at a word, then "…"; control characters such as NUL become spaces);
// ChatServer.Title, when set, names the chat once its first answer is
// saved ([ModelTitle] asks the model), and a rename names it for good. The
// title is the chat's store.Chat.Title, read with the chat list: a run
// that saves while the chat is renamed reads the chat again and keeps the
// new title.
// One hook, ChatServer.Authorize, guards every route; without one the stored
// chats are served to loopback connections that name a loopback host
// only ([LoopbackOnly]).
//
// Every route checks a chat id as every store does ([store.CheckID]): 1
// to 512 bytes of UTF-8 without NUL; any other id is a 400 that says why,
// before the id reaches Authorize or the store. An invented ?cursor= of
// the chat list is a 400 too. Call [Handler.Validate] or
// [ChatServer.Validate] when the server starts: it finds a configuration
// that cannot serve (a Secret
// shorter than MinSecretSize…) and says what to do.
//
// # Concurrent and repeated requests
//
// A chat runs one request at a time, and requests for it are served in
// this order:
//
//   - A request that does not fit the stored chat ([Reconcile]) is refused
//     (409, or 400 for one that does not convert) before anything is
//     written or stopped: a refused request (any 4xx) changes nothing and
//     stops nothing (but for the one case below).
//   - A request that fits and adds something (a new or edited user message,
//     a regenerate, tool results, approval decisions) asks the run that was
//     in progress when it came, if any, to stop (the newest request wins;
//     the stopped run saves what it has and its response ends with an abort
//     chunk, "stopped"), then waits for the chat to be free. A run that
//     started since, for another request that came at the same time, is not
//     stopped but waited for: simultaneous requests (two tabs, a retrying
//     client) run one after the other, each to its answer. A request waits
//     as long as its client does; it is never given up with a 409 because
//     the chat was busy. It is checked again against the chat as it is
//     just before it asks the run to stop (a request refused then stops
//     nothing), and once it holds the chat, against the chat as the runs
//     before it left it; then it is saved and run.
//   - A repeat of a request the chat already has (a POST retried after its
//     first attempt was saved, a double click, an approval posted again
//     after it was applied) runs nothing and writes nothing. A repeated
//     user message whose run is still in progress gets that run's stream,
//     replayed from its start (as the resume route serves it); one whose
//     answer is stored gets that answer, restated as a stream (start, the
//     message's parts, finish). A repeated continuation (tool results or
//     decisions the chat already has) gets 409 "already has these results
//     and decisions": the page reloads the chat (GET …/chats/{id}) or
//     resumes its stream. A user message repeated after the chat went on
//     from it is a 409 too.
//
// One case remains in which a refused request has stopped a run: the stop
// cannot be made on the condition that the chat is unchanged, so a write
// of the chat that lands between that last check and the run's seeing the
// stop can make the request refused (409) after the run was asked to stop.
// That write is either the run's own save at a turn end or tool result
// (which a request usually still fits: it may lack the server's content),
// or the save of a request that took the chat a moment before, as the run
// started, whose additions contradict this request's (two tabs that post
// different approval decisions, or results, for the same calls within
// milliseconds). The stopped run then ends with what it saved (its
// response ends with the abort chunk "stopped"), the first request's
// additions stay saved, and the chat is free for the next request.
//
// An edit replaces the chat from the edited message on, the first message
// included: useChat names the edited message in "messageId"; assistant-ui
// posts the edited version as a new message after what preceded the
// original, and when it is the first message, posts it alone. The
// "messages" of a request are the whole conversation as the client holds
// it, so a lone new user message replaces the stored chat. A client that
// posts only its last message (a prepareSendMessagesRequest that trims
// them) must say so with "lastMessageOnly": true in the body
// ([LastMessageOnly]); its message then goes at the end. A regenerate
// replaces the answer to the posted last user message, the first one
// included.
//
// # Faults
//
// A run whose stream cannot be ended (the database is down) tries again
// with backoff, 50 ms doubling to 2 s, for up to 30 s, so that its chat is
// free as soon as the database is back; past that, the chat is free once
// the run's stream lease runs out. A run whose save or stream log write
// fails ends with an error chunk; before it ends its stream, it saves again
// (with the same backoff) the history whose save failed, so that what its
// client saw is still in the chat once the database is back. Those tries
// go on after the client's response ended, which does not wait for the
// database; ChatServer.Shutdown waits for them. A streamed response whose
// client stops reading is dropped once one write waited WriteTimeout (a
// per-write deadline through [http.ResponseController]); a stored run goes
// on without it and is saved, and the client resumes the stream or
// reloads the chat.
//
// # Serving on the internet
//
// Both types refuse bodies that are not application/json (415): a page
// can make a browser post text/plain or a form cross-origin without asking
// the server first, but not JSON. A bodiless stop passes no such check, so
// every route that changes something (the chat POST, stop, delete) also
// refuses a browser's request from another origin (403; Sec-Fetch-Site,
// then Origin against Host) unless AllowedOrigins lists it. A
// server that others reach by name lists its names with [AllowHosts] in
// its Authorize hook: the cross-origin check compares Origin with the
// request's Host, which a page of a name rebound to the server's address
// (DNS rebinding) controls. Clients get a generic text for a failed run
// and for a 500; the detail goes to Logger. Limits bounds
// the body, MaxRunTime a run; KeepAlive comments keep proxies from closing
// a quiet stream.
//
// A response streams as long as its run, so leave the http.Server's
// ReadTimeout and WriteTimeout at zero (ReadTimeout's deadline would also
// cancel the run; WriteTimeout cuts the stream). Set ReadHeaderTimeout and
// IdleTimeout instead, let BodyTimeout bound each body and
// WriteTimeout each write of a stream (a client that stops reading
// is dropped):
//
//	srv := &http.Server{
//		Addr:              ":8080",
//		Handler:           mux, // with the aisdk.Handler at /api/chat
//		ReadHeaderTimeout: 10 * time.Second,
//		IdleTimeout:       2 * time.Minute,
//	}
package aisdk
