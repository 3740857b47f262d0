package store

import (
	"time"

	"github.com/agentloop/agentloop"
)

// Chat is one stored conversation.
type Chat struct {
	// ID names the chat (see [CheckID]); the front end usually makes it.
	ID string
	// Owner is an opaque string for authorization, such as a user id; ""
	// means none. The store compares it, never interprets it.
	Owner string
	// Title is shown in chat lists; "" means none.
	Title string
	// Version is the version the chat was read at, 0 for a new chat. The
	// store sets it on every write; versions of one id are never reused,
	// not even after the chat is deleted and made again, so a stale writer
	// can never overwrite a newer chat. Compare versions only for equality.
	Version int64
	// Created and Updated are set by the store (UTC, to the microsecond).
	Created, Updated time.Time
	// History is the transcript. Its messages' IDs are the message ids the
	// front end knows; its pending client calls and approval requests are
	// the unanswered calls of its last assistant message. The store keeps
	// it as the JSON of [agentloop.History.MarshalJSON], byte for byte.
	History agentloop.History
}

// Doc is a named document of a chat, such as its tool states, or of no
// chat.
type Doc struct {
	// ChatID is the chat the document belongs to; "" means none: the
	// document is named by Name alone, needs no chat and lives until it is
	// deleted (see [Docs]).
	ChatID string
	// Name names the document within its chat (see [CheckID]).
	Name string
	// Version is the version the document was read at, 0 for a new one.
	// Documents and chats draw versions from one sequence, so they are
	// never reused either.
	Version int64
	// Updated is set by the store (UTC, to the microsecond).
	Updated time.Time
	// Data is the document, opaque to the store. It reads back equal
	// (bytes.Equal); nil and empty are the same.
	Data []byte
}

// ListQuery asks [ChatLister.ListChats] for one page of chats.
type ListQuery struct {
	// Owner selects the chats with exactly this owner; "" selects the chats
	// with no owner.
	Owner string
	// Limit is the page size: 0 means [DefaultListLimit], more than
	// [MaxListLimit] means MaxListLimit, and a negative limit is an error.
	Limit int
	// Cursor continues a listing where [ChatPage.Next] left it; "" starts
	// from the newest chat. A cursor the store did not make (typed, cut or
	// altered: cursors carry a checksum) is an error wrapping [ErrInvalid],
	// on every backend. Cursors are opaque and are not secret.
	Cursor string
}

// Page sizes of [ListQuery].
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// ChatPage is one page of a chat list.
type ChatPage struct {
	// Chats are the page's chats, the most recently updated first.
	Chats []ChatSummary
	// Next is the cursor of the next page; "" on the last page.
	Next string
}

// ChatSummary is what a chat list shows of a chat.
type ChatSummary struct {
	ID      string    // the chat's id
	Title   string    // the chat's title
	Updated time.Time // when the chat was last written
}

// StreamState is the state of a [Stream].
type StreamState string

// The states of a stream. A stream starts active and ends once, in one of
// the other states.
const (
	// StreamActive: a run holds the lease and appends chunks.
	StreamActive StreamState = "active"
	// StreamDone: the run finished (its response is complete).
	StreamDone StreamState = "done"
	// StreamCancelled: the run was stopped (by the user, or its time limit).
	StreamCancelled StreamState = "cancelled"
	// StreamFailed: the run failed.
	StreamFailed StreamState = "failed"
	// StreamInterrupted: the holder went away (its process died) and its
	// lease expired; set by the store, or by a holder that gives up.
	StreamInterrupted StreamState = "interrupted"
)

// Valid reports whether s is one of the defined states.
func (s StreamState) Valid() bool {
	switch s {
	case StreamActive, StreamDone, StreamCancelled, StreamFailed, StreamInterrupted:
		return true
	}
	return false
}

// Stream describes one run's stream log.
type Stream struct {
	// ID names the stream; it is unique in the store.
	ID string
	// ChatID is the chat the stream belongs to.
	ChatID string
	// State is where the stream is; see [StreamState].
	State StreamState
	// Started is when the stream started; Ended when it ended (zero while
	// active). For a stream whose lease expired, Ended is the expiry.
	Started, Ended time.Time
	// LeaseExpires is when the holder's lease runs out unless renewed.
	LeaseExpires time.Time
	// Len is the number of chunks in the log (the next sequence number).
	Len int64
	// StopRequested tells whether [Streams.StopStream] asked the stream to
	// stop.
	StopRequested bool
}

// Lease is the right to write one stream: the fencing token a holder passes
// to every [StreamWriter] call. Keep Token to the holder: anyone who has it
// can write the stream.
type Lease struct {
	// ChatID is the chat whose stream the lease holds.
	ChatID string
	// StreamID names the stream, for readers too ([Stream.ID]).
	StreamID string
	// Token proves the holder: only writes that carry it are accepted.
	Token string
	// Expires is when the lease runs out unless renewed.
	Expires time.Time
}

// Chunk is one entry of a stream log.
type Chunk struct {
	// Seq is the chunk's sequence number: 0 for the first chunk of a
	// stream, then one more for each.
	Seq int64
	// Data is the chunk as appended; the caller owns it.
	Data []byte
}
