// Package store is the versioned conversation store: the chats of a chat
// server, their named documents (tool states, summaries, records of paused
// runs) and the stream
// logs of their runs, kept so that nothing is lost when a client
// disconnects, a page reloads or a replica dies, and shared by every
// replica of a server.
//
// The package holds the types, the small interfaces backends implement,
// and the errors they return. The backends are subpackages: memstore (in
// memory), sqlitestore (one SQLite file, the embedded default) and pgstore
// (PostgreSQL, for several replicas). storetest is the conformance suite
// they all pass.
//
// # Versions
//
// Every chat and every document carries a version. A write names the
// version it read (0 to create) and fails with a [*ConflictError], which
// matches [ErrConflict], if the stored version moved: nothing is
// last-writer-wins. The usual loop reads, changes and writes, and starts
// again on a conflict; [UpdateChat] and [UpdateDoc] do that.
//
// # Streams
//
// A run's output goes to the chat's stream log, chunk by chunk, so that a
// client can resume it ([StreamReader.ReadStream] follows it live) from
// any replica. One run at a time holds a chat's stream, by a lease it
// renews ([StreamWriter]); the lease is also the fencing token that keeps
// a run which lost it from writing. A stop asked on any replica
// ([Streams.StopStream]) reaches the holder through
// [StreamWriter.WaitStop]. A holder that dies lets its lease expire: the
// stream then counts as interrupted and the next run may start.
//
// # Conversations' documents
//
// Features keep state per conversation id beside the history: tool states
// (package toolstate), summaries (ctxwindow), records of paused runs
// (telemetry). Each is a document: of the chat with the conversation's id
// when the store has that chat, so that it goes with the chat, and a
// document of no chat named [ChatlessName] otherwise (a conversation
// served without chats in the store: a stateless chat handler, a terminal
// app), which lives until it is deleted. [GetConversationDoc] and
// [UpdateConversationDoc] find and write a conversation's document by that
// rule.
//
// # Design
//
// The decisions behind the interfaces, and why.
//
//   - Small interfaces, one [Store]. [Chats], [ChatLister], [Docs],
//     [StreamWriter], [StreamReader] and [Streams] are separate so that each
//     user asks for what it needs (a chat handler: Chats and Streams; tool
//     states: Docs), as database/sql/driver does; every backend implements
//     all of them, and [Store] composes them.
//   - Optimistic concurrency, not locks. A lock held across a model call
//     would tie a chat to one replica for minutes; a version check costs
//     one WHERE clause. Tool states are a document of their own, versioned
//     apart from the chat, because tools write them while the run writes
//     the history.
//   - Versions come from one store-wide sequence, not a per-chat counter,
//     so a chat deleted and made again never repeats a version: a stale
//     writer cannot overwrite the new chat. Compare versions only for
//     equality.
//   - Writes update the caller's struct (Version, times) on success only,
//     so the next write of a read-modify-write loop needs no extra read.
//   - Deletes name a version too: a handler that checked a chat's owner
//     and then deletes it deletes what it checked.
//   - Documents and streams belong to an existing chat: writing them for a
//     missing chat is [ErrNotFound], and deleting a chat deletes them
//     (by foreign keys in the SQL backends), so nothing is left behind.
//     The one exception is a document of no chat (an empty [Doc.ChatID]):
//     state that must exist where no chat does, such as the record of a
//     paused run served without a chat store, lives until it is deleted.
//     It has its own name space (its own table in the SQL backends), so
//     the chats' foreign keys stay as they are.
//   - Documents are the one place where state beside a history lives:
//     tool states (package toolstate), summaries (ctxwindow) and the
//     records of paused runs (telemetry) are documents, so every backend,
//     and the conformance suite, covers them; no feature package keeps a
//     store of its own.
//   - The history is stored as the bytes of its JSON
//     ([agentloop.History.MarshalJSON]), not as JSON the database parses
//     (no jsonb): it round-trips byte for byte, and its format stays the
//     root package's business. Bytes that no longer decode are reported as
//     a [*CorruptError] with the chat's version, and [Chats.GetChat] still
//     returns the chat's owner and title with it, so the chat stays guarded
//     and the caller can start it afresh with one versioned write.
//   - Ids are 1 to [MaxIDLen] bytes of UTF-8 without NUL in every backend
//     (PostgreSQL's text cannot hold NUL), checked by [CheckID], and
//     compared bytewise, so every backend lists in the same order.
//   - Chat lists page by keyset (updated time, then id) with an opaque
//     cursor, not by offset: a chat written while a client pages moves to
//     the top instead of shifting every later page.
//   - Leases expire strictly: a holder that did not renew in time has lost
//     the stream even if nobody took it over, so a stalled replica cannot
//     come back and write after a follower saw the stream end. A dead
//     holder's stream needs nobody to mark it: reads treat an expired
//     active stream as interrupted, and the next [StreamWriter.StartStream]
//     writes that down.
//   - Followers take their wake-up channel before they read, and read a
//     stream's length before its chunks, so neither a change nor the last
//     chunks before the end can be missed. Wake-ups come in-process at
//     once, by LISTEN/NOTIFY across PostgreSQL replicas, and by a poll as
//     the fallback (the only way between SQLite processes).
//   - A stop is a flag on the stream, not only a message: a holder that
//     starts waiting after the stop still sees it, and WaitStop also
//     returns when the lease is lost, since the run must end then too.
//   - Clocks are injectable for tests. PostgreSQL uses the database's
//     clock by default, so replicas agree on when a lease ends.
//   - Ended logs are deleted by [Streams.DeleteEndedStreams], called by the
//     application on its own schedule ([ExpireStreams] is such a loop),
//     rather than by a TTL goroutine inside every store.
//   - Each SQL backend records its schema version in agentloop_schema,
//     migrates forward on open in one locked transaction (replicas starting
//     at once migrate once), and refuses a database of a newer build
//     ([ErrNewerSchema]) rather than misread it.
//   - Times are UTC to the microsecond in every backend (PostgreSQL's
//     precision), so what is written reads back equal.
//
// # A chat handler on a store
//
// How a server (the aisdk handler) uses the store for one request:
//
//  1. GetChat (ErrNotFound: a new chat), check the owner, reconcile the
//     posted messages with the stored history, and PutChat the user's
//     message with the version read, before the run.
//  2. StartStream; an [*ActiveStreamError] means a run is going on: the
//     client may follow it instead.
//  3. Run, appending each chunk of the response with AppendChunks,
//     renewing the lease well within its length, and cancelling the run
//     when WaitStop returns. PutChat the history at every turn end, and
//     the paused state before pausing.
//  4. EndStream with how the run ended.
//
// GET /api/chat/{id}/stream is ActiveStream then ReadStream from 0;
// POST /api/chat/{id}/stop is StopStream; a janitor ([ExpireStreams])
// calls DeleteEndedStreams now and then.
package store
