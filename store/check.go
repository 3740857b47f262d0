package store

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxIDLen is the longest chat id or document name, in bytes.
const MaxIDLen = 512

// CheckID reports whether s may be a chat id or document name (what says
// which, for the error): 1 to [MaxIDLen] bytes of valid UTF-8 without NUL.
// Anything else, quotes, '%', SQL, slashes, any Unicode, is stored as
// given. The error wraps [ErrInvalid]. Every backend checks ids with it,
// so all of them accept the same ids.
func CheckID(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case len(s) > MaxIDLen:
		return fmt.Errorf("%w: %s of %d bytes is longer than %d", ErrInvalid, what, len(s), MaxIDLen)
	}
	return checkText(what, s)
}

// checkText refuses what PostgreSQL's text cannot hold.
func checkText(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s %q is not valid UTF-8", ErrInvalid, what, s)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s %q holds a NUL byte", ErrInvalid, what, s)
	}
	return nil
}

// CheckChat reports whether [Chats.PutChat] may write c: a non-nil chat
// with a valid ID, and an Owner and Title of valid UTF-8 without NUL. The
// error wraps [ErrInvalid].
func CheckChat(c *Chat) error {
	if c == nil {
		return fmt.Errorf("%w: nil chat", ErrInvalid)
	}
	if err := CheckID("chat id", c.ID); err != nil {
		return err
	}
	if err := checkText("owner", c.Owner); err != nil {
		return err
	}
	return checkText("title", c.Title)
}

// CheckDoc reports whether [Docs.PutDoc] may write d: a non-nil document
// with a valid Name and a ChatID that is valid or "" (a document of no
// chat). The error wraps [ErrInvalid].
func CheckDoc(d *Doc) error {
	if d == nil {
		return fmt.Errorf("%w: nil document", ErrInvalid)
	}
	if d.ChatID != "" {
		if err := CheckID("chat id", d.ChatID); err != nil {
			return err
		}
	}
	return CheckID("document name", d.Name)
}

// CheckTTL reports whether ttl may be a lease's length: positive. The
// error wraps [ErrInvalid].
func CheckTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w: lease length %v is not positive", ErrInvalid, ttl)
	}
	return nil
}

// CheckEndState reports whether a stream may end in state s: a defined
// state other than [StreamActive]. The error wraps [ErrInvalid].
func CheckEndState(s StreamState) error {
	if !s.Valid() || s == StreamActive {
		return fmt.Errorf("%w: stream end state %q (want done, cancelled, failed or interrupted)", ErrInvalid, s)
	}
	return nil
}

// PageSize returns the page size q asks for (see [ListQuery.Limit]).
func (q ListQuery) PageSize() (int, error) {
	switch {
	case q.Limit < 0:
		return 0, fmt.Errorf("%w: negative list limit %d", ErrInvalid, q.Limit)
	case q.Limit == 0:
		return DefaultListLimit, nil
	case q.Limit > MaxListLimit:
		return MaxListLimit, nil
	}
	return q.Limit, nil
}
